//! The scenario schema as data, for the boundary table (`tests/boundaries.rs`) and the fuzzer
//! (`tests/scenario_fuzz.rs`): every field of a scenario with every default filled in
//! (`Scenario::to_toml`), each with its kind, and the values that stress each kind. A new
//! section or field is covered without touching these tests.
//!
//! Also: running a scenario under a wall-clock limit, telling a run that is slow because it
//! simulates much from one that ticks in place; and a global allocator that counts, so a case
//! that would take gigabytes is caught.
#![allow(dead_code)]

use retx::config::{hpcc_config, validate, Scenario, ScenarioError};
use retx::sim::units::{parse_rate, parse_size, parse_time};

use std::path::Path;

use std::time::{Duration, Instant};

/// What a leaf holds, read off its default value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Time,
    Rate,
    Size,
    /// Any other string: a name, a path, an enum's variant.
    Text,
}

/// One field of a resolved scenario: its place in the TOML tree and its dotted name as errors
/// write it (`loss[0].rate`).
#[derive(Clone, Debug)]
pub struct Leaf {
    pub path: Vec<Step>,
    pub name: String,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Every leaf of a TOML tree, in document order (arrays of numbers or strings are one leaf
/// each element; tables inside arrays are walked).
pub fn leaves(value: &toml::Value) -> Vec<Leaf> {
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn walk(value: &toml::Value, path: &mut Vec<Step>, out: &mut Vec<Leaf>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                path.push(Step::Key(k.clone()));
                walk(v, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                path.push(Step::Index(i));
                walk(v, path, out);
                path.pop();
            }
        }
        leaf => out.push(Leaf { path: path.clone(), name: dotted(path), kind: kind_of(leaf) }),
    }
}

fn kind_of(v: &toml::Value) -> Kind {
    match v {
        toml::Value::Integer(_) => Kind::Int,
        toml::Value::Float(_) => Kind::Float,
        toml::Value::Boolean(_) => Kind::Bool,
        toml::Value::String(s) if parse_time(s).is_some() => Kind::Time,
        toml::Value::String(s) if parse_rate(s).is_some() => Kind::Rate,
        toml::Value::String(s) if parse_size(s).is_some() => Kind::Size,
        _ => Kind::Text,
    }
}

fn dotted(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The values at the edges of each kind, as TOML source text (some are not TOML values at
/// all: an integer past i64, 1e400): zero, one, the largest, one past it, negative, NaN,
/// infinities, and one out of every range.
pub fn boundaries(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Int => &["0", "1", "-1", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808", "nan", "inf", "1e400"],
        Kind::Float => &["0.0", "1.0", "-1.0", "-0.0", "5e-324", "1.7976931348623157e308", "nan", "inf", "-inf", "1e400"],
        Kind::Time => &["\"0ps\"", "\"1ps\"", "\"999ns\"", "\"1000000s\"", "\"1000001s\"", "\"-1us\"", "\"nanus\"", "\"infs\"", "\"1e400s\"", "\"18446744073709551616ps\""],
        Kind::Rate => &["\"0bps\"", "\"1bps\"", "\"10Tbps\"", "\"1000Tbps\"", "\"1001Tbps\"", "\"-1Gbps\"", "\"nanGbps\"", "\"infGbps\"", "\"1e400bps\""],
        Kind::Size => &["\"0B\"", "\"1B\"", "\"1000000000GB\"", "\"1000000001GB\"", "\"-1B\"", "\"nanB\"", "\"infB\"", "\"1e400B\""],
        Kind::Bool => &["true", "false", "1"],
        Kind::Text => &["\"\"", "\"x\"", "\"../../x\"", "\"/tmp/x\"", "\"a\\u0000b\"", "\"a\\nb\""],
    }
}

/// Text that breaks parsers, for the fuzzer: the boundaries of every kind, wrong types, units
/// that are not units, names that are paths, long strings.
pub const NASTY: &[&str] = &[
    "[]", "{}", "[1, 2]", "\"\"", "\"x\"", "\"1\"", "\"1x\"", "\"1 ms\"", "\"1ms \"", "\" 1ms\"", "\"0.5ps\"", "\"1e-3ms\"",
    "\"1_000us\"", "\"..\"", "\"./x\"", "\"x/../../y\"", "\"~/x\"", "\"C:\\\\x\"", "\"CON\"", "\"trace.pcap/x\"",
    "\"summary.json\"", "\"\\u0007\"", "\"h0\"", "\"sw0\"", "\"h0->sw0\"", "\"link:h0->sw0\"", "\"switch:sw0\"", "\"everywhere\"",
    "\"auto\"", "\"off\"", "\"per-packet\"", "\"gilbert-elliott\"", "\"random\"", "\"dynamic\"", "-9223372036854775808",
    "0.1", "0.5", "2", "3", "7", "8", "64", "1024", "65536", "\"64B\"", "\"9KB\"", "\"1us\"", "\"1ms\"", "\"1Gbps\"",
];

/// A resolved scenario's text with the leaf at `path` replaced by `raw` (TOML source text,
/// spliced in, so values that are not TOML values also go through the real parser).
pub fn with_value(resolved: &toml::Value, path: &[Step], raw: &str) -> String {
    let mut tree = resolved.clone();
    set(&mut tree, path, toml::Value::String(PLACEHOLDER.into()));
    toml::to_string(&tree).expect("serialises").replace(&format!("\"{PLACEHOLDER}\""), raw)
}

/// A resolved scenario's text with several leaves replaced.
pub fn with_values(resolved: &toml::Value, changes: &[(&[Step], &str)]) -> String {
    let mut tree = resolved.clone();
    for (i, (path, _)) in changes.iter().enumerate() {
        set(&mut tree, path, toml::Value::String(format!("{PLACEHOLDER}{i}")));
    }
    let mut text = toml::to_string(&tree).expect("serialises");
    for (i, (_, raw)) in changes.iter().enumerate() {
        text = text.replace(&format!("\"{PLACEHOLDER}{i}\""), raw);
    }
    text
}

const PLACEHOLDER: &str = "@@value@@";

/// The tree without the leaf at `path` (a key removed, or an array element).
pub fn remove(v: &mut toml::Value, path: &[Step]) {
    let Some((last, parent)) = path.split_last() else { return };
    let Some(container) = get_mut(v, parent) else { return };
    match (container, last) {
        (toml::Value::Table(t), Step::Key(k)) => {
            t.remove(k);
        }
        (toml::Value::Array(a), Step::Index(i)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// The tree with `key = value` added to the table holding the leaf at `path`.
pub fn add_sibling(v: &mut toml::Value, path: &[Step], key: &str, value: toml::Value) {
    let Some((_, parent)) = path.split_last() else { return };
    if let Some(toml::Value::Table(t)) = get_mut(v, parent) {
        t.insert(key.to_string(), value);
    }
}

fn get_mut<'a>(v: &'a mut toml::Value, path: &[Step]) -> Option<&'a mut toml::Value> {
    match path.split_first() {
        None => Some(v),
        Some((Step::Key(k), rest)) => get_mut(v.get_mut(k.as_str())?, rest),
        Some((Step::Index(i), rest)) => get_mut(v.get_mut(*i)?, rest),
    }
}

/// The leaf at `path` set to `new`; nothing when an earlier change removed its place.
fn set(v: &mut toml::Value, path: &[Step], new: toml::Value) {
    if let Some(leaf) = get_mut(v, path) {
        *leaf = new;
    }
}

/// A scenario resolved (every default filled in) as a TOML tree.
pub fn resolved(text: &str) -> toml::Value {
    let mut s = Scenario::from_toml(text).expect("a valid base scenario");
    validate(&mut s).unwrap_or_else(|e| panic!("base scenario: {e}"));
    toml::from_str(&s.to_toml()).expect("the resolved scenario parses")
}

/// How a case ended.
#[derive(Debug)]
pub enum Outcome {
    /// Refused: the error.
    Refused(ScenarioError),
    /// Ran to its end.
    Ran,
    /// Still running at the wall-clock limit, having simulated `simulated_ps` of `duration_ps`.
    Slow { simulated_ps: u64, duration_ps: u64 },
    /// Panicked: the message.
    Panicked(String),
}

/// Parses, validates, builds and runs `text` (relative paths against `base_dir`), stopping at
/// `limit` of wall-clock time. A panic anywhere is caught and returned.
pub fn run_case(text: &str, base_dir: &Path, limit: Duration) -> Outcome {
    let text = text.to_string();
    let base_dir = base_dir.to_path_buf();
    let caught = in_case(move || -> Outcome {
        let mut s = match Scenario::from_toml(&text) {
            Ok(s) => s,
            Err(e) => return Outcome::Refused(e),
        };
        s.base_dir = base_dir;
        check_output_paths(&s);
        run_scenario(s, limit)
    });
    caught.unwrap_or_else(|payload| Outcome::Panicked(panic_message(&*payload)))
}

/// [`run_case`] for an HPCC ns-3 config's text (its files in `dir`).
pub fn run_config_case(text: &str, dir: &Path, limit: Duration) -> Outcome {
    let (text, dir) = (text.to_string(), dir.to_path_buf());
    let caught = in_case(move || -> Outcome {
        match hpcc_config::parse(&text, &dir, "fuzz") {
            Ok(s) => run_scenario(s, limit),
            Err(e) => Outcome::Refused(e),
        }
    });
    caught.unwrap_or_else(|payload| Outcome::Panicked(panic_message(&*payload)))
}

fn run_scenario(s: Scenario, limit: Duration) -> Outcome {
    let sim = match retx::config::build(s) {
        Ok(sim) => sim,
        Err(e) => return Outcome::Refused(e),
    };
    let started = Instant::now();
    let (mut simulated, mut duration) = (0, 0);
    let result = sim.run(&mut |now, end| {
        (simulated, duration) = (now.0, end.0);
        started.elapsed() < limit
    });
    match result {
        Ok(_) => Outcome::Ran,
        Err(_) => Outcome::Slow { simulated_ps: simulated, duration_ps: duration },
    }
}

/// What the output policy promises of a scenario that validates: every file it names is a
/// plain relative path below the output folder (checked here independently of the policy's
/// own code).
fn check_output_paths(s: &Scenario) {
    let mut s = s.clone();
    if validate(&mut s).is_err() {
        return;
    }
    for (field, path) in s.output.files().expect("validated") {
        let safe = !path.is_empty()
            && !path.starts_with('/')
            && !path.contains('\\')
            && !path.chars().any(char::is_control)
            && path.split('/').all(|part| !part.is_empty() && part != "." && part != ".." && !part.starts_with('.') && part.len() <= 255);
        assert!(safe, "{field} = {path:?} validated but is not a plain path inside the output folder");
    }
}

pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_default()
}

thread_local! {
    static IN_CASE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Silences the default panic report while a case runs (its panic is returned as an outcome);
/// the test's own assertions still report.
pub fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_CASE.with(|c| c.get()) {
            default(info);
        }
    }));
}

