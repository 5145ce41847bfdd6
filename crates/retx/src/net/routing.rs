//! Shortest-path forwarding tables and the policies that pick among equal-cost next hops.
//!
//! Tables are kept per *destination group*, not per destination host: a host with a single
//! link to a switch (every host of the built-in topologies and of HPCC files) is reached through
//! that switch, so every node routes to the switch and the switch alone knows the last hop.
//! That makes a table nodes x edge switches instead of nodes x hosts: a 10,000-host fat-tree
//! needs a few hundred BFS runs and tens of MB. A host with several links, or linked to another
//! host, is a group of its own.
//!
//! With switch groups (a dragonfly's: [`crate::net::topology::Topology::groups`]) a path
//! between groups is minimal as the dragonfly defines it (Kim et al., ISCA 2008): it stays in
//! its source group, takes one link into the destination's group and stays there (local,
//! global, local), never crossing a third group, even where two global hops would be shorter.
//! Detours through another group ([`Paths`]) are chosen at the first switch.
//!
//! Policies ([`Policy`]): ECMP on the packet's entropy (the 5-tuple hash), per-packet spraying
//! (round robin or random per switch), and flowlets (a flow keeps its path until a gap longer
//! than the flowlet timeout, then a random path is picked: LetFlow's rule), in a fixed table of
//! hashed entries per switch, as a switch ASIC holds it.

use super::packet::NO_VIA;
use crate::sim::rng::{mix64, Rng};
use crate::sim::units::Time;
use std::collections::VecDeque;

/// For every (forwarding node, destination group): the egress ports on a shortest path.
pub struct Routes {
    groups: usize,
    /// Destination group of each host node (usize::MAX for switches).
    group_of: Vec<u32>,
    /// For a host reached through its switch: that switch and the switch's port to the host.
    attach: Vec<(u32, u32)>,
    /// Each node's row of `spans`, or for a single-homed host (which has one way out and no
    /// row) [`NONE`]: its port is `uplink`.
    row: Vec<u32>,
    uplink: Vec<u32>,
    /// (start, len) into `ports`, per row x group.
    spans: Vec<(u32, u32)>,
    ports: Vec<u32>,
    /// Each group's root: the switch its hosts hang off, or the host itself.
    roots: Vec<u32>,
    /// The group a root roots ([`NONE`] for any other node).
    root_group: Vec<u32>,
    /// Non-minimal routing, if asked for ([`Routes::detouring`]).
    detour: Option<Detour>,
}

const NONE: u32 = u32::MAX;

