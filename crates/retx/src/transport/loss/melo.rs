//! MELO (Lu et al., "Memory Efficient Loss Recovery for Hardware-based Transport in
//! Datacenter", APNet'17): selective retransmission whose on-chip metadata is a bitmap per
//! connection carved out of a NIC-wide shared bits pool ([`crate::hw::bits_pool`]).
//!
//! Receiver (§3.2.2–3.2.5): in-order data goes straight to the application; out-of-order data
//! goes to an off-chip reorder buffer and sets a bit. Blocks are allocated as RCV.HIGH grows
//! and returned as RCV.NXT passes them. A packet whose bit lies in a block other than the
//! first or last of the connection's list is dropped (the pipeline reaches only the ends), and
//! so is one that cannot get a block (go-back-N for it). A new hole (a gap between an arriving
//! PSN and RCV.HIGH) triggers a NACK at once, carrying the three most recent holes, tracked
//! incrementally. When a hole fills, the consecutive data behind it is copied off-chip ->
//! application (counted, for the CPU model of §4.2.1).
//!
//! Sender (§3.2.4): its own pool of the same size; a bitmap rebuilt from NACK holes. Every
//! packet of every hole a NACK reports is retransmitted (once per report: a bit marks it queued
//! until it is sent), before new data. Because each NACK repeats the three most recent holes,
//! a lost retransmission is usually sent again by the next NACK; what falls out of the three is
//! left to the timeout, which resends from the front (snd_una), as the paper describes.
//! `resend_reported = false` instead sends each hole once and leaves every lost retransmission
//! to the timeout.

use crate::transport::common::agent::HostAgent;
use crate::transport::common::flow::PoolOccupancy;
use crate::sim::units::Rate;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::sim::check::{self, Checked};
use crate::transport::loss::gbn::{GbnParams, GbnSender};
use crate::transport::common::psn::PsnReader;
use crate::transport::common::agent::NicCall;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ext, Hole, SegKind, Segment};
use crate::transport::common::tag_ring::TagRing;
use crate::sim::units::Dur;
use crate::hw::bits_pool::{BitsPool, ConnBitmap, Position};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeloParams {
    /// Bits in each NIC's pool (paper: 1 Kb).
    pub pool_bits: u32,
    /// Bits per block (paper: 1 byte).
    pub block_bits: u32,
    /// Holes a NACK carries (paper: 3).
    pub nack_holes: u32,
    /// Drop packets whose bit lies in a middle block (paper §3.2.3); false lets the receiver
    /// walk the list, to study what the rule costs.
    pub drop_middle: bool,
    /// Retransmit a hole each time a NACK reports it (the redundancy of three holes per NACK
    /// then covers lost retransmissions); false: once, then only the timeout.
    pub resend_reported: bool,
    /// Retransmission timeout, which recovers a lost retransmission by resending from the
    /// front. The paper gives no value; 100 us is IRN's RTO_low, the shortest timeout of a
    /// published RDMA selective-repeat design. It must stay below the time the pool covers
    /// (1024 packets = 220 us at 40 Gbps) for a lost retransmission to cost about one RTT
    /// instead of a pool overflow, and above the base RTT: raise it on long-RTT networks.
    pub rto: Dur,
    /// CPU model of §4.2.1: Gbps of reorder-buffer copying one core sustains. The paper
    /// measures copying every packet at 40 Gbps as 82.2 % of a core: 40 / 0.822 = 48.66.
    pub copy_gbps_per_core: f64,
    /// On-chip QP cache of the receiving NIC, in connections (0: every connection stays on
    /// chip). A connection swapped out returns its blocks to the pool and keeps its bitmap
    /// off chip; swapping back in needs blocks again (§3.2.5).
    pub qp_cache: u32,
}

impl Default for MeloParams {
    fn default() -> Self {
        MeloParams {
            pool_bits: 1024,
            block_bits: 8,
            nack_holes: 3,
            drop_middle: true,
            resend_reported: true,
            rto: Dur(Time::from_us(100)),
            copy_gbps_per_core: 40.0 / 0.822,
            qp_cache: 0,
        }
    }
}

impl Scheme for MeloParams {
    const NAME: &'static str = "melo";
    const TAKES_WINDOW_CC: bool = false;
    type Sender = MeloSender;
    type Receiver = MeloReceiver;
    /// Every NIC's send and receive bits pools.
    type Agent = MeloPools;

