//! Topologies: named nodes and full-duplex links, built from a scenario's `[topology]`.
//!
//! Builders: one switch, a two-tier leaf-spine, a three-tier Clos ([`Clos`]) of which the
//! k-ary fat-tree is a case, and the dragonfly ([`Dragonfly`]). Node ids follow the HPCC ns-3 files: hosts first (`h0..`), then
//! the switches tier by tier, so a host's id is its index and a flow file written for the same
//! network names the same hosts.

use crate::sim::units::{Rate, Time};

/// Most hosts a network may have, whatever describes it (a kind's counts or a file).
pub const MAX_HOSTS: usize = 100_000;
/// Most nodes (hosts and switches) and links of a network read from a file.
pub const MAX_NODES: usize = 1_000_000;
pub const MAX_LINKS: usize = 4_000_000;
/// Slowest link rate: below it a packet takes seconds to serialise and flows never finish.
pub const MIN_LINK_RATE: Rate = Rate(1_000_000);
/// Fastest link rate: 10 Tbps, six times today's fastest Ethernet (1.6 Tbps). Above it the
/// smallest frames come every few picoseconds and a run simulates almost no time per second.
pub const MAX_LINK_RATE: Rate = Rate(10_000_000_000_000);
/// Longest propagation delay of one link (a light-second; times stay far from overflow).
pub const MAX_LINK_DELAY: Time = Time(1_000_000_000_000);
/// Most (node, destination group) entries the forwarding tables may hold (8 B each, so
/// 400 MB): see [`Topology::routing_entries`].
pub const MAX_ROUTING_ENTRIES: u64 = 50_000_000;
/// Most steps building the forwarding tables may take: a search over every port end per
/// destination group ([`Topology::routing_work`]). 4 x 10^9 is about a minute of set-up on
/// one core (a leaf-spine of 1,000 spines and 1,000 leaves, 2 x 10^9, built in 27 s); a
/// k = 64 fat-tree takes 8 x 10^8. Within every per-item limit, 1,000 spines, 4,000 leaves
/// and 25 hosts a leaf took 3.3 x 10^10, over ten minutes before the first packet.
pub const MAX_ROUTING_WORK: u64 = 4_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A full-duplex link between nodes `a` and `b`, the same rate, delay and random loss (of
/// every packet, as HPCC ns-3's per-link error rate) both ways.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub rate: Rate,
    pub delay: Time,
    pub loss: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Switch groups, if the network has them (a dragonfly's groups): per node, the group of
    /// a switch, [`NO_GROUP`] for a host. Empty when the network has none. Non-minimal routing
    /// ([`crate::net::routing::Detour`]) detours through another group.
    pub groups: Vec<u32>,
    /// Node names to ids, built on the first [`Topology::find`] (a scenario names hosts by
    /// the million: a walk over every node per name was quadratic). The builders fill
    /// `nodes` before anyone looks a name up; an index that no longer covers every node is
    /// not trusted.
    names: std::sync::OnceLock<std::collections::HashMap<String, usize>>,
    /// Per node, its links (indices into `links`), built on first use.
    node_links: std::sync::OnceLock<(usize, Vec<Vec<usize>>)>,
}

/// A node in no switch group (a host, or any node of a network without groups).
pub const NO_GROUP: u32 = u32::MAX;

impl Topology {
    fn add(&mut self, name: String, kind: NodeKind) -> usize {
        self.nodes.push(NodeSpec { name, kind });
        self.nodes.len() - 1
    }

    fn link(&mut self, a: usize, b: usize, rate: Rate, delay: Time) {
        self.links.push(LinkSpec { a, b, rate, delay, loss: 0.0 });
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        let names = self.names.get_or_init(|| {
            let mut names = std::collections::HashMap::with_capacity(self.nodes.len());
            for (i, n) in self.nodes.iter().enumerate() {
                names.entry(n.name.clone()).or_insert(i);
            }
            names
        });
        if names.len() == self.nodes.len() {
            names.get(name).copied()
        } else {
            // Duplicate names (a file may give two nodes one name) or nodes added since: the
            // first node of that name, as before.
            self.nodes.iter().position(|n| n.name == name)
        }
    }

    /// The link between nodes `a` and `b` (either way round), if any: through the link lists
    /// per node ([`Topology::links_of`]), not a walk over every link.
    pub fn link_between(&self, a: usize, b: usize) -> Option<&LinkSpec> {
        let joins = |l: &&LinkSpec| (l.a == a && l.b == b) || (l.a == b && l.b == a);
        if self.node_links.get().is_some_and(|(count, _)| *count != self.links.len()) {
            return self.links.iter().find(joins); // links added since the lists were built
        }
        self.links_of(a).iter().map(|&i| &self.links[i]).find(joins)
    }

    /// The links of node `n`, by index into `links`, in link order. Built on first use.
    pub fn links_of(&self, n: usize) -> &[usize] {
        let (_, lists) = self.node_links.get_or_init(|| {
            let mut lists = vec![Vec::new(); self.nodes.len()];
            for (i, l) in self.links.iter().enumerate() {
                if let Some(v) = lists.get_mut(l.a) {
                    v.push(i);
                }
                if l.b != l.a {
                    if let Some(v) = lists.get_mut(l.b) {
                        v.push(i);
                    }
                }
            }
            (self.links.len(), lists)
        });
        lists.get(n).map_or(&[], Vec::as_slice)
    }

    /// The node that owns port `port`: ports are numbered two per link in link order, `2i` at
    /// link `i`'s `a` end and `2i + 1` at its `b` end (as [`crate::world::Simulation`] builds
    /// them; the observer's `port` arguments use these numbers).
    pub fn port_node(&self, port: usize) -> Option<usize> {
        let l = self.links.get(port / 2)?;
        Some(if port.is_multiple_of(2) { l.a } else { l.b })
    }

    /// Ports, numbered as [`Topology::port_node`] says.
    pub fn port_count(&self) -> usize {
        2 * self.links.len()
    }

    pub fn hosts(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes.iter().enumerate().filter(|(_, n)| n.kind == NodeKind::Host).map(|(i, _)| i)
    }

    /// The port of node `a` toward node `b`, numbered as [`Topology::port_node`] says, if a
    /// link joins them.
    pub fn port_toward(&self, a: usize, b: usize) -> Option<usize> {
        let i = *self.links_of(a).iter().find(|&&i| {
            let l = &self.links[i];
            (l.a == a && l.b == b) || (l.a == b && l.b == a)
        })?;
        Some(if self.links[i].a == a { 2 * i } else { 2 * i + 1 })
    }

    /// The tier of every port (a direction of a link), as the network defines it: `host-up`
    /// (a host's port), `host-down` (a port toward a host); between switches, `local` and
    /// `global` in a network of switch groups (a dragonfly: within a group or between two),
    /// else the two ends' roles, their names without the trailing number (`leaf-spine`,
    /// `spine-leaf`, `tor-agg`, `agg-core`, `core-agg`, `agg-tor`), or, where both ends share
    /// a role (an HPCC file's `sw..`), their levels, hops from the nearest host
    /// (`level1-level2`). Returns the tier names in the order their first port comes, and per
    /// port the index of its tier.
    pub fn port_tiers(&self) -> (Vec<String>, Vec<u16>) {
        let role = |n: usize| self.nodes[n].name.trim_end_matches(|c: char| c.is_ascii_digit());
        let mut levels: Option<Vec<u32>> = None;
        let mut names: Vec<String> = Vec::new();
        let mut index: std::collections::HashMap<String, u16> = std::collections::HashMap::new();
        let mut tier_of = Vec::with_capacity(self.port_count());
        for port in 0..self.port_count() {
            let l = &self.links[port / 2];
            let (a, b) = if port.is_multiple_of(2) { (l.a, l.b) } else { (l.b, l.a) };
            let host = |n: usize| self.nodes[n].kind == NodeKind::Host;
            let name = if host(a) {
                "host-up".to_string()
            } else if host(b) {
                "host-down".to_string()
            } else if !self.groups.is_empty() {
                if self.groups.get(a) == self.groups.get(b) { "local" } else { "global" }.to_string()
            } else if role(a) != role(b) && !role(a).is_empty() && !role(b).is_empty() {
                format!("{}-{}", role(a), role(b))
            } else {
                let lv = levels.get_or_insert_with(|| self.switch_levels());
                format!("level{}-level{}", lv[a], lv[b])
            };
            let next = names.len() as u16;
            let t = *index.entry(name.clone()).or_insert_with(|| {
                names.push(name);
                next
            });
            tier_of.push(t);
        }
        (names, tier_of)
    }

    /// Per node, hops from the nearest host (0 at hosts; u32::MAX where none is reached).
    fn switch_levels(&self) -> Vec<u32> {
        let mut level = vec![u32::MAX; self.nodes.len()];
        let mut frontier: std::collections::VecDeque<usize> = self.hosts().collect();
        for &h in &frontier {
            level[h] = 0;
        }
        while let Some(n) = frontier.pop_front() {
            for &i in self.links_of(n) {
                let l = &self.links[i];
                let m = if l.a == n { l.b } else { l.a };
                if level[m] == u32::MAX {
                    level[m] = level[n] + 1;
                    frontier.push_back(m);
                }
            }
        }
        level
    }

    /// The forwarding tables' destination groups (a group being the switch a single-homed
    /// host hangs off, or a host of its own) and the single-homed hosts (which forward nothing:
    /// they have one way out).
    fn destination_groups(&self) -> (u64, usize) {
        let mut degree = vec![0u32; self.nodes.len()];
        let mut peer = vec![usize::MAX; self.nodes.len()];
        for l in &self.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                degree[x] += 1;
                peer[x] = y;
            }
        }
        let mut root = vec![false; self.nodes.len()];
        let mut single_homed = 0;
        for h in self.hosts() {
            let single = degree[h] == 1 && self.nodes[peer[h]].kind == NodeKind::Switch;
            single_homed += single as usize;
            root[if single { peer[h] } else { h }] = true;
        }
        (root.iter().filter(|&&r| r).count() as u64, single_homed)
    }

    /// Entries of the forwarding tables ([`crate::net::routing::Routes`]): forwarding nodes x
    /// destination groups.
    pub fn routing_entries(&self) -> u64 {
        let (groups, single_homed) = self.destination_groups();
        groups * (self.nodes.len() - single_homed) as u64
    }

    /// The steps building the forwarding tables takes: one breadth-first search over every
    /// port end (two per link) per destination group (as [`Topology::routing_entries`]
    /// counts them).
    pub fn routing_work(&self) -> u64 {
        self.destination_groups().0.saturating_mul(2 * self.links.len() as u64)
    }

    /// Two hosts with no path between them (paths pass through switches only), if any: every
    /// host must reach every other, since runs size windows and bitmaps by the longest path.
    pub fn unreachable_pair(&self) -> Option<(usize, usize)> {
        let first = self.hosts().next()?;
        let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for l in &self.links {
            adjacent[l.a].push(l.b);
            adjacent[l.b].push(l.a);
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![first];
        seen[first] = true;
        while let Some(n) = stack.pop() {
            if n != first && self.nodes[n].kind == NodeKind::Host {
                continue;
            }
            for &m in &adjacent[n] {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        self.hosts().find(|&h| !seen[h]).map(|h| (first, h))
    }

    /// N hosts h0..h{N-1} on one switch sw0.
    pub fn single_switch(hosts: u32, link: Rate, delay: Time) -> Topology {
        let mut t = Topology::default();
        let sw = t.add("sw0".into(), NodeKind::Switch);
        for h in 0..hosts {
            let id = t.add(format!("h{h}"), NodeKind::Host);
            t.link(id, sw, link, delay);
        }
        t
    }

    /// Leaves leaf0.. each with `hosts_per_leaf` hosts (h0.. numbered leaf by leaf), every leaf
    /// wired to every spine spine0...
    pub fn leaf_spine(spines: u32, leaves: u32, hosts_per_leaf: u32, host_link: Rate, fabric: Rate, delay: Time) -> Topology {
        let mut t = Topology::default();
        let spine_ids: Vec<usize> = (0..spines).map(|s| t.add(format!("spine{s}"), NodeKind::Switch)).collect();
        for l in 0..leaves {
            let leaf = t.add(format!("leaf{l}"), NodeKind::Switch);
            for &s in &spine_ids {
                t.link(leaf, s, fabric, delay);
            }
            for h in 0..hosts_per_leaf {
                let id = t.add(format!("h{}", l * hosts_per_leaf + h), NodeKind::Host);
                t.link(id, leaf, host_link, delay);
            }
        }
        t
    }
}


/// A three-tier Clos: `pods` pods of `tors_per_pod` ToRs and `aggs_per_pod` aggregation
/// switches, `cores` core switches, `hosts_per_tor` hosts under each ToR. Every ToR connects to
/// every aggregation switch of its pod. The cores are cut into `aggs_per_pod` stripes of
/// `cores / aggs_per_pod` consecutive cores: aggregation switch i of every pod connects to
/// every core of stripe i (cores i·m .. i·m + m − 1, m = cores / aggs_per_pod), as the k-ary
/// fat-tree of Al-Fares et al. (2008) and htsim's `FatTreeTopology` do, so each core has one
/// link to every pod. `cores` must be a multiple of `aggs_per_pod` ([`Clos::validate`]).
///
/// Numbering (the HPCC ns-3 files' order): hosts `h0..` ToR by ToR, then ToRs `tor0..` pod by
/// pod, then aggregation switches `agg0..` pod by pod, then cores `core0..`; node ids in that
/// order. Links: each host to its ToR, then each ToR to its pod's aggregation switches, then
/// each aggregation switch to its stripe of cores, the lower tier at the link's `a` end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clos {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub cores: u32,
    pub hosts_per_tor: u32,
    pub host_link: Rate,
    pub tor_agg_link: Rate,
    pub agg_core_link: Rate,
    pub host_delay: Time,
    pub tor_agg_delay: Time,
    pub agg_core_delay: Time,
}

impl Clos {
    /// The k-ary fat-tree: k pods of k/2 ToRs and k/2 aggregation switches, (k/2)² cores,
    /// k/2 hosts per ToR (k³/4 hosts); every switch has k ports.
    pub fn fat_tree(k: u32, host_link: Rate, fabric_link: Rate, delay: Time) -> Clos {
        let half = k / 2;
        Clos {
            pods: k,
            tors_per_pod: half,
            aggs_per_pod: half,
            cores: half * half,
            hosts_per_tor: half,
            host_link,
            tor_agg_link: fabric_link,
            agg_core_link: fabric_link,
            host_delay: delay,
            tor_agg_delay: delay,
            agg_core_delay: delay,
        }
    }

    pub fn hosts(&self) -> u64 {
        self.pods as u64 * self.tors_per_pod as u64 * self.hosts_per_tor as u64
    }

    pub fn tors(&self) -> u64 {
        self.pods as u64 * self.tors_per_pod as u64
    }

    pub fn aggs(&self) -> u64 {
        self.pods as u64 * self.aggs_per_pod as u64
    }

    /// Cores each aggregation switch connects to.
    pub fn cores_per_agg(&self) -> u32 {
        self.cores / self.aggs_per_pod
    }

    /// The ToR oversubscription: host bandwidth under a ToR over its uplink bandwidth (1 is
    /// full bisection at the ToRs, 2 means 2:1).
    pub fn oversubscription(&self) -> f64 {
        let down = self.hosts_per_tor as f64 * self.host_link.bps() as f64;
        let up = self.aggs_per_pod as f64 * self.tor_agg_link.bps() as f64;
        down / up
    }

    /// The aggregation tier's oversubscription: an aggregation switch's ToR bandwidth over its
    /// core bandwidth.
    pub fn agg_oversubscription(&self) -> f64 {
        let down = self.tors_per_pod as f64 * self.tor_agg_link.bps() as f64;
        let up = self.cores_per_agg() as f64 * self.agg_core_link.bps() as f64;
        down / up
    }

    /// Why these counts cannot be wired: (the count at fault, what is allowed).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.aggs_per_pod == 0 || !self.cores.is_multiple_of(self.aggs_per_pod) || self.cores == 0 {
            let a = self.aggs_per_pod.max(1);
            return Err((
                "cores",
                format!(
                    "{} cannot be split evenly over aggs_per_pod = {} (each aggregation switch connects to cores / aggs_per_pod cores; allowed: a multiple of {a}: {a}, {}, {}, ...)",
                    self.cores, self.aggs_per_pod, 2 * a, 3 * a
                ),
            ));
        }
        Ok(())
    }

    /// The network, numbered as the type's documentation says. Counts must pass
    /// [`Clos::validate`].
    pub fn build(&self) -> Topology {
        let mut t = Topology::default();
        let hosts = self.hosts() as usize;
        let (tors, aggs, cores) = (self.tors() as usize, self.aggs() as usize, self.cores as usize);
        t.nodes.reserve(hosts + tors + aggs + cores);
        for h in 0..hosts {
            t.add(format!("h{h}"), NodeKind::Host);
        }
        for (prefix, n) in [("tor", tors), ("agg", aggs), ("core", cores)] {
            for i in 0..n {
                t.add(format!("{prefix}{i}"), NodeKind::Switch);
            }
        }
        let (tor0, agg0, core0) = (hosts, hosts + tors, hosts + tors + aggs);
        let (hpt, tpp, app, cpa) = (self.hosts_per_tor as usize, self.tors_per_pod as usize, self.aggs_per_pod as usize, self.cores_per_agg() as usize);
        t.links.reserve(hosts + tors * app + aggs * cpa);
        for h in 0..hosts {
            t.link(h, tor0 + h / hpt, self.host_link, self.host_delay);
        }
        for tor in 0..tors {
            let pod = tor / tpp;
            for a in 0..app {
                t.link(tor0 + tor, agg0 + pod * app + a, self.tor_agg_link, self.tor_agg_delay);
            }
        }
        for agg in 0..aggs {
            let stripe = agg % app;
            for c in 0..cpa {
                t.link(agg0 + agg, core0 + stripe * cpa + c, self.agg_core_link, self.agg_core_delay);
            }
        }
        t
    }
}