impl Routes {
    /// `node_ports[n]` lists node n's ports; `peer_node[p]` is the node at the far end of port p;
    /// `group[n]` node n's switch group (empty: none, every shortest path is taken).
    pub fn build(node_ports: &[Vec<usize>], peer_node: &[usize], is_host: &[bool], group: &[u32]) -> Routes {
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
        // Single-homed hosts have one way out and no row: on a 16k-host dragonfly (2,064
        // routers) rows for hosts would be 8 of every 9.
        let mut row = vec![NONE; nodes];
        let mut uplink = vec![NONE; nodes];
        let mut rows = 0;
        for n in 0..nodes {
            if attach[n].0 != NONE {
                uplink[n] = node_ports[n][0] as u32;
            } else {
                row[n] = rows;
                rows += 1;
            }
        }
        let mut spans = vec![(0u32, 0u32); rows as usize * groups];
        let mut ports = Vec::new();
        // Per row: the span it was given last (for a group before this one).
        let mut last = vec![(0u32, u32::MAX); rows as usize];
        let mut dist = vec![u32::MAX; nodes];
        let mut queue = VecDeque::new();
        for (g, &root) in roots.iter().enumerate() {
            // A hop from `a` to `b` may be on a path to this root: always, without groups;
            // with them, in a group, into the root's group, or to or from a host.
            let target = group.get(root).copied().unwrap_or(NONE);
            let legal = |a: usize, b: usize| group.is_empty() || group[a] == NONE || group[b] == NONE || group[a] == group[b] || group[b] == target;
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
                    if dist[m] == u32::MAX && legal(m, n) {
                        dist[m] = dist[n] + 1;
                        queue.push_back(m);
                    }
                }
            }
            for n in 0..nodes {
                if n == root || dist[n] == u32::MAX || row[n] == NONE {
                    continue;
                }
                let start = ports.len() as u32;
                for &p in &node_ports[n] {
                    let m = peer_node[p];
                    if dist[m] != u32::MAX && dist[m] + 1 == dist[n] && (m == root || !is_host[m]) && legal(n, m) {
                        ports.push(p as u32);
                    }
                }
                let mut span = (start, ports.len() as u32 - start);
                // The same ports as this node's row toward the group before (a leaf's or ToR's
                // uplinks toward every other leaf or pod): share that span. Without it a
                // leaf-spine of 1,000 spines and 1,000 leaves held 10^9 port entries (4 GB,
                // twice that while the list grew), where its spans are 8 MB.
                let prev = last[row[n] as usize];
                if prev.1 == span.1 && ports[prev.0 as usize..(prev.0 + prev.1) as usize] == ports[start as usize..] {
                    ports.truncate(start as usize);
                    span = prev;
                }
                last[row[n] as usize] = span;
                spans[row[n] as usize * groups + g] = span;
            }
        }
        let roots = roots.into_iter().map(|r| r as u32).collect();
        Routes { groups, group_of, attach, row, uplink, spans, ports, roots, root_group, detour: None }
    }

    /// These tables with non-minimal routing over the topology's switch groups (`group`: per
    /// node, as [`crate::net::topology::Topology::groups`]); `peer_node` as for
    /// [`Routes::build`]. Minimal paths, or no groups, leave the tables as they are.
    pub fn detouring(mut self, paths: Paths, group: &[u32], peer_node: &[usize]) -> Routes {
        if paths != Paths::Minimal && !group.is_empty() {
            self.detour = Some(Detour::new(paths, group, peer_node, &self.root_group));
        }
        self
    }

    /// The equal-cost egress ports at `node` towards host `dst` (empty if unreachable).
    #[inline]
    pub fn candidates(&self, node: usize, dst: usize) -> &[u32] {
        if self.attach[dst].0 as usize == node {
            return std::slice::from_ref(&self.attach[dst].1);
        }
        if dst == node {
            return &[];
        }
        self.toward(node, self.group_of[dst])
    }

    /// The egress ports at `node` on a shortest path to the root of destination group `g`.
    #[inline]
    fn toward(&self, node: usize, g: u32) -> &[u32] {
        let row = self.row[node];
        if row == NONE {
            return std::slice::from_ref(&self.uplink[node]);
        }
        let (start, len) = self.spans[row as usize * self.groups + g as usize];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// Where a packet goes next at switch `node`: the equal-cost egress ports towards its
    /// destination `dst`, or, while it is on a detour, towards the node it detours through
    /// (`via`, [`NO_VIA`] for none). At the first switch (`first`: it came from a host) the
    /// detour is chosen, if routing is not minimal; it ends when the packet reaches the
    /// detour node's switch group. `depth(port)`: bytes queued at one of this switch's ports
    /// (UGAL weighs them).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn route(&self, node: usize, via: &mut u32, dst: usize, first: bool, entropy: u64, router: &mut Router, now: Time, depth: &dyn Fn(u32) -> u64) -> &[u32] {
        if let Some(d) = &self.detour {
            if *via != NO_VIA && d.group[node] == d.group[*via as usize] {
                *via = NO_VIA;
            }
            if first && *via == NO_VIA {
                *via = d.choose(self, node, dst, entropy, router, now, depth);
            }
            if *via != NO_VIA {
                return self.toward(node, self.root_group[*via as usize]);
            }
        }
        self.candidates(node, dst)
    }

    /// The egress port a packet takes at switch `node` (None: no way to `dst`):
    /// [`Routes::route`]'s ports, picked among by `router`'s policy.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn next_port(&self, node: usize, via: &mut u32, dst: usize, first: bool, entropy: u64, router: &mut Router, now: Time, depth: &dyn Fn(u32) -> u64) -> Option<usize> {
        let c = self.route(node, via, dst, first, entropy, router, now, depth);
        (!c.is_empty()).then(|| router.pick(c, entropy, now))
    }

    /// Whether packets may detour (non-minimal routing): then a path is not the hashes'
    /// alone.
    pub fn detours_enabled(&self) -> bool {
        self.detour.is_some()
    }

    /// Every node a detour from first switch `first` to host `dst` may go through (none with
    /// minimal paths): the path model's longest paths ([`crate::net::path`]) walk them.
    pub fn detours(&self, first: usize, dst: usize) -> Vec<u32> {
        let (Some(d), Some(edge)) = (&self.detour, self.edge(dst)) else { return Vec::new() };
        let (from, to) = (d.group[first], d.group[edge]);
        if from == NONE || to == NONE || from == to {
            return Vec::new();
        }
        (0..d.groups)
            .filter(|&t| t != from && t != to)
            .flat_map(|t| {
                let (start, len) = d.spans[(from * d.groups + t) as usize];
                d.landing[start as usize..(start + len) as usize].iter().copied()
            })
            .collect()
    }

    /// On a detour through `via`: whether it ends at `node` (the node is in `via`'s group), and
    /// otherwise the ports towards `via`.
    pub fn detour_step(&self, node: usize, via: u32) -> Option<&[u32]> {
        let d = self.detour.as_ref()?;
        (d.group[node] != d.group[via as usize]).then(|| self.toward(node, self.root_group[via as usize]))
    }

    /// Hops from `node` along the tables to the root of group `g` (each hop the first
    /// candidate: every candidate is on a shortest path, so any gives the count).
    fn hops(&self, peer: &[u32], mut node: usize, g: u32) -> u32 {
        let root = self.roots[g as usize] as usize;
        let mut n = 0;
        while node != root {
            let Some(&p) = self.toward(node, g).first() else { return u32::MAX };
            node = peer[p as usize] as usize;
            n += 1;
            if n as usize > peer.len() {
                return u32::MAX;
            }
        }
        n
    }

    /// The switch host `dst` hangs off (None for a multi-homed host).
    fn edge(&self, dst: usize) -> Option<usize> {
        let sw = self.attach[dst].0;
        (sw != NONE).then_some(sw as usize)
    }

    /// Bytes the tables hold (for the scale tests).
    pub fn table_bytes(&self) -> usize {
        let detour = self.detour.as_ref().map_or(0, |d| d.group.len() * 4 + d.spans.len() * 8 + d.landing.len() * 4 + d.peer.len() * 4);
        self.spans.len() * 8
            + self.ports.len() * 4
            + self.group_of.len() * 4
            + self.attach.len() * 8
            + self.row.len() * 4
            + self.uplink.len() * 4
            + self.roots.len() * 4
            + self.root_group.len() * 4
            + detour
    }
}

