//! The side table of INT hop records: a packet with telemetry carries only the index of its
//! slot, so packets stay small whether INT is on or off; a slot is taken only when INT is on
//! and is given back when the packet (or the ACK that echoed it) is consumed or dropped.

use crate::transport::common::int::{IntHop, IntHops};

/// A packet without INT records.
pub const NO_INT: u32 = u32::MAX;

#[derive(Default)]
pub struct IntTable {
    slots: Vec<IntHops>,
    free: Vec<u32>,
}

impl IntTable {
    pub fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize].clear();
                i
            }
            None => {
                self.slots.push(IntHops::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Gives a slot back (NO_INT is ignored).
    pub fn free(&mut self, slot: u32) {
        if slot != NO_INT {
            self.free.push(slot);
        }
    }

    pub fn stamp(&mut self, slot: u32, hop: IntHop) {
        if slot != NO_INT {
            self.slots[slot as usize].push(hop);
        }
    }

    pub fn get(&self, slot: u32) -> IntHops {
        if slot == NO_INT { IntHops::default() } else { self.slots[slot as usize] }
    }

    /// Slots in use.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_clean() {
        let mut t = IntTable::default();
        let a = t.alloc();
        t.stamp(a, IntHop { qlen: 7, ..Default::default() });
        assert_eq!(t.get(a).as_slice().len(), 1);
        t.free(a);
        let b = t.alloc();
        assert_eq!(a, b);
        assert!(t.get(b).is_empty());
        assert_eq!(t.live(), 1);
        t.free(NO_INT);
        assert_eq!(t.live(), 1);
    }
}