/// `f` with panics reported as outcomes, not printed.
fn in_case<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> std::thread::Result<T> {
    IN_CASE.with(|c| c.set(true));
    let result = std::panic::catch_unwind(f);
    IN_CASE.with(|c| c.set(false));
    result
}

/// Whether a refusal names the field that was changed, or one that checks it against it: the
/// same section (`switch.pfc.xoff` refused as `switch.pfc.xon`), a field the duration bounds,
/// or, for the network, any field that names its nodes or sizes buffers by its links (fewer
/// leaves leave a flow's host unknown; faster links need more PFC headroom).
pub fn names_related_field(changed: &str, error: &ScenarioError) -> bool {
    let section = |f: &str| f.split(['.', '[']).next().unwrap_or("").to_string();
    let (changed_section, error_section) = (section(changed), section(&error.field));
    // A rule relating two fields (switch.trim.data_queue at least one packet of nic.mtu)
    // names one of them and the other in its message.
    let mentioned = error.message.split(|c: char| !(c.is_ascii_alphanumeric() || "._-[]".contains(c))).any(|w| w == changed);
    error.field == changed
        || mentioned
        || error_section == changed_section
        || (changed == "duration" && ["workload", "output", "background"].contains(&error_section.as_str()))
        || (changed_section == "topology" && ["workload", "output", "background", "loss", "switch", "routing"].contains(&error_section.as_str()))
}

