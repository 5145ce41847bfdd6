//! LEFT's NIC-wide receive state (APNet'24, slides "Overview of LEFT" and "Bitmap
//! Acceleration"): the dual-state bitmap pool every connection shares
//! ([`crate::hw::left_pool`]), the gather FIFOs and the scheduler that chooses, packet by
//! packet, between the fast reorder path and the slow one through the FIFOs.
//!
//! - **Fast path**: the packet's bit is set at once, in its connection's loop register (a hit)
//!   or in the pool in place, walking the list to the block.
//! - **Slow path**: the packet waits in a gather FIFO with other packets of its connection. A
//!   FIFO serves one connection at a time and closes when it holds `gather_packets` packets
//!   or `gather_timeout` after its first (a NIC-wide timer); a packet of a new connection
//!   with every FIFO busy closes the oldest. A closed FIFO's packets are recorded together:
//!   the bitmap is brought into a register once (one swap for the batch, not one per packet)
//!   and each bit costs a cycle there.
//! - **The scheduler** (LEFT) sends a packet down the fast path when its connection is
//!   cached, when its connection's *disorder degree* is below `connection_threshold` ("no
//!   disorder, low disorder connection packets do not need to be gathered"), or when the
//!   packet's own disorder (its distance above RCV.NXT) is below `disorder_threshold` ("in
//!   large disorder connection, packets with low disorder do not need to be gathered"): such
//!   a bit lies in the list's first blocks, a short walk. The degree is an exponentially
//!   weighted mean of every arriving packet's disorder (0 in order), gain 1/8, kept in 1/16
//!   packets: a shift and an add per packet. LEFT− has no scheduler ("without schedule"):
//!   every packet is gathered, in-order ones included, so RCV.NXT waits for each batch.
//!   MELO+ has no FIFOs: every out-of-order packet brings its bitmap into a register at once.
//!
//! The time each operation takes is charged to the NIC's receive pipeline by the receiver
//! ([`crate::transport::loss::left`]), so a slow bitmap slows the NIC and backs packets up behind it.

use crate::transport::common::agent::HostAgent;
use super::params::{LeftParams, LeftVariant};
use crate::hw::left_gather_trace::{GatherLog, GatherOp, GatherRecord};
use crate::hw::left_pool::{DualPool, Update};
use crate::sim::units::Time;

const NO_CONN: u32 = u32::MAX;
/// The disorder degree's fraction bits (it is kept in 1/16 packets) and its gain (1/8).
const DEGREE_FRAC: u32 = 4;
const DEGREE_GAIN: u32 = 3;
/// The largest disorder one packet adds to the degree (it saturates, as a register would).
const DEGREE_MAX_PACKETS: u64 = 1 << 20;

#[derive(Clone, Debug)]
struct Fifo {
    conn: u32,
    opened: Time,
    packets: Vec<u64>,
}

/// What LEFT's scheduler and FIFOs did on one NIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeftStats {
    /// Out-of-order packets recorded on the fast path, and gathered for the slow path.
    pub fast: u64,
    pub gathered: u64,
    /// FIFOs closed by their packet count, their timeout, to make room for another
    /// connection, or by their connection's hole timer.
    pub closed_by_count: u64,
    pub closed_by_timeout: u64,
    pub closed_for_room: u64,
    pub closed_by_hole: u64,
    /// Pool cycles spent, all operations together.
    pub cycles: u64,
}

impl LeftStats {
    /// Adds another NIC's counts.
    pub fn add(&mut self, o: &LeftStats) {
        self.fast += o.fast;
        self.gathered += o.gathered;
        self.closed_by_count += o.closed_by_count;
        self.closed_by_timeout += o.closed_by_timeout;
        self.closed_for_room += o.closed_for_room;
        self.closed_by_hole += o.closed_by_hole;
        self.cycles += o.cycles;
    }
}

