//! DCQCN (Zhu et al., SIGCOMM 2015): the reaction point (sender rate control) and the
//! notification point (receiver CNP generation).
//!
//! Defaults are the DCQCN paper's values (g = 1/256, N = 50 us, K = 55 us, T = 55 us,
//! B = 10 MB, F = 5, R_AI = 40 Mbps) as public models of it reproduce them (htsim's dcqcn.cpp:
//! CNP interval 50 us, update period 55 us; the DCQCN fluid-model scripts); each is
//! configurable. The HPCC ns-3 model's own DCQCN uses Mellanox firmware values instead (timer
//! 300 us, F = 1, R_AI 5 Mbps, no byte counter).

use crate::sim::units::{Rate, Time};
use serde::{Deserialize, Serialize};

/// DCQCN parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnParams {
    /// EWMA gain for alpha (paper: g = 1/256).
    pub g: f64,
    /// Alpha decays once per this interval without CNP (paper: K = 55 us).
    pub alpha_interval: crate::sim::units::Dur,
    /// Rate increase timer (paper: T = 55 us).
    pub increase_interval: crate::sim::units::Dur,
    /// Rate increase byte counter (paper: B = 10 MB).
    pub byte_counter: crate::sim::units::Size,
    /// Fast recovery steps before additive increase (paper: F = 5).
    pub fast_recovery_steps: u32,
    /// Additive increase step (paper: R_AI = 40 Mbps).
    pub rate_ai: crate::sim::units::Bw,
    /// Hyper increase step. No retrievable source states the paper's value; 10 x R_AI follows
    /// the HAI/AI ratio of the HPCC ns-3 model (50 / 5 Mbps).
    pub rate_hai: crate::sim::units::Bw,
    /// Rate floor (HPCC ns-3 `MinRate` default, 100 Mbps).
    pub min_rate: crate::sim::units::Bw,
    /// At most one rate cut per this interval (HPCC ns-3 model RATE_DECREASE_INTERVAL = 4 us).
    pub decrease_interval: crate::sim::units::Dur,
    /// Notification point: at most one CNP per flow per this interval (paper: N = 50 us).
    pub cnp_interval: crate::sim::units::Dur,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        use crate::sim::units::{Bw, Dur, Size};
        DcqcnParams {
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
        }
    }
}

/// Sender-side DCQCN state of one QP.
#[derive(Clone, Debug)]
pub struct DcqcnRp {
    p: DcqcnParams,
    line: Rate,
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
}

impl DcqcnRp {
    pub fn new(p: DcqcnParams, line: Rate) -> Self {
        DcqcnRp {
            p,
            line,
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
        }
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

    /// A CNP arrived: cut the rate (at most once per decrease interval) and raise alpha.
    pub fn on_cnp(&mut self, now: Time) {
        self.cnps += 1;
        if let Some(t) = self.last_cut {
            if now < t + self.p.decrease_interval.0 {
                return;
            }
        }
        self.last_cut = Some(now);
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.min_rate.0 .0 as f64);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.timer_steps = 0;
        self.byte_steps = 0;
        self.bytes_since_step = 0;
        self.alpha_deadline = Some(now + self.p.alpha_interval.0);
        self.increase_deadline = Some(now + self.p.increase_interval.0);
    }

    /// Bytes were sent: the byte counter may trigger a rate increase step.
    pub fn on_sent(&mut self, bytes: u64) {
        if self.rc >= self.line.0 as f64 {
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
        match (self.alpha_deadline, self.increase_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
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
        if self.timer_steps.max(self.byte_steps) < f {
            // fast recovery: move halfway towards the target
        } else if self.timer_steps.min(self.byte_steps) > f {
            let i = (self.timer_steps.min(self.byte_steps) - f) as f64;
            self.rt = (self.rt + i * self.p.rate_hai.0 .0 as f64).min(line);
        } else {
            self.rt = (self.rt + self.p.rate_ai.0 .0 as f64).min(line);
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
    }
}

/// Receiver-side CNP pacing of one QP.
#[derive(Clone, Debug, Default)]
pub struct DcqcnNp {
    interval: Time,
    last_cnp: Option<Time>,
}

impl DcqcnNp {
    pub fn new(interval: Time) -> Self {
        DcqcnNp { interval, last_cnp: None }
    }

    /// A data packet arrived; returns true if a CNP must be sent for it.
    pub fn on_data(&mut self, now: Time, ecn: bool) -> bool {
        if !ecn {
            return false;
        }
        if let Some(t) = self.last_cnp {
            if now < t + self.interval {
                return false;
            }
        }
        self.last_cnp = Some(now);
        true
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
        let mut np = DcqcnNp::new(Time::from_us(50));
        assert!(np.on_data(Time::from_us(1), true));
        assert!(!np.on_data(Time::from_us(2), true));
        assert!(!np.on_data(Time::from_us(60), false));
        assert!(np.on_data(Time::from_us(51), true));
    }
}