/// Which paths packets take between switch groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paths {
    /// Shortest paths only (on a dragonfly: local, global, local).
    Minimal,
    /// Valiant (Valiant and Brebner, STOC 1981; on a dragonfly, Kim et al., ISCA 2008): at the
    /// first switch each packet draws a random intermediate group other than its source and
    /// destination groups and goes minimally to it, then minimally to its destination.
    Valiant,
    /// UGAL-L (Singh, Stanford PhD thesis 2005; on a dragonfly, Kim et al. 2008): at the first
    /// switch, minimal unless the Valiant detour drawn for the packet looks faster by the
    /// local queues: Valiant iff q_val x H_val < q_min x H_min, q the bytes queued at the
    /// first switch's egress port on each path (the emptiest of its equal-cost ports), H the
    /// path's switch-to-switch hops.
    Ugal,
}

/// Non-minimal routing over switch groups: where a detour through a group enters it.
struct Detour {
    paths: Paths,
    /// Per node: its switch group (NONE for hosts).
    group: Vec<u32>,
    groups: u32,
    /// Per (group f, group t): the switches of t at the end of a link from f that are roots of
    /// the tables (a detour aims at one), spans into `landing`.
    spans: Vec<(u32, u32)>,
    landing: Vec<u32>,
    /// Per port: the node at its far end (to count hops).
    peer: Vec<u32>,
}