/// What recording one out-of-order packet did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Pool cycles it cost the receive pipeline.
    pub cycles: u32,
    /// Its bit could not be set (the pool had no room): the packet is lost.
    pub dropped: bool,
    /// It waits in a FIFO (its bit is not set yet).
    pub gathered: bool,
    /// Its FIFO closed by count and the batch was recorded: RCV.NXT's own packet may be among
    /// them (gathered before RCV.NXT reached it), so the run from there is due.
    pub applied: bool,
    /// Another connection's FIFO closed to make room: that connection has a batch to record.
    pub evicted: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct LeftNic {
    variant: LeftVariant,
    cycle: Time,
    threshold: u64,
    /// `connection_threshold` in the degree's fixed point (0: the test is off).
    conn_threshold: u32,
    gather_packets: usize,
    gather_timeout: Time,
    pub bitmaps: DualPool,
    fifos: Vec<Fifo>,
    /// Per connection: the packets of its closed FIFOs, waiting to be recorded.
    closed: Vec<Vec<u64>>,
    /// Per connection: its disorder degree, in 1/16 packets.
    degree: Vec<u32>,
    pub stats: LeftStats,
    /// Every call on the scheduler and FIFOs with its outcome, when recording
    /// ([`LeftParams::record_gather_ops`]).
    glog: Option<Box<GatherLog>>,
}

impl LeftNic {
    pub fn new(p: &LeftParams) -> Self {
        let fifo = Fifo { conn: NO_CONN, opened: Time::ZERO, packets: Vec::with_capacity(p.gather_packets as usize) };
        let mut bitmaps = DualPool::new(p.pool_bits, p.block_bits, p.registers, p.register_bits);
        if p.record_pool_ops > 0 {
            bitmaps.record_ops(p.record_pool_ops);
        }
        LeftNic {
            variant: p.variant,
            cycle: p.cycle.0,
            threshold: p.disorder_threshold as u64,
            conn_threshold: p.connection_threshold << DEGREE_FRAC,
            gather_packets: p.gather_packets as usize,
            gather_timeout: p.gather_timeout.0,
            bitmaps,
            fifos: vec![fifo; p.fifos as usize],
            closed: Vec::new(),
            degree: Vec::new(),
            stats: LeftStats::default(),
            glog: (p.record_gather_ops > 0).then(|| Box::new(GatherLog::new(p.record_gather_ops))),
        }
    }

    /// The receive-pipeline time of `cycles` pool cycles.
    pub fn time(&self, cycles: u32) -> Time {
        Time(self.cycle.0 * cycles as u64)
    }

    fn spend(&mut self, cycles: u32) -> u32 {
        self.stats.cycles += cycles as u64;
        cycles
    }

    /// Whether an in-order packet is gathered too (LEFT−, which has no scheduler to send it
    /// past the FIFOs).
    pub fn gathers_in_order(&self) -> bool {
        self.variant == LeftVariant::LeftMinus
    }

