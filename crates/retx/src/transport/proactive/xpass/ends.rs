//! ExpressPass's two ends (parameters, packets and the credit pacer: [`crate::transport::proactive::xpass`]).
//!
//! - Sender ([`XpassSender`]): a credit request opens the flow; each credit received pays for
//!   one data packet, which echoes the credit's sequence number and send time; a credit that
//!   finds nothing to send is wasted (ns-2 `recv_credit`); with nothing left to send it sends a
//!   credit stop (ns-2 `send_credit_stop`), or earlier when the last RTT's credits cover what
//!   is left (ns-2's early credit stop, `XpassSender::early_stop`).
//! - Receiver ([`XpassReceiver`]): starts and stops the flow's credits at its host's pacer,
//!   tells it which credit each data packet spent, and answers every packet with a 64 B ACK
//!   (cumulative index plus the packet's own PSN: a per-packet SACK).
//! - Two timers where ns-2 has one value. ns-2's `retransmit_timeout_` (`ns-default.tcl`
//!   100 ms; the large-scale script's 100 us, `scripts/large-scale-fattree.tcl` line 87) runs
//!   two timers (`xpass/xpass.cc`): the sender's `sender_retransmit_timer_`, armed when a
//!   credit request goes (`advance_bytes`, line 524), cancelled by the first credit
//!   (`recv_credit`, line 196) and, on expiry with still no credit, sending the request again
//!   (`handle_sender_retransmit` in `XPASS_RECV_CREDIT_REQUEST_SENT`, lines 300-303); and the
//!   receiver's NACK timer (below). ns-2 resends no data on a timer of the sender's.
//! - The credit request timer, `request_timeout` (default 100 us, ns-2's): no credit that long
//!   after a request, and the request goes again (and again), counting no timeout and
//!   resending nothing, though packets may be outstanding (Aeolus's unscheduled ones).
//! - Loss recovery. ns-2 ExpressPass has no ACKs: its receiver NACKs the first gap in the
//!   byte stream when a later packet arrives (`process_ack`, lines 538-545) and its sender goes
//!   back to it (`recv_nack`: `t_seqno_ = ackno`, line 279), the receiver repeating the NACK
//!   every `retransmit_timeout_` while the gap lasts (`handle_receiver_retransmit`, lines
//!   334-338). retx's flows complete at the sender, so the receiver ACKs every packet, and
//!   recovery is a sender timeout of retx's own, `rto` (default 1 ms; it resends on silence,
//!   not on a gap, so it must outlast queueing: see `XpassParams::rto`). When the oldest
//!   outstanding packet has waited `rto` (snd_una has not moved), it, every packet out `rto`
//!   unacknowledged (those that had left when snd_una last moved, or all of them when no new
//!   packet has left for `rto`: a tail lost whole goes in one round) and the holes below the
//!   highest packet SACKed are queued for resending, each on a credit ahead of new data; a
//!   timeout is counted, and the sender asks for credits again unless they are flowing (a
//!   credit, or the request, within `request_timeout`). Packets sent more recently and above
//!   the highest SACKed may still be on their way: the next round gets them. With nothing
//!   outstanding and credits stalled after they had come (which ns-2 does not guard against),
//!   `rto` after the last ACK the sender asks again too, counting nothing. A late request to a
//!   receiver that has everything draws an ACK.
//! - Aeolus (`aeolus = true`): the first `unscheduled_bytes` (default one BDP) go at line rate
//!   before any credit, coloured `aeolus_colour` (switches drop them selectively above the
//!   colour's WRED threshold); credits, credited data, requests, stops, ACKs and the probe are
//!   never coloured. A 64 B probe follows the last unscheduled packet at once, on the data
//!   priority (so it cannot overtake it), naming its PSN; its ACK tells the sender that every
//!   unscheduled packet still unacknowledged was lost. A SACK of an unscheduled packet marks
//!   the unscheduled packets sent before it lost. Each credit carries, in order: a
//!   loss-detected unscheduled packet, an unsent packet, an unscheduled packet sent but
//!   unacknowledged (each unscheduled packet resent once this way). The first credit ends
//!   the unscheduled phase: what is left of the first BDP goes on credits.

