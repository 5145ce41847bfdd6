//! Seeded random streams, one per component.
//!
//! Every stream is derived from the root seed and a stable name (kind + index), so adding a
//! flow does not shift the loss pattern of a link, and the same scenario gives the same bits on
//! any machine (PCG is specified exactly, unlike `SmallRng`).

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Kinds of components that own a random stream.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Stream {
    LinkLoss = 1,
    SwitchEcn = 2,
    FlowArrivals = 3,
    FlowSizes = 4,
    InitialPsn = 5,
    EcmpSalt = 6,
    Workload = 7,
    /// Gilbert-Elliott burst loss chains of a port (kept apart from its Bernoulli draws).
    BurstLoss = 8,
    /// Per-switch routing choices (random spraying, flowlet re-picks).
    Routing = 9,
    /// Per-switch WRED drops by colour (kept apart from ECN marking).
    SwitchWred = 10,
    /// A background traffic source's random rates.
    Background = 11,
    /// Per-host clock offset and drift within `[nic]` spreads.
    HostClock = 12,
    /// Per-switch coin of per-port trimming (htsim's `CompositeQueue` victim choice).
    SwitchTrim = 13,
    /// Per-flow start jitter of a workload (`workload.start_jitter`).
    StartJitter = 14,
    /// A job's root seed (`[[workload]]` after the first: see `config::jobs`).
    Job = 15,
}

/// SplitMix64 finaliser: a fast, well-mixed 64-bit hash.
pub const fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A random stream for component `index` of kind `stream` under the root `seed`.
pub fn stream(seed: u64, stream: Stream, index: u64) -> Rng {
    let s = mix64(seed ^ mix64((stream as u64) << 48 ^ mix64(index)));
    Rng(Pcg64Mcg::seed_from_u64(s))
}

/// A component's random stream.
#[derive(Clone)]
pub struct Rng(Pcg64Mcg);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// True with probability given as a 64-bit threshold (see [`threshold`]).
    pub fn chance(&mut self, threshold: u64) -> bool {
        threshold != 0 && self.0.next_u64() < threshold
    }
    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

/// Converts a probability to a threshold for [`Rng::chance`], exact at 0 and 1.
pub fn threshold(p: f64) -> u64 {
    if p <= 0.0 {
        0
    } else if p >= 1.0 {
        u64::MAX
    } else {
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_and_reproducible() {
        let a: Vec<u64> = (0..4).map({ let mut r = stream(7, Stream::LinkLoss, 3); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = stream(7, Stream::LinkLoss, 3); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = stream(7, Stream::LinkLoss, 4); move |_| r.next_u64() }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn chance_matches_probability_within_tolerance() {
        let mut r = stream(1, Stream::LinkLoss, 0);
        let t = threshold(0.01);
        let hits = (0..1_000_000).filter(|_| r.chance(t)).count();
        // Binomial(1e6, 0.01): sd = 99.5, so +-500 is five standard deviations.
        assert!((hits as i64 - 10_000).abs() < 500, "hits = {hits}");
        assert!(!r.chance(threshold(0.0)));
    }
}
