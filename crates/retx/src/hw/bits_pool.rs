//! MELO's shared bits pool (Lu et al., APNet'17, §3.2.3), modelled structure by structure.
//!
//! The pool is cut into equal blocks (default 1 byte = 8 bits). A free-slot stack, the
//! *available* array with its `avail_ptr`, hands out blocks from its top and takes them back
//! on top: entries at index >= `avail_ptr` are free. Each block has a `next_ptr`, chaining the
//! blocks of one connection's bitmap into a list from `start_ptr` to `end_ptr`. Hardware reads
//! such a list only at its two ends; [`ConnBitmap::position`] tells where a packet's bit lies
//! so the receiver can refuse middle accesses.
//!
//! LEFT (APNet'24, slides "Dual-state bitmap pool") keeps the same linked blocks but marks
//! free ones in an *available-block bitmap* instead of a stack: [`BitsPool::with_free_bitmap`]
//! hands out the lowest free block, as a priority encoder over that bitmap does.

/// A block index in the pool (the paper's 8-bit entries for a 128-block pool; 16 bits here so
/// larger pools work).
pub type Block = u16;
const NIL: Block = Block::MAX;

/// The shared pool of one NIC (one per direction: MELO sizes the sender's pool like the
/// receiver's).
#[derive(Clone, Debug)]
pub struct BitsPool {
    block_bits: u32,
    /// The bits of every block (the low `block_bits` bits are used).
    bits: Vec<u64>,
    /// next_ptr of every block.
    next: Vec<Block>,
    /// The free-slot stack; entries at index >= avail_ptr are free blocks (empty when the
    /// pool keeps an available-block bitmap instead).
    available: Vec<Block>,
    /// Blocks in use (the stack's pointer).
    avail_ptr: usize,
    /// LEFT's available-block bitmap: bit b set = block b free (empty for MELO's stack).
    free_map: Vec<u64>,
    /// Most blocks ever in use at once.
    pub peak_used: usize,
    /// Most blocks in use at once since [`BitsPool::take_interval_peak`] last ran.
    interval_peak: usize,
    /// Allocations refused because the pool was empty.
    pub exhausted: u64,
}

impl BitsPool {
    pub fn new(pool_bits: u32, block_bits: u32) -> Self {
        assert!((1..=64).contains(&block_bits), "block size must be 1..=64 bits");
        let blocks = (pool_bits / block_bits).max(1) as usize;
        assert!(blocks < NIL as usize, "too many blocks for 16-bit pointers");
        BitsPool {
            block_bits,
            bits: vec![0; blocks],
            next: vec![NIL; blocks],
            available: (0..blocks as Block).collect(),
            avail_ptr: 0,
            free_map: Vec::new(),
            peak_used: 0,
            interval_peak: 0,
            exhausted: 0,
        }
    }

    /// A pool whose free blocks are marked in an available-block bitmap (LEFT): allocation
    /// takes the lowest free block.
    pub fn with_free_bitmap(pool_bits: u32, block_bits: u32) -> Self {
        let mut pool = Self::new(pool_bits, block_bits);
        let blocks = pool.bits.len();
        pool.available = Vec::new();
        pool.free_map = vec![u64::MAX; blocks.div_ceil(64)];
        if blocks % 64 != 0 {
            *pool.free_map.last_mut().expect("at least one block") = (1u64 << (blocks % 64)) - 1;
        }
        pool
    }

    pub fn block_bits(&self) -> u32 {
        self.block_bits
    }
    pub fn blocks(&self) -> usize {
        self.bits.len()
    }
    pub fn used_blocks(&self) -> usize {
        self.avail_ptr
    }
    pub fn free_blocks(&self) -> usize {
        self.bits.len() - self.avail_ptr
    }

    /// The most blocks in use at once since the previous call (or the start), and a new
    /// interval from now: what a sampled time series shows between samples.
    pub fn take_interval_peak(&mut self) -> usize {
        std::mem::replace(&mut self.interval_peak, self.avail_ptr)
    }

