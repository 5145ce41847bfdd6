//! The `[routing]` section: how switches pick among equal-cost paths, and its checks.

use super::Dur;
use crate::net::topology::{Topology, NO_GROUP};
use crate::sim::check::{positive_time, Checked, FieldError};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

/// How switches pick among equal-cost paths, and what entropy a source puts in its packets.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingCfg {
    pub policy: RoutingKind,
    /// flowlet: a gap longer than this between two packets of a flow starts a new flowlet.
    /// The default is a few base RTTs of a two-tier 40-100 Gbps fabric (CONGA's 500 us was
    /// chosen for 10 Gbps); set it to the network at hand.
    pub flowlet_gap: Dur,
    /// flowlet and spray-permutation: hashed entries per switch table (a power of two).
    pub flowlet_entries: u32,
    /// "per-flow" (the 5-tuple, RoCEv2) or "per-packet" (the NIC varies the UDP source port,
    /// so ECMP switches spray).
    pub entropy: EntropyKind,
    /// "minimal" (shortest paths), "valiant" or "ugal": detours through another switch group
    /// of a topology that has groups (a dragonfly), chosen at the first switch; `policy` picks
    /// among the equal-cost ports of whichever path.
    pub paths: PathsKind,
}

impl Default for RoutingCfg {
    fn default() -> Self {
        RoutingCfg { policy: RoutingKind::Ecmp, flowlet_gap: Dur(Time::from_us(50)), flowlet_entries: 4096, entropy: EntropyKind::PerFlow, paths: PathsKind::Minimal }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoutingKind {
    Ecmp,
    SprayRoundRobin,
    SprayRandom,
    Flowlet,
    SprayPermutation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathsKind {
    Minimal,
    Valiant,
    Ugal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntropyKind {
    PerFlow,
    PerPacket,
}

impl RoutingCfg {
    /// Fields by their names within `[routing]`.
    pub fn check(&self) -> Checked {
        if !self.flowlet_entries.is_power_of_two() || self.flowlet_entries > 1 << 24 {
            return Err(FieldError::new("flowlet_entries", format!("{} is not a power of two in 1..=16777216", self.flowlet_entries)));
        }
        positive_time("flowlet_gap", self.flowlet_gap.0)
    }

    /// Non-minimal paths detour through another switch group: the topology must have at
    /// least three (source, destination and one more).
    pub fn check_paths(&self, topo: &Topology) -> Checked {
        if self.paths == PathsKind::Minimal {
            return Ok(());
        }
        let name = if self.paths == PathsKind::Valiant { "valiant" } else { "ugal" };
        let groups = topo.groups.iter().filter(|&&g| g != NO_GROUP).max().map_or(0, |&g| g as u64 + 1);
        if groups == 0 {
            return Err(FieldError::new("paths", format!("{name:?} detours through switch groups, and this topology has none (use kind = \"dragonfly\", or paths = \"minimal\")")));
        }
        if groups < 3 {
            return Err(FieldError::new("paths", format!("{name:?} detours through a group other than the source's and the destination's, and this topology has {groups} groups (at least 3)")));
        }
        Ok(())
    }
}
