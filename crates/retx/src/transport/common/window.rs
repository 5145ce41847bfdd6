//! A ring of flags over a sliding window of packet indices, sized by what is outstanding:
//! IRN's and Go-Back-ONE's bitmaps, the reorder buffer's tags, NDP's and ExpressPass's
//! per-packet marks.

/// A ring of flags over a sliding window of packet indices [base, base + capacity).
///
/// The ring holds only the slots what is outstanding needs: it starts at [`INITIAL_SLOTS`]
/// and doubles when an index beyond it must be covered ([`Window::cover`]), up to the
/// window's capacity (or the flow's packet count, if smaller) rounded up to a power of two.
/// So a 1-packet flow keeps one slot, and a flow whose congestion control keeps a few packets
/// in flight keeps a few dozen, instead of a BDP's worth each (what lets 10^5 flows share a
/// run). Released (at completion) it holds none and reads as all clear.
#[derive(Clone, Debug)]
pub struct Window {
    bits: Vec<u64>,
    mask: u64,
    capacity: u64,
    /// The most slots the ring may grow to.
    max_slots: u64,
}

/// Slots a window starts with: one word of flags.
pub const INITIAL_SLOTS: u64 = 64;

/// How a window's ring grew, for side tables indexed by its slots to follow
/// ([`Regrow::apply`]): the live indices [base, base + old slots) moved from `index & old_mask`
/// to `index & new_mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regrow {
    base: u64,
    old_mask: u64,
    new_mask: u64,
}

impl Regrow {
    /// Moves a side table's live entries to their slots in the grown ring.
    pub fn apply<T: Copy + Default>(&self, table: &mut Vec<T>) {
        let old = std::mem::replace(table, vec![T::default(); (self.new_mask + 1) as usize]);
        for i in self.base..=self.base + self.old_mask {
            table[(i & self.new_mask) as usize] = old[(i & self.old_mask) as usize];
        }
    }
}

impl Window {
    /// A window of `capacity` packets, for a flow of at most `npkts` packets.
    pub fn new(capacity: u32, npkts: u64) -> Self {
        let capacity = capacity.max(1) as u64;
        let max_slots = capacity.min(npkts.max(1)).next_power_of_two();
        let slots = max_slots.min(INITIAL_SLOTS);
        Window { bits: vec![0; slots.div_ceil(64) as usize], mask: slots - 1, capacity, max_slots }
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// The ring slot of index `i` (for side tables of the same window).
    pub fn slot(&self, i: u64) -> usize {
        (i & self.mask) as usize
    }
    pub fn slots(&self) -> usize {
        if self.bits.is_empty() { 0 } else { (self.mask + 1) as usize }
    }
    pub fn get(&self, i: u64) -> bool {
        let s = i & self.mask;
        self.bits.get((s >> 6) as usize).is_some_and(|w| w >> (s & 63) & 1 == 1)
    }
    pub fn set(&mut self, i: u64) {
        let s = i & self.mask;
        self.bits[(s >> 6) as usize] |= 1 << (s & 63);
    }
    pub fn clear(&mut self, i: u64) {
        let s = i & self.mask;
        self.bits[(s >> 6) as usize] &= !(1 << (s & 63));
    }
    /// Makes the ring hold every index of [base, i] (`i - base` below the capacity), every
    /// flag set so far lying in [base, base + slots): doubles it as often as needed, moving
    /// those flags. Returns the move for side tables, or None if the ring was big enough.
    pub fn cover(&mut self, base: u64, i: u64) -> Option<Regrow> {
        let slots = self.mask + 1;
        if i - base < slots || self.bits.is_empty() {
            return None;
        }
        let grown = (i - base + 1).next_power_of_two().min(self.max_slots).max(slots);
        debug_assert!(i - base < grown, "an index beyond the window's capacity");
        let r = Regrow { base, old_mask: self.mask, new_mask: grown - 1 };
        let old = std::mem::replace(&mut self.bits, vec![0; grown.div_ceil(64) as usize]);
        let was = |j: u64| old[((j & r.old_mask) >> 6) as usize] >> (j & r.old_mask & 63) & 1 == 1;
        self.mask = r.new_mask;
        for j in base..base + slots {
            if was(j) {
                self.set(j);
            }
        }
        Some(r)
    }
    /// Frees the ring (the flow is over): every flag reads clear from now on; the capacity,
    /// which senders and receivers compare spans with, stays.
    pub fn release(&mut self) {
        self.bits = Vec::new();
        self.mask = 0;
    }
}
