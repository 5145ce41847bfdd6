//! The dragonfly (`kind = "dragonfly"`, `"left-dragonfly"`) and its routing (`[routing] paths =
//! "minimal" | "valiant" | "ugal"`): the wiring, the paths the tables and the detours give, how
//! Valiant spreads over intermediate groups, UGAL's choice by queue depth x hops, runs end to
//! end, and the settings refused naming their field.

use crate::util::nets::{Flow, Net};
use retx::config::topology::dragonfly;
use retx::net::packet::NO_VIA;
use retx::net::routing::{Paths, Policy, Router, Routes};
use retx::net::topology::{NodeKind, Topology, NO_GROUP};
use retx::sim::rng::{stream, Rng, Stream};
use retx::sim::units::Time;
use retx::{RunOutput, Scenario};
use std::collections::{BTreeMap, VecDeque};

/// A scenario with this `[topology]` body and one flow h0 -> h1.
fn scenario(topology: &str) -> Scenario {
    let fields: Vec<(&str, String)> = topology.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.trim(), v.trim().to_string())).collect();
    let text = Net::custom(&fields).named("t", "1ms").transport("gbn", "dcqcn").with_flows(&[Flow::new(0, 1, "1KB", 0)]);
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The topology the run builds, and its section with defaults filled.
fn built(topology: &str) -> (Topology, retx::config::TopologyCfg) {
    let mut s = scenario(topology);
    let topo = retx::config::validate(&mut s).unwrap_or_else(|e| panic!("{e}\n{topology}"));
    (topo, s.topology)
}

fn error(text: &str) -> retx::ScenarioError {
    let mut s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    retx::config::validate(&mut s).err().unwrap_or_else(|| panic!("should be refused:\n{text}"))
}

/// The network's ports as the engine numbers them (link i: port 2i at its `a` end, 2i + 1 at
/// its `b` end): each node's ports, and the node at the far end of each port.
fn ports(t: &Topology) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut node_ports = vec![Vec::new(); t.nodes.len()];
    let mut peer = Vec::new();
    for l in &t.links {
        node_ports[l.a].push(peer.len());
        peer.push(l.b);
        node_ports[l.b].push(peer.len());
        peer.push(l.a);
    }
    (node_ports, peer)
}

fn routes(t: &Topology, paths: Paths) -> (Routes, Vec<usize>) {
    let (node_ports, peer) = ports(t);
    let is_host: Vec<bool> = t.nodes.iter().map(|n| n.kind == NodeKind::Host).collect();
    (Routes::build(&node_ports, &peer, &is_host, &t.groups).detouring(paths, &t.groups, &peer), peer)
}

/// Hops between switches (paths through switches only), from `src`, by BFS on the links.
fn switch_distances(t: &Topology, src: usize) -> Vec<u32> {
    let mut adj = vec![Vec::new(); t.nodes.len()];
    for l in &t.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    let mut dist = vec![u32::MAX; t.nodes.len()];
    dist[src] = 0;
    let mut queue = VecDeque::from([src]);
    while let Some(n) = queue.pop_front() {
        for &m in &adj[n] {
            if t.nodes[m].kind == NodeKind::Switch && dist[m] == u32::MAX {
                dist[m] = dist[n] + 1;
                queue.push_back(m);
            }
        }
    }
    dist
}

/// Router hops of the dragonfly's minimal path from router `s` to router `e`, from the wiring
/// alone: in a group one local hop (groups are all-to-all), between groups the best of its
/// global links from `s`'s group into `e`'s, each with a local hop before it unless `s` holds
/// it and one after it unless it lands on `e`.
fn minimal_hops(t: &Topology, s: usize, e: usize) -> u32 {
    let (gs, ge) = (t.groups[s], t.groups[e]);
    if s == e {
        return 0;
    }
    if gs == ge {
        return 1;
    }
    t.links
        .iter()
        .filter_map(|l| {
            let (x, y) = if t.groups[l.a] == gs && t.groups[l.b] == ge { (l.a, l.b) } else if t.groups[l.b] == gs && t.groups[l.a] == ge { (l.b, l.a) } else { return None };
            Some((x != s) as u32 + 1 + (y != e) as u32)
        })
        .min()
        .expect("every pair of groups is joined")
}

