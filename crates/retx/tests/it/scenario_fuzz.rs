//! A structure-aware fuzzer of scenarios and HPCC ns-3 configs. Scenarios are generated field
//! by field from the schema (`crate::schema::leaves` of resolved base scenarios): a few fields at a
//! time set to extreme, malformed or wrongly typed values, removed, or joined by unknown keys;
//! configs key by key (a value replaced, a line removed, doubled or unknown). Every case must
//! end in a run or one clean error line naming a field, never a panic; a run must advance
//! (no ticking in place), take bounded memory, and name output files only inside its folder.
//!
//! `make test` runs it for `RETX_FUZZ_SECONDS` (default 60) from a fixed seed, so CI is
//! reproducible; longer runs pick another seed: `RETX_FUZZ_SECONDS=3600 RETX_FUZZ_SEED=7
//! cargo test --release -p retx --test it scenario_fuzz -- --nocapture`. A failure prints the
//! smallest case proptest finds; its regression case goes to `tests/bad/` (docs/TESTING.md,
//! "Fuzzing", lists what it found). The case being run is also written to
//! `target/tmp/fuzz-last-case.txt`, for a case that aborts the process (memory).


use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use crate::schema::{boundaries, leaves, one_line, resolved, run_case, run_config_case, Kind, Leaf, Outcome, BASES, NASTY};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};


/// Wall-clock limit per case (the bases simulate a few hundred microseconds of a few hosts).
const LIMIT: Duration = Duration::from_secs(2);
const MAX_CASE_BYTES: usize = 1 << 30;

/// One change to a scenario: which leaf, and what happens to it.
#[derive(Clone, Debug)]
struct Change {
    leaf: Index,
    op: Op,
}

#[derive(Clone, Debug)]
enum Op {
    /// A boundary value of the leaf's own kind.
    Boundary(Index),
    /// Text from the nasty list, whatever the leaf's kind.
    Nasty(Index),
    Int(i64),
    Float(f64),
    /// A number with a unit of some kind.
    Unit(f64, Index),
    /// Arbitrary printable text, as a TOML string.
    Text(String),
    /// The leaf removed.
    Remove,
    /// An unknown key beside it.
    Unknown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<Index>().prop_map(Op::Boundary),
        3 => any::<Index>().prop_map(Op::Nasty),
        1 => any::<i64>().prop_map(Op::Int),
        1 => any::<f64>().prop_map(Op::Float),
        2 => (prop_oneof![Just(0.0), Just(1.0), Just(0.5), Just(1e-3), Just(1e6), Just(1e12), Just(1e19), any::<f64>()], any::<Index>()).prop_map(|(n, u)| Op::Unit(n, u)),
        1 => "[ -~]{0,24}".prop_map(Op::Text),
        1 => Just(Op::Remove),
        1 => Just(Op::Unknown),
    ]
}

const UNITS: &[&str] = &["ps", "ns", "us", "ms", "s", "bps", "Kbps", "Mbps", "Gbps", "Tbps", "B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "", "x"];

/// A float as TOML source (TOML writes nan and inf in lower case).
fn toml_float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v:?}")
    }
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The raw value an op puts in place of a leaf of kind `kind` (None: the leaf is removed).
fn raw(op: &Op, kind: Kind) -> Option<String> {
    Some(match op {
        Op::Boundary(i) => i.get(boundaries(kind)).to_string(),
        Op::Nasty(i) => i.get(NASTY).to_string(),
        Op::Int(v) => v.to_string(),
        Op::Float(v) => toml_float(*v),
        Op::Unit(n, u) => toml_string(&format!("{}{}", n, u.get(UNITS))),
        Op::Text(t) => toml_string(t),
        Op::Remove | Op::Unknown => return None,
    })
}