/// An error is one line, non-empty.
pub fn one_line(e: &ScenarioError) -> bool {
    let text = e.to_string();
    !text.is_empty() && !text.contains('\n') && !text.contains('\r')
}

/// The slowest a run under the documented limits may advance: 1 us of simulated time per
/// second of wall clock. A tiny network below it is ticking in place (a timer of picoseconds),
/// not simulating traffic: 10 Tbps links of 64 B frames, the most packets per simulated
/// microsecond any limit allows, still run a few hundred us per second.
pub const MIN_PROGRESS_PS_PER_SECOND: f64 = 1e6;

pub use crate::util::alloc::{peak_above, reset_peak};

/// Base scenarios, each with the sections whose fields are varied in it: every section runs
/// under a scheme that reads it (a `[recovery.irn]` value is varied where IRN runs).
pub const BASES: &[(&str, &[&str])] = &[
    (RICH, &[""]),
    (POISSON_IRN_DCTCP, &["workload", "recovery.irn", "cc.dctcp"]),
    (INCAST_MELO_HPCC, &["workload", "recovery.melo", "cc.hpcc"]),
    (LONG_GBONE_TIMELY, &["workload", "recovery.gbone", "cc.timely"]),
    (TCP_VEGAS, &["recovery.tcp", "cc.vegas"]),
    (TCP_RENO, &["cc.reno"]),
    (IRN_DCTCP_WINDOW, &["cc.dctcp-window"]),
    (STRIDE, &["recovery.stride", "cc.stride", "nic"]),
    (FAT_TREE, &["topology"]),
    (CLOS, &["topology"]),
    (DRAGONFLY, &["topology", "routing"]),
    (COLLECTIVE, &["workload"]),
    (NDP_TRIM, &["recovery.ndp", "switch", "nic"]),
    (HOMA_AEOLUS, &["recovery.homa", "switch"]),
    (XPASS_AEOLUS, &["recovery.xpass", "switch"]),
    (LEFT_SPRAY, &["recovery.left", "routing", "nic"]),
    (UET_DEGRADED_THREADS, &["recovery.uet", "switch", "run"]),
];

