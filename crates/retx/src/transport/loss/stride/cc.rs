//! STRIDE's congestion control (Algorithm 1 of "STRIDE: Single-Trip-time based Reliable Data
//! Transport Protocol for the Reconfigurable Cloud", §IV.C-D), computed as its FPGA would:
//! integer registers, shifts, additions, subtractions, comparisons and bounded loops. The
//! update path has no multiplication, division or floating point.
//!
//! STRIDE is rate based and reacts to the single trip time (STT): the receiver's receive
//! timestamp minus the sender's send timestamp, each read on its own host's clock. For each
//! sample [`StrideCc::on_stt`] runs one pass of Algorithm 1:
//! - STT_min, the smallest STT seen so far, takes in the new sample (line 2: S includes it).
//! - ΔSTT ← (1 − α)ΔSTT + α(STT_new − STT_old) with α = 2^−i, computed by shifts as
//!   `ΔSTT − (ΔSTT >> i) + ((STT_new − STT_old) >> i)` (line 4), then STT_old ← STT_new.
//! - STT below T_low: r += β. STT at or above T_high: r ← r − (r >> k), which is eq. (1),
//!   r(1 − 2^−k). Strictly between them, the normalised gradient g = ΔSTT / normaliser is
//!   found by repeated subtraction (eq. 2, lines 13-18); g ≤ 0 adds ω·β = β << log2(ω),
//!   g > 0 decreases (line 22, read as [`Decrease`] says).
//! - The rate stays in [min_rate, line rate].
//!
//! When to call it is the caller's choice: the paper measures the STT on every packet and
//! updates "every RTT" from two consecutive samples.
//!
//! Where the paper is silent, ambiguous or impossible in integers:
//! - Parameters: it gives only k = 3. α, β, ω, T_low, T_high and a rate floor are set from
//!   TIMELY, whose gradient scheme STRIDE follows ([`StrideCcParams`] says where each value
//!   comes from).
//! - Thresholds: "related to min-STT", with no values. Here T_low = STT_min + `t_low` and
//!   T_high = STT_min + `t_high`; the update compares q = STT_new − STT_min with `t_low` and
//!   `t_high`, the same comparisons for one subtraction instead of two additions. Thresholds
//!   built on the measured STT_min move with a clock offset between the hosts and cancel it,
//!   so the threshold branches do not depend on the offset.
//! - Line 22, r·(1 − g), is zero or negative for every integer g ≥ 1; [`Decrease`] offers the
//!   printed form (clamped at the floor) and two readings that keep a graded decrease.
//! - Normaliser: STT_min as printed, in which a clock offset changes the gradient (and can make
//!   the normaliser zero or negative), or a configured base STT (as TIMELY's configured
//!   minRTT), with which only differences of STTs matter ([`Normalizer`]).
//! - The loop of lines 15-18 counts g = ⌈ΔSTT / normaliser⌉ − 1 for ΔSTT > 0 (strict
//!   `>`): a positive ΔSTT of at most one normaliser gives g = 0, an increase. It stops after
//!   [`MAX_GRADIENT`] iterations, so a normaliser ≤ 0 (Δ never falls) still ends; such stops
//!   are counted ([`StrideCc::capped_loops`]).
//! - First sample: line 1 sets STT_old = 0, which would turn the whole first STT (the one-way
//!   delay, plus any clock offset) into a difference. The first sample only sets STT_old and
//!   STT_min and leaves ΔSTT at 0; it still runs lines 5-23, where q = 0 takes the T_low branch
//!   (or none when `t_low` = 0).
//! - An STT exactly at T_low matches none of lines 6, 9 and 12 (`<`, `≥`, strict `>`): as
//!   printed, the rate is left as it is ([`Branch::Between`]); ΔSTT and STT_old still update.
//! - Eq. (1) as printed sums r >> i for i = 1..k (k shifts, k − 1 additions, each term
//!   truncated); r − (r >> k) is the same product with one truncation (of the part
//!   removed), for one shift and one subtraction.
//! - Rounding: shifts are arithmetic, so `d >> i` rounds toward −∞ and `ΔSTT − (ΔSTT >> i)`
//!   is ⌈(1 − α)ΔSTT⌉. Registers are wide enough (i128) that nothing overflows; ΔSTT is stored
//!   saturated to 64 bits. The section IV.C text writes "T_low < r(t) < T_high"; line 12
//!   compares the STT, as here.

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{Checked, FieldError};
use crate::sim::units::{Bw, Dur, Rate, Time};
use serde::{Deserialize, Serialize};

/// Iterations after which the gradient loop (lines 15-18) stops even if Δ still exceeds the
/// normaliser: a bound on the clock cycles of one update. At the defaults nothing is lost: the
/// [`Decrease::Shift`] cut at g = 64 is (7/8)^64 < 2·10^−4 (10 Gb/s → below the 10 Mb/s floor),
/// and [`Decrease::FixedPoint`] counts eighths, where g ≥ 8 (a gradient of 1) already cuts to
/// the floor. With `frac_bits` > 6 gradients above 64 / 2^frac_bits are truncated to it.
pub const MAX_GRADIENT: u32 = 64;

/// How line 22, r ← r·(1 − g), is applied for an integer gradient g ≥ 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decrease {
    /// As printed: r·(1 − g) ≤ 0, so every positive gradient cuts to `min_rate`. (The sign is
    /// that of 1 − g, so no multiplier is needed: one subtraction and the clamp.)
    Literal,
    /// Eq. (1) applied g times, r ← r − (r >> k) per round: r(1 − 2^−k)^g ≈ r(1 − g/2^k), a
    /// cut that grows with g, in shifts and subtractions only, never to zero.
    #[default]
    Shift,
    /// The gradient in fixed point: the loop subtracts normaliser >> `frac_bits`, so g counts
    /// units of 2^−frac_bits, then r ← r − ((r·g) >> frac_bits), with r·g by shift-and-add over
    /// the set bits of g; clamped at `min_rate`. A positive gradient below one normaliser
    /// (below 1, which the integer loop counts as 0) decreases here too.
    FixedPoint,
}

