//! Traces of the operations a run performs on two hardware structures, with what the model
//! answered to each, for lockstep co-simulation of the RTL in `rtl/`:
//!
//! - MELO's receiver bitmap manager ([`crate::transport::loss::melo::MeloReceiver`] on the NIC's
//!   [`crate::hw::bits_pool::BitsPool`]): every data packet a MELO responder of one host takes,
//!   with what it did (accepted in order, out of order, filled a hole, a duplicate, dropped in a
//!   middle block or for want of a block), whether it sent a NACK, RCV.NXT, RCV.HIGH, the
//!   pool's blocks in use, the connection's list (blocks, start_ptr, end_ptr) and its three
//!   most recent holes;
//! - STRIDE's rate calculator ([`crate::transport::loss::stride::cc::StrideCc`]): every STT sample a
//!   requester takes, with the new rate, ΔSTT, STT_min, the branch of Algorithm 1 and the
//!   gradient.
//!
//! The engine snapshots an endpoint before a packet and hands the snapshot and the endpoint
//! after it to the observer, only for observers that ask ([`super::Observer::wants_steps`]):
//! for every other observer that call is a constant false and the snapshot compiles away.
//! Outputs are read from the model's own state after it ran, so the trace is the model's
//! behaviour, not a re-implementation of it.
//!
//! The trace is text: `#` lines (format, parameters, column names), then one line of
//! space-separated integers per operation, which a Verilog testbench reads with `$fscanf`.

use super::Observer;
use crate::transport::Endpoint;
use crate::transport::loss::left::nic::LeftNic;
use crate::transport::loss::melo::{MeloPools, MeloReceiver};
use crate::transport::loss::stride::cc::StrideCc;
use crate::transport::common::segment::{SegKind, Segment};
use crate::transport::loss::stride::cc::{Branch, Decrease, Normalizer, StrideCcParams};
use crate::transport::NicAgent;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// PSN width of the trace (RoCEv2's and the RTL's): indices are written modulo 2^24.
pub const PSN_BITS: u32 = 24;

/// Which structure to trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HwTraceKind {
    MeloRx,
    StrideRate,
    /// LEFT's dual-state pool at the receiving NIC: every operation as
    /// `hw::left_pool_trace` records it (the run sets `recovery.left.record_pool_ops`).
    LeftPool,
    /// LEFT's scheduler and gather FIFOs at the receiving NIC: every call as
    /// `hw::left_gather_trace` records it (the run sets `recovery.left.record_gather_ops`).
    LeftGather,
}

/// What a MELO receiver did with one data packet (the trace's `action` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MeloAction {
    /// PSN = RCV.NXT: delivered, and the bitmap drained behind it.
    InOrder = 0,
    /// PSN ≥ RCV.HIGH: blocks allocated as needed, bit set (a NACK if it opened a hole).
    Append = 1,
    /// RCV.NXT < PSN < RCV.HIGH in the first or last block: a hole (partly) filled.
    Fill = 2,
    /// PSN < RCV.NXT: already delivered.
    Old = 3,
    /// RCV.NXT < PSN < RCV.HIGH, bit already set: nothing changes.
    Repeat = 4,
    /// In a middle block of the list: dropped (§3.2.3).
    DropMiddle = 5,
    /// Not enough free blocks to reach it: dropped (§3.2.5).
    DropNoBlock = 6,
}

/// An endpoint's state before a packet, as much as a trace needs to tell what the packet did.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepBefore {
    /// MELO responder: (packet index, RCV.NXT, RCV.HIGH, bit already set, middle drops,
    /// no-block drops, NACKs sent).
    melo: Option<(u64, u64, u64, bool, u64, u64, u64)>,
    /// STRIDE requester: (updates, gradient-loop iterations) so far.
    stride: Option<(u64, u64)>,
}