    /// Pops a block off the top of the free-slot stack (or, with an available-block bitmap,
    /// takes the lowest free block).
    pub fn alloc(&mut self) -> Option<Block> {
        if self.avail_ptr == self.bits.len() {
            self.exhausted += 1;
            return None;
        }
        let b = if self.free_map.is_empty() {
            self.available[self.avail_ptr]
        } else {
            let w = self.free_map.iter().position(|&w| w != 0).expect("a free block is marked");
            let bit = self.free_map[w].trailing_zeros();
            self.free_map[w] &= !(1 << bit);
            (w * 64 + bit as usize) as Block
        };
        self.avail_ptr += 1;
        self.bits[b as usize] = 0;
        self.next[b as usize] = NIL;
        self.peak_used = self.peak_used.max(self.avail_ptr);
        self.interval_peak = self.interval_peak.max(self.avail_ptr);
        Some(b)
    }

    /// Pushes a block back on top of the free-slot stack (or marks it available).
    pub fn free(&mut self, b: Block) {
        debug_assert!(self.avail_ptr > 0, "free with nothing allocated");
        self.avail_ptr -= 1;
        if self.free_map.is_empty() {
            self.available[self.avail_ptr] = b;
        } else {
            debug_assert!(self.free_map[b as usize / 64] >> (b % 64) & 1 == 0, "block {b} freed twice");
            self.free_map[b as usize / 64] |= 1 << (b % 64);
        }
    }

    /// The available-block bitmap as the hardware holds it (for tests and traces; empty for
    /// a stack pool).
    pub fn free_map(&self) -> &[u64] {
        &self.free_map
    }

    /// The bits of block `b` (the low `block_bits` are used).
    pub fn block(&self, b: Block) -> u64 {
        self.bits[b as usize]
    }

    /// The stack as the hardware holds it (for tests): (available array, avail_ptr).
    pub fn stack(&self) -> (&[Block], usize) {
        (&self.available, self.avail_ptr)
    }

    pub fn next_ptr(&self, b: Block) -> Option<Block> {
        let n = self.next[b as usize];
        (n != NIL).then_some(n)
    }
}

/// Where a packet's bit lies relative to a connection's list of blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Below the first block (already delivered).
    Before,
    /// In the block at `start_ptr` (possibly also the last).
    First,
    /// In the block at `end_ptr` (and it is not the first).
    Last,
    /// In a block strictly between the two ends: hardware cannot reach it.
    Middle,
    /// Past the last block: more blocks must be allocated.
    Beyond,
}

/// One connection's bitmap: a list of pool blocks covering packet indices
/// [base, base + blocks * block_bits).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnBitmap {
    start_ptr: Option<Block>,
    end_ptr: Option<Block>,
    /// Packet index of bit 0 of the first block (a multiple of the block size).
    base: u64,
    blocks: u32,
}

impl ConnBitmap {
    pub fn is_empty(&self) -> bool {
        self.blocks == 0
    }
    pub fn blocks(&self) -> u32 {
        self.blocks
    }
    pub fn start_ptr(&self) -> Option<Block> {
        self.start_ptr
    }
    pub fn end_ptr(&self) -> Option<Block> {
        self.end_ptr
    }
    pub fn base(&self) -> u64 {
        self.base
    }

    fn end(&self, pool: &BitsPool) -> u64 {
        self.base + self.blocks as u64 * pool.block_bits as u64
    }

    pub fn position(&self, pool: &BitsPool, index: u64) -> Position {
        let bb = pool.block_bits as u64;
        if self.is_empty() || index >= self.end(pool) {
            return Position::Beyond;
        }
        if index < self.base {
            return Position::Before;
        }
        let k = (index - self.base) / bb;
        if k == 0 {
            Position::First
        } else if k + 1 == self.blocks as u64 {
            Position::Last
        } else {
            Position::Middle
        }
    }