/// What divides ΔSTT into the normalised gradient (eq. 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Normalizer {
    /// The paper: STT_min, the smallest STT observed. A clock offset between the hosts is in
    /// it, so the same queues give another gradient (and a normaliser ≤ 0 hits the loop bound).
    #[default]
    Measured,
    /// `base_stt`, configured as TIMELY configures its minRTT: only differences of STTs are
    /// used anywhere, so a constant clock offset changes no decision. (In both modes the
    /// thresholds sit above the measured STT_min.)
    Configured,
}

/// Which part of Algorithm 1 the last update took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Branch {
    /// STT < T_low: r += β (lines 6-8).
    BelowLow,
    /// STT ≥ T_high: eq. (1) (lines 9-11).
    AboveHigh,
    /// Between the thresholds with g ≤ 0: r += ω·β (lines 19-20).
    GradientIncrease,
    /// Between the thresholds with g > 0: the [`Decrease`] (lines 21-22).
    GradientDecrease,
    /// STT exactly T_low: no line applies as printed, the rate stays.
    Between,
}

/// STRIDE parameters. The paper gives k alone; the others follow TIMELY (Mittal et al.,
/// SIGCOMM 2015), which it cites for the gradient scheme, at the 10 Gb/s of its testbed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StrideCcParams {
    /// α = 2^−alpha_shift, the EWMA weight of the newest STT difference (line 4). Default 1
    /// (α = 1/2): the paper gives no value; TIMELY weights the newest sample heavily (its
    /// ns-3 model: α = 0.875), and 1/2 is the power of two closest to that which still averages.
    pub alpha_shift: u32,
    /// Additive step β (lines 7 and 20). Default 10 Mbps: TIMELY's δ for 10 Gb/s NICs.
    pub beta: Bw,
    /// ω = 2^omega_shift weights β in the gradient region (line 20), so ω·β is a shift. Default
    /// 2 (ω = 4): the power of two nearest TIMELY's hyperactive increase N = 5.
    pub omega_shift: u32,
    /// T_low as queueing delay above STT_min. Default 30 µs: TIMELY's T_low = 50 µs over its
    /// minRTT = 20 µs is 30 µs of queueing, and forward queueing adds the same to an STT as to
    /// an RTT.
    pub t_low: Dur,
    /// T_high as queueing delay above STT_min. Default 480 µs: TIMELY's T_high = 500 µs less
    /// its minRTT = 20 µs, as for `t_low`.
    pub t_high: Dur,
    /// The shift of eq. (1), r(1 − 2^−k). Default 3: the paper's "we have k = 3".
    pub k: u32,
    /// How a positive gradient decreases (line 22). Default shift ([`Decrease::Shift`]).
    pub decrease: Decrease,
    /// Fraction bits of the gradient with [`Decrease::FixedPoint`]. Default 3 (eighths, as
    /// fine as k = 3's step).
    pub frac_bits: u32,
    /// Rate floor. Default 10 Mbps, one β: the paper gives none. (The ceiling is the line rate.)
    pub min_rate: Bw,
    /// What normalises the gradient. Default the paper's measured STT_min.
    pub normalizer: Normalizer,
    /// The normaliser with [`Normalizer::Configured`]. Default 10 µs: one way of TIMELY's
    /// minRTT = 20 µs.
    pub base_stt: Dur,
}

impl Default for StrideCcParams {
    fn default() -> Self {
        StrideCcParams {
            alpha_shift: 1,
            beta: Bw(Rate::mbps(10)),
            omega_shift: 2,
            t_low: Dur(Time::from_us(30)),
            t_high: Dur(Time::from_us(480)),
            k: 3,
            decrease: Decrease::Shift,
            frac_bits: 3,
            min_rate: Bw(Rate::mbps(10)),
            normalizer: Normalizer::Measured,
            base_stt: Dur(Time::from_us(10)),
        }
    }
}

impl Controller for StrideCcParams {
    const NAME: &'static str = "stride";
    type Cc = StrideCc;

    /// Fields by their names within `[cc.stride]`: why these parameters cannot run.
    fn check(&self) -> Checked {
        let shifts = [("alpha_shift", self.alpha_shift, 0), ("omega_shift", self.omega_shift, 0), ("k", self.k, 1), ("frac_bits", self.frac_bits, 0)];
        for (field, v, lo) in shifts {
            if !(lo..=16).contains(&v) {
                return Err(FieldError::new(field, format!("{v} is not a shift from {lo} to 16")));
            }
        }
        if self.t_low >= self.t_high {
            return Err(FieldError::new("t_high", format!("{} must be above t_low = {}", self.t_high.0, self.t_low.0)));
        }
        for (field, zero) in [("beta", self.beta.0 .0 == 0), ("min_rate", self.min_rate.0 .0 == 0), ("base_stt", self.base_stt.0 .0 == 0)] {
            if zero {
                return Err(FieldError::new(field, "must be above 0"));
            }
        }
        Ok(())
    }

    fn build(&self, s: &CcSetup) -> StrideCc {
        StrideCc::new(*self, s.line)
    }

    /// The FPGA rate calculator's operation counts and the STT samples' steadiness over
    /// every connection.
    fn report<'a>(ccs: &mut dyn Iterator<Item = &'a StrideCc>) -> Vec<(&'static str, f64)> {
        let mut ops = OpCount::default();
        let mut steadiness = Vec::new();
        for c in ccs {
            ops.add(c.ops());
            steadiness.push(c.steadiness);
        }
        let mut report = ops.report();
        report.extend(SttSteadiness::report(steadiness.iter()));
        report
    }
}

