//! Flow-size distributions given as CDF tables, and sampling from them.
//!
//! A table is text: `#` comment lines, then one `size cdf` pair per line, or ns-2's
//! `RandomVariable/Empirical` three columns `size index cdf` (its `loadCDF` reads `%lf %*f %lf`:
//! the middle column is ignored; the ExpressPass and pFabric tables). The CDF column is a
//! percent (0..100, the HPCC / ConWeave files) or a fraction (0..1, the Homa files); which one
//! is read from the last point, which must be 100 or 1. Sizes and CDF values must not
//! decrease. A first point with CDF > 0 is a point mass at that size, as if `size 0` preceded
//! it.
//!
//! The same table gives different distributions under different [`Interpolation`]s (web search:
//! mean 1.71 MB linear, 2.43 MB step), so [`FlowSizeCdf::mean`] always uses the sampler's
//! interpolation: a load set from it is the load the samples offer.

use crate::sim::rng::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// How sizes between the points of a table are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interpolation {
    /// HPCC / ConWeave `traffic_gen.py` (`CustomRand`): piecewise-linear between points, size =
    /// int(value). The mean is HPCC's `getAvg`.
    #[default]
    Linear,
    /// HomaSimulation / HomaModule: the smallest size whose CDF >= U.
    Step,
    /// ns-2 `Empirical` with `interpolation_ 2` (ExpressPass, pFabric, PIAS): linear, then
    /// ceil().
    LinearCeil,
}

impl fmt::Display for Interpolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interpolation::Linear => "linear",
            Interpolation::Step => "step",
            Interpolation::LinearCeil => "linear-ceil",
        })
    }
}

/// Go-Back-ONE (Table I): the CDF at 10^1..10^7 bytes. The table's first column says 1 % (4 %)
/// of flows are <= 10 B and gives nothing below 10 B, so that 1 % is a point mass at 10 B
/// (`10 0` then `10 1`), the reading the workloads README gives any first point with CDF > 0.
/// HPCC's `CustomRand`, which the paper's NS3 setup would feed this table to, requires a first
/// `x 0` row with a smaller x and would most likely get `0 0`: a ramp over 0..10 B instead of
/// the point mass. The two differ only in flows of <= 10 B: 0.05 B (FB_Hadoop) and 0.2 B
/// (WebSearch) of mean size. Between points the paper's generator interpolates linearly, so
/// use these with `interpolation = "linear"` (the default). Note the table is a coarse summary
/// that does not match the HPCC files point for point (HPCC's FB_Hadoop reaches 1 % at 100 B).
const GBONE_FB_HADOOP: &str = "\
# source: Go-Back-ONE paper, Table I (flow size distribution, FB_Hadoop row)
# format: columns: size_bytes cdf_percent (0..100); meant for LINEAR interpolation
# note: the first 1 % is a point mass at 10 B (see crates/retx/src/workload/cdf.rs)
10 0
10 1
100 2
1000 60
10000 71
100000 88
1000000 97
10000000 100
";

/// Go-Back-ONE (Table I), WebSearch row; see [`GBONE_FB_HADOOP`].
const GBONE_WEBSEARCH: &str = "\
# source: Go-Back-ONE paper, Table I (flow size distribution, WebSearch row)
# format: columns: size_bytes cdf_percent (0..100); meant for LINEAR interpolation
# note: the first 4 % is a point mass at 10 B (see crates/retx/src/workload/cdf.rs)
10 0
10 4
100 7
1000 10
10000 15
100000 60
1000000 75
10000000 100
";