    /// Extends the list so that it covers `index`, starting (if empty) at the block holding
    /// `front`. All or nothing: if the pool cannot supply every block needed, nothing is
    /// allocated and false is returned.
    pub fn cover(&mut self, pool: &mut BitsPool, front: u64, index: u64) -> bool {
        let bb = pool.block_bits as u64;
        if self.is_empty() {
            self.base = front - front % bb;
        }
        if index < self.end(pool) {
            return true;
        }
        let needed = ((index - self.end(pool)) / bb + 1) as usize;
        if needed > pool.free_blocks() {
            pool.exhausted += 1;
            return false;
        }
        for _ in 0..needed {
            let b = pool.alloc().expect("checked free blocks");
            match self.end_ptr {
                Some(e) => pool.next[e as usize] = b,
                None => self.start_ptr = Some(b),
            }
            self.end_ptr = Some(b);
            self.blocks += 1;
        }
        true
    }

    /// Which block of the list holds `index` (0: the one at `start_ptr`): how many Nxt_ptr
    /// links a walk from the start follows to reach it. None outside the list.
    pub fn link_of(&self, pool: &BitsPool, index: u64) -> Option<u64> {
        (!self.is_empty() && index >= self.base && index < self.end(pool)).then(|| (index - self.base) / pool.block_bits as u64)
    }

    /// The block holding `index`, walking the list (only the sender, which rebuilds its
    /// bitmap from NACKs off the packet pipeline, walks into the middle).
    fn block_of(&self, pool: &BitsPool, index: u64) -> Option<(Block, u32)> {
        if self.is_empty() || index < self.base || index >= self.end(pool) {
            return None;
        }
        let bb = pool.block_bits as u64;
        let k = (index - self.base) / bb;
        let mut b = self.start_ptr?;
        if k + 1 == self.blocks as u64 {
            b = self.end_ptr?;
        } else {
            for _ in 0..k {
                b = pool.next[b as usize];
            }
        }
        Some((b, ((index - self.base) % bb) as u32))
    }

    pub fn get(&self, pool: &BitsPool, index: u64) -> bool {
        self.block_of(pool, index).is_some_and(|(b, bit)| pool.bits[b as usize] >> bit & 1 == 1)
    }

    pub fn set(&self, pool: &mut BitsPool, index: u64) {
        if let Some((b, bit)) = self.block_of(pool, index) {
            pool.bits[b as usize] |= 1 << bit;
        }
    }

    pub fn clear(&self, pool: &mut BitsPool, index: u64) {
        if let Some((b, bit)) = self.block_of(pool, index) {
            pool.bits[b as usize] &= !(1 << bit);
        }
    }

    /// Returns to the pool every block wholly below `front` (RCV.NXT or snd_una moved past it).
    pub fn release_below(&mut self, pool: &mut BitsPool, front: u64) {
        let bb = pool.block_bits as u64;
        while let Some(b) = self.start_ptr {
            if self.base + bb > front {
                break;
            }
            self.start_ptr = pool.next_ptr(b);
            pool.free(b);
            self.blocks -= 1;
            self.base += bb;
            if self.start_ptr.is_none() {
                self.end_ptr = None;
            }
        }
    }

    /// The list's bits, first block first, and its base: what is written off chip when the
    /// connection is swapped out.
    pub fn export(&self, pool: &BitsPool) -> (u64, Vec<u64>) {
        let mut bits = Vec::with_capacity(self.blocks as usize);
        let mut b = self.start_ptr;
        while let Some(x) = b {
            bits.push(pool.bits[x as usize]);
            b = pool.next_ptr(x);
        }
        (self.base, bits)
    }

