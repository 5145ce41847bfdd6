//! LEFT's dual-state bitmap pool (Huang et al., "LEFT: LightwEight and FasT packet Reordering
//! for RDMA", APNet'24; slides "Dual-state bitmap pool" and "Bitmap Acceleration"), modelled
//! structure by structure.
//!
//! Every connection's receive bitmap is in one of two states:
//! - plainly, in one of a few *loop registers* (the bitmap cache): fast, a fixed width each,
//!   a ring that turns as RCV.NXT moves;
//! - as a list of blocks linked by Nxt_ptr in the shared pool, whose free blocks an
//!   available-block bitmap marks (MELO's structure, which the slides cite): compact, but
//!   reaching block k of a list follows k links.
//!
//! The slides' three cases are [`DualPool::update`] on a cached connection (a hit: the
//! register is updated), on an uncached one (a miss: the pool is updated in place), and
//! [`DualPool::bring_in`] (a miss that moves the bitmap into a register, writing the least
//! recently used register's bitmap back to the pool first).
//!
//! Time is counted in pool cycles: moving one block between pool and register, following one
//! Nxt_ptr, updating one block or one register each take one cycle (the slides: "switching a
//! bitmap block takes 5 ns", one block per cycle of a 200 MHz pipeline). The caller turns
//! cycles into receive-pipeline time.

use super::bits_pool::{BitsPool, ConnBitmap};
use super::left_pool_trace::{OpLog, PoolOp};

const NO_OWNER: u32 = u32::MAX;
const NO_REGISTER: u8 = u8::MAX;

/// One loop register: a connection's bitmap held plainly, bit i of the ring holding packet
/// index i modulo the ring's size, for indices in [base, base + width).
#[derive(Clone, Debug)]
struct LoopRegister {
    owner: u32,
    /// Packet index of the register's first bit (block-aligned, at or below RCV.NXT).
    base: u64,
    ring: Vec<u64>,
    /// When it was last used, for least-recently-used replacement.
    used: u64,
}

impl LoopRegister {
    fn slot(&self, index: u64) -> (usize, u32) {
        let bits = self.ring.len() as u64 * 64;
        let at = index % bits;
        ((at / 64) as usize, (at % 64) as u32)
    }
    fn get(&self, index: u64) -> bool {
        let (w, b) = self.slot(index);
        self.ring[w] >> b & 1 == 1
    }
    fn set(&mut self, index: u64) {
        let (w, b) = self.slot(index);
        self.ring[w] |= 1 << b;
    }
    fn clear(&mut self, index: u64) {
        let (w, b) = self.slot(index);
        self.ring[w] &= !(1 << b);
    }
}

/// What the pool did, in cycles, and where a connection's bitmap is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Updates made in a register (case 1).
    pub hits: u64,
    /// Updates made in the pool in place (case 2), and the Nxt_ptr links they followed.
    pub pool_updates: u64,
    pub links_walked: u64,
    /// Bitmaps brought into a register (case 3), the blocks moved in, and the blocks written
    /// back to the pool by the registers they evicted.
    pub swaps: u64,
    pub blocks_in: u64,
    pub blocks_out: u64,
    /// Updates refused: the pool had no free block for them.
    pub no_room: u64,
}

impl PoolStats {
    /// Adds another pool's counts.
    pub fn add(&mut self, o: &PoolStats) {
        self.hits += o.hits;
        self.pool_updates += o.pool_updates;
        self.links_walked += o.links_walked;
        self.swaps += o.swaps;
        self.blocks_in += o.blocks_in;
        self.blocks_out += o.blocks_out;
        self.no_room += o.no_room;
    }
}

/// The outcome of an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The bit is set, at this many cycles.
    Set(u32),
    /// The pool has no block for it: the bit is not set (the packet must be dropped).
    NoRoom,
}

/// The dual-state pool of one NIC: the block pool, the loop registers and, per connection,
/// its list of blocks and which register (if any) holds it.
#[derive(Clone, Debug)]
pub struct DualPool {
    pub pool: BitsPool,
    lists: Vec<ConnBitmap>,
    home: Vec<u8>,
    registers: Vec<LoopRegister>,
    /// Packets a register covers.
    width: u64,
    tick: u64,
    pub stats: PoolStats,
    /// Every operation with its outcome, when recording ([`DualPool::record_ops`]).
    log: Option<Box<OpLog>>,
}