    /// The unit's configuration, as the RTL takes it (`rtl/left_gather.v`'s parameters):
    /// variant 0 LEFT, 1 LEFT−, 2 MELO+; the timeout in picoseconds; the thresholds in packets.
    pub fn gather_params(&self) -> [(&'static str, u64); 6] {
        let variant = match self.variant {
            LeftVariant::Left => 0,
            LeftVariant::LeftMinus => 1,
            LeftVariant::MeloPlus => 2,
        };
        [
            ("variant", variant),
            ("fifos", self.fifos.len() as u64),
            ("gather_packets", self.gather_packets as u64),
            ("gather_timeout", self.gather_timeout.0),
            ("disorder_threshold", self.threshold),
            ("connection_threshold", (self.conn_threshold >> DEGREE_FRAC) as u64),
        ]
    }

    /// The calls on the scheduler and FIFOs recorded so far (None when not recording).
    pub fn gather_log(&self) -> Option<&GatherLog> {
        self.glog.as_deref()
    }

    fn begin(&mut self) {
        if let Some(l) = &mut self.glog {
            l.begin();
        }
    }

    /// Records the call that just ended, with the state it left (recording only).
    fn note(&mut self, op: GatherOp, fast: bool, fifo: Option<usize>, evicted: Option<u32>) {
        let deadline = self.poll_timeout();
        let Some(l) = &mut self.glog else { return };
        let degree = op.conn().map_or(0, |c| self.degree.get(c as usize).copied().unwrap_or(0));
        let fill = fifo.map_or(0, |f| self.fifos[f].packets.len());
        l.end(GatherRecord { op, fast, degree, fifo, fill, evicted, closed: 0, batch_count: 0, batch_hash: 0, deadline });
    }

    /// An in-order packet `index` of `conn` (RCV.NXT `front`, so 0 for an in-order one)
    /// arrived: its connection's disorder degree moves 1/8 of the way to `index - front`.
    pub fn observe_at(&mut self, conn: u32, front: u64, index: u64) {
        self.begin();
        self.observe(conn, index - front);
        if self.glog.is_some() {
            self.note(GatherOp::Observe { conn, front, index }, true, None, None);
        }
    }

    /// A packet of `conn` arrived `disorder` packets above RCV.NXT (0: in order): its
    /// connection's disorder degree moves 1/8 of the way to it.
    pub fn observe(&mut self, conn: u32, disorder: u64) {
        let c = conn as usize;
        if self.degree.len() <= c {
            self.degree.resize(c + 1, 0); // once per connection, not per packet
        }
        let sample = (disorder.min(DEGREE_MAX_PACKETS) as u32) << DEGREE_FRAC;
        let d = &mut self.degree[c];
        *d = if sample >= *d { *d + ((sample - *d) >> DEGREE_GAIN) } else { *d - ((*d - sample) >> DEGREE_GAIN) };
    }

    /// `conn`'s disorder degree, in packets (rounded down).
    pub fn degree(&self, conn: u32) -> u32 {
        self.degree.get(conn as usize).map_or(0, |d| d >> DEGREE_FRAC)
    }

    /// Packet `index` of connection `conn` (RCV.NXT `front`, at or below it; above it except
    /// under LEFT−, which gathers in-order packets too) arrived: its disorder feeds the
    /// connection's degree, and the scheduler records it now or gathers it.
    pub fn record(&mut self, now: Time, conn: u32, front: u64, index: u64) -> Recorded {
        if self.glog.is_none() {
            return self.record_packet(now, conn, front, index).0;
        }
        let cached = self.bitmaps.is_cached(conn);
        self.begin();
        let (out, fifo) = self.record_packet(now, conn, front, index);
        self.note(GatherOp::Packet { conn, now, front, index, cached }, !out.gathered, fifo, out.evicted);
        out
    }

    /// [`LeftNic::record`], and the FIFO the packet went into.
    fn record_packet(&mut self, now: Time, conn: u32, front: u64, index: u64) -> (Recorded, Option<usize>) {
        // The connection's degree as its earlier packets left it decides; this one then counts.
        let fast = match self.variant {
            LeftVariant::MeloPlus => true,
            LeftVariant::LeftMinus => false,
            LeftVariant::Left => {
                self.bitmaps.is_cached(conn)
                    || self.degree.get(conn as usize).map_or(0, |&d| d) < self.conn_threshold
                    || index - front < self.threshold
            }
        };
        self.observe(conn, index - front);
        if fast {
            self.stats.fast += 1;
            let mut cycles = 0;
            if self.variant == LeftVariant::MeloPlus {
                cycles += self.bitmaps.bring_in(conn, front).unwrap_or(0);
            }
            let (set, dropped) = match self.bitmaps.update(conn, front, index) {
                Update::Set(c) => (c, false),
                Update::NoRoom => (0, true),
            };
            return (Recorded { cycles: self.spend(cycles + set), dropped, ..Recorded::default() }, None);
        }
        self.stats.gathered += 1;
        let mut out = Recorded { gathered: true, ..Recorded::default() };
        let f = match self.fifos.iter().position(|f| f.conn == conn) {
            Some(f) => f,
            None => {
                let f = match self.fifos.iter().position(|f| f.conn == NO_CONN) {
                    Some(f) => f,
                    None => {
                        let oldest = (0..self.fifos.len()).min_by_key(|&f| self.fifos[f].opened).expect("at least one FIFO");
                        out.evicted = Some(self.fifos[oldest].conn);
                        self.stats.closed_for_room += 1;
                        self.close(oldest);
                        oldest
                    }
                };
                (self.fifos[f].conn, self.fifos[f].opened) = (conn, now);
                f
            }
        };
        self.fifos[f].packets.push(index);
        if self.fifos[f].packets.len() >= self.gather_packets {
            self.stats.closed_by_count += 1;
            self.close(f);
            let (cycles, dropped) = self.apply(conn, front);
            (out.cycles, out.dropped, out.applied) = (cycles, dropped > 0, true);
        }
        (out, Some(f))
    }

    /// Closes FIFO `f`: its packets wait to be recorded by their connection.
    fn close(&mut self, f: usize) {
        let conn = self.fifos[f].conn as usize;
        if self.closed.len() <= conn {
            self.closed.resize_with(conn + 1, Vec::new);
        }
        let fifo = &mut self.fifos[f];
        if let Some(l) = &mut self.glog {
            l.closing(f, &fifo.packets);
        }
        self.closed[conn].extend_from_slice(&fifo.packets);
        fifo.packets.clear();
        fifo.conn = NO_CONN;
    }

    /// Whether `conn` has packets in an open FIFO or a closed batch (bits not yet set).
    pub fn has_gathered(&self, conn: u32) -> bool {
        self.fifos.iter().any(|f| f.conn == conn) || self.closed.get(conn as usize).is_some_and(|c| !c.is_empty())
    }

    /// `conn`'s hole timer fired: its open FIFO closes now, so that what it gathered is
    /// recorded before holes are reported.
    pub fn close_for(&mut self, conn: u32) {
        self.begin();
        let fifo = self.fifos.iter().position(|f| f.conn == conn);
        if let Some(f) = fifo {
            self.stats.closed_by_hole += 1;
            self.close(f);
        }
        if self.glog.is_some() {
            self.note(GatherOp::CloseFor { conn }, false, fifo, None);
        }
    }

    /// Records `conn`'s closed batches (RCV.NXT `front`): its bitmap comes into a register
    /// once (or, if it cannot, each bit is set in the pool), then one cycle per bit. Returns
    /// (cycles, packets dropped for lack of room).
    pub fn apply(&mut self, conn: u32, front: u64) -> (u32, u32) {
        let Some(batch) = self.closed.get_mut(conn as usize).filter(|b| !b.is_empty()) else { return (0, 0) };
        let batch = std::mem::take(batch);
        let mut cycles = self.bitmaps.bring_in(conn, front).unwrap_or(0);
        let mut dropped = 0;
        for &index in &batch {
            if index < front {
                continue; // delivered meanwhile (a duplicate took the fast path)
            }
            match self.bitmaps.update(conn, front, index) {
                Update::Set(c) => cycles += c,
                Update::NoRoom => dropped += 1,
            }
        }
        // The batch's storage goes back for reuse: no allocation per packet.
        let mut batch = batch;
        batch.clear();
        self.closed[conn as usize] = batch;
        (self.spend(cycles), dropped)
    }

    /// The run of recorded packets from RCV.NXT `front`, taken (see [`DualPool::take_run`]).
    pub fn take_run(&mut self, conn: u32, front: u64) -> (u64, u32) {
        let (run, cycles) = self.bitmaps.take_run(conn, front);
        (run, self.spend(cycles))
    }

    /// `conn` finished: its FIFO, batches, register and blocks are free.
    pub fn release(&mut self, conn: u32) {
        self.begin();
        let fifo = self.fifos.iter().position(|f| f.conn == conn);
        if let Some(f) = fifo {
            self.fifos[f].packets.clear();
            self.fifos[f].conn = NO_CONN;
        }
        if let Some(c) = self.closed.get_mut(conn as usize) {
            *c = Vec::new();
        }
        if let Some(d) = self.degree.get_mut(conn as usize) {
            *d = 0;
        }
        self.bitmaps.release(conn);
        if self.glog.is_some() {
            self.note(GatherOp::Release { conn }, false, fifo, None);
        }
    }

    /// Figures over every NIC of a run: pool peak share, cache hits, swaps, gathering.
    pub fn report<'a>(nics: impl Iterator<Item = &'a LeftNic>) -> Vec<(&'static str, f64)> {
        let (mut peak, mut s, mut f, mut at_end) = (0.0f64, crate::hw::left_pool::PoolStats::default(), LeftStats::default(), 0u64);
        let mut any = false;
        for n in nics {
            any = true;
            let p = &n.bitmaps;
            peak = peak.max(p.pool.peak_used as f64 / p.pool.blocks() as f64);
            at_end += p.pool.used_blocks() as u64;
            s.add(&p.stats);
            f.add(&n.stats);
        }
        if !any {
            return Vec::new();
        }
        vec![
            ("left_pool_peak", peak),
            ("left_blocks_in_use_at_end", at_end as f64),
            ("left_register_hits", s.hits as f64),
            ("left_pool_updates", s.pool_updates as f64),
            ("left_links_walked", s.links_walked as f64),
            ("left_swaps", s.swaps as f64),
            ("left_blocks_moved", (s.blocks_in + s.blocks_out) as f64),
            ("left_no_room", s.no_room as f64),
            ("left_fast_path", f.fast as f64),
            ("left_gathered", f.gathered as f64),
            ("left_fifo_closed_by_count", f.closed_by_count as f64),
            ("left_fifo_closed_by_timeout", f.closed_by_timeout as f64),
            ("left_fifo_closed_for_room", f.closed_for_room as f64),
            ("left_pool_cycles", f.cycles as f64),
        ]
    }
}