/// A dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): `groups` groups of `a` routers, `p`
/// hosts on every router, the routers of a group joined all-to-all by local links, and `h`
/// global links on every router joining the groups all-to-all.
///
/// Global links: the *absolute* arrangement (Hastings et al., "Comparing global link
/// arrangements for dragonfly networks", IEEE Cluster 2015; Camarero, Vallejo and Beivide, ACM
/// TACO 2014, call the family "consecutive"): a group's `a·h` global ports are numbered router
/// by router (port k on router k / h), and port k of group i leads to the other groups in
/// ascending order, round after round: to the (k mod (g − 1))-th group other than i. With the
/// most groups, g = a·h + 1, every pair of groups is joined by exactly one global link; with
/// fewer, g − 1 must divide a·h and every pair is joined by a·h / (g − 1) links.
///
/// The balanced dragonfly has a = 2p = 2h ([`Dragonfly::balanced`]): h = 2 gives 9 groups and
/// 72 hosts, h = 4 33 groups and 1,056 hosts, h = 8 129 groups and 16,512 hosts.
///
/// Numbering: hosts `h0..` router by router (router r of group i has hosts (i·a + r)·p ..),
/// then routers `g{i}r{r}` group by group; node ids in that order, hosts first as the other
/// builders. Links: each host to its router, then the local links group by group (router r to
/// each r' > r), then the global links, each once, from the lower group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    pub p: u32,
    pub a: u32,
    pub h: u32,
    pub groups: u32,
    pub host_link: Rate,
    pub local_link: Rate,
    pub global_link: Rate,
    pub host_delay: Time,
    pub local_delay: Time,
    pub global_delay: Time,
}

