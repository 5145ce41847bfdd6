//! Shortest-path forwarding tables and the policies that pick among equal-cost next hops.
//!
//! Tables are kept per *destination group*, not per destination host: a host with a single
//! link to a switch (every host of the built-in topologies and of HPCC files) is reached through
//! that switch, so every node routes to the switch and the switch alone knows the last hop.
//! That makes a table nodes x edge switches instead of nodes x hosts: a 10,000-host fat-tree
//! needs a few hundred BFS runs and tens of MB. A host with several links, or linked to another
//! host, is a group of its own.
//!
//! Policies ([`Policy`]): ECMP on the packet's entropy (the 5-tuple hash), per-packet spraying
//! (round robin or random per switch), and flowlets (a flow keeps its path until a gap longer
//! than the flowlet timeout, then a random path is picked: LetFlow's rule), in a fixed table of
//! hashed entries per switch, as a switch ASIC holds it.

use crate::sim::rng::{mix64, Rng};
use crate::sim::units::Time;
use std::collections::VecDeque;

/// For every (node, destination group): the egress ports on a shortest path.
pub struct Routes {
    groups: usize,
    /// Destination group of each host node (usize::MAX for switches).
    group_of: Vec<u32>,
    /// For a host reached through its switch: that switch and the switch's port to the host.
    attach: Vec<(u32, u32)>,
    /// (start, len) into `ports`, per node x group.
    spans: Vec<(u32, u32)>,
    ports: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Routes {
    /// `node_ports[n]` lists node n's ports; `peer_node[p]` is the node at the far end of port p.
    pub fn build(node_ports: &[Vec<usize>], peer_node: &[usize], is_host: &[bool]) -> Routes {
        let nodes = node_ports.len();
        let mut group_of = vec![NONE; nodes];
        let mut attach = vec![(NONE, NONE); nodes];
        // Group roots: the node a BFS starts from. A switch root serves every single-homed
        // host under it.
        let mut roots: Vec<usize> = Vec::new();
        let mut root_group = vec![NONE; nodes];
        for h in (0..nodes).filter(|&n| is_host[n]) {
            let single = node_ports[h].len() == 1 && !is_host[peer_node[node_ports[h][0]]];
            let root = if single { peer_node[node_ports[h][0]] } else { h };
            if root_group[root] == NONE {
                root_group[root] = roots.len() as u32;
                roots.push(root);
            }
            group_of[h] = root_group[root];
            if single {
                let sw = root;
                let back = node_ports[sw].iter().find(|&&p| peer_node[p] == h).expect("a link has two ends");
                attach[h] = (sw as u32, *back as u32);
            }
        }
        let groups = roots.len();
        let mut spans = vec![(0u32, 0u32); nodes * groups];
        let mut ports = Vec::new();
        let mut dist = vec![u32::MAX; nodes];
        let mut queue = VecDeque::new();
        for (g, &root) in roots.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[root] = 0;
            queue.push_back(root);
            while let Some(n) = queue.pop_front() {
                // Hosts do not forward: paths may end at a host but not pass through one.
                if n != root && is_host[n] {
                    continue;
                }
                for &p in &node_ports[n] {
                    let m = peer_node[p];
                    if dist[m] == u32::MAX {
                        dist[m] = dist[n] + 1;
                        queue.push_back(m);
                    }
                }
            }
            for n in 0..nodes {
                if n == root || dist[n] == u32::MAX {
                    continue;
                }
                let start = ports.len() as u32;
                for &p in &node_ports[n] {
                    let m = peer_node[p];
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[n] && (m == root || !is_host[m]) {
                        ports.push(p as u32);
                    }
                }
                spans[n * groups + g] = (start, ports.len() as u32 - start);
            }
        }
        Routes { groups, group_of, attach, spans, ports }
    }