    /// Fields by their names within `[recovery.melo]`.
    fn check(&self) -> Checked {
        check::range_u32("block_bits", self.block_bits, 1, 64)?;
        check::range_u32("pool_bits", self.pool_bits, self.block_bits, self.block_bits.saturating_mul(60_000))?;
        check::range_u32("nack_holes", self.nack_holes, 1, 3)?;
        if self.copy_gbps_per_core.is_nan() || self.copy_gbps_per_core <= 0.0 || self.copy_gbps_per_core.is_infinite() {
            return Err(check::FieldError::new("copy_gbps_per_core", "must be greater than 0 and finite"));
        }
        check::timer("rto", self.rto.0)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (MeloSender, MeloReceiver) {
        (MeloSender::new(self, f.npkts()), MeloReceiver::new(self, f.ack_interval))
    }

    fn agent(&self, _link: Rate, _mtu: u32) -> Option<MeloPools> {
        Some(MeloPools::new(self))
    }

    /// MELO models the NIC's QP-context cache (§3.2.5).
    fn qp_cache(&self) -> u32 {
        self.qp_cache
    }

    /// Over every NIC of a run: the highest share of a receive / send pool ever in use at one
    /// host, and blocks still allocated anywhere at the end (0 once every flow has finished).
    fn report<'a>(pools: &mut dyn Iterator<Item = &'a MeloPools>) -> Vec<(&'static str, f64)> {
        let share = |p: &BitsPool| p.peak_used as f64 / p.blocks() as f64;
        let (mut rx, mut tx, mut in_use) = (0.0f64, 0.0f64, 0u64);
        for m in pools {
            rx = rx.max(share(&m.rx));
            tx = tx.max(share(&m.tx));
            in_use += (m.rx.used_blocks() + m.tx.used_blocks()) as u64;
        }
        vec![("melo_rx_pool_peak", rx), ("melo_tx_pool_peak", tx), ("melo_blocks_in_use_at_end", in_use as f64)]
    }
}

/// Per-NIC MELO state shared by all connections: the receive pool and the send pool.
#[derive(Clone, Debug)]
pub struct MeloPools {
    pub rx: BitsPool,
    pub tx: BitsPool,
}

impl MeloPools {
    pub fn new(p: &MeloParams) -> Self {
        MeloPools { rx: BitsPool::new(p.pool_bits, p.block_bits), tx: BitsPool::new(p.pool_bits, p.block_bits) }
    }
}

/// The NIC's pools, which every MELO endpoint's NIC has.
fn pools<'a>(nic: &'a mut NicCall<'_>) -> &'a mut MeloPools {
    nic.agent::<MeloPools>().expect("a MELO endpoint on a NIC without MELO's pools")
}

/// The pools are NIC-wide state with no pacing or timer of their own: the agent only reports
/// their occupancy.
impl HostAgent for MeloPools {
    fn sample_pools(&mut self, out: &mut dyn FnMut(PoolOccupancy)) {
        for (pool, p) in [("melo_rx", &mut self.rx), ("melo_tx", &mut self.tx)] {
            let peak = p.take_interval_peak() as u64;
            out(PoolOccupancy { pool, unit: "blocks", used: p.used_blocks() as u64, peak, capacity: p.blocks() as u64 });
        }
    }
}

/// The most recent holes of one connection, oldest first, as absolute (start, len).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holes {
    list: [(u64, u64); 3],
    n: usize,
    cap: usize,
}

impl Holes {
    pub fn new(cap: u32) -> Self {
        Holes { list: [(0, 0); 3], n: 0, cap: cap.clamp(1, 3) as usize }
    }

    /// How many holes it keeps (a NACK's capacity).
    pub fn capacity(&self) -> usize {
        self.cap
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.list[..self.n]
    }

    /// A new hole formed above every tracked one; the oldest falls out when full.
    pub fn push(&mut self, start: u64, len: u64) {
        if self.n == self.cap {
            self.list.copy_within(1..self.n, 0);
            self.n -= 1;
        }
        self.list[self.n] = (start, len);
        self.n += 1;
    }

    fn remove(&mut self, i: usize) {
        self.list.copy_within(i + 1..self.n, i);
        self.n -= 1;
    }

    /// Packet `index` arrived: shrink or split the hole holding it.
    pub fn fill(&mut self, index: u64) {
        let Some(i) = self.list[..self.n].iter().position(|&(s, l)| index >= s && index < s + l) else { return };
        let (s, l) = self.list[i];
        if l == 1 {
            self.remove(i);
        } else if index == s {
            self.list[i] = (s + 1, l - 1);
        } else if index == s + l - 1 {
            self.list[i] = (s, l - 1);
        } else {
            // Split in two; if that makes one too many, the oldest hole is forgotten.
            let mut all = [(0u64, 0u64); 4];
            all[..i].copy_from_slice(&self.list[..i]);
            all[i] = (s, index - s);
            all[i + 1] = (index + 1, s + l - index - 1);
            all[i + 2..self.n + 1].copy_from_slice(&self.list[i + 1..self.n]);
            let total = self.n + 1;
            let skip = total.saturating_sub(self.cap);
            self.n = total - skip;
            self.list[..self.n].copy_from_slice(&all[skip..total]);
        }
    }

