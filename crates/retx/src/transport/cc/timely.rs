//! TIMELY (Mittal et al., SIGCOMM 2015): rate control from the RTT and its gradient, as the
//! HPCC ns-3 model runs it (`CC_MODE 7`: `RdmaHw::HandleAckTimely`, `UpdateRateTimely`,
//! `FastReactTimely` in `simulation/src/point-to-point/model/rdma-hw.cc`).
//!
//! Once per RTT (the first ACK past the `snd_nxt` recorded at the last update), the RTT of the
//! packet that ACK answers is compared with the last update's: the difference is smoothed by
//! an EWMA (`alpha`) and normalised by `min_rtt` into a gradient. Then, on the current rate:
//! RTT below `t_low`: add `rate_ai` (`rate_hai` once `hai_after` increases in a row have
//! happened); RTT above `t_high`: multiply by 1 - beta (1 - t_high / rtt); otherwise a gradient
//! <= 0 adds as below `t_low` and a positive one multiplies by 1 - beta x gradient (at least 0).
//! Cuts stop at `min_rate`, increases at the line rate. The first update only records the RTT.
//!
//! Where ns-3 and the paper differ, this follows ns-3:
//! - The paper updates on every completion event (a 16-64 KB segment); ns-3 once per RTT of
//!   data, as here. ns-3's per-ACK `FastReactTimely` is empty, so ACKs inside the RTT change
//!   nothing, here too.
//! - The paper's hyperactive increase (N = 5) applies in the gradient region only, after five
//!   negative gradients in a row, and adds N x delta; ns-3 counts every increase (below T_low
//!   too) and adds a constant `RATE_HAI`, as here.
//! - The paper normalises the gradient by the path's minimum RTT and subtracts the segment's
//!   serialization from the completion time; ns-3 divides by a fixed `TimelyMinRtt` and uses
//!   the raw RTT from the echoed send timestamp, as here.
//!
//! With `window` set, TIMELY also caps the payload bytes in flight, as the HPCC paper's
//! "TIMELY+win" (ns-3 `HAS_WIN 1`, `run.py --cc timely_vwin`): one BDP of the run's reference
//! path (`fixed`) or that BDP scaled by rate / line rate, at least 1 byte (`variable`,
//! `VAR_WIN 1`; `RdmaQueuePair::GetWin`).

/// Bytes the send timestamp takes on every data packet and response (the HPCC ns-3 model's
/// `IntHeader` in TS mode, which it uses for TIMELY: one 8-byte time).
pub const TS_HEADER_BYTES: u32 = 8;

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::feedback::AckSample;
use crate::transport::common::flow::BasePath;
use crate::sim::units::{Bw, Dur, Rate, Time};
use serde::{Deserialize, Serialize};

/// Which window TIMELY keeps beside its rate (the window DCQCN and DCTCP may keep too).
pub use crate::transport::common::rate_window::RateWindow as TimelyWindow;

/// TIMELY parameters. Defaults: the HPCC ns-3 model's `RdmaHw` attribute defaults for the
/// TIMELY-only ones, and what its `run.py --cc timely` writes at 100 Gbps for the rest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyParams {
    /// EWMA weight of the newest RTT difference (`TimelyAlpha` 0.875).
    pub alpha: f64,
    /// Multiplicative decrease factor (`TimelyBeta` 0.8).
    pub beta: f64,
    /// Below this RTT the rate increases whatever the gradient (`TimelyTLow` 50000 ns).
    pub t_low: Dur,
    /// Above this RTT the rate decreases whatever the gradient (`TimelyTHigh` 500000 ns).
    pub t_high: Dur,
    /// Normalises the RTT difference into a gradient (`TimelyMinRtt` 20000 ns).
    pub min_rtt: Dur,
    /// Additive increase step (`run.py` timely: `RATE_AI` = bw Mb/s for bw Gbps links, so
    /// 100 Mbps at 100 Gbps; the attribute default is 5 Mbps).
    pub rate_ai: Bw,
    /// Hyperactive increase step (`run.py` timely: `RATE_HAI` = 5 x bw Mb/s, 500 Mbps at
    /// 100 Gbps; the attribute default is 50 Mbps).
    pub rate_hai: Bw,
    /// Increases in a row after which each adds `rate_hai` (`rdma-hw.cc`: `m_incStage < 5`;
    /// the paper's N = 5).
    pub hai_after: u32,
    /// Rate floor (`run.py`: `MIN_RATE 1000Mb/s`; the attribute default is 100 Mbps).
    pub min_rate: Bw,
    /// The optional window of bytes in flight (`run.py --cc timely`: none).
    pub window: TimelyWindow,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            t_low: Dur(Time::from_us(50)),
            t_high: Dur(Time::from_us(500)),
            min_rtt: Dur(Time::from_us(20)),
            rate_ai: Bw(Rate::mbps(100)),
            rate_hai: Bw(Rate::mbps(500)),
            hai_after: 5,
            min_rate: Bw(Rate::mbps(1000)),
            window: TimelyWindow::None,
        }
    }
}