/// The operations the updates performed, as the FPGA would perform them. Counting rule:
/// - `shifts`, `adds` (additions and subtractions, increments included) and `compares` are
///   counted where the update performs them; a comparison whose outcome earlier ones imply is
///   not made (line 12's T_high > STT after line 9 failed, line 21 after line 19).
/// - Every update: 1 compare (STT_min), 1 subtraction (q = STT − STT_min); after the first
///   sample also the EWMA, 2 shifts and 3 add/sub (the difference, − ΔSTT >> i, + diff >> i).
/// - Branch tests: 1 compare to take T_low, 2 for T_high, 3 to reach the gradient region or
///   [`Branch::Between`]. An increase: 1 add (+ 1 shift for ω·β) and 1 compare (the line
///   rate); a decrease 1 compare (the floor).
/// - Gradient loop: per iteration 1 compare, 1 add (g++), 1 subtraction; 1 more compare for
///   the exit (Δ ≤ normaliser, or the bound); then 1 compare (g ≤ 0). FixedPoint: 1 shift for
///   normaliser >> frac_bits.
/// - Decrease: eq. (1) 1 shift, 1 subtraction. Shift mode per round 1 compare (g > 0), 1 shift
///   and 1 subtraction (eq. 1), 1 subtraction (g−−), plus the final compare. Literal 1
///   subtraction (1 − g). FixedPoint 1 shift and 1 add per set bit of g (the product), 1 shift
///   (>> frac_bits) and 1 subtraction.
///
/// `loop_iterations` sums the gradient loop's iterations (lines 15-18), `max_loop` is the most
/// in one update.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpCount {
    pub updates: u64,
    pub shifts: u64,
    pub adds: u64,
    pub compares: u64,
    pub loop_iterations: u64,
    pub max_loop: u64,
}

impl OpCount {
    /// Shifts, additions and comparisons together.
    pub fn total(&self) -> u64 {
        self.shifts + self.adds + self.compares
    }

    /// Operations per update on average (0 before any).
    pub fn per_update(&self) -> f64 {
        if self.updates == 0 { 0.0 } else { self.total() as f64 / self.updates as f64 }
    }
}

impl OpCount {
    /// Adds another connection's counts (`max_loop`: the larger).
    pub fn add(&mut self, o: &OpCount) {
        self.updates += o.updates;
        self.shifts += o.shifts;
        self.adds += o.adds;
        self.compares += o.compares;
        self.loop_iterations += o.loop_iterations;
        self.max_loop = self.max_loop.max(o.max_loop);
    }

    /// A run's figures over its connections' counts: what the FPGA's rate calculator did
    /// (nothing is reported when no STRIDE update ran).
    pub fn report(&self) -> Vec<(&'static str, f64)> {
        if self.updates == 0 {
            return Vec::new();
        }
        let per = |x: u64| x as f64 / self.updates as f64;
        vec![
            ("stride_cc_updates", self.updates as f64),
            ("stride_cc_ops_per_update", self.per_update()),
            ("stride_cc_shifts_per_update", per(self.shifts)),
            ("stride_cc_adds_per_update", per(self.adds)),
            ("stride_cc_compares_per_update", per(self.compares)),
            ("stride_cc_loop_iterations_per_update", per(self.loop_iterations)),
            ("stride_cc_max_loop", self.max_loop as f64),
        ]
    }
}

/// How steady the STT samples of one connection were (the paper's Fig. 8 clock-drift view):
/// the largest |STT(t) / STT(1) − 1| and |STT(t) / STT(t + 1) − 1|. A measurement for the
/// report, outside the FPGA's update path (it divides).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SttSteadiness {
    first: Option<i64>,
    prev: i64,
    pub samples: u64,
    pub max_from_first: f64,
    pub max_step: f64,
}

impl SttSteadiness {
    pub fn observe(&mut self, stt: i64) {
        self.samples += 1;
        let Some(first) = self.first else {
            self.first = Some(stt);
            self.prev = stt;
            return;
        };
        let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { (a as f64 / b as f64 - 1.0).abs() };
        self.max_from_first = self.max_from_first.max(ratio(stt, first));
        self.max_step = self.max_step.max(ratio(self.prev, stt));
        self.prev = stt;
    }

    /// The largest of each over a run's connections (nothing without samples).
    pub fn report<'a>(all: impl Iterator<Item = &'a SttSteadiness>) -> Vec<(&'static str, f64)> {
        let (mut n, mut first, mut step) = (0, 0.0f64, 0.0f64);
        for s in all {
            n += s.samples;
            first = first.max(s.max_from_first);
            step = step.max(s.max_step);
        }
        if n == 0 {
            return Vec::new();
        }
        vec![("stride_stt_max_dev_from_first", first), ("stride_stt_max_dev_step", step)]
    }
}

/// `x >> s`, arithmetic; shifts past the width give the sign (no panic for unvalidated shifts).
fn sar(x: i128, s: u32) -> i128 {
    x >> s.min(127)
}

/// `x >> s`, logical; shifts past the width give 0.
fn shr(x: u64, s: u32) -> u64 {
    x.checked_shr(s).unwrap_or(0)
}

/// Sender-side STRIDE state of one connection.
#[derive(Clone, Debug)]
pub struct StrideCc {
    p: StrideCcParams,
    /// Line rate in bits per second: the ceiling and the starting rate.
    line: u64,
    /// `min_rate`, held at the line rate if above it.
    floor: u64,
    /// The current rate in bits per second.
    rate: u64,
    /// STT_min in picoseconds; None before the first sample.
    stt_min: Option<i64>,
    stt_old: i64,
    /// Smoothed STT difference, picoseconds.
    delta_stt: i64,
    last_branch: Option<Branch>,
    ops: OpCount,
    capped: u64,
    /// How steady the samples were (reported, not used by the algorithm).
    pub steadiness: SttSteadiness,
}

impl StrideCc {
    pub fn new(p: StrideCcParams, line: Rate) -> Self {
        let floor = p.min_rate.0 .0.min(line.0);
        StrideCc { p, line: line.0, floor, rate: line.0, stt_min: None, stt_old: 0, delta_stt: 0, last_branch: None, ops: OpCount::default(), capped: 0, steadiness: SttSteadiness::default() }
    }

    pub fn params(&self) -> &StrideCcParams {
        &self.p
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }

    pub fn ops(&self) -> &OpCount {
        &self.ops
    }

    /// The line rate: the ceiling and the starting rate.
    pub fn line(&self) -> Rate {
        Rate(self.line)
    }

    /// STT_old: the last sample, picoseconds (0 before any).
    pub fn stt_old(&self) -> i64 {
        self.stt_old
    }

    /// The smallest STT seen, picoseconds.
    pub fn stt_min(&self) -> Option<i64> {
        self.stt_min
    }

    /// The smoothed STT difference ΔSTT, picoseconds.
    pub fn delta_stt(&self) -> i64 {
        self.delta_stt
    }

