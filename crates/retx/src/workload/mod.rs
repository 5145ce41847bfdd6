//! Workloads: the flows a scenario starts, and when.
//!
//! `long-flows` and `flow-list` are given flow by flow; `poisson` draws arrivals at a target
//! load with sizes from a CDF table ([`cdf`], [`poisson`]); `incast` starts many flows to one
//! receiver at once; `htsim-cm` reads htsim's connection matrices ([`htsim_cm`]). A flow may
//! also wait for others to finish ([`dependencies`]).

pub mod cdf;
pub mod collective;
pub mod dependencies;
pub mod htsim_cm;
pub mod poisson;

pub use dependencies::{Delay, Dependencies, DependencyError, Done, Signal, Trigger, TriggerKind, Wait};

use crate::sim::units::Time;

/// One flow to start: node ids of its hosts, its size (or endless) and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowDef {
    pub src: usize,
    pub dst: usize,
    /// Bytes, or [`crate::transport::FlowSpec::ENDLESS`].
    pub size: u64,
    pub start: Time,
    /// The priority of its data packets: their egress queue at every switch (1: the default
    /// data queue).
    pub priority: u8,
    /// The drop precedence of its data packets (0 green, 1 yellow, 2 red).
    pub colour: u8,
    /// The job it belongs to (its `[[workload]]` position; 0 with one workload).
    pub job: u32,
}

impl FlowDef {
    /// A flow at the default data priority, green.
    pub fn new(src: usize, dst: usize, size: u64, start: Time) -> FlowDef {
        FlowDef { src, dst, size, start, priority: crate::net::packet::PRIORITY_DATA as u8, colour: 0, job: 0 }
    }
}