/// The switch a host hangs off.
fn router_of(t: &Topology, host: usize) -> usize {
    let l = t.links.iter().find(|l| l.a == host || l.b == host).expect("a host has a link");
    if l.a == host { l.b } else { l.a }
}

/// A packet's walk from host `src` to host `dst`: the switches it crosses, in order, and the
/// detour node the first switch chose. `pick` chooses among the candidates.
#[allow(clippy::too_many_arguments)]
fn walk(t: &Topology, r: &Routes, peer: &[usize], router: &mut Router, src: usize, dst: usize, entropy: u64, depth: &dyn Fn(u32) -> u64) -> (Vec<usize>, u32) {
    let mut node = router_of(t, src);
    let mut via = NO_VIA;
    let mut chosen = NO_VIA;
    let mut path = vec![node];
    let mut first = true;
    loop {
        let out = r.next_port(node, &mut via, dst, first, entropy, router, Time::ZERO, depth);
        if first {
            chosen = via;
        }
        first = false;
        let out = out.unwrap_or_else(|| panic!("no way from {} to h{dst}", t.nodes[node].name));
        let next = peer[out];
        if next == dst {
            return (path, chosen);
        }
        assert_eq!(t.nodes[next].kind, NodeKind::Switch, "through a host");
        node = next;
        path.push(node);
        assert!(path.len() < 20, "a loop: {path:?}");
    }
}

fn router(policy: Policy, seed: u64) -> Router {
    Router::new(policy, seed, stream(seed, Stream::Routing, 0))
}

/// Every router has p hosts, a − 1 local links to every other router of its group and h
/// global links; the balanced form has one global link between every pair of groups, hosts
/// are numbered router by router, routers named g{group}r{router}.
#[test]
fn wiring_degrees_global_links_and_numbering() {
    for (body, p, a, h, g) in [
        ("kind = \"dragonfly\"\nh = 1", 1, 2, 1, 3),
        ("kind = \"dragonfly\"\nh = 2", 2, 4, 2, 9),
        ("kind = \"dragonfly\"\nh = 3", 3, 6, 3, 19),
        ("kind = \"dragonfly\"\nh = 4", 4, 8, 4, 33),
        ("kind = \"left-dragonfly\"", 2, 4, 2, 9),
        // Not balanced, and fewer groups: every pair joined by a·h / (g − 1) = 2 links.
        ("kind = \"dragonfly\"\np = 3\na = 4\nh = 2\ngroups = 5", 3, 4, 2, 5),
        ("kind = \"dragonfly\"\np = 1\na = 3\nh = 2\ngroups = 4", 1, 3, 2, 4),
    ] {
        let (t, cfg) = built(body);
        let d = dragonfly(&cfg).expect("a dragonfly");
        assert_eq!((d.p, d.a, d.h, d.groups), (p, a, h, g), "{body}");
        let (hosts, routers) = ((g * a * p) as usize, (g * a) as usize);
        assert_eq!(t.hosts().count(), hosts, "{body}");
        assert_eq!(t.nodes.len(), hosts + routers, "{body}");
        let mut degree = vec![(0u32, 0u32, 0u32); t.nodes.len()];
        let mut pairs: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for l in &t.links {
            let (ka, kb) = (t.nodes[l.a].kind, t.nodes[l.b].kind);
            if ka == NodeKind::Host || kb == NodeKind::Host {
                let (x, r) = if ka == NodeKind::Host { (l.a, l.b) } else { (l.b, l.a) };
                // Host x hangs off router x / p (hosts first, then the routers).
                assert_eq!(r, hosts + x / p as usize, "{body}: h{x}");
                assert_eq!(t.nodes[x].name, format!("h{x}"));
                degree[r].0 += 1;
                continue;
            }
            let (ga, gb) = (t.groups[l.a], t.groups[l.b]);
            if ga == gb {
                degree[l.a].1 += 1;
                degree[l.b].1 += 1;
            } else {
                degree[l.a].2 += 1;
                degree[l.b].2 += 1;
                *pairs.entry((ga.min(gb), ga.max(gb))).or_default() += 1;
            }
        }
        for r in hosts..hosts + routers {
            let (i, k) = ((r - hosts) as u32 / a, (r - hosts) as u32 % a);
            assert_eq!(t.nodes[r].name, format!("g{i}r{k}"), "{body}");
            assert_eq!(t.groups[r], i, "{body}");
            assert_eq!(degree[r], (p, a - 1, h), "{body}: {}", t.nodes[r].name);
        }
        assert!((0..hosts).all(|x| t.groups[x] == NO_GROUP));
        // Every pair of groups, the same number of global links.
        assert_eq!(pairs.len() as u32, g * (g - 1) / 2, "{body}");
        let per_pair = a * h / (g - 1);
        assert!(pairs.values().all(|&n| n == per_pair), "{body}: {pairs:?}");
        if g == a * h + 1 {
            assert_eq!(per_pair, 1, "{body}");
        }
        // Local links: all-to-all in a group (a router's a − 1 local links reach distinct
        // routers, checked by the distances below).
        let d0 = switch_distances(&t, hosts);
        for r in hosts + 1..hosts + a as usize {
            assert_eq!(d0[r], 1, "{body}");
        }
    }
}

