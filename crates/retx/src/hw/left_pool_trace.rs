//! A record of the operations a [`DualPool`] performs, for co-simulating LEFT's pool in RTL
//! (`rtl/left_pool.v`, checked operation by operation by `crates/retx/tests/left_rtl_cosim.rs`).
//!
//! Each record holds one call's inputs and outputs ([`PoolOp`]) and what it left behind
//! ([`After`]): where the connection's bitmap is (its register, its list's length and end
//! pointers), the pool's blocks in use, and a digest of the bitmap: the bits of one block
//! around the operation's index. The end pointers say which blocks the available-block bitmap
//! handed out (the lowest free one each time), so allocation order is checked bit for bit;
//! the digest and the blocks in use catch a bitmap that drifted before any output differs.
//!
//! Recording is off unless [`DualPool::record_ops`] turns it on; [`OpLog::rows`] turns the
//! records into the integer rows the testbench reads and writes back.

use super::left_pool::{DualPool, Update};

/// One call on the pool, with what it returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolOp {
    Update { conn: u32, front: u64, index: u64, out: Update },
    BringIn { conn: u32, front: u64, out: Option<u32> },
    TakeRun { conn: u32, front: u64, run: u64, cycles: u32 },
    Release { conn: u32 },
}

impl PoolOp {
    pub fn conn(&self) -> u32 {
        match *self {
            PoolOp::Update { conn, .. } | PoolOp::BringIn { conn, .. } | PoolOp::TakeRun { conn, .. } | PoolOp::Release { conn } => conn,
        }
    }

    /// The operation's code in the rows: 0 update, 1 bring in, 2 take run, 3 release.
    pub fn code(&self) -> u8 {
        match self {
            PoolOp::Update { .. } => 0,
            PoolOp::BringIn { .. } => 1,
            PoolOp::TakeRun { .. } => 2,
            PoolOp::Release { .. } => 3,
        }
    }

    /// The packet index whose block the digest shows, if any: the updated packet's, the new
    /// RCV.NXT's after a run, RCV.NXT's after a bring-in that left the bitmap in a register.
    fn digest_at(&self, pool: &DualPool) -> Option<u64> {
        match *self {
            PoolOp::Update { index, .. } => Some(index),
            PoolOp::TakeRun { front, run, .. } => Some(front + run),
            PoolOp::BringIn { conn, front, .. } => pool.is_cached(conn).then_some(front),
            PoolOp::Release { .. } => None,
        }
    }
}

/// What an operation left: the connection's register (if its bitmap is in one), its list
/// (blocks, start_ptr, end_ptr), the pool's blocks in use, and the digest (bit k: packet
/// `a + k` is marked, `a` the block-aligned index [`PoolOp`] names; 0 when it names none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    pub register: Option<usize>,
    pub blocks: u32,
    pub start_ptr: Option<u16>,
    pub end_ptr: Option<u16>,
    pub used_blocks: usize,
    pub digest: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolRecord {
    pub op: PoolOp,
    pub after: After,
}

/// The recorded operations, the first `limit` of them.
#[derive(Clone, Debug, Default)]
pub struct OpLog {
    limit: usize,
    records: Vec<PoolRecord>,
}

/// The columns of a row ([`OpLog::rows`]); the testbench writes them in this order, then the
/// clocks the operation took.
pub const COLUMNS: [&str; 12] = ["op", "conn", "front", "index", "result", "charge", "register", "blocks", "start_ptr", "end_ptr", "used_blocks", "digest"];

/// Of a row, the inputs: op, conn, front, index.
pub const INPUTS: usize = 4;

impl OpLog {
    pub fn new(limit: usize) -> OpLog {
        OpLog { limit, records: Vec::new() }
    }

    pub fn records(&self) -> &[PoolRecord] {
        &self.records
    }

