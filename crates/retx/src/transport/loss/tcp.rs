//! A TCP-like byte stream as a loss recovery scheme: NewReno over cumulative ACKs.
//!
//! The message is cut into MSS = `mtu` segments, numbered by packet index as the other
//! schemes number theirs (a byte offset is index x MSS).
//!
//! Receiver (RFC 5681 §4.2, RFC 8257 §3.2): keeps out-of-order segments in a reorder queue
//! (host memory, no size cap) and acknowledges cumulatively: every `ack_interval` in-order
//! segments, at once when a segment fills a hole or is the last, and with an immediate
//! duplicate ACK for every out-of-order or already-delivered segment. Every ACK's `ece` is the
//! receiver's DCTCP.CE state (the mark of the latest segment); when that state flips with
//! in-order segments still unacknowledged, those are first acknowledged with the old state.
//! The ACK's `retransmit` flag echoes the segment that triggered it, so the sender can apply
//! Karn's rule (a real stack gets the same from RFC 7323 timestamps).
//!
//! Sender (RFC 5681 §3.2 + RFC 6582 NewReno + RFC 6298):
//! - `dupack_threshold` duplicate ACKs (default 3) start fast retransmit of snd_una, unless
//!   the cumulative ACK is still below `recover` (RFC 6582 §3.2 step 1: the dupacks belong to
//!   an episode already handled, or to the resends after a timeout);
//! - in fast recovery a partial ACK (below `recover`) retransmits the next hole (the new
//!   snd_una) and the first one restarts the timer ("Impatient" variant, RFC 6582 §3.2 step 5);
//!   a full ACK (at or above `recover`) ends recovery;
//! - the retransmission timer follows RFC 6298: SRTT/RTTVAR from ACKs that move snd_una and
//!   echo a segment that was not a retransmission (Karn), RTO = SRTT + 4 RTTVAR bounded by
//!   `min_rto` and `max_rto`, doubled on every expiry (kept until a valid sample); on expiry
//!   the sender goes back to snd_una and resends everything from there (go-back-N) and records
//!   `recover` = the highest index sent (RFC 6582 §4).
//!
//! ## How recovery and the window controller share NewReno's window
//! The congestion controller (`Cc`, e.g. [`crate::transport::cc::reno`]) owns cwnd and ssthresh: on the loss
//! this scheme reports (once per episode, at the third duplicate ACK) it sets
//! ssthresh = max(FlightSize / 2, 2 MSS) and cwnd = ssthresh and does not grow again until the
//! cumulative ACK passes the `snd_nxt` of that moment, which is this scheme's `recover`. The
//! dupack *inflation* of RFC 6582 (cwnd += 3 MSS at entry, +1 MSS per further duplicate ACK,
//! minus what a partial ACK acknowledges plus 1 MSS) counts segments that have left the
//! network: that is loss recovery's knowledge, so it lives here, as [`TcpSender::inflation`]
//! in segments, and the sender's window gate is `cwnd + inflation x MSS`. When recovery ends
//! the inflation drops to 0, which is RFC 6582's "set cwnd to ssthresh" (full ACK, step 3).
//! Retransmissions of a hole below snd_nxt (fast retransmit, the partial-ACK retransmission)
//! do not widen snd_nxt - snd_una, so the gate lets them out even when the window is full, as
//! RFC 5681 §3.2 step 2 sends the fast retransmission regardless of cwnd.

use crate::transport::common::agent::NoAgent;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::sim::check::{self, Checked};
use crate::transport::common::psn::PsnReader;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ecn, SegKind, Segment};
use crate::transport::common::agent::NicCall;
use crate::sim::units::{Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpParams {
    /// Lower bound of the retransmission timeout, also the RTO before the first RTT sample.
    /// RFC 6298 §2.4 says 1 s and Linux uses 200 ms, both meant for the Internet; the STRIDE
    /// paper's TCP settings could not be checked here, so this is 1 ms, a datacenter-scale
    /// value (DCTCP's evaluation lowered RTOmin to 10 ms for ~100 us RTTs at 1-10 Gbps; RDMA
    /// paths are ~10x shorter).
    pub min_rto: Dur,
    /// Upper bound of the backed-off timeout (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Dur,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams { min_rto: Dur(Time::from_ms(1)), max_rto: Dur(Time::from_ms(60_000)), dupack_threshold: 3 }
    }
}

impl Scheme for TcpParams {
    const NAME: &'static str = "tcp";
    type Sender = TcpSender;
    type Receiver = TcpReceiver;
    type Agent = NoAgent;