/// UET (RCCC and NSCC) on trimming switches with a degraded port, split over two threads by
/// switch: every `[recovery.uet]` field (its optional ones set), `[[switch.degraded]]` and
/// every `[run]` field have a value to vary.
pub const UET_DEGRADED_THREADS: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "100Gbps"
[nic]
mtu = 4000
[switch]
pfc = { enabled = false }
ecn = { enabled = true, kmin = "20000B", kmax = "50000B", pmax = 1.0, to_hosts = false }
trim = { queue = 0, header = "64B", data_queue = "60000B", victim = "htsim" }
degraded = [{ from = "spine0", to = "leaf1", factor = 0.5 }]
[transport]
recovery = "uet"
cc = "none"
[recovery.uet]
cc = "both"
paths = 8
rto = "100us"
network_rtt = "10us"
oversubscribed_cc = true
[run]
threads = 2
min_hosts_per_thread = 1
partition = "switches"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 3
size = "40KB"
"#;

/// NDP on htsim's per-port queues with return to sender: every trim field and NDP's section.
const NDP_TRIM: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "100Gbps"
[nic]
mtu = 4000
whole_packets = true
[switch]
pfc = { enabled = false }
ecn = { enabled = false }
trim = { queue = 0, header = "64B", data_queue = "60000B", header_queue = "120000B", victim = "htsim", return_to_sender = true }
[routing]
policy = "spray-permutation"
[transport]
recovery = "ndp"
cc = "none"
[recovery.ndp]
rto_initial = "200us"
rto_min = "200us"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 3
size = "40KB"
"#;

/// Homa with Aeolus, its selective drop by ECN codepoint and a port buffer: every Homa field
/// and the codepoint settings.
const HOMA_AEOLUS: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 4
host_link = "10Gbps"
[nic]
colour_codepoint = "ecn"
[switch]
queues = 8
port_buffer = "200KB"
pfc = { enabled = false }
ecn = { enabled = true, kmin = "6000B", kmax = "6000B", pmax = 1.0, drop_not_ect = true }
[transport]
recovery = "homa"
cc = "none"
[recovery.homa]
aeolus = true
rto = "100us"
rtt_bytes = "10KB"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 3
size = "30KB"
"#;

/// ExpressPass with Aeolus on its credit queues and a hard colour threshold.
const XPASS_AEOLUS: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 4
host_link = "10Gbps"
[nic]
mtu = 1460
[switch]
queues = 3
pfc = { enabled = false }
ecn = { enabled = false }
shaped = { queue = 2, buffer = 8, burst = 2 }
wred = [{ colour = 2, threshold = "6000B" }]
[transport]
recovery = "xpass"
cc = "none"
[recovery.xpass]
aeolus = true
rto = "200us"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 3
size = "30KB"
"#;

/// LEFT on sprayed paths of a small leaf-spine: every LEFT field.
const LEFT_SPRAY: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "100Gbps"
[nic]
mtu = 1000
[routing]
policy = "spray-random"
entropy = "per-packet"
[transport]
recovery = "left"
cc = "dcqcn"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h3", size = "100KB" }, { src = "h1", dst = "h2", size = "50KB" }]
"#;

/// The smallest dragonfly (h = 1: 3 groups of 2 routers, 6 hosts) with UGAL over spraying: every
/// dragonfly field and `routing.paths` have a value to vary.
const DRAGONFLY: &str = r#"
name = "bounds"
duration = "100us"
[topology]
kind = "dragonfly"
h = 1
[routing]
policy = "spray-random"
paths = "ugal"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h5", size = "10KB" }]
"#;

