//! DCQCN (Zhu et al., SIGCOMM 2015): the reaction point (sender rate control) and the
//! notification point (receiver CNP generation).
//!
//! Three presets (`[cc.dcqcn] preset`), each field overridable:
//! - `retx` (the default, what every result so far used): the DCQCN paper's values
//!   (g = 1/256, N = 50 us, K = 55 us, T = 55 us, B = 10 MB, F = 5, R_AI = 40 Mbps) as public
//!   models of it reproduce them (htsim's dcqcn.cpp: CNP interval 50 us, update period 55 us;
//!   the DCQCN fluid-model scripts), with the HPCC ns-3 model's 4 us limit between cuts.
//! - `paper`: the same algorithm without that limit (a cut per CNP; the notification point's
//!   50 us pacing bounds them).
//! - `ns3`: the HPCC ns-3 model's "Mellanox version" (`rdma-hw.cc`, `*Mlx` functions) with
//!   the values its `run.py` writes for `--cc dcqcn` at 100 Gbps (`mix/config.txt`): alpha
//!   updated every 1 us by whether a CNP arrived (`UpdateAlphaMlx`), cuts checked every 4 us
//!   (`CheckRateDecreaseMlx`), the target not lowered on a cut before the first increase
//!   (`CLAMP_TARGET_RATE 0`), increases driven by a 300 us timer alone (no byte counter;
//!   `RateIncEventMlx`: stage < F fast recovery, = F additive, > F hyper by a constant R_HAI),
//!   F = 1, R_AI 20 Mbps, R_HAI 200 Mbps, min rate 1 Gbps, and every ECN mark echoed on the ACK
//!   it triggers (the ACK's CNP flag) instead of paced CNP packets.

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::transport::common::cnp::CnpPacer;
use crate::sim::check::{self, Checked};
use crate::transport::common::rate_window::RateWindow;
use crate::transport::common::flow::BasePath;
use crate::sim::units::{Bw, Dur, Rate, Size, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// A named set of DCQCN parameters and mechanisms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnPreset {
    #[default]
    Retx,
    Paper,
    Ns3,
}

/// How hyper increase grows the target rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HyperStep {
    /// By i x R_HAI at the i-th step past F (the DCQCN paper).
    #[default]
    Growing,
    /// By R_HAI at every step (HPCC ns-3 `HyperIncreaseMlx`).
    Constant,
}

/// When alpha is updated, or when a rate cut happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cadence {
    /// At the CNP itself (alpha: raised at each cut, decayed every `alpha_interval` without
    /// one; cut: at most once per `decrease_interval`).
    #[default]
    OnCnp,
    /// On a fixed period from the first CNP, by whether a CNP arrived in the period (HPCC
    /// ns-3: alpha every `alpha_interval`, cut checks every `decrease_interval`).
    Periodic,
}

/// How the receiver notifies congestion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpMode {
    /// CNP packets, at most one per flow per `cnp_interval` (the DCQCN paper's NP).
    #[default]
    Paced,
    /// Every response triggered by a marked packet carries the echo, and the sender takes
    /// each as a CNP (HPCC ns-3: the ACK's CNP flag).
    PerMark,
}

/// DCQCN parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DcqcnParams {
    /// The preset the other fields start from.
    pub preset: DcqcnPreset,
    /// EWMA gain for alpha (paper: g = 1/256).
    pub g: f64,
    /// Alpha decays once per this interval without CNP (paper: K = 55 us).
    pub alpha_interval: Dur,
    /// Rate increase timer (paper: T = 55 us).
    pub increase_interval: Dur,
    /// Rate increase byte counter (paper: B = 10 MB).
    pub byte_counter: Size,
    /// Fast recovery steps before additive increase (paper: F = 5).
    pub fast_recovery_steps: u32,
    /// Additive increase step (paper: R_AI = 40 Mbps).
    pub rate_ai: Bw,
    /// Hyper increase step. No retrievable source states the paper's value; 10 x R_AI follows
    /// the HAI/AI ratio of the HPCC ns-3 model (50 / 5 Mbps).
    pub rate_hai: Bw,
    /// Rate floor (HPCC ns-3 `MinRate` default, 100 Mbps).
    pub min_rate: Bw,
    /// At most one rate cut per this interval (HPCC ns-3 model RATE_DECREASE_INTERVAL = 4 us;
    /// 0: no limit); with `rate_cut = "periodic"`, the period of the cut checks.
    pub decrease_interval: Dur,
    /// Notification point: at most one CNP per flow per this interval (paper: N = 50 us).
    pub cnp_interval: Dur,
    /// A cut lowers the target rate to the current rate even before any increase since the
    /// last cut (the paper; HPCC ns-3 `CLAMP_TARGET_RATE 0` clamps only after one).
    pub clamp_target: bool,
    /// Increase steps are counted by bytes sent as well as by the timer (the paper); without,
    /// by the timer alone (HPCC ns-3).
    pub use_byte_counter: bool,
    pub hyper_step: HyperStep,
    pub alpha_update: Cadence,
    pub rate_cut: Cadence,
    pub cnp: CnpMode,
    /// A window of payload bytes in flight beside the rate (ns-3 `HAS_WIN`, `VAR_WIN`; every
    /// preset: none, as `run.py --cc dcqcn`; `dcqcn_vwin` is `Variable`).
    pub window: RateWindow,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams::preset(DcqcnPreset::Retx)
    }
}