impl DualPool {
    /// `pool_bits` in blocks of `block_bits`; `registers` loop registers of `register_bits`
    /// bits each (a multiple of the block).
    pub fn new(pool_bits: u32, block_bits: u32, registers: u32, register_bits: u32) -> Self {
        assert!(registers < NO_REGISTER as u32, "at most 254 loop registers");
        let words = register_bits.div_ceil(64).max(1) as usize;
        let register = LoopRegister { owner: NO_OWNER, base: 0, ring: vec![0; words], used: 0 };
        DualPool {
            pool: BitsPool::with_free_bitmap(pool_bits, block_bits),
            lists: Vec::new(),
            home: Vec::new(),
            registers: vec![register; registers as usize],
            width: register_bits as u64,
            tick: 0,
            stats: PoolStats::default(),
            log: None,
        }
    }

    /// From now on, records the first `limit` operations with their outcomes and the state
    /// they leave (for co-simulating the RTL, `rtl/left_pool.v`). Off by default: a pool that
    /// does not record pays one test per operation.
    pub fn record_ops(&mut self, limit: usize) {
        self.log = Some(Box::new(OpLog::new(limit)));
    }

    /// The operations recorded so far (None when not recording).
    pub fn op_log(&self) -> Option<&OpLog> {
        self.log.as_deref()
    }

    fn note(&mut self, op: PoolOp) {
        if let Some(mut log) = self.log.take() {
            log.push(self, op);
            self.log = Some(log);
        }
    }

    /// `conn`'s list of blocks in the pool (empty while it is in a register).
    pub fn list_of(&self, conn: u32) -> Option<&ConnBitmap> {
        self.lists.get(conn as usize)
    }

    fn grow(&mut self, conn: u32) {
        let n = conn as usize + 1;
        if self.lists.len() < n {
            self.lists.resize(n, ConnBitmap::default());
            self.home.resize(n, NO_REGISTER);
        }
    }

    fn aligned(&self, index: u64) -> u64 {
        index - index % self.pool.block_bits() as u64
    }

    /// The register holding `conn`'s bitmap, if one does.
    pub fn register_of(&self, conn: u32) -> Option<usize> {
        self.home.get(conn as usize).copied().filter(|&r| r != NO_REGISTER).map(usize::from)
    }

    /// Whether `conn`'s bitmap is in a register.
    pub fn is_cached(&self, conn: u32) -> bool {
        self.register_of(conn).is_some()
    }

    /// Blocks of the pool `conn`'s list holds.
    pub fn blocks_of(&self, conn: u32) -> u32 {
        self.lists.get(conn as usize).map_or(0, |l| l.blocks())
    }

    /// Whether packet `index` of `conn` is marked received.
    pub fn has(&self, conn: u32, index: u64) -> bool {
        match self.register_of(conn) {
            Some(r) => {
                let reg = &self.registers[r];
                index >= reg.base && index < reg.base + self.width && reg.get(index)
            }
            None => self.lists.get(conn as usize).is_some_and(|l| l.get(&self.pool, index)),
        }
    }

    /// Marks packet `index` of `conn` received (`front`: its RCV.NXT, below `index`) where its
    /// bitmap is now: in its register (a hit, one cycle) or in the pool, walking the list to
    /// the block (one cycle per link) and updating it (one more), after allocating the blocks
    /// a list must grow by (one cycle each). A register the index lies beyond is written back
    /// to the pool first.
    pub fn update(&mut self, conn: u32, front: u64, index: u64) -> Update {
        let out = self.update_untraced(conn, front, index);
        if self.log.is_some() {
            self.note(PoolOp::Update { conn, front, index, out });
        }
        out
    }

    fn update_untraced(&mut self, conn: u32, front: u64, index: u64) -> Update {
        self.grow(conn);
        let mut cycles = 0;
        if let Some(r) = self.register_of(conn) {
            if index < self.registers[r].base + self.width {
                self.tick += 1;
                let reg = &mut self.registers[r];
                reg.used = self.tick;
                if index >= reg.base {
                    reg.set(index);
                }
                self.stats.hits += 1;
                return Update::Set(1);
            }
            match self.write_back(r) {
                Some(c) => cycles += c,
                None => {
                    self.stats.no_room += 1;
                    return Update::NoRoom;
                }
            }
        }
        let list = &mut self.lists[conn as usize];
        if !list.is_empty() && index < list.base() {
            return Update::Set(0); // below the bitmap: already delivered
        }
        let before = list.blocks();
        if !list.cover(&mut self.pool, front, index) {
            self.stats.no_room += 1;
            return Update::NoRoom;
        }
        let links = list.link_of(&self.pool, index).expect("covered") as u32;
        list.set(&mut self.pool, index);
        self.stats.pool_updates += 1;
        self.stats.links_walked += links as u64;
        Update::Set(cycles + (list.blocks() - before) + links + 1)
    }

