//! How a parallel run splits the network into partitions (logical processes): whole pods,
//! leaves or dragonfly groups with their hosts, so that only links toward the top tier (or
//! between groups) cross partitions, and the shortest of those bounds how far the partitions
//! may run apart (the lookahead).
//!
//! Blocks: with switch groups (a dragonfly), a group's switches and their hosts; otherwise the
//! connected parts of the network once its top tier (the switches farthest from any host: a
//! fat-tree's cores, a leaf-spine's spines) is taken away, i.e. a fat-tree's pods or a
//! leaf-spine's leaves; where that leaves fewer than two (every switch has hosts: a ring),
//! each switch with its hosts. Blocks go to partitions largest first, each to the lightest partition
//! so far (ties: the lowest index), weighed by their link ends (a packet costs per hop); then
//! the top tier's switches, one by one, the same way. Everything depends on the topology and
//! the partition count only, so a plan is the same on every machine. `[run] partition =
//! "switches"` skips the tiers and groups: every switch is a block with its hosts.

use crate::net::topology::{NodeKind, Topology, NO_GROUP};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

/// The blocks a parallel run's partitions are made of (`[run] partition`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionMode {
    #[default]
    Auto,
    Switches,
}

/// Where each node runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Per node: its partition.
    pub owner: Vec<u16>,
    pub parts: usize,
    /// The shortest delay of a link between two partitions: partitions run in windows this
    /// long.
    pub lookahead: Time,
    /// Per partition: its link ends (what the balance is judged by).
    pub weight: Vec<u64>,
}

