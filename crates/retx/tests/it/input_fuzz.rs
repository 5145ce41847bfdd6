//! Every input reader against hostile text: the TOML scenario parser and validator, the HPCC
//! ns-3 topology, flow and config readers, htsim's connection-matrix reader and the CDF reader
//! take arbitrary strings, and valid files with one token or line replaced by arbitrary text,
//! without panicking; what they refuse comes back as one line that names the field (or the
//! file's line). Case counts keep the whole
//! file to a few seconds, so it runs in every `make test`.

use proptest::prelude::*;
use retx::config::{hpcc_config, validate, Scenario};
use retx::net::hpcc::{parse_flows, parse_topology};
use retx::sim::rng::{stream, Stream};
use retx::transport::FlowSpec;
use retx::workload::cdf::{FlowSizeCdf, Interpolation};
use retx::workload::htsim_cm;
use std::path::{Path, PathBuf};

const SCENARIO: &str = r#"name = "fuzz"
seed = 3
duration = "1ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
link_delay = "1us"
[switch]
buffer = "1MB"
pfc = { enabled = true, xoff = "64KB", xon = "32KB" }
[transport]
recovery = "irn"
cc = "dcqcn"
[recovery.irn]
rto_low = "100us"
rto_high = "320us"
[cc.dcqcn]
rate_ai = "40Mbps"
min_rate = "100Mbps"
[[loss]]
at = "everywhere"
rate = 0.01
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h3", size = "20KB", start = "0us" }]
[output]
sample_interval = "10us"
"#;

const TOPOLOGY: &str = "5 1 4\n4\n0 4 100Gbps 1000ns 0\n1 4 100Gbps 1000ns 0\n2 4 40Gbps 1us 0.01\n3 4 100Gbps 1000ns 0\n";
const FLOWS: &str = "2\n0 1 3 100 10000 0.000001\n2 3 3 100 5000 0.00002\n";
const CONFIG: &str = "TOPOLOGY_FILE topology.txt\nFLOW_FILE flows.txt\nCC_MODE 1\nKMAX_MAP 1 100000000000 400\n\
KMIN_MAP 1 100000000000 100\nPMAX_MAP 1 100000000000 0.2\nEWMA_GAIN 0.00390625\nRP_TIMER 300\nRATE_AI 20Mb/s\n\
RATE_HAI 200Mb/s\nL2_ACK_INTERVAL 1\nBUFFER_SIZE 16\nSIMULATOR_STOP_TIME 0.01\n";
const CDF: &str = "# size cdf\n100 0\n1000 50\n10000 90\n100000 100\n";
const CM: &str = "Nodes 4\nConnections 4\nTriggers 3\n0->1 id 1 start 0 size 1000 send_done_trigger 1 recv_done_trigger 2\n\
1->2 id 2 trigger 1 size 2000 send_done_trigger 3\n2->3 id 3 trigger 2 size 3000 send_done_trigger 3 prio 2\n3->0 id 4 trigger 3 size 4000 addon\n\
trigger id 1 oneshot\ntrigger id 2 multishot\ntrigger id 3 barrier count 2\n";

/// Text that stresses parsers: numbers at the edges of every integer type, units, separators.
fn nasty_token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("9223372036854775808".to_string()),
        Just("4294967296".to_string()),
        Just("1e308".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("\"0bps\"".to_string()),
        Just("\"1ps\"".to_string()),
        Just("\"18446744073709551615B\"".to_string()),
        Just("\"99999999s\"".to_string()),
        Just("\"../../x\"".to_string()),
        Just("[\"h0\", \"h1\", \"h2\"]".to_string()),
        Just("\u{feff}".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        "[ -~]{0,12}",
        ".{0,8}",
    ]
}

/// `text` with the token `at` (whitespace- or `=`-separated, modulo the count) replaced.
fn replace_token(text: &str, at: usize, with: &str) -> String {
    let spans: Vec<(usize, usize)> = {
        let mut v = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            let sep = c.is_whitespace() || c == '=';
            match (sep, start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    v.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            v.push((s, text.len()));
        }
        v
    };
    let (a, b) = spans[at % spans.len()];
    format!("{}{}{}", &text[..a], with, &text[b..])
}

/// `text` with line `at` (modulo the count) replaced, or removed if `with` is None.
fn replace_line(text: &str, at: usize, with: Option<&str>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let at = at % lines.len();
    lines.iter().enumerate().filter_map(|(i, l)| if i == at { with } else { Some(*l) }).collect::<Vec<_>>().join("\n") + "\n"
}

fn one_line(message: &str) {
    assert!(!message.is_empty() && !message.contains('\n'), "not one line: {message:?}");
}

/// Parses and validates a scenario; a refusal must name a field unless the text is not TOML.
fn check_scenario(text: &str, base_dir: &Path) {
    let parsed = Scenario::from_toml(text);
    let refused = match parsed {
        Ok(mut s) => {
            s.base_dir = base_dir.to_path_buf();
            match validate(&mut s) {
                Ok(topology) => {
                    // Small valid networks are built too: building sizes windows and bitmaps
                    // from every path, where a disconnected network used to panic.
                    if topology.nodes.len() <= 64 {
                        if let Err(e) = retx::Simulation::new(s) {
                            panic!("validated, then refused at build: {e}");
                        }
                    }
                    return;
                }
                Err(e) => e,
            }
        }
        Err(e) => e,
    };
    one_line(&refused.to_string());
    let not_toml = toml::from_str::<toml::Value>(retx::sim::input::strip_bom(text)).is_err();
    assert!(not_toml || !refused.field.is_empty(), "no field in {refused:?} for\n{text}");
}