impl Controller for DcqcnParams {
    const NAME: &'static str = "dcqcn";
    type Cc = DcqcnRp;

    /// Fields by their names within `[cc.dcqcn]`.
    fn check(&self) -> Checked {
        check::range_f64("g", self.g, 0.0, 1.0)?;
        if self.rate_cut == Cadence::Periodic {
            // The period of the rate-cut checks.
            check::timer("decrease_interval", self.decrease_interval.0)?;
        }
        for (field, rate) in [("rate_ai", self.rate_ai), ("rate_hai", self.rate_hai), ("min_rate", self.min_rate)] {
            check::positive_rate(field, rate.0)?;
        }
        if self.rate_hai.0 < self.rate_ai.0 {
            return Err(check::FieldError::new("rate_hai", format!("{} must not be below rate_ai ({})", self.rate_hai.0, self.rate_ai.0)));
        }
        if self.use_byte_counter && self.byte_counter.0 == 0 {
            return Err(check::FieldError::new("byte_counter", "must be greater than 0 with use_byte_counter = true"));
        }
        check::timer("alpha_interval", self.alpha_interval.0)?;
        check::timer("increase_interval", self.increase_interval.0)
    }

    fn build(&self, s: &CcSetup) -> DcqcnRp {
        DcqcnRp::new(*self, s.line).with_path(s.path)
    }

    /// With marks echoed on ACKs the receiver sends no CNP packets.
    fn notification_point(&self) -> Option<CnpPacer> {
        (self.cnp == CnpMode::Paced).then(|| CnpPacer::new(self.cnp_interval.0))
    }
}

impl DcqcnParams {
    /// The parameters a preset stands for (see the module's comment for their sources).
    pub fn preset(preset: DcqcnPreset) -> Self {
        let retx = DcqcnParams {
            preset,
            g: 1.0 / 256.0,
            alpha_interval: Dur(Time::from_us(55)),
            increase_interval: Dur(Time::from_us(55)),
            byte_counter: Size(10_000_000),
            fast_recovery_steps: 5,
            rate_ai: Bw(Rate::mbps(40)),
            rate_hai: Bw(Rate::mbps(400)),
            min_rate: Bw(Rate::mbps(100)),
            decrease_interval: Dur(Time::from_us(4)),
            cnp_interval: Dur(Time::from_us(50)),
            clamp_target: true,
            use_byte_counter: true,
            hyper_step: HyperStep::Growing,
            alpha_update: Cadence::OnCnp,
            rate_cut: Cadence::OnCnp,
            cnp: CnpMode::Paced,
            window: RateWindow::None,
        };
        match preset {
            DcqcnPreset::Retx => retx,
            DcqcnPreset::Paper => DcqcnParams { decrease_interval: Dur(Time::ZERO), ..retx },
            // mix/config.txt as run.py writes it for --cc dcqcn: EWMA_GAIN 0.00390625,
            // ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4, RP_TIMER 300,
            // FAST_RECOVERY_TIMES 1, RATE_AI 20Mb/s, RATE_HAI 200Mb/s, MIN_RATE 1000Mb/s,
            // CLAMP_TARGET_RATE 0; no byte counter in rdma-hw.cc's Mlx functions.
            DcqcnPreset::Ns3 => DcqcnParams {
                alpha_interval: Dur(Time::from_us(1)),
                increase_interval: Dur(Time::from_us(300)),
                fast_recovery_steps: 1,
                rate_ai: Bw(Rate::mbps(20)),
                rate_hai: Bw(Rate::mbps(200)),
                min_rate: Bw(Rate::mbps(1000)),
                clamp_target: false,
                use_byte_counter: false,
                hyper_step: HyperStep::Constant,
                alpha_update: Cadence::Periodic,
                rate_cut: Cadence::Periodic,
                cnp: CnpMode::PerMark,
                ..retx
            },
        }
    }
}

/// What a scenario may write: a preset and any field to override in it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DcqcnFields {
    preset: Option<DcqcnPreset>,
    g: Option<f64>,
    alpha_interval: Option<Dur>,
    increase_interval: Option<Dur>,
    byte_counter: Option<Size>,
    fast_recovery_steps: Option<u32>,
    rate_ai: Option<Bw>,
    rate_hai: Option<Bw>,
    min_rate: Option<Bw>,
    decrease_interval: Option<Dur>,
    cnp_interval: Option<Dur>,
    clamp_target: Option<bool>,
    use_byte_counter: Option<bool>,
    hyper_step: Option<HyperStep>,
    alpha_update: Option<Cadence>,
    rate_cut: Option<Cadence>,
    cnp: Option<CnpMode>,
    window: Option<RateWindow>,
}