/// Tables a scenario can name, e.g. `cdf = "websearch_hpcc"`. The files under
/// `crates/retx/workloads/` are byte-for-byte copies of the collected ones, source in their
/// headers.
pub const BUILTIN: &[(&str, &str)] = &[
    ("websearch_hpcc", include_str!("../../workloads/websearch_hpcc.txt")),
    ("fb_hadoop_hpcc", include_str!("../../workloads/fb_hadoop_hpcc.txt")),
    ("alistorage2019_hpcc", include_str!("../../workloads/alistorage2019_hpcc.txt")),
    ("fb_hadoop2015_conweave", include_str!("../../workloads/fb_hadoop2015_conweave.txt")),
    ("googlerpc2008_hpcc", include_str!("../../workloads/googlerpc2008_hpcc.txt")),
    ("homa_w1", include_str!("../../workloads/homa_w1.txt")),
    ("homa_w2", include_str!("../../workloads/homa_w2.txt")),
    ("homa_w3", include_str!("../../workloads/homa_w3.txt")),
    ("homa_w4", include_str!("../../workloads/homa_w4.txt")),
    ("homa_w5", include_str!("../../workloads/homa_w5.txt")),
    // ExpressPass's four (ns-2 Empirical tables, meant for `linear-ceil`): the Aeolus
    // evaluation's workloads.
    ("webserver_xpass", include_str!("../../workloads/webserver_xpass.tcl")),
    ("cachefollower_xpass", include_str!("../../workloads/cachefollower_xpass.tcl")),
    ("search_xpass", include_str!("../../workloads/search_xpass.tcl")),
    ("mining_xpass", include_str!("../../workloads/mining_xpass.tcl")),
    ("gbone_fb_hadoop", GBONE_FB_HADOOP),
    ("gbone_websearch", GBONE_WEBSEARCH),
];

/// Most points a table may have (the built-in ones have at most a few dozen).
pub const MAX_POINTS: usize = 100_000;

/// A flow-size distribution: a CDF table and how to draw from it.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizeCdf {
    /// (size in bytes, CDF as a fraction); the first CDF is 0, the last 1.
    points: Vec<(f64, f64)>,
    interpolation: Interpolation,
}

