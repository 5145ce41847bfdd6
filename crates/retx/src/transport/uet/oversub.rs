//! The receiver's congestion control for an oversubscribed fabric (uet-htsim
//! `OversubscribedCC`, oversubscribed_cc.cpp, one per host beside its pull pacer,
//! `main_uec.cpp:760-762`). RCCC alone grants credit at the receiver's line rate; where the
//! fabric carries less than that per host, the credit overfills the uplinks and most packets
//! are trimmed there. Every `(0.75 + U/2) x 1.5` network RTTs the host looks at what arrived
//! since: trims short of the last hop take their share off the rate at once, an ECN average
//! above 0.3 cuts it multiplicatively, else it grows (doubling steps while no mark arrives);
//! the pacer then paces pulls at that share of its rate, never below 0.9 / the
//! oversubscription.

use crate::sim::rng::mix64;
use crate::sim::units::Time;

/// `_target_congestion`, `_Ai`, `_Md`, `_alpha` (oversubscribed_cc.cpp:6-10; uet-htsim's
/// `-Ai`, `-Md`, `-alpha` flags change the last three).
const TARGET_CONGESTION: f64 = 0.3;
const AI: f64 = 0.01;
const MD: f64 = 0.5;
const ALPHA: f64 = 0.5;

/// How a host's control is set up (run-wide but for the seed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OversubCfg {
    /// `_base_rtt`: the network's longest unloaded round trip (`main_uec.cpp:726-727`).
    pub base_rtt: Time,
    /// `_min_rate`: 0.9 / the oversubscription, at least 0.01 (`setOversubscriptionRatio`).
    pub min_rate: f64,
    /// Seeds the intervals' draws (uet-htsim draws them from its global generator).
    pub seed: u64,
}

impl OversubCfg {
    /// `setOversubscriptionRatio` (oversubscribed_cc.h:39-44): 0.01 unless a ratio above 1.
    pub fn min_rate_for(ratio: f64) -> f64 {
        if ratio > 1.0 { (0.9 / ratio).max(0.01) } else { 0.01 }
    }
}

/// A packet a host's receiver got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Data { ecn: bool },
    Trimmed { last_hop: bool },
    Other,
}

/// One host's control.
#[derive(Clone, Debug)]
pub struct OversubCc {
    cfg: OversubCfg,
    /// `_rate`: the share of the pacer's rate it may pull at.
    rate: f64,
    /// `_g`: the ECN-marked share, averaged.
    g: f64,
    increase_count: i32,
    /// Since the last look: packets, ECN-marked ones, trims at the last hop and before it.
    received: u64,
    ecn: u64,
    trimmed_last_hop: u64,
    trimmed_other: u64,
    /// When it looks next.
    next: Time,
    draws: u64,
}

impl OversubCc {
    /// Started at time 0, as uet-htsim builds it with the network.
    pub fn new(cfg: OversubCfg) -> Self {
        let mut c = OversubCc {
            cfg,
            rate: 1.0,
            g: 0.0,
            increase_count: 0,
            received: 0,
            ecn: 0,
            trimmed_last_hop: 0,
            trimmed_other: 0,
            next: Time::ZERO,
            draws: mix64(cfg.seed ^ 0x4f56_4552_5355_4243),
        };
        c.next = c.interval();
        c
    }

    /// `nextInterval`: 1.5 network RTTs, spread 0.75-1.25x so hosts do not look in step.
    fn interval(&mut self) -> Time {
        self.draws = mix64(self.draws.wrapping_add(0x9E37_79B9_7F4A_7C15));
        let u = (self.draws >> 11) as f64 / (1u64 << 53) as f64;
        Time(((0.75 + u / 2.0) * 1.5 * self.cfg.base_rtt.0 as f64) as u64)
    }

    /// The looks due by `now`, in order; true when the rate may have changed.
    pub fn catch_up(&mut self, now: Time) -> bool {
        let mut looked = false;
        while self.next <= now {
            self.look();
            let gap = self.interval().max(Time(1));
            self.next = self.next + gap;
            looked = true;
        }
        looked
    }