    /// The equal-cost egress ports at `node` towards host `dst` (empty if unreachable).
    pub fn candidates(&self, node: usize, dst: usize) -> &[u32] {
        if self.attach[dst].0 as usize == node {
            return std::slice::from_ref(&self.attach[dst].1);
        }
        let (start, len) = self.spans[node * self.groups + self.group_of[dst] as usize];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// Bytes the tables hold (for the scale tests).
    pub fn table_bytes(&self) -> usize {
        self.spans.len() * 8 + self.ports.len() * 4 + self.group_of.len() * 4 + self.attach.len() * 8
    }
}

/// How a switch picks among equal-cost next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Hash of the packet's entropy (the flow's 5-tuple) and a per-switch salt.
    Ecmp,
    /// Every packet to the next port in turn, per switch.
    SprayRoundRobin,
    /// Every packet to a uniformly random port.
    SprayRandom,
    /// A flow keeps its port while its packets are less than `gap` apart; after a longer gap a
    /// random port is picked. `entries` hashed entries per switch (a power of two).
    Flowlet { gap: Time, entries: u32 },
    /// Every packet of a flow to the next port of a per-flow random permutation of the ports,
    /// a new permutation after each has been used once (htsim's NDP `perm` path choice, made
    /// per switch: each switch balances a flow's packets over its own ports exactly, as
    /// htsim's source-chosen permutation of whole paths balances them over the paths).
    /// `entries` hashed flow entries per switch (a power of two).
    SprayPermutation { entries: u32 },
}

/// A flow's walk through a permutation of a switch's ports: how many packets it sent in the
/// current round, and the round's permutation, `i -> (a i + b) mod n` with `a` coprime to n.
#[derive(Clone, Copy, Debug, Default)]
struct Walk {
    step: u32,
    a: u16,
    b: u16,
}

/// Per-switch state of the routing policy.
pub struct Router {
    policy: Policy,
    salt: u64,
    rng: Rng,
    round_robin: u64,
    /// Flowlet table: (time of the last packet, chosen candidate index + 1; 0 = empty).
    flowlets: Vec<(Time, u32)>,
    /// Permutation walks by hashed flow (spray-permutation).
    walks: Vec<Walk>,
}

impl Router {
    pub fn new(policy: Policy, salt: u64, rng: Rng) -> Router {
        let flowlets = match policy {
            Policy::Flowlet { entries, .. } => vec![(Time::ZERO, 0); entries.max(1).next_power_of_two() as usize],
            _ => Vec::new(),
        };
        let walks = match policy {
            Policy::SprayPermutation { entries } => vec![Walk::default(); entries.max(1).next_power_of_two() as usize],
            _ => Vec::new(),
        };
        Router { policy, salt, rng, round_robin: 0, flowlets, walks }
    }

