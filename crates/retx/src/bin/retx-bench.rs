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
//! - `ndp`: htsim's own web search input (`ws_432_l30_5ms.cm`: 4,298 flows at 30 % load on
//!   htsim's 432-host k = 12 fat-tree, 100 Gbps), under NDP as `htsim_ndp -strat perm -mtu
//!   4000` runs it (trimming ports with 60,000 B data queues, 4,000 B whole packets), until
//!   every flow completes: the same work as htsim's reference run. Read from
//!   `../shared/peers/htsim/` or `$RETX_HTSIM_DIR`.
//!
//! - `dragonfly`: per-packet multipath on a balanced h = 3 dragonfly (19 groups of 6 routers, 342
//!   hosts at 200 Gbps, 400 Gbps local and global links, 1 us, 1 KB MTU: LEFT's link speeds),
//!   every host sending one endless flow to its counterpart in the next group, each packet
//!   sprayed over Valiant detours, DCQCN; LEFT (issue 28's "dragonfly row with per-packet
//!   spraying and LEFT"), and IRN on the same run, which takes the reordering for loss; then
//!   LEFT again with the fabric bench's link rates (40 Gbps hosts, 80 Gbps fabric), so that a
//!   hop's cost compares with the fabric's at the same number of packets in flight per link.
//!
//! - `uet`: Ultra Ethernet's transport on uet-htsim's large permutation (validation line 11:
//!   1,024 flows of 2 MB on its K = 16 fat-tree, 100 Gbps, 1 us links, 4,150 B packets trimmed
//!   to 64 B at a one-BDP data queue, ECN from 20 % to 80 % of it, 128 entropy values), under
//!   NSCC, RCCC and both, as `retx reproduce uet-htsim-crosscheck` runs it: uet-htsim's own
//!   `.cm` from `../peers/uet-htsim` or `$RETX_UET_HTSIM_DIR`, else a permutation of the same
//!   shape written to `target/` (host i to 389 i + 517 mod 1,024: every host sends one flow and
//!   receives one, none to itself).
//!
//! - `parallel [ROW]`: rows at 1 and 2 threads (`[run] threads`), in pairs, checked identical:
//!   `ndp-ws` (the `ndp` bench), `a2a-1024` (a 1,024-host k = 16 fat-tree, every host sending
//!   16 KB to every other under NDP: 1,047,552 flows, its `.cm` written to `target/`),
//!   `dragonfly` (the dragonfly bench's IRN row), `hpcc-ws` (the `hpcc` bench), `uet-perm`
//!   (the `uet` bench's NSCC row); with the
//!   partitions' balance and their threads' time at barriers. `make bench` runs `ndp-ws`.
//!   `RETX_BENCH_THREADS=N` runs every other bench on N threads.
//!
//! - `file SCENARIO.toml`: a scenario of one's own, timed the same way (used to see how the
//!   cost per hop grows with the size of the network: docs/BENCHMARKS.md).
//! - `queue`: the event queue alone. Runs the fabric's go-back-N 1 ms row once while recording
//!   every call on its event queue, then replays the calls through a fresh queue and times
//!   that: what the queue costs per event and per packet-hop, apart from everything else.
//!   Needs the `queue-trace` feature (`--features queue-trace`), which the other benches leave
//!   out so that their queue records nothing.
//!
//! Each row is run `$RETX_BENCH_REPEAT` times (3 by default) and reports the median wall time,
//! with the fastest and slowest beside it: single runs on a shared machine drift by several
//! percent. The repeats must agree on every count (same seed, same run), which is checked.
//! The first lines name the commit, the CPU and the load average before the bench.

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

