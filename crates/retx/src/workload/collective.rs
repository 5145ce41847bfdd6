//! Collective communication as flows: each step of a ring, halving-doubling or all-to-all
//! schedule is a set of flows, and a step's flow starts when the data it forwards has arrived
//! (a trigger on the previous step's flow, [`super::dependencies`]), so a collective's
//! completion time is set by its slowest flow per step, as on a real fabric.
//!
//! `size` is NCCL's: the bytes of the buffer each rank holds (all-reduce: in and out; all-gather:
//! out; reduce-scatter: in; all-to-all: what each rank sends in all), so a step moves chunks of
//! `size / ranks` (halving-doubling: halves of what is left). Schedules, for `n` ranks:
//! - **ring** all-reduce: reduce-scatter then all-gather, 2(n - 1) steps; ring all-gather and
//!   reduce-scatter: n - 1 steps. At each step rank r sends a chunk to r + 1; its next send waits
//!   until it has *received* the chunk from r - 1 (the data it forwards).
//! - **halving-doubling** all-reduce (n a power of two): recursive halving (step k: exchange
//!   size / 2^(k+1) with r xor n / 2^(k+1)), then recursive doubling (the same in reverse):
//!   2 log2 n steps, each waiting for what its previous partner sent.
//! - **direct** all-to-all: one step, every rank sends size / n to every other at once.
//! - **rounds** all-to-all: n - 1 steps, step k to r + k + 1, each after the rank's previous send
//!   is done (htsim's `gen_serial_alltoall.py`).
//! - **htsim-ring** all-reduce: what htsim's `gen_allreduce.py` writes, for comparison with it:
//!   for each rank s a chain of 2n - 1 flows of size / n hopping around the ring, each started
//!   when the previous one is sent (flowsize there = size / n here).
//!
//! Iterations: the next iteration's first step starts `gap` (compute time) after every flow of
//! the previous one has been received.

use super::dependencies::{Delay, Done, Signal, Trigger, TriggerKind};
use super::FlowDef;
use crate::sim::units::Time;
use crate::stats::{FlowRecord, IterationRecord, StepRecord};
use std::collections::BTreeMap;

/// What a collective computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
}

/// How it moves the data (see the module's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    Ring,
    HalvingDoubling,
    Direct,
    Rounds,
    HtsimRing,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all-reduce",
            Op::AllGather => "all-gather",
            Op::ReduceScatter => "reduce-scatter",
            Op::AllToAll => "all-to-all",
        }
    }

    /// NCCL's bus bandwidth factor (its PERFORMANCE.md): busbw = algbw x this, so that a
    /// perfect ring reaches the link rate whatever `n`.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n as f64;
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (n - 1.0) / n,
        }
    }

    /// The algorithms that compute this op.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Op::AllReduce => &[Algorithm::Ring, Algorithm::HalvingDoubling, Algorithm::HtsimRing],
            Op::AllGather | Op::ReduceScatter => &[Algorithm::Ring],
            Op::AllToAll => &[Algorithm::Direct, Algorithm::Rounds],
        }
    }
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Direct => "direct",
            Algorithm::Rounds => "rounds",
            Algorithm::HtsimRing => "htsim-ring",
        }
    }
}

/// One collective: a group of ranks (their hosts' node ids, rank order) running `op`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collective {
    pub op: Op,
    pub algorithm: Algorithm,
    pub hosts: Vec<usize>,
    pub size: u64,
    pub iterations: u32,
    pub gap: Time,
    pub start: Time,
}

/// Where a flow sits in its collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub group: u32,
    pub iteration: u32,
    pub step: u32,
    /// The sending rank (htsim-ring: the chain).
    pub rank: u32,
}

impl Member {
    /// The place of a flow that is in no collective (another job's, in a run of several).
    pub const NONE: Member = Member { group: u32::MAX, iteration: 0, step: 0, rank: 0 };
}

/// The flows of some collectives and what starts them, in one index space.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generated {
    pub flows: Vec<FlowDef>,
    pub members: Vec<Member>,
    pub triggers: Vec<Trigger>,
    pub signals: Vec<Signal>,
    pub delays: Vec<Delay>,
}

