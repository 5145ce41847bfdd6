//! Packets in flight: small `Copy` structs that travel by value through queues and wires (ring
//! buffers that reach their working size and stay there), so the hot path never allocates.

use super::loss::LossKind;
use crate::transport::common::segment::{SegKind, Segment};

/// What a frame is at the link layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A transport packet (data or control).
    Transport,
    /// PFC PAUSE (XOFF) for one egress queue (priority) of the receiving port.
    Pause(u8),
    /// PFC RESUME (XON) for one egress queue.
    Resume(u8),
    /// Background traffic ([`super::background`]): put into a switch egress queue by a source,
    /// consumed by the node at the other end of the link; loss models skip it.
    Background,
}

/// The priorities transports give their packets by default (defined with them).
pub use crate::transport::{PRIORITY_CONTROL, PRIORITY_DATA};

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub frame: Frame,
    pub seg: Segment,
    /// The connection, and which end sent it: 0 the requester, 1 the responder. The engine
    /// hands the packet to the other end.
    pub flow: u32,
    pub dir: u8,
    /// Source and destination host node ids.
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire (the transport's choice, [`Segment::wire_bytes`], for its packets).
    pub size: u32,
    /// Its priority (the transport's choice, [`Segment::priority`]): the egress queue it takes
    /// at every hop (0: control).
    pub priority: u8,
    /// The port this packet entered the current switch by (for PFC ingress accounting).
    pub in_port: u32,
    /// Path entropy: the 5-tuple hash ECMP uses (or per packet, if the source sprays).
    pub entropy: u64,
    /// Its INT records' slot in the side table ([`super::int::NO_INT`]: none).
    pub int: u32,
    /// The switch it detours through before heading for `dst` ([`NO_VIA`]: none): set at its
    /// first switch by non-minimal routing ([`super::routing::Routes::route`]), cleared there.
    pub via: u32,
}

/// A packet on no detour (minimal routing, or past its detour's node).
pub const NO_VIA: u32 = u32::MAX;

impl Packet {
    /// The kind a loss rule targets.
    pub fn loss_kind(&self) -> LossKind {
        match self.seg.kind {
            SegKind::Data => LossKind::Data,
            // A grant is the receiver's go-ahead, as an ACK is.
            SegKind::Ack | SegKind::Grant => LossKind::Ack,
            SegKind::Nak | SegKind::Sack | SegKind::MeloNack | SegKind::Rack => LossKind::Nak,
            SegKind::Cnp => LossKind::Cnp,
            SegKind::Syn | SegKind::SynAck | SegKind::Fin | SegKind::FinAck => LossKind::Conn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_copy_and_at_most_128_bytes() {
        fn is_copy<T: Copy>() {}
        is_copy::<Packet>();
        assert!(std::mem::size_of::<Packet>() <= 128, "{} bytes", std::mem::size_of::<Packet>());
    }
}