impl Controller for TimelyParams {
    const NAME: &'static str = "timely";
    type Cc = Timely;

    /// Fields by their names within `[cc.timely]`.
    fn check(&self) -> Checked {
        for (field, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(check::FieldError::new(field, format!("{v} is out of range (allowed greater than 0, at most 1)")));
            }
        }
        if self.t_low.0 >= self.t_high.0 {
            return Err(check::FieldError::new("t_low", format!("{} must be less than t_high ({})", self.t_low.0, self.t_high.0)));
        }
        check::positive_time("min_rtt", self.min_rtt.0)?;
        check::positive_rate("rate_ai", self.rate_ai.0)?;
        check::positive_rate("min_rate", self.min_rate.0)?;
        if self.rate_hai.0 < self.rate_ai.0 {
            return Err(check::FieldError::new("rate_hai", format!("{} must not be below rate_ai ({})", self.rate_hai.0, self.rate_ai.0)));
        }
        Ok(())
    }

    fn build(&self, s: &CcSetup) -> Timely {
        Timely::new(*self, s.line, s.path)
    }
}

/// Sender-side TIMELY state of one QP.
#[derive(Clone, Debug)]
pub struct Timely {
    p: TimelyParams,
    /// Line rate in bits per second (ns-3 `m_max_rate`).
    line: u64,
    path: BasePath,
    /// The current rate in bits per second, an integer as ns-3's `DataRate` (a cut truncates).
    rate: u64,
    /// `snd_nxt` at the last update; 0 until the first (ns-3 `m_lastUpdateSeq`, which uses 0
    /// as "first RTT" too).
    last_update_seq: u64,
    last_rtt: Time,
    /// Smoothed RTT difference, in picoseconds.
    rtt_diff: f64,
    /// Increases since the last decrease (ns-3 `m_incStage`).
    inc_stage: u32,
}

impl Timely {
    pub fn new(p: TimelyParams, line: Rate, path: BasePath) -> Self {
        Timely { p, line: line.0, path, rate: line.0, last_update_seq: 0, last_rtt: Time::ZERO, rtt_diff: 0.0, inc_stage: 0 }
    }

    pub fn params(&self) -> &TimelyParams {
        &self.p
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }

    /// The smoothed RTT difference in picoseconds.
    pub fn rtt_diff(&self) -> f64 {
        self.rtt_diff
    }

    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// The most payload bytes in flight (None: no window). ns-3 `GetWin`: a zero BDP means no
    /// window; the variable window is BDP x rate / line rate, at least 1 byte.
    pub fn window(&self) -> Option<u64> {
        self.p.window.bytes(self.path.bdp_bytes, self.rate, self.line)
    }

    /// An acknowledgement arrived. Only the first one past the last update's `snd_nxt` updates
    /// the rate (ns-3 `HandleAckTimely`); the others would go to ns-3's `FastReactTimely`,
    /// which does nothing. A response without an echoed timestamp carries no RTT and is
    /// ignored.
    pub fn on_ack(&mut self, s: &AckSample) {
        let Some(rtt) = s.rtt else { return };
        if s.cum > self.last_update_seq {
            self.update(rtt, s.snd_nxt);
        }
    }