    /// RCV.NXT moved to `front`: holes below it are gone.
    pub fn advance(&mut self, front: u64) {
        let mut i = 0;
        while i < self.n {
            let (s, l) = self.list[i];
            if s + l <= front {
                self.remove(i);
            } else {
                if s < front {
                    self.list[i] = (front, s + l - front);
                }
                i += 1;
            }
        }
    }
}

/// The extension of a MELO NACK naming the first 3 of `list`'s holes (absolute start, length) on
/// the wire; LEFT's NACKs carry the same.
pub fn holes_ext(rx: &RxCtx, list: impl Iterator<Item = (u64, u64)>) -> Ext {
    let (mut holes, mut n) = ([Hole::default(); 3], 0u8);
    for (s, l) in list.take(3) {
        holes[n as usize] = Hole { start: rx.wire(s), len: l.min(u16::MAX as u64) as u16 };
        n += 1;
    }
    Ext::Holes { holes, n }
}

/// The holes a MELO (or LEFT) NACK reports, as absolute (start, length), in its order; holes
/// whose PSN reads from before the flow are skipped.
pub fn read_holes(seg: &Segment, at: PsnReader) -> ([(u64, u64); 3], usize) {
    let (mut holes, mut n) = ([(0u64, 0u64); 3], 0);
    for h in seg.holes() {
        if let Some(start) = at.index(h.start) {
            holes[n] = (start, h.len as u64);
            n += 1;
        }
    }
    (holes, n)
}

/// Receiver side of MELO for one connection.
#[derive(Clone, Debug)]
pub struct MeloReceiver {
    bitmap: ConnBitmap,
    /// RCV.HIGH: one past the highest packet index received.
    high: u64,
    holes: Holes,
    /// Payload digests of packets in the off-chip reorder buffer.
    reorder: TagRing,
    ack_interval: u32,
    unacked: u32,
    drop_middle: bool,
    pub stored_bytes: u64,
    pub copied_bytes: u64,
    pub dropped_middle: u64,
    pub dropped_no_bits: u64,
    /// The bitmap while the connection is swapped out of the on-chip QP cache.
    off_chip: Option<(u64, Vec<u64>)>,
    pub swap_in_failures: u64,
}

impl MeloReceiver {
    pub fn new(p: &MeloParams, ack_interval: u32) -> Self {
        MeloReceiver {
            bitmap: ConnBitmap::default(),
            high: 0,
            holes: Holes::new(p.nack_holes),
            // The bitmap spans at most every block of the pool.
            reorder: TagRing::new((p.pool_bits / p.block_bits).max(1) as usize * p.block_bits as usize),
            ack_interval: ack_interval.max(1),
            unacked: 0,
            drop_middle: p.drop_middle,
            stored_bytes: 0,
            copied_bytes: 0,
            dropped_middle: 0,
            dropped_no_bits: 0,
            off_chip: None,
            swap_in_failures: 0,
        }
    }

    /// Leaves the on-chip cache: the bitmap goes off chip and its blocks back to the pool.
    /// Returns the blocks written off chip.
    pub fn swap_out(&mut self, pool: &mut BitsPool) -> u32 {
        let blocks = self.bitmap.blocks();
        if !self.bitmap.is_empty() {
            self.off_chip = Some(self.bitmap.export(pool));
            self.bitmap.release_all(pool);
        }
        blocks
    }

    /// Comes back on chip: the bitmap needs its blocks again. Returns the blocks read back, or
    /// None (and still off chip) if the pool cannot supply them; the packet that asked must
    /// then be dropped.
    pub fn swap_in(&mut self, pool: &mut BitsPool) -> Option<u32> {
        let Some((base, bits)) = self.off_chip.take() else { return Some(0) };
        if self.bitmap.import(pool, base, &bits) {
            Some(bits.len() as u32)
        } else {
            self.swap_in_failures += 1;
            self.off_chip = Some((base, bits));
            None
        }
    }

    pub fn bitmap(&self) -> &ConnBitmap {
        &self.bitmap
    }