/// The collectives of a run and where each of its flows sits in them (by flow index).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollectivePlan {
    pub collectives: Vec<Collective>,
    pub members: Vec<Member>,
}

/// One send of a schedule: rank `from` to rank `to`, `bytes`, after `wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Send {
    from: u32,
    to: u32,
    bytes: u64,
    wait: Option<Wait>,
}

/// What a send waits for: the send of step `step - 1` by rank `from`, done at `on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wait {
    from: u32,
    on: Done,
}

/// The number of steps of `algorithm` on `n` ranks.
pub fn steps(op: Op, algorithm: Algorithm, n: u32) -> u32 {
    match algorithm {
        Algorithm::Ring if op == Op::AllReduce => 2 * (n - 1),
        Algorithm::Ring | Algorithm::Rounds => n - 1,
        Algorithm::HalvingDoubling => 2 * n.trailing_zeros(),
        Algorithm::Direct => 1,
        Algorithm::HtsimRing => 2 * n - 1,
    }
}

/// The sends of step `k` of one iteration (one per flow; `n` ranks, `size` bytes per rank).
fn schedule(algorithm: Algorithm, n: u32, size: u64, k: u32) -> Vec<Send> {
    let chunk = (size / n as u64).max(1);
    let after_received = |from| (k > 0).then_some(Wait { from, on: Done::Received });
    match algorithm {
        Algorithm::Ring => (0..n).map(|r| Send { from: r, to: (r + 1) % n, bytes: chunk, wait: after_received((r + n - 1) % n) }).collect(),
        Algorithm::HalvingDoubling => {
            let levels = n.trailing_zeros();
            // Step k's partner of rank r and the bytes they exchange.
            let partner = |k: u32, r: u32| -> (u32, u64) {
                if k < levels { (r ^ (n >> (k + 1)), size >> (k + 1)) } else { (r ^ (1 << (k - levels)), size >> (2 * levels - k)) }
            };
            (0..n)
                .map(|r| {
                    let (to, bytes) = partner(k, r);
                    // The data this send carries came from the previous step's partner.
                    Send { from: r, to, bytes: bytes.max(1), wait: if k > 0 { after_received(partner(k - 1, r).0) } else { None } }
                })
                .collect()
        }
        Algorithm::Direct => (0..n).flat_map(|r| (1..n).map(move |d| Send { from: r, to: (r + d) % n, bytes: chunk, wait: None })).collect(),
        Algorithm::Rounds => (0..n).map(|r| Send { from: r, to: (r + k + 1) % n, bytes: chunk, wait: (k > 0).then_some(Wait { from: r, on: Done::Sent }) }).collect(),
        // Chain s, hop d = k + 1: from (s + d - 1) to (s + d); the chain's previous hop was
        // sent by the rank before.
        Algorithm::HtsimRing => (0..n)
            .map(|s| Send { from: (s + k) % n, to: (s + k + 1) % n, bytes: chunk, wait: (k > 0).then_some(Wait { from: (s + k + n - 1) % n, on: Done::Sent }) })
            .collect(),
    }
}

