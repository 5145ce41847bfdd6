//! A receiver's reorder buffer for schemes that take every packet whatever its order (NDP,
//! ExpressPass): a packet at the expected index is delivered with the run it completes; one
//! above it is held (its payload stands as its digest) until the hole below fills; duplicates
//! and packets past the message are ignored. Unbounded: it grows to what the flow holds out of
//! order, not to a fixed bitmap (IRN's bounded one is `irn::BitmapReceiver`).

use super::window::Window;
use super::rx_ctx::RxCtx;
use super::segment::Segment;
use crate::sim::units::Time;

#[derive(Clone, Debug)]
pub struct ReorderBuffer {
    /// Packets received out of order, over [expected, expected + window).
    held: Window,
    /// Their payload digests, by ring slot.
    tags: Vec<u32>,
    /// How many are held.
    count: u64,
    /// Payload bytes put into the buffer, and copied out of it in order.
    pub stored_bytes: u64,
    pub copied_bytes: u64,
}

impl ReorderBuffer {
    /// For a flow of `npkts` packets.
    pub fn new(npkts: u64) -> Self {
        let held = Window::new(npkts.clamp(1, u32::MAX as u64) as u32, npkts);
        let tags = vec![0; held.slots()];
        ReorderBuffer { held, tags, count: 0, stored_bytes: 0, copied_bytes: 0 }
    }

    /// Packet `index` (`seg`) arrived: delivered, with every held packet it releases, if it is
    /// the one expected; else held if it is ahead and new.
    pub fn accept(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx) {
        let expected = rx.expected();
        if index == expected {
            rx.deliver(now, index, seg.tag, seg.payload);
            while self.held.get(rx.expected()) {
                let i = rx.expected();
                self.held.clear(i);
                self.count -= 1;
                let bytes = rx.spec().payload(i);
                rx.deliver(now, i, self.tags[self.held.slot(i)], bytes);
                self.copied_bytes += bytes as u64;
            }
        } else if index > expected && index < rx.spec().npkts() {
            // Covered before it is read: a smaller ring would alias another held index.
            if let Some(r) = self.held.cover(expected, index) {
                r.apply(&mut self.tags);
            }
            if !self.held.get(index) {
                self.held.set(index);
                self.tags[self.held.slot(index)] = seg.tag;
                self.count += 1;
                self.stored_bytes += seg.payload as u64;
            }
        }
    }

    /// Whether packet `i`, ahead of `expected` (the application's next), is held; any index
    /// beyond the ring reads as not held (the ring aliases it otherwise).
    pub fn holds_ahead(&self, expected: u64, i: u64) -> bool {
        i > expected && i - expected < self.held.slots() as u64 && self.held.get(i)
    }

    /// Whether packet `i` is held (out of order, not yet delivered).
    pub fn holds(&self, i: u64) -> bool {
        self.held.get(i)
    }

    /// How many packets are held.
    pub fn held(&self) -> u64 {
        self.count
    }

    /// (stored, copied, dropped) bytes, as `ReceiveRecovery::reorder_stats` reports them.
    pub fn stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, 0)
    }

    /// The flow is complete: the ring and digests go (the counters stay).
    pub fn release(&mut self) {
        self.held.release();
        self.tags = Vec::new();
    }
}