fn dragonfly_scenario(duration_us: u64, recovery: &str, host: &str, fabric: &str) -> String {
    // 342 hosts, 18 a group: host i sends to host i + 18, the same place one group on.
    let mut pairs = String::new();
    for i in 0..342 {
        let _ = write!(pairs, "[\"h{}\", \"h{}\"],", i, (i + 18) % 342);
    }
    format!(
        r#"
name = "bench-dragonfly"
seed = 1
duration = "{duration_us}us"
[topology]
kind = "dragonfly"
h = 3
host_link = "{host}"
fabric_link = "{fabric}"
link_delay = "1us"
[nic]
mtu = 1000
[routing]
policy = "spray-random"
paths = "valiant"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
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

/// The commit, CPU and load: what a reader needs to compare two `make bench` outputs.
fn context(runs: usize) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let load = std::fs::read_to_string("/proc/loadavg").map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default();
    println!("commit {commit}{}; cpu {cpu}; load average {load}; {} runs per row", if dirty { " (with uncommitted changes)" } else { "" }, runs);
}

/// Threads per run: `$RETX_BENCH_THREADS`; without it, what the scenario says (the built-in
/// rows: 1, the serial engine; a `file`'s own `[run] threads` was silently replaced by 1).
fn threads() -> Option<u32> {
    match std::env::var("RETX_BENCH_THREADS") {
        Err(_) => None,
        Ok(v) => match v.parse::<u32>() {
            Ok(n) if (1..=retx::config::run::MAX_THREADS).contains(&n) => Some(n),
            _ => {
                eprintln!("RETX_BENCH_THREADS: {v:?} is not a thread count (allowed 1..={})", retx::config::run::MAX_THREADS);
                std::process::exit(2)
            }
        },
    }
}

/// Runs a scenario on `threads` threads (None: as it says).
fn run_threads(text: &str, threads: Option<u32>) -> Result<(retx::RunOutput, retx::world::ParallelReport), retx::ScenarioError> {
    let mut s = retx::Scenario::from_toml(text)?;
    if let Some(threads) = threads {
        s.run.threads = threads;
    }
    let (out, engine) = retx::config::build::run(s, &mut |_, _| true)?;
    Ok((out.expect("no abort without a callback"), engine))
}

/// How a run used the threads: why serially, or its partitions' balance and barrier time.
fn engine_line(e: &retx::world::ParallelReport) -> String {
    if let Some(why) = &e.serial_because {
        return format!("serial: {why}");
    }
    let f = |v: &[f64]| v.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join("/");
    format!("{} partitions, lookahead {}, {} windows, link ends {:?}, events {:?}, busy s {}, waiting s {}", e.threads, e.lookahead, e.windows, e.weight, e.events, f(&e.busy_s), f(&e.wait_s))
}

/// Runs per row: `$RETX_BENCH_REPEAT`, 3 by default.
fn repeats() -> usize {
    match std::env::var("RETX_BENCH_REPEAT") {
        Err(_) => 3,
        Ok(v) => match v.parse::<usize>() {
            Ok(n @ 1..=100) => n,
            _ => {
                eprintln!("RETX_BENCH_REPEAT: {v:?} is not a count of runs (allowed 1..=100)");
                std::process::exit(2);
            }
        },
    }
}

fn header() {
    println!(
        "{:<6} {:>8} {:>10} {:>13} {:>12} {:>12} {:>12} {:>14} {:>14} {:>12}",
        "scheme", "sim_ms", "wall_s", "wall_range", "events", "hops", "events/s", "packet-hops/s", "sim_us/wall_s", "goodput_Gbps"
    );
}

/// The median of `samples`, with the smallest and the largest (sorts them).
fn median_and_range(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], samples[0], samples[samples.len() - 1])
}

