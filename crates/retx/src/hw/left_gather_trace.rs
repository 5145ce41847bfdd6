//! A record of what LEFT's gather FIFOs and packet scheduler
//! ([`crate::transport::loss::left::nic::LeftNic`]) did, for co-simulating them in RTL
//! (`rtl/left_gather.v`, checked operation by operation by
//! `crates/retx/tests/it/left_gather_cosim.rs`).
//!
//! One record per call on the unit ([`GatherOp`]: an out-of-order packet, an in-order one that
//! only feeds the disorder degree, the FIFO timer, a connection's hole timer, a connection's
//! end) with what the model did: the scheduler's decision (fast path or gathered), the
//! connection's disorder degree after it (in the model's 1/16 packets), the FIFO the packet
//! went into (or the one closed or freed) and its fill, the connection a full set of FIFOs
//! closed to make room, which FIFOs closed (a bit each), the packets they handed on (count and
//! a hash of the indices in order: `h = 31 h + index`, mod 2^32), and the NIC's next FIFO
//! deadline. The hash checks the FIFOs' entries, not just their counts.
//!
//! Recording is off unless [`LeftParams::record_gather_ops`] is set (no scenario file can set
//! it); [`rows`] turns the records into the integer rows the testbench reads and writes back.
//!
//! [`LeftParams::record_gather_ops`]: crate::transport::loss::left::params::LeftParams::record_gather_ops

use crate::sim::units::Time;

/// One call on the scheduler and FIFOs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatherOp {
    /// `LeftNic::record`: packet `index` of `conn` above (or, under LEFT−, at) RCV.NXT `front`;
    /// `cached`: the pool's answer to "is the connection in a loop register", an input here.
    Packet { conn: u32, now: Time, front: u64, index: u64, cached: bool },
    /// `LeftNic::observe` for an in-order packet: the degree moves toward `index - front`.
    Observe { conn: u32, front: u64, index: u64 },
    /// The NIC's FIFO timer fired at `now` (`HostAgent::handle_timeout`).
    Tick { now: Time },
    /// `conn`'s hole timer: its open FIFO closes.
    CloseFor { conn: u32 },
    /// `conn` finished: its FIFO is freed (its packets dropped) and its degree reset.
    Release { conn: u32 },
}

impl GatherOp {
    pub fn conn(&self) -> Option<u32> {
        match *self {
            GatherOp::Packet { conn, .. } | GatherOp::Observe { conn, .. } | GatherOp::CloseFor { conn } | GatherOp::Release { conn } => Some(conn),
            GatherOp::Tick { .. } => None,
        }
    }

    /// The operation's code in the rows: 0 packet, 1 observe, 2 tick, 3 close_for, 4 release.
    pub fn code(&self) -> u8 {
        match self {
            GatherOp::Packet { .. } => 0,
            GatherOp::Observe { .. } => 1,
            GatherOp::Tick { .. } => 2,
            GatherOp::CloseFor { .. } => 3,
            GatherOp::Release { .. } => 4,
        }
    }
}

/// What one call did (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatherRecord {
    pub op: GatherOp,
    pub fast: bool,
    /// The connection's degree after the call, in 1/16 packets (0 for a tick).
    pub degree: u32,
    pub fifo: Option<usize>,
    pub fill: usize,
    pub evicted: Option<u32>,
    pub closed: u64,
    pub batch_count: u32,
    pub batch_hash: u32,
    pub deadline: Option<Time>,
}

/// The recorded calls (the first `limit`), and what the call under way has closed so far.
#[derive(Clone, Debug, Default)]
pub struct GatherLog {
    limit: usize,
    records: Vec<GatherRecord>,
    closed: u64,
    batch_count: u32,
    batch_hash: u32,
}

/// The columns of a row ([`rows`]); the testbench writes them in this order, then the clocks
/// the operation took.
pub const COLUMNS: [&str; 15] = ["op", "conn", "now", "front", "index", "cached", "fast", "degree", "fifo", "fill", "evicted", "closed", "batch_count", "batch_hash", "deadline"];

/// Of a row, the inputs: op, conn, now, front, index, cached.
pub const INPUTS: usize = 6;

impl GatherLog {
    pub fn new(limit: usize) -> GatherLog {
        GatherLog { limit, ..GatherLog::default() }
    }

    pub fn records(&self) -> &[GatherRecord] {
        &self.records
    }

    /// A call starts: nothing closed yet.
    pub fn begin(&mut self) {
        (self.closed, self.batch_count, self.batch_hash) = (0, 0, 0);
    }

