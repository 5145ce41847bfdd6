//! Background traffic: an unresponsive source, as a hardware traffic generator (IXIA, Spirent)
//! is, that puts packets of one size into one switch egress queue at a rate that follows a
//! profile. It knows only its rate over time; the engine enqueues its packets (they compete
//! for the buffer like transit traffic) and asks it when the next one is due.
//!
//! A packet is sent at every tick; the next tick is `size x 8 / rate(now)` later (the
//! serialization time at that rate, in whole picoseconds), so the rate is the one at the
//! tick's own time: for `Linear` the ramp's value then, for `Random` the rate of the interval
//! the tick falls in.

use crate::sim::rng::Rng;
use crate::sim::units::{Rate, Time};

/// How a source's rate varies over its window `start..until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// One rate throughout.
    Fixed(Rate),
    /// A new rate, uniform over `low..=high`, every `interval` from `start`; each interval's
    /// rate is the next draw of the source's own stream, so it depends on the seed alone.
    Random { low: Rate, high: Rate, interval: Time },
    /// `low` at `start`, rising linearly to `high` at `until`.
    Linear { low: Rate, high: Rate },
}

/// A background source as a scenario describes it: the egress port of node `from` toward
/// node `to`, its egress queue, its packets' wire size, its window and rate profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub from: usize,
    pub to: usize,
    pub queue: u8,
    pub size: u32,
    pub start: Time,
    /// The first time no packet is sent (the window's exclusive end).
    pub until: Time,
    pub profile: Profile,
}

/// A running source: its spec, its port, and a random profile's current rate.
pub struct Source {
    pub spec: Spec,
    pub port: usize,
    rng: Rng,
    /// Random: the current interval's rate, and when the next interval begins.
    rate: Rate,
    next_draw: Time,
}

impl Source {
    /// The source `spec` on port `port`, its random rates drawn from `rng`.
    pub fn new(spec: Spec, port: usize, rng: Rng) -> Source {
        Source { spec, port, rng, rate: Rate(0), next_draw: spec.start }
    }

    /// The first tick, if the window is not empty.
    pub fn first_tick(&self) -> Option<Time> {
        (self.spec.start < self.spec.until).then_some(self.spec.start)
    }

    /// The rate at `now` (`start <= now`). A random profile draws the rate of every interval
    /// begun since its last call, in order, so the draws follow intervals, not packets.
    pub fn rate_at(&mut self, now: Time) -> Rate {
        let Spec { start, until, .. } = self.spec;
        match self.spec.profile {
            Profile::Fixed(r) => r,
            Profile::Random { low, high, interval } => {
                while self.next_draw <= now {
                    // Uniform over the whole bit rates low..=high.
                    let span = (high.0 - low.0 + 1) as f64;
                    self.rate = Rate((low.0 + (span * self.rng.uniform()) as u64).min(high.0));
                    self.next_draw += interval;
                }
                self.rate
            }
            Profile::Linear { low, high } => {
                let (done, window) = ((now - start).0 as u128, (until - start).0 as u128);
                Rate(low.0 + ((high.0 - low.0) as u128 * done / window) as u64)
            }
        }
    }

    /// After the tick at `now`: the next one, if it falls before `until`.
    pub fn next_tick(&mut self, now: Time) -> Option<Time> {
        let next = now + self.rate_at(now).serialization(self.spec.size as u64);
        (next < self.spec.until).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn source(size: u32, start: Time, until: Time, profile: Profile, seed: u64) -> Source {
        let spec = Spec { from: 0, to: 1, queue: 1, size, start, until, profile };
        Source::new(spec, 0, stream(seed, Stream::Background, 0))
    }

    fn ticks(s: &mut Source) -> Vec<Time> {
        let mut t = s.first_tick();
        let mut out = Vec::new();
        while let Some(now) = t {
            out.push(now);
            t = s.next_tick(now);
        }
        out
    }

    #[test]
    fn a_fixed_source_ticks_every_serialization_time_until_its_end() {
        // 1500 B at 4 Gbps: 3 us apart; 10 us from 1 us: ticks at 1, 4, 7, 10 us, not at 11.
        let mut s = source(1500, Time::from_us(1), Time::from_us(11), Profile::Fixed(Rate::gbps(4)), 1);
        assert_eq!(ticks(&mut s), [1, 4, 7, 10].map(Time::from_us));
        let empty = source(1500, Time::from_us(5), Time::from_us(5), Profile::Fixed(Rate::gbps(4)), 1);
        assert_eq!(empty.first_tick(), None);
    }

    #[test]
    fn a_linear_rate_runs_from_low_at_start_to_high_at_until() {
        let mut s = source(1000, Time::from_us(10), Time::from_us(20), Profile::Linear { low: Rate::gbps(1), high: Rate::gbps(5) }, 1);
        assert_eq!(s.rate_at(Time::from_us(10)), Rate::gbps(1));
        assert_eq!(s.rate_at(Time::from_us(15)), Rate::gbps(3));
        assert_eq!(s.rate_at(Time(17_500_000)), Rate::gbps(4));
        // The gap after a tick is the serialization time at the rate then: 1000 B at 3 Gbps.
        assert_eq!(s.next_tick(Time::from_us(15)), Some(Time::from_us(15) + Rate::gbps(3).serialization(1000)));
    }

    #[test]
    fn random_rates_change_per_interval_stay_in_range_and_follow_the_seed() {
        let profile = Profile::Random { low: Rate::gbps(1), high: Rate::gbps(9), interval: Time::from_us(10) };
        let make = |seed| source(1500, Time::ZERO, Time::from_ms(1), profile, seed);
        let rates = |mut s: Source| (0..100).map(|i| s.rate_at(Time::from_us(10 * i + 3))).collect::<Vec<_>>();
        let (a, b, c) = (rates(make(1)), rates(make(1)), rates(make(2)));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|r| (Rate::gbps(1)..=Rate::gbps(9)).contains(r)));
        // Within one interval the rate holds; skipping intervals draws each one in turn, so
        // the rate of interval 7 is the same whether or not 1..6 were asked for.
        let mut s = make(1);
        assert_eq!(s.rate_at(Time::from_us(71)), s.rate_at(Time::from_us(79)));
        assert_eq!(s.rate_at(Time::from_us(79)), a[7]);
        // Draws cover the range: the mean of 100 uniform draws on [1, 9] is 5 +- 0.23 (sd).
        let mean = a.iter().map(|r| r.as_gbps_f64()).sum::<f64>() / 100.0;
        assert!((mean - 5.0).abs() < 1.0, "mean {mean}");
    }
}
