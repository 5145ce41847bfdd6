//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 1995), `cc = "vegas"`, with the structure of Linux `tcp_vegas.c`.
//!
//! BaseRTT is the smallest RTT ever sampled; RTT is the smallest sampled during the last round
//! (Linux `minRTT`). Once per round (when the cumulative ACK passes the `snd_nxt` recorded at the
//! previous adjustment) the sender computes, in packets,
//! diff = (cwnd / BaseRTT - cwnd / RTT) x BaseRTT (the paper's (Expected - Actual) x BaseRTT;
//! Linux divides by BaseRTT instead, which differs by RTT/BaseRTT):
//! - in slow start, diff > gamma leaves slow start: cwnd = min(cwnd, expected + 1 packet) with
//!   expected = cwnd x BaseRTT / RTT, ssthresh below it; otherwise slow start goes on per ACK;
//! - in congestion avoidance, diff < alpha adds one MSS, diff > beta removes one (never below
//!   two), and in between the window holds.
//!
//! A round with at most two RTT samples falls back to Reno growth for that ACK (Linux: "we
//! can't use Vegas' calculations with too few samples"). Losses and timeouts are Reno's. RTT
//! samples are the sender's (Karn-filtered: none from ACKs of retransmissions).

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::feedback::{AckSample, Flight};
use crate::transport::cc::reno::{initial_window, Window};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// Below this many packets queued, add one MSS per RTT (Linux `tcp_vegas` alpha = 2).
    pub alpha: f64,
    /// Above this many, remove one (Linux beta = 4).
    pub beta: f64,
    /// Above this many in slow start, leave it (Linux gamma = 1).
    pub gamma: f64,
    /// Start in slow start (Linux Vegas does).
    pub slow_start: bool,
    /// Initial window in segments (RFC 6928: 10); 0: one BDP of the run's longest base path.
    pub initial_window: u32,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams { alpha: 2.0, beta: 4.0, gamma: 1.0, slow_start: true, initial_window: 10 }
    }
}

impl Controller for VegasParams {
    const NAME: &'static str = "vegas";
    const IS_WINDOW: bool = true;
    type Cc = Vegas;

    /// Fields by their names within `[cc.vegas]`.
    fn check(&self) -> Checked {
        check::range_f64("alpha", self.alpha, 0.0, 1e6)?;
        check::range_f64("beta", self.beta, 0.0, 1e6)?;
        check::range_f64("gamma", self.gamma, 0.0, 1e6)?;
        if self.alpha >= self.beta {
            return Err(check::FieldError::new("alpha", "must be below beta"));
        }
        check::range_u32("initial_window", self.initial_window, 0, 1 << 20)
    }

    fn build(&self, s: &CcSetup) -> Vegas {
        Vegas::new(self, s.mss, s.path.bdp_bytes)
    }
}

#[derive(Clone, Debug)]
pub struct Vegas {
    pub w: Window,
    p: VegasParams,
    base_rtt: Option<Time>,
    round_min: Option<Time>,
    round_samples: u32,
    /// The round ends when the cumulative ACK passes this.
    round_end: Option<u64>,
    /// The last round's diff, in packets (for tests and traces).
    pub last_diff: Option<f64>,
    pub increases: u64,
    pub decreases: u64,
}

impl Vegas {
    pub fn new(p: &VegasParams, mss: u64, bdp_bytes: u64) -> Self {
        Vegas {
            w: Window::new(mss, initial_window(p.initial_window, mss, bdp_bytes), p.slow_start),
            p: *p,
            base_rtt: None,
            round_min: None,
            round_samples: 0,
            round_end: None,
            last_diff: None,
            increases: 0,
            decreases: 0,
        }
    }

    pub fn window(&self) -> u64 {
        self.w.cwnd()
    }

    pub fn base_rtt(&self) -> Option<Time> {
        self.base_rtt
    }

    pub fn on_ack(&mut self, s: &AckSample) {
        if let Some(r) = s.rtt.filter(|r| r.0 > 0) {
            self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
            self.round_min = Some(self.round_min.map_or(r, |m| m.min(r)));
            self.round_samples += 1;
        }
        if self.w.in_reduction(s.cum) {
            self.w.on_ack(s); // Reno's recovery: no Vegas adjustment until it ends
            return;
        }
        let end = *self.round_end.get_or_insert(s.snd_nxt);
        if s.cum <= end {
            if self.w.in_slow_start() {
                self.w.slow_start(s.acked_bytes);
            }
            return;
        }
        self.round_end = Some(s.snd_nxt);
        let (samples, rtt) = (std::mem::take(&mut self.round_samples), self.round_min.take());
        match (self.base_rtt, rtt) {
            (Some(base), Some(rtt)) if samples > 2 => self.adjust(base, rtt, s.acked_bytes),
            _ => self.w.on_ack(s),
        }
    }

