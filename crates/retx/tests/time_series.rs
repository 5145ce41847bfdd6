//! The receive-rate time series: it starts on the sampling grid at the first flow, and a run
//! that stops between samples keeps its last, partial interval, so the series accounts for
//! every byte delivered.

use retx::stats::Sample;
use retx::world::RunOutput;

/// One 200 KB flow h0 -> h1 starting at `start`, sampled every `interval`, stopping when done.
fn run(start: &str, interval: &str) -> RunOutput {
    let text = format!(
        r#"
name = "series"
duration = "3s"
stop_when_done = true
[topology]
kind = "single-switch"
hosts = 2
host_link = "10Gbps"
[transport]
cc = "none"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "200KB", start = "{start}" }}]
[output]
sample_interval = "{interval}"
"#
    );
    retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// Bytes the samples account for: rate x the time each covers (since the previous sample or
/// the series' start).
fn bytes(samples: &[Sample], series_start: u64) -> f64 {
    let mut last = series_start;
    samples
        .iter()
        .map(|s| {
            let dt = (s.time.0 - last) as f64 / 1e12;
            last = s.time.0;
            s.bps * dt / 8.0
        })
        .sum()
}

#[test]
fn a_flow_inside_one_interval_appears_in_the_final_partial_sample() {
    // 200 KB at 10 Gbps take ~165 us, far less than the 10 ms interval: before, the run
    // stopped with no sample after the flow and the series was empty of it.
    let out = run("0us", "10ms");
    let end = out.flows[0].finish.unwrap();
    assert_eq!(out.samples.len(), 1, "{:?}", out.samples);
    assert_eq!(out.samples[0].time, out.end);
    assert!(out.end >= end);
    let delivered = out.flows[0].delivered_bytes as f64;
    assert!((bytes(&out.samples, 0) - delivered).abs() < 1e-6 * delivered, "{:?}", out.samples);
}

#[test]
fn sampling_starts_at_the_grid_point_before_the_first_flow() {
    // The flow starts at 2.00005 s (HPCC flow files start at 2 s): no sample covers the idle
    // time before; the series starts at the 20 us grid point 2.00004 s, the first sample is
    // one interval later, and every byte is accounted for.
    let out = run("2000050us", "20us");
    let first = out.samples.first().unwrap().time.0;
    assert_eq!(first, 2_000_060_000_000);
    let delivered = out.flows[0].delivered_bytes as f64;
    let got = bytes(&out.samples, 2_000_040_000_000);
    assert!((got - delivered).abs() < 1e-6 * delivered, "{got} vs {delivered}");
    // Full intervals are 20 us apart; only the last may be shorter.
    let times: Vec<u64> = out.samples.iter().map(|s| s.time.0).collect();
    for w in times[..times.len() - 1].windows(2) {
        assert_eq!(w[1] - w[0], 20_000_000);
    }
    assert!(times[times.len() - 1] - times[times.len() - 2] <= 20_000_000);
}
