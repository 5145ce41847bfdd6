//! LEFT (Huang et al., "LEFT: LightwEight and FasT packet Reordering for RDMA", APNet'24;
//! only the slides are public): per-packet multipath RDMA whose receiver does not mistake
//! reordering for loss.
//!
//! Receiver: an in-order packet goes to the application, with the run of recorded packets it
//! completes; an out-of-order one goes to the connection's reorder buffer and its bit to the
//! NIC's dual-state bitmap pool, on the fast or the slow path ([`super::left_nic`]). An
//! out-of-order arrival triggers no response: no retransmission, no congestion reaction.
//! Loss is judged by a *hole timer* (the slides leave the rule open): when RCV.NXT has not
//! moved for `hole_timeout` while packets above it are recorded, the receiver closes its gather
//! FIFO, then NACKs the first holes of its bitmap (up to three, in MELO's NACK format), and
//! again every `hole_timeout` while one stays open. Every bitmap operation's time is charged to
//! the NIC's receive pipeline.
//!
//! Sender: go-back-N's sender with selective retransmission of the holes a NACK reports (before
//! new data), packets in flight capped at `window` (IRN's BDP-FC: the receiver's bitmap then
//! never needs more), and a timeout that resends from the front for what no NACK can report
//! (a lost tail).

use super::gbn::{GbnParams, GbnSender};
use super::left_nic::LeftNic;
use super::psn::PsnReader;
use super::recovery::{ReceiveRecovery, SendRecovery};
use super::rx_ctx::RxCtx;
use super::segment::{SegKind, Segment};
use super::tag_ring::TagRing;
use super::{agent::SchemeAgent, NicAgent, NicCall};
use crate::sim::check::{self, Checked};
use crate::sim::units::{Dur, Rate, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which of the slides' designs runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftVariant {
    /// The scheduler, the FIFOs and the dual-state pool.
    Left,
    /// LEFT without the scheduler: every out-of-order packet goes through the FIFOs.
    LeftMinus,
    /// MELO's pool with the register cache, no FIFOs: every miss swaps at once.
    MeloPlus,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeftParams {
    pub variant: LeftVariant,
    /// Bits in the NIC's shared pool (slides: 2 Kb).
    pub pool_bits: u32,
    /// Bits per pool block. The slides do not say; MELO's 1 byte, which LEFT cites for its pool.
    pub block_bits: u32,
    /// Loop registers of the bitmap cache (slides: 3 in the simulation, 2 on the FPGA).
    pub registers: u32,
    /// Bits per loop register. The slides do not say; one BDP of their network, 200 Gbps x
    /// 32 us in 1 KB packets = 800 packets (their "~100 B" bitmap).
    pub register_bits: u32,
    /// One pool cycle: a block moved between pool and register, an Nxt_ptr followed, a block
    /// or register updated (slides: "switching a bitmap block takes 5 ns").
    pub cycle: Dur,
    /// Gather FIFOs (slides: 8).
    pub fifos: u32,
    /// Packets that close a FIFO. The slides do not say; 8 packets = one block of 8 bits.
    pub gather_packets: u32,
    /// Time after its first packet that closes a FIFO. The slides do not say; 2 us, about 48
    /// packet times at 200 Gbps, far below the base RTT of their dragonfly.
    pub gather_timeout: Dur,
    /// A packet whose distance above RCV.NXT is below this takes the fast path even when its
    /// connection is not cached. The slides do not say; 32 packets = 4 blocks, so an in-pool
    /// update walks at most 3 links: 5 cycles = 25 ns, within the 42 ns a 1 KB packet takes
    /// at 200 Gbps.
    pub disorder_threshold: u32,
    /// RCV.NXT stuck this long with packets recorded above it: the holes are NACKed. The
    /// slides do not say; 100 us (IRN's RTO_low) exceeds the reordering of paths that differ
    /// by 32 us (their widest) with room to spare. Must exceed `gather_timeout`.
    pub hole_timeout: Dur,
    /// Holes a NACK carries (MELO's format: at most 3).
    pub nack_holes: u32,
    /// Sender timeout, resending from the front (a lost tail no NACK reports). IRN's
    /// RTO_high, 320 us; must exceed `hole_timeout`.
    pub rto: Dur,
    /// Packets in flight at most; 0 means one BDP of the topology's longest path.
    pub window: u32,
    /// Not a setting: the first this many operations on every NIC's pool are recorded
    /// ([`crate::hw::left_pool::DualPool::record_ops`]), for co-simulating the RTL; 0 (the
    /// default, and what a scenario file always gives) records nothing.
    #[serde(skip)]
    pub record_pool_ops: usize,
}

impl Default for LeftParams {
    fn default() -> Self {
        LeftParams {
            variant: LeftVariant::Left,
            pool_bits: 2048,
            block_bits: 8,
            registers: 3,
            register_bits: 800,
            cycle: Dur(Time::from_ns(5)),
            fifos: 8,
            gather_packets: 8,
            gather_timeout: Dur(Time::from_us(2)),
            disorder_threshold: 32,
            hole_timeout: Dur(Time::from_us(100)),
            nack_holes: 3,
            rto: Dur(Time::from_us(320)),
            window: 0,
            record_pool_ops: 0,
        }
    }
}

impl LeftParams {
    /// Fields by their names within `[recovery.left]`.
    pub fn check(&self) -> Checked {
        check::range_u32("block_bits", self.block_bits, 1, 64)?;
        check::range_u32("pool_bits", self.pool_bits, self.block_bits, self.block_bits.saturating_mul(60_000))?;
        check::range_u32("registers", self.registers, 0, 64)?;
        check::range_u32("register_bits", self.register_bits, self.block_bits, 1 << 16)?;
        if self.register_bits % self.block_bits != 0 {
            return Err(check::FieldError::new("register_bits", format!("{} is not a multiple of block_bits ({})", self.register_bits, self.block_bits)));
        }
        check::range_u32("fifos", self.fifos, 1, 256)?;
        check::range_u32("gather_packets", self.gather_packets, 1, 4096)?;
        check::range_u32("nack_holes", self.nack_holes, 1, 3)?;
        check::range_u32("window", self.window, 0, 1 << 20)?;
        check::range_u32("disorder_threshold", self.disorder_threshold, 0, 1 << 20)?;
        if self.cycle.0 == Time::ZERO || self.cycle.0 > Time::from_us(1) {
            return Err(check::FieldError::new("cycle", format!("{} must be above 0 and at most 1 us", self.cycle.0)));
        }
        check::timer("gather_timeout", self.gather_timeout.0)?;
        check::timer("hole_timeout", self.hole_timeout.0)?;
        check::timer("rto", self.rto.0)?;
        if self.hole_timeout.0 <= self.gather_timeout.0 {
            return Err(check::FieldError::new("hole_timeout", format!("{} must exceed gather_timeout ({}): a gathered packet would be reported lost", self.hole_timeout.0, self.gather_timeout.0)));
        }
        if self.rto.0 <= self.hole_timeout.0 {
            return Err(check::FieldError::new("rto", format!("{} must exceed hole_timeout ({}): the sender would time out before the receiver reports", self.rto.0, self.hole_timeout.0)));
        }
        Ok(())
    }
}

/// The NIC's LEFT state, which every LEFT endpoint's NIC has.
fn left_of<'a>(nic: &'a mut NicAgent) -> &'a mut LeftNic {
    match &mut nic.scheme {
        SchemeAgent::Left(l) => l,
        _ => unreachable!("a LEFT endpoint on a NIC without LEFT's agent"),
    }
}