    /// ns-3 `UpdateRateTimely` with `us = false` (the only way it is called).
    fn update(&mut self, rtt: Time, snd_nxt: u64) {
        if self.last_update_seq != 0 {
            let new_rtt_diff = rtt.0 as f64 - self.last_rtt.0 as f64;
            let rtt_diff = (1.0 - self.p.alpha) * self.rtt_diff + self.p.alpha * new_rtt_diff;
            let gradient = rtt_diff / self.p.min_rtt.0 .0 as f64;
            // The factor of a decrease, or None for an increase.
            let cut = if rtt < self.p.t_low.0 {
                None
            } else if rtt > self.p.t_high.0 {
                Some(1.0 - self.p.beta * (1.0 - self.p.t_high.0 .0 as f64 / rtt.0 as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - self.p.beta * gradient).max(0.0))
            };
            match cut {
                None => {
                    let step = if self.inc_stage < self.p.hai_after { self.p.rate_ai } else { self.p.rate_hai };
                    self.rate = self.rate.saturating_add(step.0 .0).min(self.line);
                    self.inc_stage = self.inc_stage.saturating_add(1);
                }
                Some(c) => {
                    // ns-3 does not cap a cut at the line rate; the cap only matters for a
                    // floor above it, which would otherwise pace faster than the wire.
                    let floor = self.p.min_rate.0 .0.min(self.line);
                    self.rate = ((self.rate as f64 * c) as u64).max(floor);
                    self.inc_stage = 0;
                }
            }
            self.rtt_diff = rtt_diff;
        }
        if snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
            self.last_rtt = rtt;
        }
    }
}