/// A folder holding the HPCC files a config names, made once per process.
fn hpcc_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("retx-input-fuzz-{}", std::process::id()));
    if !dir.join("flows.txt").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("topology.txt"), TOPOLOGY).unwrap();
        std::fs::write(dir.join("flows.txt"), FLOWS).unwrap();
    }
    dir
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn scenario_arbitrary_text(text in ".{0,200}") {
        check_scenario(&text, Path::new("."));
    }

    #[test]
    fn scenario_one_token_replaced(at in any::<usize>(), with in nasty_token()) {
        check_scenario(&replace_token(SCENARIO, at, &with), Path::new("."));
    }

    #[test]
    fn scenario_one_line_replaced(at in any::<usize>(), with in proptest::option::of("[ -~]{0,30}")) {
        check_scenario(&replace_line(SCENARIO, at, with.as_deref()), Path::new("."));
    }

    #[test]
    fn topology_file(text in prop_oneof![
        ".{0,120}",
        (any::<usize>(), nasty_token()).prop_map(|(at, with)| replace_token(TOPOLOGY, at, &with)),
        (any::<usize>(), proptest::option::of("[ -~]{0,30}")).prop_map(|(at, with)| replace_line(TOPOLOGY, at, with.as_deref())),
    ]) {
        match parse_topology(&text) {
            Ok(topo) => {
                // What validation asks of a parsed network must not panic either.
                let _ = (topo.unreachable_pair(), topo.routing_entries());
                prop_assert!(topo.links.iter().all(|l| l.rate >= retx::net::topology::MIN_LINK_RATE && l.delay <= retx::net::topology::MAX_LINK_DELAY));
            }
            Err(e) => one_line(&e),
        }
    }

    #[test]
    fn flow_file(text in prop_oneof![
        ".{0,120}",
        (any::<usize>(), nasty_token()).prop_map(|(at, with)| replace_token(FLOWS, at, &with)),
        (any::<usize>(), proptest::option::of("[ -~]{0,30}")).prop_map(|(at, with)| replace_line(FLOWS, at, with.as_deref())),
    ]) {
        match parse_flows(&text) {
            Ok(flows) => prop_assert!(flows.iter().all(|f| f.size >= 1 && f.size <= FlowSpec::MAX_SIZE)),
            Err(e) => one_line(&e),
        }
    }

    #[test]
    fn hpcc_config_file(text in prop_oneof![
        ".{0,120}",
        (any::<usize>(), nasty_token()).prop_map(|(at, with)| replace_token(CONFIG, at, &with)),
        (any::<usize>(), proptest::option::of("[ -~]{0,30}")).prop_map(|(at, with)| replace_line(CONFIG, at, with.as_deref())),
    ]) {
        let dir = hpcc_dir();
        match hpcc_config::parse(&text, &dir, "fuzz") {
            Ok(mut s) => {
                if let Err(e) = validate(&mut s) {
                    one_line(&e.to_string());
                    prop_assert!(!e.field.is_empty(), "no field in {:?}", e);
                }
            }
            Err(e) => {
                one_line(&e.to_string());
                prop_assert!(!e.field.is_empty(), "no key in {:?}", e);
            }
        }
    }

    #[test]
    fn htsim_connection_matrix(text in prop_oneof![
        ".{0,120}",
        (any::<usize>(), nasty_token()).prop_map(|(at, with)| replace_token(CM, at, &with)),
        (any::<usize>(), proptest::option::of("[ -~]{0,30}")).prop_map(|(at, with)| replace_line(CM, at, with.as_deref())),
    ], hosts in 0usize..6) {
        match htsim_cm::parse(&text) {
            Ok(m) => {
                prop_assert!(m.flows.iter().all(|f| f.size >= 1 && f.size <= FlowSpec::MAX_SIZE && f.src < m.nodes && f.dst < m.nodes));
                // What the workload asks of a parsed matrix must not panic either.
                if let Err(e) = m.check(hosts) {
                    one_line(&e);
                    prop_assert!(e.starts_with("line "), "{}", e);
                }
            }
            Err(e) => {
                one_line(&e);
                prop_assert!(e.starts_with("line "), "{}", e);
            }
        }
    }

    #[test]
    fn cdf_file(text in prop_oneof![
        ".{0,120}",
        (any::<usize>(), nasty_token()).prop_map(|(at, with)| replace_token(CDF, at, &with)),
        (any::<usize>(), proptest::option::of("[ -~]{0,30}")).prop_map(|(at, with)| replace_line(CDF, at, with.as_deref())),
    ], seed in any::<u64>()) {
        for interpolation in [Interpolation::Linear, Interpolation::Step, Interpolation::LinearCeil] {
            match FlowSizeCdf::parse(&text, interpolation) {
                Ok(cdf) => {
                    prop_assert!(cdf.mean().is_finite());
                    let mut rng = stream(seed, Stream::Workload, 0);
                    for _ in 0..20 {
                        let size = cdf.sample(&mut rng);
                        prop_assert!((1..=FlowSpec::MAX_SIZE).contains(&size), "size {}", size);
                    }
                }
                Err(e) => one_line(&e),
            }
        }
    }
}