    pub fn last_branch(&self) -> Option<Branch> {
        self.last_branch
    }

    /// Updates whose gradient loop stopped at [`MAX_GRADIENT`] with Δ still above the
    /// normaliser (a normaliser ≤ 0, or a gradient past the bound).
    pub fn capped_loops(&self) -> u64 {
        self.capped
    }

    /// One pass of Algorithm 1 on an STT in picoseconds, as measured: the receiver's receive
    /// timestamp minus the sender's send timestamp, each on its own clock (so it may be
    /// negative or huge with a clock offset).
    pub fn on_stt(&mut self, stt: i64) {
        self.steadiness.observe(stt);
        let o = &mut self.ops;
        o.updates += 1;
        // Line 2: S includes the new sample.
        o.compares += 1;
        let first = self.stt_min.is_none();
        let min = self.stt_min.map_or(stt, |m| m.min(stt));
        self.stt_min = Some(min);
        if !first {
            // Line 4 by shifts: ⌈(1 − α)ΔSTT⌉ + ⌊α·diff⌋.
            let i = self.p.alpha_shift;
            let d = self.delta_stt as i128;
            let diff = stt as i128 - self.stt_old as i128;
            let next = d - sar(d, i) + sar(diff, i);
            self.delta_stt = next.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            o.shifts += 2;
            o.adds += 3;
        }
        // Line 5.
        self.stt_old = stt;
        // Queueing delay above STT_min: never negative, as STT_min includes this sample.
        let q = (stt as i128 - min as i128) as u128;
        o.adds += 1;
        let (t_low, t_high) = (self.p.t_low.0 .0 as u128, self.p.t_high.0 .0 as u128);
        if q < t_low {
            o.compares += 1;
            self.last_branch = Some(Branch::BelowLow);
            self.increase(self.p.beta.0 .0 as u128);
        } else if q >= t_high {
            o.compares += 2;
            self.last_branch = Some(Branch::AboveHigh);
            self.ops.shifts += 1;
            self.ops.adds += 1;
            self.cut_to(self.rate as u128 - shr(self.rate, self.p.k) as u128);
        } else if q > t_low {
            o.compares += 3;
            self.gradient_region(min);
        } else {
            o.compares += 3;
            self.last_branch = Some(Branch::Between);
        }
    }

    /// Lines 13-22, for an STT strictly between the thresholds.
    fn gradient_region(&mut self, stt_min: i64) {
        let fixed = self.p.decrease == Decrease::FixedPoint;
        let mut norm = match self.p.normalizer {
            Normalizer::Measured => stt_min as i128,
            Normalizer::Configured => self.p.base_stt.0 .0 as i128,
        };
        if fixed {
            norm = sar(norm, self.p.frac_bits);
            self.ops.shifts += 1;
        }
        // Eq. (2) by repeated subtraction, bounded: a normaliser ≤ 0 never lowers Δ.
        let mut delta = self.delta_stt as i128;
        let mut g = 0u32;
        while g < MAX_GRADIENT && delta > norm {
            g += 1;
            delta -= norm;
        }
        if delta > norm {
            self.capped += 1;
        }
        let o = &mut self.ops;
        o.compares += g as u64 + 1 + 1; // the iterations, the exit, line 19
        o.adds += 2 * g as u64;
        o.loop_iterations += g as u64;
        o.max_loop = o.max_loop.max(g as u64);
        if g == 0 {
            self.last_branch = Some(Branch::GradientIncrease);
            self.ops.shifts += 1;
            self.increase((self.p.beta.0 .0 as u128) << self.p.omega_shift.min(64));
            return;
        }
        self.last_branch = Some(Branch::GradientDecrease);
        let r = self.rate;
        let next = match self.p.decrease {
            Decrease::Literal => {
                // r·(1 − g) with 1 − g ≤ 0: not positive, so the floor.
                self.ops.adds += 1;
                0
            }
            Decrease::Shift => {
                let mut r = r;
                for _ in 0..g {
                    r -= shr(r, self.p.k);
                }
                let o = &mut self.ops;
                o.compares += g as u64 + 1;
                o.shifts += g as u64;
                o.adds += 2 * g as u64;
                r as u128
            }
            Decrease::FixedPoint => {
                // r·g by shift-and-add: g ≤ 64 and r < 2^64 fit 128 bits.
                let mut product = 0u128;
                for b in 0..u32::BITS - g.leading_zeros() {
                    if (g >> b) & 1 == 1 {
                        product += (r as u128) << b;
                        self.ops.shifts += 1;
                        self.ops.adds += 1;
                    }
                }
                self.ops.shifts += 1;
                self.ops.adds += 1;
                (r as u128).saturating_sub(product >> self.p.frac_bits.min(127))
            }
        };
        self.cut_to(next);
    }

    /// r += step, capped at the line rate.
    fn increase(&mut self, step: u128) {
        self.rate = (self.rate as u128 + step).min(self.line as u128) as u64;
        self.ops.adds += 1;
        self.ops.compares += 1;
    }

    /// r ← next (at most r), held at the floor.
    fn cut_to(&mut self, next: u128) {
        self.rate = next.max(self.floor as u128) as u64;
        self.ops.compares += 1;
    }
}

