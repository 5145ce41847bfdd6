//! TCP Reno congestion control (RFC 5681) as a window of payload bytes in flight, and the
//! window core ([`Window`]) that DCTCP ([`crate::transport::cc::dctcp_window`]) and Vegas ([`crate::transport::cc::vegas`])
//! build on.
//!
//! Slow start adds min(acked, MSS) per ACK while cwnd < ssthresh (RFC 5681 eq. 2); congestion
//! avoidance adds one MSS per cwnd of acknowledged bytes, i.e. one MSS per RTT (the byte
//! counting of RFC 5681 §3.1 / RFC 3465, exact with coalesced ACKs). A loss reported by the
//! recovery scheme sets ssthresh = max(FlightSize / 2, 2 MSS) and cwnd = ssthresh (RFC 5681
//! eq. 4), at most once per window: until the cumulative ACK passes the `snd_nxt` of the cut,
//! further losses (or ECN echoes) neither cut again nor grow the window; the ACK that passes
//! it ends the episode without growing. With `recovery = "tcp"` that point is NewReno's
//! `recover`, and the dupack inflation during fast recovery is added by the recovery scheme,
//! not here (see the module comment of [`crate::transport::loss::tcp`]). A timeout sets cwnd to one MSS (the
//! loss window) and ssthresh = max(FlightSize / 2, 2 MSS), except that ssthresh is held while
//! the same data times out again (RFC 5681 §3.1, after eq. 4).

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::feedback::{AckSample, Flight};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// Start in slow start (ssthresh unbounded, RFC 5681 §3.1); false: congestion avoidance
    /// from the initial window.
    pub slow_start: bool,
    /// Initial window in segments (RFC 6928: 10); 0 means one bandwidth-delay product of the
    /// run's longest base path.
    pub initial_window: u32,
    /// React to ECN echoes by halving once per window (RFC 3168 §6.1.2). Default false: plain
    /// TCP as Linux opens it (`net.ipv4.tcp_ecn = 2` accepts ECN but does not ask for it).
    pub ecn: bool,
}

impl Default for RenoParams {
    fn default() -> Self {
        RenoParams { slow_start: true, initial_window: 10, ecn: false }
    }
}

impl Controller for RenoParams {
    const NAME: &'static str = "reno";
    const IS_WINDOW: bool = true;
    type Cc = Reno;

    /// Fields by their names within `[cc.reno]`.
    fn check(&self) -> Checked {
        check::range_u32("initial_window", self.initial_window, 0, 1 << 20)
    }

    fn build(&self, s: &CcSetup) -> Reno {
        Reno::new(self, s.mss, s.path.bdp_bytes)
    }
}

/// The initial window in bytes: `segments` MSS, or one BDP (at least one MSS) for 0.
pub fn initial_window(segments: u32, mss: u64, bdp_bytes: u64) -> u64 {
    if segments == 0 { bdp_bytes.max(mss) } else { segments as u64 * mss }
}

/// cwnd and ssthresh with Reno's growth, cuts once per window and the timeout response.
#[derive(Clone, Debug)]
pub struct Window {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged towards the next MSS of congestion avoidance.
    acked: u64,
    /// A cut is in force until the cumulative ACK reaches this index (snd_nxt at the cut).
    reduced_until: Option<u64>,
    /// Timed out, and no new data acknowledged since: a further timeout keeps ssthresh.
    after_timeout: bool,
    /// Multiplicative decreases (loss or ECN), timeouts.
    pub cuts: u64,
    pub timeouts: u64,
}