/// Runs every row `n` times, in passes (each row once per pass), and prints one line per row:
/// the median wall time and the range. Returns the process's peak memory (MiB) after the
/// first pass: what single runs of the rows need, not what the allocator's fragmentation adds
/// over repeats.
fn run(rows: &[(&str, String)], n: usize) -> Option<f64> {
    let mut walls = vec![Vec::new(); rows.len()];
    // What a row prints, kept instead of the whole output (whose tables would count towards
    // the peak memory of the rows after it).
    let mut firsts: Vec<(u64, u64, f64, f64)> = Vec::new();
    let mut peak = None;
    let mut engines = Vec::new();
    for pass in 0..n {
        for (i, (label, text)) in rows.iter().enumerate() {
            let wall = Instant::now();
            let (out, engine) = run_threads(text, threads()).unwrap_or_else(|e| {
                // A scenario of one's own (`file`) may be wrong: one line, exit 2.
                eprintln!("bench {label}: {e}");
                std::process::exit(2)
            });
            walls[i].push(wall.elapsed().as_secs_f64());
            if pass == 0 {
                engines.push(engine);
            }
            assert_eq!(out.counters.bad_deliveries, 0);
            let goodput_gbps = out.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e9;
            let summary = (out.counters.events, out.counters.packet_hops, out.end.as_us_f64(), goodput_gbps);
            drop(out);
            if pass == 0 {
                firsts.push(summary);
            } else {
                assert!(firsts[i] == summary, "bench {label}: a repeat of the same scenario gave different results");
            }
        }
        if pass == 0 {
            peak = peak_rss_mib();
        }
    }
    for ((label, _), e) in rows.iter().zip(&engines) {
        if e.threads > 1 || e.serial_because.is_some() {
            println!("{label}: {}", engine_line(e));
        }
    }
    for (((label, _), &(events, hops, end_us, goodput)), walls) in rows.iter().zip(&firsts).zip(&mut walls) {
        let (secs, fastest, slowest) = median_and_range(walls);
        let range = format!("{fastest:.2}-{slowest:.2}");
        println!(
            "{:<6} {:>8.1} {:>10.2} {:>13} {:>12} {:>12} {:>12.3e} {:>14.3e} {:>14.1} {:>12.0}",
            label,
            end_us / 1000.0,
            secs,
            range,
            events,
            hops,
            events as f64 / secs,
            hops as f64 / secs,
            end_us / secs,
            goodput
        );
    }
    peak
}

fn ndp_scenario(cm: &std::path::Path) -> String {
    format!(
        r#"
name = "bench-ndp"
duration = "100ms"
[topology]
kind = "fat-tree"
k = 12
host_link = "100Gbps"
link_delay = "1us"
[nic]
mtu = 4000
whole_packets = true
[switch]
pfc = {{ enabled = false }}
ecn = {{ enabled = false }}
trim = {{ queue = 0, header = "64B", data_queue = "60000B", victim = "htsim" }}
[routing]
policy = "spray-permutation"
[transport]
recovery = "ndp"
cc = "none"
[workload]
kind = "htsim-cm"
file = "{}"
"#,
        cm.display()
    )
}

fn ndp() -> Option<f64> {
    let dir = std::env::var_os("RETX_HTSIM_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/htsim")
    });
    let cm = dir.join("ws_432_l30_5ms.cm");
    if !cm.is_file() {
        eprintln!("bench ndp: no {} (set RETX_HTSIM_DIR to htsim's inputs)", cm.display());
        std::process::exit(2);
    }
    let runs = repeats();
    context(runs);
    println!("bench ndp: htsim's ws_432_l30_5ms.cm (4,298 web search flows, 30 % load) on its 432-host");
    println!("           k = 12 fat-tree at 100 Gbps, NDP with trimming (htsim_ndp -strat perm -mtu 4000)");
    header();
    run(&[("ndp", ndp_scenario(&cm))], runs)
}

fn fabric() -> Option<f64> {
    let runs = repeats();
    context(runs);
    println!("bench fabric: MELO Fig. 4 leaf-spine, 320 hosts x 40 Gbps, 320 long flows (cross-leaf");
    println!("              permutation), DCQCN + ECN + PFC, 0.1 % loss on every link");
    header();
    let rows: Vec<_> = ["gbn", "irn"]
        .into_iter()
        .flat_map(|recovery| [1000, 2000].map(|duration_us| (recovery, fabric_scenario(duration_us, recovery))))
        .collect();
    run(&rows, runs)
}

fn dragonfly() -> Option<f64> {
    let runs = repeats();
    context(runs);
    println!("bench dragonfly: balanced h = 3 dragonfly, 342 hosts x 200 Gbps, 400 Gbps local/global,");
    println!("                 342 long flows one group on, spray-random over Valiant paths, DCQCN");
    header();
    let rows = [
        ("left", dragonfly_scenario(500, "left", "200Gbps", "400Gbps")),
        ("irn", dragonfly_scenario(500, "irn", "200Gbps", "400Gbps")),
        ("left-40G", dragonfly_scenario(1000, "left", "40Gbps", "80Gbps")),
    ];
    run(&rows, runs)
}