    /// Picks one of `candidates` (not empty) for a packet with this entropy at time `now`.
    pub fn pick(&mut self, candidates: &[u32], entropy: u64, now: Time) -> usize {
        let len = candidates.len() as u64;
        if len == 1 {
            return candidates[0] as usize;
        }
        let i = match self.policy {
            Policy::Ecmp => mix64(entropy ^ self.salt) % len,
            Policy::SprayRoundRobin => {
                self.round_robin = self.round_robin.wrapping_add(1);
                self.round_robin % len
            }
            Policy::SprayRandom => self.rng.next_u64() % len,
            Policy::Flowlet { gap, .. } => {
                let slot = (mix64(entropy ^ self.salt) as usize) & (self.flowlets.len() - 1);
                let (last, choice) = self.flowlets[slot];
                let i = if choice == 0 || now.saturating_sub(last) > gap || choice as u64 > len {
                    self.rng.next_u64() % len
                } else {
                    choice as u64 - 1
                };
                self.flowlets[slot] = (now, i as u32 + 1);
                i
            }
            Policy::SprayPermutation { .. } => {
                let slot = (mix64(entropy ^ self.salt) as usize) & (self.walks.len() - 1);
                let n = len.min(u16::MAX as u64);
                let mut w = self.walks[slot];
                if w.step as u64 % n == 0 {
                    // A new round: a fresh permutation (an affine map with a random multiplier
                    // coprime to n and a random offset).
                    let r = self.rng.next_u64();
                    let mut a = 1 + r % n;
                    while gcd(a, n) != 1 {
                        a = a % n + 1;
                    }
                    (w.a, w.b, w.step) = (a as u16, ((r >> 32) % n) as u16, 0);
                }
                let i = (w.a as u64 * (w.step as u64 % n) + w.b as u64) % n;
                w.step = w.step.wrapping_add(1);
                self.walks[slot] = w;
                i
            }
        };
        candidates[i as usize] as usize
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    #[test]
    fn permutation_spraying_uses_every_port_once_per_round_in_a_new_order() {
        let mut r = router(Policy::SprayPermutation { entries: 64 });
        for n in [2u32, 3, 4, 6, 7, 12] {
            let c: Vec<u32> = (100..100 + n).collect();
            let mut orders = std::collections::BTreeSet::new();
            for round in 0..20 {
                let picks: Vec<usize> = (0..n).map(|_| r.pick(&c, 1_000 + n as u64, Time::ZERO)).collect();
                let mut sorted = picks.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (100..100 + n as usize).collect::<Vec<_>>(), "n = {n}, round {round}: {picks:?}");
                orders.insert(picks);
            }
            if n >= 3 {
                assert!(orders.len() > 1, "n = {n}: every round in the same order");
            }
        }
        // Flows walk on their own: another flow's packets do not move this one's.
        let c = [1, 2, 3, 4];
        let mut a = router(Policy::SprayPermutation { entries: 1 << 12 });
        let mut b = router(Policy::SprayPermutation { entries: 1 << 12 });
        let alone: Vec<usize> = (0..4).map(|_| a.pick(&c, 5, Time::ZERO)).collect();
        let mixed: Vec<usize> = (0..4).map(|_| { b.pick(&c, 9, Time::ZERO); b.pick(&c, 5, Time::ZERO) }).collect();
        let (mut x, mut y) = (alone.clone(), mixed.clone());
        x.sort_unstable();
        y.sort_unstable();
        assert_eq!((x, y), (vec![1, 2, 3, 4], vec![1, 2, 3, 4]));
    }

    fn router(policy: Policy) -> Router {
        Router::new(policy, 7, stream(1, Stream::Routing, 0))
    }

    #[test]
    fn ecmp_keeps_a_flow_on_one_port_and_spreads_flows() {
        let mut r = router(Policy::Ecmp);
        let c = [10, 11, 12, 13];
        let first = r.pick(&c, 42, Time::ZERO);
        assert!((0..100).all(|t| r.pick(&c, 42, Time(t)) == first));
        let used: std::collections::BTreeSet<usize> = (0..64).map(|f| r.pick(&c, f, Time::ZERO)).collect();
        assert_eq!(used.len(), 4);
    }

    #[test]
    fn round_robin_spraying_cycles_through_every_port() {
        let mut r = router(Policy::SprayRoundRobin);
        let c = [10, 11, 12];
        let picks: Vec<usize> = (0..6).map(|_| r.pick(&c, 42, Time::ZERO)).collect();
        assert_eq!(picks, vec![11, 12, 10, 11, 12, 10]);
    }

    #[test]
    fn random_spraying_uses_every_port_about_equally() {
        let mut r = router(Policy::SprayRandom);
        let c = [0, 1, 2, 3];
        let mut n = [0u32; 4];
        for _ in 0..40_000 {
            n[r.pick(&c, 42, Time::ZERO)] += 1;
        }
        // Binomial(40000, 1/4): sd 87; +-500 is more than 5 sd.
        assert!(n.iter().all(|&k| (k as i32 - 10_000).abs() < 500), "{n:?}");
    }

    #[test]
    fn a_flowlet_keeps_its_port_until_a_gap_then_repicks() {
        let gap = Time::from_us(50);
        let mut r = router(Policy::Flowlet { gap, entries: 1024 });
        let c = [0, 1, 2, 3, 4, 5, 6, 7];
        let mut t = Time::ZERO;
        let first = r.pick(&c, 9, t);
        for _ in 0..100 {
            t += Time::from_us(10); // packets 10 us apart: one flowlet
            assert_eq!(r.pick(&c, 9, t), first);
        }
        // After gaps longer than the timeout, new flowlets land on other ports too.
        let mut ports = std::collections::BTreeSet::new();
        for _ in 0..50 {
            t += Time::from_us(60);
            ports.insert(r.pick(&c, 9, t));
        }
        assert!(ports.len() >= 6, "{ports:?}");
    }