    /// Writes register `r`'s bitmap back to the pool as its owner's list (one cycle per block)
    /// and frees the register. None, and nothing changes, if the pool lacks the blocks.
    fn write_back(&mut self, r: usize) -> Option<u32> {
        let reg = &self.registers[r];
        let conn = reg.owner;
        if conn == NO_OWNER {
            return Some(0);
        }
        let top = (reg.base..reg.base + self.width).rev().find(|&i| reg.get(i));
        let mut moved = 0;
        if let Some(top) = top {
            let needed = (top - reg.base) / self.pool.block_bits() as u64 + 1;
            if needed > self.pool.free_blocks() as u64 {
                return None;
            }
            let list = &mut self.lists[conn as usize];
            debug_assert!(list.is_empty(), "a cached connection keeps no list");
            let covered = list.cover(&mut self.pool, reg.base, top);
            debug_assert!(covered);
            for i in reg.base..=top {
                if reg.get(i) {
                    list.set(&mut self.pool, i);
                }
            }
            moved = list.blocks();
        }
        let reg = &mut self.registers[r];
        reg.ring.fill(0);
        reg.owner = NO_OWNER;
        self.home[conn as usize] = NO_REGISTER;
        self.stats.blocks_out += moved as u64;
        Some(moved)
    }

    /// Brings `conn`'s bitmap into a register (case 3): a free register, or the least recently
    /// used one, written back to the pool. Costs one cycle per block moved either way. None,
    /// and nothing changes, if the list is wider than a register or the evicted bitmap finds
    /// no room in the pool even with the blocks this one frees.
    pub fn bring_in(&mut self, conn: u32, front: u64) -> Option<u32> {
        let out = self.bring_in_untraced(conn, front);
        if self.log.is_some() {
            self.note(PoolOp::BringIn { conn, front, out });
        }
        out
    }

    fn bring_in_untraced(&mut self, conn: u32, front: u64) -> Option<u32> {
        self.grow(conn);
        if self.registers.is_empty() {
            return None;
        }
        self.tick += 1;
        if let Some(r) = self.register_of(conn) {
            self.registers[r].used = self.tick;
            return Some(0);
        }
        let list = &self.lists[conn as usize];
        let bb = self.pool.block_bits() as u64;
        if list.blocks() as u64 * bb > self.width {
            return None;
        }
        let r = (0..self.registers.len()).min_by_key(|&r| if self.registers[r].owner == NO_OWNER { 0 } else { self.registers[r].used }).expect("a register");
        // The victim's blocks, checked against what this list will free.
        let victim = &self.registers[r];
        if victim.owner != NO_OWNER {
            let top = (victim.base..victim.base + self.width).rev().find(|&i| victim.get(i));
            let needed = top.map_or(0, |t| (t - victim.base) / bb + 1);
            if needed > (self.pool.free_blocks() + list.blocks() as usize) as u64 {
                return None;
            }
        }
        // Read this list out first: its blocks go back to the pool for the victim.
        let aligned = self.aligned(front);
        let list = &mut self.lists[conn as usize];
        let moved_in = list.blocks();
        let base = if list.is_empty() { aligned } else { list.base() };
        let (_, words) = list.export(&self.pool);
        list.release_all(&mut self.pool);
        let moved_out = self.write_back(r).expect("room checked");
        let reg = &mut self.registers[r];
        (reg.owner, reg.base, reg.used) = (conn, base, self.tick);
        for (k, word) in words.iter().enumerate() {
            for bit in 0..bb {
                if word >> bit & 1 == 1 {
                    reg.set(base + k as u64 * bb + bit);
                }
            }
        }
        self.home[conn as usize] = r as u8;
        self.stats.swaps += 1;
        self.stats.blocks_in += moved_in as u64;
        Some(moved_in + moved_out)
    }

