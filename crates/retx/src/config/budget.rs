//! The memory budget (issue 41 item 1): every allocation sized by configuration, charged in
//! total against one budget before the run. A limit per item (a flowlet table allowed per
//! switch, a bitmap pool allowed per NIC, a flow count) still lets a legal setting on a large
//! legal topology need tens of GB, because the item is allocated on every switch or NIC; here
//! each is multiplied out (tables x switches, pools x NICs, flows x bytes per flow) and the
//! sum compared with the budget: over it, the run is refused in one line naming the field
//! that costs the most and the total it implies.
//!
//! The bytes per item were measured with the test binary's counting allocator
//! (`crates/retx/tests/it/budget.rs`; docs/SCENARIO.md, "Memory budget"), and the estimate is
//! held within 2x of the measured peak there.

use super::{RecoveryKind, RoutingKind, Scenario, ScenarioError};
use crate::net::topology::{NodeKind, Topology};

/// Peak heap per flow over a run: its definition, its row in the flows table, its sender and
/// receiver state while it lives, its events (measured: 2.95 KB a flow with go-back-N, IRN
/// and NDP alike, from 10^4 to 5 x 10^4 short flows of a `.cm` file).
pub const BYTES_PER_FLOW: u64 = 3_072;
/// A node (host or switch) and its share of the network's structures: ports, queues,
/// counters, the NIC's endpoint tables (measured with [`BYTES_PER_LINK`]: 45.8 KB per leaf of
/// 4 hosts and 8 uplinks).
pub const BYTES_PER_NODE: u64 = 6_144;
/// A link: two ports' queues and counters (measured with [`BYTES_PER_NODE`]).
pub const BYTES_PER_LINK: u64 = 1_280;
/// A time-series row (one receiver, one sample): measured 55 B.
pub const BYTES_PER_SAMPLE_ROW: u64 = 64;
/// Fabric statistics (`[output] links`): what every port counts (`stats::links::PortCounts`,
/// 72 B), and a selected port's snapshot, row and names with its "A->B" (measured with the
/// counts: 295 B a port on the 16k-host dragonfly, `tests/it/links.rs`).
pub const BYTES_PER_PORT_COUNTS: u64 = 72;
pub const BYTES_PER_SELECTED_PORT: u64 = 256;
/// A forwarding table entry: a switch's row per edge switch (`net::routing`).
pub const BYTES_PER_ROUTE: u64 = 8;
/// A flowlet table slot (last time 8 B + choice 4 B, padded to 16 B), and the detour table's
/// slot beside it on a switch that detours.
pub const BYTES_PER_FLOWLET: u64 = 16;
/// A spray-permutation walk (step 4 B + two 2 B halves).
pub const BYTES_PER_WALK: u64 = 8;
/// What each further thread of a parallel run holds per flow: its copy of the flow's
/// definition and connection record (measured: a 1,024-host all-to-all of 1,047,552 flows
/// peaked at 2,781 MiB on one thread and 3,641 MiB on two, about 860 B a flow more).
pub const BYTES_PER_FLOW_PER_THREAD: u64 = 1_024;
/// UET's penalty per entropy value and connection under bitmap and mixed load balancing
/// (`transport::uet::lb::Multipath`).
pub const BYTES_PER_UET_PATH: u64 = 1;
/// A bitmap pool block: its bits (8 B), next pointer (2 B) and free-stack entry (2 B).
pub const BYTES_PER_POOL_BLOCK: u64 = 12;

/// The environment variable that sets the budget (bytes, or a size such as "8GB").
pub const BUDGET_ENV: &str = "RETX_MEMORY_BUDGET";
/// The budget without it: this share of the machine's memory (or of 8 GiB where it is unknown).
pub const DEFAULT_SHARE: f64 = 0.5;

/// One charge: the field it comes from, what it is, its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Charge {
    pub field: &'static str,
    pub what: String,
    pub bytes: u64,
}

/// The charges of a scenario, and their total.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub charges: Vec<Charge>,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.charges.iter().fold(0u64, |a, c| a.saturating_add(c.bytes))
    }

    fn charge(&mut self, field: &'static str, what: String, count: u64, each: u64) {
        self.charges.push(Charge { field, what, bytes: count.saturating_mul(each) });
    }
}