impl crate::transport::common::congestion::CongestionControl for StrideCc {
    fn rate(&self) -> Option<Rate> {
        Some(StrideCc::rate(self))
    }
    /// Every ACK and NACK carries the STT of the packet that triggered it.
    fn on_ack(&mut self, _now: Time, s: &crate::transport::common::feedback::AckSample) -> bool {
        if let Some(stt) = s.one_way {
            self.on_stt(stt);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::gbps(10);

    fn us(x: i64) -> i64 {
        x * 1_000_000
    }

    fn cc(p: StrideCcParams) -> StrideCc {
        StrideCc::new(p, LINE)
    }

    /// (rate, branch) after each sample.
    fn run(c: &mut StrideCc, stts: &[i64]) -> Vec<(u64, Branch)> {
        stts.iter()
            .map(|&s| {
                c.on_stt(s);
                (c.rate().0, c.last_branch().unwrap())
            })
            .collect()
    }

    /// The [shifts, adds, compares, loop iterations] of one update.
    fn ops_of(c: &mut StrideCc, stt: i64) -> [u64; 4] {
        let a = *c.ops();
        c.on_stt(stt);
        let b = *c.ops();
        assert_eq!(b.updates, a.updates + 1);
        [b.shifts - a.shifts, b.adds - a.adds, b.compares - a.compares, b.loop_iterations - a.loop_iterations]
    }

    #[test]
    fn below_t_low_adds_beta() {
        let mut c = cc(StrideCcParams::default());
        c.rate = 5_000_000_000;
        // First sample: q = 0 < 30 us. Then q = 29.999999 us, still below.
        c.on_stt(us(10));
        assert_eq!((c.rate().0, c.last_branch()), (5_010_000_000, Some(Branch::BelowLow)));
        c.on_stt(us(40) - 1);
        assert_eq!((c.rate().0, c.last_branch()), (5_020_000_000, Some(Branch::BelowLow)));
        assert_eq!(c.params(), &StrideCcParams::default());
    }

    #[test]
    fn at_or_above_t_high_cuts_by_eq1_with_truncation() {
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(10));
        // q = 480 us exactly = t_high: 10e9 − 10e9 >> 3 = 10e9 − 1.25e9.
        // Then 900 us, and falling to 600 us, still above T_high: cuts whatever the gradient.
        // 7_656_250_000 >> 3 = 957_031_250; 6_699_218_750 >> 3 = 837_402_343 (…343.75).
        let got = run(&mut c, &[us(490), us(900), us(600), us(600)]);
        let rates: Vec<u64> = got.iter().map(|x| x.0).collect();
        assert_eq!(rates, [8_750_000_000, 7_656_250_000, 6_699_218_750, 5_861_816_407]);
        assert!(got.iter().all(|x| x.1 == Branch::AboveHigh));
        // 10e9 x (7/8)^4 = 5_861_816_406.25: one truncation per cut, of the part removed.
    }

    #[test]
    fn a_gradient_of_at_most_one_normaliser_adds_omega_beta() {
        let mut c = cc(StrideCcParams::default());
        c.rate = 5_000_000_000;
        // 10 us: +β → 5.01 G. 500 us: q = 490, cut: 5_010_000_000 − 626_250_000;
        // ΔSTT = 490 us >> 1 = 245 us.
        // 100 us: q = 90, in the region; ΔSTT = 245 − 122.5 − 200 = −77.5 us: g = 0, +4β.
        // 100 us: ΔSTT = −77.5 + 38.75 + 0 = −38.75 us: +4β.
        // 150 us: ΔSTT = −38.75 + 19.375 + 25 = 5.625 us > 0, but not above STT_min = 10 us:
        // the loop counts g = 0 and the rate still increases.
        let got = run(&mut c, &[us(10), us(500), us(100), us(100), us(150)]);
        let inc = Branch::GradientIncrease;
        assert_eq!(
            got,
            [
                (5_010_000_000, Branch::BelowLow),
                (4_383_750_000, Branch::AboveHigh),
                (4_423_750_000, inc),
                (4_463_750_000, inc),
                (4_503_750_000, inc)
            ]
        );
        assert_eq!(c.delta_stt(), 5_625_000);
        assert_eq!(c.ops().loop_iterations, 0);
    }

    #[test]
    fn a_positive_gradient_applies_eq1_g_times_by_default() {
        let mut c = cc(StrideCcParams::default());
        // 10 us then 100 us: q = 90 us, ΔSTT = 45 us; 45 > 10 four times (35, 25, 15, 5): g = 4.
        // 10e9 → 8_750_000_000 → 7_656_250_000 → 6_699_218_750 → 5_861_816_407.
        c.on_stt(us(10));
        c.on_stt(us(100));
        assert_eq!((c.rate().0, c.last_branch()), (5_861_816_407, Some(Branch::GradientDecrease)));
        assert_eq!((c.ops().loop_iterations, c.ops().max_loop, c.capped_loops()), (4, 4, 0));
        // Literal: r·(1 − 4) < 0, held at the 10 Mbps floor.
        let mut c = cc(StrideCcParams { decrease: Decrease::Literal, ..Default::default() });
        run(&mut c, &[us(10), us(100)]);
        assert_eq!((c.rate().0, c.last_branch()), (10_000_000, Some(Branch::GradientDecrease)));
    }

    #[test]
    fn fixed_point_counts_eighths_of_the_gradient() {
        let mut c = cc(StrideCcParams { decrease: Decrease::FixedPoint, ..Default::default() });
        // STT_min = 100 us, normaliser 100 us >> 3 = 12.5 us. 190 us: q = 90, ΔSTT = 45 us,
        // a gradient of 0.45 (g = 0 for the integer loop); here 45 > 12.5 three times
        // (32.5, 20, 7.5): g = 3 eighths. r·3 = 23_333_333_331, >> 3 = 2_916_666_666.
        c.on_stt(us(100));
        c.rate = 7_777_777_777;
        c.on_stt(us(190));
        assert_eq!((c.rate().0, c.last_branch()), (4_861_111_111, Some(Branch::GradientDecrease)));
        // The same samples with the integer loop: 45 us ≤ 100 us, g = 0, +4β.
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(100));
        c.rate = 7_777_777_777;
        c.on_stt(us(190));
        assert_eq!((c.rate().0, c.last_branch()), (7_817_777_777, Some(Branch::GradientIncrease)));
        // A gradient of 1 or more (g ≥ 8 eighths) cuts to the floor: 10 → 100 us gives
        // ΔSTT = 45 us over 1.25 us: g = ⌈36⌉ − 1 = 35.
        let mut c = cc(StrideCcParams { decrease: Decrease::FixedPoint, ..Default::default() });
        run(&mut c, &[us(10), us(100)]);
        assert_eq!((c.rate().0, c.ops().loop_iterations), (10_000_000, 35));
    }