    /// FIFO `f` closes during the call, handing on `packets` in order.
    pub fn closing(&mut self, f: usize, packets: &[u64]) {
        self.closed |= 1u64.checked_shl(f as u32).unwrap_or(0);
        for &p in packets {
            self.batch_hash = self.batch_hash.wrapping_mul(31).wrapping_add(p as u32);
        }
        self.batch_count += packets.len() as u32;
    }

    /// The call ends: `r` with what it closed.
    pub fn end(&mut self, mut r: GatherRecord) {
        if self.records.len() >= self.limit {
            return;
        }
        (r.closed, r.batch_count, r.batch_hash) = (self.closed, self.batch_count, self.batch_hash);
        self.records.push(r);
    }

    pub fn rows(&self) -> (Vec<[i64; 15]>, usize) {
        rows(&self.records)
    }
}

/// Records as rows of [`COLUMNS`], connections numbered from 0 in order of first appearance,
/// absent values -1 (a tick's connection, no FIFO, no eviction, no deadline). Also how many
/// connections there are.
pub fn rows(records: &[GatherRecord]) -> (Vec<[i64; 15]>, usize) {
    let mut names: Vec<u32> = Vec::new();
    let mut name = |c: u32| -> i64 {
        match names.iter().position(|&n| n == c) {
            Some(i) => i as i64,
            None => {
                names.push(c);
                names.len() as i64 - 1
            }
        }
    };
    let rows = records
        .iter()
        .map(|r| {
            let conn = r.op.conn().map_or(-1, &mut name);
            let (now, front, index, cached) = match r.op {
                GatherOp::Packet { now, front, index, cached, .. } => (now.0 as i64, front as i64, index as i64, cached as i64),
                GatherOp::Observe { front, index, .. } => (0, front as i64, index as i64, 0),
                GatherOp::Tick { now } => (now.0 as i64, 0, 0, 0),
                GatherOp::CloseFor { .. } | GatherOp::Release { .. } => (0, 0, 0, 0),
            };
            [
                r.op.code() as i64,
                conn,
                now,
                front,
                index,
                cached,
                r.fast as i64,
                r.degree as i64,
                r.fifo.map_or(-1, |f| f as i64),
                r.fill as i64,
                r.evicted.map_or(-1, &mut name),
                r.closed as i64,
                r.batch_count as i64,
                r.batch_hash as i64,
                r.deadline.map_or(-1, |t| t.0 as i64),
            ]
        })
        .collect();
    (rows, names.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::left_pool::Update;
    use crate::sim::units::Dur;
    use crate::transport::common::agent::HostAgent;
    use crate::transport::loss::left::nic::LeftNic;
    use crate::transport::loss::left::params::LeftParams;

    #[test]
    fn left_gather_calls_are_recorded_with_their_outcomes_only_when_asked() {
        let p = LeftParams { fifos: 2, gather_packets: 3, gather_timeout: Dur(Time::from_ns(1_000)), disorder_threshold: 8, ..LeftParams::default() };
        assert!(LeftNic::new(&p).gather_log().is_none());
        let mut n = LeftNic::new(&LeftParams { record_gather_ops: 6, ..p });
        let t = Time::from_ns(100);
        n.record(t, 7, 10, 15); // disorder 5: fast
        n.record(t, 7, 10, 30); // gathered into FIFO 0
        n.record(t, 7, 10, 31);
        n.record(Time::from_ns(200), 7, 10, 33); // the third closes it
        n.observe_at(9, 4, 4);
        n.handle_timeout(Time::from_ns(5_000), &mut Vec::new());
        n.release(7); // past the limit: not recorded
        assert_eq!(n.bitmaps.update(7, 0, 1), Update::Set(2)); // the pool is the pool's affair
        let (rows, conns) = n.gather_log().unwrap().rows();
        assert_eq!((rows.len(), conns), (6, 2));
        // Degrees: 5 packets of disorder moves 0 to 80/8 = 10 sixteenths, then 20 to 10 + (320 - 10) / 8 = 48.
        assert_eq!(rows[0], [0, 0, 100_000, 10, 15, 0, 1, 10, -1, 0, -1, 0, 0, 0, -1]);
        assert_eq!(rows[1], [0, 0, 100_000, 10, 30, 0, 0, 48, 0, 1, -1, 0, 0, 0, 1_100_000]);
        // The closing packet: FIFO 0 empty again, its 3 packets handed on, h = (30 * 31 + 31) * 31 + 33.
        assert_eq!(rows[3][8..], [0, 0, -1, 1, 3, (30 * 31 + 31) * 31 + 33, -1]);
        assert_eq!(rows[4], [1, 1, 0, 4, 4, 0, 1, 0, -1, 0, -1, 0, 0, 0, -1]);
        assert_eq!(rows[5], [2, -1, 5_000_000, 0, 0, 0, 0, 0, -1, 0, -1, 0, 0, 0, -1]);
    }
}
