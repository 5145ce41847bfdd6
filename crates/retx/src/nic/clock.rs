//! A host's clock: what its NIC's hardware timestamps read. Transports see time only through
//! it, so one-way delays measured across hosts include the clocks' offset and drift, as they do
//! in hardware. The default clock is perfect (local time = simulated time).

use crate::sim::units::Time;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostClock {
    /// Local minus true time at t = 0, picoseconds.
    pub offset_ps: i64,
    /// Rate error, parts per billion (25 000 ppb is a 0.0025 % crystal error).
    pub drift_ppb: i64,
}

impl HostClock {
    pub fn is_perfect(&self) -> bool {
        self.offset_ps == 0 && self.drift_ppb == 0
    }

    /// The local reading at true time `t` (never before local zero).
    pub fn local(&self, t: Time) -> Time {
        if self.is_perfect() {
            return t;
        }
        let v = t.0 as i128 + self.offset_ps as i128 + t.0 as i128 * self.drift_ppb as i128 / 1_000_000_000;
        Time(v.clamp(0, u64::MAX as i128) as u64)
    }

    /// The earliest true time at which the local clock reads at least `local`.
    pub fn global(&self, local: Time) -> Time {
        if self.is_perfect() {
            return local;
        }
        // Solve t + offset + t * drift / 1e9 >= local for the smallest integer t.
        let num = (local.0 as i128 - self.offset_ps as i128) * 1_000_000_000;
        let den = 1_000_000_000 + self.drift_ppb as i128;
        let mut t = (num.div_euclid(den)).max(0);
        while (self.local(Time(t as u64))) < local {
            t += 1;
        }
        Time(t.clamp(0, u64::MAX as i128) as u64)
    }
}

/// How the run's host clocks are drawn: every host reads `base`, moved by its own uniform
/// draws within +-`offset_spread_ps` and +-`drift_spread_ppb` from the host's random stream
/// (so two hosts' clocks drift apart as two crystals do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockPlan {
    pub base: HostClock,
    pub offset_spread_ps: u64,
    pub drift_spread_ppb: u64,
}

impl ClockPlan {
    /// The clock of host `node` under root `seed` (no draw without a spread).
    pub fn host(&self, seed: u64, node: usize) -> HostClock {
        if self.offset_spread_ps == 0 && self.drift_spread_ppb == 0 {
            return self.base;
        }
        let mut rng = crate::sim::rng::stream(seed, crate::sim::rng::Stream::HostClock, node as u64);
        let mut within = |spread: u64| -> i64 {
            let span = 2 * spread as u128 + 1;
            (rng.next_u64() as u128 % span) as i64 - spread as i64
        };
        let offset = within(self.offset_spread_ps);
        let drift = within(self.drift_spread_ppb);
        HostClock { offset_ps: self.base.offset_ps + offset, drift_ppb: self.base.drift_ppb + drift }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_and_global_invert_each_other() {
        let c = HostClock { offset_ps: 5_000, drift_ppb: 25_000 };
        assert_eq!(c.local(Time::from_ms(1)), Time(1_000_000_000 + 5_000 + 25_000));
        for t in [0u64, 1, 999, 1_000_000_007, 123_456_789_012] {
            let l = c.local(Time(t));
            let g = c.global(l);
            assert!(c.local(g) >= l && g <= Time(t), "t {t}: local {l:?} global {g:?}");
        }
        assert_eq!(HostClock::default().local(Time(42)), Time(42));
    }

    #[test]
    fn a_plan_draws_each_host_within_its_spread_and_repeats_by_seed() {
        let base = HostClock { offset_ps: 1_000, drift_ppb: -2_000 };
        let plan = ClockPlan { base, offset_spread_ps: 500, drift_spread_ppb: 25_000 };
        let clocks: Vec<HostClock> = (0..200).map(|n| plan.host(7, n)).collect();
        for c in &clocks {
            assert!((500..=1_500).contains(&c.offset_ps), "{c:?}");
            assert!((-27_000..=23_000).contains(&c.drift_ppb), "{c:?}");
        }
        // Hosts differ, the spread is used on both sides, and the same seed repeats.
        assert!(clocks.iter().any(|c| c.drift_ppb < -2_000 - 12_500) && clocks.iter().any(|c| c.drift_ppb > -2_000 + 12_500));
        assert_ne!(clocks[0], clocks[1]);
        assert_eq!(plan.host(7, 3), clocks[3]);
        assert_ne!(plan.host(8, 3), clocks[3]);
        // Without a spread every host reads the base clock.
        assert_eq!(ClockPlan { base, ..Default::default() }.host(7, 3), base);
    }
}
