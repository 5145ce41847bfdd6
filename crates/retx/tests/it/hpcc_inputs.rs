//! The HPCC ns-3 simulator's own input files run as they are (examples/hpcc/).

use retx::{Scenario, Simulation};
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run(text: &str) -> Result<retx::RunOutput, retx::ScenarioError> {
    let mut s = Scenario::from_toml(text)?;
    s.base_dir = examples();
    Ok(Simulation::new(s)?.run(&mut |_, _| true).expect("no abort"))
}

const FAT: &str = r#"
name = "hpcc-fat"
duration = "2.2s"
[topology]
kind = "hpcc-file"
file = "hpcc/fat.txt"
[nic]
mtu = 1000
[switch]
pfc = { enabled = true }
[workload]
kind = "hpcc-flows"
file = "hpcc/flow_ws_320_first200.txt"
"#;

#[test]
fn the_hpcc_fat_tree_and_its_web_search_flows_run_to_completion() {
    let out = run(FAT).unwrap();
    // 320 hosts and 56 switches, named by their HPCC node ids.
    assert_eq!(out.host_names.len(), 376);
    assert_eq!(out.host_names[0], "h0");
    assert_eq!(out.host_names[320], "sw320");
    assert_eq!(out.flows.len(), 200);
    let first = &out.flows[0];
    // Line 2 of the flow file: "205 187 3 100 1437685 2.000001074".
    assert_eq!((first.src.as_str(), first.dst.as_str(), first.size_bytes), ("h205", "h187", 1_437_685));
    assert_eq!(first.start.ps(), 2_000_001_074_000);
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    assert_eq!(out.counters.bad_deliveries, 0);
    // At 30 % load over a lossless fabric most flows run near their ideal FCT: slowdown >= 1
    // (the ideal is a lower bound) and a median within 10 % of it.
    let mut slow: Vec<f64> = out.flows.iter().map(|f| f.slowdown().unwrap()).collect();
    slow.sort_by(f64::total_cmp);
    assert!(slow[0] >= 1.0 - 1e-9, "{}", slow[0]);
    assert!(slow[slow.len() / 2] < 1.1, "median {}", slow[slow.len() / 2]);
}

#[test]
fn a_link_error_rate_in_the_file_drops_packets_both_ways() {
    let dir = std::env::temp_dir().join(format!("retx-hpcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two hosts on one switch; the link of host 1 loses 5 % of everything.
    std::fs::write(dir.join("t.txt"), "3 1 2\n2\n0 2 40Gbps 1000ns 0\n1 2 40Gbps 1000ns 0.05\n").unwrap();
    std::fs::write(dir.join("f.txt"), "1\n0 1 3 100 200000 0.0\n").unwrap();
    let text = r#"
name = "lossy"
duration = "50ms"
[topology]
kind = "hpcc-file"
file = "t.txt"
[workload]
kind = "hpcc-flows"
file = "f.txt"
"#;
    let mut s = Scenario::from_toml(text).unwrap();
    s.base_dir = dir.clone();
    let out = Simulation::new(s).unwrap().run(&mut |_, _| true).unwrap();
    assert!(out.flows[0].finish.is_some());
    assert!(out.counters.drops_loss > 0 && out.flows[0].retx_bytes > 0);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_files_are_scenario_errors_naming_the_field() {
    let missing = run(&FAT.replace("hpcc/fat.txt", "hpcc/nope.txt")).err().expect("missing file");
    assert_eq!(missing.field, "topology.file");
    assert!(missing.message.contains("cannot read"), "{missing}");
    let not_used = run(&FAT.replace("file = \"hpcc/fat.txt\"", "file = \"hpcc/fat.txt\"\nhosts = 4")).err().expect("hosts with a file");
    assert_eq!(not_used.field, "topology.hosts");
    // Flow file naming a switch id (320) as a source.
    let dir = std::env::temp_dir().join(format!("retx-hpcc-bad-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("hpcc")).unwrap();
    std::fs::copy(examples().join("hpcc/fat.txt"), dir.join("hpcc/fat.txt")).unwrap();
    std::fs::write(dir.join("hpcc/flow_ws_320_first200.txt"), "1\n320 1 3 100 1000 2.0\n").unwrap();
    let mut s = Scenario::from_toml(FAT).unwrap();
    s.base_dir = dir.clone();
    let e = Simulation::new(s).err().expect("a switch cannot send");
    assert!(e.field.starts_with("workload.file"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
