//! UET's sender: RUD packet delivery (send records, a retransmission queue lowest PSN first,
//! one fixed timeout for the oldest send), NSCC's window and RCCC's credit gating it, and the
//! EV of every packet (uet-htsim `UecSrc`, uec.cpp:474-2439; learnt from, not copied).
//!
//! Bytes are counted as uet-htsim counts them, headers included: a packet of the flow is its
//! payload plus the 64 B header, and what is in flight goes down by the receiver's own count of
//! bytes received (`recvd_bytes` in every ACK), not by what the ACK names.
//!
//! One difference, for retx's in-order delivery check: an RTS takes no PSN here (uet-htsim gives
//! it the next one, `sendRTS`, so the data after it shifts by one). It still asks for credit,
//! is answered at once by an ACK, and is sent again when that ACK does not come within the
//! timeout, as uet-htsim retransmits its PSN.

use super::lb::{Feedback, Multipath};
use super::nscc::Nscc;
use super::pacer::UetAgent;
use super::params::{Delivery, SenderConfig, HEADER_BYTES, PULL_SHIFT};
use crate::transport::common::agent::NicCall;
use crate::transport::common::ext::{UetInfo, UetKind, UET_AR, UET_GO_BACK, UET_LAST_HOP, UET_RTS_ACK, UET_SPEC};
use crate::transport::common::flow::PRIORITY_CONTROL;
use crate::transport::common::psn::{Psn, PsnReader, PsnSpace};
use crate::transport::common::recovery::SendRecovery;
use crate::transport::common::segment::{Ext, PathInfo, Segment};
use crate::sim::units::{Rate, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Where a sent packet stands (uet-htsim keeps it in `_tx_bitmap`, `_rtx_queue` or neither).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent and not yet acknowledged, NACKed or timed out (`_tx_bitmap`).
    InFlight,
    /// Waiting to be sent again (`_rtx_queue`).
    Queued,
    /// Selectively acknowledged.
    Gone,
}

/// A packet's send record (`sendRecord` and `_rtx_times`).
#[derive(Clone, Copy, Debug)]
struct Record {
    sent: Time,
    size: u32,
    /// Times it was sent again.
    resent: u16,
    state: State,
}

/// The send-order entry of an RTS (its records have no index).
const RTS: u64 = u64::MAX;

/// What the last packet chosen carries (stamped by [`SendRecovery::stamp`]).
#[derive(Clone, Copy, Debug, Default)]
struct Stamp {
    ev: u16,
    flags: u8,
    pull_target: u32,
}

#[derive(Clone, Debug)]
pub struct UetSender {
    cfg: SenderConfig,
    npkts: u64,
    /// Cumulative ACK: every packet below it arrived.
    cum_ack: u64,
    /// Next new packet (`_highest_sent`).
    highest_sent: u64,
    /// Records of the packets [cum_ack, highest_sent), the first at index `base`.
    records: VecDeque<Record>,
    base: u64,
    /// Packets to send again, lowest first; an entry whose record is no longer `Queued` is
    /// stale.
    rtx: BinaryHeap<Reverse<u64>>,
    rtx_count: u32,
    rtx_backlog: i64,
    /// Sends in time order (`_send_times`); an entry whose record moved on is stale.
    send_order: VecDeque<(Time, u64)>,
    /// The timeout (`_rtx_timeout`) and the send time it was set for (`_rto_send_time`).
    deadline: Option<Time>,
    rto_send_time: Time,
    /// Bytes not yet sent once, headers included (`_backlog`).
    backlog: i64,
    in_flight: i64,
    /// The receiver's byte count last heard (`_recvd_bytes`).
    recvd: u64,
    /// Receiver credit (`_credit`, bytes) and the credit granted so far (`_pull`, quanta).
    credit: i64,
    pull: u32,
    speculating: bool,
    /// The last pull target computed (`_pull_target`), which an RTS repeats.
    pull_target: u32,
    /// An RTS to send, when the last went and whether its ACK is awaited (and since when).
    rts_pending: bool,
    last_rts: Option<Time>,
    rts_outstanding: Option<Time>,
    rts_ev: u16,
    pub nscc: Nscc,
    mp: Multipath,
    stamp: Stamp,
}

