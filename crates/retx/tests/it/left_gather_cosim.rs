//! LEFT's packet scheduler and gather FIFOs in RTL (`rtl/left_gather.v`) against the model
//! (`retx::transport::loss::left::nic::LeftNic`), call by call.
//!
//! A real LEFT run is traced (`retx::run_hw_trace` with `HwTraceKind::LeftGather`, what
//! `retx trace left-gather` writes): every call on the receiving NIC's scheduler and FIFOs (an
//! out-of-order packet, an in-order one feeding the disorder degree, the FIFO timer, a hole
//! timer, a connection's end) with what the model did. The testbench (`rtl/tb/left_gather_tb.v`)
//! replays the calls through the RTL under iverilog, configured from the trace's parameters, and
//! every output must equal the model's: the scheduler's decision, the connection's degree, the
//! FIFO used and its fill, the connection evicted for room, the FIFOs closed, the count and a
//! hash of the packets they handed on, and the next FIFO deadline. Bugs planted in the RTL
//! (`define`s) must be caught. Without iverilog the test says so and passes.

use retx::hw::left_gather_trace::{COLUMNS, INPUTS};
use retx::observe::hw_trace::HwTraceKind;
use retx::{run_hw_trace, Scenario};
use std::collections::HashMap;
use std::path::PathBuf;
use crate::util::iverilog::{have_iverilog, run_testbench};

const OPS: usize = 5_000;

/// h0 - s2 = {s4: 1 us | s5: 32 us} = s3 - h1, 200 Gbps everywhere (left_rtl_cosim.rs's), with
/// `extra` TOML at the end (loss).
fn scenario(tag: &str, left: &str, flows: usize, size: &str, extra: &str) -> (Scenario, PathBuf) {
    let dir = std::env::temp_dir().join(format!("retx-left-gather-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "6 4 6\n2 3 4 5\n0 2 200Gbps 0ns 0\n1 3 200Gbps 0ns 0\n2 4 200Gbps 1000ns 0\n4 3 200Gbps 0ns 0\n2 5 200Gbps 32000ns 0\n5 3 200Gbps 0ns 0\n";
    std::fs::write(dir.join("two-paths.txt"), text).unwrap();
    let list: Vec<String> = (0..flows).map(|_| format!("{{ src = \"h0\", dst = \"h1\", size = \"{size}\" }}")).collect();
    let toml = format!(
        "name = \"left-gather-{tag}\"\nseed = 3\nduration = \"20ms\"\n[topology]\nkind = \"hpcc-file\"\nfile = \"two-paths.txt\"\n[nic]\nmtu = 1000\n[routing]\npolicy = \"spray-random\"\nentropy = \"per-packet\"\n[transport]\nrecovery = \"left\"\ncc = \"none\"\n[recovery.left]\n{left}\n[workload]\nkind = \"flow-list\"\nflows = [{}]\n{extra}",
        list.join(", ")
    );
    let mut s = Scenario::from_toml(&toml).unwrap();
    s.base_dir = dir.clone();
    (s, dir)
}

/// A parsed trace: parameters, rows, connections.
struct Trace {
    params: HashMap<String, i64>,
    rows: Vec<Vec<i64>>,
    conns: usize,
}

fn record(tag: &str, left: &str, flows: usize, size: &str, extra: &str) -> Trace {
    let (s, dir) = scenario(tag, left, flows, size, extra);
    let (_, text) = run_hw_trace(s, HwTraceKind::LeftGather, OPS, 64).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut t = Trace { params: HashMap::new(), rows: Vec::new(), conns: 0 };
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["#", "param", name, v] => {
                t.params.insert(name.to_string(), v.parse().unwrap());
            }
            ["#", "conns", n] => t.conns = n.parse().unwrap(),
            ["#", "columns", cols @ ..] => assert_eq!(cols, &COLUMNS[..]),
            ["#", ..] => {}
            _ => t.rows.push(w.iter().map(|x| x.parse().unwrap()).collect()),
        }
    }
    assert!(text.starts_with("# retx hw trace left-gather\n"), "{}", &text[..100.min(text.len())]);
    assert!(t.rows.iter().all(|r| r.len() == COLUMNS.len()));
    t
}