    /// RCV.NXT is `front`: takes the run of packets marked received from there (clearing
    /// them; the blocks and register bits below the new front are freed), as (how many,
    /// cycles). A register finds the run in one cycle; a list reads its head blocks, one cycle
    /// each. A connection with no bitmap costs nothing.
    pub fn take_run(&mut self, conn: u32, front: u64) -> (u64, u32) {
        let (run, cycles) = self.take_run_untraced(conn, front);
        if self.log.is_some() {
            self.note(PoolOp::TakeRun { conn, front, run, cycles });
        }
        (run, cycles)
    }

    fn take_run_untraced(&mut self, conn: u32, front: u64) -> (u64, u32) {
        self.grow(conn);
        if let Some(r) = self.register_of(conn) {
            let width = self.width;
            let reg = &mut self.registers[r];
            let mut i = front.max(reg.base);
            while i < reg.base + width && reg.get(i) {
                reg.clear(i);
                i += 1;
            }
            // The ring turns with the front, whether or not a run was found.
            reg.base = reg.base.max(i - i % self.pool.block_bits() as u64);
            return (i.saturating_sub(front), 1);
        }
        let list = &mut self.lists[conn as usize];
        if list.is_empty() {
            return (0, 0);
        }
        let bb = self.pool.block_bits() as u64;
        let mut i = front;
        while list.get(&self.pool, i) {
            list.clear(&mut self.pool, i);
            i += 1;
        }
        let start = list.base();
        let read = ((i.max(start) - start) / bb + 1).min(list.blocks() as u64) as u32;
        list.release_below(&mut self.pool, i);
        (i - front, read.max(1))
    }

    /// The first `n` holes (start, length) of `conn`'s bitmap within [front, high).
    pub fn holes(&self, conn: u32, front: u64, high: u64, out: &mut [(u64, u64)]) -> usize {
        let mut n = 0;
        let mut i = front;
        while i < high && n < out.len() {
            if self.has(conn, i) {
                i += 1;
                continue;
            }
            let start = i;
            while i < high && !self.has(conn, i) {
                i += 1;
            }
            out[n] = (start, i - start);
            n += 1;
        }
        n
    }

    /// `conn` is finished: its register and blocks are free.
    pub fn release(&mut self, conn: u32) {
        self.release_untraced(conn);
        if self.log.is_some() {
            self.note(PoolOp::Release { conn });
        }
    }

    fn release_untraced(&mut self, conn: u32) {
        if let Some(r) = self.register_of(conn) {
            let reg = &mut self.registers[r];
            reg.ring.fill(0);
            reg.owner = NO_OWNER;
            self.home[conn as usize] = NO_REGISTER;
        }
        if let Some(list) = self.lists.get_mut(conn as usize) {
            list.release_all(&mut self.pool);
        }
    }