    /// Fields by their names within `[recovery.tcp]`.
    fn check(&self) -> Checked {
        check::timer("min_rto", self.min_rto.0)?;
        if self.max_rto.0 < self.min_rto.0 {
            return Err(check::FieldError::new("max_rto", "must not be below min_rto"));
        }
        check::range_u32("dupack_threshold", self.dupack_threshold, 1, 1 << 16)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (TcpSender, TcpReceiver) {
        (TcpSender::new(self, f.npkts()), TcpReceiver::new(f.ack_interval))
    }
}

/// RFC 6298's estimator: SRTT, RTTVAR and the (backed-off) RTO.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    rto: Time,
    min: Time,
    max: Time,
}

impl RttEstimator {
    pub fn new(min: Time, max: Time) -> Self {
        RttEstimator { srtt: None, rttvar: Time::ZERO, rto: min, min, max }
    }

    /// A valid sample `r` (RFC 6298 §2.2-2.3: alpha = 1/8, beta = 1/4, K = 4, G = 0). A new
    /// RTO replaces a backed-off one (§5.7).
    pub fn sample(&mut self, r: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(s) => {
                let err = s.0.abs_diff(r.0);
                self.rttvar = Time((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Time((7 * s.0 + r.0) / 8));
            }
        }
        let s = self.srtt.expect("just set");
        self.rto = Time(s.0 + 4 * self.rttvar.0).max(self.min).min(self.max);
    }

    /// The timer expired: RTO doubles (RFC 6298 §5.5), up to the maximum.
    pub fn back_off(&mut self) {
        self.rto = Time(self.rto.0.saturating_mul(2)).min(self.max);
    }

    pub fn rto(&self) -> Time {
        self.rto
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
}

/// Sender side: NewReno fast retransmit and recovery plus an RFC 6298 timer.
#[derive(Clone, Debug)]
pub struct TcpSender {
    dupack_threshold: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// One past the highest index ever sent (SND.MAX).
    high: u64,
    npkts: u64,
    dupacks: u32,
    in_recovery: bool,
    /// One past the highest index sent when the last fast recovery or timeout began (RFC 6582
    /// `recover`, as an exclusive index).
    recover: u64,
    /// The hole to retransmit next (fast retransmit or partial ACK).
    rexmit: Option<u64>,
    /// Dupack inflation of the window in segments (see the module comment); 0 outside recovery.
    inflation: i64,
    /// No partial ACK yet in this recovery (the first one restarts the timer).
    first_partial: bool,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,
    pub fast_retransmits: u64,
    pub partial_acks: u64,
}

impl TcpSender {
    pub fn new(p: &TcpParams, npkts: u64) -> Self {
        TcpSender {
            dupack_threshold: p.dupack_threshold.max(1),
            snd_una: 0,
            snd_nxt: 0,
            high: 0,
            npkts,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            rexmit: None,
            inflation: 0,
            first_partial: false,
            rtt: RttEstimator::new(p.min_rto.0, p.max_rto.0),
            rto_deadline: None,
            fast_retransmits: 0,
            partial_acks: 0,
        }
    }

    /// The next segment to send: a pending hole retransmission first, then the next in
    /// sequence (a retransmission if below the highest ever sent, after a timeout).
    pub fn next(&mut self, now: Time) -> Option<(u64, bool)> {
        if let Some(hole) = self.next_hole(now) {
            return Some(hole);
        }
        if self.snd_nxt >= self.npkts {
            return None;
        }
        let i = self.snd_nxt;
        self.snd_nxt += 1;
        let retx = i < self.high;
        self.high = self.high.max(self.snd_nxt);
        self.arm(now);
        Some((i, retx))
    }

    /// Only a pending retransmission of a hole below snd_nxt (what the window gate lets out
    /// when the window is full).
    pub fn next_hole(&mut self, now: Time) -> Option<(u64, bool)> {
        let i = self.rexmit.take()?;
        if i < self.snd_una || i >= self.snd_nxt {
            return None; // acknowledged meanwhile, or a timeout rewound past it
        }
        self.arm(now);
        Some((i, true))
    }

    fn arm(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = (self.snd_una < self.high).then(|| now + self.rtt.rto());
    }