impl FlowSizeCdf {
    /// Parses a table (see the module doc). The error says which line is wrong.
    pub fn parse(text: &str, interpolation: Interpolation) -> Result<FlowSizeCdf, String> {
        let mut raw: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |msg: &str| format!("line {}: {msg} (in {line:?})", i + 1);
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (size, cdf) = match cols[..] {
                [size, cdf] | [size, _, cdf] => (size, cdf),
                _ => return Err(at("expected two columns, size and cdf (or ns-2's three, size index cdf)")),
            };
            let size: f64 = size.parse().map_err(|_| at("size is not a number"))?;
            let cdf: f64 = cdf.parse().map_err(|_| at("cdf is not a number"))?;
            if !(size.is_finite() && size >= 0.0 && cdf.is_finite() && cdf >= 0.0) {
                return Err(at("size and cdf must be finite and not negative"));
            }
            if size > crate::transport::FlowSpec::MAX_SIZE as f64 {
                return Err(at(&format!("size is above the largest flow ({} bytes)", crate::transport::FlowSpec::MAX_SIZE)));
            }
            if raw.len() >= MAX_POINTS {
                return Err(at(&format!("more than {MAX_POINTS} points")));
            }
            if let Some(&(ps, pc)) = raw.last() {
                if size < ps || cdf < pc {
                    return Err(at("sizes and cdf values must not decrease"));
                }
            }
            raw.push((size, cdf));
        }
        let Some(&(_, last)) = raw.last() else { return Err("no data lines".into()) };
        let scale = if (last - 100.0).abs() < 1e-9 {
            100.0
        } else if (last - 1.0).abs() < 1e-12 {
            1.0
        } else {
            return Err(format!("the last cdf value is {last}; it must be 100 (percent) or 1 (fraction)"));
        };
        let mut points: Vec<(f64, f64)> = raw.into_iter().map(|(x, c)| (x, c / scale)).collect();
        let last = points.len() - 1;
        points[last].1 = 1.0;
        if points[0].1 > 0.0 {
            points.insert(0, (points[0].0, 0.0));
        }
        Ok(FlowSizeCdf { points, interpolation })
    }

    /// A built-in table by name (see [`BUILTIN`]).
    pub fn builtin(name: &str, interpolation: Interpolation) -> Option<FlowSizeCdf> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Some(FlowSizeCdf::parse(text, interpolation).expect("built-in tables parse"))
    }

    /// `spec` is a built-in name, or a path to a table (relative to `base_dir`) if it contains
    /// a `/`, a `\` or a `.`.
    pub fn load(spec: &str, base_dir: &Path, interpolation: Interpolation) -> Result<FlowSizeCdf, String> {
        if !spec.contains(['/', '\\', '.']) {
            return FlowSizeCdf::builtin(spec, interpolation).ok_or_else(|| {
                let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                format!("unknown workload {spec:?} (built in: {}; or give a path to a CDF file)", names.join(", "))
            });
        }
        let path = base_dir.join(spec);
        let text = crate::sim::input::read_text(&path, crate::sim::input::MAX_CDF_FILE)?;
        FlowSizeCdf::parse(&text, interpolation).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Draws one size in bytes, at least 1.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        // u in (0, 1], so the segment found in `quantile` always has F_{i-1} < u <= F_i: it
        // carries probability, and the linear case never divides by zero.
        self.quantile(1.0 - rng.uniform())
    }

    /// The size at cumulative probability `u` in (0, 1] as the sampler draws it: `n` of them
    /// at evenly spaced `u` stand for the distribution without randomness.
    pub fn quantile(&self, u: f64) -> u64 {
        let p = &self.points;
        let i = 1 + p[1..].partition_point(|&(_, f)| f < u);
        let i = i.min(p.len() - 1);
        let ((x0, f0), (x1, f1)) = (p[i - 1], p[i]);
        let linear = || x0 + (x1 - x0) * ((u - f0) / (f1 - f0)).min(1.0);
        let size = match self.interpolation {
            Interpolation::Linear => linear() as u64,
            Interpolation::Step => x1.round() as u64,
            Interpolation::LinearCeil => linear().ceil() as u64,
        };
        size.max(1)
    }

    /// The mean size in bytes under this table's interpolation.
    ///
    /// Linear: HPCC's `getAvg`, sum over segments of (x_{i-1} + x_i) / 2 * (F_i - F_{i-1}), the
    /// mean of the continuous distribution. The sampler's int() truncation lowers the mean of
    /// what it returns by less than 1 B (about 0.5 B) and the clamp to 1 B raises it by at most
    /// P(size < 1) B. Step: sum of x_i (F_i - F_{i-1}), exact (with the clamp). Linear-ceil:
    /// exact E[ceil(X)].
    pub fn mean(&self) -> f64 {
        let segments = self.points.windows(2).map(|w| (w[0].0, w[1].0, w[1].1 - w[0].1));
        match self.interpolation {
            Interpolation::Linear => segments.map(|(a, b, p)| (a + b) / 2.0 * p).sum(),
            Interpolation::Step => segments.map(|(_, b, p)| b.round().max(1.0) * p).sum(),
            Interpolation::LinearCeil => segments.map(|(a, b, p)| p * mean_ceil_uniform(a, b)).sum(),
        }
    }
}