impl<'de> Deserialize<'de> for DcqcnParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = DcqcnFields::deserialize(d)?;
        let p = DcqcnParams::preset(f.preset.unwrap_or_default());
        Ok(DcqcnParams {
            preset: p.preset,
            g: f.g.unwrap_or(p.g),
            alpha_interval: f.alpha_interval.unwrap_or(p.alpha_interval),
            increase_interval: f.increase_interval.unwrap_or(p.increase_interval),
            byte_counter: f.byte_counter.unwrap_or(p.byte_counter),
            fast_recovery_steps: f.fast_recovery_steps.unwrap_or(p.fast_recovery_steps),
            rate_ai: f.rate_ai.unwrap_or(p.rate_ai),
            rate_hai: f.rate_hai.unwrap_or(p.rate_hai),
            min_rate: f.min_rate.unwrap_or(p.min_rate),
            decrease_interval: f.decrease_interval.unwrap_or(p.decrease_interval),
            cnp_interval: f.cnp_interval.unwrap_or(p.cnp_interval),
            clamp_target: f.clamp_target.unwrap_or(p.clamp_target),
            use_byte_counter: f.use_byte_counter.unwrap_or(p.use_byte_counter),
            hyper_step: f.hyper_step.unwrap_or(p.hyper_step),
            alpha_update: f.alpha_update.unwrap_or(p.alpha_update),
            rate_cut: f.rate_cut.unwrap_or(p.rate_cut),
            cnp: f.cnp.unwrap_or(p.cnp),
            window: f.window.unwrap_or(p.window),
        })
    }
}

/// Sender-side DCQCN state of one QP.
#[derive(Clone, Debug)]
pub struct DcqcnRp {
    p: DcqcnParams,
    line: Rate,
    /// The run's reference path, for the optional window (`with_path`; none by default).
    path: BasePath,
    /// Current rate Rc and target rate Rt, in bits per second (f64 to keep the halving exact
    /// enough; converted to an integer rate when pacing).
    rc: f64,
    rt: f64,
    alpha: f64,
    /// Increase events since the last cut, counted by timer and by bytes.
    timer_steps: u32,
    byte_steps: u32,
    bytes_since_step: u64,
    alpha_deadline: Option<Time>,
    increase_deadline: Option<Time>,
    last_cut: Option<Time>,
    pub cnps: u64,
    /// Periodic cadences run from the first CNP (None before it).
    first_cnp: Option<Time>,
    /// Periodic alpha: updates done so far (the k-th falls at first_cnp + k x interval); they
    /// are applied lazily, when a CNP or a cut needs alpha, so an idle flow costs no event.
    alpha_ticks: u64,
    /// A CNP arrived since the last periodic alpha update / the last cut check.
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// The pending periodic cut check.
    check_deadline: Option<Time>,
}

impl DcqcnRp {
    pub fn new(p: DcqcnParams, line: Rate) -> Self {
        DcqcnRp {
            p,
            line,
            path: BasePath::default(),
            rc: line.0 as f64,
            rt: line.0 as f64,
            alpha: 1.0,
            timer_steps: 0,
            byte_steps: 0,
            bytes_since_step: 0,
            alpha_deadline: None,
            increase_deadline: None,
            last_cut: None,
            cnps: 0,
            first_cnp: None,
            alpha_ticks: 0,
            alpha_cnp: false,
            decrease_cnp: false,
            check_deadline: None,
        }
    }

    /// Sizes the optional window from the run's reference path (ns-3 `maxBdp`, `GLOBAL_T 1`).
    pub fn with_path(mut self, path: BasePath) -> Self {
        self.path = path;
        self
    }

    pub fn params(&self) -> &DcqcnParams {
        &self.p
    }

    /// The most payload bytes in flight (None: no window): one BDP of the reference path, or
    /// with `window = "variable"` that BDP x the current rate / line rate, at least 1 byte
    /// (ns-3 `GetWin`, as TIMELY's).
    pub fn window(&self) -> Option<u64> {
        self.p.window.bytes(self.path.bdp_bytes, self.rc as u64, self.line.0)
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rc as u64)
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn target(&self) -> Rate {
        Rate(self.rt as u64)
    }

    /// A CNP arrived (or, with `cnp = "per-mark"`, an echoed mark): cut the rate now (at most
    /// once per decrease interval) or at the next periodic check, and raise alpha.
    pub fn on_cnp(&mut self, now: Time) {
        self.cnps += 1;
        let first = self.first_cnp.is_none();
        if first {
            self.first_cnp = Some(now);
        }
        if self.p.alpha_update == Cadence::Periodic {
            self.advance_alpha(now);
            // ns-3 `cnp_received_mlx`: the first CNP sets alpha to 1 and does not count.
            self.alpha_cnp = !first;
        }
        match self.p.rate_cut {
            Cadence::OnCnp => {
                if let Some(t) = self.last_cut {
                    if now < t + self.p.decrease_interval.0 {
                        return;
                    }
                }
                self.cut(now);
            }
            Cadence::Periodic => {
                self.decrease_cnp = true;
                if self.check_deadline.is_none() {
                    self.check_deadline = Some(self.next_check(now));
                }
            }
        }
    }