impl HostAgent for LeftNic {
    /// The oldest open FIFO's timeout.
    fn poll_timeout(&self) -> Option<Time> {
        self.fifos.iter().filter(|f| f.conn != NO_CONN).map(|f| f.opened + self.gather_timeout).min()
    }

    /// FIFOs past their timeout close; their connections are woken to record the batches.
    fn handle_timeout(&mut self, now: Time, wake: &mut Vec<u32>) {
        self.begin();
        for f in 0..self.fifos.len() {
            let fifo = &self.fifos[f];
            if fifo.conn != NO_CONN && fifo.opened + self.gather_timeout <= now {
                wake.push(fifo.conn);
                self.stats.closed_by_timeout += 1;
                self.close(f);
            }
        }
        if self.glog.is_some() {
            self.note(GatherOp::Tick { now }, false, None, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::units::Dur;

    fn params(variant: LeftVariant) -> LeftParams {
        LeftParams { variant, fifos: 2, gather_packets: 3, gather_timeout: Dur(Time::from_ns(1_000)), disorder_threshold: 8, ..LeftParams::default() }
    }

    #[test]
    fn the_scheduler_gathers_only_disordered_packets_of_uncached_connections() {
        let mut n = LeftNic::new(&params(LeftVariant::Left));
        let t = Time::from_ns(100);
        // Disorder 5 < 8: fast, in the pool (one block allocated, no walk, one update).
        assert_eq!(n.record(t, 0, 10, 15), Recorded { cycles: 2, ..Recorded::default() });
        assert!(n.bitmaps.has(0, 15));
        // Disorder 20: gathered; its bit is not set yet.
        let r = n.record(t, 0, 10, 30);
        assert!(r.gathered && r.cycles == 0 && !n.bitmaps.has(0, 30));
        assert!(n.has_gathered(0));
        assert_eq!(n.poll_timeout(), Some(Time::from_ns(1_100)));
        // Two more close the FIFO by count: the bitmap comes into a register (its one block
        // moves in) and each of the batch's 3 bits costs a cycle there.
        n.record(t, 0, 10, 31);
        let r = n.record(Time::from_ns(200), 0, 10, 33);
        assert_eq!(r, Recorded { cycles: 1 + 3, gathered: true, applied: true, ..Recorded::default() });
        assert!(n.bitmaps.is_cached(0) && n.bitmaps.has(0, 30) && n.bitmaps.has(0, 33) && n.bitmaps.has(0, 15));
        assert!(!n.has_gathered(0) && n.poll_timeout().is_none());
        // Cached now: even a far packet takes the fast path.
        assert_eq!(n.record(t, 0, 10, 60), Recorded { cycles: 1, ..Recorded::default() });
        assert_eq!((n.stats.fast, n.stats.gathered, n.stats.closed_by_count), (2, 3, 1));
        // The threshold's edge: disorder 7 (below 8) is fast, 8 is gathered.
        assert!(!n.record(t, 5, 0, 7).gathered);
        assert!(n.record(t, 6, 0, 8).gathered);
    }

    #[test]
    fn fifos_close_by_timeout_and_to_make_room_waking_their_connections() {
        let mut n = LeftNic::new(&params(LeftVariant::Left));
        n.record(Time::from_ns(100), 1, 0, 20);
        n.record(Time::from_ns(300), 2, 0, 20);
        // A third connection with both FIFOs busy closes the oldest (connection 1's).
        let r = n.record(Time::from_ns(400), 3, 0, 20);
        assert_eq!(r.evicted, Some(1));
        assert!(n.has_gathered(1) && !n.bitmaps.has(1, 20));
        assert_eq!(n.apply(1, 0), (1, 0)); // into a free register (nothing to move), one update
        assert_eq!(n.apply(1, 0), (0, 0)); // nothing left
        assert!(n.bitmaps.has(1, 20) && !n.has_gathered(1));
        // Timeouts at exact times: connection 2's at 1,300 ns, connection 3's at 1,400 ns.
        assert_eq!(n.poll_timeout(), Some(Time::from_ns(1_300)));
        let mut wake = Vec::new();
        n.handle_timeout(Time::from_ns(1_299), &mut wake);
        assert!(wake.is_empty());
        n.handle_timeout(Time::from_ns(1_300), &mut wake);
        assert_eq!(wake, [2]);
        assert_eq!(n.poll_timeout(), Some(Time::from_ns(1_400)));
        assert_eq!((n.stats.closed_for_room, n.stats.closed_by_timeout), (1, 1));
    }

    #[test]
    fn a_fast_path_update_the_pool_has_no_room_for_drops_the_packet() {
        // One 8-bit block, no register, a threshold past every packet: all fast path.
        let p = LeftParams { pool_bits: 8, registers: 0, disorder_threshold: 64, ..params(LeftVariant::Left) };
        let mut n = LeftNic::new(&p);
        assert_eq!(n.record(Time::ZERO, 0, 0, 3), Recorded { cycles: 2, ..Recorded::default() });
        // Packet 12 needs a second block: refused, the packet is lost.
        assert_eq!(n.record(Time::ZERO, 0, 0, 12), Recorded { dropped: true, ..Recorded::default() });
        assert!(!n.bitmaps.has(0, 12) && n.bitmaps.stats.no_room == 1);
    }

    #[test]
    fn a_count_closed_batch_the_pool_has_no_room_for_reports_its_packets_dropped() {
        // Three 8-bit blocks, no register (so the batch is recorded in the pool), every packet
        // gathered (disorder >= 8); the third packet closes the FIFO by count.
        let p = LeftParams { pool_bits: 24, registers: 0, ..params(LeftVariant::Left) };
        let mut n = LeftNic::new(&p);
        assert!(n.record(Time::ZERO, 0, 0, 20).gathered);
        assert!(n.record(Time::ZERO, 0, 0, 21).gathered);
        // Packets 20 and 21 fit in the third block; packet 40 would need a sixth.
        let r = n.record(Time::ZERO, 0, 0, 40);
        assert!(r.gathered && r.applied && r.dropped, "{r:?}");
        assert!(n.bitmaps.has(0, 20) && n.bitmaps.has(0, 21) && !n.bitmaps.has(0, 40));
        // A batch that fits is not reported dropped.
        let mut roomy = LeftNic::new(&LeftParams { pool_bits: 64, ..p });
        roomy.record(Time::ZERO, 0, 0, 20);
        roomy.record(Time::ZERO, 0, 0, 21);
        let r = roomy.record(Time::ZERO, 0, 0, 40);
        assert!(r.applied && !r.dropped && roomy.bitmaps.has(0, 40), "{r:?}");
    }

    #[test]
    fn a_batch_recorded_later_counts_each_refused_packet_and_keeps_the_one_now_at_rcv_nxt() {
        // Three 8-bit blocks, no register; a FIFO of up to 4 packets closed here by its timer.
        let p = LeftParams { pool_bits: 24, registers: 0, gather_packets: 4, ..params(LeftVariant::Left) };
        let mut n = LeftNic::new(&p);
        for index in [20, 40, 41] {
            assert!(n.record(Time::ZERO, 0, 0, index).gathered);
        }
        let mut wake = Vec::new();
        n.handle_timeout(Time::from_ns(1_000), &mut wake);
        assert_eq!(wake, [0]);
        // Packet 20 fits in the third block; 40 and 41 would need a sixth: two refused.
        let (_, dropped) = n.apply(0, 0);
        assert_eq!(dropped, 2);
        assert!(n.bitmaps.has(0, 20) && !n.bitmaps.has(0, 40));
        // RCV.NXT reached a gathered packet before its batch was recorded: it is still recorded.
        let mut m = LeftNic::new(&p);
        m.record(Time::ZERO, 0, 0, 20);
        m.record(Time::ZERO, 0, 0, 30);
        m.handle_timeout(Time::from_ns(1_000), &mut Vec::new());
        assert_eq!(m.apply(0, 20).1, 0);
        assert!(m.bitmaps.has(0, 20) && m.bitmaps.has(0, 30));
    }

    #[test]
    fn the_disorder_degree_moves_an_eighth_of_the_way_and_a_calm_connection_skips_the_fifos() {
        let mut n = LeftNic::new(&LeftParams { connection_threshold: 4, ..params(LeftVariant::Left) });
        assert_eq!(n.degree(0), 0);
        // 1/8 of 64 packets of disorder: 8; then 1/8 of the way back to 0: 7.
        n.observe(0, 64);
        assert_eq!(n.degree(0), 8);
        n.observe(0, 0);
        assert_eq!(n.degree(0), 7);
        // Fixed point: 1/8 of 8 packets is one packet, 1/8 of 1 is 2/16 (shown as 0 packets).
        n.observe(1, 8);
        n.observe(2, 1);
        assert_eq!((n.degree(1), n.degree(2), n.degree(9)), (1, 0, 0));
        // Connection 3 has been in order: a far packet (disorder 40 >= 8) takes the fast path
        // anyway, and pulls its degree to 5 (40 / 8)...
        let r = n.record(Time::ZERO, 3, 0, 40);
        assert!(!r.gathered && n.bitmaps.has(3, 40) && n.degree(3) == 5, "{r:?}");
        // ...so its next far packet is gathered; without the test (threshold 0) so was the first.
        assert!(n.record(Time::ZERO, 3, 0, 41).gathered);
        let mut off = LeftNic::new(&params(LeftVariant::Left));
        assert!(off.record(Time::ZERO, 3, 0, 40).gathered);
        // A connection that finished starts its next life calm.
        n.release(3);
        assert_eq!(n.degree(3), 0);
    }

    #[test]
    fn left_minus_gathers_in_order_packets_and_their_batch_makes_the_run() {
        let mut minus = LeftNic::new(&params(LeftVariant::LeftMinus));
        assert!(minus.gathers_in_order() && !LeftNic::new(&params(LeftVariant::Left)).gathers_in_order());
        // RCV.NXT's own packet and the next two: gathered, no bit set; the third closes the FIFO.
        assert!(minus.record(Time::ZERO, 0, 10, 10).gathered);
        assert!(minus.record(Time::ZERO, 0, 10, 11).gathered && !minus.bitmaps.has(0, 10));
        let r = minus.record(Time::ZERO, 0, 10, 12);
        assert!(r.applied && !r.dropped, "{r:?}");
        assert_eq!(minus.take_run(0, 10).0, 3);
    }

    #[test]
    fn without_a_scheduler_every_packet_is_gathered_and_without_fifos_every_miss_swaps() {
        let mut minus = LeftNic::new(&params(LeftVariant::LeftMinus));
        assert!(minus.record(Time::ZERO, 0, 10, 11).gathered);
        let mut plus = LeftNic::new(&params(LeftVariant::MeloPlus));
        // Each packet of a new connection brings it into a register: 0 blocks to move, 1 update.
        assert_eq!(plus.record(Time::ZERO, 0, 10, 40), Recorded { cycles: 1, ..Recorded::default() });
        assert!(plus.bitmaps.is_cached(0));
        assert_eq!(plus.stats.gathered, 0);
    }
}