impl Detour {
    fn new(paths: Paths, group: &[u32], peer_node: &[usize], root_group: &[u32]) -> Detour {
        let groups = group.iter().filter(|&&g| g != NONE).max().map_or(0, |&g| g + 1);
        let g = groups as usize;
        // Ports come in pairs, 2i and 2i + 1 the two ends of link i.
        let mut pairs: Vec<Vec<u32>> = vec![Vec::new(); g * g];
        for l in 0..peer_node.len() / 2 {
            let (x, y) = (peer_node[2 * l + 1], peer_node[2 * l]);
            let (gx, gy) = (group[x], group[y]);
            if gx == NONE || gy == NONE || gx == gy {
                continue;
            }
            for (from, to, node) in [(gx, gy, y), (gy, gx, x)] {
                let v = &mut pairs[from as usize * g + to as usize];
                if root_group[node] != NONE && !v.contains(&(node as u32)) {
                    v.push(node as u32);
                }
            }
        }
        let mut spans = Vec::with_capacity(g * g);
        let mut landing = Vec::new();
        for v in pairs {
            spans.push((landing.len() as u32, v.len() as u32));
            landing.extend(v);
        }
        let peer = peer_node.iter().map(|&n| n as u32).collect();
        Detour { paths, group: group.to_vec(), groups, spans, landing, peer }
    }

    /// The detour of a packet at its first switch `node`: the node it goes through, or
    /// [`NO_VIA`] (which is [`NONE`]).
    #[allow(clippy::too_many_arguments)]
    fn choose(&self, routes: &Routes, node: usize, dst: usize, entropy: u64, router: &mut Router, now: Time, depth: &dyn Fn(u32) -> u64) -> u32 {
        let Some(edge) = routes.edge(dst) else { return NONE };
        let (from, to) = (self.group[node], self.group[edge]);
        if from == NONE || to == NONE || from == to || self.groups < 3 {
            return NONE;
        }
        router.detour(entropy, now, |r| {
            // A group other than `from` and `to`, uniformly.
            let mut t = (r % (self.groups as u64 - 2)) as u32;
            for skip in [from.min(to), from.max(to)] {
                if t >= skip {
                    t += 1;
                }
            }
            let (start, len) = self.spans[(from * self.groups + t) as usize];
            if len == 0 {
                return NONE;
            }
            let via = self.landing[(start + ((r >> 32) % len as u64) as u32) as usize];
            if self.paths == Paths::Ugal {
                let dst_group = routes.group_of[dst];
                let q = |c: &[u32]| c.iter().map(|&p| depth(p)).min().unwrap_or(u64::MAX);
                let q_min = q(routes.candidates(node, dst));
                let q_val = q(routes.toward(node, routes.root_group[via as usize]));
                let h_min = routes.hops(&self.peer, node, dst_group) as u64;
                let h_val = routes.hops(&self.peer, node, routes.root_group[via as usize]) as u64 + routes.hops(&self.peer, via as usize, dst_group) as u64;
                if q_val.saturating_mul(h_val) >= q_min.saturating_mul(h_min) {
                    return NONE;
                }
            }
            via
        })
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
    /// Detours by hashed flow under flowlets: (time of the last packet, the detour's node + 1,
    /// 0 = empty); allocated at the first detour (only first switches choose them).
    detours: Vec<(Time, u64)>,
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
        Router { policy, salt, rng, round_robin: 0, flowlets, walks, detours: Vec::new() }
    }

    /// A packet's detour, `choose(r)` given random bits `r`, at the granularity of the policy:
    /// per flowlet under flowlets (kept while the flow's packets are at most `gap` apart), by
    /// the packet's entropy under ECMP (so per flow with per-flow entropy, as ECMP's port),
    /// and per packet under spraying.
    pub fn detour(&mut self, entropy: u64, now: Time, choose: impl FnOnce(u64) -> u32) -> u32 {
        match self.policy {
            Policy::Flowlet { gap, entries } => {
                if self.detours.is_empty() {
                    self.detours = vec![(Time::ZERO, 0); entries.max(1).next_power_of_two() as usize];
                }
                let slot = (mix64(entropy ^ self.salt ^ DETOUR_SALT) as usize) & (self.detours.len() - 1);
                let (last, choice) = self.detours[slot];
                let via = if choice == 0 || now.saturating_sub(last) > gap { choose(self.rng.next_u64()) } else { (choice - 1) as u32 };
                self.detours[slot] = (now, via as u64 + 1);
                via
            }
            Policy::Ecmp => choose(mix64(entropy ^ self.salt ^ DETOUR_SALT)),
            Policy::SprayRoundRobin | Policy::SprayRandom | Policy::SprayPermutation { .. } => choose(self.rng.next_u64()),
        }
    }

