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
}