    #[test]
    fn tables_are_per_edge_switch_not_per_host() {
        // 1 switch with 2000 hosts: one destination group, so spans are 2001 x 1.
        let hosts = 2000;
        let mut node_ports = vec![Vec::new(); hosts + 1];
        let mut peer = Vec::new();
        for h in 1..=hosts {
            node_ports[0].push(peer.len());
            peer.push(h);
            node_ports[h].push(peer.len());
            peer.push(0);
        }
        let mut is_host = vec![true; hosts + 1];
        is_host[0] = false;
        let r = Routes::build(&node_ports, &peer, &is_host);
        assert_eq!(r.groups, 1);
        assert_eq!(r.candidates(0, 17), &[(17 - 1) * 2]);
        assert_eq!(r.candidates(5, 17), &[(5 - 1) * 2 + 1]);
        assert!(r.table_bytes() < 100_000, "{}", r.table_bytes());
        // Exactly: spans 2001 x 1 x 8 B, one port per host 2000 x 4 B, group_of 2001 x 4 B,
        // attach 2001 x 8 B.
        assert_eq!(r.table_bytes(), 2001 * 8 + 2000 * 4 + 2001 * 4 + 2001 * 8);
    }

    /// Builds tables for `links` (node pairs; link i gives port 2i from a to b and 2i + 1 back).
    fn routes(nodes: usize, links: &[(usize, usize)], hosts: &[usize]) -> Routes {
        let mut node_ports = vec![Vec::new(); nodes];
        let mut peer = Vec::new();
        for &(a, b) in links {
            node_ports[a].push(peer.len());
            peer.push(b);
            node_ports[b].push(peer.len());
            peer.push(a);
        }
        let is_host: Vec<bool> = (0..nodes).map(|n| hosts.contains(&n)).collect();
        Routes::build(&node_ports, &peer, &is_host)
    }

    #[test]
    fn a_dual_homed_host_is_its_own_group_and_never_a_transit_hop() {
        // Switches R 0, A 1, C 2, E 3, B 4; host H 5 linked to A and B; host D 6 under R.
        // Through H, B would be 3 hops from R; over switches it is 4 (R A C E B).
        let r = routes(7, &[(0, 1), (1, 2), (2, 3), (3, 4), (1, 5), (4, 5), (0, 6)], &[5, 6]);
        assert_eq!(r.groups, 2, "R (for D) and H itself");
        assert_eq!(r.candidates(4, 6), &[7], "B reaches D over E, not through H");
        assert_eq!(r.candidates(2, 6), &[3]);
        assert_eq!(r.candidates(4, 5), &[10], "B reaches H over its own link");
        assert_eq!(r.candidates(1, 5), &[8]);
        assert_eq!(r.candidates(5, 6), &[9], "H reaches D over A");
        // Switches R 0, A 1, C 2, B 3; host H 4 linked to A and B; host D 5 under R. Through H
        // and over C, B is 3 hops from R: only C is a next hop.
        let r = routes(6, &[(0, 1), (1, 2), (2, 3), (1, 4), (3, 4), (0, 5)], &[4, 5]);
        assert_eq!(r.candidates(3, 5), &[5]);
    }

    #[test]
    fn a_gap_of_exactly_the_flowlet_timeout_keeps_the_port() {
        let gap = Time::from_us(50);
        let mut r = router(Policy::Flowlet { gap, entries: 1024 });
        let c = [0, 1, 2, 3, 4, 5, 6, 7];
        let first = r.pick(&c, 9, Time::ZERO);
        // 100 packets exactly `gap` apart: one flowlet (a re-pick would leave port `first`
        // with probability 7/8 each time).
        assert!((1..=100).all(|k| r.pick(&c, 9, Time::from_us(50 * k)) == first));
    }
}
