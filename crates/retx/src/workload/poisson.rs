//! Poisson flow arrivals at a target load, sizes from a CDF table.
//!
//! Each sending host is one Poisson source with mean inter-arrival
//! `mean_size * 8 / (load * host_rate)`, the HPCC `traffic_gen.py` rule, where `mean_size` is
//! [`FlowSizeCdf::mean`] under the sampler's own interpolation. A source draws its gaps, sizes
//! and destinations from three streams of its own (`FlowArrivals`, `FlowSizes`, `Workload`,
//! indexed by the host's node id), so adding a sender changes no other sender's flows.
//! Sources are merged by time; a flow count cap keeps the earliest flows of the merge.

use super::cdf::FlowSizeCdf;
use super::FlowDef;
use crate::net::topology::Topology;
use crate::sim::rng::{self, Rng, Stream};
use crate::sim::units::{Rate, Time};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// One sending host and the hosts its flows go to (one picked uniformly per flow).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub src: usize,
    pub dsts: Dsts,
}

/// Where a source sends, each flow to one of them uniformly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dsts {
    /// These hosts.
    List(Vec<usize>),
    /// Every host of `hosts` but the one at `me`: the host list shared by all sources, not a
    /// copy per source (those would be n^2 entries: 34 GB at 65,536 hosts).
    AllBut { hosts: std::sync::Arc<[usize]>, me: usize },
}

impl Dsts {
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match self {
            Dsts::List(v) => v.len(),
            Dsts::AllBut { hosts, .. } => hosts.len() - 1,
        }
    }

    /// The `k`-th destination, in host order.
    pub fn get(&self, k: usize) -> usize {
        match self {
            Dsts::List(v) => v[k],
            Dsts::AllBut { hosts, me } => hosts[if k < *me { k } else { k + 1 }],
        }
    }

    pub fn to_vec(&self) -> Vec<usize> {
        (0..self.len()).map(|k| self.get(k)).collect()
    }
}

/// What to generate, for every source.
#[derive(Clone, Debug)]
pub struct Arrivals<'a> {
    pub cdf: &'a FlowSizeCdf,
    /// Fraction of each sender's host link rate.
    pub load: f64,
    pub start: Time,
    /// Arrivals at or after this time are dropped.
    pub until: Option<Time>,
    /// At most this many flows in total.
    pub max_flows: Option<u64>,
    pub seed: u64,
}

/// The rate of a host's (only) link.
pub fn host_rate(topo: &Topology, host: usize) -> Rate {
    topo.links[*topo.links_of(host).first().expect("every host has a link")].rate
}

/// Mean time between a source's arrivals, in picoseconds.
pub fn mean_gap_ps(mean_size: f64, load: f64, rate: Rate) -> f64 {
    mean_size * 8.0 / (load * rate.0 as f64) * 1e12
}

/// Sources for `pairing = "pairs"`: one per distinct sending host, in order of first mention.
pub fn sources_from_pairs(pairs: &[(usize, usize)]) -> Vec<Source> {
    // Indexed (source -> its place; (source, destination) seen): a list of a million pairs
    // was quadratic when each pair walked the sources and their destinations.
    let mut out: Vec<Source> = Vec::new();
    let mut at: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut seen: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
    for &(a, b) in pairs {
        if !seen.insert((a, b)) {
            continue;
        }
        match at.get(&a) {
            Some(&i) => {
                if let Source { dsts: Dsts::List(d), .. } = &mut out[i] {
                    d.push(b);
                }
            }
            None => {
                at.insert(a, out.len());
                out.push(Source { src: a, dsts: Dsts::List(vec![b]) });
            }
        }
    }
    out
}

/// Sources for `pairing = "random"`: every host of `hosts` (all the topology's, or a job's), to
/// every other one.
pub fn sources_random(hosts: &[usize]) -> Vec<Source> {
    let hosts: std::sync::Arc<[usize]> = hosts.into();
    hosts.iter().enumerate().map(|(me, &h)| Source { src: h, dsts: Dsts::AllBut { hosts: hosts.clone(), me } }).collect()
}

/// Sources for `pairing = "cross-leaf-halves"` (MELO Fig. 5b, "half of the servers send to the
/// other half across leaves"): hosts are grouped by the switch they attach to (their leaf),
/// leaves in node order; the k-th host of leaf l sends to the k-th host of leaf l + L/2. On a
/// leaf-spine with hosts numbered leaf by leaf that is host i -> host i + N/2.
pub fn sources_cross_leaf_halves(topo: &Topology) -> Result<Vec<Source>, String> {
    let mut leaves: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for h in topo.hosts() {
        let l = &topo.links[*topo.links_of(h).first().expect("every host has a link")];
        leaves.entry(if l.a == h { l.b } else { l.a }).or_default().push(h);
    }
    let leaves: Vec<Vec<usize>> = leaves.into_values().collect();
    if leaves.len() < 2 || !leaves.len().is_multiple_of(2) {
        return Err(format!(
            "\"cross-leaf-halves\" needs a leaf-spine topology with an even number of leaves (this one has {})",
            leaves.len()
        ));
    }
    let half = leaves.len() / 2;
    let mut out = Vec::new();
    for (a, b) in leaves[..half].iter().zip(&leaves[half..]) {
        if a.len() != b.len() {
            return Err("\"cross-leaf-halves\" needs the same number of hosts on every leaf".into());
        }
        out.extend(a.iter().zip(b).map(|(&s, &d)| Source { src: s, dsts: Dsts::List(vec![d]) }));
    }
    Ok(out)
}