/// Splits `topo` into at most `parts` partitions of at least `min_hosts` hosts each, from the
/// blocks `mode` says; why not, when it cannot be split in two.
pub fn plan(topo: &Topology, parts: usize, min_hosts: usize, mode: PartitionMode) -> Result<Plan, String> {
    let n = topo.nodes.len();
    let is_host = |i: usize| topo.nodes[i].kind == NodeKind::Host;
    let hosts = (0..n).filter(|&i| is_host(i)).count();
    let parts = parts.min(hosts / min_hosts.max(1));
    if parts < 2 {
        return Err(format!("the network is too small to gain: {hosts} hosts, fewer than {min_hosts} per thread (run.min_hosts_per_thread)"));
    }
    let mut adj = vec![Vec::new(); n];
    for l in &topo.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    // Hops from the nearest host.
    let mut tier = vec![u32::MAX; n];
    let mut frontier: Vec<usize> = (0..n).filter(|&i| is_host(i)).collect();
    for &h in &frontier {
        tier[h] = 0;
    }
    let mut d = 0;
    while !frontier.is_empty() {
        d += 1;
        let mut next = Vec::new();
        for &x in &frontier {
            for &y in &adj[x] {
                if tier[y] == u32::MAX {
                    tier[y] = d;
                    next.push(y);
                }
            }
        }
        frontier = next;
    }
    if tier.contains(&u32::MAX) {
        return Err("a node no host reaches".into());
    }
    // Block of each node (u32::MAX: the top tier, placed after the blocks).
    let mut block = vec![u32::MAX; n];
    let mut blocks = 0u32;
    let by_switch = mode == PartitionMode::Switches;
    let grouped = !by_switch && !topo.groups.is_empty() && topo.groups.iter().any(|&g| g != NO_GROUP);
    if grouped {
        let mut id = std::collections::BTreeMap::new();
        for i in 0..n {
            if !is_host(i) && topo.groups[i] != NO_GROUP {
                let next = id.len() as u32;
                block[i] = *id.entry(topo.groups[i]).or_insert(next);
            }
        }
        blocks = id.len() as u32;
    } else if !by_switch {
        let top = (0..n).filter(|&i| !is_host(i)).map(|i| tier[i]).max().unwrap_or(0);
        for start in 0..n {
            if block[start] != u32::MAX || is_host(start) || tier[start] >= top {
                continue;
            }
            block[start] = blocks;
            let mut stack = vec![start];
            while let Some(x) = stack.pop() {
                for &y in &adj[x] {
                    if block[y] == u32::MAX && !is_host(y) && tier[y] < top {
                        block[y] = blocks;
                        stack.push(y);
                    }
                }
            }
            blocks += 1;
        }
    }
    if by_switch || (!grouped && blocks < 2) {
        // No tiers to cut below (a ring, a mesh, switches that all have hosts): every switch
        // is a block with its hosts, and the links between switches are cut.
        blocks = 0;
        for i in (0..n).filter(|&i| !is_host(i)) {
            block[i] = blocks;
            blocks += 1;
        }
    }
    // Hosts go with the switch they hang from.
    for h in (0..n).filter(|&i| is_host(i)) {
        block[h] = adj[h].iter().map(|&s| block[s]).find(|&b| b != u32::MAX).unwrap_or(u32::MAX);
    }
    let parts = parts.min(blocks as usize);
    if parts < 2 {
        return Err("the network has one switch".into());
    }
    let degree = |i: usize| adj[i].len() as u64;
    let mut block_weight = vec![0u64; blocks as usize];
    for i in 0..n {
        if block[i] != u32::MAX {
            block_weight[block[i] as usize] += degree(i);
        }
    }
    let mut weight = vec![0u64; parts];
    let lightest = |w: &[u64]| (0..w.len()).min_by_key(|&p| (w[p], p)).expect("parts >= 2");
    let mut order: Vec<usize> = (0..blocks as usize).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(block_weight[b]), b));
    let mut part_of_block = vec![0u16; blocks as usize];
    for b in order {
        let p = lightest(&weight);
        part_of_block[b] = p as u16;
        weight[p] += block_weight[b];
    }
    let mut owner = vec![0u16; n];
    for i in 0..n {
        if block[i] != u32::MAX {
            owner[i] = part_of_block[block[i] as usize];
        } else {
            let p = lightest(&weight);
            owner[i] = p as u16;
            weight[p] += degree(i);
        }
    }
    let lookahead = topo.links.iter().filter(|l| owner[l.a] != owner[l.b]).map(|l| l.delay).min().expect("two partitions are linked");
    if lookahead == Time::ZERO {
        return Err("a link with no delay joins two partitions".into());
    }
    Ok(Plan { owner, parts, lookahead, weight })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::units::Rate;

    fn fat_tree(k: u32) -> Topology {
        crate::net::topology::Clos::fat_tree(k, Rate::gbps(100), Rate::gbps(100), Time::from_ns(1000)).build()
    }

    #[test]
    fn a_fat_tree_splits_by_pod_and_cuts_only_core_links() {
        let t = fat_tree(4);
        let p = plan(&t, 2, 1, PartitionMode::Auto).unwrap();
        assert_eq!(p.parts, 2);
        assert_eq!(p.lookahead, Time::from_ns(1000));
        // Every host sits with its edge switch, every edge with its aggregation switches.
        for l in &t.links {
            let (a, b) = (&t.nodes[l.a].name, &t.nodes[l.b].name);
            let core = a.starts_with("core") || b.starts_with("core");
            if !core {
                assert_eq!(p.owner[l.a], p.owner[l.b], "{a} - {b} is cut");
            }
        }
        // Balanced: two pods each, and two cores each.
        assert_eq!(p.weight[0], p.weight[1]);
    }

    #[test]
    fn one_switch_cannot_split() {
        let t = Topology::single_switch(8, Rate::gbps(100), Time::from_ns(1000));
        assert!(plan(&t, 2, 1, PartitionMode::Auto).is_err());
        // Too few hosts per thread: serial, saying so.
        assert!(plan(&fat_tree(4), 2, 9, PartitionMode::Auto).unwrap_err().contains("too small"));
        assert_eq!(plan(&fat_tree(4), 4, 8, PartitionMode::Auto).unwrap().parts, 2);
    }

    #[test]
    fn more_partitions_than_blocks_take_the_blocks() {
        let p = plan(&fat_tree(4), 16, 1, PartitionMode::Auto).unwrap();
        assert_eq!(p.parts, 4);
        assert!(p.owner.iter().all(|&o| (o as usize) < 4));
    }

    #[test]
    fn by_switch_cuts_every_link_between_switches_into_more_blocks() {
        // A k = 4 fat-tree has 20 switches: by switch, 16 threads get 16 partitions (by pod, 4),
        // an aggregation switch may sit apart from its ToRs, and every host stays with its ToR.
        let t = fat_tree(4);
        let p = plan(&t, 16, 1, PartitionMode::Switches).unwrap();
        assert_eq!(p.parts, 16);
        let cut = |p: &Plan| t.links.iter().filter(|l| p.owner[l.a] != p.owner[l.b]).count();
        let auto = plan(&t, 4, 1, PartitionMode::Auto).unwrap();
        let by_switch = plan(&t, 4, 1, PartitionMode::Switches).unwrap();
        assert!(cut(&by_switch) > cut(&auto), "{} links cut by switch, {} by pod", cut(&by_switch), cut(&auto));
        for l in &t.links {
            if t.nodes[l.a].kind == NodeKind::Host || t.nodes[l.b].kind == NodeKind::Host {
                assert_eq!(p.owner[l.a], p.owner[l.b]);
            }
        }
    }
}
