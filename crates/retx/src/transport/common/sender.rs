//! The requester side of a queue pair: loss recovery, congestion control and pacing.


use super::congestion::CongestionControl;
use super::feedback::{AckSample, Flight};
use super::poll::{Transmit, Want};
use super::notifications::Notifications;
use super::psn::{PsnReader, PsnSpace};
use super::recovery::SendRecovery;
use super::segment::{payload_tag, Ecn, SegKind, Segment};
use super::agent::NicCall;
use super::flow::FlowSpec;
use crate::sim::units::{Rate, Time};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retx_pkts: u64,
    pub retx_bytes: u64,
    /// Loss notifications received and acted on, by kind.
    pub notifications: Notifications,
    pub timeouts: u64,
    pub cnps: u64,
}

/// The send side of one flow. Sans-IO: time comes in with every call, packets go out through
/// [`Sender::poll_transmit`], and [`Sender::poll_timeout`] says when to call back.
#[derive(Clone, Debug)]
pub struct Sender<R, C> {
    spec: FlowSpec,
    psn: PsnSpace,
    recovery: R,
    cc: C,
    line: Rate,
    next_send: Time,
    /// Wire bytes of the last packet sent (what a rate change re-times).
    last_wire: u64,
    pub stats: SenderStats,
    pub done_at: Option<Time>,
}

impl<R: SendRecovery, C: CongestionControl> Sender<R, C> {
    pub fn new(spec: FlowSpec, recovery: R, cc: C, line: Rate) -> Self {
        Sender {
            psn: PsnSpace::new(spec.initial_psn),
            spec,
            recovery,
            cc,
            line,
            next_send: Time::ZERO,
            last_wire: 0,
            stats: SenderStats::default(),
            done_at: None,
        }
    }

    /// The pacing rate congestion control allows now.
    pub fn rate(&self) -> Rate {
        self.cc.rate().unwrap_or(self.line)
    }

    pub fn cc(&self) -> &C {
        &self.cc
    }

    pub fn snd_una(&self) -> u64 {
        self.recovery.snd_una()
    }

    pub fn snd_nxt(&self) -> u64 {
        self.recovery.snd_nxt()
    }

    fn has_data(&self) -> bool {
        self.recovery.has_data()
    }

    pub fn recovery(&self) -> &R {
        &self.recovery
    }

    pub fn is_done(&self) -> bool {
        self.done_at.is_some()
    }

    /// Frees the loss recovery's per-packet state once the message is acknowledged; what the
    /// flow's record and the run's report read (counters, rate, window) stays.
    pub fn release(&mut self) {
        self.recovery.release();
    }

    /// The next packet to send. A sender has no responses to give (`Want::Responses`); offered
    /// the wire, it sends retransmissions and new data as its gate allows: the pacing rate,
    /// and the window of bytes in flight if congestion control sets one.
    pub fn poll_transmit(&mut self, now: Time, nic: &mut NicCall<'_>, want: Want) -> Transmit {
        // A connection packet (STRIDE's SYN, FIN, or the ACK answering SYN+ACK / FIN+ACK)
        // goes whatever is asked, unpaced: it answers an input or opens / closes the flow.
        if let Some(mut seg) = self.recovery.poll_connection(now, self.psn) {
            if seg.wire_bytes == 0 {
                // Answering an input it goes as a response does; opening or closing the flow
                // on its own, at the control priority with the data header.
                let m = &self.spec.marking;
                (seg.priority, seg.wire_bytes) = match want {
                    Want::Responses => (m.response_priority, m.response_bytes),
                    Want::Any => (super::flow::PRIORITY_CONTROL as u8, seg.payload + m.data_header),
                };
            }
            return Transmit::Send(seg);
        }
        if want == Want::Responses || self.is_done() || !self.has_data() {
            return Transmit::Idle;
        }
        if now < self.next_send {
            return Transmit::WaitUntil(self.next_send);
        }
        let rate = self.rate();
        let next = if self.window_open() {
            self.recovery.next(now, rate, nic)
        } else {
            // The window bounds snd_nxt - snd_una; retransmitting a hole below snd_nxt does not
            // widen it, so such a retransmission still goes (RFC 5681 fast retransmit). An
            // ACK opens the window for the rest.
            self.recovery.next_past_closed_window(now)
        };
        let Some((index, retransmit)) = next else { return Transmit::Idle };
        let payload = self.spec.payload(index);
        let mut seg = Segment::data(self.psn.wire(index), payload, payload_tag(self.spec.key, index), now);
        seg.last = index + 1 == self.spec.npkts();
        seg.retransmit = retransmit;
        let m = &self.spec.marking;
        let (priority, colour) = self.recovery.mark(index, retransmit).unwrap_or((m.data_priority, m.colour));
        (seg.priority, seg.colour, seg.wire_bytes) = (priority, colour, payload + m.data_header);
        if m.colour_as_ecn {
            (seg.ecn, seg.colour) = (if colour > 0 { Ecn::NotEct } else { Ecn::Ect }, 0);
        }
        seg.unscheduled = self.recovery.unscheduled();
        self.recovery.stamp(&mut seg);
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += payload as u64;
        if retransmit {
            self.stats.retx_pkts += 1;
            self.stats.retx_bytes += payload as u64;
        }
        let wire = seg.wire_bytes as u64;
        self.next_send = now + rate.serialization(wire);
        self.last_wire = wire;
        self.cc.on_sent(now, wire);
        Transmit::Send(seg)
    }

