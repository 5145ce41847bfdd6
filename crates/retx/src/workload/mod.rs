//! Workloads: the flows a scenario starts, and when.
//!
//! `long-flows` and `flow-list` are given flow by flow; `poisson` draws arrivals at a target
//! load with sizes from a CDF table ([`cdf`], [`poisson`]); `incast` starts many flows to one
//! receiver at once.

pub mod cdf;
pub mod poisson;

use crate::sim::units::Time;

/// One flow to start: node ids of its hosts, its size (or endless) and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowDef {
    pub src: usize,
    pub dst: usize,
    /// Bytes, or [`crate::transport::FlowSpec::ENDLESS`].
    pub size: u64,
    pub start: Time,
}