/// Receive side of LEFT for one connection.
#[derive(Clone, Debug)]
pub struct LeftReceiver {
    /// Payload digests in the reorder buffer.
    tags: TagRing,
    /// RCV.HIGH: one past the highest packet index that arrived.
    high: u64,
    /// Since when RCV.NXT has waited with packets above it.
    hole_since: Option<Time>,
    hole_timeout: Time,
    nack_holes: usize,
    ack_interval: u32,
    unacked: u32,
    /// The timestamp of the latest data packet, echoed by responses sent without one.
    last_ts: Time,
    pub stored_bytes: u64,
    pub copied_bytes: u64,
    pub dropped_no_room: u64,
    pub nacks: u64,
}

impl LeftReceiver {
    /// `window`: the sender's in-flight cap, which bounds how far above RCV.NXT data lands.
    pub fn new(p: &LeftParams, window: u32, ack_interval: u32) -> Self {
        LeftReceiver {
            tags: TagRing::new(window as usize),
            high: 0,
            hole_since: None,
            hole_timeout: p.hole_timeout.0,
            nack_holes: p.nack_holes.clamp(1, 3) as usize,
            ack_interval: ack_interval.max(1),
            unacked: 0,
            last_ts: Time::ZERO,
            stored_bytes: 0,
            copied_bytes: 0,
            dropped_no_room: 0,
            nacks: 0,
        }
    }

