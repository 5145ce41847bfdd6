//! The flow completion file of the HPCC ns-3 simulator (`fct.txt`, written by `qp_finish` in
//! its `scratch/third.cc`), so analysis scripts written for it read retx's runs unchanged.
//!
//! One line per finished flow, in the order flows finish:
//! `sip dip sport dport size start_ns fct_ns standalone_fct_ns`. Node n's IP is
//! `0x0b000001 + ((n / 256) << 16) + ((n % 256) << 8)`, written `%08x`. Each (src, dst) pair
//! numbers its flows' source ports from 10000 in start order; the destination port is the
//! flow file's (100, what its generator writes, for other workloads). `standalone_fct_ns` is
//! ns-3's FCT on an empty network: the pair's base RTT plus every byte, headers included, at
//! the path's slowest link rate (see [`standalone_fct_ns`]).

use super::{workload, Scenario, ScenarioError, WorkloadKind};
use crate::net::topology::{NodeKind, Topology};
use crate::world::RunOutput;
use std::collections::HashMap;
use std::fmt::Write;

/// Header bytes ns-3 adds to every packet's payload when it computes the standalone FCT:
/// `CustomHeader::GetStaticWholeHeaderSize()` without INT, 14 (link) + 20 (IPv4) + 8 (UDP) +
/// 2 (priority group) + 4 (sequence number).
pub const HEADER_BYTES: u64 = 48;

/// The first source port of every (src, dst) pair (third.cc `portNumder`).
pub const FIRST_SPORT: u16 = 10000;

/// Destination port of flows that do not come from an HPCC flow file.
pub const DEFAULT_DPORT: u32 = 100;

/// ns-3's IP of node `n`.
pub fn ip(n: usize) -> u32 {
    0x0b00_0001 + ((n as u32 / 256) << 16) + ((n as u32 % 256) << 8)
}

/// A host's view of the network as third.cc's `CalculateRoute` computes it: for every node,
/// one-way propagation delay (ns), the serialization time of one payload over each hop (ns,
/// truncated per hop) and the slowest link rate (bit/s) along the first shortest path found.
#[derive(Clone, Copy, Debug)]
struct PathTo {
    delay_ns: u64,
    tx_ns: u64,
    bw: u64,
}

/// Breadth-first from `host` through switches only, neighbours in node order.
fn paths_to(topo: &Topology, adj: &[Vec<(usize, usize)>], host: usize, payload: u64) -> Vec<Option<PathTo>> {
    let mut out: Vec<Option<PathTo>> = vec![None; topo.nodes.len()];
    out[host] = Some(PathTo { delay_ns: 0, tx_ns: 0, bw: u64::MAX });
    let mut queue = vec![host];
    let mut i = 0;
    while i < queue.len() {
        let now = queue[i];
        i += 1;
        let here = out[now].expect("queued nodes are reached");
        for &(next, l) in &adj[now] {
            if out[next].is_some() {
                continue;
            }
            let link = &topo.links[l];
            let bw = link.rate.0;
            out[next] = Some(PathTo {
                delay_ns: here.delay_ns + link.delay.0 / 1000,
                tx_ns: here.tx_ns + payload * 8_000_000_000 / bw,
                bw: here.bw.min(bw),
            });
            if topo.nodes[next].kind == NodeKind::Switch {
                queue.push(next);
            }
        }
    }
    out
}

/// ns-3's standalone FCT: base RTT (2 x propagation + one payload's serialization per hop)
/// plus the flow's bytes with `HEADER_BYTES` per packet at the path's slowest rate.
fn standalone_fct_ns(p: PathTo, size: u64, payload: u64) -> u64 {
    let total = size + size.saturating_sub(1) / payload.max(1) * HEADER_BYTES + HEADER_BYTES;
    p.delay_ns * 2 + p.tx_ns + (total as u128 * 8_000_000_000 / p.bw as u128) as u64
}

