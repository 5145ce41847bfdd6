//! The payload digests of the packets a receiver holds in its off-chip reorder buffer, by
//! ring slot: MELO's and LEFT's receivers keep a packet that arrived above RCV.NXT there until
//! the hole below it fills. The ring spans as far above RCV.NXT as a held packet can be, so
//! no two held packets share a slot; it is allocated when the first packet is held (most
//! connections never hold one) and freed when the connection finishes.

#[derive(Clone, Debug)]
pub struct TagRing {
    tags: Vec<u32>,
    slots: usize,
}

impl TagRing {
    /// A ring for packets at most `span` above RCV.NXT (rounded up to a power of two).
    pub fn new(span: usize) -> Self {
        TagRing { tags: Vec::new(), slots: span.max(1).next_power_of_two() }
    }

    /// Holds packet `index`'s digest.
    pub fn store(&mut self, index: u64, tag: u32) {
        if self.tags.is_empty() {
            self.tags = vec![0; self.slots];
        }
        let slot = self.slot(index);
        self.tags[slot] = tag;
    }

    /// The digest held for packet `index` (stored since the ring last turned past it).
    pub fn get(&self, index: u64) -> u32 {
        self.tags[self.slot(index)]
    }

    /// The connection finished: the ring's memory goes (allocated again if a packet is held).
    pub fn release(&mut self) {
        self.tags = Vec::new();
    }

    /// Whether the ring holds memory now.
    pub fn is_allocated(&self) -> bool {
        !self.tags.is_empty()
    }

    fn slot(&self, index: u64) -> usize {
        index as usize & (self.slots - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_come_back_by_index_within_the_span_and_memory_only_while_needed() {
        let mut ring = TagRing::new(5); // 8 slots
        assert!(!ring.is_allocated());
        ring.store(10, 0xA);
        ring.store(17, 0xB);
        assert!(ring.is_allocated());
        assert_eq!((ring.get(10), ring.get(17)), (0xA, 0xB));
        // Eight above 10 is the same slot: the span bounds what may be held at once.
        ring.store(18, 0xC);
        assert_eq!(ring.get(10), 0xC);
        ring.release();
        assert!(!ring.is_allocated());
        ring.store(3, 0xD);
        assert_eq!((ring.get(3), ring.get(4)), (0xD, 0));
    }
}