/// The case's text: the base with the changes applied.
fn scenario_text(tree: &toml::Value, all: &[Leaf], changes: &[Change]) -> String {
    let mut tree = tree.clone();
    let mut values: Vec<(Vec<crate::schema::Step>, String)> = Vec::new();
    for c in changes {
        let leaf = c.leaf.get(all);
        match &c.op {
            Op::Remove => crate::schema::remove(&mut tree, &leaf.path),
            Op::Unknown => crate::schema::add_sibling(&mut tree, &leaf.path, "fuzz_unknown_key", toml::Value::Integer(1)),
            op => values.push((leaf.path.clone(), raw(op, leaf.kind).expect("a value"))),
        }
    }
    let changes: Vec<(&[crate::schema::Step], &str)> = values.iter().map(|(p, v)| (p.as_slice(), v.as_str())).collect();
    crate::schema::with_values(&tree, &changes)
}

/// What every case must satisfy (`toml`: the case is a scenario, not a config).
fn judge(text: &str, toml: bool, outcome: Outcome, peak: usize) -> Result<(), TestCaseError> {
    match outcome {
        Outcome::Panicked(m) => return Err(TestCaseError::fail(format!("panicked: {m}"))),
        Outcome::Refused(e) => {
            prop_assert!(one_line(&e), "not one line: {:?}", e.to_string());
            // A field is named unless the text is not TOML at all (then the line says where).
            let is_toml = toml && ::toml::from_str::<::toml::Value>(text).is_ok();
            prop_assert!(!e.field.is_empty() || (toml && !is_toml), "no field named: {e}");
        }
        Outcome::Slow { simulated_ps, duration_ps } => {
            let rate = simulated_ps as f64 / LIMIT.as_secs_f64();
            prop_assert!(rate >= crate::schema::MIN_PROGRESS_PS_PER_SECOND, "ticks in place: {simulated_ps} of {duration_ps} ps in {LIMIT:?}");
        }
        Outcome::Ran => {}
    }
    prop_assert!(peak <= MAX_CASE_BYTES, "took {peak} bytes");
    Ok(())
}

fn last_case_file() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-last-case.txt")
}

/// The time budget and the seed: a fixed seed unless `RETX_FUZZ_SEED` names another.
fn budget() -> (Duration, u64) {
    let seconds = std::env::var("RETX_FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(60.0);
    let seed = std::env::var("RETX_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x7e7);
    (Duration::from_secs_f64(seconds), seed)
}

pub(crate) fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: 200, failure_persistence: None, max_shrink_iters: 2000, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs batches of `test` until `budget` has passed; the number of cases run.
pub(crate) fn for_a_while<S: Strategy>(budget: Duration, seed: u64, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) -> u64
where
    S::Value: std::fmt::Debug,
{
    let started = Instant::now();
    let cases = std::sync::atomic::AtomicU64::new(0);
    // One runner per batch, seeded in turn: a runner counts its cases across calls to `run`.
    let mut batch = 0;
    while started.elapsed() < budget {
        let result = runner(seed.wrapping_add(batch)).run(&strategy, |value| {
            cases.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            test(value)
        });
        if let Err(e) = result {
            panic!("seed {seed} batch {batch}: {e}");
        }
        batch += 1;
    }
    cases.into_inner()
}

/// Both halves in one test, one after the other: the allocator's peak is process-wide, so two
/// cases at once would share it.
#[test]
fn scenarios_field_by_field_then_configs_key_by_key() {
    crate::schema::quiet_panics();
    scenarios_field_by_field();
    hpcc_configs_key_by_key();
}

fn scenarios_field_by_field() {
    let (budget, seed) = budget();
    let bases: Vec<(toml::Value, Vec<Leaf>)> = BASES.iter().map(|(text, _)| {
        let tree = resolved(text);
        let all = leaves(&tree);
        (tree, all)
    }).collect();
    let strategy = (any::<Index>(), prop::collection::vec((any::<Index>(), op()).prop_map(|(leaf, op)| Change { leaf, op }), 1..=4));
    let cases = for_a_while(budget.mul_f64(0.75), seed, strategy, |(base, changes)| {
        let (tree, all) = base.get(&bases);
        let text = scenario_text(tree, all, &changes);
        let _ = std::fs::write(last_case_file(), &text);
        let baseline = crate::schema::reset_peak();
        let outcome = run_case(&text, Path::new("."), LIMIT);
        let peak = crate::schema::peak_above(baseline);
        judge(&text, true, outcome, peak).map_err(|e| TestCaseError::fail(format!("{e}\n--- case ---\n{text}")))
    });
    println!("scenarios: {cases} cases from seed {seed}");
}

/// A folder holding the files the config names, made once per process.
fn config_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-config-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("mix")).unwrap();
    std::fs::write(dir.join("mix/topo.txt"), "5 1 4\n4\n0 4 100Gbps 1000ns 0\n1 4 100Gbps 1000ns 0\n2 4 40Gbps 1us 0\n3 4 100Gbps 1000ns 0\n").unwrap();
    std::fs::write(dir.join("mix/flows.txt"), "2\n0 1 3 100 10000 0.000001\n2 3 3 100 5000 0.00002\n").unwrap();
    dir
}