impl StepBefore {
    /// Snapshots what `ep` is about to do with `seg`.
    pub fn of(ep: &Endpoint, seg: &Segment, nic: &NicAgent) -> StepBefore {
        let mut b = StepBefore::default();
        match ep {
            Endpoint::Responder(r) if seg.kind == SegKind::Data => {
                if let (Some(m), Some(pools), Some(index)) = (r.recovery().get::<MeloReceiver>(), nic.scheme.get::<MeloPools>(), r.ctx.index_of(seg.psn)) {
                    let pool = &pools.rx;
                    b.melo = Some((index, r.ctx.expected(), m.rcv_high(), m.has(pool, index), m.dropped_middle, m.dropped_no_bits, r.ctx.naks_sent));
                }
            }
            Endpoint::Requester(s) => {
                if let Some(c) = s.cc().get::<StrideCc>() {
                    b.stride = Some((c.ops().updates, c.ops().loop_iterations));
                }
            }
            _ => {}
        }
        b
    }
}

/// The observer that writes a trace: at most `max_ops` operations over at most `max_conns`
/// connections, numbered from 0 in order of their first operation (STRIDE reuses numbers:
/// [`HwTracer::recycled_conn`]).
#[derive(Debug)]
pub struct HwTracer {
    kind: HwTraceKind,
    max_ops: usize,
    max_conns: u32,
    /// MELO: the host traced (the first whose MELO responder takes a packet): its pool is
    /// shared by its connections, so all of them are traced or the trace stops.
    host: Option<usize>,
    conns: HashMap<u32, u32>,
    ops: usize,
    /// Why the trace stopped early (a connection past `max_conns`), or refused (parameters the
    /// RTL does not implement).
    stopped: Option<String>,
    /// (field, message) of the scenario setting the RTL does not implement.
    refused: Option<(String, String)>,
    /// STRIDE slot reuse: when each slot was last used, flows that lost their slot, opens.
    last_use: Vec<u64>,
    clock: u64,
    evicted: std::collections::HashSet<u32>,
    slots_opened: u64,
    header: String,
    rows: String,
    /// LEFT: the traced NIC's pool records so far.
    left: Option<Vec<crate::hw::left_pool_trace::PoolRecord>>,
    /// LEFT: the traced NIC's scheduler and FIFO records so far.
    gather: Option<Vec<crate::hw::left_gather_trace::GatherRecord>>,
    /// Set once the trace can take no more: the run may stop.
    done: Arc<AtomicBool>,
}

impl HwTracer {
    pub fn new(kind: HwTraceKind, max_ops: usize, max_conns: u32) -> HwTracer {
        HwTracer { kind, max_ops, max_conns: max_conns.max(1), host: None, conns: HashMap::new(), ops: 0, stopped: None, refused: None, last_use: Vec::new(), clock: 0, evicted: Default::default(), slots_opened: 0, header: String::new(), rows: String::new(), left: None, gather: None, done: Arc::new(AtomicBool::new(false)) }
    }

    /// The trace text, or why the run cannot be traced (one line naming the field).
    pub fn finish(self) -> Result<String, (String, String)> {
        if let Some(refused) = self.refused {
            return Err(refused);
        }
        if self.ops == 0 {
            let what = match self.kind {
                HwTraceKind::MeloRx => "no MELO receiver took a data packet (transport.recovery = \"melo\"?)",
                HwTraceKind::StrideRate => "no STRIDE sender took an STT sample (transport.cc = \"stride\"?)",
                HwTraceKind::LeftPool | HwTraceKind::LeftGather => "no LEFT receiver recorded a packet (transport.recovery = \"left\", and a path that reorders?)",
            };
            return Err(("trace".into(), what.into()));
        }
        let mut out = self.header;
        let _ = writeln!(out, "# ops {}", self.ops);
        let slots = match self.kind {
            HwTraceKind::MeloRx => self.conns.len(),
            HwTraceKind::StrideRate => self.last_use.len(),
            HwTraceKind::LeftPool => self.left.as_ref().map_or(0, |l| crate::hw::left_pool_trace::rows(l).1),
            HwTraceKind::LeftGather => self.gather.as_ref().map_or(0, |l| crate::hw::left_gather_trace::rows(l).1),
        };
        let _ = writeln!(out, "# conns {slots}");
        if self.slots_opened > 0 {
            let _ = writeln!(out, "# flows {}", self.slots_opened);
        }
        if let Some(why) = self.stopped {
            let _ = writeln!(out, "# stopped {why}");
        }
        if let Some(records) = &self.left {
            for row in crate::hw::left_pool_trace::rows(records).0 {
                let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                let _ = writeln!(out, "{}", cells.join(" "));
            }
        }
        if let Some(records) = &self.gather {
            for row in crate::hw::left_gather_trace::rows(records).0 {
                let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                let _ = writeln!(out, "{}", cells.join(" "));
            }
        }
        out.push_str(&self.rows);
        Ok(out)
    }