/// The flows of `collectives` (group `g` is `collectives[g]`), numbered group by group,
/// iteration by iteration, step by step, in each step by sending rank (htsim-ring: by chain);
/// every flow's own start is its collective's `start`.
pub fn generate(collectives: &[Collective]) -> Generated {
    let mut out = Generated::default();
    for (g, c) in collectives.iter().enumerate() {
        let n = c.hosts.len() as u32;
        let steps = steps(c.op, c.algorithm, n);
        let mut previous_iteration: Vec<usize> = Vec::new();
        for it in 0..c.iterations {
            let first_of_iteration = out.flows.len();
            // Per step: the flow index of each rank's send (the first, for direct).
            let mut last_step: Vec<usize> = Vec::new();
            let mut first_step: Vec<usize> = Vec::new();
            for k in 0..steps {
                let sends = schedule(c.algorithm, n, c.size, k);
                let mut this_step = vec![usize::MAX; n as usize];
                for s in &sends {
                    let f = out.flows.len();
                    out.flows.push(FlowDef::new(c.hosts[s.from as usize], c.hosts[s.to as usize], s.bytes, c.start));
                    out.members.push(Member { group: g as u32, iteration: it, step: k, rank: s.from });
                    if this_step[s.from as usize] == usize::MAX {
                        this_step[s.from as usize] = f;
                    }
                    if let Some(w) = s.wait {
                        // Htsim-ring chains: the previous hop of the same chain.
                        let prerequisite = last_step[w.from as usize];
                        let t = out.triggers.len();
                        out.triggers.push(Trigger { kind: TriggerKind::OneShot, targets: vec![f] });
                        out.signals.push(Signal { flow: prerequisite, on: w.on, trigger: t });
                    } else if k == 0 {
                        first_step.push(f);
                    }
                }
                last_step = this_step;
            }
            if !previous_iteration.is_empty() {
                let t = out.triggers.len();
                out.triggers.push(Trigger { kind: TriggerKind::Barrier(previous_iteration.len() as u32), targets: first_step.clone() });
                out.signals.extend(previous_iteration.iter().map(|&f| Signal { flow: f, on: Done::Received, trigger: t }));
                out.delays.extend(first_step.iter().map(|&f| Delay { flow: f, gap: c.gap, not_before: Time::ZERO }));
            }
            previous_iteration = (first_of_iteration..out.flows.len()).collect();
        }
    }
    out
}