/// A config with every key third.cc reads that retx maps.
const CONFIG: &str = "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\nTOPOLOGY_FILE mix/topo.txt\n\
FLOW_FILE mix/flows.txt\nFCT_OUTPUT_FILE mix/fct.txt\nPFC_OUTPUT_FILE mix/pfc.txt\nSIMULATOR_STOP_TIME 0.001\nCC_MODE 1\n\
ALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 300\nEWMA_GAIN 0.00390625\n\
FAST_RECOVERY_TIMES 1\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\nMIN_RATE 1000Mb/s\nDCTCP_RATE_AI 1000Mb/s\nERROR_RATE_PER_LINK 0.0000\n\
L2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\nHAS_WIN 0\nGLOBAL_T 1\nVAR_WIN 0\nFAST_REACT 0\nU_TARGET 0.95\n\
MI_THRESH 0\nINT_MULTI 1\nRATE_BOUND 1\nACK_HIGH_PRIO 1\nLINK_DOWN 0 0 0\nENABLE_TRACE 0\n\
KMAX_MAP 2 100000000000 1600 40000000000 6400\nKMIN_MAP 2 100000000000 400 40000000000 1600\n\
PMAX_MAP 2 100000000000 0.20 40000000000 0.20\nBUFFER_SIZE 32\nQLEN_MON_FILE mix/q.txt\nQLEN_MON_START 0\nQLEN_MON_END 0\n";

const CONFIG_TOKENS: &[&str] = &[
    "0", "1", "-1", "2", "3", "7", "8", "10", "0.5", "1e-9", "1e400", "-1e400", "inf", "-inf", "nan", "NaN", "4294967296",
    "18446744073709551616", "9223372036854775808", "1Gb/s", "0Mb/s", "-5Mb/s", "x", "", "/tmp/x", "../x", "mix/../../x",
    "summary.json", "mix/x", "1 2", "3 0 0 0", "1 100000000000 -1", "2 100000000000 1",
];

#[derive(Clone, Debug)]
enum ConfigOp {
    /// The line's value replaced.
    Value(Index, Index),
    /// The line's value replaced by a number.
    Number(Index, f64),
    Remove(Index),
    Double(Index),
    /// A line with a key third.cc does not read, or one it reads, with a token.
    Insert(Index, Index),
}

fn config_op() -> impl Strategy<Value = ConfigOp> {
    prop_oneof![
        4 => (any::<Index>(), any::<Index>()).prop_map(|(l, t)| ConfigOp::Value(l, t)),
        2 => (any::<Index>(), any::<f64>()).prop_map(|(l, v)| ConfigOp::Number(l, v)),
        1 => any::<Index>().prop_map(ConfigOp::Remove),
        1 => any::<Index>().prop_map(ConfigOp::Double),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(k, t)| ConfigOp::Insert(k, t)),
    ]
}

