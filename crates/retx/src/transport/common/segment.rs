//! What a transport puts on the wire, independent of the network model: a common header every
//! scheme shares, and a per-scheme extension ([`Ext`]) for what only one scheme carries.

use super::psn::Psn;
use crate::sim::units::Time;

/// The kind of a transport packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegKind {
    /// Payload. `psn` is its PSN.
    Data,
    /// Cumulative acknowledgement: `psn` is the next PSN the receiver expects.
    Ack,
    /// Go-back-N NAK (sequence error): resend from `psn`, the receiver's expected PSN.
    Nak,
    /// IRN-style NACK: cumulative `psn` plus [`Ext::Sack`], the out-of-order PSN that
    /// triggered it.
    Sack,
    /// DCQCN congestion notification packet.
    Cnp,
    /// MELO NACK: cumulative `psn` plus up to three holes ([`Ext::Holes`]), most recent first.
    MeloNack,
    /// Go-Back-ONE loss notification (IP protocol 0xFD; ACK is 0xFC): [`Ext::Rack`] is the
    /// PSN just received out of order, `psn` the PSN expected.
    Rack,
    /// STRIDE connection set-up and tear-down (flags SYN, SYN+ACK, FIN, FIN+ACK; the
    /// handshake's third packet and the final ACK are [`SegKind::Ack`]).
    Syn,
    SynAck,
    Fin,
    FinAck,
    /// Permission to send, from the receive side (a PULL, a credit, a grant: receiver-driven
    /// transports); what it permits is the scheme's (`psn` names the packet or the amount).
    Grant,
}

impl SegKind {
    pub fn is_control(self) -> bool {
        !matches!(self, SegKind::Data)
    }

    /// Opens or closes a connection (SYN, SYN-ACK, FIN, FIN-ACK): carries no data and no
    /// congestion signal.
    pub fn is_connection(self) -> bool {
        matches!(self, SegKind::Syn | SegKind::SynAck | SegKind::Fin | SegKind::FinAck)
    }
}

/// The IP ECN codepoint (RFC 3168): switches mark Congestion Experienced on ECN-capable
/// packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect,
    Ce,
}

/// A run of missing PSNs reported by a MELO NACK (2 B of length on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hole {
    pub start: Psn,
    pub len: u16,
}

/// What only one scheme's packets carry. Each scheme reads its own variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ext {
    #[default]
    None,
    /// IRN NACK: the PSN received out of order (selectively acknowledged).
    Sack(Psn),
    /// Go-Back-ONE RACK: the PSN received out of order.
    Rack(Psn),
    /// MELO NACK: `n` holes, the most recent first.
    Holes { holes: [Hole; 3], n: u8 },
    /// NDP ACK, NACK and PULL: the packet answered and the flow's PULL number.
    Pull(super::ext::PullInfo),
    /// Homa's ACK, grant and Aeolus probe: what they name beyond `psn`.
    Homa(super::ext::HomaInfo),
    /// ExpressPass's credits, requests, stops, data, ACKs and Aeolus probes.
    Xpass(super::ext::XpassInfo),
    /// UET's data, RTS, ACK, NACK and PULL fields.
    Uet(super::ext::UetInfo),
}

/// What a packet says of its path, in 16 bits so that the segment stays 72 B: the entropy
/// value its sender chose (15 bits; a scheme that says
/// [`super::scheme::Scheme::chooses_entropy`]: UET's EV), which the network hashes with the
/// connection's own entropy, and whether a switch trimmed it at its egress port toward the
/// destination host (the last hop: set with `trimmed` by the network, for schemes that tell
/// last-hop trims apart, UET's NACK `last_hop`, uet-htsim `processTrimmed`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathInfo(u16);

impl PathInfo {
    const LAST_HOP: u16 = 0x8000;
    /// The largest entropy value.
    pub const MAX_EV: u16 = 0x7FFF;

    /// Entropy value `ev` (its low 15 bits).
    pub fn with_ev(ev: u16) -> PathInfo {
        PathInfo(ev & Self::MAX_EV)
    }
    pub fn ev(self) -> u16 {
        self.0 & Self::MAX_EV
    }
    pub fn trimmed_last_hop(self) -> bool {
        self.0 & Self::LAST_HOP != 0
    }
    /// The network trimmed it, at the last hop or not.
    pub fn set_trimmed_last_hop(&mut self, last_hop: bool) {
        self.0 = if last_hop { self.0 | Self::LAST_HOP } else { self.0 & Self::MAX_EV };
    }
}