impl Dragonfly {
    /// The balanced dragonfly of `h` global links per router: a = 2h routers per group, p = h
    /// hosts per router, a·h + 1 groups.
    pub fn balanced(h: u32, host_link: Rate, local_link: Rate, global_link: Rate, delay: Time) -> Dragonfly {
        Dragonfly { p: h, a: 2 * h, h, groups: 2 * h * h + 1, host_link, local_link, global_link, host_delay: delay, local_delay: delay, global_delay: delay }
    }

    pub fn routers(&self) -> u64 {
        self.groups as u64 * self.a as u64
    }

    pub fn hosts(&self) -> u64 {
        self.routers() * self.p as u64
    }

    /// Links of every kind: hosts, local (a(a−1)/2 per group), global (g·a·h/2).
    pub fn links(&self) -> u64 {
        let (g, a, h) = (self.groups as u64, self.a as u64, self.h as u64);
        self.hosts() + g * a * a.saturating_sub(1) / 2 + g * a * h / 2
    }

    /// Ports of a router: p hosts, a − 1 local, h global.
    pub fn radix(&self) -> u32 {
        self.p + self.a - 1 + self.h
    }

    /// Why these counts cannot be wired: (the count at fault, what is allowed).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let ports = self.a as u64 * self.h as u64;
        let most = ports + 1;
        if self.groups < 2 || self.groups as u64 > most || !ports.is_multiple_of(self.groups as u64 - 1) {
            let allowed: Vec<String> = (2..=most).filter(|g| ports.is_multiple_of(g - 1)).map(|g| g.to_string()).collect();
            return Err((
                "groups",
                format!(
                    "{} groups cannot be joined all-to-all by a x h = {ports} global ports per group (groups - 1 must divide a x h; allowed: {})",
                    self.groups,
                    allowed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The node id of router `r` of group `i`.
    pub fn router(&self, group: u32, r: u32) -> usize {
        self.hosts() as usize + (group * self.a + r) as usize
    }

    /// The far end of global port `k` of group `i`: (group, its port back).
    pub fn global_peer(&self, i: u32, k: u32) -> (u32, u32) {
        let others = self.groups - 1;
        let (round, idx) = (k / others, k % others);
        let j = if idx < i { idx } else { idx + 1 };
        let back = if i < j { i } else { i - 1 };
        (j, round * others + back)
    }

    /// The network, numbered as the type's documentation says. Counts must pass
    /// [`Dragonfly::validate`].
    pub fn build(&self) -> Topology {
        let mut t = Topology::default();
        let (hosts, routers) = (self.hosts() as usize, self.routers() as usize);
        t.nodes.reserve(hosts + routers);
        t.links.reserve(self.links() as usize);
        for x in 0..hosts {
            t.add(format!("h{x}"), NodeKind::Host);
        }
        for i in 0..self.groups {
            for r in 0..self.a {
                t.add(format!("g{i}r{r}"), NodeKind::Switch);
            }
        }
        t.groups = vec![NO_GROUP; hosts];
        t.groups.extend((0..routers).map(|x| x as u32 / self.a));
        for x in 0..hosts {
            t.link(x, hosts + x / self.p as usize, self.host_link, self.host_delay);
        }
        for i in 0..self.groups {
            for r in 0..self.a {
                for r2 in r + 1..self.a {
                    t.link(self.router(i, r), self.router(i, r2), self.local_link, self.local_delay);
                }
            }
        }
        for i in 0..self.groups {
            for k in 0..self.a * self.h {
                let (j, back) = self.global_peer(i, k);
                if i < j {
                    t.link(self.router(i, k / self.h), self.router(j, back / self.h), self.global_link, self.global_delay);
                }
            }
        }
        t
    }
}