    /// LEFT: the traced NIC's records since the last step (the NIC's log is cumulative); the
    /// first NIC that records is the one traced.
    fn left_pool(&mut self, host: usize, nic: &NicAgent) {
        let Some(l) = nic.scheme.get::<LeftNic>() else { return };
        let Some(log) = l.bitmaps.op_log() else { return };
        if log.records().is_empty() || self.host.is_some_and(|h| h != host) {
            return;
        }
        if self.host.is_none() {
            self.host = Some(host);
            let p = &l.bitmaps;
            let _ = writeln!(self.header, "# retx hw trace left");
            for (name, v) in [("pool_blocks", p.pool.blocks() as u64), ("block_bits", p.pool.block_bits() as u64), ("registers", p.registers() as u64), ("register_bits", p.width())] {
                let _ = writeln!(self.header, "# param {name} {v}");
            }
            let _ = writeln!(self.header, "# columns {}", crate::hw::left_pool_trace::COLUMNS.join(" "));
        }
        let records = self.left.get_or_insert_with(Vec::new);
        let new = &log.records()[records.len().min(log.records().len())..];
        let take = new.len().min(self.max_ops - self.ops);
        records.extend_from_slice(&new[..take]);
        self.ops += take;
    }

    /// LEFT's scheduler and FIFOs: as [`HwTracer::left_pool`], from the NIC's gather log.
    fn left_gather(&mut self, host: usize, nic: &NicAgent) {
        let Some(l) = nic.scheme.get::<LeftNic>() else { return };
        let Some(log) = l.gather_log() else { return };
        if log.records().is_empty() || self.host.is_some_and(|h| h != host) {
            return;
        }
        if self.host.is_none() {
            self.host = Some(host);
            let _ = writeln!(self.header, "# retx hw trace left-gather");
            for (name, v) in l.gather_params() {
                let _ = writeln!(self.header, "# param {name} {v}");
            }
            let _ = writeln!(self.header, "# columns {}", crate::hw::left_gather_trace::COLUMNS.join(" "));
        }
        let records = self.gather.get_or_insert_with(Vec::new);
        let new = &log.records()[records.len().min(log.records().len())..];
        let take = new.len().min(self.max_ops - self.ops);
        records.extend_from_slice(&new[..take]);
        self.ops += take;
    }

    pub fn ops(&self) -> usize {
        self.ops
    }

    /// True once the trace is complete, so a run's progress callback can end the run early.
    pub fn done_flag(&self) -> Arc<AtomicBool> {
        self.done.clone()
    }

    fn full(&self) -> bool {
        self.ops >= self.max_ops || self.stopped.is_some() || self.refused.is_some()
    }

    /// The connection number of `flow`, and whether it is new; None when it would be one too
    /// many (the trace stops).
    fn conn(&mut self, flow: u32) -> Option<(u32, bool)> {
        if let Some(&c) = self.conns.get(&flow) {
            return Some((c, false));
        }
        if self.conns.len() as u32 >= self.max_conns {
            self.stopped = Some(format!("flow {flow} would be connection {}, past --conns {}", self.conns.len(), self.max_conns));
            return None;
        }
        let c = self.conns.len() as u32;
        self.conns.insert(flow, c);
        Some((c, true))
    }