    /// Loop registers, and the packets each covers.
    pub fn registers(&self) -> usize {
        self.registers.len()
    }
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Loop registers holding a connection.
    pub fn registers_in_use(&self) -> usize {
        self.registers.iter().filter(|r| r.owner != NO_OWNER).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 blocks of 8 bits, 2 registers of 32 bits.
    fn small() -> DualPool {
        DualPool::new(128, 8, 2, 32)
    }

    #[test]
    fn a_miss_updates_the_pool_walking_the_list_and_a_hit_updates_the_register() {
        let mut d = small();
        // Connection 0, RCV.NXT 3: packet 20 needs blocks [0,8), [8,16), [16,24): 3 allocated,
        // 2 links walked, 1 update.
        assert_eq!(d.update(0, 3, 20), Update::Set(3 + 2 + 1));
        assert_eq!((d.blocks_of(0), d.pool.used_blocks(), d.pool.free_map()[0]), (3, 3, 0xfff8));
        // Packet 5 lies in the first block: no walk, no allocation.
        assert_eq!(d.update(0, 3, 5), Update::Set(1));
        assert!(d.has(0, 20) && d.has(0, 5) && !d.has(0, 6));
        // Into a register: 3 blocks move in, and they go back to the pool.
        assert_eq!(d.bring_in(0, 3), Some(3));
        assert!(d.is_cached(0));
        assert_eq!((d.blocks_of(0), d.pool.used_blocks()), (0, 0));
        assert!(d.has(0, 20) && d.has(0, 5) && !d.has(0, 6));
        // A hit costs one cycle wherever the bit lies.
        assert_eq!(d.update(0, 3, 30), Update::Set(1));
        assert_eq!((d.stats.hits, d.stats.pool_updates, d.stats.links_walked, d.stats.swaps), (1, 2, 2, 1));
    }

    #[test]
    fn the_least_recently_used_register_is_written_back_to_make_room() {
        let mut d = small();
        assert_eq!(d.bring_in(0, 0), Some(0)); // empty: nothing moves
        assert_eq!(d.bring_in(1, 0), Some(0));
        assert_eq!(d.update(0, 0, 17), Update::Set(1));
        assert_eq!(d.update(1, 0, 2), Update::Set(1));
        assert_eq!(d.update(0, 0, 9), Update::Set(1)); // 0 is now the most recently used
        // Connection 2 in the pool, one block; bringing it in evicts connection 1 (LRU), whose
        // bitmap needs one block: 1 in + 1 out.
        assert_eq!(d.update(2, 0, 4), Update::Set(1 + 0 + 1));
        assert_eq!(d.bring_in(2, 0), Some(2));
        assert_eq!((d.register_of(0), d.register_of(1), d.register_of(2)), (Some(0), None, Some(1)));
        assert_eq!((d.blocks_of(1), d.pool.used_blocks()), (1, 1));
        assert!(d.has(1, 2) && d.has(2, 4) && d.has(0, 17) && d.has(0, 9));
        assert_eq!((d.stats.blocks_in, d.stats.blocks_out), (1, 1));
        // Evicting connection 0 writes [0,24): 3 blocks.
        assert_eq!(d.bring_in(1, 0), Some(1 + 3));
        assert_eq!((d.register_of(0), d.blocks_of(0)), (None, 3));
        assert!(d.has(0, 17) && d.has(0, 9) && !d.has(0, 10));
    }

    #[test]
    fn runs_are_taken_from_the_front_and_free_what_they_pass() {
        let mut d = small();
        for i in [1, 2, 3, 9, 10] {
            assert!(matches!(d.update(0, 0, i), Update::Set(_)));
        }
        assert_eq!(d.blocks_of(0), 2);
        assert_eq!(d.take_run(0, 0), (0, 1)); // packet 0 missing: nothing
        assert_eq!(d.take_run(0, 1), (3, 1)); // 1..=3, read in the head block
        assert_eq!(d.blocks_of(0), 2); // front 4 is still in block [0,8)
        // Front 8 lies in the second block: one link and one read, and block [0,8) is freed.
        assert_eq!(d.take_run(0, 8), (0, 2));
        assert_eq!(d.blocks_of(0), 1);
        assert_eq!(d.take_run(0, 9), (2, 1));
        assert_eq!(d.take_run(7, 0), (0, 0)); // no bitmap at all
        // In a register: one cycle, and the ring turns.
        assert_eq!(d.bring_in(0, 11), Some(1));
        assert_eq!(d.update(0, 11, 12), Update::Set(1));
        assert_eq!(d.update(0, 11, 13), Update::Set(1));
        // 40 lies beyond the register (base 8, width 32): the register goes back to the pool
        // (1 block), then the list grows by 4 blocks and 4 links are walked.
        assert_eq!(d.update(0, 11, 40), Update::Set(1 + 4 + 4 + 1));
        assert!(!d.is_cached(0) && d.has(0, 40) && d.has(0, 12));
        assert_eq!(d.bring_in(0, 11), None); // [8, 48) is wider than a register
        assert_eq!(d.take_run(0, 11), (0, 1));
        assert_eq!(d.take_run(0, 12), (2, 1));
    }

    #[test]
    fn an_exhausted_pool_refuses_updates_and_evictions() {
        let mut d = DualPool::new(32, 8, 1, 32); // 4 blocks, 1 register
        assert_eq!(d.update(0, 0, 31), Update::Set(4 + 3 + 1));
        assert_eq!(d.update(1, 0, 1), Update::NoRoom);
        assert_eq!(d.stats.no_room, 1);
        assert_eq!(d.bring_in(1, 0), Some(0));
        assert_eq!(d.update(1, 0, 1), Update::Set(1));
        // Bringing 0 in frees its 4 blocks, which connection 1's bitmap (1 block) needs only one of.
        assert_eq!(d.bring_in(0, 0), Some(4 + 1));
        assert_eq!((d.blocks_of(1), d.pool.used_blocks()), (1, 1));
        let mut out = [(0, 0); 3];
        assert_eq!(d.holes(0, 0, 32, &mut out), 1);
        assert_eq!(out[0], (0, 31));
        d.release(0);
        d.release(1);
        assert_eq!((d.pool.used_blocks(), d.registers_in_use()), (0, 0));
    }
}