    fn adjust(&mut self, base: Time, rtt: Time, acked: u64) {
        let mss = self.w.mss() as f64;
        let cwnd = self.w.cwnd() as f64 / mss;
        let (base, rtt) = (base.0 as f64, rtt.0 as f64);
        let diff = (cwnd / base - cwnd / rtt) * base;
        self.last_diff = Some(diff);
        if self.w.in_slow_start() {
            if diff > self.p.gamma {
                let expected = cwnd * base / rtt;
                let to = cwnd.min(expected + 1.0);
                self.w.set_cwnd((to * mss) as u64, true);
            } else {
                self.w.slow_start(acked);
            }
        } else if diff > self.p.beta {
            self.w.set_cwnd(self.w.cwnd().saturating_sub(self.w.mss()), true);
            self.decreases += 1;
        } else if diff < self.p.alpha {
            self.w.set_cwnd(self.w.cwnd() + self.w.mss(), false);
            self.increases += 1;
        }
    }

    pub fn on_loss(&mut self, f: &Flight) {
        self.w.on_loss(f);
    }

    pub fn on_timeout(&mut self, f: &Flight) {
        self.w.on_timeout(f);
    }
}

impl crate::transport::common::congestion::CongestionControl for Vegas {
    fn window(&self) -> Option<u64> {
        Some(Vegas::window(self))
    }
    fn on_ack(&mut self, _now: Time, s: &AckSample) -> bool {
        Vegas::on_ack(self, s);
        false
    }
    fn on_loss(&mut self, _now: Time, f: &Flight) {
        Vegas::on_loss(self, f);
    }
    fn on_timeout(&mut self, _now: Time, f: &Flight) {
        Vegas::on_timeout(self, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::reno::tests::ack;

    const MSS: u64 = 1_000;

    /// A Vegas sender fed one ACK per segment, each acknowledging one MSS.
    struct T {
        v: Vegas,
        cum: u64,
    }

    impl T {
        fn ack(&mut self, rtt_ps: u64, snd_nxt: u64) {
            self.cum += 1;
            self.v.on_ack(&AckSample { rtt: Some(Time(rtt_ps)), ..ack(self.cum, MSS, snd_nxt) });
        }

        /// The ACKs of the open round at `rtt_us`, then the one that closes it (and opens a
        /// round of 20 more). Returns the window after it, in packets.
        fn round(&mut self, rtt_ps: u64) -> u64 {
            let end = self.v.round_end.expect("a round is open");
            while self.cum < end {
                self.ack(rtt_ps, end);
            }
            self.ack(rtt_ps, end + 21);
            self.v.window() / MSS
        }
    }

    const US: u64 = 1_000_000;

    /// Congestion avoidance at 20 packets with BaseRTT = 10 us, a round open.
    fn vegas() -> T {
        let v = Vegas::new(&VegasParams { slow_start: false, initial_window: 20, ..Default::default() }, MSS, 0);
        let mut t = T { v, cum: 0 };
        t.ack(10 * US, 1); // BaseRTT; the first round ends at 1
        t.cum += 1;
        t.v.on_ack(&ack(t.cum, MSS, 22)); // closes it with one sample: Reno's growth, no Vegas step
        assert_eq!((t.v.window(), t.v.last_diff), (20 * MSS, None));
        t
    }

    #[test]
    fn diff_below_alpha_adds_one_mss_per_rtt() {
        let mut t = vegas();
        // RTT 11 us: diff = 20 x (1 - 10/11) = 1.82 < alpha: +1 per round, not per ACK.
        assert_eq!(t.round(11 * US), 21);
        assert!((t.v.last_diff.unwrap() - 20.0 / 11.0).abs() < 1e-9);
        assert_eq!(t.round(11 * US), 22);
        assert_eq!(t.v.increases, 2);
    }

    #[test]
    fn diff_above_beta_removes_one_mss_per_rtt() {
        let mut t = vegas();
        // RTT 15 us: diff = 20 x (1 - 10/15) = 6.67 > beta: -1.
        assert_eq!(t.round(15 * US), 19);
        // 19 x (1 - 10/15) = 6.33: -1 again.
        assert_eq!(t.round(15 * US), 18);
        assert_eq!(t.v.decreases, 2);
    }

    #[test]
    fn diff_between_alpha_and_beta_holds() {
        let mut t = vegas();
        // RTT 12 us: diff = 20 x (1 - 10/12) = 3.33: the window holds.
        assert_eq!(t.round(12 * US), 20);
        assert!((t.v.last_diff.unwrap() - 20.0 / 6.0).abs() < 1e-9);
        assert_eq!((t.v.increases, t.v.decreases), (0, 0));
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        let mut t = T { v: Vegas::new(&VegasParams::default(), MSS, 0), cum: 0 };
        for _ in 0..10 {
            t.ack(10 * US, 10); // no queue: slow start per ACK
        }
        assert_eq!(t.v.window(), 20 * MSS);
        t.ack(10 * US, 30); // closes the round: diff = 0, still slow start
        assert_eq!(t.v.window(), 21 * MSS);
        // The next round at RTT 20 us: slow start per ACK to 40, then at the round's end
        // diff = 40 x (1 - 10/20) = 20 > gamma: cwnd = min(40, 40 x 10/20 + 1) = 21 packets.
        while t.cum < 30 {
            t.ack(20 * US, 30);
        }
        assert_eq!(t.v.window(), 40 * MSS);
        t.ack(20 * US, 50);
        assert_eq!(t.v.window(), 21 * MSS);
        assert!(!t.v.w.in_slow_start());
    }

    /// BaseRTT 2^23 ps, so that cwnd / BaseRTT and cwnd / (2 BaseRTT) are exact in floating
    /// point and diff = cwnd / 2 exactly when the RTT doubles.
    const BASE: u64 = 1 << 23;

    /// Congestion avoidance at `cwnd` packets with BaseRTT = BASE, a round of 20 ACKs open.
    fn exact(cwnd: u64) -> T {
        let v = Vegas::new(&VegasParams { slow_start: false, initial_window: cwnd as u32, ..Default::default() }, MSS, 0);
        let mut t = T { v, cum: 0 };
        t.ack(BASE, 1);
        t.cum += 1;
        t.v.on_ack(&ack(t.cum, MSS, 22));
        assert_eq!(t.v.base_rtt(), Some(Time(BASE)));
        t
    }

    #[test]
    fn a_diff_exactly_at_alpha_or_beta_holds_the_window() {
        // RTT = 2 BaseRTT: diff = cwnd / 2. At 4 packets that is alpha = 2 (not below it), at
        // 8 packets beta = 4 (not above it): no step either way.
        for cwnd in [4, 8] {
            let mut t = exact(cwnd);
            assert_eq!(t.round(2 * BASE), cwnd);
            assert_eq!(t.v.last_diff, Some(cwnd as f64 / 2.0));
            assert_eq!((t.v.increases, t.v.decreases), (0, 0));
        }
    }

    #[test]
    fn a_round_with_two_rtt_samples_grows_as_reno() {
        // RTT 15 us would remove one MSS (diff 6.67 > beta), but only two ACKs of the round
        // carry an RTT: Linux's rule falls back to Reno's growth, so no Vegas step.
        let mut t = vegas();
        let end = t.v.round_end.unwrap();
        t.ack(15 * US, end);
        t.ack(15 * US, end);
        while t.cum < end {
            t.cum += 1;
            t.v.on_ack(&ack(t.cum, MSS, end));
        }
        t.cum += 1;
        t.v.on_ack(&ack(t.cum, MSS, end + 21));
        assert!(t.v.window() >= 20 * MSS, "{}", t.v.window());
        assert_eq!((t.v.decreases, t.v.last_diff), (0, None));
    }

    #[test]
    fn a_zero_rtt_sample_is_ignored() {
        let mut v = Vegas::new(&VegasParams::default(), MSS, 0);
        v.on_ack(&AckSample { rtt: Some(Time(0)), ..ack(1, MSS, 5) });
        assert_eq!((v.base_rtt(), v.round_samples), (None, 0));
    }

    #[test]
    fn loss_and_timeout_are_renos() {
        let flight = Flight { bytes: 20 * MSS, snd_una: 0, snd_nxt: 20 };
        let mut t = vegas();
        t.v.on_loss(&flight);
        assert!(t.v.window() < 20 * MSS && t.v.w.in_reduction(1), "{}", t.v.window());
        let mut t = vegas();
        t.v.on_timeout(&flight);
        assert_eq!(t.v.window(), MSS);
    }

    #[test]
    fn slow_start_goes_on_at_a_diff_exactly_at_gamma() {
        // As slow_start_ends_when_diff_exceeds_gamma, with RTTs of BASE and 2 BASE (exact) and
        // gamma = 20: the second round closes at cwnd 40 with diff = 40 / 2 = 20, not above
        // gamma, so slow start adds its MSS (41) instead of leaving at 21.
        let p = VegasParams { gamma: 20.0, ..Default::default() };
        let mut t = T { v: Vegas::new(&p, MSS, 0), cum: 0 };
        for _ in 0..10 {
            t.ack(BASE, 10);
        }
        t.ack(BASE, 30);
        while t.cum < 30 {
            t.ack(2 * BASE, 30);
        }
        assert_eq!(t.v.window(), 40 * MSS);
        t.ack(2 * BASE, 50);
        assert_eq!(t.v.last_diff, Some(20.0));
        assert_eq!(t.v.window(), 41 * MSS);
        assert!(t.v.w.in_slow_start());
    }
}