/// Every configuration-sized allocation of a validated scenario with `flows` flows.
pub fn estimate(s: &Scenario, topo: &Topology, flows: u64) -> Estimate {
    let switches = topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u64;
    let hosts = topo.nodes.len() as u64 - switches;
    let edge = topo
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| n.kind == NodeKind::Switch && topo.links_of(*i).iter().any(|&l| {
            let l = &topo.links[l];
            topo.nodes[if l.a == *i { l.b } else { l.a }].kind != NodeKind::Switch
        }))
        .count() as u64;
    let mut e = Estimate::default();
    e.charge(flows_field(s), format!("{flows} flows x {BYTES_PER_FLOW} B"), flows, BYTES_PER_FLOW);
    e.charge("topology", format!("{} nodes x {BYTES_PER_NODE} B", topo.nodes.len()), topo.nodes.len() as u64, BYTES_PER_NODE);
    e.charge("topology", format!("{} links x {BYTES_PER_LINK} B", topo.links.len()), topo.links.len() as u64, BYTES_PER_LINK);
    e.charge("topology", format!("{switches} switches x {edge} routes x {BYTES_PER_ROUTE} B"), switches.saturating_mul(edge), BYTES_PER_ROUTE);
    // A row per receiver per sample: at most one receiver per flow.
    let interval = s.output.sample_interval.map_or_else(|| super::output::default_sample_interval(s.duration.0), |d| d.0);
    let samples = s.duration.0 .0 / interval.0.max(1);
    let receivers = hosts.min(flows.max(1));
    e.charge("output.sample_interval", format!("{samples} samples x {receivers} receivers x {BYTES_PER_SAMPLE_ROW} B"), samples.saturating_mul(receivers), BYTES_PER_SAMPLE_ROW);
    // The watched ports, senders and NICs: a row each per sample.
    for (field, watched) in [("output.queues", s.output.queues.len()), ("output.cc_flows", s.output.cc_flows.len()), ("output.pools", s.output.pools.len())] {
        let n = watched as u64;
        if n > 0 {
            e.charge(field, format!("{samples} samples x {n} watched x {BYTES_PER_SAMPLE_ROW} B"), samples.saturating_mul(n), BYTES_PER_SAMPLE_ROW);
        }
    }
    if let Ok(Some(selected)) = super::output::selected_links(topo, &s.output) {
        let ports = topo.port_count() as u64;
        e.charge("output.links", format!("{ports} ports x {BYTES_PER_PORT_COUNTS} B"), ports, BYTES_PER_PORT_COUNTS);
        let n = selected.len() as u64;
        e.charge("output.links", format!("{n} selected ports x {BYTES_PER_SELECTED_PORT} B"), n, BYTES_PER_SELECTED_PORT);
        let tiers = topo.port_tiers().0.len() as u64;
        e.charge("output.links", format!("{samples} samples x {tiers} tiers x {BYTES_PER_SAMPLE_ROW} B"), samples.saturating_mul(tiers), BYTES_PER_SAMPLE_ROW);
        let series = s.output.link_series.unwrap_or(super::output::DEFAULT_LINK_SERIES) as u64;
        e.charge("output.link_series", format!("{samples} samples x {series} ports x {BYTES_PER_SAMPLE_ROW} B"), samples.saturating_mul(series.min(n)), BYTES_PER_SAMPLE_ROW);
    }
    let slots = s.routing.flowlet_entries.max(1).next_power_of_two() as u64;
    match s.routing.policy {
        RoutingKind::Flowlet => {
            let tables = if s.routing.paths == super::PathsKind::Minimal { 1 } else { 2 };
            e.charge("routing.flowlet_entries", format!("{switches} switches x {tables} x {slots} slots x {BYTES_PER_FLOWLET} B"), switches.saturating_mul(tables * slots), BYTES_PER_FLOWLET);
        }
        RoutingKind::SprayPermutation => {
            e.charge("routing.flowlet_entries", format!("{switches} switches x {slots} walks x {BYTES_PER_WALK} B"), switches.saturating_mul(slots), BYTES_PER_WALK);
        }
        _ => {}
    }
    // Every partition of a parallel run is a whole simulation of its own nodes, with a copy of
    // the network and of every flow's definition.
    // Only the partitions the network splits into hold copies: `threads = 1024` on a k = 4
    // fat-tree runs 4 (its pods), and charging 1,023 refused runs that fit.
    let threads = super::run::threads(s).unwrap_or(1) as usize;
    let parts = if threads > 1 {
        crate::world::partition::plan(topo, threads, s.run.min_hosts_per_thread as usize, s.run.partition).map_or(1, |p| p.parts)
    } else {
        1
    };
    if parts > 1 {
        let more = parts as u64 - 1;
        let network = (topo.nodes.len() as u64).saturating_mul(BYTES_PER_NODE).saturating_add((topo.links.len() as u64).saturating_mul(BYTES_PER_LINK));
        e.charge("run.threads", format!("{more} more threads x ({flows} flows x {BYTES_PER_FLOW_PER_THREAD} B + the network's {network} B)"), more, flows.saturating_mul(BYTES_PER_FLOW_PER_THREAD).saturating_add(network));
    }
    match s.transport.recovery {
        RecoveryKind::Melo => {
            let m = &s.recovery.melo;
            let blocks = (m.pool_bits / m.block_bits.max(1)).max(1) as u64;
            e.charge("recovery.melo.pool_bits", format!("{hosts} NICs x 2 pools x {blocks} blocks x {BYTES_PER_POOL_BLOCK} B"), hosts.saturating_mul(2 * blocks), BYTES_PER_POOL_BLOCK);
        }
        RecoveryKind::Uet => {
            // Bitmap and mixed load balancing keep a penalty byte per entropy value in every
            // connection's sender: 32,768 paths are 32 KB a flow, ten times a flow's own
            // bytes (20,000 flows peaked at 826 MB against 62 MB estimated).
            use crate::transport::uet::lb::LbKind;
            let u = &s.recovery.uet;
            if matches!(u.load_balancing, LbKind::Bitmap | LbKind::Mixed) {
                e.charge("recovery.uet.paths", format!("{flows} flows x {} paths x {BYTES_PER_UET_PATH} B", u.paths), flows, (u.paths as u64).saturating_mul(BYTES_PER_UET_PATH));
            }
        }
        RecoveryKind::Left => {
            let l = &s.recovery.left;
            let blocks = (l.pool_bits / l.block_bits.max(1)).max(1) as u64;
            let per_nic = blocks * BYTES_PER_POOL_BLOCK
                + l.registers as u64 * (l.register_bits as u64).div_ceil(64) * 8
                + l.fifos as u64 * l.gather_packets as u64 * 8;
            e.charge("recovery.left.pool_bits", format!("{hosts} NICs x {per_nic} B of pool, loop registers and gather FIFOs"), hosts, per_nic);
        }
        _ => {}
    }
    e
}

