//! Several jobs on one fabric: `[workload]` (one job, as always) or `[[workload]]` (a list of
//! them: Poisson tenants, incasts, flow lists, `.cm` files, collectives), each named
//! (`name`, default "job0", "job1", ... by position) and placed on chosen hosts
//! (`hosts`, default all). Each job is checked and generated alone, as the single workload
//! always was, with random streams of its own derived from the seed and its position (the
//! first job's are the seed's own, so a scenario of one job runs exactly as before, and adding
//! a job leaves the others' flows as they were); their flows are then merged in start-time
//! order, ties by job position and then by the job's own order, and every flow carries its job.

use super::workload::{self, Workload, WorkloadCfg};
use super::ScenarioError;
use crate::net::topology::Topology;
use crate::sim::rng;
use crate::sim::units::Time;
use crate::workload::collective::{CollectivePlan, Member};
use crate::workload::{Dependencies, FlowDef};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The most jobs a scenario may hold.
pub const MAX_JOBS: usize = 1000;
/// The longest job name.
pub const MAX_JOB_NAME: usize = 64;

/// The scenario's `workload`: one `[workload]` table or an array of `[[workload]]` tables.
#[derive(Clone, Debug)]
pub struct Workloads {
    pub jobs: Vec<WorkloadCfg>,
    /// Written as an array of tables (`[[workload]]`): errors name a job by its position
    /// (`workload[1].kind`) and the resolved scenario writes it back as an array.
    pub array: bool,
}

impl Workloads {
    /// One job written as a `[workload]` table.
    pub fn one(w: WorkloadCfg) -> Workloads {
        Workloads { jobs: vec![w], array: false }
    }

    /// The dotted prefix of job `i`'s fields: `workload` for a lone table, `workload[i]` in
    /// an array.
    pub fn prefix(&self, i: usize) -> String {
        if self.array { format!("workload[{i}]") } else { "workload".to_string() }
    }

    /// An error about job `i`, checked as if it were the only workload, placed in the array.
    pub fn at(&self, i: usize, e: ScenarioError) -> ScenarioError {
        place(self.array, i, e)
    }

    /// Job `i`'s name: its `name`, or "job{i}".
    pub fn name(&self, i: usize) -> String {
        self.jobs[i].name.clone().unwrap_or_else(|| format!("job{i}"))
    }

    /// Every job's name, by position.
    pub fn names(&self) -> Vec<String> {
        (0..self.jobs.len()).map(|i| self.name(i)).collect()
    }

    /// The first job that draws flow sizes from a table (a scheme deriving parameters from
    /// the workload's sizes, Homa's cutoffs, reads it), else the first job.
    pub fn sized(&self) -> &WorkloadCfg {
        self.jobs.iter().find(|w| w.cdf.is_some()).unwrap_or(&self.jobs[0])
    }
}

impl std::ops::Deref for Workloads {
    type Target = Vec<WorkloadCfg>;
    fn deref(&self) -> &Vec<WorkloadCfg> {
        &self.jobs
    }
}

impl std::ops::DerefMut for Workloads {
    fn deref_mut(&mut self) -> &mut Vec<WorkloadCfg> {
        &mut self.jobs
    }
}

impl Serialize for Workloads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.jobs.as_slice() {
            [one] if !self.array => one.serialize(s),
            jobs => jobs.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Workloads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Workloads;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a [workload] table, or [[workload]] tables (one per job)")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Workloads, A::Error> {
                WorkloadCfg::deserialize(de::value::MapAccessDeserializer::new(map)).map(Workloads::one)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Workloads, A::Error> {
                let mut jobs = Vec::new();
                while let Some(w) = seq.next_element::<WorkloadCfg>()? {
                    if jobs.len() == MAX_JOBS {
                        return Err(de::Error::custom(format!("more than {MAX_JOBS} jobs")));
                    }
                    jobs.push(w);
                }
                if jobs.is_empty() {
                    return Err(de::Error::custom("holds no job: give a [workload] table or [[workload]] tables"));
                }
                Ok(Workloads { jobs, array: true })
            }
        }
        d.deserialize_any(V)
    }
}

/// An error about job `i` (its fields named `workload.x`) as `workload[i].x` when the jobs are
/// an array.
fn place(array: bool, i: usize, e: ScenarioError) -> ScenarioError {
    if !array {
        return e;
    }
    let p = format!("workload[{i}]");
    let field = match e.field.strip_prefix("workload") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("{p}{rest}"),
        _ => e.field,
    };
    ScenarioError { field, message: e.message.replace("workload.", &format!("{p}.")) }
}

/// Job `job`'s root seed: the scenario's own for the first job (so one job runs as before),
/// a stream of the seed and the job's position for the others.
pub fn job_seed(seed: u64, job: usize) -> u64 {
    if job == 0 {
        seed
    } else {
        rng::mix64(seed ^ rng::mix64((rng::Stream::Job as u64) << 48 ^ rng::mix64(job as u64)))
    }
}

