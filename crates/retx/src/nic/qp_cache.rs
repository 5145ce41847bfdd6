//! An on-chip cache of connection contexts (MELO §3.2.5; any NIC with more connections than
//! on-chip context slots). Least recently used connections are swapped out; the transport scheme
//! decides what a swap costs (MELO returns a swapped-out bitmap's blocks to the shared pool, and
//! needs blocks again to come back).

use std::collections::VecDeque;

/// What touching a connection requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// Already on chip (now the most recently used).
    Hit,
    /// Not on chip: swap it in, after swapping out `evict` if the cache is full.
    Miss { evict: Option<u32> },
}

/// LRU of on-chip connections; capacity 0 means every connection stays on chip.
#[derive(Clone, Debug, Default)]
pub struct QpCache {
    capacity: usize,
    lru: VecDeque<u32>,
}

impl QpCache {
    pub fn new(capacity: u32) -> Self {
        QpCache { capacity: capacity as usize, lru: VecDeque::new() }
    }

    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Connection contexts on chip now, and how many fit.
    pub fn occupancy(&self) -> (usize, usize) {
        (self.lru.len(), self.capacity)
    }

    /// A packet for connection `conn` (on chip or not) arrived.
    pub fn touch(&mut self, conn: u32, on_chip: bool) -> Touch {
        if on_chip {
            if let Some(i) = self.lru.iter().position(|&x| x == conn) {
                self.lru.remove(i);
            }
            self.lru.push_back(conn);
            return Touch::Hit;
        }
        let evict = if self.lru.len() >= self.capacity { self.lru.pop_front() } else { None };
        Touch::Miss { evict }
    }

    /// `conn` was swapped in.
    pub fn insert(&mut self, conn: u32) {
        self.lru.push_back(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut c = QpCache::new(2);
        assert_eq!(c.touch(1, false), Touch::Miss { evict: None });
        c.insert(1);
        assert_eq!(c.touch(2, false), Touch::Miss { evict: None });
        c.insert(2);
        assert_eq!(c.touch(1, true), Touch::Hit); // 2 is now the oldest
        assert_eq!(c.touch(3, false), Touch::Miss { evict: Some(2) });
    }
}