/// The field that sets a workload's flow count (the first job's, with several).
fn flows_field(s: &Scenario) -> &'static str {
    use super::WorkloadKind as K;
    let w = &s.workload[0];
    match w.kind {
        K::HtsimCm | K::HpccFlows => "workload.file",
        K::Poisson if w.flows.count().is_none() => "workload.until",
        K::Collective => "workload.collective.iterations",
        K::Incast => "workload.rounds",
        K::LongFlows => "workload.pairs",
        _ => "workload.flows",
    }
}

/// The budget: [`BUDGET_ENV`] when set, else [`DEFAULT_SHARE`] of the machine's memory.
pub fn budget() -> Result<u64, ScenarioError> {
    match std::env::var(BUDGET_ENV) {
        Ok(v) => {
            let v = v.trim();
            v.parse::<u64>().ok().or_else(|| crate::sim::units::parse_size(v)).filter(|&b| b > 0).ok_or_else(|| {
                ScenarioError::new(BUDGET_ENV, format!("{v:?} is not a size above 0 (bytes, or e.g. \"8GB\")"))
            })
        }
        Err(_) => Ok((machine_memory().unwrap_or(8 << 30) as f64 * DEFAULT_SHARE) as u64),
    }
}

/// The machine's memory (Linux: MemTotal in /proc/meminfo).
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// Refuses an estimate above `budget`, naming the field of its largest charge and the total.
pub fn check(e: &Estimate, budget: u64) -> Result<(), ScenarioError> {
    let total = e.total();
    if total <= budget {
        return Ok(());
    }
    let top = e.charges.iter().max_by_key(|c| c.bytes).expect("an estimate has charges");
    Err(ScenarioError::new(
        top.field,
        format!(
            "the run needs about {} in all ({}: {}), above the memory budget of {} (set --memory-budget or {BUDGET_ENV} to change it)",
            human(total),
            top.what,
            human(top.bytes),
            human(budget)
        ),
    ))
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let (mut v, mut u) = (bytes as f64, 0);
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}
