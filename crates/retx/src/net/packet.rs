//! Packets in flight: small `Copy` structs in a pool, addressed by index, so the hot path
//! never allocates.

use crate::transport::segment::Segment;

/// What a frame is at the link layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A transport packet (data or control).
    Transport,
    /// PFC PAUSE (XOFF) for the data class.
    Pause,
    /// PFC RESUME (XON) for the data class.
    Resume,
}

/// Traffic classes: control (ACK/NAK/CNP) is strict high priority and never paused, like the
/// high-priority queue of the HPCC ns-3 model; data is the PFC-protected class.
pub const CLASS_CONTROL: usize = 0;
pub const CLASS_DATA: usize = 1;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub frame: Frame,
    pub seg: Segment,
    pub flow: u32,
    /// Source and destination host node ids.
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub class: u8,
    /// The port this packet entered the current switch by (for PFC ingress accounting).
    pub in_port: u32,
    /// ECMP hash of the 5-tuple.
    pub hash: u64,
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