    /// A packet arrived (after the looks due by its time).
    pub fn count(&mut self, arrival: Arrival) {
        self.received += 1;
        match arrival {
            Arrival::Data { ecn: true } => self.ecn += 1,
            Arrival::Trimmed { last_hop: true } => self.trimmed_last_hop += 1,
            Arrival::Trimmed { last_hop: false } => self.trimmed_other += 1,
            Arrival::Data { ecn: false } | Arrival::Other => {}
        }
    }

    /// The share of its rate the pacer may pull at.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// `doCongestionControl` (oversubscribed_cc.cpp:39-89).
    fn look(&mut self) {
        let total = self.received as f64;
        let full = self.received.saturating_sub(self.trimmed_last_hop + self.trimmed_other);
        let fraction = if full != 0 { self.ecn as f64 / full as f64 } else { 0.0 };
        let mut decrease = false;
        if self.trimmed_other > 0 {
            self.rate -= self.trimmed_other as f64 / total;
            decrease = true;
        }
        self.g = self.g * (1.0 - ALPHA) + ALPHA * fraction;
        if self.g > TARGET_CONGESTION && MD > 0.0 {
            self.rate *= 1.0 - (self.g - TARGET_CONGESTION) * MD;
            decrease = true;
        }
        if !decrease {
            self.rate += if self.ecn == 0 { AI * 2f64.powi(self.increase_count) } else { AI };
            self.increase_count += 1;
        } else {
            self.increase_count = 0;
        }
        self.rate = self.rate.clamp(self.cfg.min_rate, 1.0);
        (self.received, self.ecn, self.trimmed_last_hop, self.trimmed_other) = (0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc() -> OversubCc {
        OversubCc::new(OversubCfg { base_rtt: Time::from_us(10), min_rate: OversubCfg::min_rate_for(4.0), seed: 1 })
    }

    #[test]
    fn looks_come_every_one_to_two_network_rtts() {
        let mut c = cc();
        let mut last = Time::ZERO;
        for _ in 0..200 {
            let due = c.next;
            let gap = due.0 - last.0;
            assert!((11_250_000..=18_750_000).contains(&gap), "{gap} ps");
            last = due;
            c.catch_up(due);
        }
    }

    #[test]
    fn trims_before_the_last_hop_take_their_share_off_and_the_floor_holds() {
        let mut c = cc();
        for _ in 0..75 {
            c.count(Arrival::Trimmed { last_hop: false });
        }
        for _ in 0..25 {
            c.count(Arrival::Data { ecn: false });
        }
        let first = c.next;
        c.catch_up(first);
        // 1 - 75/100.
        assert!((c.rate() - 0.25).abs() < 1e-12, "{}", c.rate());
        for _ in 0..100 {
            c.count(Arrival::Trimmed { last_hop: false });
        }
        let second = c.next;
        c.catch_up(second);
        // 0.25 - 1 is below 0.9 / 4.
        assert!((c.rate() - 0.225).abs() < 1e-12, "{}", c.rate());
    }

    #[test]
    fn last_hop_trims_do_not_slow_it_and_quiet_looks_double_the_increase() {
        let mut c = cc();
        c.rate = 0.5;
        for _ in 0..10 {
            c.count(Arrival::Trimmed { last_hop: true });
        }
        let t = c.next;
        c.catch_up(t);
        assert!((c.rate() - 0.51).abs() < 1e-12);
        let t = c.next;
        c.catch_up(t);
        assert!((c.rate() - 0.53).abs() < 1e-12);
        let t = c.next;
        c.catch_up(t);
        assert!((c.rate() - 0.57).abs() < 1e-12);
    }

    #[test]
    fn marks_above_the_target_cut_it() {
        let mut c = cc();
        for _ in 0..10 {
            c.count(Arrival::Data { ecn: true });
        }
        let t = c.next;
        c.catch_up(t);
        // g = 0.5 x 1.0 = 0.5 > 0.3: rate x (1 - 0.2 x 0.5).
        assert!((c.rate() - 0.9).abs() < 1e-12, "{}", c.rate());
    }
}