impl UetSender {
    pub fn new(cfg: SenderConfig, nscc: Nscc, mp: Multipath, size: u64, mtu: u32) -> Self {
        let npkts = if size == crate::transport::FlowSpec::ENDLESS { u64::MAX } else { size.div_ceil(mtu as u64) };
        // uet-htsim: ceil(size / mss) x 64 + size (`startConnection`, uec.cpp:1737).
        let backlog = if npkts == u64::MAX { i64::MAX / 4 } else { (npkts * HEADER_BYTES as u64 + size) as i64 };
        UetSender {
            cfg,
            npkts,
            cum_ack: 0,
            highest_sent: 0,
            records: VecDeque::new(),
            base: 0,
            rtx: BinaryHeap::new(),
            rtx_count: 0,
            rtx_backlog: 0,
            send_order: VecDeque::new(),
            deadline: None,
            rto_send_time: Time::ZERO,
            backlog,
            in_flight: 0,
            recvd: 0,
            // Speculative credit (`startConnection`: `_credit = _configured_maxwnd`).
            credit: cfg.configured_maxwnd,
            pull: super::pacer::INIT_PULL,
            speculating: true,
            pull_target: 0,
            rts_pending: false,
            last_rts: None,
            rts_outstanding: None,
            rts_ev: 0,
            nscc,
            mp,
            stamp: Stamp::default(),
        }
    }

    /// Bytes in flight as the sender counts them.
    pub fn in_flight(&self) -> i64 {
        self.in_flight
    }

    pub fn credit(&self) -> i64 {
        self.credit
    }

    fn record(&mut self, i: u64) -> Option<&mut Record> {
        if i < self.base {
            return None;
        }
        self.records.get_mut((i - self.base) as usize)
    }

    /// The lowest packet waiting to be sent again.
    fn lowest_queued(&mut self) -> Option<u64> {
        while let Some(&Reverse(i)) = self.rtx.peek() {
            if self.record(i).is_some_and(|r| r.state == State::Queued) {
                return Some(i);
            }
            self.rtx.pop();
        }
        None
    }

    /// The next packet's size (`getNextPacketSize`): a queued retransmission's, else a new
    /// one's.
    fn next_size(&mut self) -> i64 {
        match self.lowest_queued() {
            Some(i) => self.record(i).map_or(0, |r| r.size as i64),
            None => self.backlog.min(self.cfg.mtu as i64),
        }
    }

    /// Whether window and credit let a packet go now (`isSendPermitted`, uec.cpp:1770).
    fn permitted(&mut self) -> bool {
        if self.rtx_count == 0 && self.backlog == 0 {
            return false;
        }
        if self.cfg.rccc && self.credit <= 0 {
            return false;
        }
        let size = self.next_size();
        !self.cfg.nscc || self.nscc.can_send(size, self.in_flight)
    }

    /// The earliest send still awaited.
    fn earliest_send(&mut self) -> Option<(Time, u64)> {
        while let Some(&(t, i)) = self.send_order.front() {
            let live = if i == RTS {
                self.rts_outstanding == Some(t)
            } else {
                self.record(i).is_some_and(|r| r.state == State::InFlight && r.sent == t)
            };
            if live {
                return Some((t, i));
            }
            self.send_order.pop_front();
        }
        None
    }

    /// `startRTO` (uec.cpp:1998): the timer runs for the oldest send.
    fn start_rto(&mut self, now: Time, sent: Time) {
        let at = (sent + self.cfg.rto).max(now);
        match self.deadline {
            None => {
                self.deadline = Some(at);
                self.rto_send_time = sent;
            }
            Some(d) if sent + self.cfg.rto < d => {
                self.deadline = Some(at);
                self.rto_send_time = sent;
            }
            Some(_) => {}
        }
    }