/// The balanced sizes the issue names: h = 2 -> 72 hosts, 3 -> 342, 4 -> 1,056.
#[test]
fn balanced_sizes() {
    for (h, hosts) in [(2, 72), (3, 342), (4, 1_056)] {
        let (t, _) = built(&format!("kind = \"dragonfly\"\nh = {h}"));
        assert_eq!(t.hosts().count(), hosts, "h = {h}");
    }
}

/// Rates and delays per kind of link: host, local, global, each with its default.
#[test]
fn link_rates_and_delays_per_kind() {
    let (t, _) = built("kind = \"left-dragonfly\"");
    let kinds = |t: &Topology| {
        let mut seen = BTreeMap::new();
        for l in &t.links {
            let kind = if t.nodes[l.a].kind == NodeKind::Host || t.nodes[l.b].kind == NodeKind::Host {
                "host"
            } else if t.groups[l.a] == t.groups[l.b] {
                "local"
            } else {
                "global"
            };
            seen.insert((kind, l.rate.bps(), l.delay.ps()), ());
        }
        seen.into_keys().collect::<Vec<_>>()
    };
    // LEFT: 200 Gbps hosts, 400 Gbps between groups (and in them), 1 us links.
    assert_eq!(kinds(&t), vec![("global", 400_000_000_000, 1_000_000), ("host", 200_000_000_000, 1_000_000), ("local", 400_000_000_000, 1_000_000)]);
    let (t, _) = built("kind = \"dragonfly\"\nh = 2\nhost_link = \"100Gbps\"\nlocal_link = \"200Gbps\"\nglobal_link = \"300Gbps\"\nhost_delay = \"1us\"\nlocal_delay = \"2us\"\nglobal_delay = \"3us\"");
    assert_eq!(kinds(&t), vec![("global", 300_000_000_000, 3_000_000), ("host", 100_000_000_000, 1_000_000), ("local", 200_000_000_000, 2_000_000)]);
    // fabric_link and link_delay are the defaults of local and global.
    let (t, _) = built("kind = \"dragonfly\"\nh = 1\nhost_link = \"10Gbps\"\nfabric_link = \"40Gbps\"\nlink_delay = \"5us\"\nglobal_delay = \"7us\"");
    assert_eq!(kinds(&t), vec![("global", 40_000_000_000, 7_000_000), ("host", 10_000_000_000, 5_000_000), ("local", 40_000_000_000, 5_000_000)]);
}