fn hpcc() -> Option<f64> {
    let dir = std::env::var_os("RETX_HPCC_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/hpcc-ns3")
    });
    if !dir.join("fat.txt").is_file() {
        eprintln!("bench hpcc: no {} (set RETX_HPCC_DIR to the HPCC ns-3 inputs)", dir.join("fat.txt").display());
        std::process::exit(2);
    }
    let runs = repeats();
    context(runs);
    println!("bench hpcc: HPCC ns-3 fat.txt (320 servers, 100/400 Gbps) + flow_ws_320_l30_0.005.txt");
    println!("            (3,200 web search flows, 30 % load), go-back-N + DCQCN, 32 MB buffers, PFC");
    header();
    run(&[("gbn", hpcc_scenario(&dir))], runs)
}

/// A 1,024-host all-to-all: htsim's connection-matrix format, every host sending `size` bytes
/// to every other at time 0 (1,047,552 flows), written beside the build.
fn all_to_all_cm(size: u64) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../target/bench-a2a-1024-{size}.cm"));
    if !path.is_file() {
        let n = 1024u32;
        let mut text = format!("Nodes {n}\nConnections {}\n", n * (n - 1));
        let mut id = 1;
        // Each host's destinations in a rotation (i + 1, i + 2, ...), so that at any moment the
        // hosts send to different receivers, as an all-to-all collective schedules them.
        for k in 1..n {
            for i in 0..n {
                let _ = writeln!(text, "{i}->{} id {id} start 0 size {size}", (i + k) % n);
                id += 1;
            }
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    path
}

fn all_to_all_scenario(cm: &std::path::Path) -> String {
    ndp_scenario(cm).replace("k = 12", "k = 16").replace("name = \"bench-ndp\"", "name = \"bench-a2a\"")
}

/// uet-htsim's 1,024-host permutation of 2 MB flows: its own `.cm` when the uet-htsim checkout
/// is at hand, else one of the same shape written beside the build (see the module's text).
fn uet_permutation_cm() -> (PathBuf, &'static str) {
    let dir = std::env::var_os("RETX_UET_HTSIM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../peers/uet-htsim"));
    let theirs = dir.join("htsim/sim/datacenter/connection_matrices/perm_1024n_1024c_0u_2000000b.cm");
    if theirs.is_file() {
        return (theirs, "uet-htsim's perm_1024n_1024c_0u_2000000b.cm");
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-uet-perm-1024.cm");
    if !path.is_file() {
        let n = 1024u32;
        let mut text = format!("Nodes {n}\nConnections {n}\n");
        // An odd multiplier makes i -> 389 i + 517 a bijection of 0..1024; with an odd offset
        // 388 i + 517 is never 0 mod 1024, so no host sends to itself.
        for i in 0..n {
            let _ = writeln!(text, "{i}->{} id {} start 0 size 2000000", (389 * i + 517) % n, i + 1);
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    (path, "a permutation of the same shape (uet-htsim's .cm not found)")
}

/// The UET cross-check's network and settings for validation line 11 (python/retx/reproduce/
/// uet_htsim_crosscheck.py, `scenario`): `cc` is "nscc", "rccc" or "both".
fn uet_scenario(cm: &std::path::Path, cc: &str) -> String {
    format!(
        r#"
name = "bench-uet-{cc}"
duration = "400us"
[topology]
kind = "fat-tree"
k = 16
host_link = "100Gbps"
link_delay = "1us"
[nic]
mtu = 4086
[switch]
pfc = {{ enabled = false }}
ecn = {{ enabled = true, kmin = "37350B", kmax = "145250B", pmax = 1.0, to_hosts = {} }}
trim = {{ queue = 0, header = "64B", data_queue = "178450B", victim = "htsim" }}
[transport]
recovery = "uet"
cc = "none"
[recovery.uet]
cc = "{cc}"
paths = 128
[workload]
kind = "htsim-cm"
file = "{}"
"#,
        cc == "nscc",
        cm.display()
    )
}

fn uet() -> Option<f64> {
    let (cm, what) = uet_permutation_cm();
    let runs = repeats();
    context(runs);
    println!("bench uet: 1,024 flows of 2 MB on uet-htsim's K = 16 fat-tree (validation line 11), UET RUD");
    println!("           with 128 EVs, trimming, from {what}");
    header();
    let rows: Vec<_> = ["nscc", "rccc", "both"].into_iter().map(|cc| (cc, uet_scenario(&cm, cc))).collect();
    run(&rows, runs)
}

/// `parallel`: the serial engine and 2 threads on the same runs, in A/B pairs (one of each
/// per repeat, the order alternating), results checked identical; the median of each and
/// their ratio, with the partitions' balance and the time their threads waited at barriers.
fn parallel() -> Option<f64> {
    let runs = repeats();
    context(runs);
    println!("bench parallel: each row at 1 and 2 threads (RETX_BENCH_THREADS is ignored)");
    let htsim = std::env::var_os("RETX_HTSIM_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/htsim"));
    let hpcc = std::env::var_os("RETX_HPCC_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/hpcc-ns3"));
    let only = std::env::args().nth(2);
    let mut rows: Vec<(&str, String)> = Vec::new();
    if htsim.join("ws_432_l30_5ms.cm").is_file() {
        rows.push(("ndp-ws", ndp_scenario(&htsim.join("ws_432_l30_5ms.cm"))));
    }
    rows.push(("a2a-1024", all_to_all_scenario(&all_to_all_cm(16_000))));
    rows.push(("dragonfly", dragonfly_scenario(500, "irn", "200Gbps", "400Gbps")));
    if hpcc.join("fat.txt").is_file() {
        rows.push(("hpcc-ws", hpcc_scenario(&hpcc)));
    }
    rows.push(("uet-perm", uet_scenario(&uet_permutation_cm().0, "nscc")));
    rows.retain(|(label, _)| only.as_deref().is_none_or(|o| o == *label));
    println!("{:<10} {:>10} {:>10} {:>8}  partitions", "row", "1 thread s", "2 threads s", "speedup");
    for (label, text) in &rows {
        let (mut one, mut two) = (Vec::new(), Vec::new());
        let mut shape = None;
        let mut engine = None;
        for pass in 0..runs {
            for threads in if pass % 2 == 0 { [1, 2] } else { [2, 1] } {
                let wall = Instant::now();
                let (out, e) = run_threads(text, Some(threads)).unwrap_or_else(|e| panic!("bench {label}: {e}"));
                let secs = wall.elapsed().as_secs_f64();
                let got = (out.counters.events, out.counters.packet_hops, out.end, out.flows.iter().map(|f| f.finish).collect::<Vec<_>>());
                match &shape {
                    None => shape = Some(got),
                    Some(s) => assert!(*s == got, "bench {label}: {threads} threads gave another run"),
                }
                if threads == 1 {
                    one.push(secs);
                } else {
                    two.push(secs);
                    engine = Some(e);
                }
            }
        }
        let walls = |v: &[f64]| v.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(" ");
        println!("{label}: 1 thread {} s; 2 threads {} s", walls(&one), walls(&two));
        let (a, _, _) = median_and_range(&mut one);
        let (b, _, _) = median_and_range(&mut two);
        let e = engine.expect("ran at 2 threads");
        println!("{label:<10} {a:>10.2} {b:>10.2} {:>8.2}  {}", a / b, engine_line(&e));
    }
    peak_rss_mib()
}

/// The event queue alone on the fabric bench's own stream of events (see the module's text).
fn queue() {
    use retx::sim::queue_trace;
    if !queue_trace::ENABLED {
        eprintln!("retx-bench queue: built without the queue-trace feature (cargo build --profile dist -p retx --bin retx-bench --features queue-trace)");
        std::process::exit(2);
    }
    context(1);
    println!("bench queue: the fabric's go-back-N 1 ms row, its event queue's calls recorded, then replayed alone");
    queue_trace::start();
    let out = retx::run_toml(&fabric_scenario(1000, "gbn")).expect("the fabric scenario is valid");
    let ops = queue_trace::take();
    let (events, hops) = (out.counters.events, out.counters.packet_hops);
    drop(out);
    let origins = queue_trace::origins(&ops);
    let first = queue_trace::replay(&ops, origins);
    assert_eq!(first.pops, events, "the replay pops every event the run handled");
    let mut ns = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let again = queue_trace::replay(&ops, origins);
        ns.push(t.elapsed().as_secs_f64() * 1e9 / events as f64);
        assert_eq!(again, first, "replays agree");
    }
    let (median, fastest, slowest) = median_and_range(&mut ns);
    let per_hop = median * events as f64 / hops as f64;
    println!("{} calls, {} events from {} origins", ops.len(), events, origins);
    println!("replay: {median:.1} ns per event (push and pop; median of {}, {fastest:.1}-{slowest:.1}), {per_hop:.1} ns per packet-hop", ns.len());
    println!("        (at 10 M packet-hops/s a hop has 100 ns for everything: the queue alone takes {per_hop:.0} of them)");
}