    /// `recalculateRTO` (uec.cpp:2307).
    fn recalc_rto(&mut self, now: Time) {
        self.deadline = None;
        if let Some((t, _)) = self.earliest_send() {
            self.start_rto(now, t);
        }
    }

    /// A send record the timer may have been set for went away.
    fn send_gone(&mut self, now: Time, sent: Time) {
        if sent == self.rto_send_time {
            self.recalc_rto(now);
        }
    }

    /// `queueForRtx` (uec.cpp:2222).
    fn queue_rtx(&mut self, i: u64, size: u32) {
        if let Some(r) = self.record(i) {
            r.state = State::Queued;
        }
        self.rtx.push(Reverse(i));
        self.rtx_count += 1;
        self.rtx_backlog += size as i64;
    }

    /// `stopSpeculating` (uec.cpp:1845): unused speculative credit goes.
    fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            if self.credit > 0 {
                self.credit = 0;
            }
        }
    }

    /// `computePullTarget` (uec.cpp:1859): the credit asked for, cumulative, in quanta.
    fn compute_pull_target(&self, active_senders: u32) -> u32 {
        if !self.cfg.rccc {
            return 0;
        }
        let mtu = self.cfg.mtu as i64;
        let mut t = self.backlog + self.rtx_backlog;
        if self.cfg.nscc && t > self.nscc.cwnd + mtu {
            t = self.nscc.cwnd + mtu;
        }
        t = t.min(self.cfg.configured_maxwnd);
        t -= self.credit;
        if self.speculating && t < mtu && self.backlog > 0 {
            t = mtu;
        }
        if active_senders > 1 {
            t /= active_senders as i64;
        }
        t += (self.pull as i64) << PULL_SHIFT;
        ((t + (1 << PULL_SHIFT) - 1) >> PULL_SHIFT) as u32
    }

    fn spend_credit(&mut self, size: i64) {
        if self.cfg.rccc {
            self.credit -= size;
        }
    }

    /// `sendRTS` (uec.cpp:2173): at most one per network RTT (none under RCCC alone, as in
    /// uet-htsim, whose RTT is then 0).
    fn send_rts(&mut self, now: Time, nic: &mut NicCall<'_>) {
        if self.last_rts.is_some_and(|t| now - t < self.cfg.rts_gap) {
            return;
        }
        let cwnd_packets = self.nscc.cwnd.max(0) as u64 / self.cfg.mss as u64;
        self.rts_ev = self.mp.next(self.highest_sent, cwnd_packets);
        self.rts_pending = true;
        self.last_rts = Some(now);
        self.rts_outstanding = Some(now);
        self.send_order.push_back((now, RTS));
        self.start_rto(now, now);
        if let Some(a) = nic.agent::<UetAgent>() {
            a.counts.rts_sent += 1;
        }
    }

    /// Tells the host whether this sender may send now (for the pull target's share).
    fn report_sending(&mut self, nic: &mut NicCall<'_>) {
        if !self.cfg.rccc {
            return;
        }
        let sending = self.permitted();
        let qp = nic.caller();
        if let Some(a) = nic.agent::<UetAgent>() {
            a.set_sending(qp, sending);
        }
    }

    fn active_senders(nic: &mut NicCall<'_>) -> u32 {
        nic.agent::<UetAgent>().map_or(0, |a| a.active_senders())
    }

    /// `handleCumulativeAck` (uec.cpp:744).
    fn cumulative_ack(&mut self, now: Time, cum: u64) {
        let cum = cum.min(self.highest_sent);
        while self.base < cum {
            let r = self.records.pop_front().expect("a record per packet sent");
            self.base += 1;
            match r.state {
                State::Queued => {
                    self.rtx_backlog -= r.size as i64;
                    self.in_flight += r.size as i64; // taken off when it was queued
                    self.rtx_count -= 1;
                }
                State::InFlight => self.send_gone(now, r.sent),
                State::Gone => {}
            }
        }
        self.cum_ack = self.cum_ack.max(cum);
    }

    /// `handleAckno` (uec.cpp:660): one selectively acknowledged packet.
    fn selective_ack(&mut self, now: Time, i: u64) {
        if i < self.cum_ack || i >= self.highest_sent {
            return;
        }
        let Some(r) = self.record(i) else { return };
        let (state, size, sent) = (r.state, r.size, r.sent);
        r.state = State::Gone;
        match state {
            State::InFlight => self.send_gone(now, sent),
            State::Queued => {
                self.rtx_backlog -= size as i64;
                self.in_flight += size as i64;
                self.rtx_count -= 1;
            }
            State::Gone => {}
        }
    }

    /// `processAck` (uec.cpp:904).
    fn process_ack(&mut self, now: Time, seg: &Segment, info: &UetInfo, at: PsnReader) {
        let diff = info.recvd.wrapping_sub(self.recvd as u32) as i32;
        let newly = diff.max(0) as i64;
        if newly > 0 {
            self.recvd += newly as u64;
            self.nscc.on_acked_bytes(newly);
        }
        self.in_flight -= newly;
        if self.cfg.nscc && self.cfg.window_penalty < 255 {
            let cut = newly - newly * self.cfg.window_penalty as i64 / 255;
            self.nscc.cwnd = (self.nscc.cwnd - cut).max(self.cfg.mtu as i64);
        }
        // The RTT sample of the packet that triggered the ACK, if unambiguous
        // (`validateSendTs`: first sends answered as such, or a retransmission sent once).
        let rtx_echo = seg.retransmit;
        let sample = at.index(info.psn).and_then(|i| self.record(i).copied()).filter(|r| r.state == State::InFlight && ((r.resent == 0 && !rtx_echo) || (r.resent == 1 && rtx_echo)));
        let delay = match sample {
            Some(r) => {
                let raw = (now - r.sent).0;
                if info.flags & UET_RTS_ACK == 0 {
                    self.nscc.update_base_rtt(raw);
                }
                if raw >= self.nscc.base_rtt {
                    self.nscc.update_delay(raw, seg.ece);
                    raw - self.nscc.base_rtt
                } else {
                    self.nscc.avg_delay
                }
            }
            None => self.nscc.avg_delay,
        };
        if info.flags & UET_RTS_ACK != 0 {
            self.rts_outstanding = None;
        }
        if let Some(cum) = at.index(seg.psn) {
            self.cumulative_ack(now, cum);
        }
        if let Some(base) = at.index(Psn::new(info.number)) {
            let bits = info.sack[0] as u64 | (info.sack[1] as u64) << 32;
            let mut b = bits;
            while b != 0 {
                let k = b.trailing_zeros() as u64;
                self.selective_ack(now, base + k);
                b &= b - 1;
            }
        }
        self.mp.feedback(now, seg.path.ev(), if seg.ece { Feedback::Ecn } else { Feedback::Good });
        if self.cfg.nscc {
            self.nscc.on_ack(now.0, seg.ece, delay, newly, self.in_flight);
        }
        self.stop_speculating();
        if self.is_done() {
            self.deadline = None;
        }
    }

    /// ROD: the receiver dropped everything after the hole at `from`: it all goes again,
    /// lowest first (go-back-N; uet-htsim has no ROD).
    fn go_back(&mut self, now: Time, from: u64) -> bool {
        let mut any = false;
        for i in from.max(self.base)..self.highest_sent {
            let Some(r) = self.record(i).copied().filter(|r| r.state == State::InFlight) else { continue };
            if let Some(rec) = self.record(i) {
                rec.state = State::Gone;
            }
            self.in_flight -= r.size as i64;
            self.queue_rtx(i, r.size);
            any = true;
        }
        if any {
            self.recalc_rto(now);
        }
        any
    }

    /// `processNack` (uec.cpp:1524): whether it named a packet still in flight.
    fn process_nack(&mut self, now: Time, seg: &Segment, info: &UetInfo, at: PsnReader) -> bool {
        let Some(i) = at.index(seg.psn) else { return false };
        if info.flags & UET_GO_BACK != 0 {
            return self.go_back(now, i);
        }
        let Some(r) = self.record(i).copied().filter(|r| r.state == State::InFlight) else { return false };
        let raw = (now - r.sent).0;
        if self.cfg.base_rtt_from_nacks {
            self.nscc.update_base_rtt(raw);
        }
        let last_hop = info.flags & UET_LAST_HOP != 0;
        if self.cfg.nscc {
            self.nscc.on_nack(now.0, r.size as i64, last_hop, self.cfg.rccc, self.in_flight);
        }
        if let Some(rec) = self.record(i) {
            rec.state = State::Gone;
        }
        self.in_flight -= r.size as i64;
        self.stop_speculating();
        self.queue_rtx(i, r.size);
        self.send_gone(now, r.sent);
        let fb = match (last_hop, seg.ece) {
            (true, true) => Feedback::Ecn,
            (true, false) => Feedback::Good,
            (false, _) => Feedback::Nack,
        };
        self.mp.feedback(now, seg.path.ev(), fb);
        true
    }

    /// `processPull` (uec.cpp:1612) and `handlePull` (uec.cpp:799).
    fn process_pull(&mut self, number: u32) {
        self.stop_speculating();
        if number > self.pull {
            self.credit += ((number - self.pull) as i64) << PULL_SHIFT;
            self.credit = self.credit.min(self.cfg.configured_maxwnd);
            self.pull = number;
        }
    }
}

