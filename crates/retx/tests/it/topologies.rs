//! The three-tier builders: `fat-tree`, `clos` and the `hpcc-320` and `stride-256` presets,
//! checked against the HPCC ns-3 files they reproduce, for their counts, oversubscription and
//! validation errors.

use retx::config::topology::clos;
use retx::net::topology::{NodeKind, Topology};
use retx::Scenario;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;

fn hpcc_file(name: &str) -> Topology {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/hpcc").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    retx::net::hpcc::parse_topology(&text).expect("a valid file")
}

/// A scenario with this `[topology]` body and one flow h0 -> h1.
fn scenario(topology: &str) -> Scenario {
    let text = format!(
        "name = \"t\"\nduration = \"1ms\"\n[topology]\n{topology}\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
    );
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The topology the run builds, and its section with defaults filled.
fn built(topology: &str) -> (Topology, retx::config::TopologyCfg) {
    let mut s = scenario(topology);
    let topo = retx::config::validate(&mut s).unwrap_or_else(|e| panic!("{e}\n{topology}"));
    (topo, s.topology)
}

fn error(topology: &str) -> retx::ScenarioError {
    retx::config::validate(&mut scenario(topology)).err().unwrap_or_else(|| panic!("should be refused:\n{topology}"))
}

/// (a, b, rate bps, delay ps, loss) of every link, in order.
fn links(t: &Topology) -> Vec<(usize, usize, u64, u64, u64)> {
    t.links.iter().map(|l| (l.a, l.b, l.rate.bps(), l.delay.ps(), l.loss.to_bits())).collect()
}

fn kinds(t: &Topology) -> Vec<NodeKind> {
    t.nodes.iter().map(|n| n.kind).collect()
}

fn neighbours(t: &Topology) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    adj
}

/// Hops and number of shortest paths from host `src` to host `dst`, never through a host.
fn shortest_paths(t: &Topology, adj: &[Vec<usize>], src: usize, dst: usize) -> (u32, u64) {
    let mut dist = vec![u32::MAX; adj.len()];
    let mut count = vec![0u64; adj.len()];
    dist[src] = 0;
    count[src] = 1;
    let mut queue = VecDeque::from([src]);
    while let Some(n) = queue.pop_front() {
        if n != src && t.nodes[n].kind == NodeKind::Host {
            continue;
        }
        for &m in &adj[n] {
            if dist[m] == u32::MAX {
                dist[m] = dist[n] + 1;
                queue.push_back(m);
            }
            if dist[m] == dist[n] + 1 {
                count[m] += count[n];
            }
        }
    }
    (dist[dst], count[dst])
}

/// Degrees of the nodes with ids in `range`, as a set.
fn degrees(adj: &[Vec<usize>], range: std::ops::Range<usize>) -> HashSet<usize> {
    range.map(|n| adj[n].len()).collect()
}

/// `kind = "hpcc-320"` is HPCC ns-3's `mix/fat.txt` link for link: the same node ids (hosts
/// 0..319, ToRs 320..339, aggregation 340..359, cores 360..375), the same 480 links in the same
/// order with the same rates (100/400 Gbps) and delays (1 us).
#[test]
fn hpcc_320_is_the_hpcc_fat_txt_link_for_link() {
    let file = hpcc_file("fat.txt");
    let (preset, cfg) = built("kind = \"hpcc-320\"");
    assert_eq!(kinds(&preset), kinds(&file));
    assert_eq!(preset.nodes.len(), 376);
    assert_eq!(preset.links.len(), 480);
    assert_eq!(links(&preset), links(&file));
    let c = clos(&cfg).expect("a Clos");
    assert_eq!((c.hosts(), c.tors(), c.aggs(), c.cores), (320, 20, 20, 16));
    // 16 x 100 Gbps under a ToR, 4 x 400 Gbps up: no oversubscription.
    assert_eq!(c.oversubscription(), 1.0);
    assert_eq!(c.agg_oversubscription(), 1.0);
}