/// Validation alone (issue 41: checks must stay near-linear on inputs of a few megabytes): an
/// htsim `.cm` of 10^6 flows in two steps with a barrier between them, on a k = 16 fat-tree,
/// parsed and validated `repeats()` times; the median with the range.
fn validate() -> Option<f64> {
    let file = std::env::temp_dir().join(format!("retx-bench-validate-{}.cm", std::process::id()));
    std::fs::write(&file, retx::workload::htsim_cm::two_steps_with_barrier(1024, 1_000_000, 1000)).expect("a temporary file");
    let text = format!(
        "name = \"validate\"\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 16\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
        file.display()
    );
    let mut walls = Vec::new();
    let mut peak = None;
    for pass in 0..repeats() {
        let wall = Instant::now();
        let mut s = retx::config::Scenario::from_toml(&text).expect("the bench's own scenario");
        retx::config::validate(&mut s).expect("a valid matrix");
        walls.push(wall.elapsed().as_secs_f64());
        drop(s);
        if pass == 0 {
            peak = peak_rss_mib();
        }
    }
    let _ = std::fs::remove_file(&file);
    let (secs, fastest, slowest) = median_and_range(&mut walls);
    println!("validate: a 10^6-flow .cm with a barrier on a k = 16 fat-tree: {secs:.2} s (range {fastest:.2}-{slowest:.2})");
    peak
}

