//! The `[workload]` section: its fields and checks, and the flows a run starts, made by the
//! generators of [`crate::workload`].

use super::{Dur, ScenarioError, Size};
use crate::sim::check::{range_f64, range_u32};
use serde::{Deserialize, Serialize};
use std::fmt;
use crate::net::topology::{NodeKind, Topology};
use crate::sim::units::Time;
use crate::transport::FlowSpec;
use crate::workload::cdf::FlowSizeCdf;
use crate::workload::poisson::{self, Arrivals, Source};
use crate::workload::collective::{self, CollectivePlan};
use crate::workload::{Dependencies, DependencyError, Done, FlowDef, Wait};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// Flows with no end between named pairs, all starting at time 0.
    LongFlows,
    /// An explicit list of flows.
    FlowList,
    /// Poisson arrivals at a target load, sizes from a CDF table.
    Poisson,
    /// Many senders start a flow to one receiver at the same time, in rounds.
    Incast,
    /// A connection matrix of the htsim simulator (`file`, a `.cm`).
    HtsimCm,
    /// A flow file in the HPCC ns-3 format (`file`).
    HpccFlows,
    /// A collective over groups of hosts (`[workload.collective]`).
    Collective,
}

/// Who sends to whom in a poisson workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pairing {
    /// Each host on the first half of the leaves sends to a fixed partner on the other half
    /// (host i -> host i + N/2 on a uniform leaf-spine).
    CrossLeafHalves,
    /// The explicit `pairs`.
    Pairs,
    /// Every host sends, each flow to a uniformly random other host.
    Random,
}

/// The `[workload]` section. Which fields apply depends on `kind` (see docs/SCENARIO.md);
/// validation rejects a field the kind does not use.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    pub kind: WorkloadKind,
    /// The job's name in the flow and collective tables (`job`) and summary.json's `jobs`.
    /// Default "job0", "job1", ... by position; names are unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The hosts the job's flows are placed on (its sources, destinations and ranks are chosen
    /// among them): a list of host names, or a range of host positions in topology order,
    /// "0..16" (h0..h15 on the built-in kinds). Default every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<JobHosts>,
    /// hpcc-flows, htsim-cm: the flow file, relative to the scenario's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "host_pairs")]
    pub pairs: Vec<(String, String)>,
    /// flow-list: the flows; poisson: the total flow count.
    #[serde(default, skip_serializing_if = "Flows::is_empty_list")]
    pub flows: Flows,
    /// poisson: a built-in table name or a path (relative to the scenario's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<crate::workload::cdf::Interpolation>,
    /// poisson: offered load as a fraction of each sender's host link rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<Pairing>,
    /// poisson: arrivals stop at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Dur>,
    /// poisson and incast: time of the first arrival window / the first round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// incast: the senders by name (or `fan_in`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub senders: Vec<String>,
    /// incast: this many senders, the first hosts other than the receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_in: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// incast: the size of every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// incast: time between the starts of consecutive rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// collective: what runs, on which hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<super::collective::CollectiveCfg>,
    /// Every kind but collective: each flow starts up to this much later than its workload
    /// says, uniformly and independently (seeded): the host software's timing between flows
    /// meant to start together (the Aeolus testbed's polling loop). Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Dur>,
    /// htsim-cm: what the matrix's `start` numbers count: "ps" (default, htsim_ndp) or "us"
    /// (uet-htsim's htsim_uec, which reads whole microseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_unit: Option<crate::workload::htsim_cm::StartUnit>,
    /// long-flows: connections each pair carries (queue pairs between the same two hosts, as
    /// LEFT's throughput setup leaves open). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
}

/// `workload.pairs`: a list of `[src, dst]`, each exactly two host names (serde's tuple would
/// silently drop a third).
fn host_pairs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    let lists: Vec<Vec<String>> = Vec::deserialize(d)?;
    lists
        .into_iter()
        .enumerate()
        .map(|(i, p)| match <[String; 2]>::try_from(p) {
            Ok([a, b]) => Ok((a, b)),
            Err(p) => Err(serde::de::Error::custom(format!("pair {i} has {} elements; a pair is two host names, [\"src\", \"dst\"]", p.len()))),
        })
        .collect()
}

/// `workload.hosts`: host names, or a range of host positions in topology order ("0..16",
/// the first index included, the second not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobHosts {
    Names(Vec<String>),
    Range(String),
}

impl Serialize for JobHosts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JobHosts::Names(v) => v.serialize(s),
            JobHosts::Range(r) => s.serialize_str(r),
        }
    }
}