    /// The first periodic cut check after `now`: ns-3 checks at the first CNP + 1 ns +
    /// k x interval (the 1 ns puts each check after the alpha update of the same instant).
    fn next_check(&self, now: Time) -> Time {
        let origin = self.first_cnp.expect("after a CNP") + Time(1_000);
        let period = self.p.decrease_interval.0 .0.max(1);
        let k = (now.0.saturating_sub(origin.0)) / period + 1;
        Time(origin.0 + k * period)
    }

    /// Applies the periodic alpha updates due at or before `now` (ns-3 `UpdateAlphaMlx`): the
    /// first of them raises alpha if a CNP arrived since the last, the rest only decay it.
    fn advance_alpha(&mut self, now: Time) {
        let Some(origin) = self.first_cnp.filter(|_| self.p.alpha_update == Cadence::Periodic) else { return };
        let period = self.p.alpha_interval.0 .0;
        let due = (now.0 - origin.0) / period;
        if due <= self.alpha_ticks {
            return;
        }
        let g = self.p.g;
        self.alpha = if self.alpha_cnp { (1.0 - g) * self.alpha + g } else { (1.0 - g) * self.alpha };
        self.alpha_cnp = false;
        let rest = due - self.alpha_ticks - 1;
        if rest > 0 {
            self.alpha *= (1.0 - g).powi(rest.min(i32::MAX as u64) as i32);
        }
        self.alpha_ticks = due;
    }

    /// Cuts the rate by alpha / 2 and restarts the increase stages.
    fn cut(&mut self, now: Time) {
        self.last_cut = Some(now);
        // ns-3 `CheckRateDecreaseMlx`: without clamping, the target stays where it was unless
        // the rate has been increased since the last cut.
        if self.p.clamp_target || self.timer_steps > 0 || self.byte_steps > 0 {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.min_rate.0 .0 as f64);
        if self.p.alpha_update == Cadence::OnCnp {
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
            self.alpha_deadline = Some(now + self.p.alpha_interval.0);
        }
        self.timer_steps = 0;
        self.byte_steps = 0;
        self.bytes_since_step = 0;
        self.increase_deadline = Some(now + self.p.increase_interval.0);
    }

    /// Bytes were sent: the byte counter may trigger a rate increase step.
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.p.use_byte_counter || self.rc >= self.line.0 as f64 {
            return; // at line rate there is nothing to recover
        }
        self.bytes_since_step += bytes;
        if self.bytes_since_step >= self.p.byte_counter.0 {
            self.bytes_since_step = 0;
            self.byte_steps += 1;
            self.increase();
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        [self.alpha_deadline, self.increase_deadline, self.check_deadline].into_iter().flatten().min()
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(t) = self.check_deadline {
            if now >= t {
                self.check_deadline = None;
                self.advance_alpha(t);
                if self.decrease_cnp {
                    self.decrease_cnp = false;
                    self.cut(t);
                }
            }
        }
        if let Some(t) = self.alpha_deadline {
            if now >= t {
                self.alpha *= 1.0 - self.p.g;
                // Alpha keeps decaying while the flow is below line rate or alpha is material.
                self.alpha_deadline = Some(t + self.p.alpha_interval.0);
                if self.rc >= self.line.0 as f64 && self.alpha < 1e-6 {
                    self.alpha_deadline = None;
                }
            }
        }
        if let Some(t) = self.increase_deadline {
            if now >= t {
                self.timer_steps += 1;
                self.increase();
                self.increase_deadline =
                    if self.rc >= self.line.0 as f64 { None } else { Some(t + self.p.increase_interval.0) };
            }
        }
    }