/// A job's name is a plain label: 1..=64 of `A-Z a-z 0-9 . _ - +`.
fn check_name(name: &str) -> Result<(), String> {
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
    if name.is_empty() || name.len() > MAX_JOB_NAME || !plain {
        return Err(format!("{name:?} is not a plain name (1..={MAX_JOB_NAME} letters, digits and . _ - +)"));
    }
    Ok(())
}

/// Checks every job (names unique, each job's own fields against the network, with its own
/// seed), filling the defaults each depends on.
pub fn check(ws: &mut Workloads, topo: &Topology, duration: Time, seed: u64, base_dir: &Path, queues: u32) -> Result<(), ScenarioError> {
    let names = ws.names();
    for (i, name) in names.iter().enumerate() {
        if ws.jobs[i].name.is_some() {
            check_name(name).map_err(|m| ws.at(i, ScenarioError::new("workload.name", m)))?;
        }
        if let Some(first) = names[..i].iter().position(|n| n == name) {
            let which = if ws.jobs[i].name.is_some() { "" } else { " (its default name)" };
            return Err(ws.at(i, ScenarioError::new("workload.name", format!("{name:?}{which} is also job {first}'s: names are unique"))));
        }
    }
    let array = ws.array;
    for (i, w) in ws.jobs.iter_mut().enumerate() {
        workload::check(w, topo, duration, job_seed(seed, i), base_dir, queues).map_err(|e| place(array, i, e))?;
    }
    Ok(())
}

/// How many flows the jobs start, when every job's count is known without generating them.
pub fn known_flow_count(ws: &Workloads, base_dir: &Path) -> Result<Option<usize>, ScenarioError> {
    let mut total = Some(0usize);
    for (i, w) in ws.iter().enumerate() {
        let n = workload::known_flow_count(w, base_dir).map_err(|e| ws.at(i, e))?;
        total = total.zip(n).map(|(a, b)| a.saturating_add(b));
    }
    Ok(total)
}

/// How many flows the jobs make, known or expected (for the memory budget).
pub fn flow_estimate(ws: &Workloads, topo: &Topology, base_dir: &Path) -> Result<u64, ScenarioError> {
    let mut total = 0u64;
    for (i, w) in ws.iter().enumerate() {
        let known = workload::known_flow_count(w, base_dir).map_err(|e| ws.at(i, e))?;
        total = total.saturating_add(workload::flow_estimate(w, topo, base_dir, known).map_err(|e| ws.at(i, e))?);
    }
    Ok(total)
}

/// The flows of every job, merged in start-time order (ties: by job position, then by the
/// job's own order), each marked with its job; what waits for what, and the collectives, in the
/// merged numbering. One job is exactly [`workload::flows`].
pub fn flows(ws: &Workloads, topo: &Topology, seed: u64, base_dir: &Path) -> Result<Workload, ScenarioError> {
    if let [one] = ws.jobs.as_slice() {
        return workload::flows(one, topo, seed, base_dir).map_err(|e| ws.at(0, e));
    }
    let parts: Vec<Workload> =
        ws.iter().enumerate().map(|(i, w)| workload::flows(w, topo, job_seed(seed, i), base_dir).map_err(|e| ws.at(i, e))).collect::<Result<_, _>>()?;
    merge(parts)
}

/// Jobs' workloads in one index space (see [`flows`]).
pub fn merge(parts: Vec<Workload>) -> Result<Workload, ScenarioError> {
    let mut order: Vec<(usize, usize)> = parts.iter().enumerate().flat_map(|(j, p)| (0..p.flows.len()).map(move |k| (j, k))).collect();
    // Stable: equal starts keep job order, then each job's own.
    order.sort_by_key(|&(j, k)| parts[j].flows[k].start);
    let mut id: Vec<Vec<usize>> = parts.iter().map(|p| vec![0; p.flows.len()]).collect();
    for (g, &(j, k)) in order.iter().enumerate() {
        id[j][k] = g;
    }
    let total = order.len();
    let flows: Vec<FlowDef> = order.iter().map(|&(j, k)| FlowDef { job: j as u32, ..parts[j].flows[k] }).collect();
    let deps: Vec<(&Dependencies, &[usize])> = parts.iter().zip(&id).map(|(p, ids)| (&p.dependencies, ids.as_slice())).collect();
    let dependencies = Dependencies::merge(total, &deps).map_err(|e| ScenarioError::new("workload", format!("{e} (merging jobs: a bug)")))?;
    let collectives = if parts.iter().any(|p| p.collectives.is_some()) {
        let mut plan = CollectivePlan { collectives: Vec::new(), members: vec![Member::NONE; total] };
        for (p, ids) in parts.iter().zip(&id) {
            let Some(c) = &p.collectives else { continue };
            let offset = plan.collectives.len() as u32;
            plan.collectives.extend(c.collectives.iter().cloned());
            for (k, m) in c.members.iter().enumerate() {
                plan.members[ids[k]] = Member { group: m.group + offset, ..*m };
            }
        }
        Some(plan)
    } else {
        None
    };
    Ok(Workload { flows, dependencies, collectives })
}