/// Runs the testbench on the trace's inputs (with `defines` planted) and returns its rows: the
/// model's columns, then clocks.
fn simulate(tag: &str, t: &Trace, defines: &[&str]) -> Vec<Vec<i64>> {
    let ops: String = t.rows.iter().map(|r| r[..INPUTS].iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ") + "\n").collect();
    let p = |k: &str| t.params[k];
    let params = [
        ("FIFOS", p("fifos")),
        ("DEPTH", p("gather_packets")),
        ("VARIANT", p("variant")),
        ("THRESHOLD", p("disorder_threshold")),
        ("CONN_THRESHOLD", p("connection_threshold")),
        ("TIMEOUT", p("gather_timeout")),
        ("CONNS", t.conns.max(2).next_power_of_two() as i64),
        ("MAX_OPS", t.rows.len() as i64),
    ];
    run_testbench(tag, "left_gather_tb", "left_gather", &params, defines, &ops)
}

/// The first call whose RTL outputs differ from the model's: (op, column, model, RTL).
fn divergence(model: &[Vec<i64>], rtl: &[Vec<i64>]) -> Option<(usize, &'static str, i64, i64)> {
    for (i, (m, r)) in model.iter().zip(rtl).enumerate() {
        assert_eq!(&r[..INPUTS], &m[..INPUTS], "op {i}: the testbench read other inputs");
        if let Some(k) = (INPUTS..COLUMNS.len()).find(|&k| m[k] != r[k]) {
            return Some((i, COLUMNS[k], m[k], r[k]));
        }
    }
    assert_eq!(model.len(), rtl.len(), "the testbench answered {} of {} calls", rtl.len(), model.len());
    None
}

/// A call's kind, from its row.
fn kind(r: &[i64]) -> &'static str {
    match (r[0], r[6], r[10] >= 0, r[11] != 0) {
        (0, 1, _, _) => "packet: fast",
        (0, 0, true, _) => "packet: gathered, evicting",
        (0, 0, false, true) => "packet: gathered, closing by count",
        (0, 0, false, false) => "packet: gathered",
        (1, _, _, _) => "observe",
        (2, _, _, true) => "tick: closing",
        (2, _, _, false) => "tick",
        (3, _, _, true) => "close_for: closing",
        (3, _, _, false) => "close_for",
        _ => "release",
    }
}

fn cosim(tag: &str, t: &Trace) -> Vec<Vec<i64>> {
    let rtl = simulate(tag, t, &[]);
    if let Some((i, col, m, r)) = divergence(&t.rows, &rtl) {
        panic!("{tag}: op {i} ({:?}): {col} is {r} in the RTL, {m} in the model\nmodel {:?}\nrtl   {:?}", kind(&t.rows[i]), t.rows[i], rtl[i]);
    }
    let mut kinds: Vec<(&str, usize, i64)> = Vec::new();
    for r in &rtl {
        let k = kind(r);
        match kinds.iter_mut().find(|x| x.0 == k) {
            Some(e) => (e.1, e.2) = (e.1 + 1, e.2 + r[COLUMNS.len()]),
            None => kinds.push((k, 1, r[COLUMNS.len()])),
        }
    }
    kinds.sort();
    println!("{tag}: {} calls over {} connections, zero divergences; RTL clocks (mean)", rtl.len(), t.conns);
    for (k, n, clocks) in kinds {
        println!("  {k:36} {n:6}  {:5.2}", clocks as f64 / n as f64);
    }
    rtl
}

#[test]
fn the_rtl_scheduler_and_gather_fifos_match_the_model_call_by_call_in_left_runs() {
    // The trace is taken whether or not iverilog is here: the tracer is checked either way.
    let left = record("left", "", 8, "2MB", "");
    assert_eq!(left.rows.len(), OPS);
    assert_eq!((left.params["fifos"], left.params["gather_packets"], left.params["variant"]), (8, 8, 0));
    // Two FIFOs for 16 short flows, a connection threshold, 1 % loss on the long path: FIFOs
    // close for room, by their timer and by hole timers; connections finish.
    let busy = record("busy", "fifos = 2\nconnection_threshold = 4", 16, "200KB", "[[loss]]\nat = \"switch:sw5\"\nrate = 0.01\n");
    // LEFT−: every packet gathered, in-order ones too.
    let minus = record("minus", "variant = \"left-minus\"", 4, "1MB", "");
    let count = |t: &Trace, k: &str| t.rows.iter().filter(|r| kind(r).starts_with(k)).count();
    let all = [&left, &busy, &minus];
    for k in ["packet: fast", "packet: gathered", "packet: gathered, closing by count", "packet: gathered, evicting", "observe", "tick: closing", "close_for", "release"] {
        assert!(all.iter().map(|t| count(t, k)).sum::<usize>() > 0, "no {k}");
    }
    if !have_iverilog() {
        println!("iverilog not found: the RTL co-simulation is skipped");
        return;
    }
    for (tag, t) in [("left", &left), ("busy", &busy), ("minus", &minus)] {
        cosim(tag, t);
    }
    // Planted bugs are caught: the newest FIFO closed for room, the degree's gain 1/4, a FIFO
    // timing out one unit of time late.
    for (bug, t) in [("LEFT_GATHER_BUG_OLDEST", &busy), ("LEFT_GATHER_BUG_GAIN", &left), ("LEFT_GATHER_BUG_AGE", &left)] {
        let bad = simulate(&format!("bug-{bug}"), t, &[bug]);
        let (i, col, m, r) = divergence(&t.rows, &bad).unwrap_or_else(|| panic!("{bug} not caught"));
        println!("{bug} caught at op {i}: {col} {r} (model {m})");
    }
}