/// Minimal routing is the dragonfly's: local, global, local at most (3 router hops), one hop in
/// a group, never through a third group even where two global hops would be shorter (a
/// shortest-path table would take them); in the balanced form exactly one minimal path
/// between two routers. Every table path is as long as the wiring's minimal path.
#[test]
fn minimal_paths_are_at_most_local_global_local() {
    for body in ["kind = \"dragonfly\"\nh = 2", "kind = \"dragonfly\"\nh = 3", "kind = \"dragonfly\"\np = 3\na = 4\nh = 2\ngroups = 5"] {
        let (t, cfg) = built(body);
        let d = dragonfly(&cfg).unwrap();
        let balanced = d.groups == d.a * d.h + 1;
        let (r, peer) = routes(&t, Paths::Minimal);
        let hosts = d.hosts() as usize;
        let (mut longest, mut shorter_by_two_globals) = (0, 0);
        for src in (0..hosts).step_by(d.p as usize) {
            let s = router_of(&t, src);
            let dist = switch_distances(&t, s);
            for dst in (0..hosts).step_by(d.p as usize) {
                if dst == src {
                    continue;
                }
                let e = router_of(&t, dst);
                let hops = minimal_hops(&t, s, e);
                let bound = if t.groups[s] == t.groups[e] { 1 } else { 3 };
                assert!(hops <= bound, "{body}: h{src} -> h{dst}: {hops} hops");
                longest = longest.max(hops);
                shorter_by_two_globals += (dist[e] < hops) as u32;
                // Follow every table path (every candidate leads on): its length and groups.
                let mut count = 0u64;
                let mut stack = vec![(s, 0u32)];
                while let Some((n, k)) = stack.pop() {
                    assert!(t.groups[n] == t.groups[s] || t.groups[n] == t.groups[e], "{body}: h{src} -> h{dst} through {}", t.nodes[n].name);
                    if n == e {
                        assert_eq!(k, hops, "{body}: h{src} -> h{dst}: a table path not minimal");
                        count += 1;
                        continue;
                    }
                    for &p in r.candidates(n, dst) {
                        stack.push((peer[p as usize], k + 1));
                    }
                }
                assert!(count >= 1);
                if balanced {
                    assert_eq!(count, 1, "{body}: h{src} -> h{dst}");
                }
            }
        }
        assert_eq!(longest, 3, "{body}: some pair is local-global-local apart");
        assert!(shorter_by_two_globals > 0, "{body}: no pair where two global hops are shorter (the rule is untested)");
    }
}

/// Valiant: every packet between groups goes through a group other than its source's and
/// destination's: minimally to it (local, global), then minimally on (local, global, local),
/// at most 5 router hops (minimal's 3 plus the detour's 2), crossing no other group; in a
/// group it stays minimal.
#[test]
fn valiant_paths_go_through_an_intermediate_group() {
    for body in ["kind = \"dragonfly\"\nh = 2", "kind = \"dragonfly\"\np = 3\na = 4\nh = 2\ngroups = 5"] {
        let (t, cfg) = built(body);
        let d = dragonfly(&cfg).unwrap();
        let (r, peer) = routes(&t, Paths::Valiant);
        let mut rt = router(Policy::SprayRandom, 3);
        let hosts = d.hosts() as usize;
        let mut longer = 0;
        for src in 0..hosts {
            for dst in (0..hosts).step_by(3) {
                if dst == src {
                    continue;
                }
                let (path, via) = walk(&t, &r, &peer, &mut rt, src, dst, 0, &|_| 0);
                let (gs, ge) = (t.groups[path[0]], t.groups[router_of(&t, dst)]);
                let minimal = minimal_hops(&t, path[0], router_of(&t, dst)) as usize;
                if gs == ge {
                    assert_eq!(via, NO_VIA, "{body}: a detour in a group");
                    assert_eq!(path.len() - 1, minimal);
                    continue;
                }
                assert_ne!(via, NO_VIA, "{body}: h{src} -> h{dst} took no detour");
                let gv = t.groups[via as usize];
                assert!(gv != gs && gv != ge, "{body}: detour through group {gv} from {gs} to {ge}");
                // The groups crossed, in order: the source's, the detour's, the destination's.
                let mut groups: Vec<u32> = path.iter().map(|&n| t.groups[n]).collect();
                groups.dedup();
                assert_eq!(groups, vec![gs, gv, ge], "{body}: h{src} -> h{dst}: {path:?}");
                let in_group = |g: u32| path.iter().filter(|&&n| t.groups[n] == g).count();
                assert!(in_group(gs) <= 2 && in_group(gv) <= 2 && in_group(ge) <= 2, "{body}: {path:?}");
                let hops = path.len() - 1;
                assert!(hops <= 5, "{body}: h{src} -> h{dst}: {hops} router hops: {path:?}");
                longer += (hops > minimal) as u32;
            }
        }
        assert!(longer > 0, "{body}: Valiant never took a longer path");
    }
}