impl UetSender {
    /// UUD: the next packet, sent once, on an oblivious EV; nothing is kept for it, and a
    /// packet handed to the wire counts as acknowledged (nothing will ever be).
    fn next_unreliable(&mut self) -> Option<(u64, bool)> {
        if self.backlog == 0 {
            return None;
        }
        let size = self.backlog.min(self.cfg.mtu as i64);
        self.backlog -= size;
        let i = self.highest_sent;
        self.stamp = Stamp { ev: self.mp.next(i, 0), flags: 0, pull_target: 0 };
        self.highest_sent += 1;
        self.cum_ack = self.highest_sent;
        Some((i, false))
    }
}

fn uet_info(seg: &Segment) -> Option<UetInfo> {
    match seg.ext {
        Ext::Uet(u) => Some(u),
        _ => None,
    }
}

impl SendRecovery for UetSender {
    fn snd_una(&self) -> u64 {
        self.cum_ack
    }
    fn snd_nxt(&self) -> u64 {
        self.highest_sent
    }
    fn has_data(&self) -> bool {
        self.rtx_count > 0 || self.backlog > 0
    }
    fn is_done(&self) -> bool {
        self.cum_ack >= self.npkts
    }

    /// `sendPacket` (uec.cpp:1987): a retransmission first (`sendRtxPacket`), else a new packet
    /// (`sendNewPacket`), while window and credit allow.
    fn next(&mut self, now: Time, _rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.cfg.delivery == Delivery::Uud {
            return self.next_unreliable();
        }
        if !self.permitted() {
            self.report_sending(nic);
            return None;
        }
        let active = Self::active_senders(nic);
        let cwnd_packets = self.nscc.cwnd.max(0) as u64 / self.cfg.mss as u64;
        let (i, retransmit, size) = if let Some(i) = self.lowest_queued() {
            self.rtx.pop();
            let size = self.record(i).expect("queued").size;
            self.rtx_count -= 1;
            self.rtx_backlog -= size as i64;
            (i, true, size)
        } else {
            let size = self.backlog.min(self.cfg.mtu as i64) as u32;
            self.backlog -= size as i64;
            (self.highest_sent, false, size)
        };
        self.spend_credit(size as i64);
        self.in_flight += size as i64;
        self.pull_target = self.compute_pull_target(active);
        let ev = self.mp.next(self.highest_sent, cwnd_packets);
        let mut flags = if self.speculating && !retransmit { UET_SPEC } else { 0 };
        let ar = retransmit || self.backlog == 0 || (self.cfg.rccc && self.credit <= 0) || (self.cfg.nscc && self.in_flight + size as i64 >= self.nscc.cwnd);
        if ar {
            flags |= UET_AR;
        }
        self.stamp = Stamp { ev, flags, pull_target: self.pull_target };
        if retransmit {
            let r = self.record(i).expect("queued");
            (r.sent, r.resent, r.state) = (now, r.resent.saturating_add(1), State::InFlight);
        } else {
            self.records.push_back(Record { sent: now, size, resent: 0, state: State::InFlight });
            self.highest_sent += 1;
        }
        self.send_order.push_back((now, i));
        self.start_rto(now, now);
        self.report_sending(nic);
        Some((i, retransmit))
    }