impl Window {
    pub fn new(mss: u64, initial: u64, slow_start: bool) -> Self {
        let mss = mss.max(1);
        Window {
            mss,
            cwnd: initial.max(mss),
            ssthresh: if slow_start { u64::MAX } else { initial.max(mss) },
            acked: 0,
            reduced_until: None,
            after_timeout: false,
            cuts: 0,
            timeouts: 0,
        }
    }

    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    pub fn mss(&self) -> u64 {
        self.mss
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// A cut is in force for an acknowledgement of `cum`.
    pub fn in_reduction(&self, cum: u64) -> bool {
        self.reduced_until.is_some_and(|end| cum < end)
    }

    /// Sets cwnd directly (Vegas), never below two segments; ssthresh follows if `exit_slow_start`.
    pub fn set_cwnd(&mut self, bytes: u64, exit_slow_start: bool) {
        self.cwnd = bytes.max(2 * self.mss);
        if exit_slow_start {
            self.ssthresh = self.ssthresh.min(self.cwnd.saturating_sub(self.mss).max(2 * self.mss));
        }
    }

    /// An acknowledgement: ends a cut it passes (without growing), else grows by Reno's rules.
    pub fn on_ack(&mut self, s: &AckSample) {
        if s.acked_bytes > 0 {
            self.after_timeout = false;
        }
        if let Some(end) = self.reduced_until {
            if s.cum < end {
                return;
            }
            self.reduced_until = None;
            return;
        }
        self.grow(s.acked_bytes);
    }

    /// Reno growth for `acked` newly acknowledged bytes.
    pub fn grow(&mut self, acked: u64) {
        if acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.mss);
            return;
        }
        self.acked += acked;
        while self.acked >= self.cwnd {
            self.acked -= self.cwnd;
            self.cwnd += self.mss;
        }
    }

    /// Slow-start growth only (what Vegas does between its once-per-RTT adjustments).
    pub fn slow_start(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.mss);
        }
    }

    /// A multiplicative decrease to `target` bytes (at least two segments), unless a cut is
    /// already in force for `cum`; it lasts until the cumulative ACK passes `snd_nxt`.
    /// Returns whether it cut.
    pub fn reduce(&mut self, target: u64, cum: u64, snd_nxt: u64) -> bool {
        if self.in_reduction(cum) {
            return false;
        }
        self.ssthresh = target.max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.acked = 0;
        self.reduced_until = Some(snd_nxt);
        self.cuts += 1;
        true
    }

    /// A loss the recovery scheme detected: halve the flight (RFC 5681 eq. 4).
    pub fn on_loss(&mut self, f: &Flight) -> bool {
        self.reduce(f.bytes / 2, f.snd_una, f.snd_nxt)
    }

    /// The retransmission timer expired: cwnd = 1 MSS, slow start up to ssthresh.
    pub fn on_timeout(&mut self, f: &Flight) {
        if !self.after_timeout {
            self.ssthresh = (f.bytes / 2).max(2 * self.mss);
        }
        self.cwnd = self.mss;
        self.acked = 0;
        self.reduced_until = None;
        self.after_timeout = true;
        self.timeouts += 1;
    }
}

/// TCP Reno.
#[derive(Clone, Debug)]
pub struct Reno {
    pub w: Window,
    ecn: bool,
}

impl Reno {
    pub fn new(p: &RenoParams, mss: u64, bdp_bytes: u64) -> Self {
        Reno { w: Window::new(mss, initial_window(p.initial_window, mss, bdp_bytes), p.slow_start), ecn: p.ecn }
    }

    pub fn window(&self) -> u64 {
        self.w.cwnd()
    }

    pub fn on_ack(&mut self, s: &AckSample) {
        if self.ecn && s.ece {
            self.w.reduce(self.w.cwnd() / 2, s.cum, s.snd_nxt);
        }
        self.w.on_ack(s);
    }

    pub fn on_loss(&mut self, f: &Flight) {
        self.w.on_loss(f);
    }