/// Valiant draws intermediate groups uniformly: per packet under spraying, per flow (entropy)
/// under ECMP.
#[test]
fn valiant_spreads_over_intermediate_groups() {
    let (t, _) = built("kind = \"dragonfly\"\nh = 2");
    let (r, peer) = routes(&t, Paths::Valiant);
    // h0 (group 0) -> h71 (group 8): 7 intermediate groups, 1 .. 7.
    let (src, dst) = (0, 71);
    let mut rt = router(Policy::SprayRandom, 11);
    let mut n = BTreeMap::new();
    let packets = 14_000;
    for _ in 0..packets {
        let (_, via) = walk(&t, &r, &peer, &mut rt, src, dst, 5, &|_| 0);
        *n.entry(t.groups[via as usize]).or_insert(0u32) += 1;
    }
    assert_eq!(n.keys().copied().collect::<Vec<_>>(), (1..=7).collect::<Vec<_>>(), "{n:?}");
    // Binomial(14000, 1/7): mean 2000, sd 41; +-250 is six sd.
    assert!(n.values().all(|&k| (k as i32 - 2000).abs() < 250), "{n:?}");
    // ECMP: one flow keeps its intermediate group, flows spread over all of them.
    let mut rt = router(Policy::Ecmp, 11);
    let mut by_flow = BTreeMap::new();
    for flow in 0..700u64 {
        let (_, via) = walk(&t, &r, &peer, &mut rt, src, dst, flow, &|_| 0);
        for _ in 0..5 {
            assert_eq!(walk(&t, &r, &peer, &mut rt, src, dst, flow, &|_| 0).1, via, "flow {flow} moved");
        }
        *by_flow.entry(t.groups[via as usize]).or_insert(0u32) += 1;
    }
    assert_eq!(by_flow.len(), 7, "{by_flow:?}");
    // Binomial(700, 1/7): mean 100, sd 9.3.
    assert!(by_flow.values().all(|&k| (k as i32 - 100).abs() < 50), "{by_flow:?}");
}

