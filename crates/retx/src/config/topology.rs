//! The `[topology]` section: defaults, ranges, and building the network it names.

use super::{Bw, Dur, ScenarioError, TopologyCfg, TopologyKind};
use crate::net::topology::Topology;
use crate::sim::units::{Rate, Time};

/// The MELO (APNet'17) Fig. 4 network: 4 spines, 32 leaves, 10 hosts per leaf, 40 Gbps host
/// links, 100 Gbps fabric. "Base RTT 16 us": host-leaf-spine-leaf-host is 4 links each way,
/// so 2 us of propagation per link.
pub fn melo_fig4_defaults(cfg: &mut TopologyCfg) {
    cfg.spines.get_or_insert(4);
    cfg.leaves.get_or_insert(32);
    cfg.hosts_per_leaf.get_or_insert(10);
    cfg.host_link.get_or_insert(Bw(Rate::gbps(40)));
    cfg.fabric_link.get_or_insert(Bw(Rate::gbps(100)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(2)));
}

/// Fills the defaults of a topology section and checks its ranges.
pub fn resolve(cfg: &mut TopologyCfg) -> Result<(), ScenarioError> {
    let file_only = cfg.kind == TopologyKind::HpccFile;
    if file_only != cfg.file.is_some() {
        return Err(ScenarioError::new("topology.file", if file_only { "kind = \"hpcc-file\" needs file = \"topology.txt\"" } else { "is only used with kind = \"hpcc-file\"" }));
    }
    if file_only {
        let given = [("hosts", cfg.hosts.is_some()), ("spines", cfg.spines.is_some()), ("leaves", cfg.leaves.is_some()),
            ("hosts_per_leaf", cfg.hosts_per_leaf.is_some()), ("host_link", cfg.host_link.is_some()),
            ("fabric_link", cfg.fabric_link.is_some()), ("link_delay", cfg.link_delay.is_some())];
        if let Some((field, _)) = given.iter().find(|(_, present)| *present) {
            return Err(ScenarioError::new(format!("topology.{field}"), "is not used by kind = \"hpcc-file\" (the file gives every link)"));
        }
        return Ok(());
    }
    match cfg.kind {
        TopologyKind::HpccFile => unreachable!("handled above"),
        TopologyKind::MeloFig4 => melo_fig4_defaults(cfg),
        TopologyKind::SingleSwitch => {
            cfg.hosts.get_or_insert(2);
        }
        TopologyKind::LeafSpine => {
            cfg.spines.get_or_insert(2);
            cfg.leaves.get_or_insert(2);
            cfg.hosts_per_leaf.get_or_insert(2);
            cfg.fabric_link.get_or_insert(Bw(Rate::gbps(100)));
        }
    }
    cfg.host_link.get_or_insert(Bw(Rate::gbps(40)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(1)));
    let check = |field: &str, v: Option<u32>, lo: u32, hi: u32| match v {
        Some(x) if x < lo || x > hi => Err(ScenarioError::new(format!("topology.{field}"), format!("{x} is out of range (allowed {lo}..={hi})"))),
        _ => Ok(()),
    };
    check("hosts", cfg.hosts, 2, 100_000)?;
    check("spines", cfg.spines, 1, 1_000)?;
    check("leaves", cfg.leaves, 1, 10_000)?;
    check("hosts_per_leaf", cfg.hosts_per_leaf, 1, 10_000)?;
    for (field, bw) in [("host_link", cfg.host_link), ("fabric_link", cfg.fabric_link)] {
        if let Some(Bw(r)) = bw {
            if r.0 < 1_000_000 {
                return Err(ScenarioError::new(format!("topology.{field}"), format!("{r} is too slow (at least 1Mbps)")));
            }
        }
    }
    Ok(())
}

/// Builds a resolved topology section; a file is read relative to `base_dir`.
pub fn build(cfg: &TopologyCfg, base_dir: &std::path::Path) -> Result<Topology, ScenarioError> {
    if let Some(file) = &cfg.file {
        let path = base_dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| ScenarioError::new("topology.file", format!("cannot read {}: {e}", path.display())))?;
        let topo = crate::net::hpcc::parse_topology(&text).map_err(|e| ScenarioError::new("topology.file", format!("{}: {e}", path.display())))?;
        if topo.hosts().count() < 2 {
            return Err(ScenarioError::new("topology.file", "needs at least two hosts"));
        }
        return Ok(topo);
    }
    Ok(build_preset(cfg))
}

fn build_preset(cfg: &TopologyCfg) -> Topology {
    let host = cfg.host_link.expect("resolved").0;
    let delay = cfg.link_delay.expect("resolved").0;
    match cfg.kind {
        TopologyKind::SingleSwitch => Topology::single_switch(cfg.hosts.expect("resolved"), host, delay),
        TopologyKind::HpccFile => unreachable!("built from its file"),
        TopologyKind::LeafSpine | TopologyKind::MeloFig4 => Topology::leaf_spine(
            cfg.spines.expect("resolved"),
            cfg.leaves.expect("resolved"),
            cfg.hosts_per_leaf.expect("resolved"),
            host,
            cfg.fabric_link.expect("resolved").0,
            delay,
        ),
    }
}