/// Each step and iteration of `plan`'s collectives as the run's `flows` went (the flow table,
/// by flow index); `ideal(flow, bytes)` is how long `bytes` take on flow `flow`'s path alone.
/// A step's ideal is its slowest rank's: the bytes it sends in the step, over the path of its
/// longest send; an iteration's is the sum of its steps' (steps do not overlap in the ideal).
pub fn summarise(plan: &CollectivePlan, flows: &[FlowRecord], ideal: impl Fn(usize, u64) -> Time) -> (Vec<IterationRecord>, Vec<StepRecord>) {
    let mut by_step: BTreeMap<(u32, u32, u32), Vec<usize>> = BTreeMap::new();
    for (f, m) in plan.members.iter().enumerate().filter(|&(f, m)| f < flows.len() && m.group != Member::NONE.group) {
        by_step.entry((m.group, m.iteration, m.step)).or_default().push(f);
    }
    let mut records = Vec::with_capacity(by_step.len());
    for (&(group, iteration, step), members) in &by_step {
        // Per rank: its bytes in the step and its longest send.
        let mut ranks: BTreeMap<u32, (u64, usize)> = BTreeMap::new();
        for &f in members {
            let e = ranks.entry(plan.members[f].rank).or_insert((0, f));
            e.0 += flows[f].size_bytes;
            if flows[f].ideal_fct > flows[e.1].ideal_fct {
                e.1 = f;
            }
        }
        let received: Option<Vec<Time>> = members.iter().map(|&f| flows[f].received).collect();
        let slowest = members.iter().copied().max_by_key(|&f| (flows[f].received.is_none(), flows[f].received)).expect("a step has a flow");
        records.push(StepRecord {
            job: flows[members[0]].job.clone(),
            group,
            iteration,
            step,
            flows: members.len() as u32,
            bytes: members.iter().map(|&f| flows[f].size_bytes).sum(),
            start: members.iter().map(|&f| flows[f].start).min().expect("a step has a flow"),
            end: received.map(|r| r.into_iter().max().expect("a step has a flow")),
            ideal: ranks.values().map(|&(bytes, f)| ideal(f, bytes)).max().expect("a step has a rank"),
            slowest_flow: flows[slowest].flow_id,
        });
    }
    let mut iterations = Vec::new();
    for run in records.chunk_by(|a, b| (a.group, a.iteration) == (b.group, b.iteration)) {
        let c = &plan.collectives[run[0].group as usize];
        let n = c.hosts.len() as u32;
        let ends: Option<Vec<Time>> = run.iter().map(|s| s.end).collect();
        let slowest = run.iter().max_by_key(|s| (s.end.is_none(), s.end.map(|e| e - s.start))).expect("an iteration has a step");
        iterations.push(IterationRecord {
            job: run[0].job.clone(),
            group: run[0].group,
            iteration: run[0].iteration,
            op: c.op.name(),
            algorithm: c.algorithm.name(),
            ranks: n,
            size: c.size,
            steps: steps(c.op, c.algorithm, n),
            start: run.iter().map(|s| s.start).min().expect("an iteration has a step"),
            end: ends.map(|e| e.into_iter().max().expect("an iteration has a step")),
            ideal: Time(run.iter().map(|s| s.ideal.0).sum()),
            bus_factor: c.op.bus_factor(n),
            slowest_step: slowest.step,
        });
    }
    (iterations, records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Dependencies;

    fn one(op: Op, algorithm: Algorithm, n: usize, size: u64, iterations: u32) -> Generated {
        generate(&[Collective { op, algorithm, hosts: (10..10 + n).collect(), size, iterations, gap: Time::from_us(3), start: Time::ZERO }])
    }

    /// (src rank, dst rank, bytes) of each step, from the flows' hosts.
    fn sends(g: &Generated, step: u32) -> Vec<(usize, usize, u64)> {
        g.flows.iter().zip(&g.members).filter(|(_, m)| m.step == step && m.iteration == 0).map(|(f, _)| (f.src - 10, f.dst - 10, f.size)).collect()
    }

    #[test]
    fn flow_counts_sizes_and_steps_follow_the_closed_forms() {
        for n in [2usize, 3, 4, 8] {
            let s = 8_400_000u64; // divisible by every n here
            let ring = one(Op::AllReduce, Algorithm::Ring, n, s, 1);
            assert_eq!(ring.flows.len(), 2 * (n - 1) * n, "ring all-reduce, n = {n}");
            assert!(ring.flows.iter().all(|f| f.size == s / n as u64));
            // Each rank sends 2(n-1)/n of the buffer: what NCCL's bus bandwidth assumes.
            let per_rank: u64 = ring.flows.iter().filter(|f| f.src == 10).map(|f| f.size).sum();
            assert_eq!(per_rank as f64, s as f64 * Op::AllReduce.bus_factor(n as u32));
            assert_eq!(one(Op::AllGather, Algorithm::Ring, n, s, 1).flows.len(), (n - 1) * n);
            assert_eq!(one(Op::ReduceScatter, Algorithm::Ring, n, s, 1).flows.len(), (n - 1) * n);
            assert_eq!(one(Op::AllToAll, Algorithm::Direct, n, s, 1).flows.len(), n * (n - 1));
            assert_eq!(one(Op::AllToAll, Algorithm::Rounds, n, s, 1).flows.len(), n * (n - 1));
            let htsim = one(Op::AllReduce, Algorithm::HtsimRing, n, s, 1);
            assert_eq!((htsim.flows.len(), htsim.triggers.len()), (n * (2 * n - 1), n * (2 * n - 2)), "gen_allreduce.py's counts");
        }
        let hd = one(Op::AllReduce, Algorithm::HalvingDoubling, 8, 8_000, 1);
        assert_eq!(hd.flows.len(), 8 * 6);
        assert_eq!(sends(&hd, 0)[..2], [(0, 4, 4_000), (1, 5, 4_000)]);
        assert_eq!(sends(&hd, 2)[..2], [(0, 1, 1_000), (1, 0, 1_000)]);
        assert_eq!(sends(&hd, 3)[..2], [(0, 1, 1_000), (1, 0, 1_000)], "doubling starts with the last partner");
        assert_eq!(sends(&hd, 5)[..2], [(0, 4, 4_000), (1, 5, 4_000)]);
        let per_rank: u64 = hd.flows.iter().filter(|f| f.src == 10).map(|f| f.size).sum();
        assert_eq!(per_rank, 2 * 7_000, "2(n-1)/n of the buffer, as the ring");
        assert_eq!(sends(&one(Op::AllToAll, Algorithm::Rounds, 4, 4_000, 1), 1), [(0, 2, 1_000), (1, 3, 1_000), (2, 0, 1_000), (3, 1, 1_000)]);
    }

    #[test]
    fn names_are_the_scenario_s_and_bus_factors_nccl_s() {
        let ops = [(Op::AllReduce, "all-reduce", 1.5), (Op::AllGather, "all-gather", 0.75), (Op::ReduceScatter, "reduce-scatter", 0.75), (Op::AllToAll, "all-to-all", 0.75)];
        for (op, name, factor) in ops {
            assert_eq!((op.name(), op.bus_factor(4)), (name, factor));
            let parsed: std::collections::BTreeMap<String, Op> = toml::from_str(&format!("op = \"{name}\"")).unwrap();
            assert_eq!(parsed["op"], op, "the name a scenario writes");
        }
        assert_eq!(Op::AllToAll.bus_factor(8), 7.0 / 8.0);
        let algorithms = [(Algorithm::Ring, "ring"), (Algorithm::HalvingDoubling, "halving-doubling"), (Algorithm::Direct, "direct"), (Algorithm::Rounds, "rounds"), (Algorithm::HtsimRing, "htsim-ring")];
        for (a, name) in algorithms {
            assert_eq!(a.name(), name);
            let parsed: std::collections::BTreeMap<String, Algorithm> = toml::from_str(&format!("a = \"{name}\"")).unwrap();
            assert_eq!(parsed["a"], a);
        }
    }

    #[test]
    fn a_step_waits_for_the_data_it_forwards() {
        let fire = |g: &Generated, f: usize, on: Done| -> Vec<usize> {
            let mut d = Dependencies::with_triggers(g.flows.len(), &g.triggers, &g.signals, &g.delays).unwrap();
            let mut started = Vec::new();
            d.done(f, on, Time::ZERO, |x, _| started.push(x));
            started
        };
        // Ring of 4: flow 1 (rank 1, step 0) received lets rank 2 send step 1 (flow 4 + 2).
        let ring = one(Op::AllReduce, Algorithm::Ring, 4, 4_000, 1);
        assert_eq!(fire(&ring, 1, Done::Received), [6]);
        assert_eq!(fire(&ring, 1, Done::Sent), [], "the data, not the ACK");
        // Halving-doubling of 4, step 1: rank 0 sends to 1 after receiving rank 2's step-0 send.
        let hd = one(Op::AllReduce, Algorithm::HalvingDoubling, 4, 4_000, 1);
        assert_eq!(fire(&hd, 2, Done::Received), [4]);
        // Rounds: a rank's next round after its own send is done.
        let rounds = one(Op::AllToAll, Algorithm::Rounds, 3, 3_000, 1);
        assert_eq!(fire(&rounds, 0, Done::Sent), [3]);
        // htsim-ring of 3, chain 0: hop 0->1 (flow 0) sent starts hop 1->2 (flow 3 + 0).
        let htsim = one(Op::AllReduce, Algorithm::HtsimRing, 3, 3_000, 1);
        assert_eq!((htsim.flows[3].src - 10, htsim.flows[3].dst - 10), (1, 2));
        assert_eq!(fire(&htsim, 0, Done::Sent), [3]);
    }

    #[test]
    fn the_next_iteration_starts_a_gap_after_the_whole_previous_one_is_received() {
        let g = one(Op::AllGather, Algorithm::Ring, 3, 3_000, 2);
        assert_eq!(g.flows.len(), 12);
        let mut d = Dependencies::with_triggers(g.flows.len(), &g.triggers, &g.signals, &g.delays).unwrap();
        let mut started = Vec::new();
        for f in 0..6 {
            d.done(f, Done::Received, Time::from_us(f as u64), |x, at| started.push((x, at)));
        }
        // Step 1's flows (3..6) started as step 0 arrived; iteration 1 (6, 7, 8) at the last.
        assert_eq!(started, [(4, Time::from_us(0)), (5, Time::from_us(1)), (3, Time::from_us(2)), (6, Time::from_us(8)), (7, Time::from_us(8)), (8, Time::from_us(8))]);
    }
}