use crate::transport::common::notifications::Notifications;
use crate::transport::proactive::aeolus::{Probe, Unscheduled, UnscheduledPackets, PROBE_BYTES};
use crate::transport::common::agent::NicCall;
use crate::transport::common::window::Window;
use crate::transport::common::psn::{PsnReader, PsnSpace};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::reorder::ReorderBuffer;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use super::pacer::pacer;
use super::params::{info, XpassParams, ACK_BYTES, REQUEST_BYTES};
use crate::transport::common::ext::{XpassInfo, XpassKind};
use crate::transport::common::flow::{FlowSpec, PRIORITY_CONTROL};
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

/// Where the sender stands with the receiver's credits (ns-2 `credit_recv_state_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Credits {
    /// A credit request is to go.
    RequestDue,
    /// Asked (credits may be flowing).
    Requested,
    /// Nothing left to send: a credit stop is to go.
    StopDue,
    Stopped,
}

#[derive(Clone, Debug)]
pub struct XpassSender {
    npkts: u64,
    data_priority: u8,
    /// Aeolus: the colour of unscheduled packets.
    aeolus: Option<u8>,
    /// Packets that may go before the first credit (Aeolus; 0 without).
    unscheduled: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// Packets ACKed individually over [snd_una, snd_nxt).
    acked: Window,
    /// Credits received and not yet spent, oldest first: (sequence number, send time).
    credits: VecDeque<(u32, Time)>,
    /// The credit (sequence number, send time) and colour of the packet `next` chose.
    spent: (u32, Time),
    colour: u8,
    states: UnscheduledPackets,
    probe: Probe,
    state: Credits,
    /// Packets the timeout queued for resending.
    resend: VecDeque<u64>,
    /// The credit request timer (`XpassParams::request_timeout`) and the data-loss timeout
    /// (`XpassParams::rto`).
    request_timeout: Time,
    rto: Time,
    /// The last ACK (or the first request, or the data timer): with nothing outstanding, the
    /// data timer runs from here (to ask for credits again, nothing resent).
    last_progress: Time,
    /// When snd_una last moved (or a packet left with nothing outstanding, or the data timer
    /// fired): with packets outstanding, the data timer runs from here. `nxt_since` is snd_nxt
    /// then: every packet below it had left by `una_since`, so when the timer fires each one
    /// still unacknowledged has waited `rto` too.
    una_since: Time,
    nxt_since: u64,
    /// When the last new packet left (not a resend): when the data timer fires `rto` or more
    /// after it, every packet still unacknowledged has waited `rto`.
    last_new: Time,
    /// One past the highest packet SACKed (0: none).
    sacked_end: u64,
    last_credit: Time,
    /// The early credit stop (ns-2 `recv_credit`): the sender's RTT, from its last request to
    /// the first credit that followed (ns-2's sender `rtt_`; 0: none yet), when that request
    /// went, whether a credit has come since, the credits received since `window_start`
    /// (ns-2 `credit_recved_rtt_`, `last_credit_recv_update_`), and when the last stop went.
    sender_rtt: Time,
    requested_at: Time,
    credited: bool,
    window_credits: u64,
    window_start: Time,
    stopped_at: Time,
    started: bool,
    pub credits_used: u64,
    pub credits_wasted: u64,
    pub requests_sent: u64,
    pub stops_sent: u64,
    /// Aeolus: unscheduled packets found lost, by what found them.
    sack_losses: u64,
    probe_losses: u64,
}

