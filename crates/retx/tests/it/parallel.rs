//! A run split across threads ([`retx::config::build::run`] with `[run] threads`) gives the
//! serial run's output, bit for bit: every flow record, counter (the event count too), sample,
//! queue sample, scheme figure, the end and what was left in flight.

use retx::{RunOutput, Scenario};
use std::fmt::Write as _;
use std::path::Path;

/// Everything a run reports that a parallel run must reproduce.
pub fn whole(out: &RunOutput) -> String {
    let mut s = String::new();
    for f in &out.flows {
        writeln!(s, "{f:?}").unwrap();
    }
    writeln!(s, "{:?}", out.counters).unwrap();
    for x in &out.samples {
        writeln!(s, "{x:?}").unwrap();
    }
    writeln!(s, "{:?}", out.queue_names).unwrap();
    for x in &out.queue_samples {
        writeln!(s, "{x:?}").unwrap();
    }
    writeln!(s, "end={:?} duration={:?} in_flight={}", out.end, out.duration, out.packets_in_flight).unwrap();
    writeln!(s, "{:?}", out.scheme_report).unwrap();
    writeln!(s, "{:?} {:?}", out.collectives, out.collective_steps).unwrap();
    writeln!(s, "{:?}", out.warnings).unwrap();
    writeln!(s, "{:?} {:?}", out.pfc_deadlock, out.pfc_storms).unwrap();
    s
}

/// Runs `text` (relative paths from `dir`) on `threads` threads: its output and how many
/// threads ran it.
pub fn run_on(text: &str, dir: &Path, threads: u32) -> (RunOutput, retx::world::ParallelReport) {
    run_cut(text, dir, threads, retx::config::run::PartitionMode::Auto)
}

/// [`run_on`] with the network cut into `mode`'s blocks.
pub fn run_cut(text: &str, dir: &Path, threads: u32, mode: retx::config::run::PartitionMode) -> (RunOutput, retx::world::ParallelReport) {
    let mut s = Scenario::from_toml(text).unwrap();
    s.base_dir = dir.to_path_buf();
    s.run.threads = threads;
    s.run.partition = mode;
    // Small networks split too: the test is the identity, not the speed.
    s.run.min_hosts_per_thread = 1;
    let (out, report) = retx::config::build::run(s, &mut |_, _| true).unwrap();
    (out.expect("no abort"), report)
}

fn same_at(name: &str, text: &str, dir: &Path, threads: &[u32]) -> bool {
    let (serial, _) = run_on(text, dir, 1);
    let want = whole(&serial);
    let mut split = false;
    for &t in threads {
        let (out, report) = run_on(text, dir, t);
        split |= report.threads > 1;
        let got = whole(&out);
        if got != want {
            let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{name} at {t} threads ({} partitions) differs at line {}:\n  serial: {}\n  split:  {}",
                report.threads,
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                got.lines().nth(line).unwrap_or("<end>")
            );
        }
    }
    split
}

#[test]
fn a_fat_tree_split_in_two_three_and_four_is_the_serial_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let text = std::fs::read_to_string(root.join("fat-tree.toml")).unwrap();
    assert!(same_at("fat-tree", &text, &root, &[2, 3, 4]));
}

#[test]
fn uet_uud_split_is_the_serial_run() {
    // UUD's receivers judge their flows over, so the partition running a flow's receiver
    // counts it (`Template::receiver_completes`); an 8-to-1 incast across pods under loss and
    // trimming, split in two and four.
    use crate::util::nets::{incast, Net};
    let text = Net::fat_tree(4, "10Gbps")
        .named("uud-split", "5ms")
        .nic("mtu", 1000)
        .switch("trim", "{ queue = 0, data_queue = \"30KB\" }")
        .transport("uet", "none")
        .with("[recovery.uet]\ncc = \"none\"\ndelivery = \"uud\"\nload_balancing = \"oblivious\"\nrto = \"100us\"")
        .lossy(0.01)
        .with_flows(&incast(8, "100KB"));
    let serial = run_on(&text, Path::new("."), 1).0;
    assert!(serial.unfinished().is_none() && serial.counters.packets_trimmed > 0);
    assert!(serial.flows.iter().map(|f| f.delivered_bytes).sum::<u64>() < 800_000);
    assert!(same_at("uud", &text, Path::new("."), &[2, 4]));
}

