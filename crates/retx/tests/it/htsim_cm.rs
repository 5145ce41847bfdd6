//! htsim's connection matrices (`.cm`) run as a workload (`kind = "htsim-cm"`): flows and
//! triggers as htsim reads them, htsim node N as the N-th host of the scenario's topology.

use retx::sim::units::Time;
use retx::RunOutput;
use std::path::PathBuf;

/// A folder of its own per test, holding `x.cm`.
fn write_cm(test: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("retx-htsim-cm-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.cm");
    std::fs::write(&path, text).unwrap();
    path
}

/// `hosts` hosts on one switch at 10 Gbps, running the matrix at `cm`.
fn scenario(cm: &std::path::Path, hosts: u32, duration: &str) -> String {
    format!(
        r#"
name = "cm"
seed = 5
duration = "{duration}"
[topology]
kind = "single-switch"
hosts = {hosts}
host_link = "10Gbps"
link_delay = "1us"
[transport]
recovery = "gbn"
cc = "none"
[workload]
kind = "htsim-cm"
file = {:?}
"#,
        cm.display().to_string()
    )
}

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Every kind of trigger and both ends of a flow. The timed flow written first (htsim id 9)
/// starts last, so the run numbers it 7 and the others one less than their file position:
/// trigger targets and signals must follow that renumbering.
const TRIGGERS: &str = "\
# every kind of trigger
Nodes 4
Connections 8
Triggers 4
3->1 id 9 start 5000000 size 5000
0->1 id 1 start 0 size 100000 send_done_trigger 1 recv_done_trigger 2
1->2 id 2 trigger 1 size 50000 send_done_trigger 3 recv_done_trigger 2
2->3 id 3 trigger 1 size 30000 send_done_trigger 3 prio 2
3->0 id 4 trigger 2 size 20000
0->2 id 5 trigger 3 size 40000 recv_done_trigger 4 addon
1->3 id 6 trigger 2 size 10000
2->0 id 7 trigger 4 size 10000
trigger id 1 oneshot
trigger id 2 multishot
trigger id 3 barrier count 2
trigger id 4 oneshot
";

#[test]
fn triggered_flows_start_exactly_when_their_prerequisites_end() {
    let out = run(&scenario(&write_cm("triggers", TRIGGERS), 4, "10ms"));
    assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
    let f = &out.flows;
    assert_eq!(f.len(), 8);
    // Run flow i is the file's flow with htsim id i + 1; the timed one (id 9) is last.
    let pairs: Vec<(&str, &str)> = f.iter().map(|r| (r.src.as_str(), r.dst.as_str())).collect();
    assert_eq!(pairs, [("h0", "h1"), ("h1", "h2"), ("h2", "h3"), ("h3", "h0"), ("h0", "h2"), ("h1", "h3"), ("h2", "h0"), ("h3", "h1")]);
    assert_eq!(f.iter().map(|r| r.size_bytes).collect::<Vec<_>>(), [100_000, 50_000, 30_000, 20_000, 40_000, 10_000, 10_000, 5_000]);
    assert_eq!((f[0].start, f[7].start), (Time::ZERO, Time::from_us(5)));
    let sent = |i: usize| f[i].finish.unwrap();
    let received = |i: usize| f[i].received.unwrap();
    assert!(received(0) < sent(0), "the two ends differ, so the test tells them apart");
    // Oneshot 1 on flow 1's send done: flows 2 and 3.
    assert_eq!((f[1].start, f[2].start), (sent(0), sent(0)));
    // Multishot 2, signalled by flow 1's and then flow 2's receive done: flow 4, then flow 6.
    assert_eq!(f[3].start, received(0));
    assert_eq!(f[5].start, received(1));
    assert!(received(1) > received(0));
    // Barrier 3 of 2, on flows 2 and 3 done sending: flow 5 at the later.
    assert_eq!(f[4].start, sent(1).max(sent(2)));
    assert_ne!(sent(1), sent(2));
    // Oneshot 4 on flow 5's receive done: flow 7 (the third step of the chain 1, 2, 5, 7).
    assert_eq!(f[6].start, received(4));
    assert_eq!(f.iter().map(|r| r.delivered_bytes).sum::<u64>(), 265_000);
}