impl XpassSender {
    /// The sender of `spec`, sending up to `bdp_packets` unscheduled under Aeolus when
    /// `unscheduled_bytes` is 0.
    pub fn new(p: &XpassParams, spec: &FlowSpec, bdp_packets: u32) -> Self {
        let npkts = spec.npkts();
        let unscheduled = match (p.aeolus, p.unscheduled_bytes.0) {
            (false, _) => 0,
            (true, 0) => (bdp_packets.max(1) as u64).min(npkts),
            (true, b) => b.div_ceil(spec.mtu as u64).min(npkts),
        };
        XpassSender {
            npkts,
            data_priority: spec.marking.data_priority,
            aeolus: p.aeolus.then_some(p.aeolus_colour),
            unscheduled,
            snd_una: 0,
            snd_nxt: 0,
            acked: Window::new(npkts.clamp(1, u32::MAX as u64) as u32, npkts),
            credits: VecDeque::new(),
            spent: (0, Time::ZERO),
            colour: 0,
            states: UnscheduledPackets::new(unscheduled),
            probe: Probe::NotYet,
            state: Credits::RequestDue,
            resend: VecDeque::new(),
            request_timeout: p.request_timeout.0,
            rto: p.rto.0,
            last_progress: Time::ZERO,
            una_since: Time::ZERO,
            nxt_since: 0,
            last_new: Time::ZERO,
            sacked_end: 0,
            last_credit: Time::ZERO,
            sender_rtt: Time::ZERO,
            requested_at: Time::ZERO,
            credited: false,
            window_credits: 0,
            window_start: Time::ZERO,
            stopped_at: Time::ZERO,
            started: false,
            credits_used: 0,
            credits_wasted: 0,
            requests_sent: 0,
            stops_sent: 0,
            sack_losses: 0,
            probe_losses: 0,
        }
    }

    fn acked(&self, i: u64) -> bool {
        i < self.snd_una || (i < self.snd_nxt && self.acked.get(i))
    }

    fn state(&self, i: u64) -> Option<Unscheduled> {
        self.states.get(i)
    }

    /// The first unscheduled packet in `state` still unacknowledged.
    fn first(&self, state: Unscheduled) -> Option<u64> {
        let (una, nxt, acked) = (self.snd_una, self.snd_nxt, &self.acked);
        self.states.first(state, |i| i < una || (i < nxt && acked.get(i)))
    }

    /// Aeolus: unscheduled packets found lost, by SACK or probe.
    pub fn losses_detected(&self) -> u64 {
        self.sack_losses + self.probe_losses
    }

    /// Marks lost every unscheduled packet below `end` sent once and unacknowledged.
    fn detect(&mut self, end: u64) -> u64 {
        let (una, nxt, acked) = (self.snd_una, self.snd_nxt, &self.acked);
        self.states.detect(end, |i| i < una || (i < nxt && acked.get(i)))
    }

    /// Whether a credit would find something to send.
    fn has_work(&self) -> bool {
        self.resend.iter().any(|&i| !self.acked(i)) || self.snd_nxt < self.npkts || self.first(Unscheduled::Lost).is_some() || self.first(Unscheduled::Sent).is_some()
    }

    fn new_packet(&mut self) -> u64 {
        let i = self.snd_nxt;
        let _ = self.acked.cover(self.snd_una, i);
        self.snd_nxt += 1;
        i
    }

    /// What a credit carries, in Aeolus's order (without Aeolus only the timeout's resends
    /// and new data exist): the timeout's resends, a loss-detected unscheduled packet, an
    /// unsent packet, an unscheduled packet sent but unacknowledged.
    fn pick(&mut self) -> Option<(u64, bool)> {
        while let Some(i) = self.resend.pop_front() {
            if !self.acked(i) {
                return Some((i, true));
            }
        }
        if let Some(i) = self.first(Unscheduled::Lost) {
            self.states.set(i, Unscheduled::Resent);
            return Some((i, true));
        }
        if self.snd_nxt < self.npkts {
            return Some((self.new_packet(), false));
        }
        if let Some(i) = self.first(Unscheduled::Sent) {
            self.states.set(i, Unscheduled::Resent);
            return Some((i, true));
        }
        None
    }

    /// Nothing left to send while credits flow: the credits held are wasted, and a stop goes.
    fn maybe_stop(&mut self, nic: &mut NicCall<'_>) {
        if self.snd_nxt < self.unscheduled || self.has_work() {
            return;
        }
        let n = self.credits.len() as u64;
        if n > 0 {
            self.credits.clear();
            self.credits_wasted += n;
            if let Some(p) = pacer(nic) {
                p.credits_wasted += n;
            }
        }
        if self.state == Credits::Requested {
            self.state = Credits::StopDue;
        }
    }