    /// STRIDE's connections are independent, so a slot is reused: a new flow takes the slot of
    /// the one whose last sample is oldest (an open op resets it), and the flow that lost it is
    /// traced no more (its later samples would need the state the slot no longer holds).
    fn recycled_conn(&mut self, flow: u32) -> Option<(u32, bool)> {
        self.clock += 1;
        if let Some(&c) = self.conns.get(&flow) {
            self.last_use[c as usize] = self.clock;
            return Some((c, false));
        }
        if self.evicted.contains(&flow) {
            return None;
        }
        let c = if (self.conns.len() as u32) < self.max_conns {
            self.last_use.push(0);
            self.conns.len() as u32
        } else {
            let oldest = (0..self.last_use.len()).min_by_key(|&i| self.last_use[i]).expect("at least one slot") as u32;
            let (&gone, _) = self.conns.iter().find(|(_, &c)| c == oldest).expect("every slot has a flow");
            self.conns.remove(&gone);
            self.evicted.insert(gone);
            oldest
        };
        self.conns.insert(flow, c);
        self.slots_opened += 1;
        self.last_use[c as usize] = self.clock;
        Some((c, true))
    }

    fn melo(&mut self, host: usize, flow: u32, b: (u64, u64, u64, bool, u64, u64, u64), ep: &Endpoint, nic: &NicAgent) {
        let Endpoint::Responder(r) = ep else { return };
        let (Some(m), Some(pools)) = (r.recovery().get::<MeloReceiver>(), nic.scheme.get::<MeloPools>()) else { return };
        if *self.host.get_or_insert(host) != host {
            return;
        }
        if self.header.is_empty() {
            if !m.drop_middle() {
                self.refused = Some(("recovery.melo.drop_middle".into(), "the RTL drops middle-block packets; tracing needs true".into()));
                return;
            }
            let pool = &pools.rx;
            let _ = writeln!(self.header, "# retx hw trace melo-rx 1");
            let _ = writeln!(self.header, "# param pool_blocks {}", pool.blocks());
            let _ = writeln!(self.header, "# param block_bits {}", pool.block_bits());
            let _ = writeln!(self.header, "# param psn_bits {PSN_BITS}");
            let _ = writeln!(self.header, "# param nack_holes {}", m.holes().capacity());
            let _ = writeln!(self.header, "# host {host}");
            let _ = writeln!(self.header, "# columns conn psn action nack rcv_nxt rcv_high used_blocks conn_blocks start_ptr end_ptr holes h0_start h0_len h1_start h1_len h2_start h2_len");
        }
        let Some((conn, _)) = self.conn(flow) else { return };
        let (index, nxt, high, had_bit, middle, no_block, naks) = b;
        let action = if index < nxt {
            MeloAction::Old
        } else if index == nxt {
            MeloAction::InOrder
        } else if m.dropped_middle > middle {
            MeloAction::DropMiddle
        } else if m.dropped_no_bits > no_block {
            MeloAction::DropNoBlock
        } else if index < high {
            if had_bit { MeloAction::Repeat } else { MeloAction::Fill }
        } else {
            MeloAction::Append
        };
        let wrap = |x: u64| x & ((1 << PSN_BITS) - 1);
        let nack = (r.ctx.naks_sent > naks) as u8;
        let bm = m.bitmap();
        let ptr = |p: Option<u16>| p.map_or(-1, |x| x as i64);
        let pool = &pools.rx;
        let row = &mut self.rows;
        let _ = write!(row, "{conn} {} {} {nack} {} {} {} {} {} {}", wrap(index), action as u8, wrap(r.ctx.expected()), wrap(m.rcv_high()), pool.used_blocks(), bm.blocks(), ptr(bm.start_ptr()), ptr(bm.end_ptr()));
        let holes = m.holes().as_slice();
        let _ = write!(row, " {}", holes.len());
        for k in 0..3 {
            let (s, l) = holes.get(k).copied().unwrap_or((0, 0));
            let _ = write!(row, " {} {l}", wrap(s));
        }
        row.push('\n');
        self.ops += 1;
    }

