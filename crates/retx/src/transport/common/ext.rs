//! The scheme extensions a segment carries ([`super::segment::Ext`]): what only one scheme's
//! packets hold beyond the common header. Defined here, below the schemes, so the segment names
//! no scheme and each scheme reads its own variant.

use super::psn::Psn;

/// What NDP's responses and PULLs carry beyond the cumulative ACK in `psn`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PullInfo {
    /// ACK / NACK: the PSN of the packet (or header) it answers.
    pub ackno: Psn,
    /// The receiver's PULL number for the flow: the sender may have sent this many packets on
    /// pulls.
    pub pull_no: u32,
    /// The pull is granted by this packet itself (htsim's pull bit; always set on a PULL).
    pub pull: bool,
    /// Aeolus: this data packet is the probe that follows the initial window (its PSN the
    /// window's last), or this ACK answers it.
    pub probe: bool,
}

/// What Homa's ACKs, grants and probes carry beyond `psn`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HomaInfo {
    /// ACK: the PSN of the packet (or probe) it answers. Probe: the PSN of the last
    /// unscheduled packet.
    pub ackno: Psn,
    /// Grant (and ACK, repeating the last grant): the transmissions the sender may have made
    /// on the message, in all (saturating at 2^32 - 1). 32 bits keep `Ext`, and so every
    /// packet of every scheme, 4-byte aligned: a u64 here grew each `Segment` by 8 B and
    /// slowed the hop of the HPCC bench by 6 %.
    pub granted: u32,
    /// Grant: the priority of the scheduled packets it allows (0 on an ACK: unchanged).
    pub priority: u8,
    /// A probe, or the ACK answering one.
    pub probe: bool,
    /// The testbed's grant request, which opens a message, or the ACK answering one.
    pub request: bool,
    /// A grant that is a RESEND: the sender resends what is unacknowledged (the testbed's
    /// receiver timeout).
    pub resend: bool,
}

/// What an ExpressPass packet is, beyond its [`SegKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XpassKind {
    /// Sender to receiver: start crediting (`count`: packets the sender has).
    #[default]
    Request,
    /// Sender to receiver: nothing left to send, stop crediting.
    Stop,
    /// Receiver to sender (a `Grant`): one data packet's worth.
    Credit,
    /// A data packet (`seq`: the credit it spends, 0 for Aeolus's unscheduled packets).
    Data,
    /// Receiver to sender: the ACK of one packet (`ackno`).
    Ack,
    /// Aeolus's probe after the last unscheduled packet (`ackno` names it), and its ACK.
    Probe,
    ProbeAck,
}

/// What ExpressPass packets carry beyond the common header (4-byte fields: `Ext` stays 28 B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XpassInfo {
    pub kind: XpassKind,
    /// Credit: its sequence number (from 1); data: the credit's it spends (ns-2 `credit_seq`).
    pub seq: u32,
    /// Request: the packets the sender has left (ns-2 `sendbuffer_`).
    pub count: u32,
    /// ACK: the PSN of the packet it answers; probe: the last unscheduled packet's.
    pub ackno: Psn,
}

/// What a UET packet is, beyond its [`super::segment::SegKind`] (uet-htsim `uecpacket.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UetKind {
    /// A data packet (`UecDataPacket`).
    #[default]
    Data,
    /// A request to send (`UecRtsPacket`): a header the sender sends when it may not send
    /// data (no credit, window full) after a timeout, so the receiver pulls.
    Rts,
    /// A (selective) ACK (`UecAckPacket`).
    Ack,
    /// A NACK of a trimmed packet (`UecNackPacket`).
    Nack,
    /// A PULL: receiver credit (`UecPullPacket`).
    Pull,
}

/// What UET's packets carry beyond the common header (uet-htsim `uecpacket.h`); 4-byte fields
/// and 24 bytes in all, so `Ext` stays 28 B.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UetInfo {
    pub kind: UetKind,
    /// Flags, the `UET_*` bits.
    pub flags: u8,
    /// ACK: PSNs the receiver holds above its cumulative ACK (`_out_of_order_count`,
    /// saturating).
    pub ooo: u16,
    /// Data and RTS: the sender's cumulative credit request in 256 B quanta (`_pull_target`);
    /// PULL: the cumulative credit granted (`_pullno`); ACK: the SACK bitmap's base PSN
    /// (`_ref_ack`, a wire PSN).
    pub number: u32,
    /// ACK and NACK: the PSN of the packet that triggered it (`_acked_psn`, `_ref_epsn`).
    pub psn: Psn,
    /// ACK: the 64-bit SACK bitmap from `number`, low word first: bit i is PSN number + i.
    pub sack: [u32; 2],
    /// ACK and NACK: the receiver's count of data bytes received, headers included
    /// (`_recvd_bytes`), modulo 2^32.
    pub recvd: u32,
}

/// Data: the ACK-request bit (`_ar`).
pub const UET_AR: u8 = 1;
/// Data: sent speculatively, before any credit (`DATA_SPEC`).
pub const UET_SPEC: u8 = 2;
/// NACK: the packet was trimmed at the last hop (`_last_hop`).
pub const UET_LAST_HOP: u8 = 4;
/// ACK: it answers an RTS (`_is_rts`).
pub const UET_RTS_ACK: u8 = 8;
/// PULL: a slow pull, credit the receiver sends without being asked (`_slow_pull`).
pub const UET_SLOW_PULL: u8 = 16;
/// NACK (ROD): the receiver dropped what came after this PSN; the sender goes back to it.
pub const UET_GO_BACK: u8 = 32;