    #[test]
    fn an_stt_exactly_at_t_low_takes_no_branch() {
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(10));
        c.rate = 5_000_000_000;
        // q = 30 us = t_low: not <, not ≥ T_high, not > T_low. ΔSTT still moves: 30 >> 1.
        c.on_stt(us(40));
        assert_eq!((c.rate().0, c.last_branch(), c.delta_stt()), (5_000_000_000, Some(Branch::Between), 15_000_000));
        // One picosecond more is in the gradient region: ΔSTT = 15 − 7.5 us + (1 ps >> 1 = 0)
        // = 7.5 us ≤ 10 us: g = 0, +4β.
        c.on_stt(us(40) + 1);
        assert_eq!((c.rate().0, c.last_branch(), c.delta_stt()), (5_040_000_000, Some(Branch::GradientIncrease), 7_500_000));
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_the_line_rate() {
        // At line rate an increase stays there.
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(10));
        assert_eq!(c.rate(), LINE);
        c.rate = LINE.0 - 1;
        c.on_stt(us(10));
        assert_eq!(c.rate(), LINE);
        // A cut below the floor stops there: 11 Mbps − 1.375 Mbps < 10 Mbps.
        c.rate = 11_000_000;
        c.on_stt(us(500));
        assert_eq!((c.rate().0, c.last_branch()), (10_000_000, Some(Branch::AboveHigh)));
        // Another cut at the floor stays at it.
        c.on_stt(us(500));
        assert_eq!(c.rate().0, 10_000_000);
        // A floor above the line rate is held at the line rate.
        let mut c = cc(StrideCcParams { min_rate: Bw(Rate::gbps(20)), ..Default::default() });
        run(&mut c, &[us(10), us(500)]);
        assert_eq!((c.rate(), c.last_branch()), (LINE, Some(Branch::AboveHigh)));
    }

    #[test]
    fn the_first_sample_sets_stt_old_and_stt_min_only() {
        let mut c = cc(StrideCcParams::default());
        assert_eq!((c.stt_min(), c.last_branch(), c.rate()), (None, None, LINE));
        // Even a huge first STT is STT_min: q = 0, the T_low branch, and ΔSTT stays 0 (line 1's
        // STT_old = 0 would give α x 900 us).
        c.rate = 5_000_000_000;
        c.on_stt(us(900));
        assert_eq!((c.stt_min(), c.delta_stt(), c.last_branch()), (Some(us(900)), 0, Some(Branch::BelowLow)));
        assert_eq!(c.rate().0, 5_010_000_000);
        // The second sample's difference is from the first: α x 10 us.
        c.on_stt(us(910));
        assert_eq!((c.stt_min(), c.delta_stt()), (Some(us(900)), 5_000_000));
        // A smaller sample lowers STT_min before the comparisons: q = 0 again.
        c.on_stt(us(800));
        assert_eq!((c.stt_min(), c.last_branch()), (Some(us(800)), Some(Branch::BelowLow)));
    }

    #[test]
    fn the_ewma_is_exact_in_shifts_and_rounds_as_documented() {
        // α = 1/2 on raw picoseconds. ΔSTT − (ΔSTT >> 1) rounds up, diff >> 1 rounds down:
        // 0 | +3: 0 + 1 = 1 | −3: 1 − 0 − 2 = −1 | 0: −1 + 1 + 0 = 0 | −5: 0 − 3 = −3 |
        // +7: −3 + 2 + 3 = 2.
        let mut c = cc(StrideCcParams::default());
        let mut got = vec![];
        for s in [1000, 1003, 1000, 1000, 995, 1002] {
            c.on_stt(s);
            got.push(c.delta_stt());
        }
        assert_eq!(got, [0, 1, -1, 0, -3, 2]);
        // α = 1/8: +80_000: 10_000 | 0: 10_000 − 1_250 = 8_750 | −80_000: 8_750 − 1_093 −
        // 10_000 = −2_343 | 0: −2_343 − (−293) = −2_050 (⌈7/8 x −2_343⌉ = ⌈−2_050.1⌉).
        let mut c = cc(StrideCcParams { alpha_shift: 3, ..Default::default() });
        let mut got = vec![];
        for s in [0, 80_000, 80_000, 0, 0] {
            c.on_stt(s);
            got.push(c.delta_stt());
        }
        assert_eq!(got, [0, 10_000, 8_750, -2_343, -2_050]);
    }

    #[test]
    fn op_counts_of_one_update_per_branch() {
        let mut c = cc(StrideCcParams::default());
        // First sample, T_low: min compare, q, branch compare, +β and its cap.
        assert_eq!(ops_of(&mut c, us(10)), [0, 2, 3, 0]);
        // T_low: EWMA 2 shifts + 3 add/sub, q, 1 branch compare, +β, cap.
        assert_eq!(ops_of(&mut c, us(20)), [2, 5, 3, 0]);
        // T_high: + 2 branch compares, r >> 3 and the subtraction, the floor compare.
        assert_eq!(ops_of(&mut c, us(600)), [3, 5, 4, 0]);
        // Exactly T_low: three branch compares, nothing else.
        assert_eq!(ops_of(&mut c, us(40)), [2, 4, 4, 0]);
        // A gradient increase, from a larger STT_min.
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(100));
        // 100 → 140 us: ΔSTT = 20 us ≤ 100 us, g = 0. 3 branch compares, the loop's exit
        // compare, line 19, β << 2, +ω·β and its cap.
        assert_eq!(ops_of(&mut c, us(140)), [3, 5, 7, 0]);
        // Shift decrease with g = 4 (10 → 100 us): loop 4 x (compare, g++, Δ −) + exit,
        // line 19, 4 rounds x (compare, shift, two subtractions) + exit, the floor compare.
        let mut c = cc(StrideCcParams::default());
        c.on_stt(us(10));
        assert_eq!(ops_of(&mut c, us(100)), [6, 20, 16, 4]);
        // Literal, g = 4: the loop, 1 − g, the floor compare.
        let mut c = cc(StrideCcParams { decrease: Decrease::Literal, ..Default::default() });
        c.on_stt(us(10));
        assert_eq!(ops_of(&mut c, us(100)), [2, 13, 11, 4]);
        // FixedPoint, g = 3 = 0b11 (100 → 190 us): normaliser >> 3, loop 3 + exit, line 19,
        // two partial products (shift + add each), >> 3, the subtraction, the floor compare.
        let mut c = cc(StrideCcParams { decrease: Decrease::FixedPoint, ..Default::default() });
        c.on_stt(us(100));
        assert_eq!(ops_of(&mut c, us(190)), [6, 13, 10, 3]);
        // Totals over both updates: (2 + 3) + (6 + 13 + 10) = 34 ops, 17 per update.
        assert_eq!((c.ops().total(), c.ops().per_update(), c.ops().max_loop), (34, 17.0, 3));
    }

    /// STTs in us crossing every branch: T_low, Between, cuts with g = 3, 1 and 3 (ΔSTT 36.25,
    /// 18.125, 34.0625 us over 10 us), T_high, increases (ΔSTT −29, −61, −38 us).
    const MIXED: [i64; 11] = [10, 20, 40, 100, 100, 150, 600, 300, 35, 60, 45];

    #[test]
    fn configured_normaliser_ignores_a_clock_offset() {
        let p = StrideCcParams { normalizer: Normalizer::Configured, ..Default::default() };
        let with = |offset: i64| {
            let mut c = cc(p);
            run(&mut c, &MIXED.map(|s| us(s) + offset))
        };
        let base = with(0);
        use Branch::*;
        let branches: Vec<Branch> = base.iter().map(|x| x.1).collect();
        assert_eq!(
            branches,
            [BelowLow, BelowLow, Between, GradientDecrease, GradientDecrease, GradientDecrease, AboveHigh, GradientIncrease, BelowLow, GradientIncrease, GradientIncrease]
        );
        // +1 ms, −5 us, and −1 ms (every STT negative): the same rates.
        for offset in [1_000_000_000, -5_000_000, -1_000_000_000] {
            assert_eq!(with(offset), base, "offset {offset} ps");
        }
        // The measured normaliser is not invariant: with +1 ms STT_min = 1.01 ms and the
        // g = 3 cut at 100 us becomes an increase.
        let mut c = cc(StrideCcParams::default());
        let measured = run(&mut c, &MIXED.map(|s| us(s) + 1_000_000_000));
        assert_eq!(measured[3].1, GradientIncrease);
        assert_ne!(measured, base);
    }

    #[test]
    fn threshold_branches_ignore_a_clock_offset_with_the_measured_normaliser() {
        // STT_min 10 us: q = 0, 10, 490, 590, 25, 30 (Between), 480, 5.
        let stts = [10, 20, 500, 600, 35, 40, 490, 15];
        let with = |offset: i64| {
            let mut c = cc(StrideCcParams::default());
            c.rate = 5_000_000_000;
            run(&mut c, &stts.map(|s| us(s) + offset))
        };
        let base = with(0);
        // 5.01, 5.02 G; cuts 5.02 − 0.6275 = 4.3925, − 0.5490625 = 3.8434375; +β; stay; cut
        // 3.8534375 − 0.4816796875 (truncated) = 3.371757813; +β.
        let rates: Vec<u64> = base.iter().map(|x| x.0).collect();
        assert_eq!(rates, [5_010_000_000, 5_020_000_000, 4_392_500_000, 3_843_437_500, 3_853_437_500, 3_853_437_500, 3_371_757_813, 3_381_757_813]);
        for offset in [1_000_000_000, -5_000_000, -50_000_000] {
            assert_eq!(with(offset), base, "offset {offset} ps");
        }
    }

    #[test]
    fn a_non_positive_normaliser_stops_at_the_loop_bound() {
        // A −50 us offset: STT_min = −40 us ≤ 0, so Δ never falls below it.
        let mut c = cc(StrideCcParams::default());
        run(&mut c, &[us(-40), us(50)]);
        assert_eq!((c.ops().loop_iterations, c.ops().max_loop, c.capped_loops()), (64, 64, 1));
        // g = 64: 10e9 x (7/8)^64 ≈ 1.9 Mbps, held at the floor.
        assert_eq!((c.rate().0, c.last_branch()), (10_000_000, Some(Branch::GradientDecrease)));
        // FixedPoint with a normaliser under 2^frac_bits ps: 7 >> 3 = 0, also bounded.
        let p = StrideCcParams { decrease: Decrease::FixedPoint, normalizer: Normalizer::Configured, base_stt: Dur(Time(7)), ..Default::default() };
        let mut c = cc(p);
        run(&mut c, &[us(10), us(50)]);
        assert_eq!((c.ops().loop_iterations, c.capped_loops(), c.rate().0), (64, 1, 10_000_000));
        // A gradient past the bound with a positive normaliser is capped too: ΔSTT = 225 us
        // over 1 us (base 1 us) is 224 > 64.
        let p = StrideCcParams { normalizer: Normalizer::Configured, base_stt: Dur(Time::from_us(1)), ..Default::default() };
        let mut c = cc(p);
        run(&mut c, &[us(10), us(460)]);
        assert_eq!((c.ops().loop_iterations, c.capped_loops()), (64, 1));
    }

    #[test]
    fn extreme_stts_and_unvalidated_shifts_do_not_panic() {
        // α = 1: ΔSTT = the difference, ±(2^64 − 1), saturated to 64 bits.
        let mut c = cc(StrideCcParams { alpha_shift: 0, ..Default::default() });
        c.on_stt(i64::MAX);
        c.on_stt(i64::MIN);
        assert_eq!((c.delta_stt(), c.stt_min()), (i64::MIN, Some(i64::MIN)));
        c.on_stt(i64::MAX);
        // q = 2^64 − 1 ≥ T_high: one eq. (1) cut from line rate.
        assert_eq!((c.delta_stt(), c.last_branch(), c.rate().0), (i64::MAX, Some(Branch::AboveHigh), 8_750_000_000));
        // Shifts past the width: r >> 200 = 0, so eq. (1) cuts nothing; d >> 200 is d's sign:
        // ΔSTT = 0 + (−5 us >> 200) = −1, then −1 − (−1) + 0 = 0.
        let p = StrideCcParams { k: 200, alpha_shift: 200, omega_shift: 200, ..Default::default() };
        let mut c = cc(p);
        run(&mut c, &[us(10), us(5), us(600)]);
        assert_eq!((c.rate(), c.delta_stt(), c.last_branch()), (LINE, 0, Some(Branch::AboveHigh)));
        // ΔSTT = −1 ≤ STT_min = 5 us: g = 0. ω·β = 10 Mbps << 64 (a shift past 64 bits is
        // held at 64), capped at the line rate.
        c.rate = 1_000_000_000;
        c.on_stt(us(300));
        assert_eq!((c.rate(), c.last_branch()), (LINE, Some(Branch::GradientIncrease)));
    }

    #[test]
    fn validate_names_the_field_at_fault() {
        assert_eq!(StrideCcParams::default().check(), Ok(()));
        let d = StrideCcParams::default();
        let cases = [
            (StrideCcParams { alpha_shift: 17, ..d }, "alpha_shift"),
            (StrideCcParams { omega_shift: 17, ..d }, "omega_shift"),
            (StrideCcParams { k: 0, ..d }, "k"),
            (StrideCcParams { k: 17, ..d }, "k"),
            (StrideCcParams { frac_bits: 17, ..d }, "frac_bits"),
            (StrideCcParams { t_low: Dur(Time::from_us(480)), ..d }, "t_high"),
            (StrideCcParams { beta: Bw(Rate(0)), ..d }, "beta"),
            (StrideCcParams { min_rate: Bw(Rate(0)), ..d }, "min_rate"),
            (StrideCcParams { base_stt: Dur(Time(0)), ..d }, "base_stt"),
        ];
        for (p, field) in cases {
            assert_eq!(p.check().unwrap_err().field, field);
        }
        assert_eq!(StrideCcParams { k: 17, ..d }.check().unwrap_err().message, "17 is not a shift from 1 to 16");
        assert_eq!(StrideCcParams { k: 16, alpha_shift: 16, omega_shift: 16, frac_bits: 16, ..d }.check(), Ok(()));
    }

    #[test]
    fn params_parse_with_defaults_and_reject_unknown_fields() {
        let p: StrideCcParams = toml::from_str("decrease = \"fixed-point\"\nnormalizer = \"configured\"\nbase_stt = \"20us\"\nbeta = \"5Mbps\"").unwrap();
        let want = StrideCcParams {
            decrease: Decrease::FixedPoint,
            normalizer: Normalizer::Configured,
            base_stt: Dur(Time::from_us(20)),
            beta: Bw(Rate::mbps(5)),
            ..Default::default()
        };
        assert_eq!(p, want);
        assert!(toml::from_str::<StrideCcParams>("gamma = 1").is_err());
        let text = toml::to_string(&StrideCcParams::default()).unwrap();
        assert!(text.contains("t_high = \"480us\"") && text.contains("decrease = \"shift\""), "{text}");
        assert_eq!(toml::from_str::<StrideCcParams>(&text).unwrap(), StrideCcParams::default());
    }

    #[test]
    fn op_counts_sum_over_connections_and_report_per_update() {
        let a = OpCount { updates: 2, shifts: 6, adds: 4, compares: 10, loop_iterations: 3, max_loop: 2 };
        let b = OpCount { updates: 3, shifts: 9, adds: 11, compares: 5, loop_iterations: 7, max_loop: 5 };
        let mut sum = a;
        sum.add(&b);
        assert_eq!(sum, OpCount { updates: 5, shifts: 15, adds: 15, compares: 15, loop_iterations: 10, max_loop: 5 });
        sum.add(&a); // max_loop keeps the larger
        assert_eq!(sum.max_loop, 5);
        let r = OpCount { updates: 4, shifts: 8, adds: 12, compares: 20, loop_iterations: 6, max_loop: 3 }.report();
        assert_eq!(
            r,
            vec![
                ("stride_cc_updates", 4.0),
                ("stride_cc_ops_per_update", 10.0),
                ("stride_cc_shifts_per_update", 2.0),
                ("stride_cc_adds_per_update", 3.0),
                ("stride_cc_compares_per_update", 5.0),
                ("stride_cc_loop_iterations_per_update", 1.5),
                ("stride_cc_max_loop", 3.0),
            ]
        );
        assert!(OpCount::default().report().is_empty());
    }

    #[test]
    fn stt_steadiness_measures_drift_from_the_first_sample_and_per_step() {
        let mut s = SttSteadiness::default();
        for stt in [1000, 1010, 1030, 990] {
            s.observe(stt);
        }
        assert_eq!(s.samples, 4);
        // From the first: 1030 / 1000 - 1 = 0.03; per step: |1030 / 990 - 1| = 40 / 990.
        assert!((s.max_from_first - 0.03).abs() < 1e-12, "{}", s.max_from_first);
        assert!((s.max_step - 40.0 / 990.0).abs() < 1e-12, "{}", s.max_step);
        let mut other = SttSteadiness::default();
        other.observe(500);
        other.observe(600); // 0.2 from the first; step |500 / 600 - 1|
        let r = SttSteadiness::report([s, other].iter());
        assert_eq!((r[0].0, r[1].0), ("stride_stt_max_dev_from_first", "stride_stt_max_dev_step"));
        assert!((r[0].1 - 0.2).abs() < 1e-12);
        assert!((r[1].1 - 100.0 / 600.0).abs() < 1e-12);
        // A zero first STT gives no ratio instead of an infinity.
        let mut z = SttSteadiness::default();
        z.observe(0);
        z.observe(5);
        assert_eq!((z.max_from_first, z.max_step), (0.0, 1.0));
        assert!(SttSteadiness::report([SttSteadiness::default()].iter()).is_empty());
    }

    #[test]
    fn a_gradient_of_an_exact_multiple_is_not_capped() {
        // ΔSTT = 2 x STT_min: one subtraction leaves Δ = STT_min, which ends the loop (g = 1).
        let p = StrideCcParams { alpha_shift: 2, ..Default::default() };
        let mut c = cc(p);
        assert_eq!(c.params(), &p);
        c.delta_stt = 2 * us(10);
        c.gradient_region(us(10));
        assert_eq!((c.ops().loop_iterations, c.capped_loops()), (1, 0));
        // 65 x STT_min: the 64th subtraction leaves exactly STT_min, so the bound is reached
        // with nothing left over and the gradient is exact, not capped.
        let mut c = cc(p);
        c.delta_stt = 65 * us(10);
        c.gradient_region(us(10));
        assert_eq!((c.ops().loop_iterations, c.capped_loops()), (64, 0));
    }
}
