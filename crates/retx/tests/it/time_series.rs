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

/// Two flows into h2 through one switch with `cc`, the second starting at 200 us; both watched.
fn cc_run(cc: &str, extra: &str) -> Result<RunOutput, String> {
    let text = format!(
        r#"
name = "cc-series"
duration = "2ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
[switch]
ecn = {{ enabled = true, kmin = "20KB", kmax = "20KB", pmax = 1.0 }}
[transport]
recovery = "{recovery}"
cc = "{cc}"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h2", size = "1MB" }}, {{ src = "h1", dst = "h2", size = "1MB", start = "200us" }}]
[output]
sample_interval = "50us"
{extra}
"#,
        recovery = if cc == "dctcp-window" { "tcp" } else { "gbn" },
    );
    retx::run_toml(&text).map_err(|e| e.to_string())
}

#[test]
fn watched_flows_report_their_senders_rate_window_and_flight() {
    // DCQCN: a rate, no window; the second flow has no row before it starts.
    let out = cc_run("dcqcn", "cc_flows = [0, 1]").unwrap();
    let of = |f: u32| out.cc_samples.iter().filter(move |s| s.flow == f);
    assert!(of(1).all(|s| s.time.0 >= 200_000_000));
    assert!(of(1).count() > 0 && of(0).count() > of(1).count());
    assert!(out.cc_samples.iter().all(|s| s.window.is_none() && s.rate_bps > 0.0 && s.rate_bps <= 10e9));
    // Sharing the 10 Gbps link toward h2, DCQCN cuts the first flow below line rate.
    assert!(of(0).any(|s| s.rate_bps < 9e9), "{:?}", out.cc_samples);
    // Done once its FCT has passed, with nothing in flight.
    let fin = out.flows[0].finish.unwrap();
    assert!(of(0).filter(|s| s.time >= fin).all(|s| s.done && s.in_flight == 0));
    assert!(of(0).filter(|s| s.time < fin).all(|s| !s.done));
    // DCTCP over the TCP baseline: a window, cut below its initial 10 packets by the marks
    // and grown again once the first flow is done; data in flight until the end.
    let out = cc_run("dctcp-window", "cc_flows = [1]").unwrap();
    let s = &out.cc_samples;
    assert!(!s.is_empty() && s.iter().all(|x| x.flow == 1 && x.window.is_some()));
    let w: Vec<u64> = s.iter().map(|x| x.window.unwrap()).collect();
    let low = w.iter().position(|&x| x < 10 * 1024).expect("a cut");
    assert!(w[low..].iter().any(|&x| x > 20 * 1024), "{w:?}");
    assert!(s.iter().filter(|x| !x.done).all(|x| x.in_flight > 0));
    assert!(s.last().unwrap().done && s.last().unwrap().in_flight == 0);
    // Unwatched by default.
    assert!(cc_run("dcqcn", "").unwrap().cc_samples.is_empty());
}

#[test]
fn a_watched_flow_must_exist() {
    let Err(e) = cc_run("dcqcn", "cc_flows = [0, 2]") else { panic!("flow 2 must be refused") };
    assert_eq!(e, "output.cc_flows[1]: flow 2 does not exist (flows are 0..=1)");
}
