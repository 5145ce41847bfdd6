//! The path model: what a flow's equal-cost paths offer on an empty network. Base RTT and BDP
//! size receive bitmaps and on-chip memory (the longest path counts); the ideal FCT is the best
//! any path allows (the slowdown's denominator).
//!
//! A path's figures mix sums (propagation, per-hop serialization) with a minimum (the
//! bottleneck rate), so they are found by a walk over the routing DAG that keeps, per
//! bottleneck rate, the smallest and largest sum to the destination: exact over every path,
//! and small because a network has few distinct link rates.

use super::port::Port;
use super::routing::Routes;
use crate::sim::units::{Rate, Time};
use std::collections::HashMap;

/// Figures of the paths from one host to another that share a bottleneck rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathClass {
    pub bottleneck: Rate,
    /// Smallest and largest sum over the class's paths of the per-hop cost.
    pub min: Time,
    pub max: Time,
}

/// Walks the shortest-path DAG from `src`'s port to host `dst`, adding `hop(port)` per hop.
/// Returns one entry per distinct bottleneck rate.
pub fn classes(ports: &[Port], routes: &Routes, src_port: usize, dst: usize, hop: &dyn Fn(&Port) -> Time) -> Vec<PathClass> {
    // One walk per flow when a run is built (a million flows, a million walks): the memo is
    // an array by port reused across walks (a stamp per walk marks its entries), not a hash
    // map built and dropped per walk (a 1,024-host all-to-all spent ~10 s hashing ports).
    SCRATCH.with(|cell| {
        let mut memo = cell.take();
        memo.begin(ports.len());
        let out = from_port(ports, routes, src_port, dst, hop, &mut memo);
        cell.set(memo);
        out
    })
}

thread_local! {
    static SCRATCH: std::cell::Cell<Memo> = std::cell::Cell::new(Memo::default());
}

/// The path classes found from each port in the current walk.
#[derive(Default)]
struct Memo {
    walk: u32,
    /// Per port: the walk that filled its entry.
    stamp: Vec<u32>,
    classes: Vec<Vec<PathClass>>,
}

impl Memo {
    fn begin(&mut self, ports: usize) {
        if self.stamp.len() < ports {
            self.stamp.resize(ports, 0);
            self.classes.resize(ports, Vec::new());
        }
        self.walk = self.walk.wrapping_add(1);
        if self.walk == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.walk = 1;
        }
    }

    fn get(&self, p: usize) -> Option<&Vec<PathClass>> {
        (self.stamp[p] == self.walk).then(|| &self.classes[p])
    }

    fn insert(&mut self, p: usize, v: &[PathClass]) {
        self.stamp[p] = self.walk;
        self.classes[p].clear();
        self.classes[p].extend_from_slice(v);
    }
}

fn from_port(ports: &[Port], routes: &Routes, p: usize, dst: usize, hop: &dyn Fn(&Port) -> Time, memo: &mut Memo) -> Vec<PathClass> {
    if let Some(v) = memo.get(p) {
        return v.clone();
    }
    let port = &ports[p];
    let cost = hop(port);
    let mut out: Vec<PathClass> = Vec::new();
    if port.peer_node == dst {
        out.push(PathClass { bottleneck: port.rate, min: cost, max: cost });
    } else {
        for &next in routes.candidates(port.peer_node, dst) {
            add_hop(&mut out, from_port(ports, routes, next as usize, dst, hop, memo), port.rate, cost);
        }
    }
    memo.insert(p, &out);
    out
}

/// The classes of the paths beyond a port, seen from before it: each one's bottleneck capped by
/// the port's `rate` and `cost` added, merged into `out` by bottleneck (keeping the shortest and
/// longest).
fn add_hop(out: &mut Vec<PathClass>, beyond: impl IntoIterator<Item = PathClass>, rate: Rate, cost: Time) {
    for c in beyond {
        let b = c.bottleneck.min(rate);
        let (lo, hi) = (c.min + cost, c.max + cost);
        match out.iter_mut().find(|x| x.bottleneck == b) {
            Some(x) => {
                x.min = x.min.min(lo);
                x.max = x.max.max(hi);
            }
            None => out.push(PathClass { bottleneck: b, min: lo, max: hi }),
        }
    }
}

/// One-way propagation delay over the paths (every equal-cost path of a Clos has the same
/// hop count; the smallest is returned).
pub fn propagation(ports: &[Port], routes: &Routes, src_port: usize, dst: usize) -> Time {
    classes(ports, routes, src_port, dst, &|p| p.delay).iter().map(|c| c.min).min().expect("a path has a hop")
}

/// FCT on an empty network over the best path: the first packet crosses every hop store and
/// forward, the rest follow at the bottleneck rate, the last ACK comes back (its serialization
/// ignored). This is HPCC ns-3's `standalone_fct` (base RTT + all bytes / bottleneck) with the
/// first packet's real size in place of a full MTU, so a flow smaller than an MTU is not given
/// an ideal it could never be slower than.
pub fn ideal_fct(ports: &[Port], routes: &Routes, src_port: usize, dst: usize, first: u64, total: u64) -> Time {
    classes(ports, routes, src_port, dst, &|p| p.delay + p.delay + p.rate.serialization(first))
        .iter()
        .map(|c| c.min + c.bottleneck.serialization(total - first))
        .min()
        .expect("a path has a hop")
}

/// The longest round trip over the paths, with a hop cost of `hop(port)` on the way out
/// (propagation both ways included), and the bottleneck rate of that path class. With
/// non-minimal routing every detour's path counts too (the way back taken as long as the
/// way out).
pub fn longest_round_trip(ports: &[Port], routes: &Routes, src_port: usize, dst: usize, hop: &dyn Fn(&Port) -> Time) -> (Time, Rate) {
    let cost = |p: &Port| p.delay + p.delay + hop(p);
    let mut all = classes(ports, routes, src_port, dst, &cost);
    let detours = routes.detours(ports[src_port].peer_node, dst);
    if !detours.is_empty() {
        let mut minimal = Memo::default();
        minimal.begin(ports.len());
        for via in detours {
            let mut memo: HashMap<usize, Vec<PathClass>> = HashMap::new();
            all.extend(detour_from_port(ports, routes, src_port, dst, via, &cost, &mut memo, &mut minimal));
        }
    }
    all.iter().map(|c| (c.max, c.bottleneck)).max().expect("a path has a hop")
}

/// Path classes from port `p` on a detour through `via` (ended where the packet enters its
/// group, minimal from there on) to host `dst`.
#[allow(clippy::too_many_arguments)]
fn detour_from_port(
    ports: &[Port],
    routes: &Routes,
    p: usize,
    dst: usize,
    via: u32,
    hop: &dyn Fn(&Port) -> Time,
    memo: &mut HashMap<usize, Vec<PathClass>>,
    minimal: &mut Memo,
) -> Vec<PathClass> {
    if let Some(v) = memo.get(&p) {
        return v.clone();
    }
    let port = &ports[p];
    let cost = hop(port);
    let next: Vec<PathClass> = match routes.detour_step(port.peer_node, via) {
        Some(toward) => toward.iter().flat_map(|&n| detour_from_port(ports, routes, n as usize, dst, via, hop, memo, minimal)).collect(),
        None => routes.candidates(port.peer_node, dst).iter().flat_map(|&n| from_port(ports, routes, n as usize, dst, hop, minimal)).collect(),
    };
    let mut out: Vec<PathClass> = Vec::new();
    add_hop(&mut out, next, port.rate, cost);
    memo.insert(p, out.clone());
    out
}