    pub fn holes(&self) -> &Holes {
        &self.holes
    }

    /// RCV.HIGH: one past the highest packet index received.
    pub fn rcv_high(&self) -> u64 {
        self.high
    }

    /// Whether packet `index` is marked received in the bitmap (hardware tracing).
    pub fn has(&self, pool: &BitsPool, index: u64) -> bool {
        self.bitmap.get(pool, index)
    }

    pub fn drop_middle(&self) -> bool {
        self.drop_middle
    }

    fn store(&mut self, index: u64, tag: u32, bytes: u32) {
        self.reorder.store(index, tag);
        self.stored_bytes += bytes as u64;
    }

    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, pool: &mut BitsPool) {
        let expected = rx.expected();
        self.high = self.high.max(expected);
        if index < expected {
            rx.send(Segment::reply(SegKind::Ack, rx.wire(expected), now, seg));
            return;
        }
        if index == expected {
            rx.deliver(now, index, seg.tag, seg.payload);
            let mut drained = false;
            // Consecutive data waiting in the reorder buffer is copied out to the application.
            while rx.expected() < self.high && self.bitmap.get(pool, rx.expected()) {
                let i = rx.expected();
                let bytes = rx.spec().payload(i);
                let tag = self.reorder.get(i);
                rx.deliver(now, i, tag, bytes);
                self.copied_bytes += bytes as u64;
                drained = true;
            }
            let front = rx.expected();
            self.high = self.high.max(front);
            if front >= self.high {
                self.bitmap.release_all(pool);
            } else {
                self.bitmap.release_below(pool, front);
            }
            self.holes.advance(front);
            self.unacked += 1;
            if drained || self.unacked >= self.ack_interval || seg.last || rx.is_complete() {
                self.unacked = 0;
                rx.send(Segment::reply(SegKind::Ack, rx.wire(front), now, seg));
            }
            return;
        }
        // Out of order.
        if index < self.high {
            // Fills (part of) a hole: a retransmission, reaching a block at either end only.
            let pos = self.bitmap.position(pool, index);
            if pos == Position::Middle && self.drop_middle {
                self.dropped_middle += 1;
                return;
            }
            if !self.bitmap.get(pool, index) {
                self.bitmap.set(pool, index);
                self.store(index, seg.tag, seg.payload);
                self.holes.fill(index);
            }
            return;
        }
        if !self.bitmap.cover(pool, expected, index) {
            self.dropped_no_bits += 1;
            return;
        }
        self.bitmap.set(pool, index);
        self.store(index, seg.tag, seg.payload);
        if index > self.high {
            self.holes.push(self.high, index - self.high);
            self.send_nack(now, rx, seg);
        }
        self.high = index + 1;
    }

    fn send_nack(&self, now: Time, rx: &mut RxCtx, seg: &Segment) {
        let mut nack = Segment::reply(SegKind::MeloNack, rx.wire(rx.expected()), now, seg);
        // Most recent (closest to RCV.HIGH) first.
        nack.ext = holes_ext(rx, self.holes.as_slice().iter().rev().copied());
        rx.naks_sent += 1;
        rx.send(nack);
    }
}

/// Sender side of MELO for one connection: go-back-N's sender plus the hole bitmap and the
/// retransmission queue.
#[derive(Clone, Debug)]
pub struct MeloSender {
    base: GbnSender,
    resend_reported: bool,
    /// Packets queued for retransmission of a reported hole (bits from the send pool).
    bitmap: ConnBitmap,
    retx_queue: VecDeque<u64>,
    pub holes_ignored: u64,
}

impl MeloSender {
    pub fn new(p: &MeloParams, npkts: u64) -> Self {
        let gbn = GbnParams { rto: p.rto, ..GbnParams::default() };
        MeloSender {
            base: GbnSender::new(&gbn, npkts),
            resend_reported: p.resend_reported,
            bitmap: ConnBitmap::default(),
            retx_queue: VecDeque::new(),
            holes_ignored: 0,
        }
    }

    /// Takes the next packet to send (retransmissions first). Needs the send pool to clear
    /// the queued mark when holes may be reported again.
    pub fn next_with(&mut self, now: Time, pool: &mut BitsPool) -> Option<(u64, bool)> {
        while let Some(i) = self.retx_queue.pop_front() {
            if i >= self.base.snd_una() {
                if self.resend_reported {
                    self.bitmap.clear(pool, i);
                }
                self.base.arm(now);
                return Some((i, true));
            }
        }
        self.base.next(now)
    }