/// UGAL-L: on an idle network every packet goes minimally; when the minimal port's queue is
/// deep it detours; and each choice is exactly q_val x H_val < q_min x H_min with the detour
/// Valiant would draw (same seed), H from the network's distances, q the stub's depths.
#[test]
fn ugal_weighs_queue_depth_by_hops() {
    let (t, _) = built("kind = \"dragonfly\"\nh = 2");
    let (ugal, peer) = routes(&t, Paths::Ugal);
    let (valiant, _) = routes(&t, Paths::Valiant);
    let hosts = t.hosts().count();
    // Idle: minimal everywhere.
    let mut rt = router(Policy::SprayRandom, 2);
    for src in 0..hosts {
        for dst in 0..hosts {
            if src != dst {
                let (path, via) = walk(&t, &ugal, &peer, &mut rt, src, dst, 0, &|_| 0);
                assert_eq!(via, NO_VIA);
                assert_eq!(path.len() - 1, minimal_hops(&t, path[0], router_of(&t, dst)) as usize);
            }
        }
    }
    // The minimal port deep, every other empty: a detour whenever its first port differs.
    let (src, dst) = (0, 71);
    let s = router_of(&t, src);
    let min_port = ugal.candidates(s, dst)[0];
    let mut rt = router(Policy::SprayRandom, 2);
    let mut detours = 0;
    for _ in 0..200 {
        let mut via = NO_VIA;
        let c = ugal.route(s, &mut via, dst, true, 0, &mut rt, Time::ZERO, &|p| if p == min_port { 1_000_000 } else { 0 });
        if via != NO_VIA {
            detours += 1;
            assert!(!c.contains(&min_port), "a detour out of the deep port");
        }
    }
    assert!(detours > 100, "{detours} of 200 detoured");
    // The rule, against Valiant's draw with the same random bits, on random depths.
    let mut depths_rng: Rng = stream(9, Stream::Routing, 99);
    let (mut rt_u, mut rt_v) = (router(Policy::SprayRandom, 4), router(Policy::SprayRandom, 4));
    let (mut minimal, mut detoured) = (0, 0);
    for k in 0..4_000 {
        let src = k % hosts;
        let dst = (k * 7 + 13) % hosts;
        if src == dst {
            continue;
        }
        let s = router_of(&t, src);
        let depth: Vec<u64> = (0..peer.len()).map(|_| depths_rng.next_u64() % 50_000).collect();
        let q = |c: &[u32]| c.iter().map(|&p| depth[p as usize]).min().unwrap();
        let (mut via_u, mut via_v) = (NO_VIA, NO_VIA);
        let cu = ugal.route(s, &mut via_u, dst, true, 0, &mut rt_u, Time::ZERO, &|p| depth[p as usize]).to_vec();
        let cv = valiant.route(s, &mut via_v, dst, true, 0, &mut rt_v, Time::ZERO, &|_| 0).to_vec();
        if via_v == NO_VIA {
            assert_eq!(via_u, NO_VIA, "UGAL detoured where Valiant does not");
            continue;
        }
        let e = router_of(&t, dst);
        let h_min = minimal_hops(&t, s, e) as u64;
        let h_val = minimal_hops(&t, s, via_v as usize) as u64 + minimal_hops(&t, via_v as usize, e) as u64;
        let q_min = q(valiant.candidates(s, dst));
        let q_val = q(&cv);
        if q_val * h_val < q_min * h_min {
            assert_eq!(via_u, via_v, "h{src} -> h{dst}: q_val {q_val} x {h_val} < q_min {q_min} x {h_min}, yet minimal");
            assert_eq!(cu, cv);
            detoured += 1;
        } else {
            assert_eq!(via_u, NO_VIA, "h{src} -> h{dst}: q_val {q_val} x {h_val} >= q_min {q_min} x {h_min}, yet a detour");
            assert_eq!(cu, valiant.candidates(s, dst));
            minimal += 1;
        }
    }
    assert!(minimal > 100 && detoured > 100, "minimal {minimal}, detoured {detoured}");
}

/// Under flowlets the detour is the flowlet's: kept while packets come at most `gap` apart,
/// drawn again after a longer gap.
#[test]
fn a_flowlet_keeps_its_detour() {
    let (t, _) = built("kind = \"dragonfly\"\nh = 2");
    let (r, _) = routes(&t, Paths::Valiant);
    let gap = Time::from_us(50);
    let mut rt = router(Policy::Flowlet { gap, entries: 1024 }, 6);
    let s = router_of(&t, 0);
    let at = |rt: &mut Router, now: Time| {
        let mut via = NO_VIA;
        r.route(s, &mut via, 71, true, 77, rt, now, &|_| 0);
        via
    };
    let first = at(&mut rt, Time::ZERO);
    assert_ne!(first, NO_VIA);
    let mut now = Time::ZERO;
    for _ in 0..50 {
        now += Time::from_us(10);
        assert_eq!(at(&mut rt, now), first);
    }
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..60 {
        now += Time::from_us(60);
        seen.insert(at(&mut rt, now));
    }
    assert!(seen.len() >= 5, "{seen:?}");
}