    /// ns-2 `recv_credit`'s early credit stop, at each credit while credits flow: once a
    /// sender RTT has passed since the window began, if the credits of that window cover the
    /// packets still to be paid for (ns-2 `credit_recved_rtt_ >= pkt_remaining()`), the
    /// credits already on their way will do: the stop goes now, not when the last packet
    /// leaves, so fewer credits are wasted. The window restarts either way. Credits that come
    /// after a stop still carry data; if some never come, the sender asks again 2 RTTs after
    /// the stop (`XpassSender::stop_timer`, ns-2 `send_credit_stop`,
    /// `handle_sender_retransmit`). Not while Aeolus's unscheduled packets may still need
    /// credits for their resends.
    fn early_stop(&mut self, now: Time) {
        if self.state != Credits::Requested || now < self.window_start + self.sender_rtt {
            return;
        }
        let queued = self.credits.len() as u64;
        let left = (self.npkts - self.snd_nxt + self.resend.len() as u64).saturating_sub(queued);
        let unscheduled_pending = self.first(Unscheduled::Lost).is_some() || self.first(Unscheduled::Sent).is_some();
        if left > 0 && self.window_credits >= left && !unscheduled_pending {
            self.state = Credits::StopDue;
        }
        (self.window_credits, self.window_start) = (0, now);
    }

    /// When the sender asks for credits again after a credit stop with packets still unsent:
    /// 2 sender RTTs after the stop (ns-2 `send_credit_stop` arms `sender_retransmit_timer_`
    /// at `2 * rtt_`; `handle_sender_retransmit` in `XPASS_RECV_CREDIT_STOP_SENT` with data
    /// remaining sends a new request).
    fn stop_timer(&self) -> Option<Time> {
        (self.state == Credits::Stopped && self.snd_nxt < self.npkts && self.sender_rtt > Time::ZERO).then(|| self.stopped_at + self.sender_rtt + self.sender_rtt)
    }

    /// When the request goes again for want of credits: `request_timeout` after it went with no
    /// credit since (ns-2 `sender_retransmit_timer_` in `XPASS_RECV_CREDIT_REQUEST_SENT`).
    fn request_timer(&self) -> Option<Time> {
        (self.state == Credits::Requested && !self.credited && !self.is_done()).then(|| self.requested_at + self.request_timeout)
    }

    /// The data-loss timeout: `rto` after snd_una last moved with packets outstanding, else
    /// after the last ACK (then it only asks for credits again if they are not flowing).
    fn data_timer(&self) -> Option<Time> {
        let from = if self.snd_nxt > self.snd_una { self.una_since } else { self.last_progress };
        (self.started && !self.is_done()).then(|| from + self.rto)
    }

    /// Whether credits are flowing at `now`: asked for, and a credit (or the request) within
    /// `request_timeout`.
    fn credits_flowing(&self, now: Time) -> bool {
        self.state == Credits::Requested && now < self.requested_at.max(self.last_credit) + self.request_timeout
    }

    /// The first credit (or the last unscheduled packet) ends the unscheduled phase; the
    /// probe follows what was sent unscheduled.
    fn end_unscheduled(&mut self) {
        if self.snd_nxt < self.unscheduled {
            self.unscheduled = self.snd_nxt;
        }
        if self.aeolus.is_some() && self.unscheduled > 0 && self.probe == Probe::NotYet {
            self.probe = Probe::Due;
        }
    }
}