fn config_text(ops: &[ConfigOp]) -> String {
    let mut lines: Vec<String> = CONFIG.lines().map(str::to_string).collect();
    for op in ops {
        match op {
            ConfigOp::Value(l, t) | ConfigOp::Insert(l, t) if lines.is_empty() => {
                lines.push(format!("{} {}", ["FUZZ_KEY", "CC_MODE"][l.index(2)], t.get(CONFIG_TOKENS)));
            }
            ConfigOp::Value(l, t) => {
                let i = l.index(lines.len());
                let key = lines[i].split_whitespace().next().unwrap_or("").to_string();
                lines[i] = format!("{key} {}", t.get(CONFIG_TOKENS));
            }
            ConfigOp::Number(l, v) if !lines.is_empty() => {
                let i = l.index(lines.len());
                let key = lines[i].split_whitespace().next().unwrap_or("").to_string();
                lines[i] = format!("{key} {v}");
            }
            ConfigOp::Remove(l) if !lines.is_empty() => {
                lines.remove(l.index(lines.len()));
            }
            ConfigOp::Double(l) if !lines.is_empty() => {
                let i = l.index(lines.len());
                lines.push(lines[i].clone());
            }
            ConfigOp::Insert(k, t) => {
                let keys = ["FUZZ_KEY", "PAUSE_TIME", "TRACE_FILE", "PINT_PROB", "DATA_RATE", "QLEN_MON_END"];
                lines.push(format!("{} {}", k.get(&keys), t.get(CONFIG_TOKENS)));
            }
            _ => {}
        }
    }
    lines.join("\n") + "\n"
}

fn hpcc_configs_key_by_key() {
    let (budget, seed) = budget();
    let dir = config_dir();
    let cases = for_a_while(budget.mul_f64(0.25), seed ^ 0xc0f, prop::collection::vec(config_op(), 1..=3), |ops| {
        let text = config_text(&ops);
        let _ = std::fs::write(last_case_file(), &text);
        let baseline = crate::schema::reset_peak();
        let outcome = run_config_case(&text, &dir, LIMIT);
        let peak = crate::schema::peak_above(baseline);
        judge(&text, false, outcome, peak).map_err(|e| TestCaseError::fail(format!("{e}\n--- case ---\n{text}")))
    });
    println!("configs: {cases} cases from seed {seed}");
}

#[test]
fn the_fuzzer_reaches_uet_the_run_section_and_degraded_ports() {
    // The fields the mutations pick from: every leaf of every resolved base. A section left at
    // its defaults may be absent from them (`[run]`, `[[switch.degraded]]` are not written
    // then), so a base must set it.
    let names: std::collections::BTreeSet<String> = BASES.iter().flat_map(|(text, _)| leaves(&resolved(text)).into_iter().map(|l| l.name)).collect();
    let uet = retx::config::RecoveryCfg::default().uet;
    let uet_fields = toml::Value::try_from(uet).unwrap();
    let mut wanted: Vec<String> = uet_fields.as_table().unwrap().keys().map(|k| format!("recovery.uet.{k}")).collect();
    wanted.extend(["recovery.uet.rto", "recovery.uet.network_rtt", "recovery.uet.oversubscribed_cc"].map(String::from));
    wanted.extend(["run.threads", "run.min_hosts_per_thread", "run.partition", "switch.degraded[0].from", "switch.degraded[0].to", "switch.degraded[0].factor"].map(String::from));
    wanted.extend(["switch.trim.data_queue", "switch.ecn.to_hosts"].map(String::from));
    let missing: Vec<&String> = wanted.iter().filter(|w| !names.contains(*w)).collect();
    assert!(missing.is_empty(), "not reached by the fuzzer: {missing:?}");
}
