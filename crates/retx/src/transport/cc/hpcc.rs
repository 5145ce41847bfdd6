//! HPCC (Li et al., SIGCOMM 2019) as the HPCC ns-3 model runs it (`RdmaHw::HandleAckHp`,
//! `UpdateRateHp`, `FastReactHp`; `CC_MODE 3`).
//!
//! Every switch stamps an INT record on a data packet as it leaves the egress queue (queue
//! length, bytes sent so far, timestamp, link rate); the receiver echoes the records on its
//! ACK. Per hop the sender estimates the link's normalised inflight
//! `u = txRate / B + min(qlen, qlen_prev) / (B x T)` (T the base RTT; ns-3 writes the second
//! term `qlen x R_max / B / W_ref`, W_ref = R_max x T), takes the most loaded hop, smooths it
//! by the time the samples span (`U = (U (T - tau) + u tau) / T`, tau at most T), and sets
//!
//! `rate = R_ref / (U / eta) + R_AI` when `U >= eta` or after `max_stage` additive steps,
//! `rate = R_ref + R_AI` otherwise,
//!
//! clamped to [min_rate, line]. The reference rate R_ref (the paper's W^c) moves once per RTT,
//! when an ACK passes the `snd_nxt` recorded at the last such update; the ACKs in between
//! react at once from the same reference ("fast reaction"), without moving it. The window is
//! the reference window scaled by the rate (`VAR_WIN 1`: `W = W_ref x rate / line`, the
//! paper's W = R x T), so HPCC is both paced and window-limited.
//!
//! Parameters default to what the ns-3 model's `run.py --cc hp` writes at 100 Gbps: eta 0.95,
//! max_stage (`MI_THRESH`) 0, R_AI 40 Mb/s (`10 x bw / 25`), min rate 1 Gb/s... see each field.
//! The INT fields are quantised as ns-3's header carries them (bytes in 128 x `int_multi`,
//! queue length in 80 x `int_multi`, time in whole ns; `int_multi = 0`: exact).

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::int::{IntHop, IntHops, MAX_HOPS};
use crate::transport::common::rate_window::RateWindow;
use crate::transport::common::flow::BasePath;
use crate::sim::units::{Bw, Rate};
#[cfg(test)]
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// Target utilisation eta (paper §3.3: 95 %; ns-3 `U_TARGET 0.95`).
    pub eta: f64,
    /// Additive steps before a multiplicative update is forced (paper: maxStage = 5; ns-3
    /// `run.py` `--mi` default 0, which makes every update multiplicative-plus-additive).
    pub max_stage: u32,
    /// Additive increase as a rate (the paper's W_AI = R_AI x T; ns-3 `run.py` at 100 Gbps:
    /// `RATE_AI = 10 x bw / 25` = 40 Mb/s).
    pub rate_ai: Bw,
    /// Rate floor (ns-3 `run.py`: `MIN_RATE 1000Mb/s`).
    pub min_rate: Bw,
    /// React to every ACK from the reference rate (ns-3 `FAST_REACT 1`, the paper's §3.2);
    /// without, only once per RTT.
    pub fast_react: bool,
    /// One reference rate per hop, the flow taking the smallest (ns-3 `MULTI_RATE 1`); off:
    /// one rate from the most loaded hop (`MULTI_RATE 0`, what `run.py` writes).
    pub per_hop_rate: bool,
    /// Fast reactions skip hops whose queue is empty (ns-3 `SAMPLE_FEEDBACK`, off in `run.py`).
    pub sample_feedback: bool,
    /// The window beside the rate (the paper's W = R x T is `"variable"`, the default here).
    pub window: RateWindow,
    /// INT field units as ns-3's header carries them: bytes in 128 x this, queue lengths in
    /// 80 x this, time in whole ns (ns-3 `INT_MULTI`; `run.py`: bw / 25 = 4 at 100 Gbps).
    /// 0: exact values.
    pub int_multi: u32,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 0,
            rate_ai: Bw(Rate::mbps(40)),
            min_rate: Bw(Rate::mbps(1000)),
            fast_react: true,
            per_hop_rate: false,
            sample_feedback: false,
            window: RateWindow::Variable,
            int_multi: 4,
        }
    }
}