impl SendRecovery for XpassSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        self.snd_nxt < self.unscheduled || (!self.credits.is_empty() && self.has_work())
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    fn next(&mut self, now: Time, _rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.snd_una == self.snd_nxt {
            // Whatever goes now is the oldest outstanding packet: the timer runs from here.
            (self.una_since, self.nxt_since) = (now, self.snd_nxt);
        }
        if self.snd_nxt < self.unscheduled {
            // Aeolus's first RTT: unscheduled, at line rate, coloured.
            let i = self.new_packet();
            self.last_new = now;
            self.states.set(i, Unscheduled::Sent);
            (self.spent, self.colour) = ((0, Time::ZERO), self.aeolus.unwrap_or(0));
            if self.snd_nxt == self.unscheduled {
                self.end_unscheduled();
            }
            return Some((i, false));
        }
        let &(seq, sent) = self.credits.front()?;
        match self.pick() {
            Some(p) => {
                if !p.1 {
                    self.last_new = now;
                }
                self.credits.pop_front();
                (self.spent, self.colour) = ((seq, sent), 0);
                self.credits_used += 1;
                self.maybe_stop(nic);
                Some(p)
            }
            None => {
                self.maybe_stop(nic);
                None
            }
        }
    }
    fn mark(&self, _index: u64, _retransmit: bool) -> Option<(u8, u8)> {
        Some((self.data_priority, self.colour))
    }
    fn notifications(&self) -> Notifications {
        Notifications { aeolus_sack_losses: self.sack_losses, aeolus_probe_losses: self.probe_losses, ..Notifications::default() }
    }
    /// Credit 0: Aeolus's first RTT, sent before any credit.
    fn unscheduled(&self) -> bool {
        self.spent.0 == 0
    }
    fn stamp(&self, seg: &mut Segment) {
        seg.ext = Ext::Xpass(XpassInfo { kind: XpassKind::Data, seq: self.spent.0, ..Default::default() });
        seg.echo_ts = self.spent.1;
    }
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        let (kind, count, ackno, bytes) = if self.probe == Probe::Due {
            // Aeolus's probe: header only, right after the last unscheduled packet, on the
            // data priority, never coloured.
            self.probe = Probe::Sent;
            (XpassKind::Probe, 0, psn.wire(self.unscheduled - 1), PROBE_BYTES)
        } else if self.state == Credits::RequestDue && !self.is_done() {
            self.state = Credits::Requested;
            self.requests_sent += 1;
            (self.requested_at, self.credited) = (now, false);
            if !self.started {
                self.started = true;
                self.last_progress = now;
            }
            let left = self.npkts - self.snd_una;
            (XpassKind::Request, left.min(u32::MAX as u64) as u32, psn.wire(self.snd_una), REQUEST_BYTES)
        } else if self.state == Credits::StopDue {
            self.state = Credits::Stopped;
            self.stops_sent += 1;
            self.stopped_at = now;
            (XpassKind::Stop, 0, psn.wire(self.snd_una), REQUEST_BYTES)
        } else {
            return None;
        };
        let mut seg = Segment::data(ackno, 0, 0, now);
        seg.ext = Ext::Xpass(XpassInfo { kind, count, ackno, ..Default::default() });
        (seg.priority, seg.colour, seg.wire_bytes) = (self.data_priority, 0, bytes);
        Some(seg)
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
        let Some(x) = info(seg) else { return false };
        match (seg.kind, x.kind) {
            (SegKind::Grant, XpassKind::Credit) => {
                self.last_credit = now;
                if let Some(p) = pacer(nic) {
                    p.credits_received += 1;
                }
                self.end_unscheduled();
                self.window_credits += 1;
                if !self.credited && self.state == Credits::Requested {
                    // ns-2 `recv_credit` in `XPASS_RECV_CREDIT_REQUEST_SENT`.
                    (self.credited, self.sender_rtt, self.window_start) = (true, now - self.requested_at, now);
                }
                if self.has_work() && !self.is_done() {
                    self.credits.push_back((x.seq, seg.ts));
                    self.early_stop(now);
                } else {
                    self.credits_wasted += 1;
                    if let Some(p) = pacer(nic) {
                        p.credits_wasted += 1;
                    }
                }
            }
            (SegKind::Ack, XpassKind::Ack | XpassKind::ProbeAck) => {
                self.last_progress = now;
                if let Some(cum) = at.index(seg.psn).filter(|&c| c > self.snd_una && c <= self.snd_nxt) {
                    for i in self.snd_una..cum {
                        self.acked.clear(i);
                    }
                    (self.snd_una, self.una_since, self.nxt_since) = (cum, now, self.snd_nxt);
                }
                if x.kind == XpassKind::ProbeAck {
                    // Every unscheduled packet still unacknowledged was lost.
                    self.probe_losses += self.detect(self.unscheduled);
                } else if let Some(i) = at.index(x.ackno).filter(|&i| i < self.snd_nxt) {
                    let first_ack = self.state(i) == Some(Unscheduled::Sent) && !self.acked(i);
                    if i >= self.snd_una {
                        self.acked.set(i);
                    }
                    self.sacked_end = self.sacked_end.max(i + 1);
                    if first_ack {
                        // Unscheduled packets leave in order: a gap below one SACKed is a loss.
                        self.sack_losses += self.detect(i);
                    }
                }
                self.maybe_stop(nic);
            }
            _ => {}
        }
        false
    }
    fn poll_timeout(&self) -> Option<Time> {
        [self.data_timer(), self.request_timer(), self.stop_timer()].into_iter().flatten().min()
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        let due = |t: Option<Time>| t.is_some_and(|t| now >= t);
        if due(self.request_timer()) || due(self.stop_timer()) {
            // No credit since the request, or credits ended before every packet left: ask
            // again (not a loss, so no resend and no timeout counted).
            self.state = Credits::RequestDue;
        }
        if !due(self.data_timer()) {
            return false;
        }
        let outstanding = self.snd_nxt > self.snd_una;
        let waited = self.nxt_since;
        (self.last_progress, self.una_since, self.nxt_since) = (now, now, self.snd_nxt);
        if !self.credits_flowing(now) {
            self.state = Credits::RequestDue;
        }
        if !outstanding {
            // Nothing to resend: the timer only made sure credits come.
            return false;
        }
        self.resend.clear();
        // Presumed lost: the oldest outstanding packet; every packet that has been out `rto`
        // unacknowledged (those that had left when the timer started, or all of them when no
        // new packet has left for `rto`: a tail lost whole goes in one round, not one packet
        // a round); and the holes below the highest one SACKed. Packets sent since and above
        // it may still be on their way (the next round gets them).
        let out_rto = if now >= self.last_new + self.rto { self.snd_nxt } else { waited };
        let end = self.sacked_end.max(out_rto).max(self.snd_una + 1).min(self.snd_nxt);
        for i in self.snd_una..end {
            if !self.acked(i) {
                self.resend.push_back(i);
                self.states.set(i, Unscheduled::Resent);
            }
        }
        // The unscheduled phase is over: what is left goes on credits.
        self.unscheduled = self.unscheduled.min(self.snd_nxt);
        !self.resend.is_empty()
    }
    fn release(&mut self) {
        self.acked.release();
        self.states.release();
        self.unscheduled = 0;
        self.resend = VecDeque::new();
        self.credits = VecDeque::new();
    }
}