/// What htsim's `sim/datacenter/connection_matrices/gen_allreduce.py ar4.cm 4 4 4 100000 1 1`
/// writes: a ring all-reduce of 4 nodes, each rank's 7 steps chained by one-shot triggers
/// (2 x groupsize - 1 flows and 2 x groupsize - 2 triggers per rank). Written out here,
/// checked against the script's output.
const ALLREDUCE_4: &str = "Nodes 4
Connections 28
Triggers 24
0->1 id 1 start 0 size 100000 send_done_trigger 1
1->2 id 2 trigger 1 size 100000 send_done_trigger 2
2->3 id 3 trigger 2 size 100000 send_done_trigger 3
3->0 id 4 trigger 3 size 100000 send_done_trigger 4
0->1 id 5 trigger 4 size 100000 send_done_trigger 5
1->2 id 6 trigger 5 size 100000 send_done_trigger 6
2->3 id 7 trigger 6 size 100000
1->2 id 8 start 0 size 100000 send_done_trigger 7
2->3 id 9 trigger 7 size 100000 send_done_trigger 8
3->0 id 10 trigger 8 size 100000 send_done_trigger 9
0->1 id 11 trigger 9 size 100000 send_done_trigger 10
1->2 id 12 trigger 10 size 100000 send_done_trigger 11
2->3 id 13 trigger 11 size 100000 send_done_trigger 12
3->0 id 14 trigger 12 size 100000
2->3 id 15 start 0 size 100000 send_done_trigger 13
3->0 id 16 trigger 13 size 100000 send_done_trigger 14
0->1 id 17 trigger 14 size 100000 send_done_trigger 15
1->2 id 18 trigger 15 size 100000 send_done_trigger 16
2->3 id 19 trigger 16 size 100000 send_done_trigger 17
3->0 id 20 trigger 17 size 100000 send_done_trigger 18
0->1 id 21 trigger 18 size 100000
3->0 id 22 start 0 size 100000 send_done_trigger 19
0->1 id 23 trigger 19 size 100000 send_done_trigger 20
1->2 id 24 trigger 20 size 100000 send_done_trigger 21
2->3 id 25 trigger 21 size 100000 send_done_trigger 22
3->0 id 26 trigger 22 size 100000 send_done_trigger 23
0->1 id 27 trigger 23 size 100000 send_done_trigger 24
1->2 id 28 trigger 24 size 100000
trigger id 1 oneshot
trigger id 2 oneshot
trigger id 3 oneshot
trigger id 4 oneshot
trigger id 5 oneshot
trigger id 6 oneshot
trigger id 7 oneshot
trigger id 8 oneshot
trigger id 9 oneshot
trigger id 10 oneshot
trigger id 11 oneshot
trigger id 12 oneshot
trigger id 13 oneshot
trigger id 14 oneshot
trigger id 15 oneshot
trigger id 16 oneshot
trigger id 17 oneshot
trigger id 18 oneshot
trigger id 19 oneshot
trigger id 20 oneshot
trigger id 21 oneshot
trigger id 22 oneshot
trigger id 23 oneshot
trigger id 24 oneshot
";

#[test]
fn htsim_s_ring_allreduce_generator_output_runs_to_completion() {
    let out = run(&scenario(&write_cm("allreduce", ALLREDUCE_4), 4, "100ms"));
    assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
    let f = &out.flows;
    assert_eq!(f.len(), 28);
    assert!(f.iter().all(|r| r.size_bytes == 100_000 && r.delivered_bytes == 100_000));
    // All start at 0 or by a trigger (also 0 for the numbering): run flow i is htsim id i + 1.
    // Each rank's chain: step 1 at 0, every later step when the step before finished sending.
    for rank in 0..4 {
        let chain = &f[7 * rank..7 * rank + 7];
        assert_eq!(chain[0].start, Time::ZERO);
        assert_eq!(chain[0].src, format!("h{rank}"));
        for s in 1..7 {
            assert_eq!(chain[s].start, chain[s - 1].finish.unwrap(), "rank {rank} step {s}");
            // Around the ring: each step sends from where the last one sent to.
            assert_eq!(chain[s].src, chain[s - 1].dst, "rank {rank} step {s}");
        }
    }
}

#[test]
fn errors_name_the_file_and_line() {
    let refuse = |text: &str, hosts: u32| {
        let path = write_cm("errors", text);
        let e = retx::run_toml(&scenario(&path, hosts, "1ms")).map(|_| ()).unwrap_err();
        (e.to_string(), path.display().to_string())
    };
    let (e, path) = refuse("Nodes 8\nConnections 1\n0->5 start 0 size 10\n", 4);
    assert_eq!(e, format!("workload.file: {path}: line 3: node 5, but the topology has 4 hosts (nodes 0..=3)"));
    let (e, path) = refuse("Nodes 4\nConnections 2\n0->1 start 0 size 10\n", 4);
    assert_eq!(e, format!("workload.file: {path}: line 2: Connections 2, but the file has 1 flows"));
    let (e, path) = refuse("Nodes 4\nConnections 2\nTriggers 2\n0->1 trigger 1 size 1 send_done_trigger 2\n1->2 trigger 2 size 1 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n", 4);
    assert_eq!(e, format!("workload.file: {path}: line 4: flows wait for each other in a cycle (lines 4 -> 5 -> 4), so none would ever start"));
    let missing = retx::run_toml(&scenario(std::path::Path::new("/no/such/x.cm"), 4, "1ms")).map(|_| ()).unwrap_err().to_string();
    assert_eq!(missing, "workload.file: cannot read /no/such/x.cm: no such file");
    let text = scenario(std::path::Path::new("x.cm"), 4, "1ms").replace("file = \"x.cm\"\n", "");
    assert_eq!(retx::run_toml(&text).map(|_| ()).unwrap_err().to_string(), "workload.file: htsim-cm needs file = \"traffic.cm\"");
    let text = scenario(std::path::Path::new("x.cm"), 4, "1ms") + "load = 0.5\n";
    assert_eq!(retx::run_toml(&text).map(|_| ()).unwrap_err().to_string(), "workload.load: is not used by kind = \"htsim-cm\"");
}

/// The permutation htsim's NDP reference ran (`/work/shared/peers/htsim/`, beside the
/// repository; skipped when absent): 432 flows of 2 MB, all at 0, here on one switch.
#[test]
fn the_peers_permutation_runs_with_its_flows_in_file_order() {
    let path = PathBuf::from("/work/shared/peers/htsim/perm_432_2MB.cm");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let out = run(&scenario(&path, 432, "20ms").replace("10Gbps", "100Gbps"));
    assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
    assert_eq!(out.flows.len(), 432);
    // Flow i of the run is the file's id i + 1 (all start at 0: file order).
    for (r, line) in out.flows.iter().zip(text.lines().filter(|l| l.contains("->"))) {
        let (src, dst) = line.split_whitespace().next().unwrap().split_once("->").unwrap();
        assert_eq!((r.src.as_str(), r.dst.as_str(), r.size_bytes), (format!("h{src}").as_str(), format!("h{dst}").as_str(), 2_000_000));
    }
}
