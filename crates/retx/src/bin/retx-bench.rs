//! `make bench`: a fixed scenario of real size, timed.
//!
//! The MELO Fig. 4 fabric (4 spines, 32 leaves, 320 hosts at 40 Gbps), every host sending one
//! endless flow to the host 160 places on (a cross-leaf permutation), DCQCN with ECN and PFC,
//! 0.1 % loss at every switch so loss recovery works too. Run for two simulated lengths to
//! show that cost grows linearly with packets simulated.

use std::fmt::Write as _;
use std::time::Instant;

fn scenario(duration_us: u64, recovery: &str) -> String {
    let mut pairs = String::new();
    for i in 0..320 {
        let _ = write!(pairs, "[\"h{}\", \"h{}\"],", i, (i + 160) % 320);
    }
    format!(
        r#"
name = "bench"
seed = 1
duration = "{duration_us}us"
[topology]
kind = "melo-fig4"
[switch]
pfc = {{ enabled = true }}
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[[loss]]
at = "everywhere"
rate = 0.001
[workload]
kind = "long-flows"
pairs = [{pairs}]
[output]
sample_interval = "100us"
"#
    )
}

/// Peak resident memory of this process in MiB (Linux), if known.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    println!("scenario: MELO Fig. 4 leaf-spine, 320 hosts x 40 Gbps, 320 long flows (cross-leaf permutation),");
    println!("          DCQCN + ECN + PFC, 0.1 % loss on every link");
    println!(
        "{:<6} {:>8} {:>10} {:>12} {:>12} {:>14} {:>14} {:>12}",
        "scheme", "sim_ms", "wall_s", "events", "events/s", "packet-hops/s", "sim_us/wall_s", "goodput_Gbps"
    );
    for recovery in ["gbn", "irn"] {
        for duration_us in [1000, 2000] {
            let text = scenario(duration_us, recovery);
            let wall = Instant::now();
            let out = retx::run_toml(&text).expect("the bench scenario is valid");
            let secs = wall.elapsed().as_secs_f64();
            let c = &out.counters;
            let goodput: f64 = out.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e9;
            assert_eq!(c.bad_deliveries, 0);
            println!(
                "{:<6} {:>8.1} {:>10.2} {:>12} {:>12.3e} {:>14.3e} {:>14.1} {:>12.0}",
                recovery,
                duration_us as f64 / 1000.0,
                secs,
                c.events,
                c.events as f64 / secs,
                c.packet_hops as f64 / secs,
                out.end.as_us_f64() / secs,
                goodput
            );
        }
    }
    match peak_rss_mib() {
        Some(m) => println!("peak memory: {m:.1} MiB"),
        None => println!("peak memory: unknown (no /proc/self/status)"),
    }
}
