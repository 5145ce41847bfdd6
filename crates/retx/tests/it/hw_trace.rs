//! The hardware tracer (`retx::observe::hw_trace`, `retx trace`): it only watches (a traced run
//! is the run), and its rows agree with what the models counted.

use retx::observe::hw_trace::HwTraceKind;
use retx::{run_hw_trace, run_toml, Scenario};

/// Three flows into h3 through a lossy switch, a 128-bit pool: drops of both kinds happen.
const MELO: &str = r#"
name = "trace-melo"
seed = 3
duration = "3ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "40Gbps"
link_delay = "2us"
[transport]
recovery = "melo"
cc = "dcqcn"
[recovery.melo]
pool_bits = 128
[[loss]]
at = "switch:sw0"
rate = 0.03
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h3", size = "400KB" }, { src = "h1", dst = "h3", size = "400KB" }, { src = "h2", dst = "h3", size = "400KB" }]
"#;

const STRIDE: &str = r#"
name = "trace-stride"
seed = 5
duration = "5ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "10Gbps"
link_delay = "1us"
[transport]
recovery = "stride"
cc = "stride"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h3", size = "2MB" }, { src = "h1", dst = "h3", size = "2MB" }, { src = "h2", dst = "h3", size = "1MB" }]
"#;

fn rows(text: &str) -> Vec<Vec<i64>> {
    text.lines().filter(|l| !l.starts_with('#')).map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect()).collect()
}

fn traced(toml: &str, kind: HwTraceKind) -> (retx::RunOutput, Vec<Vec<i64>>) {
    let (out, text) = run_hw_trace(Scenario::from_toml(toml).unwrap(), kind, usize::MAX, 64).unwrap();
    (out.expect("an unbounded trace lets the run finish"), rows(&text))
}

#[test]
fn a_melo_trace_changes_nothing_and_its_drops_are_the_receivers() {
    let plain = run_toml(MELO).unwrap();
    let (out, rows) = traced(MELO, HwTraceKind::MeloRx);
    for (a, b) in plain.flows.iter().zip(&out.flows) {
        assert_eq!((a.finish, a.delivered_bytes, a.retx_bytes, a.rx_dropped), (b.finish, b.delivered_bytes, b.retx_bytes, b.rx_dropped));
    }
    let dropped: u64 = out.flows.iter().map(|f| f.rx_dropped).sum();
    let count = |action: i64| rows.iter().filter(|r| r[2] == action).count() as u64;
    assert!(count(5) > 0 && count(6) > 0, "both kinds of drop happen");
    assert_eq!(count(5) + count(6), dropped);
    // Every packet a receiver delivered in order went through the trace once (in order or by
    // a drain): RCV.NXT of a connection's last row is its packet count.
    for conn in 0..3 {
        let last = rows.iter().rev().find(|r| r[0] == conn).expect("every connection traced");
        assert_eq!(last[4], 400_000 / 1024 + 1, "connection {conn}");
    }
    // One NACK per row that opened a hole, and the blocks in use never exceed the pool.
    assert!(rows.iter().all(|r| r[3] == 0 || r[2] == 1));
    assert!(rows.iter().all(|r| r[6] <= 16));
}

#[test]
fn a_stride_trace_has_one_row_per_update() {
    let plain = run_toml(STRIDE).unwrap();
    let (out, rows) = traced(STRIDE, HwTraceKind::StrideRate);
    assert_eq!(plain.flows.iter().map(|f| f.finish).collect::<Vec<_>>(), out.flows.iter().map(|f| f.finish).collect::<Vec<_>>());
    let updates = out.scheme_figure("stride_cc_updates").expect("STRIDE reports its updates");
    assert_eq!(rows.iter().filter(|r| r[0] == 1).count() as f64, updates);
    assert_eq!(rows.iter().filter(|r| r[0] == 0).count(), 3, "one open per flow");
    // Every rate stays within [10 Mb/s floor, 10 Gb/s line].
    assert!(rows.iter().all(|r| (10_000_000..=10_000_000_000).contains(&r[3])));
}