    fn stamp(&self, seg: &mut Segment) {
        seg.path = PathInfo::with_ev(self.stamp.ev);
        seg.ext = Ext::Uet(UetInfo { kind: UetKind::Data, flags: self.stamp.flags, number: self.stamp.pull_target, ..UetInfo::default() });
    }

    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
        let Some(info) = uet_info(seg) else { return false };
        let agent = nic.agent::<UetAgent>();
        let loss = match info.kind {
            UetKind::Ack => {
                if let Some(a) = agent {
                    a.counts.acks_received += 1;
                }
                self.process_ack(now, seg, &info, at);
                false
            }
            UetKind::Nack => {
                if let Some(a) = agent {
                    a.counts.nacks_received += 1;
                }
                self.process_nack(now, seg, &info, at)
            }
            UetKind::Pull => {
                if let Some(a) = agent {
                    a.counts.pulls_received += 1;
                }
                self.process_pull(info.number);
                false
            }
            UetKind::Data | UetKind::Rts => false,
        };
        self.report_sending(nic);
        loss
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.is_done() { None } else { self.deadline }
    }

    /// `rtxTimerExpired` (uec.cpp:2319): the oldest send is taken for lost, its EV unknown
    /// (EV 0 is penalised, as in uet-htsim); one packet per expiry.
    fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) -> bool {
        if self.is_done() || self.deadline.is_none_or(|d| now < d) {
            return false;
        }
        self.deadline = None;
        let Some((sent, i)) = self.earliest_send() else { return false };
        self.send_order.pop_front();
        self.mp.feedback(now, 0, Feedback::Timeout);
        if i == RTS {
            // An RTS unanswered: sent again (uet-htsim resends its PSN as a 64 B packet).
            self.rts_outstanding = None;
            self.recalc_rto(now);
            self.last_rts = None;
            self.send_rts(now, nic);
            self.report_sending(nic);
            return true;
        }
        debug_assert!(self.record(i).is_some_and(|r| r.sent == sent));
        let size = self.record(i).map_or(0, |r| r.size);
        if let Some(r) = self.record(i) {
            r.state = State::Gone;
        }
        self.recalc_rto(now);
        if self.cfg.nscc {
            self.in_flight -= size as i64;
            self.nscc.on_timeout(size as i64);
        }
        let queued_before = self.rtx_count > 0;
        if queued_before {
            self.stop_speculating();
        }
        self.queue_rtx(i, size);
        if queued_before {
            if self.cfg.rccc {
                self.send_rts(now, nic);
            }
        } else if (self.cfg.nscc && self.nscc.cwnd < size as i64 + self.in_flight) || (self.cfg.rccc && self.credit <= 0) {
            self.send_rts(now, nic);
        }
        self.report_sending(nic);
        true
    }

    /// The RTS, sent at once as a control packet (uet-htsim: through the NIC's control queue).
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        if !self.rts_pending {
            return None;
        }
        self.rts_pending = false;
        let mut seg = Segment::data(psn.wire(self.highest_sent), 0, 0, now);
        seg.ext = Ext::Uet(UetInfo { kind: UetKind::Rts, flags: UET_AR, number: self.pull_target, ..UetInfo::default() });
        (seg.priority, seg.wire_bytes, seg.path) = (PRIORITY_CONTROL as u8, HEADER_BYTES, PathInfo::with_ev(self.rts_ev));
        Some(seg)
    }

    fn release(&mut self) {
        self.records = VecDeque::new();
        self.rtx = BinaryHeap::new();
        self.send_order = VecDeque::new();
    }
}