/// The `fct.txt` text of a finished run of `s` on `topo`.
pub fn fct_txt(s: &Scenario, topo: &Topology, out: &RunOutput) -> Result<String, ScenarioError> {
    let payload = s.nic.mtu as u64;
    // The file's ports, by flow, when its flows are the run's (one job).
    let dports: Vec<u32> = if s.workload.len() == 1 && s.workload[0].kind == WorkloadKind::HpccFlows {
        let mut flows = workload::hpcc_flows(&s.workload[0], &s.base_dir)?;
        flows.sort_by_key(|f| f.start); // stable, as the run's own order
        flows.iter().map(|f| f.dport).collect()
    } else {
        Vec::new()
    };
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); topo.nodes.len()];
    for (i, l) in topo.links.iter().enumerate() {
        adj[l.a].push((l.b, i));
        adj[l.b].push((l.a, i));
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    let node = |name: &str| topo.find(name).ok_or_else(|| ScenarioError::new("output.fct_txt", format!("no node {name:?} in the topology")));
    let mut next_sport: HashMap<(usize, usize), u16> = HashMap::new();
    let mut routes: HashMap<usize, Vec<Option<PathTo>>> = HashMap::new();
    let mut lines = Vec::new();
    for (i, f) in out.flows.iter().enumerate() {
        let (src, dst) = (node(&f.src)?, node(&f.dst)?);
        let port = next_sport.entry((src, dst)).or_insert(FIRST_SPORT);
        let sport = *port;
        *port = port.wrapping_add(1);
        let Some(finish) = f.finish else { continue };
        let path = routes.entry(dst).or_insert_with(|| paths_to(topo, &adj, dst, payload))[src]
            .ok_or_else(|| ScenarioError::new("output.fct_txt", format!("no path from {} to {}", f.src, f.dst)))?;
        let dport = dports.get(i).copied().unwrap_or(DEFAULT_DPORT);
        let line = (finish, i, ip(src), ip(dst), sport, dport, f.size_bytes, f.start.0 / 1000, (finish - f.start).0 / 1000, standalone_fct_ns(path, f.size_bytes, payload));
        lines.push(line);
    }
    lines.sort_by_key(|l| (l.0, l.1));
    let mut text = String::with_capacity(lines.len() * 64);
    for (_, _, sip, dip, sport, dport, size, start, fct, standalone) in lines {
        writeln!(text, "{sip:08x} {dip:08x} {sport} {dport} {size} {start} {fct} {standalone}").expect("writing to a String");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_and_standalone_fct_as_ns3() {
        assert_eq!(format!("{:08x}", ip(126)), "0b007e01");
        assert_eq!(format!("{:08x}", ip(271)), "0b010f01");
        // HPCC reference fct.txt, fat.txt: 126 -> 125 under one ToR (2 x 100G hops), 21808 B:
        // 2 x 2000 + 2 x 80 + (21808 + 22 x 48) x 8 / 100 = 5989 ns.
        let same_tor = PathTo { delay_ns: 2000, tx_ns: 160, bw: 100_000_000_000 };
        assert_eq!(standalone_fct_ns(same_tor, 21808, 1000), 5989);
        // 59 -> 164 across the core (2 x 100G + 4 x 400G hops), 35576 B: 15224 ns.
        let cross = PathTo { delay_ns: 6000, tx_ns: 240, bw: 100_000_000_000 };
        assert_eq!(standalone_fct_ns(cross, 35576, 1000), 15224);
        assert_eq!(standalone_fct_ns(same_tor, 1000, 1000), 4160 + 83);
    }

    #[test]
    fn ports_number_per_pair_and_lines_follow_completion() {
        let text = r#"
            name = "fct"
            duration = "1ms"
            [topology]
            kind = "single-switch"
            hosts = 3
            [workload]
            kind = "flow-list"
            flows = [
                { src = "h0", dst = "h1", size = "100KB" },
                { src = "h0", dst = "h1", size = "1KB", start = "1us" },
                { src = "h2", dst = "h1", size = "2KB", start = "1us" },
            ]
        "#;
        let mut s = Scenario::from_toml(text).unwrap();
        let topo = super::super::validate(&mut s).unwrap();
        let out = super::super::build(s.clone()).unwrap().run(&mut |_, _| true).unwrap();
        let got = fct_txt(&s, &topo, &out).unwrap();
        let rows: Vec<Vec<&str>> = got.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(rows.len(), 3);
        // Node ids are topology indices (sw0 is node 0, h0 node 1). The small flows finish
        // first; the 100 KB flow last.
        assert_eq!(rows[2][..7], ["0b000101", "0b000201", "10000", "100", "100000", "0", rows[2][6]]);
        let second = rows.iter().find(|r| r[4] == "1000").unwrap();
        assert_eq!((second[2], second[5]), ("10001", "1000"));
        let other = rows.iter().find(|r| r[4] == "2000").unwrap();
        assert_eq!((other[0], other[2]), ("0b000301", "10000"));
    }
}