    fn stride(&mut self, flow: u32, b: (u64, u64), ep: &Endpoint) {
        let Endpoint::Requester(s) = ep else { return };
        let Some(c) = s.cc().get::<StrideCc>() else { return };
        let (updates, loops) = b;
        if c.ops().updates == updates {
            return; // no STT in this packet
        }
        if self.header.is_empty() {
            let p = c.params();
            if let Err(why) = check_stride(p) {
                self.refused = Some(why);
                return;
            }
            let _ = writeln!(self.header, "# retx hw trace stride-rate 1");
            let params = [
                ("alpha_shift", p.alpha_shift as u64),
                ("beta", p.beta.0 .0),
                ("omega_shift", p.omega_shift as u64),
                ("t_low", p.t_low.0 .0),
                ("t_high", p.t_high.0 .0),
                ("k", p.k as u64),
                ("min_rate", p.min_rate.0 .0),
                ("normalizer", (p.normalizer == Normalizer::Configured) as u64),
                ("base_stt", p.base_stt.0 .0),
                ("max_gradient", crate::transport::loss::stride::cc::MAX_GRADIENT as u64),
            ];
            for (name, v) in params {
                let _ = writeln!(self.header, "# param {name} {v}");
            }
            let _ = writeln!(self.header, "# columns op conn value rate delta_stt stt_min branch gradient");
            let _ = writeln!(self.header, "# op 0 opens a connection (value: its line rate, bit/s); op 1 is an STT sample (value: ps)");
        }
        let Some((conn, new)) = self.recycled_conn(flow) else { return };
        if new {
            // The connection's rate calculator starts at the line rate with no sample.
            let _ = writeln!(self.rows, "0 {conn} {} {} 0 0 {} 0", c.line().0, c.line().0, NO_BRANCH);
            self.ops += 1;
        }
        let branch = match c.last_branch() {
            Some(Branch::BelowLow) => 0,
            Some(Branch::AboveHigh) => 1,
            Some(Branch::GradientIncrease) => 2,
            Some(Branch::GradientDecrease) => 3,
            Some(Branch::Between) => 4,
            None => NO_BRANCH,
        };
        let gradient = c.ops().loop_iterations - loops;
        let _ = writeln!(self.rows, "1 {conn} {} {} {} {} {branch} {gradient}", c.stt_old(), c.rate().0, c.delta_stt(), c.stt_min().unwrap_or(0));
        self.ops += 1;
    }
}

/// The branch code of an opened connection that has taken no sample.
const NO_BRANCH: u8 = 7;

/// The RTL implements the default decrease (eq. 1 applied g times); its configuration ports
/// hold shifts up to 16, what validation allows.
fn check_stride(p: &StrideCcParams) -> Result<(), (String, String)> {
    if p.decrease != Decrease::Shift {
        return Err(("cc.stride.decrease".into(), "the RTL implements \"shift\" only".into()));
    }
    if p.omega_shift > 16 || p.k > 16 || p.alpha_shift > 16 {
        return Err(("cc.stride".into(), "shifts above 16 are not traced".into()));
    }
    Ok(())
}

impl Observer for HwTracer {
    fn wants_steps(&self) -> bool {
        true
    }

    fn endpoint_step(&mut self, host: usize, flow: u32, before: &StepBefore, ep: &Endpoint, nic: &NicAgent) {
        if self.full() {
            return;
        }
        match (self.kind, before.melo, before.stride) {
            (HwTraceKind::MeloRx, Some(b), _) => self.melo(host, flow, b, ep, nic),
            (HwTraceKind::StrideRate, _, Some(b)) => self.stride(flow, b, ep),
            (HwTraceKind::LeftPool, _, _) => self.left_pool(host, nic),
            (HwTraceKind::LeftGather, _, _) => self.left_gather(host, nic),
            _ => {}
        }
        if self.full() {
            self.done.store(true, Ordering::Relaxed);
        }
    }
}