    /// Whether the congestion window (if any) lets new data out: payload bytes between snd_una
    /// and snd_nxt below cwnd, plus TCP's dupack inflation during fast recovery (see
    /// [`crate::transport::loss::tcp`]).
    fn window_open(&self) -> bool {
        let Some(window) = self.cc.window() else { return true };
        let mss = self.spec.mtu as i64;
        let inflation = self.recovery.window_inflation() * mss;
        let in_flight = ((self.snd_nxt() - self.snd_una()) as i64).saturating_mul(mss);
        in_flight < window as i64 + inflation
    }

    /// What is in flight now, for congestion control's loss and timeout responses.
    fn flight(&self) -> Flight {
        let (snd_una, snd_nxt) = (self.snd_una(), self.snd_nxt());
        Flight { bytes: (snd_nxt - snd_una) * self.spec.mtu as u64, snd_una, snd_nxt }
    }

    /// Handles a response from the receiver (ACK, NAK, NACK, RACK, CNP): the loss recovery
    /// scheme reads its own notifications, congestion control gets a sample. `nic` is the
    /// state all queue pairs of the NIC share (MELO's send pool).
    pub fn handle_packet(&mut self, now: Time, seg: &Segment, nic: &mut NicCall<'_>) {
        if seg.kind == SegKind::Data {
            // Ours, returned by a switch: lost on the way.
            if seg.returned {
                let at = PsnReader { space: self.psn, reference: self.snd_una() };
                if let Some(i) = at.index(seg.psn).filter(|&i| i < self.snd_nxt()) {
                    self.recovery.on_returned(now, i);
                }
            }
            return;
        }
        let una = self.snd_una();
        let flight = self.flight();
        let at = PsnReader { space: self.psn, reference: una };
        if seg.kind == SegKind::Cnp {
            self.stats.cnps += 1;
            self.cc.on_cnp(now);
        } else {
            let loss = self.recovery.on_feedback(now, seg, at, nic);
            if loss {
                self.stats.notifications.count(seg.kind);
                self.cc.on_loss(now, &flight);
            }
            if seg.kind.is_connection() {
                return self.check_done(now); // no congestion signal
            }
            let (new_una, nxt) = (self.snd_una(), self.snd_nxt());
            let sample = AckSample {
                cum: at.index(seg.psn).unwrap_or(una).max(una),
                acked_bytes: (new_una.saturating_sub(una)).saturating_mul(self.spec.mtu as u64),
                snd_nxt: nxt,
                ece: seg.ece,
                // Karn: an ACK that says it echoes a retransmission gives no sample (only TCP's
                // receiver says so).
                rtt: (!seg.retransmit && seg.echo_ts > Time::ZERO && now >= seg.echo_ts).then(|| now - seg.echo_ts),
                one_way: (seg.echo_ts > Time::ZERO).then(|| seg.ts.0 as i64 - seg.echo_ts.0 as i64),
                int: nic.int_in,
            };
            let before = self.rate();
            if self.cc.on_ack(now, &sample) {
                self.stats.cnps += 1;
            }
            let after = self.rate();
            if after != before && self.cc.retimes_pacing() && self.last_wire > 0 {
                let (old, new) = (before.serialization(self.last_wire), after.serialization(self.last_wire));
                self.next_send = Time((self.next_send.0 + new.0).saturating_sub(old.0));
            }
        }
        self.check_done(now);
    }

    fn check_done(&mut self, now: Time) {
        let finished = self.recovery.is_done();
        if finished && self.done_at.is_none() {
            self.done_at = Some(now);
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        if self.is_done() {
            return None;
        }
        let rto = self.recovery.poll_timeout();
        match (rto, self.cc.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) {
        let flight = self.flight();
        let fired = self.recovery.handle_timeout(now, nic);
        if fired {
            self.stats.timeouts += 1;
            self.cc.on_timeout(now, &flight);
        }
        self.cc.handle_timeout(now);
    }

    pub fn spec(&self) -> &FlowSpec {
        &self.spec
    }
}