fn main() {
    let peak = match std::env::args().nth(1).as_deref() {
        Some("validate") => validate(),
        Some("fabric") => fabric(),
        Some("hpcc") => hpcc(),
        Some("ndp") => ndp(),
        Some("dragonfly") => dragonfly(),
        Some("uet") => uet(),
        Some("parallel") => parallel(),
        Some("queue") => return queue(),
        // One short run of the fabric, for profilers (cachegrind runs ~50x slower).
        Some("fabric-quick") => {
            header();
            run(&[("gbn", fabric_scenario(200, "gbn"))], 1)
        }
        // A scenario of one's own, timed the same way.
        Some("file") => {
            let Some(path) = std::env::args().nth(2) else {
                eprintln!("usage: retx-bench file SCENARIO.toml");
                std::process::exit(2);
            };
            // As `retx run` reads a scenario: a regular file of at most 64 MiB (a device such as
            // /dev/zero was read until memory ran out).
            let text = retx::sim::input::read_text(std::path::Path::new(&path), retx::sim::input::MAX_TOPOLOGY_FILE).unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(2)
            });
            header();
            run(&[("file", text)], repeats())
        }
        _ => {
            eprintln!("usage: retx-bench fabric|hpcc|ndp|dragonfly|uet|parallel [ROW]|validate|fabric-quick|queue|file SCENARIO.toml");
            std::process::exit(2);
        }
    };
    match peak {
        Some(m) => println!("peak memory: {m:.1} MiB"),
        None => println!("peak memory: unknown (no /proc/self/status)"),
    }
}