#[test]
fn what_the_rtl_does_not_model_is_refused_with_the_field() {
    let err = |toml: &str, kind| match run_hw_trace(Scenario::from_toml(toml).unwrap(), kind, 10, 4) {
        Err(e) => e.field,
        Ok(_) => panic!("traced what the RTL does not model"),
    };
    assert_eq!(err(&MELO.replace("pool_bits = 128", "pool_bits = 128\ndrop_middle = false"), HwTraceKind::MeloRx), "recovery.melo.drop_middle");
    assert_eq!(err(&MELO.replace("pool_bits = 128", "pool_bits = 128\nqp_cache = 2"), HwTraceKind::MeloRx), "recovery.melo.qp_cache");
    assert_eq!(err(MELO, HwTraceKind::StrideRate), "trace");
    assert_eq!(err(&format!("{STRIDE}[cc.stride]\ndecrease = \"literal\"\n"), HwTraceKind::StrideRate), "cc.stride.decrease");
}

#[test]
fn a_bounded_trace_stops_the_run_early() {
    let (out, text) = run_hw_trace(Scenario::from_toml(MELO).unwrap(), HwTraceKind::MeloRx, 100, 64).unwrap();
    assert_eq!(rows(&text).len(), 100);
    assert!(text.contains("# ops 100\n"));
    // The run may or may not have reached its next progress check; a finished run is whole.
    if let Some(out) = out {
        assert_eq!(out.flows.len(), 3);
    }
}

/// LEFT over two sprayed paths of 1 and 8 us, 4 flows of 1 MB.
fn left_scenario(dir: &std::path::Path) -> Scenario {
    std::fs::create_dir_all(dir).unwrap();
    let topo = "6 4 6\n2 3 4 5\n0 2 100Gbps 0ns 0\n1 3 100Gbps 0ns 0\n2 4 100Gbps 1000ns 0\n4 3 100Gbps 0ns 0\n2 5 100Gbps 8000ns 0\n5 3 100Gbps 0ns 0\n";
    std::fs::write(dir.join("two.txt"), topo).unwrap();
    let text = "name = \"left-trace\"\nduration = \"20ms\"\n[topology]\nkind = \"hpcc-file\"\nfile = \"two.txt\"\n[nic]\nmtu = 1000\n[routing]\npolicy = \"spray-random\"\n[transport]\nrecovery = \"left\"\ncc = \"none\"\n[workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1MB\" }, { src = \"h0\", dst = \"h1\", size = \"1MB\" }, { src = \"h0\", dst = \"h1\", size = \"1MB\" }, { src = \"h0\", dst = \"h1\", size = \"1MB\" }]\n";
    let mut s = Scenario::from_toml(text).unwrap();
    s.base_dir = dir.to_path_buf();
    s
}

#[test]
fn a_left_trace_is_the_pool_operations_of_one_nic_and_changes_nothing() {
    let dir = std::env::temp_dir().join(format!("retx-left-trace-{}", std::process::id()));
    let plain = retx::Simulation::new(left_scenario(&dir)).unwrap().run(&mut |_, _| true).unwrap();
    let (out, text) = run_hw_trace(left_scenario(&dir), HwTraceKind::LeftPool, usize::MAX, 64).unwrap();
    let out = out.expect("an unbounded trace lets the run finish");
    for (a, b) in plain.flows.iter().zip(&out.flows) {
        assert_eq!((a.finish, a.delivered_bytes, a.retx_bytes), (b.finish, b.delivered_bytes, b.retx_bytes));
    }
    assert!(text.starts_with("# retx hw trace left\n# param pool_blocks 256\n# param block_bits 8\n# param registers 3\n# param register_bits 800\n"), "{}", &text[..200]);
    let all = rows(&text);
    assert!(all.len() > 1_000 && all.iter().all(|r| r.len() == 12));
    // The four connections, numbered from 0; every update the pool made is a row (fast path
    // updates plus each gathered packet's, when its batch was recorded).
    assert_eq!(all.iter().map(|r| r[1]).max(), Some(3));
    let count = |code: i64| all.iter().filter(|r| r[0] == code).count();
    assert!(count(0) > 0, "updates traced");
    // A bounded trace stops at its bound.
    let (_, text) = run_hw_trace(left_scenario(&dir), HwTraceKind::LeftPool, 100, 64).unwrap();
    assert_eq!(rows(&text).len(), 100);
    assert!(text.contains("# ops 100\n"));
    std::fs::remove_dir_all(&dir).unwrap();
    // Not LEFT: refused on one line.
    let err = run_hw_trace(Scenario::from_toml(MELO).unwrap(), HwTraceKind::LeftPool, 10, 4).err().expect("a MELO run has no LEFT pool");
    assert!(err.to_string().contains("no LEFT receiver"), "{err}");
}
