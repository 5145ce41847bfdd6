//! A fuzzer of htsim connection matrices (`.cm`, issue 41): the peers' own matrices
//! (`../shared/peers/htsim/*.cm`, when present), small matrices with every trigger kind, and
//! matrices generated at scale (two steps of up to 200,000 flows joined by a barrier, random
//! trigger graphs that may hold cycles), each mutated line by line and token by token: a token
//! replaced by an edge value or junk, a line removed, doubled, swapped or added, a header
//! miscounted, a byte order mark or CRLF. Each case is validated, built and run on htsim_ndp's
//! k = 12 fat-tree (the peers' 432 hosts) with a wall-clock limit and the counting allocator.
//!
//! A case passes when it runs (or is still running at the limit while advancing), or is refused
//! on one line naming `workload.file` (the field that names the matrix: never a field the user
//! did not write) with the line of the file; when validation took at most [`CHECK_LIMIT`]
//! (quadratic work on a few MB is a finding); and when it took at most [`MAX_CASE_BYTES`].
//!
//! `make test` runs it for `RETX_CM_FUZZ_SECONDS` (default 15) from a fixed seed; longer:
//! `RETX_CM_FUZZ_SECONDS=1800 RETX_FUZZ_SEED=5 cargo test --release -p retx --test it cm_fuzz
//! -- --nocapture`. Findings go to `tests/bad/` (docs/TESTING.md, "Fuzzing").

use crate::scenario_fuzz::for_a_while;
use crate::schema::{one_line, Outcome};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use retx::config::{validate, Scenario};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Wall-clock limit of a case's run (after validation), plus [`RUN_LIMIT_PER_LINE`] for each
/// line of the matrix: starting 200,000 flows at time 0 is one step of simulated time that
/// takes about a second of wall clock, not a run ticking in place.
const RUN_LIMIT: Duration = Duration::from_millis(500);
const RUN_LIMIT_PER_LINE: Duration = Duration::from_micros(10);
/// The longest validation of a case may take: the largest generated matrix (200,000 flows)
/// validates in well under a second.
const CHECK_LIMIT: Duration = Duration::from_secs(10);
const MAX_CASE_BYTES: usize = 1 << 30;

/// A small matrix with every trigger kind and every flow token.
const SMALL: &str = "# every trigger kind\nNodes 8\nConnections 6\nTriggers 3\n\
0->1 id 1 start 0 size 20000 send_done_trigger 1\n\
1->2 id 2 start 1000000 size 3000 recv_done_trigger 2 prio 2\n\
2->3 id 3 trigger 1 size 5000 send_done_trigger 3\n\
3->4 id 4 trigger 2 size 8000 send_done_trigger 3 addon\n\
4->5 id 5 trigger 3 size 100\n\
5->6 id 6 trigger 2 size 100\n\
trigger id 1 oneshot\ntrigger id 2 multishot\ntrigger id 3 barrier count 2\n";

const TOKENS: &[&str] = &[
    "0", "1", "2", "-1", "431", "432", "433", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999", "1e400", "-1e400", "1.5e6", "nan", "inf", "1e18", "1000000000000000000", "1000000000000000001",
    "1000000000000000", "1000000000000001", "x", "", "->", "0->", "->1", "0->0", "0->431", "431->0", "start", "trigger", "size",
    "id", "barrier", "count", "oneshot", "multishot", "send_done_trigger", "recv_done_trigger", "prio", "addon", "#", "Nodes",
    "Connections", "Triggers", "Failures", "failure", "\u{feff}", "\t", "\u{0}", "é",
];

