//! `[workload.collective]`: a collective (all-reduce, all-gather, reduce-scatter, all-to-all)
//! over groups of hosts, as flows that wait for the data they forward
//! ([`crate::workload::collective`]).

use super::{Dur, ScenarioError, Size};
use crate::sim::check::range_u32;
use crate::sim::rng;
use crate::sim::units::Time;
use crate::workload::collective::{self, Algorithm, Collective, Op};
use serde::{Deserialize, Serialize};

/// Where a group's ranks sit among the hosts (in topology order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Group g's rank r on host g x ranks + r: neighbours share a rack.
    Contiguous,
    /// Group g's rank r on host g + r x stride: ranks spread across racks.
    Strided,
    /// The hosts shuffled with the scenario's seed, then taken contiguously.
    Random,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCfg {
    pub op: Op,
    /// Default: ring, or direct for all-to-all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algorithm>,
    /// Ranks per group (hosts taking part).
    pub ranks: u32,
    /// Bytes of each rank's buffer (NCCL's size: see the workload's module).
    pub size: Size,
    /// Groups running the same collective at once, on disjoint hosts. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<u32>,
    /// Default contiguous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// strided: hosts between consecutive ranks. Default: hosts / ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<u32>,
    /// Times the collective runs, each after the previous one and `gap`. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// Compute time between iterations. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<Dur>,
    /// When the first iteration starts. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
}

/// The most iterations (each repeats every flow of the collective).
pub const MAX_ITERATIONS: u32 = 1_000_000;
/// The most ranks in a group.
pub const MAX_RANKS: u32 = 65_536;

fn err(field: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(format!("workload.collective.{field}"), msg)
}

impl CollectiveCfg {
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm.unwrap_or(if self.op == Op::AllToAll { Algorithm::Direct } else { Algorithm::Ring })
    }

    /// How many flows it starts, and that it fits its hosts (the topology's, or the job's
    /// `workload.hosts`: `whose` says which in errors), naming the field.
    pub fn validate(&self, hosts: &[usize], whose: &str) -> Result<u64, ScenarioError> {
        let algorithm = self.algorithm();
        if !self.op.algorithms().contains(&algorithm) {
            let names: Vec<&str> = self.op.algorithms().iter().map(|a| a.name()).collect();
            return Err(err("algorithm", format!("{:?} does not compute {}; use one of {}", algorithm.name(), self.op.name(), names.join(", "))));
        }
        range_u32("workload.collective.ranks", self.ranks, 2, MAX_RANKS)?;
        if algorithm == Algorithm::HalvingDoubling && !self.ranks.is_power_of_two() {
            return Err(err("ranks", format!("{} is not a power of two, which halving-doubling needs (use ring)", self.ranks)));
        }
        if self.size.0 < self.ranks as u64 {
            return Err(err("size", format!("{} B leaves an empty chunk for some of the {} ranks; give at least {} B", self.size.0, self.ranks, self.ranks)));
        }
        let groups = self.groups.unwrap_or(1);
        range_u32("workload.collective.groups", groups, 1, MAX_RANKS)?;
        let iterations = self.iterations.unwrap_or(1);
        range_u32("workload.collective.iterations", iterations, 1, MAX_ITERATIONS)?;
        let n = hosts.len() as u64;
        let needed = self.ranks as u64 * groups as u64;
        if needed > n {
            return Err(err("ranks", format!("{} groups of {} ranks need {needed} hosts; {whose} {n}", groups, self.ranks)));
        }
        if self.stride.is_some() && self.placement != Some(Placement::Strided) {
            return Err(err("stride", "is used by placement = \"strided\" only"));
        }
        if self.placement == Some(Placement::Strided) {
            let stride = self.stride.unwrap_or((n / self.ranks as u64) as u32);
            range_u32("workload.collective.stride", stride, 1, u32::MAX)?;
            if groups > stride {
                return Err(err("groups", format!("{groups} groups do not fit between ranks {stride} hosts apart (groups <= stride)")));
            }
            let last = (groups as u64 - 1) + (self.ranks as u64 - 1) * stride as u64;
            if last >= n {
                return Err(err("stride", format!("{stride} puts the last rank on host {last}; {whose} {n} hosts")));
            }
        }
        let per_iteration = collective::steps(self.op, algorithm, self.ranks) as u64
            * self.ranks as u64
            * if algorithm == Algorithm::Direct { self.ranks as u64 - 1 } else { 1 };
        Ok(per_iteration.saturating_mul(groups as u64).saturating_mul(iterations as u64))
    }

    /// The collectives it describes, one per group, on `hosts` (the topology's, or the job's)
    /// placed as it says.
    pub fn collectives(&self, hosts: &[usize], seed: u64) -> Vec<Collective> {
        let mut hosts = hosts.to_vec();
        let n = hosts.len();
        let ranks = self.ranks as usize;
        if self.placement == Some(Placement::Random) {
            // Fisher-Yates with the scenario's own stream for placement.
            let mut state = rng::mix64(seed ^ 0x636f_6c6c_6563_7469); // "collecti"
            for i in (1..n).rev() {
                state = rng::mix64(state);
                hosts.swap(i, (state % (i as u64 + 1)) as usize);
            }
        }
        let stride = self.stride.map_or(n / ranks, |s| s as usize);
        (0..self.groups.unwrap_or(1) as usize)
            .map(|g| Collective {
                op: self.op,
                algorithm: self.algorithm(),
                hosts: (0..ranks)
                    .map(|r| match self.placement {
                        Some(Placement::Strided) => hosts[g + r * stride],
                        _ => hosts[g * ranks + r],
                    })
                    .collect(),
                size: self.size.0,
                iterations: self.iterations.unwrap_or(1),
                gap: self.gap.map_or(Time::ZERO, |d| d.0),
                start: self.start.map_or(Time::ZERO, |d| d.0),
            })
            .collect()
    }
}