impl Controller for HpccParams {
    const NAME: &'static str = "hpcc";
    type Cc = Hpcc;

    /// Fields by their names within `[cc.hpcc]`.
    fn check(&self) -> Checked {
        check::fraction("eta", self.eta)?;
        check::range_u32("max_stage", self.max_stage, 0, 1000)?;
        check::range_u32("int_multi", self.int_multi, 0, 1 << 16)?;
        check::positive_rate("min_rate", self.min_rate.0)?;
        check::positive_rate("rate_ai", self.rate_ai.0)
    }

    fn build(&self, s: &CcSetup) -> Hpcc {
        Hpcc::new(*self, s.line, s.path)
    }
}

/// One hop's reading as the sender keeps it (quantised like the header).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Reading {
    bytes: u64,
    qlen: u64,
    /// ns when quantised, ps when exact.
    ts: u64,
    rate: u64,
}

/// Per-hop reference state (`per_hop_rate`).
#[derive(Clone, Copy, Debug, Default)]
struct HopState {
    u: f64,
    rate: f64,
    stage: u32,
}

#[derive(Clone, Debug)]
pub struct Hpcc {
    p: HpccParams,
    line: f64,
    path: BasePath,
    /// Time units per base RTT (ns when quantised, ps when exact).
    base_rtt: u64,
    /// The pacing rate now (ns-3 `m_rate`).
    rate: f64,
    /// The reference rate R_ref (ns-3 `hp.m_curRate`).
    reference: f64,
    stage: u32,
    /// Smoothed normalised inflight U.
    u: f64,
    /// `snd_nxt` at the last per-RTT update (None before the first ACK).
    last_update: Option<u64>,
    prev: [Reading; MAX_HOPS],
    hops: [HopState; MAX_HOPS],
    /// Per-RTT updates and fast reactions taken (for tests and reports).
    pub updates: u64,
    pub fast_reactions: u64,
}

