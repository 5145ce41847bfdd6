//! Packets in flight: small `Copy` structs in a pool, addressed by index, so the hot path
//! never allocates.

use super::loss::LossKind;
use crate::transport::segment::{SegKind, Segment};

/// What a frame is at the link layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A transport packet (data or control).
    Transport,
    /// PFC PAUSE (XOFF) for one egress queue (priority) of the receiving port.
    Pause(u8),
    /// PFC RESUME (XON) for one egress queue.
    Resume(u8),
}

/// Egress queues: control (ACK/NAK/CNP) is strict high priority and never paused, like the
/// high-priority queue of the HPCC ns-3 model; data classes follow, PFC-protected.
pub const CLASS_CONTROL: usize = 0;
pub const CLASS_DATA: usize = 1;

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
    /// Bytes on the wire.
    pub size: u32,
    /// Egress queue at every hop (0: control).
    pub class: u8,
    /// The port this packet entered the current switch by (for PFC ingress accounting).
    pub in_port: u32,
    /// Path entropy: the 5-tuple hash ECMP uses (or per packet, if the source sprays).
    pub entropy: u64,
}

impl Packet {
    /// The kind a loss rule targets.
    pub fn loss_kind(&self) -> LossKind {
        match self.seg.kind {
            SegKind::Data => LossKind::Data,
            SegKind::Ack => LossKind::Ack,
            SegKind::Nak | SegKind::Sack | SegKind::MeloNack | SegKind::Rack => LossKind::Nak,
            SegKind::Cnp => LossKind::Cnp,
        }
    }
}

/// A free-list pool of packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    pub fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    pub fn get(&self, id: u32) -> &Packet {
        &self.slots[id as usize]
    }

    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots ever allocated (the pool's high-water mark).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}