    /// Under ECMP, the port a packet with this entropy takes among `candidates` (not empty):
    /// a pure function of the entropy and this switch, so a path can be worked out ahead of
    /// the packets (ExpressPass's symmetric paths, `World::symmetric_entropy`). None under
    /// any other policy.
    pub fn ecmp_port(&self, candidates: &[u32], entropy: u64) -> Option<usize> {
        (self.policy == Policy::Ecmp).then(|| candidates[(mix64(entropy ^ self.salt) % candidates.len() as u64) as usize] as usize)
    }

    /// Picks one of `candidates` (not empty) for a packet with this entropy at time `now`.
    pub fn pick(&mut self, candidates: &[u32], entropy: u64, now: Time) -> usize {
        let len = candidates.len() as u64;
        if len == 1 {
            return candidates[0] as usize;
        }
        let i = match self.policy {
            Policy::Ecmp => return self.ecmp_port(candidates, entropy).expect("ECMP"),
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

/// Keeps a detour's hash apart from the port's (ECMP, flowlet slots).
const DETOUR_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

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
        let r = Routes::build(&node_ports, &peer, &is_host, &[]);
        assert_eq!(r.groups, 1);
        assert_eq!(r.candidates(0, 17), &[(17 - 1) * 2]);
        assert_eq!(r.candidates(5, 17), &[(5 - 1) * 2 + 1]);
        assert!(r.table_bytes() < 100_000, "{}", r.table_bytes());
        // Exactly: one row (the switch; single-homed hosts have none) of 1 span, 8 B, no ports
        // in it (the switch is the group's root), group_of, row, uplink and root_group 2001 x
        // 4 B each, attach 2001 x 8 B, one root 4 B.
        assert_eq!(r.table_bytes(), 8 + 2001 * 4 * 4 + 2001 * 8 + 4);
        assert_eq!(r.candidates(5, 5), &[] as &[u32], "no way from a host to itself");
    }

    #[test]
    fn a_leafs_uplinks_toward_every_other_leaf_are_held_once() {
        // Leaf-spine: 16 spines, 64 leaves of 2 hosts. Every leaf reaches each of the 63 other
        // leaves over the same 16 uplinks: one list shared by its 63 spans, not 63 copies
        // (1,000 spines x 1,000 leaves held 10^9 port entries, 4 GB, before).
        let (spines, leaves, per_leaf) = (16, 64, 2);
        let leaf = |l: usize| spines + l;
        let host = |l: usize, h: usize| spines + leaves + l * per_leaf + h;
        let mut links = Vec::new();
        for l in 0..leaves {
            for s in 0..spines {
                links.push((leaf(l), s));
            }
            for h in 0..per_leaf {
                links.push((leaf(l), host(l, h)));
            }
        }
        let hosts: Vec<usize> = (0..leaves).flat_map(|l| (0..per_leaf).map(move |h| host(l, h))).collect();
        let r = routes(spines + leaves + leaves * per_leaf, &links, &hosts);
        // Still every spine from a leaf toward another leaf's host, and one port from a spine.
        assert_eq!(r.candidates(leaf(0), host(5, 1)).len(), spines);
        assert_eq!(r.candidates(leaf(7), host(0, 0)), r.candidates(leaf(7), host(63, 1)));
        assert_eq!(r.candidates(3, host(9, 0)).len(), 1);
        // A leaf's list once, a spine's port per leaf: leaves x spines + spines x leaves.
        assert_eq!(r.ports.len(), leaves * spines + spines * leaves, "{}", r.ports.len());
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
        Routes::build(&node_ports, &peer, &is_host, &[])
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