// ---------------------------------------------------------------------------------------
// Receiver.

#[derive(Clone, Debug)]
pub struct XpassReceiver {
    pub reorder: ReorderBuffer,
}

impl XpassReceiver {
    pub fn new(npkts: u64) -> Self {
        XpassReceiver { reorder: ReorderBuffer::new(npkts) }
    }

    /// Answers `seg` with a 64 B ACK: the cumulative index, and the PSN it names.
    fn ack(kind: XpassKind, now: Time, seg: &Segment, rx: &mut RxCtx) {
        let mut a = Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg);
        a.ext = Ext::Xpass(XpassInfo { kind, ackno: seg.psn, ..Default::default() });
        (a.priority, a.colour, a.wire_bytes) = (PRIORITY_CONTROL as u8, 0, ACK_BYTES);
        rx.send(a);
    }
}

impl ReceiveRecovery for XpassReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let x = info(seg).unwrap_or_default();
        let qp = nic.caller();
        match x.kind {
            XpassKind::Request if rx.is_complete() => return Self::ack(XpassKind::Ack, now, seg, rx),
            XpassKind::Request => {
                let key = rx.spec().key;
                if let Some(p) = pacer(nic) {
                    p.start(now, qp, x.count, key);
                }
                return;
            }
            XpassKind::Stop => {
                if let Some(p) = pacer(nic) {
                    p.stop(qp);
                }
                return;
            }
            XpassKind::Probe => return Self::ack(XpassKind::ProbeAck, now, seg, rx),
            _ => {}
        }
        if let Some(p) = pacer(nic) {
            p.on_data(now, qp, x.seq, seg.echo_ts);
        }
        self.reorder.accept(now, index, seg, rx);
        Self::ack(XpassKind::Ack, now, seg, rx);
        if rx.is_complete() {
            if let Some(p) = pacer(nic) {
                p.stop(qp);
            }
        }
    }

    fn reorder_stats(&self) -> (u64, u64, u64) {
        self.reorder.stats()
    }

    fn release(&mut self) {
        self.reorder.release();
    }
}
