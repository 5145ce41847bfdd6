//! `make bench`: fixed scenarios of real size, timed. Each bench runs in a process of its own
//! (`retx-bench NAME`), so the peak memory it reports is that bench's alone.
//!
//! - `fabric`: the MELO Fig. 4 fabric (4 spines, 32 leaves, 320 hosts at 40 Gbps), every host
//!   sending one endless flow to the host 160 places on (a cross-leaf permutation), DCQCN with
//!   ECN and PFC, 0.1 % loss at every link so loss recovery works too; go-back-N and IRN, for
//!   two simulated lengths to show that cost grows linearly with packets simulated.
//! - `hpcc`: the HPCC ns-3 simulator's own inputs, its 320-server fat tree (`fat.txt`) and
//!   3,200 web search flows at 30 % load (`flow_ws_320_l30_0.005.txt`), under DCQCN with its
//!   32 MB buffers, PFC and 1000 B payloads, run until every flow completes. The files are
//!   read from `../shared/peers/hpcc-ns3/` (beside the repository) or `$RETX_HPCC_DIR`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

fn fabric_scenario(duration_us: u64, recovery: &str) -> String {
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

fn hpcc_scenario(dir: &std::path::Path) -> String {
    let file = |name: &str| dir.join(name).display().to_string();
    format!(
        r#"
name = "bench-hpcc"
seed = 1
duration = "3s"
[topology]
kind = "hpcc-file"
file = "{topo}"
[switch]
buffer = "32MB"
pfc = {{ enabled = true }}
[nic]
mtu = 1000
[transport]
recovery = "gbn"
cc = "dcqcn"
[workload]
kind = "hpcc-flows"
file = "{flows}"
[output]
sample_interval = "10ms"
"#,
        topo = file("fat.txt"),
        flows = file("flow_ws_320_l30_0.005.txt")
    )
}

/// Peak resident memory of this process in MiB (Linux), if known.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn header() {
    println!(
        "{:<6} {:>8} {:>10} {:>12} {:>12} {:>12} {:>14} {:>14} {:>12}",
        "scheme", "sim_ms", "wall_s", "events", "hops", "events/s", "packet-hops/s", "sim_us/wall_s", "goodput_Gbps"
    );
}

fn run(label: &str, text: &str) {
    let wall = Instant::now();
    let out = retx::run_toml(text).unwrap_or_else(|e| panic!("bench scenario: {e}"));
    let secs = wall.elapsed().as_secs_f64();
    let c = &out.counters;
    let goodput: f64 = out.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e9;
    assert_eq!(c.bad_deliveries, 0);
    println!(
        "{:<6} {:>8.1} {:>10.2} {:>12} {:>12} {:>12.3e} {:>14.3e} {:>14.1} {:>12.0}",
        label,
        out.end.as_us_f64() / 1000.0,
        secs,
        c.events,
        c.packet_hops,
        c.events as f64 / secs,
        c.packet_hops as f64 / secs,
        out.end.as_us_f64() / secs,
        goodput
    );
}

fn fabric() {
    println!("bench fabric: MELO Fig. 4 leaf-spine, 320 hosts x 40 Gbps, 320 long flows (cross-leaf");
    println!("              permutation), DCQCN + ECN + PFC, 0.1 % loss on every link");
    header();
    for recovery in ["gbn", "irn"] {
        for duration_us in [1000, 2000] {
            run(recovery, &fabric_scenario(duration_us, recovery));
        }
    }
}

fn hpcc() {
    let dir = std::env::var_os("RETX_HPCC_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/hpcc-ns3")
    });
    if !dir.join("fat.txt").is_file() {
        eprintln!("bench hpcc: no {} (set RETX_HPCC_DIR to the HPCC ns-3 inputs)", dir.join("fat.txt").display());
        std::process::exit(2);
    }
    println!("bench hpcc: HPCC ns-3 fat.txt (320 servers, 100/400 Gbps) + flow_ws_320_l30_0.005.txt");
    println!("            (3,200 web search flows, 30 % load), go-back-N + DCQCN, 32 MB buffers, PFC");
    header();
    run("gbn", &hpcc_scenario(&dir));
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("fabric") => fabric(),
        Some("hpcc") => hpcc(),
        // One short run of the fabric, for profilers (cachegrind runs ~50x slower).
        Some("fabric-quick") => {
            header();
            run("gbn", &fabric_scenario(200, "gbn"));
        }
        _ => {
            eprintln!("usage: retx-bench fabric|hpcc|fabric-quick");
            std::process::exit(2);
        }
    }
    match peak_rss_mib() {
        Some(m) => println!("peak memory: {m:.1} MiB"),
        None => println!("peak memory: unknown (no /proc/self/status)"),
    }
}