    /// Rebuilds an exported list from fresh blocks (all or nothing). The list must be empty.
    pub fn import(&mut self, pool: &mut BitsPool, base: u64, bits: &[u64]) -> bool {
        debug_assert!(self.is_empty());
        if bits.is_empty() {
            return true;
        }
        if bits.len() > pool.free_blocks() {
            pool.exhausted += 1;
            return false;
        }
        let last = base + (bits.len() as u64 - 1) * pool.block_bits as u64;
        let covered = self.cover(pool, base, last);
        debug_assert!(covered);
        let mut b = self.start_ptr;
        for &word in bits {
            let x = b.expect("as many blocks as words");
            pool.bits[x as usize] = word;
            b = pool.next_ptr(x);
        }
        true
    }

    /// Returns every block to the pool.
    pub fn release_all(&mut self, pool: &mut BitsPool) {
        while let Some(b) = self.start_ptr {
            self.start_ptr = pool.next_ptr(b);
            pool.free(b);
        }
        *self = ConnBitmap::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_slot_stack_allocates_and_returns_on_top() {
        let mut pool = BitsPool::new(32, 8); // 4 blocks
        assert_eq!(pool.stack(), (&[0, 1, 2, 3][..], 0));
        let a = pool.alloc().unwrap();
        let b = pool.alloc().unwrap();
        assert_eq!((a, b), (0, 1));
        assert_eq!(pool.stack().1, 2);
        pool.free(a); // returned on top: slot 1 now holds block 0
        assert_eq!(pool.stack(), (&[0, 0, 2, 3][..], 1));
        assert_eq!(pool.alloc(), Some(0)); // the most recently freed block comes back first
        assert_eq!(pool.alloc(), Some(2));
        assert_eq!(pool.alloc(), Some(3));
        assert_eq!(pool.alloc(), None);
        assert_eq!(pool.exhausted, 1);
        assert_eq!(pool.peak_used, 4);
    }

    #[test]
    fn an_available_block_bitmap_hands_out_the_lowest_free_block() {
        let mut pool = BitsPool::with_free_bitmap(80, 8); // 10 blocks: one partial word
        assert_eq!(pool.free_map(), &[0b11_1111_1111]);
        assert_eq!((pool.blocks(), pool.free_blocks()), (10, 10));
        let got: Vec<Block> = (0..4).map(|_| pool.alloc().unwrap()).collect();
        assert_eq!(got, [0, 1, 2, 3]);
        pool.free(1);
        assert_eq!(pool.free_map(), &[0b11_1111_0010]);
        assert_eq!(pool.alloc(), Some(1)); // the lowest, not the most recently freed
        pool.free(3);
        pool.free(0);
        assert_eq!(pool.alloc(), Some(0));
        assert_eq!(pool.alloc(), Some(3));
        for want in 4..10 {
            assert_eq!(pool.alloc(), Some(want));
        }
        assert_eq!(pool.alloc(), None);
        assert_eq!((pool.exhausted, pool.peak_used, pool.free_blocks()), (1, 10, 0));
        // Lists link blocks as with the stack.
        let mut big = BitsPool::with_free_bitmap(1024, 8); // 128 blocks: two full words
        assert_eq!(big.free_map(), &[u64::MAX, u64::MAX]);
        let mut c = ConnBitmap::default();
        assert!(c.cover(&mut big, 0, 70 * 8));
        assert_eq!((c.blocks(), big.free_map()[1]), (71, u64::MAX << 7));
        assert_eq!((c.link_of(&big, 0), c.link_of(&big, 17), c.link_of(&big, 70 * 8 + 7), c.link_of(&big, 71 * 8)), (Some(0), Some(2), Some(70), None));
    }

    #[test]
    fn interval_peak_is_the_most_in_use_since_the_last_sample() {
        let mut pool = BitsPool::new(64, 8); // 8 blocks
        let blocks: Vec<_> = (0..5).map(|_| pool.alloc().unwrap()).collect();
        for &b in &blocks[1..] {
            pool.free(b);
        }
        assert_eq!(pool.used_blocks(), 1);
        assert_eq!(pool.take_interval_peak(), 5); // the spike between samples
        assert_eq!(pool.take_interval_peak(), 1); // nothing since: what is in use now
        pool.alloc().unwrap();
        pool.alloc().unwrap();
        assert_eq!(pool.take_interval_peak(), 3);
        assert_eq!(pool.peak_used, 5); // the run's peak is kept apart
    }

    #[test]
    fn connection_lists_link_blocks_and_free_as_the_front_advances() {
        let mut pool = BitsPool::new(64, 8); // 8 blocks
        let mut c = ConnBitmap::default();
        // RCV.NXT = 13, a packet at 30 arrives: blocks for [8,16), [16,24), [24,32).
        assert!(c.cover(&mut pool, 13, 30));
        assert_eq!((c.base(), c.blocks()), (8, 3));
        assert_eq!((c.start_ptr(), c.end_ptr()), (Some(0), Some(2)));
        assert_eq!(pool.next_ptr(0), Some(1));
        assert_eq!(pool.next_ptr(1), Some(2));
        assert_eq!(pool.next_ptr(2), None);
        assert_eq!(c.position(&pool, 13), Position::First);
        assert_eq!(c.position(&pool, 20), Position::Middle);
        assert_eq!(c.position(&pool, 30), Position::Last);
        assert_eq!(c.position(&pool, 32), Position::Beyond);
        assert_eq!(c.position(&pool, 7), Position::Before);
        c.set(&mut pool, 30);
        assert!(c.get(&pool, 30) && !c.get(&pool, 29));
        // RCV.NXT moves to 17: block [8,16) returns to the pool, the list starts at block 1.
        c.release_below(&mut pool, 17);
        assert_eq!((c.base(), c.blocks(), c.start_ptr()), (16, 2, Some(1)));
        assert_eq!(pool.used_blocks(), 2);
        assert_eq!(pool.stack(), (&[0, 1, 0, 3, 4, 5, 6, 7][..], 2));
        c.release_all(&mut pool);
        assert_eq!(pool.used_blocks(), 0);
        assert!(c.is_empty());
    }

    #[test]
    fn a_swapped_out_list_comes_back_with_its_bits() {
        let mut pool = BitsPool::new(64, 8); // 8 blocks
        let mut c = ConnBitmap::default();
        assert!(c.cover(&mut pool, 3, 20)); // blocks for [0,8), [8,16), [16,24)
        c.set(&mut pool, 5);
        c.set(&mut pool, 19);
        let (base, bits) = c.export(&pool);
        assert_eq!((base, bits.clone()), (0, vec![1 << 5, 0, 1 << 3]));
        c.release_all(&mut pool);
        assert_eq!(pool.used_blocks(), 0);
        // Someone else takes 6 of the 8 blocks: 2 free, 3 needed.
        let mut other = ConnBitmap::default();
        assert!(other.cover(&mut pool, 0, 47));
        assert!(!c.import(&mut pool, base, &bits));
        assert!(c.is_empty() && pool.used_blocks() == 6);
        other.release_below(&mut pool, 8); // one block back: 3 free
        assert!(c.import(&mut pool, base, &bits));
        assert_eq!((c.base(), c.blocks()), (0, 3));
        assert!(c.get(&pool, 5) && c.get(&pool, 19) && !c.get(&pool, 6));
        assert_eq!(pool.free_blocks(), 0);
    }

    #[test]
    fn cover_is_all_or_nothing_when_the_pool_runs_out() {
        let mut pool = BitsPool::new(24, 8); // 3 blocks
        let mut a = ConnBitmap::default();
        assert!(a.cover(&mut pool, 0, 15)); // 2 blocks
        let mut b = ConnBitmap::default();
        assert!(!b.cover(&mut pool, 0, 15)); // needs 2, only 1 free
        assert!(b.is_empty());
        assert_eq!(pool.used_blocks(), 2);
        assert!(b.cover(&mut pool, 0, 7));
        assert_eq!(pool.free_blocks(), 0);
    }
}