/// A strided ring all-reduce, twice with a gap: every collective field has a value to vary.
const COLLECTIVE: &str = r#"
name = "bounds"
duration = "500us"
[topology]
kind = "single-switch"
hosts = 8
[workload]
kind = "collective"
[workload.collective]
op = "all-reduce"
algorithm = "ring"
ranks = 4
size = "40KB"
groups = 2
placement = "strided"
stride = 2
iterations = 2
gap = "1us"
start = "1us"
"#;

/// Every section at once: PFC (dynamic), ECN per link, INT, a colour rule, the shaped queue,
/// flowlets, Gilbert-Elliott loss, a random background source, two flows with a class and a
/// colour, every [output] series, pcap and fct.txt.
const RICH: &str = r#"
name = "bounds"
seed = 7
duration = "200us"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "25Gbps"
fabric_link = "100Gbps"
link_delay = "1us"
[switch]
buffer = "4MB"
queues = 3
int = true
ecn = { kmin = "10KB", kmax = "100KB", pmax = 0.1, per_link = [{ rate = "25Gbps", kmin = "5KB", kmax = "50KB", pmax = 0.2 }] }
pfc = { enabled = true, mode = "dynamic" }
wred = [{ colour = 1, threshold = "20KB" }, { colour = 2, class = 1, min = "5KB", max = "30KB", pmax = 0.5 }]
shaped = { queue = 2, share = 0.05 }
trim = { queue = 0, header = "64B" }
[nic]
clock_offset = "1us"
clock_drift_ppm = 5.0
rx_latency = "10ns"
[transport]
recovery = "gbn"
cc = "dcqcn"
[routing]
policy = "flowlet"
[[loss]]
at = "switch:leaf0"
model = "gilbert-elliott"
p = 0.01
r = 0.5
[[background]]
link = "spine0->leaf1"
profile = "random"
low = "1Gbps"
high = "5Gbps"
interval = "20us"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h3", size = "30KB" }, { src = "h1", dst = "h2", size = "10KB", start = "5us", class = 1, colour = 1 }, { src = "h2", dst = "h0", size = "10KB", after = [0, 1], gap = "2us" }]
[output]
sample_interval = "10us"
queues = ["leaf0->h0"]
cc_flows = [0]
pools = ["h0"]
pcap = { hosts = ["h0"], max_packets = 100 }
fct_txt = true
"#;

const POISSON_IRN_DCTCP: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 4
[transport]
recovery = "irn"
cc = "dctcp"
[workload]
kind = "poisson"
cdf = "websearch_hpcc"
load = 0.3
flows = 20
"#;

const INCAST_MELO_HPCC: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 4
[transport]
recovery = "melo"
cc = "hpcc"
[recovery.melo]
qp_cache = 2
[workload]
kind = "incast"
receiver = "h0"
fan_in = 3
size = "20KB"
rounds = 2
interval = "50us"
"#;

const LONG_GBONE_TIMELY: &str = r#"
name = "bounds"
duration = "100us"
[topology]
kind = "single-switch"
hosts = 3
[transport]
recovery = "gbone"
cc = "timely"
[[loss]]
at = "everywhere"
rate = 0.01
[workload]
kind = "long-flows"
pairs = [["h0", "h1"], ["h2", "h1"]]
"#;

const TCP_VEGAS: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 3
[transport]
recovery = "tcp"
cc = "vegas"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "50KB" }, { src = "h2", dst = "h1", size = "50KB" }]
"#;

const TCP_RENO: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 3
[transport]
recovery = "tcp"
cc = "reno"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "50KB" }, { src = "h2", dst = "h1", size = "50KB" }]
"#;

const IRN_DCTCP_WINDOW: &str = r#"
name = "bounds"
duration = "200us"
[topology]
kind = "single-switch"
hosts = 3
[transport]
recovery = "irn"
cc = "dctcp-window"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "50KB" }, { src = "h2", dst = "h1", size = "50KB" }]
"#;

const STRIDE: &str = r#"
name = "bounds"
duration = "300us"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
[transport]
recovery = "stride"
cc = "stride"
[nic]
clock_offset_spread = "2us"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "100KB" }, { src = "h2", dst = "h1", size = "30KB" }]
"#;

const FAT_TREE: &str = r#"
name = "bounds"
duration = "100us"
[topology]
kind = "fat-tree"
k = 4
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h15", size = "10KB" }]
"#;

const CLOS: &str = r#"
name = "bounds"
duration = "100us"
[topology]
kind = "clos"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h5", size = "10KB" }]
"#;

