//! Checks that stay near-linear on inputs of millions of items (issue 41): a `.cm` of 10^6
//! flows with a barrier between its two steps, a collective whose iterations wait on barriers,
//! and lists of names by the hundred thousand. Before, the cycle search listed every dependant
//! of every flow (a barrier between two steps of N flows cost N^2), trigger ids were checked
//! against every earlier trigger, and each host name walked every node: each case here took
//! hours. The bounds are loose (a shared 2-core machine, any build with optimisations) and
//! far below what the quadratic versions took.

use retx::config::{validate, Scenario};
use retx::workload::htsim_cm::two_steps_with_barrier;
use std::time::{Duration, Instant};

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scale");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Validation time is only meaningful with optimisations (`cargo test --release` or
/// `--profile mutants`); a debug build checks correctness only.
fn bound(seconds: u64) -> Duration {
    if cfg!(debug_assertions) { Duration::from_secs(seconds * 30) } else { Duration::from_secs(seconds) }
}

fn cm_scenario(file: &std::path::Path) -> Scenario {
    let text = format!(
        "name = \"scale\"\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 16\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
        file.display()
    );
    Scenario::from_toml(&text).unwrap()
}

#[test]
fn a_million_flow_matrix_with_a_barrier_validates_in_seconds() {
    let file = tmp("barrier-1m.cm");
    std::fs::write(&file, two_steps_with_barrier(1024, 1_000_000, 1000)).unwrap();
    let mut s = cm_scenario(&file);
    let started = Instant::now();
    validate(&mut s).unwrap();
    let took = started.elapsed();
    eprintln!("10^6-flow .cm with a barrier: validated in {took:?}");
    assert!(took < bound(10), "validation took {took:?}");
    // The same file with the barrier closed into a cycle (the barrier's flows wait for the
    // second step) is refused just as fast, naming lines.
    // Flow 2 (line 5) now waits for a trigger that flow 500001 (line 500004), behind the
    // barrier flow 2 signals, fires.
    let line = |i: usize, rest: &str| format!("{}->{} id {} {rest}", i % 1024, (i + 1) % 1024, i + 1);
    let text = two_steps_with_barrier(1024, 1_000_000, 1000)
        .replacen("Triggers 1", "Triggers 2", 1)
        .replacen(&line(1, "start 0 size 1000 send_done_trigger 1\n"), &line(1, "trigger 2 size 1000 send_done_trigger 1\n"), 1)
        .replacen(&line(500_000, "trigger 1 size 1000\n"), &line(500_000, "trigger 1 size 1000 send_done_trigger 2\n"), 1)
        + "trigger id 2 oneshot\n";
    std::fs::write(&file, &text).unwrap();
    let mut s = cm_scenario(&file);
    let started = Instant::now();
    let e = validate(&mut s).unwrap_err();
    assert!(started.elapsed() < bound(10), "refusal took {:?}", started.elapsed());
    assert_eq!(e.field, "workload.file");
    assert!(e.message.contains("flows wait for each other in a cycle (lines 5 -> 500004 -> 5)"), "{e}");
}

#[test]
fn a_million_trigger_lines_are_checked_for_duplicates_in_one_pass() {
    // Every flow started by a trigger of its own, signalled by the flow before it: 10^6
    // one-shot trigger lines.
    use std::fmt::Write as _;
    let n = 1_000_000;
    let mut text = format!("Nodes 1024\nConnections {n}\nTriggers {}\n", n - 1);
    for i in 0..n {
        let how = if i == 0 { "start 0".to_string() } else { format!("trigger {i}") };
        let signal = if i + 1 < n { format!(" send_done_trigger {}", i + 1) } else { String::new() };
        let _ = writeln!(text, "{}->{} {how} size 100{signal}", i % 1024, (i + 1) % 1024);
    }
    for t in 1..n {
        let _ = writeln!(text, "trigger id {t} oneshot");
    }
    let started = Instant::now();
    let m = retx::workload::htsim_cm::parse(&text).unwrap();
    assert_eq!(m.triggers.len(), n - 1);
    m.check(1024).unwrap();
    assert!(started.elapsed() < bound(10), "took {:?}", started.elapsed());
    // The last trigger line repeating the first id is found, naming both lines.
    let last = format!("trigger id {} oneshot\n", n - 1);
    let twice = text.replacen(&last, "trigger id 1 oneshot\n", 1);
    let e = retx::workload::htsim_cm::parse(&twice).unwrap_err();
    assert_eq!(e, format!("line {}: trigger 1 is also defined on line {}", 3 + n + n - 1, 3 + n + 1));
}

#[test]
fn a_collective_of_a_million_flows_over_iterations_builds_its_waits_in_seconds() {
    // All-to-all among 1024 ranks: 1024 x 1023 flows an iteration, the second iteration
    // waiting on a barrier of every flow of the first.
    let text = "name = \"scale\"\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 16\n[workload]\nkind = \"collective\"\n[workload.collective]\nop = \"all-to-all\"\nranks = 1024\nsize = \"1MB\"\niterations = 2\n";
    let mut s = Scenario::from_toml(text).unwrap();
    let topo = validate(&mut s).unwrap();
    let started = Instant::now();
    let w = retx::config::workload::flows(&s.workload[0], &topo, s.seed, &s.base_dir).unwrap();
    assert_eq!(w.flows.len(), 2 * 1024 * 1023);
    assert!(started.elapsed() < bound(20), "took {:?}", started.elapsed());
}

#[test]
fn long_lists_of_host_names_are_checked_in_one_pass() {
    // 50,000 incast senders by name, 50,000 poisson pairs, a pcap of 50,000 hosts: each name
    // once through an index (the node walk per name, and the walk over earlier names for
    // duplicates, were quadratic).
    let names = |from: usize, n: usize| (from..from + n).map(|i| format!("\"h{i}\"")).collect::<Vec<_>>().join(", ");
    let topology = "[topology]\nkind = \"clos\"\npods = 10\ntors_per_pod = 50\naggs_per_pod = 2\ncores = 4\nhosts_per_tor = 101\n";
    let incast = format!("name = \"scale\"\nduration = \"1ms\"\n{topology}[workload]\nkind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\nsenders = [{}]\n[output]\npools = [{}]\n", names(1, 50_000), names(0, 50_000));
    let pairs: Vec<String> = (0..50_000).map(|i| format!("[\"h{i}\", \"h{}\"]", i + 1)).collect();
    let poisson = format!(
        "name = \"scale\"\nduration = \"1ms\"\n{topology}[workload]\nkind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.1\nflows = 100\npairs = [{}]\n",
        pairs.join(", ")
    );
    for text in [incast, poisson] {
        let mut s = Scenario::from_toml(&text).unwrap();
        let started = Instant::now();
        validate(&mut s).unwrap();
        assert!(started.elapsed() < bound(10), "took {:?}", started.elapsed());
    }
}