#[test]
fn a_fat_tree_cut_switch_by_switch_is_the_serial_run_too() {
    // `[run] partition = "switches"`: other blocks, more links cut (ToR to aggregation too),
    // the same bytes.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let text = std::fs::read_to_string(root.join("fat-tree.toml")).unwrap();
    let want = whole(&run_on(&text, &root, 1).0);
    for t in [2, 3, 4, 7] {
        let (out, report) = run_cut(&text, &root, t, retx::config::run::PartitionMode::Switches);
        assert_eq!(report.threads as u32, t, "{:?}", report.serial_because);
        assert!(whole(&out) == want, "fat-tree cut by switch at {t} threads differs from the serial run");
    }
}

#[test]
fn every_golden_scenario_and_example_split_in_two_is_the_serial_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut split = Vec::new();
    for dir in [root.join("tests/golden/scenarios"), root.join("../../examples")] {
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        files.sort();
        for path in files {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if name == "hpcc-fat" {
                continue; // 2.2 s of a 320-host fabric: the bench's
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if same_at(&name, &text, &dir, &[2]) {
                split.push(name);
            }
        }
    }
    // The fat-trees, leaf-spines and the dragonfly split; single switches run serially.
    assert!(split.len() >= 5, "split: {split:?}");
}

/// Five switches in a ring, each host's flow two hops clockwise: a cyclic buffer dependency
/// (tests/it/pfc_lossless.rs), every switch a partition of its own; and the chain without
/// a cycle. PAUSEs cross partitions, the watchdog finds the deadlock (or storms only) at the
/// same tick.
#[test]
fn a_pfc_deadlock_across_partitions_is_found_at_the_serial_runs_tick() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("parallel_ring");
    std::fs::create_dir_all(&dir).unwrap();
    for hops in [2, 1] {
        let text = crate::pfc_lossless::ring(hops, &dir).replace("duration = \"20ms\"", "duration = \"4ms\"");
        let (serial, _) = run_on(&text, &dir, 1);
        assert_eq!(serial.pfc_deadlock.is_some(), hops == 2);
        assert!(hops == 1 || (serial.counters.pfc_pauses > 0 && !serial.pfc_storms.is_empty()));
        assert!(same_at("ring", &text, &dir, &[2, 5]));
    }
}

mod property {
    use super::*;
    use crate::every_scheme::setup;
    use crate::util::nets::flows_kb;
    use proptest::prelude::*;
    use retx::transport::RecoveryKind;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Every scheme on its network (trimming, spraying, credit queues, selective drops),
        /// random flows and loss, split into 2 to 4 partitions of pods or of single switches:
        /// the serial run, bit for bit.
        #[test]
        fn any_scheme_split_any_way_is_the_serial_run(
            scheme in prop::sample::select(RecoveryKind::all()),
            flows in proptest::collection::vec((0u32..16, 0u32..16, 1u32..120, 0u32..50), 2..8),
            loss in prop_oneof![Just(0.0), 0.0..0.03],
            knob in 0u32..10_000,
            threads in 2u32..5,
            pfc in any::<bool>(),
            by_switch in any::<bool>(),
        ) {
            let flows: Vec<_> = flows.into_iter().filter(|f| f.0 != f.1).collect();
            prop_assume!(flows.len() >= 2);
            let mut net = setup(scheme, knob);
            // Lossless fabrics for the schemes that run on them (RoCEv2's), with small
            // buffers so that PAUSEs cross partitions and the watchdog ticks.
            if pfc && ["gbn", "irn", "melo", "gbone", "stride"].contains(&scheme.name()) {
                net = net.switch("pfc", "{ enabled = true, storm_window = \"20us\" }").switch("buffer", crate::util::nets::s("60KB"));
            }
            let text = net.lossy(loss).with_flows(&flows_kb(&flows));
            let (serial, _) = run_on(&text, Path::new("."), 1);
            let mode = if by_switch { retx::config::run::PartitionMode::Switches } else { retx::config::run::PartitionMode::Auto };
            let (split, report) = run_cut(&text, Path::new("."), threads, mode);
            prop_assert!(report.threads > 1, "{}: {:?}", scheme.name(), report.serial_because);
            prop_assert_eq!(whole(&split), whole(&serial), "{} at {} threads, {:?}\n{}", scheme.name(), threads, mode, text);
        }
    }
}