    fn increase(&mut self) {
        let f = self.p.fast_recovery_steps;
        let line = self.line.0 as f64;
        let hai = self.p.rate_hai.0 .0 as f64;
        if !self.p.use_byte_counter {
            // ns-3 `RateIncEventMlx`: the stage is the number of timer events before this one.
            let stage = self.timer_steps - 1;
            if stage > f {
                let step = match self.p.hyper_step {
                    HyperStep::Growing => (stage - f) as f64 * hai,
                    HyperStep::Constant => hai,
                };
                self.rt = (self.rt + step).min(line);
            } else if stage == f {
                self.rt = (self.rt + self.p.rate_ai.0 .0 as f64).min(line);
            }
        } else if self.timer_steps.max(self.byte_steps) < f {
            // fast recovery: move halfway towards the target
        } else if self.timer_steps.min(self.byte_steps) > f {
            let i = (self.timer_steps.min(self.byte_steps) - f) as f64;
            let step = match self.p.hyper_step {
                HyperStep::Growing => i * hai,
                HyperStep::Constant => hai,
            };
            self.rt = (self.rt + step).min(line);
        } else {
            self.rt = (self.rt + self.p.rate_ai.0 .0 as f64).min(line);
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
    }
}

impl crate::transport::common::congestion::CongestionControl for DcqcnRp {
    fn rate(&self) -> Option<Rate> {
        Some(DcqcnRp::rate(self))
    }
    fn window(&self) -> Option<u64> {
        DcqcnRp::window(self)
    }
    fn on_sent(&mut self, _now: Time, bytes: u64) {
        DcqcnRp::on_sent(self, bytes);
    }
    /// With `cnp = "per-mark"` every ECN echo is a congestion notification (the HPCC ns-3
    /// model's DCQCN reacting to each marked ACK).
    fn on_ack(&mut self, now: Time, s: &crate::transport::common::feedback::AckSample) -> bool {
        if s.ece && self.params().cnp == CnpMode::PerMark {
            DcqcnRp::on_cnp(self, now);
            return true;
        }
        false
    }
    fn on_cnp(&mut self, now: Time) {
        DcqcnRp::on_cnp(self, now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        DcqcnRp::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Time) {
        DcqcnRp::handle_timeout(self, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cnp_cuts_by_half_alpha_then_fast_recovery_halves_the_gap() {
        let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
        rp.on_cnp(Time::from_us(10));
        // alpha starts at 1: Rc = 40 * (1 - 1/2) = 20 Gbps; Rt = 40.
        assert_eq!(rp.rate(), Rate::gbps(20));
        assert_eq!(rp.target(), Rate::gbps(40));
        assert!((rp.alpha() - (1.0 - 1.0 / 256.0 + 1.0 / 256.0)).abs() < 1e-12);
        // Second CNP inside the 4 us decrease interval is ignored.
        rp.on_cnp(Time::from_us(12));
        assert_eq!(rp.rate(), Rate::gbps(20));
        // First timer step at 10 + 55 us: fast recovery to (40 + 20) / 2 = 30 Gbps.
        assert_eq!(rp.poll_timeout(), Some(Time::from_us(65)));
        rp.handle_timeout(Time::from_us(65));
        assert_eq!(rp.rate(), Rate::gbps(30));
        assert!((rp.alpha() - (1.0 - 1.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn additive_then_hyper_increase_after_f_steps() {
        let p = DcqcnParams::default();
        let mut rp = DcqcnRp::new(p, Rate::gbps(40));
        rp.on_cnp(Time::ZERO);
        let mut t = Time::ZERO;
        for _ in 0..5 {
            t += p.increase_interval.0;
            rp.handle_timeout(t);
        }
        // Five fast-recovery steps: 20 -> 30 -> 35 -> 37.5 -> 38.75 -> 39.375 Gbps.
        assert!((rp.rate().0 as f64 - 39.375e9).abs() < 1.0);
        // Timer steps 6+ with byte steps 0: additive increase (min(t, bc) = 0 is not > F).
        t += p.increase_interval.0;
        rp.handle_timeout(t);
        assert_eq!(rp.target(), Rate::gbps(40)); // Rt capped at line rate
    }

    #[test]
    fn notification_point_paces_cnps() {
        let mut np = crate::transport::common::cnp::CnpPacer::new(Time::from_us(50));
        assert!(np.on_data(Time::from_us(1), true));
        assert!(!np.on_data(Time::from_us(2), true));
        assert!(!np.on_data(Time::from_us(60), false));
        assert!(np.on_data(Time::from_us(51), true));
    }

    /// The HPCC ns-3 model's Mellanox DCQCN, written out from `rdma-hw.cc` step by step
    /// (first CNP at 10 us: alpha = 1 and that CNP does not count; alpha updates every 1 us;
    /// cut checks at 10 us + 1 ns + k x 4 us; no clamp before the first increase; a 300 us
    /// timer; stage 0 fast recovery, stage 1 = F additive, then hyper by a constant 200 Mbps).
    #[test]
    fn ns3_preset_follows_the_mellanox_model_step_by_step() {
        let p = DcqcnParams::preset(DcqcnPreset::Ns3);
        let line: f64 = 100e9;
        let g: f64 = 1.0 / 256.0;
        let mut rp = DcqcnRp::new(p, Rate::gbps(100));
        let ns = |x: u64| Time(x * 1_000);
        rp.on_cnp(Time::from_us(10));
        assert_eq!(rp.rate(), Rate::gbps(100), "no cut before the first check");
        assert_eq!(rp.poll_timeout(), Some(ns(14_001)));
        rp.handle_timeout(ns(14_001));
        // Updates at 11..14 us, none counting a CNP: alpha = (1-g)^4; the target stays 100 G.
        let mut alpha = (1.0 - g).powi(4);
        let mut rc = line * (1.0 - alpha / 2.0);
        assert!((rp.alpha() - alpha).abs() < 1e-12);
        assert_eq!(rp.rate(), Rate(rc as u64));
        assert_eq!(rp.target(), Rate::gbps(100));

        // A second CNP at 20 us, before any increase: the next check is at 22.001 us. The
        // updates at 15..20 us decay alpha, the one at 21 us counts the CNP, 22 us decays.
        rp.on_cnp(Time::from_us(20));
        assert_eq!(rp.poll_timeout(), Some(ns(22_001)));
        rp.handle_timeout(ns(22_001));
        alpha *= (1.0 - g).powi(6);
        alpha = ((1.0 - g) * alpha + g) * (1.0 - g);
        rc *= 1.0 - alpha / 2.0;
        assert!((rp.alpha() - alpha).abs() < 1e-12, "{} vs {alpha}", rp.alpha());
        assert_eq!(rp.rate(), Rate(rc as u64));
        assert_eq!(rp.target(), Rate::gbps(100), "CLAMP_TARGET_RATE 0: no increase yet, no clamp");

        // The increase timer runs from the last cut: fast recovery halfway back to 100 G.
        assert_eq!(rp.poll_timeout(), Some(ns(322_001)));
        rp.handle_timeout(ns(322_001));
        rc = (rc + line) / 2.0;
        assert_eq!(rp.rate(), Rate(rc as u64));
        // A CNP now: after an increase the cut clamps the target to the current rate.
        rp.on_cnp(ns(330_000));
        let check = ns(330_001);
        assert_eq!(rp.poll_timeout(), Some(check));
        rp.handle_timeout(check);
        let decays = (330 - 22) - 1; // updates at 23..330 us; the one at 330 us counts nothing
        alpha *= (1.0 - g).powi(decays + 1);
        let rt = rc;
        rc *= 1.0 - alpha / 2.0;
        assert!((rp.alpha() - alpha).abs() < 1e-12, "{} vs {alpha}", rp.alpha());
        assert_eq!((rp.rate(), rp.target()), (Rate(rc as u64), Rate(rt as u64)));
        // Stage 0 fast recovery, stage 1 additive (+20 Mbps), stage 2 hyper (+200 Mbps).
        let mut t = check;
        let mut rt = rt;
        for (stage, step) in [(0, 0.0), (1, 20e6), (2, 200e6), (3, 200e6)] {
            t += Time::from_us(300);
            assert_eq!(rp.poll_timeout(), Some(t), "stage {stage}");
            rp.handle_timeout(t);
            rt = (rt + step).min(line);
            rc = (rc + rt) / 2.0;
            assert_eq!((rp.rate(), rp.target()), (Rate(rc as u64), Rate(rt as u64)), "stage {stage}");
        }
    }

    #[test]
    fn without_a_cnp_the_periodic_model_keeps_no_timer() {
        let rp = DcqcnRp::new(DcqcnParams::preset(DcqcnPreset::Ns3), Rate::gbps(100));
        assert_eq!(rp.poll_timeout(), None);
    }

    #[test]
    fn a_preset_fills_every_field_the_scenario_leaves_out() {
        let p: DcqcnParams = toml::from_str("preset = \"ns3\"\nrate_ai = \"40Mbps\"").unwrap();
        assert_eq!(p, DcqcnParams { rate_ai: Bw(Rate::mbps(40)), ..DcqcnParams::preset(DcqcnPreset::Ns3) });
        let p: DcqcnParams = toml::from_str("fast_recovery_steps = 2").unwrap();
        assert_eq!(p, DcqcnParams { fast_recovery_steps: 2, ..DcqcnParams::default() });
        assert_eq!(DcqcnParams::preset(DcqcnPreset::Paper).decrease_interval, Dur(Time::ZERO));
        let e = toml::from_str::<DcqcnParams>("preset = \"mlx\"").unwrap_err().to_string();
        assert!(e.contains("retx") && e.contains("ns3"), "{e}");
        assert!(toml::from_str::<DcqcnParams>("clamp = true").is_err());
    }

    #[test]
    fn presets_carry_their_sources_values() {
        // The DCQCN paper's values (module comment) and the HPCC ns-3 run.py / config.txt ones.
        let r = DcqcnParams::preset(DcqcnPreset::Retx);
        assert_eq!((r.g, r.fast_recovery_steps, r.byte_counter), (1.0 / 256.0, 5, Size(10_000_000)));
        assert_eq!((r.alpha_interval, r.increase_interval), (Dur(Time::from_us(55)), Dur(Time::from_us(55))));
        assert_eq!((r.decrease_interval, r.cnp_interval), (Dur(Time::from_us(4)), Dur(Time::from_us(50))));
        assert_eq!((r.rate_ai, r.rate_hai, r.min_rate), (Bw(Rate::mbps(40)), Bw(Rate::mbps(400)), Bw(Rate::mbps(100))));
        assert!(r.clamp_target && r.use_byte_counter);
        assert_eq!((r.hyper_step, r.alpha_update, r.rate_cut, r.cnp), (HyperStep::Growing, Cadence::OnCnp, Cadence::OnCnp, CnpMode::Paced));
        assert_eq!(r.window, RateWindow::None);
        let n = DcqcnParams::preset(DcqcnPreset::Ns3);
        assert_eq!((n.g, n.fast_recovery_steps), (1.0 / 256.0, 1));
        assert_eq!((n.alpha_interval, n.increase_interval, n.decrease_interval), (Dur(Time::from_us(1)), Dur(Time::from_us(300)), Dur(Time::from_us(4))));
        assert_eq!((n.rate_ai, n.rate_hai, n.min_rate), (Bw(Rate::mbps(20)), Bw(Rate::mbps(200)), Bw(Rate::mbps(1000))));
        assert!(!n.clamp_target && !n.use_byte_counter);
        assert_eq!((n.hyper_step, n.alpha_update, n.rate_cut, n.cnp), (HyperStep::Constant, Cadence::Periodic, Cadence::Periodic, CnpMode::PerMark));
        assert_eq!(DcqcnRp::new(n, Rate::gbps(100)).params(), &n);
    }

    #[test]
    fn a_cnp_exactly_one_decrease_interval_after_a_cut_cuts_again_and_every_cnp_counts() {
        let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
        rp.on_cnp(Time::from_us(10)); // alpha = 1: 20 G
        assert_eq!(rp.rate(), Rate::gbps(20));
        rp.on_cnp(Time::from_us(13)); // inside the 4 us: no cut
        assert_eq!(rp.rate(), Rate::gbps(20));
        let alpha = rp.alpha();
        rp.on_cnp(Time::from_us(14)); // exactly 4 us after the cut: allowed
        assert_eq!(rp.rate(), Rate((20e9 * (1.0 - alpha / 2.0)) as u64));
        assert_eq!(rp.cnps, 3);
    }

    #[test]
    fn the_byte_counter_steps_every_b_bytes_below_line_rate() {
        let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
        rp.on_sent(20_000_000); // at line rate: nothing to recover, nothing counted
        rp.on_cnp(Time::from_us(10)); // 20 G, target 40 G
        rp.on_cnp(Time::from_us(20)); // target clamped to 20 G, rate cut again
        let (mut rc, rt) = (rp.rc, rp.rt);
        assert_eq!(rp.target(), Rate::gbps(20));
        rp.on_sent(9_999_999);
        assert_eq!(rp.rc, rc, "one byte short of B = 10 MB");
        // Steps 1..4 (< F = 5): fast recovery halfway to the target; step 5: + R_AI.
        for step in 1..=5 {
            rp.on_sent(if step == 1 { 1 } else { 10_000_000 });
            let target = if step < 5 { rt } else { rt + 40e6 };
            rc = (rc + target) / 2.0;
            assert_eq!((rp.rc, rp.rt), (rc, target), "byte step {step}");
        }
        // Without the byte counter (HPCC ns-3), bytes move nothing.
        let p = DcqcnParams { use_byte_counter: false, ..DcqcnParams::default() };
        let mut rp = DcqcnRp::new(p, Rate::gbps(40));
        rp.on_cnp(Time::from_us(10));
        rp.on_sent(100_000_000);
        assert_eq!(rp.rate(), Rate::gbps(20));
    }

    /// Two cuts 10 us apart: the target is clamped to 20 G, below the 40 G line, so every
    /// increase step shows in it. Returns the controller and the time of the last cut.
    fn below_line(p: DcqcnParams) -> (DcqcnRp, Time) {
        let mut rp = DcqcnRp::new(p, Rate::gbps(40));
        rp.on_cnp(Time::from_us(10));
        rp.on_cnp(Time::from_us(20));
        assert_eq!(rp.target(), Rate::gbps(20));
        (rp, Time::from_us(20))
    }

    #[test]
    fn hyper_increase_needs_both_counters_past_f_and_grows_by_i_times_r_hai() {
        let p = DcqcnParams::default(); // F = 5, R_AI 40 Mbps, R_HAI 400 Mbps
        let (mut rp, mut t) = below_line(p);
        // Timer and byte steps alternate: (timer, byte) after each increase, and the target's
        // step: fast recovery while max < F, additive while min <= F, then hyper i x R_HAI
        // with i = min - F.
        let expected = [
            (1, 0, 0.0), (1, 1, 0.0), (2, 1, 0.0), (2, 2, 0.0), (3, 2, 0.0), (3, 3, 0.0), (4, 3, 0.0), (4, 4, 0.0),
            (5, 4, 40e6), (5, 5, 40e6), (6, 5, 40e6), (6, 6, 400e6), (7, 6, 400e6), (7, 7, 800e6),
        ];
        let (mut rt, mut rc) = (rp.rt, rp.rc);
        for (call, &(timer, bytes, step)) in expected.iter().enumerate() {
            if call % 2 == 0 {
                t += p.increase_interval.0;
                assert_eq!(rp.poll_timeout(), Some(t));
                rp.handle_timeout(t);
            } else {
                rp.on_sent(p.byte_counter.0);
            }
            assert_eq!((rp.timer_steps, rp.byte_steps), (timer, bytes));
            rt += step;
            rc = (rt + rc) / 2.0;
            assert_eq!((rp.rt, rp.rc), (rt, rc), "increase {}", call + 1);
        }
    }

    #[test]
    fn timer_only_increase_counts_stages_from_zero() {
        // ns-3's staging (no byte counter) with the paper's growing hyper step: stages 0..F-1
        // fast recovery, stage F additive, stage F + i hyper by i x R_HAI.
        let p = DcqcnParams { use_byte_counter: false, ..DcqcnParams::default() };
        let (mut rp, mut t) = below_line(p);
        let (mut rt, mut rc) = (rp.rt, rp.rc);
        for (stage, step) in [0.0, 0.0, 0.0, 0.0, 0.0, 40e6, 400e6, 800e6].into_iter().enumerate() {
            t += p.increase_interval.0;
            rp.handle_timeout(t);
            rt += step;
            rc = (rt + rc) / 2.0;
            assert_eq!((rp.rt, rp.rc), (rt, rc), "stage {stage}");
        }
    }

    #[test]
    fn without_clamping_a_byte_step_since_the_last_cut_lets_the_next_cut_clamp() {
        let p = DcqcnParams { clamp_target: false, ..DcqcnParams::default() };
        let mut rp = DcqcnRp::new(p, Rate::gbps(40));
        rp.on_cnp(Time::from_us(10)); // 20 G; the target stays 40 G
        rp.on_sent(10_000_000); // a byte step: 30 G
        assert_eq!(rp.rate(), Rate::gbps(30));
        rp.on_cnp(Time::from_us(20)); // an increase happened since the cut: clamp to 30 G
        assert_eq!(rp.target(), Rate::gbps(30));
    }

    #[test]
    fn a_cut_raises_alpha_from_where_it_decayed() {
        let g: f64 = 1.0 / 256.0;
        let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
        rp.on_cnp(Time::from_us(10)); // alpha = (1 - g) + g = 1
        rp.handle_timeout(Time::from_us(65)); // one decay period (K = 55 us)
        assert_eq!(rp.alpha(), 1.0 - g);
        rp.on_cnp(Time::from_us(70));
        assert_eq!(rp.alpha(), (1.0 - g) * (1.0 - g) + g);
    }

    #[test]
    fn alpha_decays_until_negligible_once_back_at_line_rate_then_its_timer_stops() {
        let g: f64 = 1.0 / 256.0;
        let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
        rp.on_cnp(Time::from_us(10));
        let mut ticks = 0;
        while let Some(t) = rp.poll_timeout() {
            // While the timer runs, alpha is material or the flow is still below line rate.
            assert!(rp.alpha() >= 1e-6 || rp.rate() < Rate::gbps(40), "tick {ticks}");
            rp.handle_timeout(t);
            ticks += 1;
            assert!(ticks < 5_000, "the timers never stop");
        }
        // Both timers stopped: back at line rate, alpha just under 1e-6 (~3,540 decays).
        assert_eq!(rp.rate(), Rate::gbps(40));
        assert!(rp.alpha() < 1e-6 && rp.alpha() >= 1e-6 * (1.0 - g), "{}", rp.alpha());
    }

    #[test]
    fn without_clamping_consecutive_cuts_keep_the_old_target() {
        // Paper mechanics, but CLAMP_TARGET_RATE 0: two cuts with no increase between them
        // leave the target at line rate, so recovery climbs back to it.
        let p = DcqcnParams { clamp_target: false, ..DcqcnParams::default() };
        let mut rp = DcqcnRp::new(p, Rate::gbps(40));
        rp.on_cnp(Time::from_us(10));
        rp.on_cnp(Time::from_us(20));
        assert_eq!(rp.target(), Rate::gbps(40));
        let clamped = {
            let mut rp = DcqcnRp::new(DcqcnParams::default(), Rate::gbps(40));
            rp.on_cnp(Time::from_us(10));
            rp.on_cnp(Time::from_us(20));
            rp.target()
        };
        assert_eq!(clamped, Rate::gbps(20));
    }

    #[test]
    fn the_window_is_none_fixed_or_scaled_by_the_current_rate() {
        let path = BasePath { rtt: Time::from_us(10), bdp_bytes: 125_000 };
        let with = |window| {
            let p = DcqcnParams { window, ..DcqcnParams::default() };
            let mut rp = DcqcnRp::new(p, Rate::gbps(100)).with_path(path);
            let before = rp.window();
            rp.on_cnp(Time::from_us(10)); // alpha = 1: the current rate halves
            (before, rp.window())
        };
        assert_eq!(with(RateWindow::None), (None, None));
        assert_eq!(with(RateWindow::Fixed), (Some(125_000), Some(125_000)));
        assert_eq!(with(RateWindow::Variable), (Some(125_000), Some(62_500)));
        // At the floor the variable window is BDP x min / line, at least 1 byte.
        let p = DcqcnParams { window: RateWindow::Variable, min_rate: Bw(Rate::mbps(1)), ..DcqcnParams::default() };
        let mut rp = DcqcnRp::new(p, Rate::gbps(100)).with_path(BasePath { rtt: Time::from_us(1), bdp_bytes: 50 });
        for i in 0..40 {
            rp.on_cnp(Time::from_us(10 + 10 * i));
        }
        assert_eq!((rp.rate(), rp.window()), (Rate::mbps(1), Some(1)));
        // No reference path: no window (ns-3: m_win = 0). Every preset defaults to none.
        assert_eq!(DcqcnRp::new(DcqcnParams { window: RateWindow::Fixed, ..DcqcnParams::default() }, Rate::gbps(100)).window(), None);
        for preset in [DcqcnPreset::Retx, DcqcnPreset::Paper, DcqcnPreset::Ns3] {
            assert_eq!(DcqcnParams::preset(preset).window, RateWindow::None);
        }
        let p: DcqcnParams = toml::from_str("preset = \"ns3\"\nwindow = \"variable\"").unwrap();
        assert_eq!(p, DcqcnParams { window: RateWindow::Variable, ..DcqcnParams::preset(DcqcnPreset::Ns3) });
        assert!(toml::from_str::<DcqcnParams>("window = \"dynamic\"").is_err());
    }
}