#[derive(Clone, Debug)]
enum Op {
    /// A token of a line replaced.
    Token(Index, Index, Index),
    /// A token added at the end of a line.
    Append(Index, Index),
    Remove(Index),
    Double(Index),
    Swap(Index, Index),
    /// A flow line naming random nodes, size and triggers.
    Flow { src: u32, dst: u32, trigger: Option<u8>, signal: Option<u8>, size: u64 },
    /// A trigger line of a random kind and id.
    Trigger { id: u8, kind: u8, count: u32 },
    /// A header's count moved by a little.
    Miscount(Index, i8),
    Crlf,
    Bom,
    /// The text cut at a byte (at a char boundary at or before it).
    Truncate(Index),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<Index>(), any::<Index>(), any::<Index>()).prop_map(|(l, t, v)| Op::Token(l, t, v)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(l, v)| Op::Append(l, v)),
        2 => any::<Index>().prop_map(Op::Remove),
        1 => any::<Index>().prop_map(Op::Double),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Op::Swap(a, b)),
        2 => (0u32..440, 0u32..440, prop::option::of(0u8..6), prop::option::of(0u8..6), prop_oneof![Just(1u64), 1u64..10_000_000, Just(1_000_000_000_000_000)])
            .prop_map(|(src, dst, trigger, signal, size)| Op::Flow { src, dst, trigger, signal, size }),
        1 => (0u8..6, 0u8..4, 0u32..5).prop_map(|(id, kind, count)| Op::Trigger { id, kind, count }),
        1 => (any::<Index>(), -2i8..=2).prop_map(|(h, d)| Op::Miscount(h, d)),
        1 => Just(Op::Crlf),
        1 => Just(Op::Bom),
        1 => any::<Index>().prop_map(Op::Truncate),
    ]
}

/// Where a case's matrix comes from.
#[derive(Clone, Debug)]
enum Base {
    /// One of the fixed matrices (the peers', when present, and [`SMALL`]).
    Fixed(Index),
    /// Two steps of `flows` flows joined by a barrier.
    Barrier(usize),
    /// `flows` flows and `triggers` triggers wired at random (cycles likely).
    Random { flows: usize, triggers: usize, seed: u64 },
}

fn base() -> impl Strategy<Value = Base> {
    prop_oneof![
        6 => any::<Index>().prop_map(Base::Fixed),
        1 => prop_oneof![2usize..64, 1000usize..200_000].prop_map(Base::Barrier),
        2 => (1usize..3000, 1usize..300, any::<u64>()).prop_map(|(flows, triggers, seed)| Base::Random { flows, triggers, seed }),
    ]
}

fn fixed() -> Vec<String> {
    let dir = std::env::var_os("RETX_HTSIM_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/htsim"));
    let mut out = vec![SMALL.to_string()];
    for name in ["perm_432_2MB.cm", "ws_432_l30_5ms.cm"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            out.push(text);
        }
    }
    out
}

/// A random trigger graph: each flow starts at 0 or by a trigger, and signals one or none.
fn random_matrix(flows: usize, triggers: usize, seed: u64) -> String {
    let mut x = seed | 1;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    let mut text = format!("Nodes 432\nConnections {flows}\nTriggers {triggers}\n");
    let mut signals = vec![0u64; triggers];
    for i in 0..flows {
        let (src, dst) = (next(432), next(431));
        let dst = if dst >= src { dst + 1 } else { dst };
        let how = if next(3) == 0 { "start 0".to_string() } else { format!("trigger {}", 1 + next(triggers as u64)) };
        let signal = match next(3) {
            0 => String::new(),
            1 => {
                let t = next(triggers as u64);
                signals[t as usize] += 1;
                format!(" send_done_trigger {}", t + 1)
            }
            _ => {
                let t = next(triggers as u64);
                signals[t as usize] += 1;
                format!(" recv_done_trigger {}", t + 1)
            }
        };
        let _ = writeln!(text, "{src}->{dst} id {} {how} size {}{signal}", i + 1, 1 + next(100_000));
    }
    for (t, &s) in signals.iter().enumerate() {
        let kind = match next(3) {
            0 => "oneshot".to_string(),
            1 => "multishot".to_string(),
            _ => format!("barrier count {}", s.max(1)),
        };
        let _ = writeln!(text, "trigger id {} {kind}", t + 1);
    }
    text
}