impl Hpcc {
    pub fn new(p: HpccParams, line: Rate, path: BasePath) -> Self {
        let line = line.0 as f64;
        let quantised = p.int_multi > 0;
        Hpcc {
            p,
            line,
            path,
            base_rtt: if quantised { path.rtt.0 / 1000 } else { path.rtt.0 }.max(1),
            rate: line,
            reference: line,
            stage: 0,
            u: 0.0,
            last_update: None,
            prev: [Reading::default(); MAX_HOPS],
            hops: [HopState { u: 0.0, rate: line, stage: 0 }; MAX_HOPS],
            updates: 0,
            fast_reactions: 0,
        }
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate as u64)
    }

    /// Payload bytes allowed in flight (None: paced only).
    pub fn window(&self) -> Option<u64> {
        self.p.window.bytes(self.path.bdp_bytes, self.rate as u64, self.line as u64)
    }

    pub fn reference_rate(&self) -> Rate {
        Rate(self.reference as u64)
    }

    /// The smoothed normalised inflight U.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    fn read(&self, h: &IntHop) -> Reading {
        let m = self.p.int_multi as u64;
        if m == 0 {
            return Reading { bytes: h.tx_bytes, qlen: h.qlen, ts: h.ts.0, rate: h.rate.0 };
        }
        let (bu, qu) = (128 * m, 80 * m);
        Reading { bytes: h.tx_bytes / bu * bu, qlen: h.qlen / qu * qu, ts: h.ts.0 / 1000, rate: h.rate.0 }
    }

    /// Seconds per time unit of the readings.
    fn unit(&self) -> f64 {
        if self.p.int_multi > 0 { 1e-9 } else { 1e-12 }
    }

    /// An ACK with cumulative index `cum`, the sender's `snd_nxt` and the echoed INT records.
    pub fn on_ack(&mut self, cum: u64, snd_nxt: u64, int: &IntHops) {
        let hops = int.as_slice();
        let Some(last) = self.last_update else {
            // First ACK: only remember the readings (ns-3's first-RTT branch).
            self.last_update = Some(snd_nxt);
            for (i, h) in hops.iter().enumerate() {
                self.prev[i] = self.read(h);
            }
            return;
        };
        let full = cum > last;
        if !full && !self.p.fast_react {
            return;
        }
        self.update(hops, !full);
        if full {
            self.updates += 1;
            if snd_nxt > last {
                self.last_update = Some(snd_nxt);
            }
        } else {
            self.fast_reactions += 1;
        }
    }

    fn update(&mut self, hops: &[IntHop], fast: bool) {
        let t = self.base_rtt;
        let (mut max_u, mut dt) = (0.0f64, 0u64);
        let mut updated = [false; MAX_HOPS];
        for (i, h) in hops.iter().enumerate() {
            let now = self.read(h);
            let prev = self.prev[i];
            if self.p.sample_feedback && fast && now.qlen == 0 {
                continue;
            }
            let tau = now.ts.saturating_sub(prev.ts);
            self.prev[i] = now;
            if tau == 0 || now.rate == 0 {
                continue; // no time between the readings: no rate to measure
            }
            updated[i] = true;
            let tx_rate = now.bytes.saturating_sub(prev.bytes) as f64 * 8.0 / (tau as f64 * self.unit());
            let b = now.rate as f64;
            let u = tx_rate / b + now.qlen.min(prev.qlen) as f64 * self.line / b / self.path.bdp_bytes.max(1) as f64;
            if self.p.per_hop_rate {
                let tau = tau.min(t);
                let s = &mut self.hops[i];
                s.u = (s.u * (t - tau) as f64 + u * tau as f64) / t as f64;
            } else if u > max_u {
                max_u = u;
                dt = tau;
            }
        }
        if !updated.iter().any(|&x| x) {
            return;
        }
        // A floor above the line rate (a scenario's min_rate, for a slower host) is the line.
        let (min, max) = ((self.p.min_rate.0 .0 as f64).min(self.line), self.line);
        let step = |reference: f64, u: f64, stage: u32| -> (f64, u32) {
            let c = u / self.p.eta;
            let (r, s) = if c >= 1.0 || stage >= self.p.max_stage { (reference / c + self.p.rate_ai.0 .0 as f64, 0) } else { (reference + self.p.rate_ai.0 .0 as f64, stage + 1) };
            (r.clamp(min, max), s)
        };
        if self.p.per_hop_rate {
            let mut new_rate = max;
            let mut next = self.hops;
            for i in 0..hops.len() {
                let s = self.hops[i];
                if updated[i] {
                    let (r, st) = step(s.rate, s.u, s.stage);
                    next[i].rate = r;
                    next[i].stage = st;
                    new_rate = new_rate.min(r);
                } else {
                    new_rate = new_rate.min(s.rate);
                }
            }
            self.rate = new_rate;
            if !fast {
                self.hops = next;
            }
        } else {
            let dt = dt.min(t);
            self.u = (self.u * (t - dt) as f64 + max_u * dt as f64) / t as f64;
            let (r, st) = step(self.reference, self.u, self.stage);
            self.rate = r;
            if !fast {
                self.reference = r;
                self.stage = st;
            }
        }
    }
}