/// `kind = "fat-tree"`, k = 12, is the k = 12 file "wired like htsim's": the same counts (432
/// hosts, 72 ToRs, 72 aggregation, 36 cores), the same node ids for hosts, ToRs and
/// aggregation switches, and the same 1,296 links once cores are renumbered. The file numbers
/// the cores attached to aggregation position i as i, i + 6, i + 12, ... (576 + i + 6j);
/// htsim's `FatTreeTopology` and this builder number them i·6 .. i·6 + 5: the same graph with
/// the core index's two digits (base 6) swapped.
#[test]
fn fat_tree_k12_is_the_htsim_k12_file() {
    let file = hpcc_file("fat_k12_htsim.txt");
    let (tree, cfg) = built("kind = \"fat-tree\"\nk = 12\nhost_link = \"100Gbps\"\nlink_delay = \"1us\"");
    assert_eq!(kinds(&tree), kinds(&file));
    assert_eq!(tree.nodes.len(), 612);
    assert_eq!(tree.links.len(), 1296);
    let c = clos(&cfg).expect("a Clos");
    assert_eq!((c.hosts(), c.tors(), c.aggs(), c.cores), (432, 72, 72, 36));
    let core0 = 432 + 72 + 72;
    let renumber = |n: usize| if n >= core0 { core0 + (n - core0) % 6 * 6 + (n - core0) / 6 } else { n };
    let ours: Vec<_> = links(&tree).into_iter().map(|(a, b, r, d, l)| (renumber(a), renumber(b), r, d, l)).collect();
    let mut theirs = links(&file);
    let mut ours_sorted = ours.clone();
    ours_sorted.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours_sorted, theirs);
    // Invariants of the graph itself, whatever the numbering: degree per tier and, for a host
    // pair of each kind, the hop count and number of shortest paths (1 under one ToR, k/2 = 6
    // within a pod, (k/2)² = 36 across pods).
    for t in [&tree, &file] {
        let adj = neighbours(t);
        assert_eq!(degrees(&adj, 0..432), HashSet::from([1]));
        assert_eq!(degrees(&adj, 432..612), HashSet::from([12]));
        for (dst, want) in [(5, (2, 1)), (6, (4, 6)), (35, (4, 6)), (36, (6, 36)), (431, (6, 36))] {
            assert_eq!(shortest_paths(t, &adj, 0, dst), want, "h0 -> h{dst}");
        }
    }
    // Every host pair, in the file and in the tree: the same (hops, paths) everywhere.
    let (adj_t, adj_f) = (neighbours(&tree), neighbours(&file));
    let mut seen: HashMap<(u32, u64), u64> = HashMap::new();
    for src in (0..432).step_by(37) {
        for dst in (0..432).filter(|&d| d != src) {
            let p = shortest_paths(&tree, &adj_t, src, dst);
            assert_eq!(p, shortest_paths(&file, &adj_f, src, dst), "h{src} -> h{dst}");
            *seen.entry(p).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

/// A Clos with per-tier rates and delays: 2 pods of 2 ToRs and 2 aggregation switches, 4 cores
/// (2 per aggregation switch), 8 hosts per ToR. Link counts per tier, the rate and delay of
/// each tier, the striped core wiring, and oversubscription (8 x 100 / 2 x 200 = 2 at the
/// ToRs; 2 x 200 / 2 x 400 = 0.5 at the aggregation tier).
#[test]
fn clos_wires_each_tier_with_its_rate_and_delay() {
    let (t, cfg) = built(
        "kind = \"clos\"\npods = 2\ntors_per_pod = 2\naggs_per_pod = 2\ncores = 4\nhosts_per_tor = 8\nhost_link = \"100Gbps\"\ntor_agg_link = \"200Gbps\"\nagg_core_link = \"400Gbps\"\nlink_delay = \"1us\"\nagg_core_delay = \"3us\"",
    );
    let c = clos(&cfg).expect("a Clos");
    assert_eq!(c.oversubscription(), 2.0);
    assert_eq!(c.agg_oversubscription(), 0.5);
    assert_eq!(t.hosts().count(), 32);
    assert_eq!(t.nodes.len(), 32 + 4 + 4 + 4);
    let tier = |rate_g: u64| t.links.iter().filter(|l| l.rate.bps() == rate_g * 1_000_000_000).collect::<Vec<_>>();
    let (host, tor_agg, agg_core) = (tier(100), tier(200), tier(400));
    assert_eq!((host.len(), tor_agg.len(), agg_core.len()), (32, 8, 8));
    assert!(host.iter().chain(&tor_agg).all(|l| l.delay.ps() == 1_000_000));
    assert!(agg_core.iter().all(|l| l.delay.ps() == 3_000_000));
    // agg0 and agg2 (position 0 of pods 0 and 1) reach core0 and core1; agg1 and agg3 core2
    // and core3.
    let name = |n: usize| t.nodes[n].name.as_str();
    let mut up: Vec<(&str, &str)> = agg_core.iter().map(|l| (name(l.a), name(l.b))).collect();
    up.sort_unstable();
    assert_eq!(
        up,
        [("agg0", "core0"), ("agg0", "core1"), ("agg1", "core2"), ("agg1", "core3"), ("agg2", "core0"), ("agg2", "core1"), ("agg3", "core2"), ("agg3", "core3")]
    );
    // A fabric_link sets both fabric tiers; a fat-tree of equal rates is not oversubscribed.
    let (_, cfg) = built("kind = \"clos\"\nhost_link = \"25Gbps\"\nfabric_link = \"50Gbps\"");
    let c = clos(&cfg).unwrap();
    assert_eq!((c.tor_agg_link.bps(), c.agg_core_link.bps()), (50_000_000_000, 50_000_000_000));
    assert_eq!(c.oversubscription(), 0.5);
    let (_, cfg) = built("kind = \"fat-tree\"\nk = 8");
    assert_eq!(clos(&cfg).unwrap().oversubscription(), 1.0);
}

/// `kind = "stride-256"`: 256 hosts on the k = 8 fat-tree fabric with 8 hosts per ToR, 10 Gbps
/// and 1 us everywhere, 2:1 at the ToRs; any value may be overridden.
#[test]
fn stride_256_has_256_hosts_and_takes_overrides() {
    let (t, cfg) = built("kind = \"stride-256\"");
    assert_eq!(t.hosts().count(), 256);
    assert_eq!(t.nodes.len(), 256 + 32 + 32 + 16);
    assert!(t.links.iter().all(|l| l.rate.bps() == 10_000_000_000 && l.delay.ps() == 1_000_000));
    assert_eq!(clos(&cfg).unwrap().oversubscription(), 2.0);
    let (t, cfg) = built("kind = \"stride-256\"\nfabric_link = \"20Gbps\"\nlink_delay = \"5us\"");
    assert_eq!(clos(&cfg).unwrap().oversubscription(), 1.0);
    assert!(t.links.iter().all(|l| l.delay.ps() == 5_000_000));
}

/// Counts that cannot be wired and fields a kind does not use are refused, naming the field
/// and what is allowed.
#[test]
fn three_tier_fields_are_validated() {
    let cases = [
        ("kind = \"fat-tree\"", "topology.k", "needs k = 4"),
        ("kind = \"fat-tree\"\nk = 5", "topology.k", "5 is not allowed (an even number in 2..=64)"),
        ("kind = \"fat-tree\"\nk = 66", "topology.k", "an even number in 2..=64"),
        ("kind = \"clos\"\naggs_per_pod = 4\ncores = 6", "topology.cores", "allowed: a multiple of 4: 4, 8, 12"),
        ("kind = \"clos\"\npods = 0", "topology.pods", "0 is out of range (allowed 1..=1000)"),
        ("kind = \"clos\"\npods = 1\ntors_per_pod = 1\nhosts_per_tor = 1", "topology.hosts_per_tor", "1 hosts"),
        ("kind = \"fat-tree\"\nk = 4\nspines = 2", "topology.spines", "is not used by kind = \"fat-tree\" (its fields: host_link, fabric_link, link_delay, k,"),
        ("kind = \"clos\"\nk = 4", "topology.k", "is not used by kind = \"clos\""),
        ("kind = \"hpcc-320\"\nhosts = 4", "topology.hosts", "is not used by kind = \"hpcc-320\""),
        ("kind = \"leaf-spine\"\ncores = 4", "topology.cores", "is not used by kind = \"leaf-spine\""),
        ("kind = \"single-switch\"\nfabric_link = \"100Gbps\"", "topology.fabric_link", "its fields: hosts, host_link, link_delay"),
        ("kind = \"clos\"\ntor_agg_link = \"0.5Mbps\"", "topology.tor_agg_link", "too slow"),
    ];
    for (body, field, msg) in cases {
        let e = error(body);
        assert_eq!(e.field, field, "{body}: {e}");
        assert!(e.message.contains(msg), "{body}: {e}");
    }
}

/// The HPCC flow file runs on the preset as on the file it reproduces: node ids are the same.
#[test]
fn hpcc_flows_run_on_the_hpcc_320_preset() {
    let text = r#"
name = "hpcc-320"
duration = "2.01s"
[topology]
kind = "hpcc-320"
[nic]
mtu = 1000
[switch]
pfc = { enabled = true }
[workload]
kind = "hpcc-flows"
file = "hpcc/flow_ws_320_first200.txt"
"#;
    let mut s = Scenario::from_toml(text).unwrap();
    s.base_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let out = retx::Simulation::new(s).unwrap().run(&mut |_, _| true).expect("no abort");
    assert_eq!(out.flows.len(), 200);
    assert_eq!((out.flows[0].src.as_str(), out.flows[0].dst.as_str()), ("h205", "h187"));
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    assert_eq!(out.counters.bad_deliveries, 0);
}