impl<'de> Deserialize<'de> for JobHosts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JobHosts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of host names ([\"h0\", \"h1\"]) or a range of host positions (\"0..16\")")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JobHosts, E> {
                Ok(JobHosts::Range(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JobHosts, A::Error> {
                let mut v = Vec::new();
                while let Some(h) = seq.next_element::<String>()? {
                    v.push(h);
                }
                Ok(JobHosts::Names(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// The hosts a job's flows are placed on (node ids, in the order given; every host in topology
/// order without `hosts`), checked: known hosts, none twice, at least two.
pub fn job_hosts(cfg: &WorkloadCfg, topo: &Topology) -> Result<Vec<usize>, ScenarioError> {
    let all: Vec<usize> = topo.hosts().collect();
    let out = match &cfg.hosts {
        None => return Ok(all),
        Some(JobHosts::Range(r)) => {
            let bad = || err("workload.hosts", format!("{r:?} is not a range of host positions: write \"A..B\" (hosts A to B - 1 in topology order, 0 <= A < B <= {})", all.len()));
            let (a, b) = r.split_once("..").ok_or_else(bad)?;
            let (a, b): (usize, usize) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            if a >= b || b > all.len() {
                return Err(bad());
            }
            all[a..b].to_vec()
        }
        Some(JobHosts::Names(names)) => {
            let mut seen = vec![false; topo.nodes.len()];
            let mut out = Vec::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                let field = format!("workload.hosts[{i}]");
                let h = match topo.find(name) {
                    Some(n) if topo.nodes[n].kind == NodeKind::Host => n,
                    Some(_) => return Err(err(field, format!("{name:?} is a switch, not a host"))),
                    None => return Err(err(field, format!("unknown host {name:?} (hosts are h0..h{})", all.len() - 1))),
                };
                if std::mem::replace(&mut seen[h], true) {
                    return Err(err(field, format!("{name:?} is listed twice")));
                }
                out.push(h);
            }
            out
        }
    };
    if out.len() < 2 {
        return Err(err("workload.hosts", format!("{} host(s): a job needs at least two", out.len())));
    }
    Ok(out)
}

/// Who gives a job its hosts, as errors about their number say it.
fn whose(cfg: &WorkloadCfg) -> &'static str {
    if cfg.hosts.is_some() { "workload.hosts gives" } else { "the topology has" }
}

/// `workload.flows`: the list of a flow-list workload, or the flow count of a poisson one.
#[derive(Clone, Debug)]
pub enum Flows {
    List(Vec<FlowCfg>),
    Count(u64),
}

impl Default for Flows {
    fn default() -> Self {
        Flows::List(Vec::new())
    }
}

impl Flows {
    /// The flows of a list (empty for a count).
    pub fn list(&self) -> &[FlowCfg] {
        match self {
            Flows::List(v) => v,
            Flows::Count(_) => &[],
        }
    }
    pub fn count(&self) -> Option<u64> {
        match self {
            Flows::List(_) => None,
            Flows::Count(n) => Some(*n),
        }
    }
    fn is_empty_list(&self) -> bool {
        matches!(self, Flows::List(v) if v.is_empty())
    }
}

impl Serialize for Flows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Flows::List(v) => v.serialize(s),
            Flows::Count(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Flows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flows;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of flows (flow-list) or a flow count (poisson)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Flows, E> {
                u64::try_from(v).map(Flows::Count).map_err(|_| E::custom(format!("{v} is not a flow count")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Flows, E> {
                Ok(Flows::Count(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flows, A::Error> {
                let mut v = Vec::new();
                while let Some(f) = seq.next_element::<FlowCfg>()? {
                    v.push(f);
                }
                Ok(Flows::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub src: String,
    pub dst: String,
    pub size: Size,
    #[serde(default)]
    pub start: Dur,
    /// The egress queue of its data packets at every switch, 1..queues (default 1); a way
    /// to put a flow into a queue of its own, e.g. the shaped queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// The colour (drop precedence) of its data packets, 0..=2 (default 0, green).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<u8>,
    /// Flows (their positions in this list, from 0) that must all be done before this one
    /// starts (a barrier, as htsim's triggers and a collective's steps); then `gap`, and not
    /// before `start`. Default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u64>,
    /// Which end of the flows in `after` counts: "sent" (every byte acknowledged, the flow's
    /// completion; htsim's send_done_trigger) or "received" (every byte delivered in order;
    /// recv_done_trigger). Default "sent".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Done>,
    /// Time from the last of `after` finishing to this flow's start (compute time). Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<Dur>,
}

/// A validated workload's flows, sorted by start time (stable), which of them wait for
/// others (indices into `flows`), and the collectives they make up (if any).
pub struct Workload {
    pub flows: Vec<FlowDef>,
    pub dependencies: Dependencies,
    pub collectives: Option<CollectivePlan>,
}

/// The waits of a flow list, by list position.
fn waits(list: &[FlowCfg]) -> Vec<Wait> {
    list.iter()
        .enumerate()
        .filter(|(_, f)| !f.after.is_empty())
        .map(|(i, f)| Wait {
            flow: i,
            // Validation refuses a position out of range before this matters.
            after: f.after.iter().map(|&a| if a < list.len() as u64 { a as usize } else { usize::MAX }).collect(),
            on: f.on.unwrap_or_default(),
            gap: f.gap.map_or(Time::ZERO, |d| d.0),
            not_before: f.start.0,
        })
        .collect()
}

/// The most flows a workload may generate (each costs a few hundred bytes during a run).
pub const MAX_FLOWS: u64 = 10_000_000;
/// The most poisson arrivals expected after the run's end (they are generated, never start).
const MAX_LATE_ARRIVALS: u64 = 10_000;
const MAX_FLOW_SIZE: u64 = FlowSpec::MAX_SIZE;

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

/// Checks the section against the network and fills the defaults that depend on other fields
/// (`duration`, `seed`, `base_dir`: the scenario's; `queues`: egress queues per switch port).
pub fn check(w: &mut WorkloadCfg, topo: &Topology, duration: Time, seed: u64, base_dir: &Path, queues: u32) -> Result<(), ScenarioError> {
    let placed = job_hosts(w, topo)?;
    let mut member = vec![false; topo.nodes.len()];
    for &h in &placed {
        member[h] = true;
    }
    let host = |name: &str, field: String| -> Result<usize, ScenarioError> {
        match topo.find(name) {
            Some(n) if topo.nodes[n].kind == NodeKind::Host && !member[n] => Err(err(field, format!("{name:?} is not among the job's hosts (workload.hosts)"))),
            Some(n) if topo.nodes[n].kind == NodeKind::Host => Ok(n),
            Some(_) => Err(err(field, format!("{name:?} is a switch, not a host"))),
            None => {
                let hosts = topo.hosts().count();
                Err(err(field, format!("unknown host {name:?} (hosts are h0..h{})", hosts - 1)))
            }
        }
    };
    check_workload_fields(w)?;
    let check_pairs = |pairs: &[(String, String)], kind: &str| -> Result<(), ScenarioError> {
        if pairs.is_empty() {
            return Err(err("workload.pairs", format!("{kind} needs at least one pair, e.g. [[\"h0\", \"h1\"]]")));
        }
        for (i, (a, b)) in pairs.iter().enumerate() {
            let (x, y) = (host(a, format!("workload.pairs[{i}]"))?, host(b, format!("workload.pairs[{i}]"))?);
            if x == y {
                return Err(err(format!("workload.pairs[{i}]"), "source and destination are the same host"));
            }
        }
        Ok(())
    };
        match w.kind {
        WorkloadKind::LongFlows => {
            check_pairs(&w.pairs, "long-flows")?;
            if let Some(n) = w.connections {
                crate::sim::check::range_u32("connections", n, 1, MAX_CONNECTIONS_PER_PAIR).map_err(|e| err("workload.connections", e.message))?;
            }
        }
        WorkloadKind::Poisson => {
            let cdf = poisson_cdf(w, base_dir)?;
            w.interpolation = Some(cdf.interpolation());
            let load = w.load.ok_or_else(|| err("workload.load", "poisson needs load = 0.5 (a fraction of each sender's host link rate)"))?;
            range_f64("workload.load", load, 0.0, 1.0)?;
            if load == 0.0 {
                return Err(err("workload.load", "must be greater than 0"));
            }
            let pairing = *w.pairing.get_or_insert(if w.pairs.is_empty() { Pairing::Random } else { Pairing::Pairs });
            if pairing == Pairing::Pairs {
                check_pairs(&w.pairs, "pairing = \"pairs\"")?;
            } else if !w.pairs.is_empty() {
                return Err(err("workload.pairs", "only used with pairing = \"pairs\""));
            }
            match w.flows {
                Flows::List(ref v) if !v.is_empty() => {
                    return Err(err("workload.flows", "poisson takes a flow count here (flows = 1000), not a list"));
                }
                Flows::Count(n) if n == 0 || n > MAX_FLOWS => {
                    return Err(err("workload.flows", format!("{n} is out of range (allowed 1..={MAX_FLOWS})")));
                }
                _ => {}
            }
            let start = w.start.get_or_insert(Dur(Time::ZERO)).0;
            match (w.until, w.flows.count()) {
                (None, None) => {
                    return Err(err("workload.until", "poisson needs until = \"10ms\" (when arrivals stop) and/or flows = N (a flow count)"));
                }
                (Some(until), _) if until.0 <= start => return Err(err("workload.until", "must be later than workload.start")),
                _ => {}
            }
            if start >= duration {
                return Err(err("workload.start", format!("{start} is not before the run's duration ({}): no flow would start", duration)));
            }
            let sources = poisson_sources(w, topo)?;
            if sources.is_empty() {
                return Err(err("workload.pairing", "no sender and receiver pair of this pairing is among the job's hosts (workload.hosts)"));
            }
            if let Some(until) = w.until {
                let n = poisson::expected_flows(topo, &sources, cdf.mean(), load, until.0 - start);
                if n > MAX_FLOWS as f64 && w.flows.count().is_none() {
                    return Err(err("workload.until", format!("about {n:.0} flows would arrive (at most {MAX_FLOWS}); set flows = N or an earlier until")));
                }
                let late_from = start.max(duration);
                if until.0 > late_from && w.flows.count().is_none() {
                    let late = poisson::expected_flows(topo, &sources, cdf.mean(), load, until.0 - late_from);
                    if late > MAX_LATE_ARRIVALS as f64 {
                        return Err(err(
                            "workload.until",
                            format!("{} is past the run's duration ({}): about {late:.0} flows would arrive after the run ends (at most {MAX_LATE_ARRIVALS}); set until <= duration", until.0, duration),
                        ));
                    }
                }
                // Few arrivals expected: generate them (cheap) to say so if there are none.
                if n < 1000.0 && flows(w, topo, seed, base_dir)?.flows.is_empty() {
                    return Err(err(
                        "workload.until",
                        format!(
                            "no flow arrives between start ({start}) and until ({}): at load {load} and a mean size of {:.0} B about {n:.2} were expected; use a later until or a higher load",
                            until.0,
                            cdf.mean()
                        ),
                    ));
                }
            }
        }
        WorkloadKind::HpccFlows => {
            for (i, f) in hpcc_flows(w, base_dir)?.iter().enumerate() {
                let field = || format!("workload.file: flow {} ({} -> {})", i + 1, f.src, f.dst);
                let is_host = |n: usize| topo.nodes.get(n).is_some_and(|x| x.kind == NodeKind::Host);
                if !is_host(f.src) || !is_host(f.dst) || f.src == f.dst {
                    return Err(err(field(), "needs two different host ids of the topology"));
                }
                if !member[f.src] || !member[f.dst] {
                    return Err(err(field(), "is not among the job's hosts (workload.hosts)"));
                }
            }
        }
        WorkloadKind::HtsimCm => {
            let (m, fail) = htsim_cm(w, base_dir)?;
            m.check(placed.len()).map_err(fail)?;
        }
        WorkloadKind::Incast => {
            let receiver = w.receiver.as_deref().ok_or_else(|| err("workload.receiver", "incast needs a receiver, e.g. receiver = \"h0\""))?;
            let rx = host(receiver, "workload.receiver".into())?;
            if !w.senders.is_empty() && w.fan_in.is_some() {
                return Err(err("workload.fan_in", "give senders or fan_in, not both"));
            }
            let mut listed = vec![false; topo.nodes.len()];
            for (i, name) in w.senders.iter().enumerate() {
                let field = format!("workload.senders[{i}]");
                let h = host(name, field.clone())?;
                if h == rx {
                    return Err(err(field, "the receiver cannot also send"));
                }
                if std::mem::replace(&mut listed[h], true) {
                    return Err(err(field, format!("{name:?} is listed twice")));
                }
            }
            let senders = incast_senders(w, topo)?.len() as u64;
            match w.size {
                None => return Err(err("workload.size", "incast needs the size of each flow, e.g. size = \"64KB\"")),
                Some(sz) if sz.0 == 0 || sz.0 > MAX_FLOW_SIZE => return Err(err("workload.size", format!("{} B is out of range (allowed 1B..={MAX_FLOW_SIZE}B)", sz.0))),
                _ => {}
            }
            let rounds = *w.rounds.get_or_insert(1);
            range_u32("workload.rounds", rounds, 1, 1_000_000)?;
            if senders * rounds as u64 > MAX_FLOWS {
                return Err(err("workload.rounds", format!("{} flows in all (at most {MAX_FLOWS})", senders * rounds as u64)));
            }
            match w.interval {
                None if rounds > 1 => return Err(err("workload.interval", "more than one round needs interval = \"100us\" between round starts")),
                Some(d) if d.0 .0 == 0 => return Err(err("workload.interval", "must be greater than 0")),
                _ => {}
            }
            w.start.get_or_insert(Dur(Time::ZERO));
        }
        WorkloadKind::Collective => {
            let c = w.collective.as_ref().ok_or_else(|| err("workload.collective", "kind = \"collective\" needs [workload.collective] with op, ranks and size"))?;
            let flows = c.validate(&placed, whose(w))?;
            if flows > MAX_FLOWS {
                return Err(err("workload.collective.iterations", format!("{flows} flows in all (at most {MAX_FLOWS})")));
            }
        }
        WorkloadKind::FlowList => {
            let list = w.flows.list();
            if list.is_empty() {
                let msg = if w.flows.count().is_some() { "flow-list needs a list of flows, not a count" } else { "flow-list needs at least one flow" };
                return Err(err("workload.flows", msg));
            }
            for (i, f) in list.iter().enumerate() {
                let x = host(&f.src, format!("workload.flows[{i}].src"))?;
                let y = host(&f.dst, format!("workload.flows[{i}].dst"))?;
                if x == y {
                    return Err(err(format!("workload.flows[{i}]"), "source and destination are the same host"));
                }
                if f.size.0 == 0 || f.size.0 > MAX_FLOW_SIZE {
                    return Err(err(format!("workload.flows[{i}].size"), format!("{} B is out of range (allowed 1B..={MAX_FLOW_SIZE}B)", f.size.0)));
                }
                if let Some(c) = f.class {
                    if queues < 2 {
                        return Err(err(format!("workload.flows[{i}].class"), "with switch.queues = 1 data has no queue of its own; leave class out"));
                    }
                    range_u32(&format!("workload.flows[{i}].class"), c as u32, 1, queues - 1)?;
                }
                if let Some(c) = f.colour {
                    range_u32(&format!("workload.flows[{i}].colour"), c as u32, 0, 2)?;
                }
                if let Some(&a) = f.after.iter().find(|&&a| a >= list.len() as u64) {
                    let e = DependencyError::Dangling { flow: i, after: a.min(usize::MAX as u64) as usize, flows: list.len() };
                    return Err(err(format!("workload.flows[{i}].after"), e.to_string()));
                }
                if f.gap.is_some() && f.after.is_empty() {
                    return Err(err(format!("workload.flows[{i}].gap"), "is the time after the flows in `after` finish; give after = [...] or leave gap out"));
                }
                if f.on.is_some() && f.after.is_empty() {
                    return Err(err(format!("workload.flows[{i}].on"), "says which end of the flows in `after` counts; give after = [...] or leave on out"));
                }
            }
            if let Err(e @ (DependencyError::Cycle { flow, .. } | DependencyError::Dangling { flow, .. })) = Dependencies::new(list.len(), &waits(list)) {
                return Err(err(format!("workload.flows[{flow}].after"), e.to_string()));
            }
        }
    }
    Ok(())
}

/// The most connections one long-flows pair may carry.
pub const MAX_CONNECTIONS_PER_PAIR: u32 = 4096;

/// How many flows a validated workload starts, when that is known without generating them
/// (a poisson workload bounded only by `until` is not).
pub fn known_flow_count(w: &WorkloadCfg, base_dir: &Path) -> Result<Option<usize>, ScenarioError> {
    Ok(match w.kind {
        WorkloadKind::LongFlows => Some(w.pairs.len() * w.connections.unwrap_or(1) as usize),
        WorkloadKind::FlowList => Some(w.flows.list().len()),
        WorkloadKind::Incast => Some(w.senders.len().max(w.fan_in.unwrap_or(0) as usize) * w.rounds.unwrap_or(1) as usize),
        WorkloadKind::HpccFlows => Some(hpcc_flows(w, base_dir)?.len()),
        WorkloadKind::HtsimCm => Some(htsim_cm(w, base_dir)?.0.flows.len()),
        WorkloadKind::Poisson if w.until.is_none() => w.flows.count().map(|n| n as usize),
        WorkloadKind::Poisson => None,
        WorkloadKind::Collective => None,
    })
}

/// How many flows a validated workload makes, known or expected (poisson arrivals until a
/// time: the expected count; a collective: ranks x steps x iterations), for the memory budget.
/// `known` is [`known_flow_count`]'s answer.
pub fn flow_estimate(w: &WorkloadCfg, topo: &Topology, base_dir: &Path, known: Option<usize>) -> Result<u64, ScenarioError> {
    if let Some(n) = known {
        return Ok(n as u64);
    }
    Ok(match w.kind {
        WorkloadKind::Poisson => {
            let (Some(until), Some(load)) = (w.until, w.load) else { return Ok(w.flows.count().unwrap_or(0)) };
            let start = w.start.map_or(Time::ZERO, |s| s.0);
            let cdf = poisson_cdf(w, base_dir)?;
            let sources = poisson_sources(w, topo)?;
            let n = poisson::expected_flows(topo, &sources, cdf.mean(), load, until.0.saturating_sub(start)).ceil() as u64;
            w.flows.count().map_or(n, |c| c.min(n))
        }
        WorkloadKind::Collective => match &w.collective {
            Some(c) => c.validate(&job_hosts(w, topo)?, whose(w))?,
            None => 0,
        },
        _ => 0,
    })
}

fn kind_name(k: WorkloadKind) -> &'static str {
    match k {
        WorkloadKind::LongFlows => "long-flows",
        WorkloadKind::FlowList => "flow-list",
        WorkloadKind::Poisson => "poisson",
        WorkloadKind::Incast => "incast",
        WorkloadKind::HpccFlows => "hpcc-flows",
        WorkloadKind::HtsimCm => "htsim-cm",
        WorkloadKind::Collective => "collective",
    }
}

/// Rejects a `[workload]` field that its kind does not use (a typo'd kind would otherwise
/// silently ignore it).
fn check_workload_fields(w: &WorkloadCfg) -> Result<(), ScenarioError> {
    use WorkloadKind::*;
    let given: [(&str, bool, &[WorkloadKind]); 19] = [
        ("file", w.file.is_some(), &[HpccFlows, HtsimCm]),
        ("pairs", !w.pairs.is_empty(), &[LongFlows, Poisson]),
        ("flows", !w.flows.list().is_empty() || w.flows.count().is_some(), &[FlowList, Poisson]),
        ("cdf", w.cdf.is_some(), &[Poisson]),
        ("interpolation", w.interpolation.is_some(), &[Poisson]),
        ("load", w.load.is_some(), &[Poisson]),
        ("pairing", w.pairing.is_some(), &[Poisson]),
        ("until", w.until.is_some(), &[Poisson]),
        ("start", w.start.is_some(), &[Poisson, Incast]),
        ("senders", !w.senders.is_empty(), &[Incast]),
        ("fan_in", w.fan_in.is_some(), &[Incast]),
        ("receiver", w.receiver.is_some(), &[Incast]),
        ("size", w.size.is_some(), &[Incast]),
        ("rounds", w.rounds.is_some(), &[Incast]),
        ("interval", w.interval.is_some(), &[Incast]),
        ("collective", w.collective.is_some(), &[Collective]),
        ("start_jitter", w.start_jitter.is_some(), &[LongFlows, FlowList, Poisson, Incast, HtsimCm, HpccFlows]),
        ("connections", w.connections.is_some(), &[LongFlows]),
        ("start_unit", w.start_unit.is_some(), &[HtsimCm]),
    ];
    for (field, present, kinds) in given {
        if present && !kinds.contains(&w.kind) {
            return Err(err(format!("workload.{field}"), format!("is not used by kind = {:?}", kind_name(w.kind))));
        }
    }
    Ok(())
}

/// The flows of a validated workload section, sorted by start time (stable), and which wait
/// for others. `seed` is the scenario's root seed; a `cdf` path is relative to `base_dir`.
/// Errors only if the workload was not validated (or its CDF file changed since).
pub fn flows(cfg: &WorkloadCfg, topo: &Topology, seed: u64, base_dir: &Path) -> Result<Workload, ScenarioError> {
    let cm = if cfg.kind == WorkloadKind::HtsimCm { Some(htsim_cm(cfg, base_dir)?) } else { None };
    let node = |name: &str| topo.find(name).expect("validated host name");
    let mut generated = match (cfg.kind, &cfg.collective) {
        (WorkloadKind::Collective, Some(c)) => {
            let collectives = c.collectives(&job_hosts(cfg, topo)?, seed);
            Some((collective::generate(&collectives), collectives))
        }
        _ => None,
    };
    let out: Vec<FlowDef> = match cfg.kind {
        WorkloadKind::LongFlows => cfg
            .pairs
            .iter()
            .flat_map(|(a, b)| std::iter::repeat_n(FlowDef::new(node(a), node(b), FlowSpec::ENDLESS, Time::ZERO), cfg.connections.unwrap_or(1) as usize))
            .collect(),
        WorkloadKind::FlowList => cfg
            .flows
            .list()
            .iter()
            .map(|f| FlowDef { priority: f.class.unwrap_or(1), colour: f.colour.unwrap_or(0), ..FlowDef::new(node(&f.src), node(&f.dst), f.size.0, f.start.0) })
            .collect(),
        WorkloadKind::Poisson => {
            let cdf = poisson_cdf(cfg, base_dir)?;
            let sources = poisson_sources(cfg, topo)?;
            let a = Arrivals {
                cdf: &cdf,
                load: cfg.load.expect("validated load"),
                start: cfg.start.map_or(Time::ZERO, |d| d.0),
                until: cfg.until.map(|d| d.0),
                max_flows: cfg.flows.count(),
                seed,
            };
            poisson::generate(topo, &sources, &a)
        }
        WorkloadKind::Collective => generated.as_mut().map(|(g, _)| std::mem::take(&mut g.flows)).ok_or_else(|| err("workload.collective", "missing (not validated)"))?,
        WorkloadKind::HpccFlows => hpcc_flows(cfg, base_dir)?
            .into_iter()
            .map(|f| FlowDef::new(f.src, f.dst, f.size, f.start))
            .collect(),
        WorkloadKind::HtsimCm => {
            let (m, fail) = cm.as_ref().expect("read above");
            m.flow_defs(&job_hosts(cfg, topo)?).map_err(fail)?
        }
        WorkloadKind::Incast => {
            let dst = node(cfg.receiver.as_deref().expect("validated receiver"));
            let senders = incast_senders(cfg, topo)?;
            let size = cfg.size.expect("validated size").0;
            let (start, interval) = (cfg.start.map_or(Time::ZERO, |d| d.0), cfg.interval.map_or(Time::ZERO, |d| d.0));
            (0..cfg.rounds.unwrap_or(1) as u64)
                .flat_map(|r| {
                    let t = start + Time(interval.0 * r);
                    senders.iter().map(move |&src| FlowDef::new(src, dst, size, t))
                })
                .collect()
        }
    };
    let mut out = out;
    if let Some(jitter) = cfg.start_jitter {
        for (i, f) in out.iter_mut().enumerate() {
            let late = (crate::sim::rng::stream(seed, crate::sim::rng::Stream::StartJitter, i as u64).uniform() * jitter.0 .0 as f64) as u64;
            f.start = Time(f.start.0.saturating_add(late));
        }
    }
    // Flows are numbered in start order (stable: a flow list already in start order keeps its
    // positions); `after` names flows by their position in the list as written.
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by_key(|&i| out[i].start);
    let mut id = vec![0; out.len()];
    for (sorted, &i) in order.iter().enumerate() {
        id[i] = sorted;
    }
    let dependencies = match cfg.kind {
        WorkloadKind::FlowList => {
            let waits: Vec<Wait> = waits(cfg.flows.list()).into_iter().map(|w| Wait { flow: id[w.flow], after: w.after.iter().map(|&a| id[a]).collect(), ..w }).collect();
            Dependencies::new(out.len(), &waits).map_err(|e| err("workload.flows", format!("{e} (not validated)")))?
        }
        WorkloadKind::HtsimCm => {
            let (m, fail) = cm.as_ref().expect("read above");
            m.dependencies(&id).map_err(fail)?
        }
        WorkloadKind::Collective => {
            // Every collective flow has the collective's start, so the stable sort kept the
            // generator's numbering and its triggers, signals and members need no renumbering.
            debug_assert!(id.iter().enumerate().all(|(i, &j)| i == j));
            let (g, _) = generated.as_ref().expect("generated above");
            Dependencies::with_triggers(out.len(), &g.triggers, &g.signals, &g.delays).map_err(|e| err("workload.collective", format!("{e} (a generator bug)")))?
        }
        _ => Dependencies::none(out.len()),
    };
    let collectives = generated.map(|(g, collectives)| CollectivePlan { members: g.members, collectives });
    Ok(Workload { flows: order.into_iter().map(|i| out[i]).collect(), dependencies, collectives })
}

/// The flows of an hpcc-flows workload, read from its file (node ids as in the topology).
pub fn hpcc_flows(cfg: &WorkloadCfg, base_dir: &Path) -> Result<Vec<crate::net::hpcc::HpccFlow>, ScenarioError> {
    let file = cfg.file.as_deref().ok_or_else(|| ScenarioError::new("workload.file", "hpcc-flows needs file = \"flows.txt\""))?;
    let path = base_dir.join(file);
    let text = crate::sim::input::read_text(&path, crate::sim::input::MAX_FLOW_FILE).map_err(|e| ScenarioError::new("workload.file", e))?;
    crate::net::hpcc::parse_flows(&text).map_err(|e| ScenarioError::new("workload.file", format!("{}: {e}", path.display())))
}

/// The connection matrix of an htsim-cm workload, read from its file, and what makes an error
/// about it name the file.
pub fn htsim_cm(cfg: &WorkloadCfg, base_dir: &Path) -> Result<(crate::workload::htsim_cm::ConnectionMatrix, impl Fn(String) -> ScenarioError), ScenarioError> {
    let file = cfg.file.as_deref().ok_or_else(|| ScenarioError::new("workload.file", "htsim-cm needs file = \"traffic.cm\""))?;
    let path = base_dir.join(file);
    let text = crate::sim::input::read_text(&path, crate::sim::input::MAX_FLOW_FILE).map_err(|e| ScenarioError::new("workload.file", e))?;
    let fail = move |e: String| ScenarioError::new("workload.file", format!("{}: {e}", path.display()));
    Ok((crate::workload::htsim_cm::parse_in(&text, cfg.start_unit.unwrap_or_default()).map_err(&fail)?, fail))
}

/// The flow-size table of a poisson workload, with its interpolation (default linear).
pub fn poisson_cdf(cfg: &WorkloadCfg, base_dir: &Path) -> Result<FlowSizeCdf, ScenarioError> {
    let spec = cfg.cdf.as_deref().ok_or_else(|| {
        ScenarioError::new("workload.cdf", "poisson needs a flow-size table: a built-in name such as \"websearch_hpcc\" or a path")
    })?;
    FlowSizeCdf::load(spec, base_dir, cfg.interpolation.unwrap_or_default()).map_err(|e| ScenarioError::new("workload.cdf", e))
}

/// The senders of a poisson workload and where each sends (host names already checked).
pub fn poisson_sources(cfg: &WorkloadCfg, topo: &Topology) -> Result<Vec<Source>, ScenarioError> {
    let node = |name: &str| topo.find(name).expect("validated host name");
    Ok(match cfg.pairing.unwrap_or(Pairing::Random) {
        Pairing::Pairs => poisson::sources_from_pairs(&cfg.pairs.iter().map(|(a, b)| (node(a), node(b))).collect::<Vec<_>>()),
        Pairing::Random => poisson::sources_random(&job_hosts(cfg, topo)?),
        Pairing::CrossLeafHalves => {
            let mut sources = poisson::sources_cross_leaf_halves(topo).map_err(|e| ScenarioError::new("workload.pairing", e))?;
            if cfg.hosts.is_some() {
                // Only the pairs whose two ends are the job's.
                let mut member = vec![false; topo.nodes.len()];
                for h in job_hosts(cfg, topo)? {
                    member[h] = true;
                }
                sources.retain(|s| member[s.src] && (0..s.dsts.len()).all(|k| member[s.dsts.get(k)]));
            }
            sources
        }
    })
}

/// The senders of an incast: `senders` by name, or the first `fan_in` hosts other than the
/// receiver, in host order.
pub fn incast_senders(cfg: &WorkloadCfg, topo: &Topology) -> Result<Vec<usize>, ScenarioError> {
    let node = |name: &str| topo.find(name).filter(|&n| topo.nodes[n].kind == NodeKind::Host);
    let receiver = cfg.receiver.as_deref().and_then(node).ok_or_else(|| ScenarioError::new("workload.receiver", "incast needs a receiver host"))?;
    if !cfg.senders.is_empty() {
        return Ok(cfg.senders.iter().map(|s| node(s).expect("validated host name")).collect());
    }
    let n = cfg.fan_in.ok_or_else(|| ScenarioError::new("workload.senders", "incast needs senders = [\"h1\", ...] or fan_in = N"))?;
    let others: Vec<usize> = job_hosts(cfg, topo)?.into_iter().filter(|&h| h != receiver).collect();
    if n == 0 || n as usize > others.len() {
        return Err(ScenarioError::new("workload.fan_in", format!("{n} is out of range (allowed 1..={})", others.len())));
    }
    Ok(others[..n as usize].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, Scenario};
    use crate::net::topology::Topology;
    use crate::sim::units::Time;

    fn scenario(topology: &str, workload: &str) -> Scenario {
        let text = format!("name = \"t\"\nduration = \"10ms\"\n[topology]\n{topology}\n[workload]\n{workload}\n");
        Scenario::from_toml(&text).unwrap()
    }

    /// Validates and generates; the error is the one-line message a user sees.
    fn generate(topology: &str, workload: &str) -> Result<(Scenario, Topology, Vec<FlowDef>), String> {
        let mut s = scenario(topology, workload);
        s.base_dir = env!("CARGO_MANIFEST_DIR").into();
        let topo = validate(&mut s).map_err(|e| e.to_string())?;
        let defs = flows(&s.workload[0], &topo, s.seed, &s.base_dir).map_err(|e| e.to_string())?.flows;
        Ok((s, topo, defs))
    }

    const LEAF_SPINE: &str = "kind = \"leaf-spine\"\nleaves = 4\nhosts_per_leaf = 2";

    #[test]
    fn poisson_cross_leaf_halves_from_a_scenario() {
        let w = "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\npairing = \"cross-leaf-halves\"\nuntil = \"20ms\"\nstart = \"1ms\"";
        let (s, _, defs) = generate(LEAF_SPINE, w).unwrap();
        assert!(!defs.is_empty());
        assert!(defs.iter().all(|f| f.start >= Time::from_ms(1) && f.start < Time::from_ms(20)));
        let resolved = s.to_toml();
        assert!(resolved.contains("interpolation = \"linear\""), "{resolved}");
        // The resolved scenario parses back to the same flows.
        let mut again = Scenario::from_toml(&resolved).unwrap();
        let topo = validate(&mut again).unwrap();
        assert_eq!(flows(&again.workload[0], &topo, again.seed, Path::new(".")).unwrap().flows, defs);
    }

    #[test]
    fn cross_leaf_halves_partners_by_name() {
        let w = "kind = \"poisson\"\ncdf = \"homa_w1\"\ninterpolation = \"step\"\nload = 0.3\npairing = \"cross-leaf-halves\"\nflows = 2000";
        // h0..h3 (leaves 0, 1) send to h4..h7 (leaves 2, 3): host i -> host i + 4.
        let (_, topo, defs) = generate(LEAF_SPINE, w).unwrap();
        let name = |n: usize| topo.nodes[n].name[1..].parse::<u32>().unwrap();
        assert_eq!(defs.len(), 2000);
        assert!(defs.iter().all(|f| name(f.dst) == name(f.src) + 4 && name(f.src) < 4));
    }

    #[test]
    fn poisson_pairs_and_cdf_path() {
        let w = "kind = \"poisson\"\ncdf = \"workloads/fb_hadoop_hpcc.txt\"\nload = 0.3\npairs = [[\"h0\", \"h1\"]]\nflows = 500";
        let (s, _, defs) = generate("kind = \"single-switch\"", w).unwrap();
        assert_eq!(s.workload[0].pairing, Some(Pairing::Pairs), "pairs given: pairing defaults to pairs");
        assert_eq!(defs.len(), 500);
        assert!(defs.iter().all(|f| f.src == defs[0].src && f.dst == defs[1].dst && f.size >= 1));
        let resolved = s.to_toml();
        assert!(resolved.contains("flows = 500"), "{resolved}");
    }

    #[test]
    fn incast_from_a_scenario() {
        let w = "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 3\nsize = \"64KB\"\nrounds = 2\ninterval = \"100us\"";
        let (_, topo, defs) = generate("kind = \"single-switch\"\nhosts = 8", w).unwrap();
        let names: Vec<(String, String, u64, u64)> = defs
            .iter()
            .map(|f| (topo.nodes[f.src].name.clone(), topo.nodes[f.dst].name.clone(), f.size, f.start.0 / 1_000_000))
            .collect();
        let want: Vec<(String, String, u64, u64)> =
            [0, 100].iter().flat_map(|&t| ["h1", "h2", "h3"].map(|h| (h.to_string(), "h0".to_string(), 64_000, t))).collect();
        assert_eq!(names, want);
        let w = "kind = \"incast\"\nreceiver = \"h3\"\nsenders = [\"h0\", \"h2\"]\nsize = \"1KB\"";
        let (_, _, defs) = generate("kind = \"single-switch\"\nhosts = 4", w).unwrap();
        assert_eq!(defs.len(), 2);
    }

    /// `start_jitter` delays each flow by its own draw below the bound, the same draws for the
    /// same seed, other draws for another; a collective refuses it (its flows' order is its
    /// schedule).
    #[test]
    fn start_jitter_delays_each_flow_below_the_bound_by_the_seed() {
        let w = "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 7\nsize = \"1KB\"\nstart = \"5us\"\nstart_jitter = \"2us\"";
        let starts = |seed: u64| {
            let mut s = scenario("kind = \"single-switch\"\nhosts = 8", w);
            s.seed = seed;
            let topo = validate(&mut s).unwrap();
            let mut v: Vec<u64> = flows(&s.workload[0], &topo, s.seed, Path::new(".")).unwrap().flows.iter().map(|f| f.start.0).collect();
            v.sort_unstable();
            v
        };
        let one = starts(1);
        assert!(one.iter().all(|&t| (5_000_000..7_000_000).contains(&t)), "{one:?}");
        assert!(one.windows(2).all(|w| w[0] < w[1]), "distinct draws: {one:?}");
        assert_eq!(one, starts(1));
        assert_ne!(one, starts(2));
        let e = generate("kind = \"single-switch\"\nhosts = 4", "kind = \"collective\"\nstart_jitter = \"1us\"\n[workload.collective]\nop = \"all-reduce\"\nranks = 4\nsize = \"1MB\"").unwrap_err();
        assert!(e.contains("workload.start_jitter"), "{e}");
    }

    #[test]
    fn workload_errors_name_the_field() {
        let ss = "kind = \"single-switch\"\nhosts = 4";
        let cases = [
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 1.5\nflows = 10", "workload.load: 1.5 is out of range (allowed 0..=1)"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.0\nflows = 10", "workload.load: must be greater than 0"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = 10", "workload.cdf: unknown workload \"websearch\" (built in: websearch_hpcc, "),
            (ss, "kind = \"poisson\"\ncdf = \"nope/x.txt\"\nload = 0.5\nflows = 10", "workload.cdf: cannot read "),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5", "workload.until: poisson needs until"),
            (ss, "kind = \"poisson\"\nload = 0.5\nflows = 3", "workload.cdf: poisson needs a flow-size table"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nflows = 3", "workload.load: poisson needs load"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairing = \"cross-leaf-halves\"", "workload.pairing: \"cross-leaf-halves\" needs a leaf-spine"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairing = \"random\"\npairs = [[\"h0\", \"h1\"]]", "workload.pairs: only used with pairing = \"pairs\""),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairs = [[\"h0\", \"h9\"]]", "workload.pairs[0]: unknown host \"h9\""),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 0", "workload.flows: 0 is out of range"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nuntil = \"5000s\"", "workload.until: about "),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nuntil = \"1ms\"\nstart = \"2ms\"", "workload.until: must be later than workload.start"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]", "workload.flows: poisson takes a flow count"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\ninterpolation = \"cubic\"\nload = 0.5\nflows = 3", "workload.interpolation: unknown variant `cubic`"),
            (ss, "kind = \"long-flows\"\npairs = [[\"h0\", \"h1\"]]\nload = 0.5", "workload.load: is not used by kind = \"long-flows\""),
            (ss, "kind = \"flow-list\"\nflows = 3", "workload.flows: flow-list needs a list of flows, not a count"),
            (ss, "kind = \"incast\"\nsize = \"1KB\"\nfan_in = 2", "workload.receiver: incast needs a receiver"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"", "workload.senders: incast needs senders"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\nfan_in = 4", "workload.fan_in: 4 is out of range (allowed 1..=3)"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\nsenders = [\"h1\", \"h0\"]", "workload.senders[1]: the receiver cannot also send"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2", "workload.size: incast needs the size"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2\nsize = \"1KB\"\nrounds = 3", "workload.interval: more than one round needs"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2\nsize = \"1KB\"\ncdf = \"homa_w1\"", "workload.cdf: is not used by kind = \"incast\""),
        ];
        for (topo, w, want) in cases {
            let text = format!("name = \"t\"\nduration = \"10ms\"\n[topology]\n{topo}\n[workload]\n{w}\n");
            let got = match Scenario::from_toml(&text) {
                Err(e) => e.to_string(),
                Ok(mut s) => validate(&mut s).err().map(|e| e.to_string()).unwrap_or_default(),
            };
            assert!(got.starts_with(want), "{w:?}\n  got:  {got}\n  want: {want}...");
        }
    }

    #[test]
    fn poisson_scenario_runs_to_completion() {
        let text = r#"
            name = "poisson"
            duration = "50ms"
            [topology]
            kind = "single-switch"
            hosts = 4
            [workload]
            kind = "poisson"
            cdf = "fb_hadoop_hpcc"
            load = 0.3
            pairing = "random"
            flows = 40
        "#;
        let out = crate::run_toml(text).unwrap();
        assert_eq!(out.flows.len(), 40);
        assert!(out.flows.iter().all(|f| f.finish.is_some()), "every flow completes");
    }
}