impl crate::transport::common::congestion::CongestionControl for Hpcc {
    fn rate(&self) -> Option<Rate> {
        Some(Hpcc::rate(self))
    }
    fn window(&self) -> Option<u64> {
        Hpcc::window(self)
    }
    fn retimes_pacing(&self) -> bool {
        true
    }
    fn on_ack(&mut self, _now: crate::sim::units::Time, s: &crate::transport::common::feedback::AckSample) -> bool {
        Hpcc::on_ack(self, s.cum, s.snd_nxt, &s.int);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::gbps(100);

    fn hop(qlen: u64, tx_bytes: u64, ts_ns: u64) -> IntHop {
        IntHop { qlen, tx_bytes, ts: Time::from_ns(ts_ns), rate: LINE }
    }

    fn one(h: IntHop) -> IntHops {
        let mut x = IntHops::default();
        x.push(h);
        x
    }

    /// 10 us base RTT, BDP 125,000 B at 100 Gbps; exact INT.
    fn hpcc(p: HpccParams) -> Hpcc {
        Hpcc::new(HpccParams { int_multi: 0, ..p }, LINE, BasePath::new(Time::from_us(10), LINE))
    }

    #[test]
    fn over_target_cuts_to_reference_times_eta_over_u_plus_ai() {
        let mut h = hpcc(HpccParams::default());
        h.on_ack(1, 10, &one(hop(62_500, 0, 0)));
        assert_eq!((h.rate(), h.updates), (LINE, 0)); // first ACK: readings only
        // 10 us later the hop sent 125,000 B (line rate: txRate/B = 1) and holds 62,500 B
        // both times (min(q, q') / BDP = 0.5): u = 1.5 over a full base RTT, so U = 1.5.
        h.on_ack(11, 20, &one(hop(62_500, 125_000, 10_000)));
        assert!((h.utilisation() - 1.5).abs() < 1e-12, "{}", h.utilisation());
        // rate = R_ref x eta / U + R_AI = 100G x 0.95 / 1.5 + 40M
        let want = 100e9 * 0.95 / 1.5 + 40e6;
        assert!((h.rate().0 as f64 - want).abs() < 2.0, "{} vs {want}", h.rate().0);
        assert_eq!(h.reference_rate(), h.rate());
        assert_eq!(h.updates, 1);
        // The window follows the rate: W = BDP x rate / line.
        assert_eq!(h.window(), Some((125_000u128 * h.rate().0 as u128 / 100_000_000_000) as u64));
    }

    #[test]
    fn smoothing_weighs_a_sample_by_the_time_it_spans() {
        let mut h = hpcc(HpccParams::default());
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        // 2.5 us at full line rate, empty queue: u = 1, U = (0 x 7.5 + 1 x 2.5) / 10 = 0.25.
        h.on_ack(11, 20, &one(hop(0, 31_250, 2_500)));
        assert!((h.utilisation() - 0.25).abs() < 1e-12);
        // U below eta, max_stage 0: still multiplicative, rate = R x 0.95 / 0.25 + AI, capped.
        assert_eq!(h.rate(), LINE);
    }

    #[test]
    fn below_target_adds_r_ai_until_max_stage_then_multiplies() {
        let mut h = hpcc(HpccParams { max_stage: 2, ..Default::default() });
        h.rate = 50e9;
        h.reference = 50e9;
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        // Half the line rate over a full RTT: U = 0.5 < eta.
        let mut bytes = 0;
        let mut rates = vec![];
        for k in 1..=3u64 {
            bytes += 62_500;
            h.on_ack(10 * k + 1, 10 * k + 10, &one(hop(0, bytes, 10_000 * k)));
            rates.push(h.rate().0);
        }
        // Two additive steps of 40 Mb/s, then a multiplicative one from the reference.
        assert_eq!(rates[0], 50_040_000_000);
        assert_eq!(rates[1], 50_080_000_000);
        let want: f64 = 50.08e9 / (0.5 / 0.95) + 40e6;
        assert!((rates[2] as f64 - want.min(100e9)).abs() < 2.0);
    }

    #[test]
    fn an_ack_reaching_exactly_the_recorded_snd_nxt_is_still_a_fast_reaction() {
        // ns-3 updates per RTT only when the ACK passes m_lastUpdateSeq (ack_seq > it).
        let mut h = hpcc(HpccParams::default());
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        h.on_ack(10, 12, &one(hop(0, 125_000, 10_000)));
        assert_eq!((h.updates, h.fast_reactions), (0, 1));
        h.on_ack(11, 12, &one(hop(0, 250_000, 20_000)));
        assert_eq!((h.updates, h.fast_reactions), (1, 1));
    }

    #[test]
    fn fast_reaction_moves_the_rate_not_the_reference() {
        let mut h = hpcc(HpccParams::default());
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        h.on_ack(11, 20, &one(hop(0, 125_000, 10_000))); // full update at U = 1: reference 95 G + AI
        let reference = h.reference_rate();
        assert!(reference.0.abs_diff(95_040_000_000) <= 1, "{reference:?}"); // float division, truncated
        // An ACK below the recorded snd_nxt (20): a queue of 1 BDP builds, U rises, the rate
        // drops at once but the reference stays.
        h.prev[0].qlen = 125_000;
        h.on_ack(12, 21, &one(hop(125_000, 250_000, 20_000)));
        assert_eq!((h.fast_reactions, h.updates), (1, 1));
        assert!(h.rate() < reference);
        assert_eq!(h.reference_rate(), reference);
        // Without fast reaction the same ACK changes nothing.
        let mut slow = hpcc(HpccParams { fast_react: false, ..Default::default() });
        slow.on_ack(1, 10, &one(hop(0, 0, 0)));
        slow.on_ack(11, 20, &one(hop(0, 125_000, 10_000)));
        let r = slow.rate();
        assert_eq!(slow.updates, 1);
        assert!(r.0.abs_diff(95_040_000_000) <= 1, "the per-RTT update still happens: {r:?}");
        slow.on_ack(12, 21, &one(hop(125_000, 250_000, 20_000)));
        assert_eq!((slow.rate(), slow.fast_reactions), (r, 0));
    }

    #[test]
    fn the_most_loaded_hop_decides_and_the_floor_holds() {
        let mut h = hpcc(HpccParams::default());
        let two = |q: u64, b: u64, t: u64| {
            let mut x = IntHops::default();
            x.push(hop(0, b, t));
            x.push(hop(q, b, t));
            x
        };
        h.on_ack(1, 10, &two(1_250_000, 0, 0));
        // Hop 2 holds 10 BDPs: u = 1 + 10 = 11 over a full RTT.
        h.on_ack(11, 20, &two(1_250_000, 125_000, 10_000));
        assert!((h.utilisation() - 11.0).abs() < 1e-9);
        let want = 100e9 * 0.95 / 11.0 + 40e6;
        assert!((h.rate().0 as f64 - want).abs() < 2.0);
        // A huge queue: the rate stops at min_rate.
        h.on_ack(21, 30, &two(1_000_000_000, 250_000, 20_000));
        assert_eq!(h.rate(), Rate::mbps(1000));
    }

    #[test]
    fn int_fields_are_quantised_like_the_ns3_header() {
        let h = Hpcc::new(HpccParams::default(), LINE, BasePath::new(Time::from_us(10), LINE));
        // int_multi 4: bytes in 512, qlen in 320, time in ns.
        let r = h.read(&IntHop { qlen: 1000, tx_bytes: 1500, ts: Time(12_345_678), rate: LINE });
        assert_eq!((r.bytes, r.qlen, r.ts), (1024, 960, 12_345));
        assert_eq!(h.base_rtt, 10_000);
    }

    #[test]
    fn window_modes() {
        let path = BasePath::new(Time::from_us(10), LINE);
        let mut h = Hpcc::new(HpccParams { window: RateWindow::Fixed, ..Default::default() }, LINE, path);
        h.rate = 10e9;
        assert_eq!(h.window(), Some(125_000));
        h.p.window = RateWindow::Variable;
        assert_eq!(h.window(), Some(12_500));
        h.p.window = RateWindow::None;
        assert_eq!(h.window(), None);
        // A run without a reference path (no BDP) has no window to scale.
        let mut free = Hpcc::new(HpccParams { window: RateWindow::Fixed, ..Default::default() }, LINE, BasePath::default());
        assert_eq!(free.window(), None);
        free.p.window = RateWindow::Variable;
        assert_eq!(free.window(), None);
    }

    #[test]
    fn quantised_readings_measure_rates_in_nanoseconds() {
        // int_multi 4: 10 us between readings is 10,000 ns; 125,000 B (a multiple of 512) at
        // line rate gives u = 1 exactly, as with exact readings.
        let mut h = Hpcc::new(HpccParams::default(), LINE, BasePath::new(Time::from_us(10), LINE));
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        h.on_ack(11, 20, &one(hop(0, 125_440, 10_000)));
        assert!((h.utilisation() - 125_440.0 / 125_000.0).abs() < 1e-9, "{}", h.utilisation());
    }

    #[test]
    fn a_reading_without_time_since_the_last_is_skipped() {
        let mut h = hpcc(HpccParams::default());
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        // The same timestamp again (no time between them): nothing to measure, no update.
        h.on_ack(11, 20, &one(hop(0, 1_000, 0)));
        assert_eq!((h.rate(), h.utilisation()), (LINE, 0.0));
        assert!(h.utilisation().is_finite());
    }

    #[test]
    fn sample_feedback_skips_empty_queues_on_fast_reactions_only() {
        let mut h = hpcc(HpccParams { sample_feedback: true, ..Default::default() });
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        // A fast reaction whose hop shows an empty queue is skipped, even at full load.
        h.on_ack(5, 11, &one(hop(0, 125_000, 10_000)));
        assert_eq!((h.rate(), h.utilisation()), (LINE, 0.0));
        // A per-RTT update takes the same kind of reading.
        h.on_ack(11, 20, &one(hop(0, 250_000, 20_000)));
        assert!((h.utilisation() - 1.0).abs() < 1e-9);
        // A fast reaction with a queue is taken.
        let before = h.rate();
        h.on_ack(12, 21, &one(hop(125_000, 375_000, 30_000)));
        assert!(h.rate() < before);
    }

    #[test]
    fn per_hop_smoothing_weighs_by_the_time_a_sample_spans() {
        let mut h = hpcc(HpccParams { per_hop_rate: true, ..Default::default() });
        h.on_ack(1, 10, &one(hop(0, 0, 0)));
        // 2.5 us of a 10 us base RTT at line rate: u = 1, smoothed (0 x 7.5 + 1 x 2.5) / 10.
        h.on_ack(11, 20, &one(hop(0, 31_250, 2_500)));
        assert!((h.hops[0].u - 0.25).abs() < 1e-12, "{}", h.hops[0].u);
        // Another 2.5 us at line rate: (0.25 x 7.5 + 1 x 2.5) / 10.
        h.on_ack(21, 30, &one(hop(0, 62_500, 5_000)));
        assert!((h.hops[0].u - (0.25 * 7.5 + 2.5) / 10.0).abs() < 1e-12, "{}", h.hops[0].u);
        // A fast reaction with a full queue moves the rate, not the hop's reference.
        let reference = h.hops[0].rate;
        h.on_ack(22, 31, &one(hop(125_000, 93_750, 7_500)));
        // 10 us later at line rate with the queue held at one BDP: u = 2 over a full RTT.
        h.on_ack(23, 32, &one(hop(125_000, 218_750, 17_500)));
        assert!((h.hops[0].u - 2.0).abs() < 1e-9, "{}", h.hops[0].u);
        assert!(h.rate().0 < reference as u64);
        assert_eq!(h.hops[0].rate, reference);
    }

    #[test]
    fn per_hop_rates_take_the_smallest() {
        let mut h = hpcc(HpccParams { per_hop_rate: true, ..Default::default() });
        let two = |q: u64, b: u64, t: u64| {
            let mut x = IntHops::default();
            x.push(hop(0, b, t));
            x.push(hop(q, b / 2, t));
            x
        };
        h.on_ack(1, 10, &two(0, 0, 0));
        h.on_ack(11, 20, &two(0, 125_000, 10_000));
        // Hop 1 at u = 1 -> 95 G + AI; hop 2 at u = 0.5 -> capped at line; the flow takes 95 G.
        assert!(h.rate().0.abs_diff(95_040_000_000) <= 1);
        assert_eq!(h.hops[1].rate, 100e9);
    }
}
