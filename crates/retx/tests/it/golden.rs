//! Golden outputs: reference scenarios (every example, and one per recovery x CC scheme plus
//! incasts and Poisson loads in `golden/scenarios/`) run and compared, field by field, with the
//! outputs stored in `golden/expected/`. A change that moves any number fails here and has to
//! say why: rerun with `RETX_BLESS=1 cargo test --release -p retx --test it golden` to store new outputs,
//! and explain the difference in the commit.
//!
//! What is compared: every column of every flow record, every counter except the event count
//! (an engine detail: a restructured loop may spend more or fewer events on the same packets),
//! the end time, packets left in flight, the MELO pool figures, and a digest of the time series.
//! Every run must also account for each drop: the flows' `drops` plus `background_dropped`
//! equal the drops by cause (loss, buffer, unroutable).

use retx::{RunOutput, Scenario, Simulation};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The text every run is reduced to: one line per flow, then totals.
fn digest(out: &RunOutput) -> String {
    let mut s = String::new();
    for f in &out.flows {
        writeln!(
            s,
            "flow {} {}->{} size={} start={} finish={:?} ideal={} delivered={} sent={} retx={} notifications={} rto={} cnps={} stored={} copied={} rxdrop={} drops={} goodput={:?}",
            f.flow_id, f.src, f.dst, f.size_bytes, f.start.0, f.finish.map(|t| t.0), f.ideal_fct.0, f.delivered_bytes, f.sent_bytes,
            f.retx_bytes, f.notifications.total(), f.timeouts, f.cnps, f.reorder_stored_bytes, f.reorder_copied_bytes, f.rx_dropped, f.drops, f.goodput_bps
        )
        .unwrap();
    }
    let c = &out.counters;
    writeln!(
        s,
        "counters hops={} created={} consumed={} loss={} buffer={} unroutable={} pauses={} ecn={} swaps={} bad={}",
        c.packet_hops, c.packets_created, c.packets_consumed, c.drops_loss, c.drops_buffer, c.drops_unroutable, c.pfc_pauses,
        c.ecn_marks, c.qp_swaps, c.bad_deliveries
    )
    .unwrap();
    writeln!(s, "background sent={} dropped={} delivered={}", c.background_sent, c.background_dropped, c.background_delivered)
    .unwrap();
    writeln!(s, "end={} in_flight={}", out.end.0, out.packets_in_flight).unwrap();
    writeln!(s, "melo rx_peak={:?} tx_peak={:?} in_use={}", out.scheme_figure("melo_rx_pool_peak").unwrap_or(0.0), out.scheme_figure("melo_tx_pool_peak").unwrap_or(0.0), (out.scheme_figure("melo_blocks_in_use_at_end").unwrap_or(0.0) as u64)).unwrap();
    // The series in full would dwarf the rest; its count and an order-sensitive digest of
    // every sample's bits guard it as well.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in &out.samples {
        for v in [x.time.0, x.host as u64, x.bps.to_bits(), x.wire_bps.to_bits()] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
    }
    writeln!(s, "samples n={} digest={h:016x}", out.samples.len()).unwrap();
    s
}

fn run_file(path: &Path) -> RunOutput {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut scenario = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    scenario.base_dir = path.parent().expect("a file has a folder").to_path_buf();
    let sim = Simulation::new(scenario).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    sim.run(&mut |_, _| true).expect("no abort")
}

fn check(name: &str, path: &Path) -> Option<String> {
    let out = run_file(path);
    let (c, flow_drops) = (&out.counters, out.flows.iter().map(|f| f.drops).sum::<u64>());
    assert_eq!(flow_drops + c.background_dropped, c.drops_loss + c.drops_buffer + c.drops_unroutable, "{name}: every drop is a flow's or background's");
    // ... and each has one kind, the same in the flows and in the run's totals.
    let by_kind: u64 = out.flows.iter().map(|f| f.drops_by_kind.total()).sum();
    assert_eq!((by_kind, c.drops_by_kind.total()), (flow_drops, flow_drops), "{name}: every flow drop has one kind");
    assert!(out.flows.iter().all(|f| f.drops_by_kind.total() == f.drops), "{name}: a flow's drops by kind add up to its drops");
    let got = digest(&out);
    assert_eq!(got.matches("bad=0").count(), 1, "{name}: every delivery must be good\n{got}");
    let expected_path = root().join("tests/golden/expected").join(format!("{name}.txt"));
    if std::env::var_os("RETX_BLESS").is_some() {
        std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
        std::fs::write(&expected_path, &got).unwrap();
        return None;
    }
    let want = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with RETX_BLESS=1 to record it)", expected_path.display()));
    if got == want {
        return None;
    }
    let first = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
    Some(format!(
        "{name}: differs from {} at line {}\n  want: {}\n  got:  {}",
        expected_path.display(),
        first + 1,
        want.lines().nth(first).unwrap_or("<end>"),
        got.lines().nth(first).unwrap_or("<end>")
    ))
}

fn check_all(files: Vec<(String, PathBuf)>) {
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|(name, path)| check(name, path)).collect();
    assert!(failures.is_empty(), "{} golden output(s) moved:\n{}", failures.len(), failures.join("\n"));
}

fn tomls(dir: &Path, prefix: &str, skip: &[&str]) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (format!("{prefix}{}", p.file_stem().unwrap().to_string_lossy()), p))
        .filter(|(n, _)| !skip.iter().any(|s| n.ends_with(s)))
        .collect();
    v.sort();
    v
}

#[test]
fn reference_scenarios_are_unchanged() {
    check_all(tomls(&root().join("tests/golden/scenarios"), "", &[]));
}

#[test]
fn examples_are_unchanged() {
    // hpcc-fat (2.2 s of a 320-host fabric) is guarded by the HPCC bench instead: it takes
    // longer than the rest of the suite.
    check_all(tomls(&root().join("../../examples"), "example-", &["hpcc-fat"]));
}