    fn advance(&mut self, now: Time, cum: u64, pool: &mut BitsPool) {
        if self.base.on_ack(now, cum) {
            self.bitmap.release_below(pool, cum);
        }
    }

    pub fn on_ack(&mut self, now: Time, cum: u64, pool: &mut BitsPool) {
        self.advance(now, cum, pool);
        if self.base.is_done() {
            self.bitmap.release_all(pool);
        }
    }

    /// A NACK: cumulative ACK plus holes (absolute start, length).
    pub fn on_nack(&mut self, now: Time, cum: u64, holes: &[(u64, u64)], pool: &mut BitsPool) {
        self.advance(now, cum, pool);
        let (una, high) = (self.base.snd_una(), self.base.high());
        // Oldest hole first, so retransmissions go out in PSN order.
        for &(start, len) in holes.iter().rev() {
            for i in start.max(una)..(start + len).min(high) {
                if !self.bitmap.cover(pool, una, i) {
                    self.holes_ignored += 1; // the send pool is full: the timeout will cover it
                    break;
                }
                if !self.bitmap.get(pool, i) {
                    self.bitmap.set(pool, i);
                    self.retx_queue.push_back(i);
                }
            }
        }
    }

    /// On timeout, resend everything from the front.
    pub fn handle_timeout(&mut self, now: Time, pool: &mut BitsPool) -> bool {
        let fired = self.base.handle_timeout(now);
        if fired {
            self.retx_queue.clear();
            self.bitmap.release_all(pool);
        }
        fired
    }

}

impl SendRecovery for MeloSender {
    fn snd_una(&self) -> u64 {
        self.base.snd_una()
    }
    fn snd_nxt(&self) -> u64 {
        self.base.snd_nxt()
    }
    fn has_data(&self) -> bool {
        !self.retx_queue.is_empty() || self.base.has_data()
    }
    fn is_done(&self) -> bool {
        self.base.is_done()
    }
    /// A response from the receiver: ACK or MELO NACK (holes, most recent first). Returns
    /// whether it was a loss notification.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
        let pool = &mut pools(nic).tx;
        let cum = at.index(seg.psn);
        match seg.kind {
            SegKind::Ack => {
                if let Some(cum) = cum {
                    self.on_ack(now, cum, pool);
                }
                false
            }
            SegKind::MeloNack => {
                if let Some(cum) = cum {
                    let (holes, n) = read_holes(seg, at);
                    self.on_nack(now, cum, &holes[..n], pool);
                }
                true
            }
            _ => false,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.base.poll_timeout()
    }
    fn next(&mut self, now: Time, _rate: crate::sim::units::Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        self.next_with(now, &mut pools(nic).tx)
    }
    fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) -> bool {
        MeloSender::handle_timeout(self, now, &mut pools(nic).tx)
    }
    /// Everything is acknowledged: the retransmission queue's storage goes.
    fn release(&mut self) {
        self.retx_queue = VecDeque::new();
    }
}

impl ReceiveRecovery for MeloReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        MeloReceiver::on_data(self, now, index, seg, rx, &mut pools(nic).rx);
    }
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, self.dropped_middle + self.dropped_no_bits + self.swap_in_failures)
    }
    /// MELO's bitmap blocks leave the shared pool with the context (§3.2.5).
    fn swap_out(&mut self, nic: &mut NicCall<'_>) -> u32 {
        MeloReceiver::swap_out(self, &mut pools(nic).rx)
    }
    fn swap_in(&mut self, nic: &mut NicCall<'_>) -> Option<u32> {
        MeloReceiver::swap_in(self, &mut pools(nic).rx)
    }
    /// The message is delivered: the off-chip reorder tags go (allocated again only if a
    /// packet had to be stored, which a finished connection never does).
    fn release(&mut self) {
        self.reorder.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_keep_the_three_most_recent_and_track_fills() {
        let mut h = Holes::new(3);
        h.push(5, 1);
        h.push(10, 3);
        h.push(20, 2);
        h.push(30, 1); // (5,1) falls out
        assert_eq!(h.as_slice(), &[(10, 3), (20, 2), (30, 1)]);
        h.fill(11); // split (10,3) -> (10,1), (12,1); the oldest, (10,1), falls out
        assert_eq!(h.as_slice(), &[(12, 1), (20, 2), (30, 1)]);
        h.fill(20);
        assert_eq!(h.as_slice(), &[(12, 1), (21, 1), (30, 1)]);
        h.fill(12);
        assert_eq!(h.as_slice(), &[(21, 1), (30, 1)]);
        h.advance(25);
        assert_eq!(h.as_slice(), &[(30, 1)]);
    }
}
