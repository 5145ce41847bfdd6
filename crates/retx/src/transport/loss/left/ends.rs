//! LEFT (Huang et al., "LEFT: LightwEight and FasT packet Reordering for RDMA", APNet'24;
//! only the slides are public): per-packet multipath RDMA whose receiver does not mistake
//! reordering for loss.
//!
//! Receiver: an in-order packet goes to the application, with the run of recorded packets it
//! completes; an out-of-order one goes to the connection's reorder buffer and its bit to the
//! NIC's dual-state bitmap pool, on the fast or the slow path ([`crate::transport::loss::left::nic`]). An
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

use crate::transport::loss::gbn::{GbnParams, GbnSender};
use super::nic::LeftNic;
use crate::transport::common::psn::PsnReader;
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{SegKind, Segment};
use crate::transport::common::tag_ring::TagRing;
use crate::transport::common::agent::NicCall;
use super::params::LeftParams;
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

/// The NIC's LEFT state, which every LEFT endpoint's NIC has.
fn left_of<'a>(nic: &'a mut NicCall<'_>) -> &'a mut LeftNic {
    nic.agent::<LeftNic>().expect("a LEFT endpoint on a NIC without LEFT's agent")
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

    fn send_nack(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let conn = nic.caller();
        let mut found = [(0u64, 0u64); 3];
        let n = left_of(nic).bitmaps.holes(conn, rx.expected(), self.high, &mut found[..self.nack_holes]);
        let mut nack = Segment::control(SegKind::MeloNack, rx.wire(rx.expected()), now);
        nack.echo_ts = self.last_ts;
        nack.ext = crate::transport::loss::melo::holes_ext(rx, found[..n].iter().copied());
        self.nacks += 1;
        rx.naks_sent += 1;
        rx.send(nack);
    }

    pub fn rcv_high(&self) -> u64 {
        self.high
    }
}

impl ReceiveRecovery for LeftReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
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
        let conn = nic.caller();
        let left = left_of(nic);
        if index == front && !left.gathers_in_order() {
            left.observe_at(conn, front, index);
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
        // Out of order (or, under LEFT−, any packet): into the reorder buffer, its bit to the
        // scheduler. No response.
        self.store(index, seg.tag, seg.payload);
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
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, self.dropped_no_room)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.hole_since.map(|t| t + self.hole_timeout)
    }
    /// News from the NIC (a FIFO of this connection closed) or the hole timer.
    fn handle_timeout(&mut self, now: Time, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
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
                let (holes, n) = crate::transport::loss::melo::read_holes(seg, at);
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