    fn store(&mut self, index: u64, tag: u32, bytes: u32) {
        self.tags.store(index, tag);
        self.stored_bytes += bytes as u64;
    }

    /// Hands the run of recorded packets from RCV.NXT to the application, charging the bitmap
    /// read; returns whether RCV.NXT moved.
    fn drain(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) -> bool {
        let conn = nic.caller();
        let front = rx.expected();
        let left = left_of(nic);
        let (run, cycles) = left.take_run(conn, front);
        let t = left.time(cycles);
        nic.charge(t);
        for i in front..front + run {
            let bytes = rx.spec().payload(i);
            rx.deliver(now, i, self.tags.get(i), bytes);
            self.copied_bytes += bytes as u64;
        }
        run > 0
    }

    /// RCV.NXT moved (or data arrived above it): the hole timer follows.
    fn rearm_hole(&mut self, now: Time, rx: &RxCtx, moved: bool) {
        if rx.expected() >= self.high {
            self.hole_since = None;
        } else if moved || self.hole_since.is_none() {
            self.hole_since = Some(now);
        }
    }

    fn ack(&mut self, now: Time, rx: &mut RxCtx) {
        self.unacked = 0;
        let mut ack = Segment::control(SegKind::Ack, rx.wire(rx.expected()), now);
        ack.echo_ts = self.last_ts;
        rx.send(ack);
    }

    /// The connection is complete: its NIC state goes.
    fn finish(&mut self, rx: &RxCtx, nic: &mut NicCall<'_>) {
        if rx.is_complete() {
            let conn = nic.caller();
            left_of(nic).release(conn);
        }
    }

    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let front = rx.expected();
        self.last_ts = seg.ts;
        if index < front {
            rx.send(Segment::reply(SegKind::Ack, rx.wire(front), now, seg));
            return;
        }
        if index >= rx.spec().npkts() {
            return;
        }
        self.high = self.high.max(index + 1);
        if index == front {
            rx.deliver(now, index, seg.tag, seg.payload);
            let drained = self.drain(now, rx, nic);
            self.rearm_hole(now, rx, true);
            self.unacked += 1;
            if drained || self.unacked >= self.ack_interval || seg.last || rx.is_complete() {
                self.unacked = 0;
                rx.send(Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg));
            }
            self.finish(rx, nic);
            return;
        }
        // Out of order: into the reorder buffer, its bit to the scheduler. No response.
        self.store(index, seg.tag, seg.payload);
        let conn = nic.caller();
        let left = left_of(nic);
        let r = left.record(now, conn, front, index);
        let t = left.time(r.cycles);
        nic.charge(t);
        if let Some(other) = r.evicted {
            nic.wake(other);
        }
        if r.dropped {
            self.dropped_no_room += 1;
        }
        // A batch recorded now may hold RCV.NXT's packet (it arrived out of order, then the
        // front reached it): its run is delivered at once, or its bit would linger.
        let moved = r.applied && self.drain(now, rx, nic);
        if moved {
            self.ack(now, rx);
        }
        self.rearm_hole(now, rx, moved);
        self.finish(rx, nic);
    }

    /// News from the NIC (a FIFO of this connection closed) or the hole timer.
    pub fn handle_timeout(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let conn = nic.caller();
        let due = self.poll_timeout().is_some_and(|t| t <= now);
        if due {
            left_of(nic).close_for(conn);
        }
        let left = left_of(nic);
        let (cycles, dropped) = left.apply(conn, rx.expected());
        let t = left.time(cycles);
        nic.charge(t);
        self.dropped_no_room += dropped as u64;
        let moved = self.drain(now, rx, nic);
        if moved {
            self.ack(now, rx);
        }
        self.rearm_hole(now, rx, moved);
        if due && rx.expected() < self.high {
            self.send_nack(now, rx, nic);
            self.hole_since = Some(now);
        }
        self.finish(rx, nic);
    }

    fn send_nack(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let conn = nic.caller();
        let mut found = [(0u64, 0u64); 3];
        let n = left_of(nic).bitmaps.holes(conn, rx.expected(), self.high, &mut found[..self.nack_holes]);
        let mut nack = Segment::control(SegKind::MeloNack, rx.wire(rx.expected()), now);
        nack.echo_ts = self.last_ts;
        nack.ext = super::melo::holes_ext(rx, found[..n].iter().copied());
        self.nacks += 1;
        rx.naks_sent += 1;
        rx.send(nack);
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.hole_since.map(|t| t + self.hole_timeout)
    }

    pub fn rcv_high(&self) -> u64 {
        self.high
    }
}