/// A transport header plus the few facts the simulator needs about the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub kind: SegKind,
    pub psn: Psn,
    /// Payload bytes (data only).
    pub payload: u32,
    /// Last packet of the message: the receiver acknowledges it at once.
    pub last: bool,
    pub retransmit: bool,
    /// A switch cut it to its header (its payload is gone; `payload` says how much there
    /// was): the receiver learns of a loss, not of data.
    pub trimmed: bool,
    /// A trimming switch whose header queue was full sent this trimmed header back to its
    /// sender (htsim's return-to-sender): the sender learns its packet was lost.
    pub returned: bool,
    /// Data sent before any grant, credit or PULL allowed it (a proactive transport's first
    /// RTT): what Aeolus's switches may drop and what the drop counters call unscheduled.
    pub unscheduled: bool,
    /// IP ECN codepoint: data leaves the sender ECN-capable; switches mark it.
    pub ecn: Ecn,
    /// ECN echo on a response: the data packet that triggered it was marked (DCTCP's ECE;
    /// HPCC sets the CNP flag of its ACK/NACK the same way).
    pub ece: bool,
    /// Priority (traffic class), chosen by the endpoint that sends it: the egress queue it
    /// takes at every switch and its PFC class.
    pub priority: u8,
    /// Drop precedence (colour) for WRED-style admission: 0 green, 1 yellow, 2 red.
    pub colour: u8,
    /// Bytes on the wire, headers included, as the endpoint that sends it sizes it.
    pub wire_bytes: u32,
    /// The entropy value its sender chose and whether it was trimmed at the last hop
    /// ([`PathInfo`]); nothing for schemes that choose no entropy.
    pub path: PathInfo,
    /// A digest of the payload's identity (flow, index) so a receiver can prove it delivers
    /// the data that was sent, not merely the right count of bytes.
    pub tag: u32,
    /// The sender's timestamp (its local clock when the packet left).
    pub ts: Time,
    /// On a response: the timestamp of the packet that triggered it.
    pub echo_ts: Time,
    pub ext: Ext,
}

impl Segment {
    /// A response of `kind` to `to`, sent at local time `now`, naming `psn`: it echoes the
    /// triggering packet's timestamp and keeps its class.
    pub fn reply(kind: SegKind, psn: Psn, now: Time, to: &Segment) -> Segment {
        Segment {
            kind,
            psn,
            payload: 0,
            last: false,
            retransmit: false,
            trimmed: false,
            returned: false,
            unscheduled: false,
            ecn: Ecn::NotEct,
            ece: false,
            priority: to.priority,
            colour: 0,
            wire_bytes: 0,
            path: PathInfo::default(),
            tag: 0,
            ts: now,
            echo_ts: to.ts,
            ext: Ext::None,
        }
    }

    /// A packet an endpoint sends on its own, not in response to one (a receiver speaking
    /// first: a grant, a credit, a SYN-ACK).
    pub fn control(kind: SegKind, psn: Psn, now: Time) -> Segment {
        Segment { ts: now, echo_ts: Time::ZERO, ..Segment::reply(kind, psn, now, &Segment::data(psn, 0, 0, now)) }
    }

    /// A data packet: `payload` bytes at `psn`, ECN-capable, sent at `now`.
    pub fn data(psn: Psn, payload: u32, tag: u32, now: Time) -> Segment {
        Segment {
            kind: SegKind::Data,
            psn,
            payload,
            last: false,
            retransmit: false,
            trimmed: false,
            returned: false,
            unscheduled: false,
            ecn: Ecn::Ect,
            ece: false,
            priority: 0,
            colour: 0,
            wire_bytes: 0,
            path: PathInfo::default(),
            tag,
            ts: now,
            echo_ts: Time::ZERO,
            ext: Ext::None,
        }
    }

    /// The PSN a SACK or RACK carries, if this is one.
    pub fn reported_psn(&self) -> Option<Psn> {
        match self.ext {
            Ext::Sack(p) | Ext::Rack(p) => Some(p),
            _ => None,
        }
    }

    /// The holes a MELO NACK carries (empty otherwise).
    pub fn holes(&self) -> &[Hole] {
        match &self.ext {
            Ext::Holes { holes, n } => &holes[..*n as usize],
            _ => &[],
        }
    }
}

/// The payload digest of packet `index` of the flow keyed `key`.
pub fn payload_tag(key: u64, index: u64) -> u32 {
    (crate::sim::rng::mix64(key ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    /// Packets travel by value through every queue and wire: a scheme's `Ext` variant that
    /// widens the segment (a u64 in it makes it 8-byte aligned: 80 B) costs every scheme's hop
    /// (6 % on the HPCC bench). Keep variants to 4-byte fields and at most 28 bytes.
    #[test]
    fn path_info_keeps_the_ev_and_the_last_hop_apart() {
        let mut p = super::PathInfo::with_ev(0xFFFF);
        assert_eq!((p.ev(), p.trimmed_last_hop()), (0x7FFF, false));
        p.set_trimmed_last_hop(true);
        assert_eq!((p.ev(), p.trimmed_last_hop()), (0x7FFF, true));
        p.set_trimmed_last_hop(false);
        assert_eq!(p, super::PathInfo::with_ev(0x7FFF));
        assert_eq!(super::PathInfo::default().ev(), 0);
    }

    #[test]
    fn a_segment_stays_72_bytes() {
        assert_eq!(std::mem::size_of::<super::Ext>(), 28);
        assert_eq!(std::mem::size_of::<super::Segment>(), 72);
    }
}