    /// Records `op`, just performed on `pool`, with the state it left.
    pub(super) fn push(&mut self, pool: &DualPool, op: PoolOp) {
        if self.records.len() >= self.limit {
            return;
        }
        let conn = op.conn();
        let list = pool.list_of(conn);
        let bb = pool.pool.block_bits() as u64;
        let digest = op.digest_at(pool).map_or(0, |i| {
            let a = i - i % bb;
            (0..bb).filter(|&k| pool.has(conn, a + k)).fold(0, |d, k| d | 1 << k)
        });
        let after = After {
            register: pool.register_of(conn),
            blocks: pool.blocks_of(conn),
            start_ptr: list.and_then(|l| l.start_ptr()),
            end_ptr: list.and_then(|l| l.end_ptr()),
            used_blocks: pool.pool.used_blocks(),
            digest,
        };
        self.records.push(PoolRecord { op, after });
    }

    /// The records as rows ([`rows`]).
    pub fn rows(&self) -> (Vec<[i64; 12]>, usize) {
        rows(&self.records)
    }
}

/// Records as rows of [`COLUMNS`], connections numbered from 0 in order of their first
/// operation (a renaming the pool cannot tell from the original), absent values -1: what the
/// testbench must write back. Also how many connections there are.
pub fn rows(records: &[PoolRecord]) -> (Vec<[i64; 12]>, usize) {
    let mut names: Vec<u32> = Vec::new();
    let rows = records
        .iter()
        .map(|r| {
            let conn = match names.iter().position(|&c| c == r.op.conn()) {
                Some(c) => c,
                None => {
                    names.push(r.op.conn());
                    names.len() - 1
                }
            };
            let (front, index, result, charge) = match r.op {
                PoolOp::Update { front, index, out: Update::Set(c), .. } => (front, index, 1, c as u64),
                PoolOp::Update { front, index, out: Update::NoRoom, .. } => (front, index, 0, 0),
                PoolOp::BringIn { front, out, .. } => (front, 0, out.is_some() as u64, out.unwrap_or(0) as u64),
                PoolOp::TakeRun { front, run, cycles, .. } => (front, 0, run, cycles as u64),
                PoolOp::Release { .. } => (0, 0, 0, 0),
            };
            let a = r.after;
            let opt = |x: Option<u16>| x.map_or(-1, i64::from);
            [
                r.op.code() as i64,
                conn as i64,
                front as i64,
                index as i64,
                result as i64,
                charge as i64,
                a.register.map_or(-1, |x| x as i64),
                a.blocks as i64,
                opt(a.start_ptr),
                opt(a.end_ptr),
                a.used_blocks as i64,
                a.digest as i64,
            ]
        })
        .collect();
    (rows, names.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_pool_records_calls_with_their_outcomes_only_when_asked() {
        let mut d = DualPool::new(128, 8, 1, 32);
        d.update(5, 0, 3);
        assert!(d.op_log().is_none());
        d.record_ops(4);
        assert_eq!(d.update(5, 0, 12), Update::Set(1 + 1 + 1)); // a block allocated, one link
        assert_eq!(d.bring_in(9, 0), Some(0));
        assert_eq!(d.take_run(5, 3), (1, 1)); // packet 3, marked before recording
        d.release(9);
        d.release(5); // past the limit: not recorded
        let log = d.op_log().unwrap();
        assert_eq!(log.records().len(), 4);
        let (rows, conns) = log.rows();
        assert_eq!(conns, 2);
        // Connection 5 is 0, 9 is 1; blocks 0 and 1 are the lowest free; bit 4 of block [8,16).
        assert_eq!(rows[0], [0, 0, 0, 12, 1, 3, -1, 2, 0, 1, 2, 1 << 4]);
        assert_eq!(rows[1], [1, 1, 0, 0, 1, 0, 0, 0, -1, -1, 2, 0]);
        assert_eq!(rows[2], [2, 0, 3, 0, 1, 1, -1, 2, 0, 1, 2, 0]); // the new front's block, cleared
        assert_eq!(rows[3], [3, 1, 0, 0, 0, 0, -1, 0, -1, -1, 2, 0]);
    }
}