fn apply(text: &str, ops: &[Op]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut crlf = false;
    let mut bom = false;
    let mut cut = None;
    for op in ops {
        let n = lines.len();
        match op {
            Op::Token(l, t, v) if n > 0 => {
                let i = l.index(n);
                let mut words: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
                if words.is_empty() {
                    words.push(String::new());
                }
                let k = t.index(words.len());
                words[k] = v.get(TOKENS).to_string();
                lines[i] = words.join(" ");
            }
            Op::Append(l, v) if n > 0 => {
                let i = l.index(n);
                lines[i] = format!("{} {}", lines[i], v.get(TOKENS));
            }
            Op::Remove(l) if n > 0 => {
                lines.remove(l.index(n));
            }
            Op::Double(l) if n > 0 => {
                let i = l.index(n);
                lines.insert(i, lines[i].clone());
            }
            Op::Swap(a, b) if n > 0 => lines.swap(a.index(n), b.index(n)),
            Op::Flow { src, dst, trigger, signal, size } => {
                let how = trigger.map_or("start 0".to_string(), |t| format!("trigger {t}"));
                let signal = signal.map_or(String::new(), |t| format!(" send_done_trigger {t}"));
                lines.push(format!("{src}->{dst} {how} size {size}{signal}"));
            }
            Op::Trigger { id, kind, count } => {
                let kind = match kind {
                    0 => "oneshot".to_string(),
                    1 => "multishot".to_string(),
                    2 => format!("barrier count {count}"),
                    _ => format!("barrier {count}"),
                };
                lines.push(format!("trigger id {id} {kind}"));
            }
            Op::Miscount(h, d) => {
                let headers: Vec<usize> = (0..n).filter(|&i| ["Nodes", "Connections", "Triggers"].iter().any(|k| lines[i].starts_with(k))).collect();
                if !headers.is_empty() {
                    let i = headers[h.index(headers.len())];
                    let mut words: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
                    if let Some(v) = words.get(1).and_then(|v| v.parse::<i64>().ok()) {
                        words[1] = (v + *d as i64).to_string();
                        lines[i] = words.join(" ");
                    }
                }
            }
            Op::Crlf => crlf = true,
            Op::Bom => bom = true,
            Op::Truncate(at) => cut = Some(*at),
            _ => {}
        }
    }
    let mut out = lines.join(if crlf { "\r\n" } else { "\n" }) + "\n";
    if let Some(at) = cut {
        let mut i = at.index(out.len() + 1);
        while !out.is_char_boundary(i) {
            i -= 1;
        }
        out.truncate(i);
    }
    if bom {
        out.insert(0, '\u{feff}');
    }
    out
}

/// htsim_ndp's network for the peers' matrices (as `retx run x.cm` builds it), with a short run;
/// with `uet`, UET on uet-htsim's switches instead (its 4,086 B MTU, a data queue of one BDP
/// trimming to 64 B, ECN marks), as `retx reproduce uet-htsim-crosscheck` runs its matrices.
fn scenario(file: &Path, uet: bool) -> String {
    if uet {
        return format!(
            "name = \"cm-fuzz-uet\"\nduration = \"200us\"\n[topology]\nkind = \"fat-tree\"\nk = 12\nhost_link = \"100Gbps\"\nlink_delay = \"1us\"\n\
             [nic]\nmtu = 4086\n[switch]\npfc = {{ enabled = false }}\necn = {{ enabled = true, kmin = \"35690B\", kmax = \"142760B\", pmax = 1.0 }}\n\
             trim = {{ queue = 0, header = \"64B\", data_queue = \"178450B\", victim = \"htsim\" }}\n\
             [transport]\nrecovery = \"uet\"\ncc = \"none\"\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
            file.display()
        );
    }
    format!(
        "name = \"cm-fuzz\"\nduration = \"200us\"\n[topology]\nkind = \"fat-tree\"\nk = 12\nhost_link = \"100Gbps\"\nlink_delay = \"1us\"\n\
         [nic]\nmtu = 9000\nwhole_packets = true\n[switch]\npfc = {{ enabled = false }}\necn = {{ enabled = false }}\n\
         trim = {{ queue = 0, header = \"64B\", data_queue = \"135000B\" }}\n[routing]\npolicy = \"spray-permutation\"\n\
         [transport]\nrecovery = \"ndp\"\ncc = \"none\"\n[workload]\nkind = \"htsim-cm\"\nfile = \"{}\"\n",
        file.display()
    )
}

