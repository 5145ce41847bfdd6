//! `[output] pools`: the watched hosts' NIC structures sampled with the time series: MELO's
//! bits pools in blocks (with the peak between samples, so no spike is missed) and the QP
//! cache in contexts.

use retx::stats::PoolSample;
use retx::world::RunOutput;

fn run(recovery: &str, pools: &str) -> Result<RunOutput, String> {
    let text = format!(
        r#"
name = "pools"
seed = 3
duration = "50ms"
stop_when_done = true
[topology]
kind = "single-switch"
hosts = 5
[transport]
recovery = "{recovery}"
[recovery.melo]
qp_cache = 2
[[loss]]
at = "switch:sw0"
rate = 0.01
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "300KB" }},
  {{ src = "h2", dst = "h0", size = "300KB" }},
  {{ src = "h3", dst = "h0", size = "300KB" }},
  {{ src = "h4", dst = "h0", size = "300KB" }},
]
[output]
sample_interval = "20us"
pools = {pools}
"#
    );
    retx::run_toml(&text).map_err(|e| e.to_string())
}

fn rows<'a>(out: &'a RunOutput, host: &'a str, pool: &'a str) -> impl Iterator<Item = &'a PoolSample> + 'a {
    out.pool_samples.iter().filter(move |s| out.host_names[s.host as usize] == host && s.occupancy.pool == pool)
}

#[test]
fn melo_pools_and_the_qp_cache_are_sampled_with_their_peaks() {
    let out = run("melo", r#"["h0", "h1"]"#).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    let rx: Vec<_> = rows(&out, "h0", "melo_rx").collect();
    assert!(rx.len() > 10, "{} samples", rx.len());
    let capacity = rx[0].occupancy.capacity;
    assert!(capacity > 0 && rx.iter().all(|s| s.occupancy.capacity == capacity && s.occupancy.unit == "blocks"));
    assert!(rx.iter().all(|s| s.occupancy.used <= s.occupancy.peak && s.occupancy.peak <= capacity));
    // h0 receives every flow, so its pool's highest interval peak is the run's receive peak:
    // the peak between samples catches what a sample at one instant would miss.
    let run_peak = out.scheme_figure("melo_rx_pool_peak").unwrap() * capacity as f64;
    let sampled_peak = rx.iter().map(|s| s.occupancy.peak).max().unwrap();
    assert_eq!(sampled_peak as f64, run_peak.round());
    assert!(rx.iter().map(|s| s.occupancy.used).max().unwrap() > 0);
    // Every flow done by the last sample: every block back in the pool.
    assert_eq!(rx.last().unwrap().occupancy.used, 0);
    // h1 only sends: its send pool holds the sender's bitmap; its receive pool stays empty.
    assert!(rows(&out, "h1", "melo_tx").any(|s| s.occupancy.used > 0));
    assert!(rows(&out, "h1", "melo_rx").all(|s| s.occupancy.peak == 0));
    // The QP cache of two, in contexts, full once the four connections have arrived.
    let cache: Vec<_> = rows(&out, "h0", "qp_cache").collect();
    assert_eq!(cache.len(), rx.len());
    assert!(cache.iter().all(|s| s.occupancy.capacity == 2 && s.occupancy.used <= 2 && s.occupancy.unit == "contexts"));
    assert!(cache.iter().any(|s| s.occupancy.used == 2));
    // Only the watched hosts.
    assert!(out.pool_samples.iter().all(|s| ["h0", "h1"].contains(&out.host_names[s.host as usize].as_str())));
}

#[test]
fn schemes_without_shared_structures_write_no_rows() {
    let out = run("gbn", r#"["h0"]"#).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    assert!(out.pool_samples.is_empty());
    assert!(run("melo", "[]").unwrap().pool_samples.is_empty());
}

#[test]
fn a_watched_pool_host_must_be_a_host() {
    let error = |pools: &str| run("melo", pools).err().expect("refused");
    assert_eq!(error(r#"["h9"]"#), r#"output.pools: "h9" is not a host (hosts are h0..h4)"#);
    assert_eq!(error(r#"["sw0"]"#), r#"output.pools: "sw0" is a switch, not a host"#);
    assert_eq!(error(r#"["h0", "h0"]"#), r#"output.pools: "h0" is listed twice"#);
}