impl crate::transport::common::congestion::CongestionControl for Timely {
    fn rate(&self) -> Option<Rate> {
        Some(Timely::rate(self))
    }
    fn window(&self) -> Option<u64> {
        Timely::window(self)
    }
    fn on_ack(&mut self, _now: Time, s: &AckSample) -> bool {
        Timely::on_ack(self, s);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::gbps(100);

    fn timely(p: TimelyParams) -> Timely {
        // 100 Gbps x 10 us: 125 KB.
        Timely::new(p, LINE, BasePath::new(Time::from_us(10), LINE))
    }

    /// An ACK covering packets below `cum`, with the sender's `snd_nxt` and a measured RTT.
    fn ack(cum: u64, snd_nxt: u64, rtt: Option<Time>) -> AckSample {
        AckSample { cum, acked_bytes: 0, snd_nxt, ece: false, rtt, one_way: None, int: Default::default() }
    }

    fn us(x: u64) -> Option<Time> {
        Some(Time::from_us(x))
    }

    #[test]
    fn the_first_rtt_only_records_and_acks_inside_an_rtt_change_nothing() {
        let mut t = timely(TimelyParams::default());
        // Without a timestamp there is nothing to measure.
        t.on_ack(&ack(1, 10, None));
        assert_eq!(t.last_update_seq, 0);
        // First update: even an RTT far above T_high leaves the rate at line rate.
        t.on_ack(&ack(1, 10, us(900)));
        assert_eq!((t.rate(), t.last_update_seq, t.last_rtt), (LINE, 10, Time::from_us(900)));
        assert_eq!(t.rtt_diff(), 0.0);
        // ACKs up to snd_nxt = 10 fall in the same RTT: ns-3's fast react is empty.
        for cum in [2, 5, 10] {
            t.on_ack(&ack(cum, 12, us(2_000)));
        }
        assert_eq!((t.rate(), t.last_update_seq, t.last_rtt), (LINE, 10, Time::from_us(900)));
        // The first ACK past 10 updates: 900 -> 950 us is above T_high:
        // 100 G x (1 - 0.8 x (1 - 500/950)).
        t.on_ack(&ack(11, 20, us(950)));
        assert_eq!(t.rate(), Rate((100e9 * (1.0 - 0.8 * (1.0 - 500.0 / 950.0))) as u64));
        assert_eq!(t.last_update_seq, 20);
    }

    #[test]
    fn the_thresholds_are_strict_as_in_ns3() {
        // An RTT of exactly T_low is not "below T_low": a rising RTT there is cut by the
        // gradient. 40 -> 50 us: rtt_diff 0.875 x 10 us, gradient 8.75 / 20 = 0.4375.
        let mut t = timely(TimelyParams { rate_ai: Bw(Rate::mbps(100)), ..Default::default() });
        t.rate = 50_000_000_000;
        t.on_ack(&ack(1, 10, us(40)));
        t.on_ack(&ack(11, 20, us(50)));
        assert_eq!(t.rate(), Rate((50e9 * (1.0 - 0.8 * 0.4375)) as u64));
        // An RTT of exactly T_high is not "above T_high": a falling RTT there increases.
        let mut t = timely(TimelyParams::default());
        t.rate = 50_000_000_000;
        t.on_ack(&ack(1, 10, us(600)));
        t.on_ack(&ack(11, 20, us(500)));
        assert_eq!(t.rate(), Rate(50_100_000_000));
        // The parameters it runs with are the ones it was given.
        assert_eq!(t.params(), &TimelyParams::default());
    }

    #[test]
    fn above_t_high_the_rate_is_cut_by_beta_times_the_excess() {
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(30)));
        // 30 -> 600 us: 1 - 0.8 x (1 - 500/600) = 0.8667; 100 G x 0.8667 truncated to bps.
        t.on_ack(&ack(11, 20, us(600)));
        assert_eq!(t.rate(), Rate(86_666_666_666));
        // The difference is smoothed all the same: 0.875 x 570 us.
        assert_eq!(t.rtt_diff(), 498_750_000.0);
        assert_eq!(t.inc_stage(), 0);
    }

    #[test]
    fn below_t_low_the_rate_grows_by_rate_ai_then_by_rate_hai_after_five() {
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(30)));
        t.on_ack(&ack(11, 20, us(600))); // cut to 86_666_666_666 bps
        // Below T_low = 50 us, whatever the gradient (40 us after 600 is steeply negative,
        // but 40 us after 30 would be positive: the T_low rule comes first).
        let mut expected = 86_666_666_666u64;
        let mut seq = 20;
        for (i, step) in [100, 100, 100, 100, 100, 500, 500].into_iter().enumerate() {
            let rtt = if i % 2 == 0 { 40 } else { 45 };
            t.on_ack(&ack(seq + 1, seq + 10, us(rtt)));
            seq += 10;
            expected += step * 1_000_000;
            assert_eq!(t.rate(), Rate(expected), "increase {}", i + 1);
            assert_eq!(t.inc_stage(), i as u32 + 1);
        }
        // A cut restarts the count.
        t.on_ack(&ack(seq + 1, seq + 10, us(700)));
        assert_eq!(t.inc_stage(), 0);
    }

    #[test]
    fn a_positive_gradient_cuts_by_beta_times_it_and_a_negative_one_adds() {
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(100)));
        // 100 -> 104 us: rtt_diff = 0.875 x 4 us = 3.5 us; gradient = 3.5 / 20 = 0.175;
        // rate = 100 G x (1 - 0.8 x 0.175) = 86 G.
        t.on_ack(&ack(11, 20, us(104)));
        assert_eq!(t.rtt_diff(), 3_500_000.0);
        assert_eq!(t.rate(), Rate::gbps(86));
        // 104 -> 90 us: rtt_diff = 0.125 x 3.5 + 0.875 x (-14) = -11.8125 us: + 100 Mbps.
        t.on_ack(&ack(21, 30, us(90)));
        assert_eq!(t.rtt_diff(), -11_812_500.0);
        assert_eq!(t.rate(), Rate::mbps(86_100));
        // A zero gradient increases too (ns-3: gradient <= 0): 90 -> 90 us leaves
        // rtt_diff = 0.125 x -11.8125 us, still negative; force exactly 0 with alpha = 1.
        let mut t = timely(TimelyParams { alpha: 1.0, ..TimelyParams::default() });
        t.on_ack(&ack(1, 10, us(100)));
        t.on_ack(&ack(11, 20, us(110))); // gradient 0.5: x 0.6
        assert_eq!(t.rate(), Rate::gbps(60));
        t.on_ack(&ack(21, 30, us(110)));
        assert_eq!(t.rtt_diff(), 0.0);
        assert_eq!(t.rate(), Rate::mbps(60_100));
    }

    #[test]
    fn cuts_stop_at_the_floor_and_increases_at_the_line_rate() {
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(100)));
        // 100 -> 400 us: gradient = 0.875 x 300 / 20 = 13.125; 1 - 0.8 x 13.125 < 0: factor 0,
        // and the rate stops at min_rate = 1 Gbps.
        t.on_ack(&ack(11, 20, us(400)));
        assert_eq!(t.rate(), Rate::gbps(1));
        // At line rate an increase stays there (and still counts as one).
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(10)));
        t.on_ack(&ack(11, 20, us(10)));
        assert_eq!((t.rate(), t.inc_stage()), (LINE, 1));
        // A floor above the line rate is held at the line rate.
        let p = TimelyParams { min_rate: Bw(Rate::gbps(200)), ..TimelyParams::default() };
        let mut t = timely(p);
        t.on_ack(&ack(1, 10, us(100)));
        t.on_ack(&ack(11, 20, us(400)));
        assert_eq!(t.rate(), LINE);
    }

    #[test]
    fn the_update_waits_for_the_ack_past_the_recorded_snd_nxt() {
        let mut t = timely(TimelyParams::default());
        t.on_ack(&ack(1, 10, us(100)));
        t.on_ack(&ack(10, 15, us(400))); // cum 10 is not past 10
        assert_eq!(t.rate(), LINE);
        // A go-back-N rewind can leave snd_nxt below the mark: the rate updates, the mark and
        // the reference RTT stay (ns-3 only moves them forward).
        t.on_ack(&ack(11, 8, us(104)));
        assert_eq!(t.rate(), Rate::gbps(86));
        assert_eq!((t.last_update_seq, t.last_rtt), (10, Time::from_us(100)));
    }

    #[test]
    fn the_window_is_none_fixed_or_scaled_by_the_rate() {
        let with = |window| {
            let mut t = timely(TimelyParams { window, ..TimelyParams::default() });
            let before = t.window();
            t.on_ack(&ack(1, 10, us(30)));
            t.on_ack(&ack(11, 20, us(600))); // rate 86_666_666_666 bps
            (before, t.window())
        };
        assert_eq!(with(TimelyWindow::None), (None, None));
        assert_eq!(with(TimelyWindow::Fixed), (Some(125_000), Some(125_000)));
        // 125 000 x 86 666 666 666 / 100e9 = 108 333.3: 108 333 bytes.
        assert_eq!(with(TimelyWindow::Variable), (Some(125_000), Some(108_333)));
        // At least 1 byte: a 50-byte BDP at 1 Gbps of 100 would be 0.5.
        let p = TimelyParams { window: TimelyWindow::Variable, ..TimelyParams::default() };
        let mut t = Timely::new(p, LINE, BasePath { rtt: Time::from_ns(4), bdp_bytes: 50 });
        t.on_ack(&ack(1, 10, us(100)));
        t.on_ack(&ack(11, 20, us(400)));
        assert_eq!((t.rate(), t.window()), (Rate::gbps(1), Some(1)));
        // No reference path: no window (ns-3: m_win = 0).
        let t = Timely::new(p, LINE, BasePath::default());
        assert_eq!(t.window(), None);
    }

    #[test]
    fn params_parse_with_defaults_and_reject_unknown_fields() {
        let p: TimelyParams = toml::from_str("window = \"variable\"\nbeta = 0.5\nt_low = \"20us\"").unwrap();
        assert_eq!(
            p,
            TimelyParams { window: TimelyWindow::Variable, beta: 0.5, t_low: Dur(Time::from_us(20)), ..TimelyParams::default() }
        );
        assert!(toml::from_str::<TimelyParams>("gain = 0.5").is_err());
        let e = toml::from_str::<TimelyParams>("window = \"dynamic\"").unwrap_err().to_string();
        assert!(e.contains("fixed") && e.contains("variable"), "{e}");
    }
}