/// The expected number of flows from `start` to `until` over all sources.
pub fn expected_flows(topo: &Topology, sources: &[Source], mean_size: f64, load: f64, span: Time) -> f64 {
    sources.iter().map(|s| span.0 as f64 / mean_gap_ps(mean_size, load, host_rate(topo, s.src))).sum()
}

/// One source's flows, in time order.
struct Gen<'a> {
    src: usize,
    dsts: &'a Dsts,
    mean_gap_ps: f64,
    next: Time,
    arrivals: Rng,
    sizes: Rng,
    dests: Rng,
}

impl Gen<'_> {
    fn advance(&mut self) {
        let gap = self.arrivals.exponential(self.mean_gap_ps).round() as u64;
        self.next = Time(self.next.0.saturating_add(gap));
    }

    fn flow(&mut self, cdf: &FlowSizeCdf) -> FlowDef {
        let size = cdf.sample(&mut self.sizes);
        let k = if self.dsts.len() == 1 { 0 } else { ((self.dests.uniform() * self.dsts.len() as f64) as usize).min(self.dsts.len() - 1) };
        FlowDef::new(self.src, self.dsts.get(k), size, self.next)
    }
}

/// The flows of all sources, merged by start time (ties by source order).
pub fn generate(topo: &Topology, sources: &[Source], a: &Arrivals) -> Vec<FlowDef> {
    let mean = a.cdf.mean();
    let mut gens: Vec<Gen> = sources
        .iter()
        .map(|s| {
            let id = s.src as u64;
            let mut g = Gen {
                src: s.src,
                dsts: &s.dsts,
                mean_gap_ps: mean_gap_ps(mean, a.load, host_rate(topo, s.src)),
                next: a.start,
                arrivals: rng::stream(a.seed, Stream::FlowArrivals, id),
                sizes: rng::stream(a.seed, Stream::FlowSizes, id),
                dests: rng::stream(a.seed, Stream::Workload, id),
            };
            g.advance();
            g
        })
        .collect();
    let until = a.until.unwrap_or(Time::MAX);
    let cap = a.max_flows.unwrap_or(u64::MAX);
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> =
        gens.iter().enumerate().filter(|(_, g)| g.next < until).map(|(i, g)| Reverse((g.next, i))).collect();
    let mut out = Vec::new();
    while (out.len() as u64) < cap {
        let Some(Reverse((_, i))) = heap.pop() else { break };
        let g = &mut gens[i];
        out.push(g.flow(a.cdf));
        g.advance();
        if g.next < until {
            heap.push(Reverse((g.next, i)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::cdf::Interpolation;

    fn leaf_spine(leaves: u32, per_leaf: u32) -> Topology {
        Topology::leaf_spine(2, leaves, per_leaf, Rate::gbps(40), Rate::gbps(100), Time::from_us(1))
    }

    fn arrivals(cdf: &FlowSizeCdf, load: f64, until: Option<Time>, max_flows: Option<u64>) -> Arrivals<'_> {
        Arrivals { cdf, load, start: Time::from_us(10), until, max_flows, seed: 42 }
    }

    /// Offered load of `flows` over [start, until] relative to the senders' total rate.
    fn offered(topo: &Topology, flows: &[FlowDef], senders: &[Source], span: Time) -> f64 {
        let bits: f64 = flows.iter().map(|f| f.size as f64 * 8.0).sum();
        let rate: f64 = senders.iter().map(|s| host_rate(topo, s.src).0 as f64).sum();
        bits / (rate * span.as_secs_f64())
    }

    #[test]
    fn offered_load_matches_target() {
        // 16 senders at 40 Gbps, web search (CV of size 2.3), load 0.5, 10 s: about 234k flows.
        // The relative sd of the total bytes of a compound Poisson sum is
        // sqrt((1 + CV^2) / n) = 0.52 %, so 3 % is about 6 sd.
        let topo = leaf_spine(4, 8);
        let src = sources_cross_leaf_halves(&topo).unwrap();
        for (name, i) in [("websearch_hpcc", Interpolation::Linear), ("websearch_hpcc", Interpolation::Step)] {
            let cdf = FlowSizeCdf::builtin(name, i).unwrap();
            let a = arrivals(&cdf, 0.5, Some(Time::from_ms(10_010)), None);
            let flows = generate(&topo, &src, &a);
            let load = offered(&topo, &flows, &src, Time::from_ms(10_000));
            assert!((load / 0.5 - 1.0).abs() < 0.03, "{name} {i}: offered {load}, {} flows", flows.len());
            assert!(flows.iter().all(|f| f.start >= a.start && f.start < Time::from_ms(10_010)));
            assert!(flows.windows(2).all(|w| w[0].start <= w[1].start), "sorted by start");
        }
        // One sender (Go-Back-ONE's node 0 -> node 1), FB_Hadoop (CV 5.6) at 30 % of 40 Gbps:
        // a flow every 80 us, so 100 s is 1.25M flows and sd sqrt(32 / 1.25M) = 0.5 %.
        let cdf = FlowSizeCdf::builtin("fb_hadoop_hpcc", Interpolation::Linear).unwrap();
        let src = sources_from_pairs(&[(topo.find("h0").unwrap(), topo.find("h1").unwrap())]);
        let a = arrivals(&cdf, 0.3, Some(Time::from_ms(100_010)), None);
        let flows = generate(&topo, &src, &a);
        let load = offered(&topo, &flows, &src, Time::from_ms(100_000));
        assert!((load / 0.3 - 1.0).abs() < 0.03, "fb_hadoop: offered {load}, {} flows", flows.len());
    }

    #[test]
    fn deterministic_and_senders_independent() {
        let topo = leaf_spine(2, 4);
        let cdf = FlowSizeCdf::builtin("fb_hadoop_hpcc", Interpolation::Linear).unwrap();
        let a = arrivals(&cdf, 0.5, Some(Time::from_ms(5)), None);
        let h = |n: &str| topo.find(n).unwrap();
        let one = sources_from_pairs(&[(h("h0"), h("h4"))]);
        let two = sources_from_pairs(&[(h("h0"), h("h4")), (h("h1"), h("h5"))]);
        let f1 = generate(&topo, &one, &a);
        assert_eq!(f1, generate(&topo, &one, &a), "same inputs, same flows");
        let f2 = generate(&topo, &two, &a);
        let h0_flows: Vec<FlowDef> = f2.iter().copied().filter(|f| f.src == h("h0")).collect();
        assert_eq!(f1, h0_flows, "adding h1 as a sender leaves h0's flows alone");
        assert!(f2.len() > f1.len());
        let other_seed = Arrivals { seed: 43, ..a.clone() };
        assert_ne!(f1, generate(&topo, &one, &other_seed));
    }

    #[test]
    fn flow_cap_keeps_the_earliest() {
        let topo = leaf_spine(2, 4);
        let cdf = FlowSizeCdf::builtin("websearch_hpcc", Interpolation::Linear).unwrap();
        let src = sources_random(&topo.hosts().collect::<Vec<_>>());
        let all = generate(&topo, &src, &arrivals(&cdf, 0.5, Some(Time::from_ms(50)), None));
        let capped = generate(&topo, &src, &arrivals(&cdf, 0.5, Some(Time::from_ms(50)), Some(100)));
        assert_eq!(capped.len(), 100);
        assert_eq!(capped[..], all[..100]);
        let no_until = generate(&topo, &src, &arrivals(&cdf, 0.5, None, Some(100)));
        assert_eq!(capped, no_until);
    }

    #[test]
    fn pairings() {
        // 4 leaves x 3 hosts: h0..h5 send to h6..h11, h_i -> h_{i+6}.
        let topo = leaf_spine(4, 3);
        let name = |n: usize| topo.nodes[n].name.clone();
        let src = sources_cross_leaf_halves(&topo).unwrap();
        let got: Vec<(String, String)> = src.iter().map(|s| (name(s.src), name(s.dsts.get(0)))).collect();
        let want: Vec<(String, String)> = (0..6).map(|i| (format!("h{i}"), format!("h{}", i + 6))).collect();
        assert_eq!(got, want);
        assert!(src.iter().all(|s| s.dsts.len() == 1));
        assert!(sources_cross_leaf_halves(&leaf_spine(3, 2)).is_err());
        assert!(sources_cross_leaf_halves(&Topology::single_switch(4, Rate::gbps(40), Time::from_us(1))).is_err());

        // Random: every flow goes to another host, and over many flows to every other host.
        let cdf = FlowSizeCdf::builtin("homa_w1", Interpolation::Step).unwrap();
        let src = sources_random(&topo.hosts().collect::<Vec<_>>());
        assert_eq!(src.len(), 12);
        let flows = generate(&topo, &src, &arrivals(&cdf, 0.5, None, Some(20_000)));
        assert!(flows.iter().all(|f| f.src != f.dst));
        for s in &src {
            let mut seen: Vec<usize> = flows.iter().filter(|f| f.src == s.src).map(|f| f.dst).collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen, s.dsts.to_vec(), "{}", name(s.src));
        }

        // Pairs: one source per sending host, destinations in order of mention.
        let p = sources_from_pairs(&[(0, 1), (0, 2), (3, 1), (0, 1)]);
        assert_eq!(p, vec![Source { src: 0, dsts: Dsts::List(vec![1, 2]) }, Source { src: 3, dsts: Dsts::List(vec![1]) }]);
    }

    #[test]
    fn mean_gap_is_hpcc_rule() {
        // Web search at 50 % of 40 Gbps: 1,711,250 B * 8 / 20 Gbps = 684.5 us.
        assert!((mean_gap_ps(1_711_250.0, 0.5, Rate::gbps(40)) - 684.5e6).abs() < 1.0);
    }
}