/// Validates, builds and runs one matrix; the outcome and how long validation took.
fn run(file: &Path, uet: bool, limit: Duration) -> (Outcome, Duration) {
    let text = scenario(file, uet);
    let mut checked = Duration::ZERO;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = Scenario::from_toml(&text).expect("the scenario around the matrix is valid");
        let started = Instant::now();
        let validated = validate(&mut s.clone());
        checked = started.elapsed();
        if let Err(e) = validated {
            return Outcome::Refused(e);
        }
        s.base_dir = PathBuf::from(".");
        let sim = match retx::config::build(s) {
            Ok(sim) => sim,
            Err(e) => return Outcome::Refused(e),
        };
        let started = Instant::now();
        let (mut simulated, mut duration) = (0, 0);
        match sim.run(&mut |now, end| {
            (simulated, duration) = (now.0, end.0);
            started.elapsed() < limit
        }) {
            Ok(_) => Outcome::Ran,
            Err(_) => Outcome::Slow { simulated_ps: simulated, duration_ps: duration },
        }
    }));
    (caught.unwrap_or_else(|p| Outcome::Panicked(crate::schema::panic_message(&*p))), checked)
}

fn judge(outcome: Outcome, limit: Duration, checked: Duration, peak: usize) -> Result<(), TestCaseError> {
    match outcome {
        Outcome::Panicked(m) => return Err(TestCaseError::fail(format!("panicked: {m}"))),
        Outcome::Refused(e) => {
            prop_assert!(one_line(&e), "not one line: {:?}", e.to_string());
            prop_assert_eq!(e.field.as_str(), "workload.file", "names a field the matrix does not set: {}", e);
            prop_assert!(e.message.contains(": line ") || e.message.contains("not UTF-8") || e.message.contains("memory budget"), "no line named: {}", e);
        }
        Outcome::Slow { simulated_ps, .. } => {
            let rate = simulated_ps as f64 / limit.as_secs_f64();
            prop_assert!(rate >= crate::schema::MIN_PROGRESS_PS_PER_SECOND, "ticks in place: {simulated_ps} ps in {limit:?}");
        }
        Outcome::Ran => {}
    }
    prop_assert!(checked <= CHECK_LIMIT, "validation took {checked:?}");
    prop_assert!(peak <= MAX_CASE_BYTES, "took {peak} bytes");
    Ok(())
}

#[test]
fn connection_matrices_line_by_line() {
    crate::schema::quiet_panics();
    let seconds = std::env::var("RETX_CM_FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15.0);
    let seed = std::env::var("RETX_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0xc3);
    let fixed = fixed();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cm-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("case.cm");
    let last = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cm-fuzz-last-case.cm");
    // Half the cases run UET on uet-htsim's switches instead of NDP.
    let strategy = (base(), prop::collection::vec(op(), 0..=4), any::<bool>());
    let cases = for_a_while(Duration::from_secs_f64(seconds), seed, strategy, |(base, ops, uet)| {
        let text = match base {
            Base::Fixed(i) => i.get(&fixed).clone(),
            Base::Barrier(n) => retx::workload::htsim_cm::two_steps_with_barrier(432, n, 1000),
            Base::Random { flows, triggers, seed } => random_matrix(flows, triggers, seed),
        };
        let text = apply(&text, &ops);
        std::fs::write(&file, &text).unwrap();
        let _ = std::fs::copy(&file, &last);
        let baseline = crate::schema::reset_peak();
        let limit = RUN_LIMIT + RUN_LIMIT_PER_LINE * text.lines().count() as u32;
        let started = Instant::now();
        let (outcome, checked) = run(&file, uet, limit);
        let took = started.elapsed();
        let peak = crate::schema::peak_above(baseline);
        if std::env::var_os("RETX_CM_FUZZ_VERBOSE").is_some() {
            eprintln!("{} lines: {outcome:?} checked in {checked:?}, {took:?} in all, {peak} bytes", text.lines().count());
        }
        let head: String = text.lines().take(12).collect::<Vec<_>>().join("\n");
        judge(outcome, limit, checked, peak).map_err(|e| TestCaseError::fail(format!("{e}\n--- case ({} bytes, first lines; whole: {}) ---\n{head}", text.len(), last.display())))
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!("connection matrices: {cases} cases from seed {seed}");
}