/// A small spraying workload runs to the end on the LEFT preset with each kind of paths, with
/// IRN and with go-back-N: every flow delivers every byte in order; Valiant's packets cross
/// more links than minimal ones.
#[test]
fn every_flow_completes_on_a_small_dragonfly() {
    let run = |paths: &str, recovery: &str, policy: &str| -> RunOutput {
        let text = format!(
            r#"
name = "df"
seed = 3
duration = "20ms"
[topology]
kind = "left-dragonfly"
[nic]
mtu = 1000
[routing]
policy = "{policy}"
paths = "{paths}"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[workload]
kind = "poisson"
cdf = "websearch_hpcc"
load = 0.3
pairing = "random"
flows = 60
"#
        );
        retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    let mut hops_per_packet = BTreeMap::new();
    for (paths, recovery, policy) in [
        ("minimal", "irn", "spray-random"),
        ("valiant", "irn", "spray-random"),
        ("ugal", "irn", "spray-random"),
        ("valiant", "gbn", "ecmp"),
        ("ugal", "irn", "flowlet"),
    ] {
        let out = run(paths, recovery, policy);
        assert_eq!(out.flows.len(), 60);
        for f in &out.flows {
            assert!(f.finish.is_some(), "{paths} {recovery} {policy}: flow {} unfinished", f.flow_id);
            assert_eq!(f.delivered_bytes, f.size_bytes, "{paths} {recovery} {policy}: flow {}", f.flow_id);
        }
        assert_eq!(out.counters.bad_deliveries, 0);
        if policy == "spray-random" {
            hops_per_packet.insert(paths, out.counters.packet_hops as f64 / out.counters.packets_created as f64);
        }
    }
    // Minimal: host, up to 3 router hops, host (2..=5 links); Valiant between groups 6 or 7.
    assert!(hops_per_packet["valiant"] > hops_per_packet["minimal"] + 1.0, "{hops_per_packet:?}");
    assert!(hops_per_packet["minimal"] <= 5.0, "{hops_per_packet:?}");
}

/// Bad settings are refused on one line naming the field.
#[test]
fn bad_settings_name_the_field() {
    let topo = |body: &str| format!("name = \"t\"\nduration = \"1ms\"\n[topology]\n{body}\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n");
    let cases = [
        (topo("kind = \"dragonfly\""), "topology.h", "dragonfly needs h = 2"),
        (topo("kind = \"dragonfly\"\nh = 0"), "topology.h", "0 is out of range (allowed 1..=64)"),
        (topo("kind = \"dragonfly\"\nh = 65"), "topology.h", "65 is out of range"),
        (topo("kind = \"dragonfly\"\nh = 2\na = 0"), "topology.a", "0 is out of range (allowed 1..=256)"),
        (topo("kind = \"dragonfly\"\nh = 2\np = 0"), "topology.p", "0 is out of range (allowed 1..=256)"),
        (topo("kind = \"dragonfly\"\nh = 2\ngroups = 8"), "topology.groups", "8 groups cannot be joined all-to-all by a x h = 8 global ports per group (groups - 1 must divide a x h; allowed: 2, 3, 5, 9)"),
        (topo("kind = \"dragonfly\"\nh = 2\ngroups = 10"), "topology.groups", "allowed: 2, 3, 5, 9"),
        (topo("kind = \"dragonfly\"\nh = 2\ngroups = 1"), "topology.groups", "1 groups cannot"),
        (topo("kind = \"dragonfly\"\nh = 16"), "topology.p", "262656 hosts (groups x a x p = 513 x 32 x 16) is out of range (allowed 2..=100000)"),
        (topo("kind = \"dragonfly\"\nh = 1\na = 200\np = 1"), "topology.a", "forwarding tables of"),
        (topo("kind = \"dragonfly\"\nh = 2\nglobal_link = \"0.5Mbps\""), "topology.global_link", "too slow"),
        (topo("kind = \"dragonfly\"\nh = 2\nlocal_link = \"20Tbps\""), "topology.local_link", "too fast"),
        (topo("kind = \"dragonfly\"\nh = 2\nglobal_delay = \"2s\""), "topology.global_delay", "out of range"),
        (topo("kind = \"dragonfly\"\nh = 2\nk = 4"), "topology.k", "is not used by kind = \"dragonfly\" (its fields: host_link, fabric_link, link_delay, host_delay, p, a, h, groups, local_link, global_link, local_delay, global_delay)"),
        (topo("kind = \"fat-tree\"\nk = 4\nh = 2"), "topology.h", "is not used by kind = \"fat-tree\""),
        (topo("kind = \"clos\"\nglobal_link = \"100Gbps\""), "topology.global_link", "is not used by kind = \"clos\""),
        (topo("kind = \"left-dragonfly\"\ntor_agg_delay = \"1us\""), "topology.tor_agg_delay", "is not used by kind = \"left-dragonfly\""),
        (topo("kind = \"fat-tree\"\nk = 4") + "[routing]\npaths = \"valiant\"\n", "routing.paths", "\"valiant\" detours through switch groups, and this topology has none"),
        (topo("kind = \"dragonfly\"\nh = 1\ngroups = 2") + "[routing]\npaths = \"ugal\"\n", "routing.paths", "this topology has 2 groups (at least 3)"),
    ];
    for (text, field, msg) in cases {
        let e = error(&text);
        assert_eq!(e.field, field, "{text}: {e}");
        assert!(e.message.contains(msg), "{text}: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    let bad = topo("kind = \"dragonfly\"\nh = 2") + "[routing]\npaths = \"adaptive\"\n";
    let e = Scenario::from_toml(&bad).err().expect("an unknown paths kind");
    assert!(e.to_string().contains("routing.paths") && e.to_string().contains("`minimal`, `valiant`, `ugal`"), "{e}");
}

/// The issue's 16k-host dragonfly (h = 8: 129 groups of 16 routers of 8 hosts, 16,512 hosts)
/// builds in seconds with small tables (rows for the 2,064 routers only), and a flow runs.
#[test]
fn a_16k_host_dragonfly_builds_fast_with_small_tables() {
    let text = r#"
name = "scale-dragonfly"
duration = "50us"
[topology]
kind = "dragonfly"
h = 8
host_link = "200Gbps"
fabric_link = "400Gbps"
[routing]
paths = "ugal"
[transport]
recovery = "irn"
cc = "dcqcn"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h16511", size = "10KB" }]
"#;
    let wall = std::time::Instant::now();
    let sim = retx::config::build(Scenario::from_toml(text).unwrap()).expect("builds");
    let built = wall.elapsed().as_secs_f64();
    let bytes = sim.routing_table_bytes();
    let out = sim.run(&mut |_, _| true).expect("no abort");
    println!("h = 8 dragonfly (16,512 hosts): built in {built:.2} s, routing tables {:.2} MB", bytes as f64 / 1e6);
    assert!(built < 20.0, "build took {built} s");
    // 2,064 rows x 2,064 groups x 8 B = 34 MB of spans, about one port each (17 MB).
    assert!(bytes < 80_000_000, "{bytes} B of routing tables");
    assert!(out.flows[0].finish.is_some());
}

/// The run's base RTT (what windows, bitmaps and the memory table are sized by) is the longest
/// path's: 5 links (host, local, global, local, host) with minimal routing, 7 (two more for
/// the detour's local and global links) with Valiant or UGAL, each link's propagation both
/// ways and one MTU's serialization out.
#[test]
fn the_base_rtt_covers_the_detours() {
    let rtt = |paths: &str| {
        let text = format!(
            "name = \"t\"\nduration = \"1ms\"\n[topology]\nkind = \"left-dragonfly\"\n[nic]\nmtu = 1000\n[routing]\npaths = \"{paths}\"\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
        );
        retx::config::build(Scenario::from_toml(&text).unwrap()).expect("builds").longest_base_rtt()
    };
    let link = |rate_gbps: u64| Time::from_us(2) + retx::sim::units::Rate::gbps(rate_gbps).serialization(1000);
    let (host, fabric) = (link(200), link(400));
    let minimal = host + host + fabric + fabric + fabric;
    let detour = minimal + fabric + fabric;
    assert_eq!(rtt("minimal"), minimal);
    assert_eq!(rtt("valiant"), detour);
    assert_eq!(rtt("ugal"), detour);
}