    pub fn on_timeout(&mut self, f: &Flight) {
        self.w.on_timeout(f);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn ack(cum: u64, acked_bytes: u64, snd_nxt: u64) -> AckSample {
        AckSample { cum, acked_bytes, snd_nxt, ece: false, rtt: None, one_way: None, int: Default::default() }
    }

    const MSS: u64 = 1_000;

    #[test]
    fn slow_start_then_one_mss_per_rtt() {
        let mut r = Reno::new(&RenoParams::default(), MSS, 0);
        assert_eq!(r.window(), 10 * MSS, "RFC 6928 initial window");
        for i in 1..=10 {
            r.on_ack(&ack(i, MSS, 20));
        }
        assert_eq!(r.window(), 20 * MSS, "slow start doubles per window");
        // Congestion avoidance from ssthresh = 20 MSS: +1 MSS after a whole cwnd is acked.
        r.on_loss(&Flight { bytes: 40 * MSS, snd_una: 10, snd_nxt: 50 });
        assert_eq!((r.window(), r.w.ssthresh()), (20 * MSS, 20 * MSS));
        r.on_ack(&ack(30, 20 * MSS, 50)); // inside the cut: no growth
        assert_eq!(r.window(), 20 * MSS);
        r.on_ack(&ack(50, 20 * MSS, 60)); // passes snd_nxt of the cut: ends it, no growth
        assert_eq!(r.window(), 20 * MSS);
        for i in 0..19 {
            r.on_ack(&ack(51 + i, MSS, 80));
        }
        assert_eq!(r.window(), 20 * MSS);
        r.on_ack(&ack(70, MSS, 80));
        assert_eq!(r.window(), 21 * MSS, "one MSS per cwnd of acknowledged bytes");
    }

    #[test]
    fn full_ack_leaves_recovery_with_cwnd_at_ssthresh() {
        let mut r = Reno::new(&RenoParams { slow_start: false, initial_window: 32, ecn: false }, MSS, 0);
        r.on_loss(&Flight { bytes: 32 * MSS, snd_una: 0, snd_nxt: 32 });
        assert_eq!((r.window(), r.w.ssthresh()), (16 * MSS, 16 * MSS));
        // A second loss inside the episode (a NewReno partial ACK's hole) does not cut again.
        r.on_loss(&Flight { bytes: 30 * MSS, snd_una: 5, snd_nxt: 32 });
        assert_eq!(r.window(), 16 * MSS);
        r.on_ack(&ack(32, 27 * MSS, 40));
        assert_eq!(r.window(), r.w.ssthresh());
        assert_eq!(r.w.cuts, 1);
    }

    #[test]
    fn timeout_sets_one_mss_and_holds_ssthresh_on_repeats() {
        let mut r = Reno::new(&RenoParams::default(), MSS, 0);
        r.on_timeout(&Flight { bytes: 30 * MSS, snd_una: 0, snd_nxt: 30 });
        assert_eq!((r.window(), r.w.ssthresh()), (MSS, 15 * MSS));
        r.on_timeout(&Flight { bytes: MSS, snd_una: 0, snd_nxt: 1 });
        assert_eq!((r.window(), r.w.ssthresh()), (MSS, 15 * MSS), "same data timed out again");
        r.on_ack(&ack(1, MSS, 1));
        assert_eq!(r.window(), 2 * MSS, "slow start again");
        r.on_timeout(&Flight { bytes: 4 * MSS, snd_una: 1, snd_nxt: 5 });
        assert_eq!(r.w.ssthresh(), 2 * MSS, "floor of two segments");
    }

    #[test]
    fn a_cut_ends_at_an_ack_of_exactly_its_snd_nxt() {
        let mut w = Window::new(MSS, 32 * MSS, false);
        assert!(w.reduce(16 * MSS, 0, 32));
        assert!(w.in_reduction(31) && !w.in_reduction(32));
        // A loss reported once the cumulative ACK stands at the cut's snd_nxt is a new window.
        assert!(w.reduce(8 * MSS, 32, 40));
        assert_eq!((w.cwnd(), w.cuts), (8 * MSS, 2));
    }

    #[test]
    fn set_cwnd_floors_at_two_segments_and_leaves_slow_start_below_cwnd() {
        let mut w = Window::new(MSS, 10 * MSS, true);
        w.set_cwnd(0, false);
        assert_eq!((w.cwnd(), w.ssthresh()), (2 * MSS, u64::MAX));
        // Leaving slow start: ssthresh one segment under cwnd, at least two segments.
        w.set_cwnd(5 * MSS / 2, true);
        assert_eq!((w.cwnd(), w.ssthresh()), (5 * MSS / 2, 2 * MSS));
        w.set_cwnd(10 * MSS, true);
        assert_eq!(w.ssthresh(), 2 * MSS, "ssthresh only ever comes down");
        let mut w = Window::new(MSS, 10 * MSS, true);
        w.set_cwnd(10 * MSS, true);
        assert_eq!(w.ssthresh(), 9 * MSS);
    }

    #[test]
    fn a_timeout_with_little_in_flight_floors_ssthresh_and_is_counted() {
        let mut w = Window::new(MSS, 10 * MSS, true);
        w.on_timeout(&Flight { bytes: MSS, snd_una: 0, snd_nxt: 1 });
        assert_eq!((w.cwnd(), w.ssthresh(), w.timeouts), (MSS, 2 * MSS, 1));
        w.on_timeout(&Flight { bytes: MSS, snd_una: 0, snd_nxt: 1 });
        assert_eq!(w.timeouts, 2);
    }

    #[test]
    fn a_duplicate_ack_does_not_end_the_timeout_hold() {
        let mut r = Reno::new(&RenoParams::default(), MSS, 0);
        r.on_timeout(&Flight { bytes: 30 * MSS, snd_una: 0, snd_nxt: 30 });
        r.on_ack(&ack(0, 0, 30)); // acknowledges nothing new
        r.on_timeout(&Flight { bytes: 2 * MSS, snd_una: 0, snd_nxt: 30 });
        assert_eq!(r.w.ssthresh(), 15 * MSS, "the same data timed out again: ssthresh held");
    }

    #[test]
    fn slow_start_growth_stops_at_ssthresh_and_a_cut_floors_at_two_segments() {
        let mut w = Window::new(MSS, 10 * MSS, false); // cwnd = ssthresh: not in slow start
        w.slow_start(MSS);
        assert_eq!(w.cwnd(), 10 * MSS);
        assert!(w.reduce(0, 0, 10));
        assert_eq!((w.cwnd(), w.ssthresh()), (2 * MSS, 2 * MSS));
    }

    #[test]
    fn congestion_avoidance_carries_the_bytes_past_a_whole_window() {
        let mut w = Window::new(MSS, 10 * MSS, false);
        w.grow(15 * MSS); // one window's worth grows by one MSS; 5 MSS carry over
        assert_eq!(w.cwnd(), 11 * MSS);
        w.grow(6 * MSS); // 5 + 6 = 11 MSS: the next window of 11 MSS is complete
        assert_eq!(w.cwnd(), 12 * MSS);
    }

    #[test]
    fn ecn_halves_once_per_window_only_when_enabled() {
        let mut plain = Reno::new(&RenoParams::default(), MSS, 0);
        let mut ecn = Reno::new(&RenoParams { ecn: true, ..RenoParams::default() }, MSS, 0);
        for r in [&mut plain, &mut ecn] {
            let mut s = ack(1, MSS, 10);
            s.ece = true;
            r.on_ack(&s);
            s.cum = 2;
            r.on_ack(&s);
        }
        assert_eq!(plain.window(), 12 * MSS);
        assert_eq!((ecn.window(), ecn.w.cuts), (5 * MSS, 1));
        assert_eq!(initial_window(0, MSS, 123_456), 123_456);
    }
}

impl crate::transport::common::congestion::CongestionControl for Reno {
    fn window(&self) -> Option<u64> {
        Some(Reno::window(self))
    }
    fn on_ack(&mut self, _now: crate::sim::units::Time, s: &AckSample) -> bool {
        Reno::on_ack(self, s);
        false
    }
    fn on_loss(&mut self, _now: crate::sim::units::Time, f: &Flight) {
        Reno::on_loss(self, f);
    }
    fn on_timeout(&mut self, _now: crate::sim::units::Time, f: &Flight) {
        Reno::on_timeout(self, f);
    }
}