/// E[ceil(X)] for X uniform on [a, b] (a point if a == b), at least 1 as the sampler clamps.
fn mean_ceil_uniform(a: f64, b: f64) -> f64 {
    if b <= a {
        return a.ceil().max(1.0);
    }
    // ceil(x) = x + s(x) with s the sawtooth 1 - frac(x) (0 at integers); the integral of s
    // from 0 to x is floor(x) / 2 + g(frac(x)), g(f) = f - f^2 / 2. Clamping only changes
    // x = 0, a single point.
    let s_int = |x: f64| {
        let f = x - x.floor();
        x.floor() / 2.0 + f - f * f / 2.0
    };
    (a + b) / 2.0 + (s_int(b) - s_int(a)) / (b - a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn cdf(name: &str, i: Interpolation) -> FlowSizeCdf {
        FlowSizeCdf::builtin(name, i).unwrap()
    }

    #[test]
    fn means_match_the_workloads_readme() {
        // (name, interpolation, mean in bytes from /work/shared/workloads/README.md)
        let table = [
            ("websearch_hpcc", Interpolation::Linear, 1_711_250.0),
            ("websearch_hpcc", Interpolation::Step, 2_434_900.0),
            ("fb_hadoop_hpcc", Interpolation::Linear, 120_421.0),
            ("fb_hadoop_hpcc", Interpolation::Step, 183_897.0),
            ("alistorage2019_hpcc", Interpolation::Linear, 40_870.0),
            ("alistorage2019_hpcc", Interpolation::Step, 67_050.0),
            ("fb_hadoop2015_conweave", Interpolation::Linear, 121_849.0),
            ("googlerpc2008_hpcc", Interpolation::Linear, 2_892.0),
            ("homa_w4", Interpolation::Step, 127_797.0),
            ("homa_w5", Interpolation::Step, 2_564_690.0),
            ("homa_w5", Interpolation::Linear, 2_527_952.0),
            // ns-2's three-column tables: the middle column must be skipped, not read as cdf.
            ("webserver_xpass", Interpolation::LinearCeil, 66_121.0),
            ("cachefollower_xpass", Interpolation::LinearCeil, 712_574.0),
            ("search_xpass", Interpolation::LinearCeil, 1_710_005.0),
            ("mining_xpass", Interpolation::LinearCeil, 7_487_884.0),
            ("search_xpass", Interpolation::Step, 2_433_055.0),
        ];
        for (name, i, want) in table {
            let got = cdf(name, i).mean();
            // The README rounds to whole bytes, so within 1 B.
            assert!((got - want).abs() <= 1.0, "{name} {i}: mean {got}, README {want}");
        }
    }

    #[test]
    fn gbone_presets_have_the_table_i_points() {
        let fb = cdf("gbone_fb_hadoop", Interpolation::Linear);
        let at: Vec<f64> = fb.points.iter().skip(1).map(|p| (p.1 * 100.0).round()).collect();
        assert_eq!(at, [1.0, 2.0, 60.0, 71.0, 88.0, 97.0, 100.0]);
        let ws = cdf("gbone_websearch", Interpolation::Linear);
        let at: Vec<f64> = ws.points.iter().skip(1).map(|p| (p.1 * 100.0).round()).collect();
        assert_eq!(at, [4.0, 7.0, 10.0, 15.0, 60.0, 75.0, 100.0]);
        // Linear means, point mass at 10 B: 224,774.65 B and 1,482,543.55 B.
        assert!((fb.mean() - 224_774.65).abs() < 1e-3, "{}", fb.mean());
        assert!((ws.mean() - 1_482_543.55).abs() < 1e-3, "{}", ws.mean());
        // The point mass: 4 % of web search flows are exactly 10 B.
        let mut r = stream(3, Stream::FlowSizes, 0);
        let n = 100_000;
        let tens = (0..n).filter(|_| ws.sample(&mut r) == 10).count();
        assert!((tens as f64 / n as f64 - 0.04).abs() < 0.003, "{tens}");
    }

    /// Sample mean of `n` draws vs `mean()`.
    fn sample_mean(c: &FlowSizeCdf, n: u32) -> f64 {
        let mut r = stream(11, Stream::FlowSizes, 0);
        (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_mean_matches_mean() {
        // Tolerance 2 %. Web search has a coefficient of variation of 2.3 (linear and step),
        // so the standard error of a 200k-draw mean is 2.3 / sqrt(200k) = 0.52 %: 2 % is ~3.9
        // standard errors, and sizes are bounded (30 MB) so the normal approximation holds.
        // FB_Hadoop's CV is 5.6: 2M draws give a standard error of 0.39 % (2 % ~ 5 SE).
        // The seed is fixed, so the test is deterministic; the tolerance is what a correct
        // sampler passes for any seed.
        for (name, i, n) in [
            ("websearch_hpcc", Interpolation::Linear, 200_000),
            ("websearch_hpcc", Interpolation::Step, 200_000),
            ("websearch_hpcc", Interpolation::LinearCeil, 200_000),
            ("fb_hadoop_hpcc", Interpolation::Linear, 2_000_000),
        ] {
            let c = cdf(name, i);
            let (got, want) = (sample_mean(&c, n), c.mean());
            assert!((got / want - 1.0).abs() < 0.02, "{name} {i}: sample mean {got}, mean() {want}");
        }
    }

    #[test]
    fn step_draws_only_table_sizes_and_linear_stays_in_range() {
        let c = cdf("websearch_hpcc", Interpolation::Step);
        let sizes: Vec<u64> = c.points.iter().map(|p| p.0 as u64).collect();
        let mut r = stream(5, Stream::FlowSizes, 0);
        for _ in 0..10_000 {
            let s = c.sample(&mut r);
            assert!(sizes.contains(&s) && s > 0, "{s}");
        }
        let c = cdf("websearch_hpcc", Interpolation::Linear);
        for _ in 0..10_000 {
            let s = c.sample(&mut r);
            assert!((1..=30_000_000).contains(&s), "{s}");
        }
    }

    #[test]
    fn linear_ceil_mean_is_exact() {
        // One segment 0..3 (uniform): ceil is 1, 2, 3 with probability 1/3 each -> 2.
        let c = FlowSizeCdf::parse("0 0\n3 1\n", Interpolation::LinearCeil).unwrap();
        assert!((c.mean() - 2.0).abs() < 1e-12);
        // 0.5..2: ceil 1 on (0.5, 1] (1/3), 2 on (1, 2] (2/3) -> 5/3.
        assert!((mean_ceil_uniform(0.5, 2.0) - 5.0 / 3.0).abs() < 1e-12);
        let mut r = stream(1, Stream::FlowSizes, 0);
        let n = 300_000;
        let m = (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.01, "{m}");
    }

    #[test]
    fn fractions_and_percents_are_detected() {
        let pct = FlowSizeCdf::parse("# c\n0 0\n100 50\n200 100\n", Interpolation::Linear).unwrap();
        let frac = FlowSizeCdf::parse("0 0\n100 0.5\n200 1\n", Interpolation::Linear).unwrap();
        assert_eq!(pct, frac);
        // A first point with CDF > 0 is a point mass.
        let pm = FlowSizeCdf::parse("100 0.5\n200 1.0\n", Interpolation::Step).unwrap();
        assert_eq!(pm.mean(), 150.0);
        // ns-2's `size index cdf`: the middle column is ignored.
        let ns2 = FlowSizeCdf::parse("0 7 0\n100 1 0.5\n200 3 1\n", Interpolation::Linear).unwrap();
        assert_eq!(ns2, frac);
    }

    #[test]
    fn bad_tables_are_rejected_with_the_line() {
        let e = FlowSizeCdf::parse("0 0\n10 50\n5 100\n", Interpolation::Linear).unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
        let e = FlowSizeCdf::parse("0 0\n10 50\n", Interpolation::Linear).unwrap_err();
        assert!(e.contains("must be 100 (percent) or 1 (fraction)"), "{e}");
        let e = FlowSizeCdf::parse("0 0 0 0\n", Interpolation::Linear).unwrap_err();
        assert!(e.contains("two columns"), "{e}");
        assert!(FlowSizeCdf::parse("# only comments\n", Interpolation::Linear).is_err());
        let e = FlowSizeCdf::load("websearch", Path::new("."), Interpolation::Linear).unwrap_err();
        assert!(e.starts_with("unknown workload \"websearch\" (built in: websearch_hpcc, "), "{e}");
    }

    #[test]
    fn builtin_files_match_their_paths() {
        for (name, _) in BUILTIN {
            let c = cdf(name, Interpolation::Linear);
            assert_eq!(c.points[0].1, 0.0);
            assert_eq!(c.points.last().unwrap().1, 1.0);
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let by_path = FlowSizeCdf::load("workloads/websearch_hpcc.txt", dir, Interpolation::Step).unwrap();
        assert_eq!(by_path, cdf("websearch_hpcc", Interpolation::Step));
    }
}