    /// A cumulative ACK of `cum` carrying a Karn-valid RTT sample `rtt` (None for an ACK of a
    /// retransmission). Returns true when it started fast retransmit.
    pub fn on_ack(&mut self, now: Time, cum: u64, rtt: Option<Time>) -> bool {
        if cum > self.high {
            return false; // acknowledges what was never sent: not ours
        }
        if cum > self.snd_una {
            let acked = cum - self.snd_una;
            self.snd_una = cum;
            self.snd_nxt = self.snd_nxt.max(cum);
            self.dupacks = 0;
            if let Some(r) = rtt {
                self.rtt.sample(r);
            }
            if self.in_recovery {
                if cum >= self.recover {
                    // Full ACK: recovery ends; the window is the controller's ssthresh again.
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.rexmit = None;
                    self.restart_rto(now);
                } else {
                    // Partial ACK: the next hole is lost too. Deflate by what was acknowledged,
                    // add back one segment (RFC 6582 §3.2 step 5).
                    self.partial_acks += 1;
                    self.rexmit = Some(cum);
                    self.inflation = self.inflation - acked as i64 + 1;
                    if std::mem::take(&mut self.first_partial) {
                        self.restart_rto(now);
                    }
                }
            } else {
                self.restart_rto(now);
            }
            return false;
        }
        if cum < self.snd_una || self.snd_una >= self.high {
            return false; // an old ACK, or nothing outstanding: not a duplicate
        }
        self.dupacks += 1;
        if self.in_recovery {
            self.inflation += 1; // one more segment left the network
            return false;
        }
        if self.dupacks == self.dupack_threshold && cum >= self.recover {
            self.in_recovery = true;
            self.recover = self.high;
            self.rexmit = Some(self.snd_una);
            self.inflation = self.dupack_threshold as i64;
            self.first_partial = true;
            self.fast_retransmits += 1;
            return true;
        }
        false
    }

    /// The timer expired: back off, leave fast recovery, go back to snd_una. Returns true if
    /// it fired with data outstanding.
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        match self.rto_deadline {
            Some(t) if now >= t && self.snd_una < self.high => {
                self.rtt.back_off();
                self.recover = self.high;
                self.in_recovery = false;
                self.inflation = 0;
                self.rexmit = None;
                self.dupacks = 0;
                self.snd_nxt = self.snd_una;
                self.rto_deadline = Some(now + self.rtt.rto());
                true
            }
            Some(t) if now >= t => {
                self.rto_deadline = None;
                false
            }
            _ => false,
        }
    }

    /// RFC 6582's dupack inflation of the window, in segments (0 outside fast recovery).
    pub fn inflation(&self) -> i64 {
        self.inflation
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn recover(&self) -> u64 {
        self.recover
    }

    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

}

/// Receiver side: a reorder queue and cumulative ACKs.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    ack_interval: u32,
    unacked: u32,
    /// Out-of-order segments by index: (payload digest, payload bytes).
    ooo: BTreeMap<u64, (u32, u32)>,
    /// RFC 8257's DCTCP.CE: the mark of the latest data segment.
    ce: bool,
    pub stored_bytes: u64,
    pub copied_bytes: u64,
    pub dupacks_sent: u64,
    pub max_buffered: u64,
}

impl TcpReceiver {
    pub fn new(ack_interval: u32) -> Self {
        TcpReceiver {
            ack_interval: ack_interval.max(1),
            unacked: 0,
            ooo: BTreeMap::new(),
            ce: false,
            stored_bytes: 0,
            copied_bytes: 0,
            dupacks_sent: 0,
            max_buffered: 0,
        }
    }

    fn ack(&mut self, now: Time, seg: &Segment, rx: &mut RxCtx) {
        let mut a = Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg);
        a.ece = self.ce;
        a.retransmit = seg.retransmit;
        self.unacked = 0;
        rx.send(a);
    }

    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx) {
        let marked = seg.ecn == Ecn::Ce;
        if marked != self.ce {
            // RFC 8257 §3.2: the CE state flips; segments already received are acknowledged
            // at once with the old state.
            if self.unacked > 0 {
                self.ack(now, seg, rx);
            }
            self.ce = marked;
        }
        let expected = rx.expected();
        if index == expected {
            rx.deliver(now, index, seg.tag, seg.payload);
            let mut filled = false;
            while let Some(e) = self.ooo.first_entry() {
                if *e.key() != rx.expected() {
                    break;
                }
                let (i, (tag, bytes)) = e.remove_entry();
                rx.deliver(now, i, tag, bytes);
                self.copied_bytes += bytes as u64;
                filled = true;
            }
            self.unacked += 1;
            if filled || self.unacked >= self.ack_interval || seg.last || rx.is_complete() {
                self.ack(now, seg, rx);
            }
        } else {
            if index > expected && !self.ooo.contains_key(&index) {
                self.ooo.insert(index, (seg.tag, seg.payload));
                self.stored_bytes += seg.payload as u64;
                self.max_buffered = self.max_buffered.max(self.ooo.len() as u64);
            }
            // Out of order or a duplicate: an immediate (duplicate) ACK.
            self.dupacks_sent += 1;
            self.ack(now, seg, rx);
        }
    }
}

