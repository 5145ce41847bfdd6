//! What a transport puts on the wire, independent of the network model.

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
    /// IRN-style NACK: cumulative `psn` plus `aux`, the out-of-order PSN that triggered it.
    Sack,
    /// DCQCN congestion notification packet.
    Cnp,
    /// MELO NACK: cumulative `psn` plus up to three holes, the most recent first.
    MeloNack,
    /// Go-Back-ONE loss notification (IP protocol 0xFD; ACK is 0xFC): `aux` is the PSN just
    /// received out of order, `psn` the PSN expected.
    Rack,
}

/// A run of missing PSNs reported by a MELO NACK (2 B of length on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hole {
    pub start: Psn,
    pub len: u16,
}

impl SegKind {
    pub fn is_control(self) -> bool {
        !matches!(self, SegKind::Data)
    }
}

/// A transport header plus the few facts the simulator needs about the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub kind: SegKind,
    pub psn: Psn,
    pub aux: Psn,
    /// Payload bytes (data only).
    pub payload: u32,
    /// Last packet of the message: the receiver acknowledges it at once.
    pub last: bool,
    pub retransmit: bool,
    /// ECN congestion-experienced, set by switches on data packets and echoed by the
    /// receiver on the control packet a marked packet triggers (DCTCP's ECE).
    pub ecn: bool,
    /// A digest of the payload's identity (flow, index) so a receiver can prove it delivers
    /// the data that was sent, not merely the right count of bytes.
    pub tag: u32,
    /// Send time of a data packet, echoed by the control packet it triggers.
    pub ts: Time,
    /// MELO NACK holes (`nholes` of them are valid).
    pub holes: [Hole; 3],
    pub nholes: u8,
}

impl Segment {
    pub fn control(kind: SegKind, psn: Psn, ts: Time) -> Segment {
        Segment {
            kind,
            psn,
            aux: Psn::default(),
            payload: 0,
            last: false,
            retransmit: false,
            ecn: false,
            tag: 0,
            ts,
            holes: [Hole::default(); 3],
            nholes: 0,
        }
    }
}

/// The payload digest of packet `index` of the flow keyed `key`.
pub fn payload_tag(key: u64, index: u64) -> u32 {
    (crate::sim::rng::mix64(key ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 32) as u32
}
