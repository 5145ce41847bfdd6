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
//! The congestion controller (`Cc`, e.g. [`super::reno`]) owns cwnd and ssthresh: on the loss
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

use super::psn::PsnReader;
use super::receiver::RxCtx;
use super::segment::{Ecn, SegKind, Segment};
use super::NicState;
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

    pub fn has_data(&self) -> bool {
        self.rexmit.is_some() || self.snd_nxt < self.npkts
    }

    fn arm(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = (self.snd_una < self.high).then(|| now + self.rtt.rto());
    }

    /// A response from the receiver (only ACKs are TCP's). Returns true when it started fast
    /// retransmit: the loss congestion control hears of, once per episode.
    pub fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicState) -> bool {
        if seg.kind != SegKind::Ack {
            return false;
        }
        let Some(cum) = at.index(seg.psn) else { return false };
        let rtt = (!seg.retransmit && seg.echo_ts > Time::ZERO && now >= seg.echo_ts).then(|| now - seg.echo_ts);
        self.on_ack(now, cum, rtt)
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

    pub fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
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

    pub fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::psn::PsnSpace;

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
        let spec = crate::transport::FlowSpec { size: 5_000, mtu: 1_000, initial_psn: 7, key: 9 };
        let psn = PsnSpace::new(7);
        let mut rx = crate::transport::receiver::Receiver::new(spec, crate::transport::receiver::RxRecovery::Tcp(TcpReceiver::new(1)), None);
        let mut nic = NicState::new(&crate::transport::Template {
            recovery: crate::transport::RecoveryParams::Tcp(TcpParams::default()),
            cc: crate::transport::CcParams::None,
            ack_interval: 1,
            qp_swap: Default::default(),
            int_header: 0,
        });
        let mut acks = Vec::new();
        let mut feed = |rx: &mut crate::transport::receiver::Receiver, i: u64, ce: bool, retx: bool| {
            let mut seg = Segment::data(psn.wire(i), 1_000, crate::transport::segment::payload_tag(9, i), us(i + 1));
            seg.ecn = if ce { Ecn::Ce } else { Ecn::Ect };
            seg.retransmit = retx;
            seg.last = i == 4;
            rx.handle_packet(us(10 + i), &seg, &mut nic);
            while let crate::transport::sender::Transmit::Send(a) = rx.poll_transmit(us(10), &mut nic, crate::transport::endpoint::Want::Responses) {
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
}