impl SendRecovery for TcpSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        self.rexmit.is_some() || self.snd_nxt < self.npkts
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    /// A response from the receiver (only ACKs are TCP's). Returns true when it started fast
    /// retransmit: the loss congestion control hears of, once per episode.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        if seg.kind != SegKind::Ack {
            return false;
        }
        let Some(cum) = at.index(seg.psn) else { return false };
        let rtt = (!seg.retransmit && seg.echo_ts > Time::ZERO && now >= seg.echo_ts).then(|| now - seg.echo_ts);
        self.on_ack(now, cum, rtt)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
    }
    fn next(&mut self, now: Time, _rate: crate::sim::units::Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        TcpSender::next(self, now)
    }
    fn next_past_closed_window(&mut self, now: Time) -> Option<(u64, bool)> {
        self.next_hole(now)
    }
    fn window_inflation(&self) -> i64 {
        self.inflation()
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        TcpSender::handle_timeout(self, now)
    }
}

impl ReceiveRecovery for TcpReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        TcpReceiver::on_data(self, now, index, seg, rx);
    }
    fn echoes_congestion(&self) -> bool {
        true
    }
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::common::psn::PsnSpace;
    use crate::transport::NicAgent;

    fn sender(n: u64) -> TcpSender {
        TcpSender::new(&TcpParams { min_rto: Dur(Time::from_us(100)), ..TcpParams::default() }, n)
    }

    fn send_all(s: &mut TcpSender, now: Time, k: u64) -> Vec<(u64, bool)> {
        (0..k).map_while(|_| s.next(now)).collect()
    }

    fn us(t: u64) -> Time {
        Time::from_us(t)
    }

    #[test]
    fn three_duplicate_acks_fast_retransmit_snd_una() {
        let mut s = sender(20);
        assert_eq!(send_all(&mut s, us(0), 10).len(), 10);
        // Segment 3 is lost: ACK 1, 2, 3, then duplicates of 3 for 4, 5, 6.
        for cum in 1..=3 {
            assert!(!s.on_ack(us(10), cum, Some(us(10))));
        }
        assert!(!s.on_ack(us(11), 3, Some(us(11))));
        assert!(!s.on_ack(us(11), 3, Some(us(11))));
        assert_eq!(s.inflation(), 0);
        assert!(s.on_ack(us(11), 3, Some(us(11))), "the third duplicate starts fast retransmit");
        assert!(s.in_recovery());
        assert_eq!(s.recover(), 10);
        assert_eq!(s.inflation(), 3);
        // The retransmission goes first, even with the window full (next_hole).
        assert_eq!(s.next_hole(us(12)), Some((3, true)));
        assert_eq!(s.next(us(12)), Some((10, false)));
        // A fourth duplicate inflates by one, and is not a new loss.
        assert!(!s.on_ack(us(13), 3, None));
        assert_eq!(s.inflation(), 4);
        assert_eq!(s.fast_retransmits, 1);
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole_and_stays_in_recovery() {
        let mut s = sender(30);
        send_all(&mut s, us(0), 10);
        s.on_ack(us(10), 2, Some(us(10)));
        for _ in 0..3 {
            s.on_ack(us(11), 2, None);
        }
        assert_eq!(s.next_hole(us(11)), Some((2, true)));
        for _ in 0..4 {
            s.on_ack(us(12), 2, None); // 4 more duplicates: inflation 3 + 4
        }
        assert_eq!(s.inflation(), 7);
        // The retransmitted 2 arrives; 5 was lost too: the ACK stops at 5 (partial: 5 < 10).
        assert!(!s.on_ack(us(20), 5, None));
        assert!(s.in_recovery());
        assert_eq!(s.partial_acks, 1);
        assert_eq!(s.inflation(), 7 - 3 + 1, "deflated by the 3 acknowledged, plus one");
        assert_eq!(s.next_hole(us(20)), Some((5, true)));
        assert_eq!(s.next_hole(us(20)), None, "one retransmission per partial ACK");
        // The first partial ACK restarted the timer; a second one does not (Impatient).
        assert_eq!(s.poll_timeout(), Some(us(20) + s.rto()));
        s.on_ack(us(25), 6, None);
        assert_eq!(s.poll_timeout(), Some(us(20) + s.rto()));
        assert_eq!(s.next_hole(us(25)), Some((6, true)));
    }

    #[test]
    fn full_ack_leaves_recovery_and_drops_the_inflation() {
        let mut s = sender(30);
        send_all(&mut s, us(0), 10);
        for _ in 0..4 {
            s.on_ack(us(10), 0, None);
        }
        assert!(s.in_recovery());
        assert_eq!(s.recover(), 10);
        s.next_hole(us(10));
        assert!(!s.on_ack(us(20), 10, None));
        assert!(!s.in_recovery());
        assert_eq!(s.inflation(), 0, "the window is the controller's cwnd = ssthresh again");
        // A new episode needs three fresh duplicates above recover.
        send_all(&mut s, us(20), 5);
        for _ in 0..2 {
            s.on_ack(us(21), 10, None);
        }
        assert!(s.on_ack(us(21), 10, None));
        assert_eq!(s.fast_retransmits, 2);
    }

    #[test]
    fn rto_resends_from_snd_una_and_doubles() {
        let mut s = sender(10);
        send_all(&mut s, us(0), 6);
        // A sample of 20 us: SRTT 20, RTTVAR 10, RTO = max(100, 20 + 40) = 100 us.
        s.on_ack(us(20), 2, Some(us(20)));
        assert_eq!(s.rtt().srtt(), Some(us(20)));
        assert_eq!(s.rtt().rttvar(), us(10));
        assert_eq!(s.rto(), us(100));
        assert_eq!(s.poll_timeout(), Some(us(120)));
        assert!(!s.handle_timeout(us(119)));
        assert!(s.handle_timeout(us(120)));
        assert_eq!(s.rto(), us(200));
        assert_eq!(s.poll_timeout(), Some(us(320)));
        assert_eq!(s.recover(), 6);
        // Go back to snd_una: 2..6 again, as retransmissions, then 6 as new data.
        assert_eq!(send_all(&mut s, us(121), 5), vec![(2, true), (3, true), (4, true), (5, true), (6, false)]);
        assert!(s.handle_timeout(us(320)));
        assert_eq!(s.rto(), us(400));
        // Duplicates of the resends do not start a fast retransmit (below recover)...
        send_all(&mut s, us(321), 3);
        for _ in 0..3 {
            assert!(!s.on_ack(us(330), 2, None));
        }
        // ...and an ACK without a valid sample keeps the backed-off RTO (Karn).
        s.on_ack(us(340), 4, None);
        assert_eq!(s.rto(), us(400));
        // A fresh sample collapses it: RTTVAR = 3/4 10 + 1/4 |20 - 60| = 17.5, SRTT = 25.
        s.on_ack(us(400), 5, Some(us(60)));
        assert_eq!(s.rtt().srtt(), Some(us(25)));
        assert_eq!(s.rto(), us(100));
    }

    #[test]
    fn the_rto_is_bounded_by_min_and_max() {
        let p = TcpParams { min_rto: Dur(us(100)), max_rto: Dur(us(300)), ..TcpParams::default() };
        let mut e = RttEstimator::new(p.min_rto.0, p.max_rto.0);
        e.sample(us(1));
        assert_eq!(e.rto(), us(100));
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), us(300));
        e.sample(us(200)); // rttvar = 3/4 * 0.5 + 1/4 * 199 = 50.125; srtt = 25.875 -> 226.375 us
        assert_eq!(e.rto(), Time(226_375_000));
    }

    #[test]
    fn the_receiver_buffers_dupacks_and_echoes_marks() {
        let spec = crate::transport::common::flow::FlowSpec { size: 5_000, mtu: 1_000, initial_psn: 7, key: 9, marking: Default::default() };
        let psn = PsnSpace::new(7);
        let mut rx = crate::transport::Receiver::new(spec, crate::transport::RxRecovery::Tcp(TcpReceiver::new(1)), None);
        let mut nic = NicAgent::new(&crate::transport::Template::of(crate::transport::RecoveryParams::Tcp(TcpParams::default()), crate::transport::CcParams::None(Default::default())));
        let mut acks = Vec::new();
        let mut feed = |rx: &mut crate::transport::Receiver, i: u64, ce: bool, retx: bool| {
            let mut seg = Segment::data(psn.wire(i), 1_000, crate::transport::common::segment::payload_tag(9, i), us(i + 1));
            seg.ecn = if ce { Ecn::Ce } else { Ecn::Ect };
            seg.retransmit = retx;
            seg.last = i == 4;
            rx.handle_packet(us(10 + i), &seg, &mut nic.call(0));
            while let crate::transport::common::poll::Transmit::Send(a) = rx.poll_transmit(us(10), &mut nic.call(0), crate::transport::common::poll::Want::Responses) {
                acks.push((psn.unwrap(a.psn, 0).unwrap(), a.ece, a.retransmit));
            }
        };
        feed(&mut rx, 0, false, false);
        feed(&mut rx, 2, true, false); // out of order, marked: immediate duplicate ACK echoing it
        feed(&mut rx, 3, false, false);
        feed(&mut rx, 1, false, true); // fills the hole: ACK 4 at once, flagged as a retransmission's
        feed(&mut rx, 4, false, false);
        assert_eq!(acks, vec![(1, false, false), (1, true, false), (1, false, false), (4, false, true), (5, false, false)]);
        assert_eq!(rx.ctx.bad_deliveries, 0);
        assert_eq!(rx.ctx.delivered_bytes, 5_000);
        assert_eq!(rx.reorder_stats(), (2_000, 2_000, 0));
    }

    fn nic() -> NicAgent {
        NicAgent::new(&crate::transport::Template::of(crate::transport::RecoveryParams::Tcp(TcpParams::default()), crate::transport::CcParams::None(Default::default())))
    }

    /// The QP's PSNs start two below the 24-bit wrap, so index 2 is PSN 0 on the wire.
    fn space() -> PsnSpace {
        PsnSpace::new(crate::transport::common::psn::PSN_MASK - 1)
    }

    /// The receiver's response of `kind` naming index `cum`, sent at `now` in reply to a data
    /// segment stamped `echo` (Time::ZERO: no timestamp) that was a retransmission if `retx`.
    fn response(kind: SegKind, cum: u64, echo: Time, retx: bool, now: Time) -> Segment {
        let data = Segment::data(space().wire(cum.saturating_sub(1)), 1_000, 0, echo);
        let mut a = Segment::reply(kind, space().wire(cum), now, &data);
        a.retransmit = retx;
        a
    }

    /// `on_feedback` as the sender calls it: the PSN read against snd_una.
    fn feedback(s: &mut TcpSender, now: Time, seg: &Segment) -> bool {
        let at = PsnReader { space: space(), reference: s.snd_una() };
        s.on_feedback(now, seg, at, &mut nic().call(0))
    }

    #[test]
    fn on_feedback_takes_an_rtt_sample_only_from_a_timestamped_ack_of_a_first_transmission() {
        let mut s = sender(10);
        send_all(&mut s, us(0), 6);
        // An ACK of a retransmission (Karn): snd_una moves, no sample, the RTO stays at min.
        assert!(!feedback(&mut s, us(30), &response(SegKind::Ack, 1, us(5), true, us(30))));
        assert_eq!(s.snd_una(), 1);
        assert_eq!(s.rtt().srtt(), None);
        // An ACK whose segment carried no timestamp: no sample (not now - 0 = 35 us).
        assert!(!feedback(&mut s, us(35), &response(SegKind::Ack, 2, Time::ZERO, false, us(35))));
        assert_eq!(s.snd_una(), 2);
        assert_eq!(s.rtt().srtt(), None);
        // An echo from the future (now < echo): no sample.
        assert!(!feedback(&mut s, us(40), &response(SegKind::Ack, 3, us(50), false, us(40))));
        assert_eq!(s.snd_una(), 3);
        assert_eq!(s.rtt().srtt(), None);
        assert_eq!(s.rto(), us(100));
        // A valid one: 60 - 20 = 40 us; RTTVAR 20, RTO = 40 + 4 x 20 = 120 us (above min).
        assert!(!feedback(&mut s, us(60), &response(SegKind::Ack, 4, us(20), false, us(60))));
        assert_eq!(s.snd_una(), 4);
        assert_eq!(s.rtt().srtt(), Some(us(40)));
        assert_eq!(s.rtt().rttvar(), us(20));
        assert_eq!(s.rto(), us(120));
        assert_eq!(s.poll_timeout(), Some(us(180)));
    }

    #[test]
    fn on_feedback_ignores_all_but_acks_and_reports_the_third_duplicate() {
        let mut s = sender(10);
        send_all(&mut s, us(0), 6);
        assert_eq!(s.poll_timeout(), Some(us(100)));
        // A NAK, a CNP and a data segment naming index 4 are not TCP's: nothing moves.
        for kind in [SegKind::Nak, SegKind::Cnp, SegKind::Data] {
            assert!(!feedback(&mut s, us(10), &response(kind, 4, us(1), false, us(10))));
        }
        assert_eq!(s.snd_una(), 0);
        assert_eq!(s.rtt().srtt(), None);
        assert_eq!(s.poll_timeout(), Some(us(100)));
        // The ACK of index 2 (PSN 0 on the wire) moves snd_una.
        assert!(!feedback(&mut s, us(12), &response(SegKind::Ack, 2, us(2), false, us(12))));
        assert_eq!(s.snd_una(), 2);
        assert_eq!(s.rtt().srtt(), Some(us(10)));
        // Three duplicates of it: the third starts fast retransmit, and on_feedback says so.
        assert!(!feedback(&mut s, us(13), &response(SegKind::Ack, 2, us(3), false, us(13))));
        assert!(!feedback(&mut s, us(14), &response(SegKind::Ack, 2, us(4), false, us(14))));
        assert!(feedback(&mut s, us(15), &response(SegKind::Ack, 2, us(5), false, us(15))));
        assert!(s.in_recovery());
        assert_eq!(s.next_hole(us(15)), Some((2, true)));
    }

    #[test]
    fn has_data_until_the_last_segment_is_sent_or_while_a_hole_waits() {
        assert!(!sender(0).has_data(), "an empty message has nothing to send");
        let mut s = sender(3);
        assert!(s.has_data());
        assert_eq!(send_all(&mut s, us(0), 2).len(), 2);
        assert!(s.has_data(), "snd_nxt 2 < 3");
        assert_eq!(s.next(us(0)), Some((2, false)));
        assert!(!s.has_data(), "snd_nxt 3 = 3: all sent");
        assert_eq!(s.next(us(0)), None);
        // Segment 1 is lost: three duplicates of 1 queue its retransmission.
        s.on_ack(us(10), 1, None);
        for _ in 0..3 {
            s.on_ack(us(11), 1, None);
        }
        assert!(s.has_data(), "a hole waits although everything was sent");
        assert_eq!(s.next(us(12)), Some((1, true)));
        assert!(!s.has_data());
        assert!(!s.is_done());
        s.on_ack(us(20), 3, None);
        assert!(s.is_done());
    }

    #[test]
    fn the_timer_is_armed_by_the_first_send_and_stopped_when_everything_is_acknowledged() {
        let mut s = sender(10);
        assert_eq!(s.poll_timeout(), None);
        s.next(us(5));
        assert_eq!(s.poll_timeout(), Some(us(105)), "armed at the first send: 5 + RTO 100");
        s.next(us(7));
        assert_eq!(s.poll_timeout(), Some(us(105)), "a later send leaves a running timer");
        assert_eq!((s.snd_una(), s.snd_nxt()), (0, 2));
        // An ACK of new data with data still outstanding restarts it.
        s.on_ack(us(30), 1, None);
        assert_eq!(s.poll_timeout(), Some(us(130)));
        assert!(!s.is_done());
        // The ACK of everything sent (snd_una = high = 2) stops it.
        s.on_ack(us(40), 2, None);
        assert_eq!((s.snd_una(), s.snd_nxt()), (2, 2));
        assert_eq!(s.poll_timeout(), None);
        assert!(!s.handle_timeout(us(500)));
        // The next send arms it again from its own time.
        assert_eq!(s.next(us(50)), Some((2, false)));
        assert_eq!(s.poll_timeout(), Some(us(150)));
        assert!(!s.is_done());
    }

    #[test]
    fn old_acks_and_acks_with_nothing_outstanding_are_not_duplicates() {
        let mut s = sender(20);
        send_all(&mut s, us(0), 5);
        s.on_ack(us(10), 5, None);
        // Everything sent is acknowledged: more ACKs of 5 are not duplicates.
        for _ in 0..3 {
            assert!(!s.on_ack(us(11), 5, None));
        }
        assert!(!s.in_recovery());
        send_all(&mut s, us(12), 5);
        // ACKs from below snd_una (reordered, old) are not duplicates either.
        for _ in 0..3 {
            assert!(!s.on_ack(us(13), 3, None));
        }
        assert!(!s.in_recovery());
        assert_eq!(s.snd_una(), 5);
        // Only the third real duplicate of 5 starts fast retransmit.
        assert!(!s.on_ack(us(14), 5, None));
        assert!(!s.on_ack(us(14), 5, None));
        assert!(s.on_ack(us(14), 5, None));
        assert_eq!(s.recover(), 10);
        assert_eq!(s.fast_retransmits, 1);
    }

    #[test]
    fn next_hole_drops_a_pending_hole_outside_snd_una_to_snd_nxt() {
        // The recovery paths keep a pending hole at snd_una; this checks next_hole's guard
        // against any other value by setting the hole directly.
        let mut s = sender(10);
        send_all(&mut s, us(0), 6);
        s.on_ack(us(10), 2, None);
        assert_eq!((s.snd_una(), s.snd_nxt()), (2, 6));
        s.rexmit = Some(1);
        assert_eq!(s.next_hole(us(11)), None, "already acknowledged");
        s.rexmit = Some(6);
        assert_eq!(s.next_hole(us(11)), None, "at snd_nxt: never sent since a rewind");
        s.rexmit = Some(2);
        assert_eq!(s.next_hole(us(11)), Some((2, true)));
        s.rexmit = Some(5);
        assert_eq!(s.next_hole(us(11)), Some((5, true)));
        assert_eq!(s.next_hole(us(11)), None, "taken");
    }

    #[test]
    fn a_timer_expiring_with_nothing_outstanding_just_stops() {
        // The ACK paths stop the timer whenever snd_una reaches high, so this sets the deadline
        // directly: handle_timeout's second arm disarms without a back-off or a rewind.
        let mut s = sender(10);
        send_all(&mut s, us(0), 3);
        s.on_ack(us(10), 3, None);
        assert_eq!(s.poll_timeout(), None);
        s.rto_deadline = Some(us(50));
        assert!(!s.handle_timeout(us(49)));
        assert_eq!(s.poll_timeout(), Some(us(50)), "not expired yet");
        assert!(!s.handle_timeout(us(50)), "nothing outstanding: not a timeout");
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(s.rto(), us(100), "no back-off");
        assert_eq!((s.snd_una(), s.snd_nxt(), s.recover()), (3, 3, 0));
    }

    /// Feeds data segments (index, CE-marked, retransmission, last flag) of a message of
    /// `npkts` x 1000 B to a TCP receiver acknowledging every `ack_interval` segments; returns
    /// the ACKs (cumulative index, ece, retransmit echo) and the receiver.
    fn receive(npkts: u64, ack_interval: u32, feeds: &[(u64, bool, bool, bool)]) -> (Vec<(u64, bool, bool)>, crate::transport::Receiver) {
        use crate::transport::{Receiver, RxRecovery};
        let spec = crate::transport::common::flow::FlowSpec { size: npkts * 1_000, mtu: 1_000, initial_psn: 7, key: 9, marking: Default::default() };
        let psn = PsnSpace::new(7);
        let mut rx = Receiver::new(spec, RxRecovery::Tcp(TcpReceiver::new(ack_interval)), None);
        let mut nic = nic();
        let mut acks = Vec::new();
        for &(i, ce, retx, last) in feeds {
            let mut seg = Segment::data(psn.wire(i), 1_000, crate::transport::common::segment::payload_tag(9, i), us(i + 1));
            seg.ecn = if ce { Ecn::Ce } else { Ecn::Ect };
            seg.retransmit = retx;
            seg.last = last;
            rx.handle_packet(us(10 + i), &seg, &mut nic.call(0));
            while let crate::transport::common::poll::Transmit::Send(a) = rx.poll_transmit(us(10), &mut nic.call(0), crate::transport::common::poll::Want::Responses) {
                assert_eq!(a.kind, SegKind::Ack);
                acks.push((psn.unwrap(a.psn, 0).unwrap(), a.ece, a.retransmit));
            }
        }
        (acks, rx)
    }

    fn tcp_rx(rx: &crate::transport::Receiver) -> &TcpReceiver {
        match rx.recovery() {
            crate::transport::RxRecovery::Tcp(r) => r,
            _ => unreachable!("a TCP receiver"),
        }
    }

    #[test]
    fn a_ce_flip_first_acknowledges_the_segments_before_it_with_the_old_mark() {
        // ACK every 2 in-order segments; the mark turns on at 1 and off at 5.
        let (m, u) = (true, false);
        let feeds = [(0, u, false, false), (1, m, false, false), (2, m, false, false), (3, m, false, false), (4, m, false, false), (5, u, false, false), (6, u, false, false), (7, u, false, true)];
        let (acks, rx) = receive(8, 2, &feeds);
        assert_eq!(
            acks,
            vec![
                (1, false, false), // at the flip at 1: segment 0 with the old state
                (3, true, false),  // 1 and 2
                (5, true, false),  // 3 and 4; the flip at 5 finds nothing unacknowledged
                (7, false, false), // 5 and 6
                (8, false, false), // the last one at once
            ]
        );
        assert_eq!(rx.ctx.bad_deliveries, 0);
        assert_eq!(rx.ctx.delivered_bytes, 8_000);
        assert_eq!(tcp_rx(&rx).dupacks_sent, 0);
    }

    #[test]
    fn duplicates_are_acknowledged_at_once_and_stored_once() {
        let feeds = [
            (0, false, false, false),
            (1, false, false, false), // second in order: ACK 2
            (0, false, true, false),  // an old duplicate: dupack, not stored
            (3, false, false, false), // out of order: stored, dupack
            (3, false, true, false),  // again: dupack, not stored twice
            (2, false, true, false),  // fills the hole: 2 and 3 delivered, ACK 4 at once
            (4, false, false, false), // completes the message (no last flag): ACK 5 at once
        ];
        let (acks, rx) = receive(5, 2, &feeds);
        assert_eq!(acks, vec![(2, false, false), (2, false, true), (2, false, false), (2, false, true), (4, false, true), (5, false, false)]);
        assert_eq!(rx.ctx.bad_deliveries, 0);
        assert_eq!(rx.ctx.delivered_bytes, 5_000);
        assert_eq!(rx.reorder_stats(), (1_000, 1_000, 0));
        assert_eq!(tcp_rx(&rx).dupacks_sent, 3);
        assert_eq!(tcp_rx(&rx).max_buffered, 1);
    }
}