impl ReceiveRecovery for LeftReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        LeftReceiver::on_data(self, now, index, seg, rx, nic);
    }
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, self.dropped_no_room)
    }
    fn poll_timeout(&self) -> Option<Time> {
        LeftReceiver::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        LeftReceiver::handle_timeout(self, now, rx, nic);
    }
    fn release(&mut self) {
        self.tags.release();
    }
}

/// Send side of LEFT for one connection.
#[derive(Clone, Debug)]
pub struct LeftSender {
    base: GbnSender,
    window: u64,
    /// Packets a NACK reported, to resend before new data (oldest first).
    resend: VecDeque<u64>,
}

impl LeftSender {
    pub fn new(p: &LeftParams, window: u32, npkts: u64) -> Self {
        let gbn = GbnParams { rto: p.rto, ..GbnParams::default() };
        LeftSender { base: GbnSender::new(&gbn, npkts), window: window.max(1) as u64, resend: VecDeque::new() }
    }

    /// A NACK: cumulative ACK `cum` plus holes (absolute start, length).
    pub fn on_nack(&mut self, now: Time, cum: u64, holes: &[(u64, u64)]) {
        self.base.on_ack(now, cum);
        let (una, high) = (self.base.snd_una(), self.base.high());
        for &(start, len) in holes {
            for i in start.max(una)..(start + len).min(high) {
                if !self.resend.contains(&i) {
                    self.resend.push_back(i);
                }
            }
        }
    }
}

impl SendRecovery for LeftSender {
    fn snd_una(&self) -> u64 {
        self.base.snd_una()
    }
    fn snd_nxt(&self) -> u64 {
        self.base.snd_nxt()
    }
    fn has_data(&self) -> bool {
        !self.resend.is_empty() || (self.base.has_data() && self.base.snd_nxt() < self.base.snd_una() + self.window)
    }
    fn is_done(&self) -> bool {
        self.base.is_done()
    }
    fn next(&mut self, now: Time, _rate: Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        while let Some(i) = self.resend.pop_front() {
            if i >= self.base.snd_una() {
                self.base.arm(now);
                return Some((i, true));
            }
        }
        if self.base.snd_nxt() >= self.base.snd_una() + self.window {
            return None; // the in-flight cap
        }
        self.base.next(now)
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        let Some(cum) = at.index(seg.psn) else { return false };
        match seg.kind {
            SegKind::Ack => {
                self.base.on_ack(now, cum);
                false
            }
            SegKind::MeloNack => {
                let (holes, n) = super::melo::read_holes(seg, at);
                self.on_nack(now, cum, &holes[..n]);
                true
            }
            _ => false,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.base.poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        let fired = self.base.handle_timeout(now);
        if fired {
            self.resend.clear();
        }
        fired
    }
    fn release(&mut self) {
        self.resend = VecDeque::new();
    }
}
