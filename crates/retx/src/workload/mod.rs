//! Workloads: the flows a scenario starts, and when.

use crate::config::{WorkloadCfg, WorkloadKind};
use crate::net::topology::Topology;
use crate::sim::units::Time;
use crate::transport::FlowSpec;

/// One flow to start: node ids of its hosts, its size (or endless) and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowDef {
    pub src: usize,
    pub dst: usize,
    pub size: u64,
    pub start: Time,
}

/// The flows of a validated workload section, sorted by start time (stable).
pub fn flows(cfg: &WorkloadCfg, topo: &Topology) -> Vec<FlowDef> {
    let node = |name: &str| topo.find(name).expect("validated host name");
    let mut out: Vec<FlowDef> = match cfg.kind {
        WorkloadKind::LongFlows => cfg
            .pairs
            .iter()
            .map(|(a, b)| FlowDef { src: node(a), dst: node(b), size: FlowSpec::ENDLESS, start: Time::ZERO })
            .collect(),
        WorkloadKind::FlowList => cfg
            .flows
            .iter()
            .map(|f| FlowDef { src: node(&f.src), dst: node(&f.dst), size: f.size.0, start: f.start.0 })
            .collect(),
    };
    out.sort_by_key(|f| f.start);
    out
}
