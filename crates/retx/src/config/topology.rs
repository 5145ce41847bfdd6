//! The `[topology]` section: its fields, defaults, ranges, and building the network it names.

use super::{Bw, Dur, ScenarioError};
use serde::{Deserialize, Serialize};
use crate::net::topology::{Clos, Dragonfly, NodeKind, Topology, MAX_HOSTS, MAX_LINKS, MAX_LINK_DELAY, MAX_LINK_RATE, MAX_ROUTING_ENTRIES, MAX_ROUTING_WORK, MIN_LINK_RATE};
use crate::sim::units::{Rate, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// N hosts on one switch.
    SingleSwitch,
    /// Two-tier Clos: every leaf connects to every spine.
    LeafSpine,
    /// The MELO (APNet'17) Fig. 4 network: a leaf-spine preset.
    MeloFig4,
    /// A topology file in the HPCC ns-3 format (`file`).
    HpccFile,
    /// The k-ary fat-tree (`k`): a three-tier Clos with k pods.
    FatTree,
    /// A general three-tier Clos: pods of ToRs and aggregation switches, cores in stripes.
    Clos,
    /// The HPCC paper's 320-server network (HPCC ns-3 `mix/fat.txt`): a Clos preset.
    #[serde(rename = "hpcc-320")]
    Hpcc320,
    /// STRIDE's 256-host fat-tree (OMNeT++ evaluation): a Clos preset.
    #[serde(rename = "stride-256")]
    Stride256,
    /// A dragonfly: groups of routers joined all-to-all by local links, groups joined
    /// all-to-all by global links (`p`, `a`, `h`, `groups`).
    Dragonfly,
    /// LEFT's (APNet '24) ns-3 evaluation network: a dragonfly preset.
    LeftDragonfly,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub kind: TopologyKind,
    /// hpcc-file: the topology file, relative to the scenario's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_link: Option<Bw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<Bw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<Dur>,
    /// fat-tree: the switch radix (even).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// clos (and its presets): the counts of each tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tors_per_pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggs_per_pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_tor: Option<u32>,
    /// fat-tree, clos: ToR-aggregation and aggregation-core rates (default `fabric_link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_agg_link: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg_core_link: Option<Bw>,
    /// fat-tree, clos: per-tier propagation delays (default `link_delay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_agg_delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg_core_delay: Option<Dur>,
    /// dragonfly: hosts per router, routers per group, global links per router, groups. Only
    /// `h` gives the balanced dragonfly (p = h, a = 2h, groups = a·h + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<u32>,
    /// dragonfly: local (in a group) and global (between groups) link rates and delays
    /// (default `fabric_link`, `link_delay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_link: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_link: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_delay: Option<Dur>,
}

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

/// The HPCC paper's 320-server network (SIGCOMM '19, §5; HPCC ns-3 `mix/fat.txt`): 5 pods of
/// 4 ToRs and 4 aggregation switches, 16 cores (aggregation switch i of each pod to cores
/// 4i..4i+3), 16 hosts per ToR, 100 Gbps host links, 400 Gbps fabric, 1 us links. Built with
/// the file's node ids and link order. Its 32 MB switch buffer is a `[switch]` setting.
pub fn hpcc_320_defaults(cfg: &mut TopologyCfg) {
    cfg.pods.get_or_insert(5);
    cfg.tors_per_pod.get_or_insert(4);
    cfg.aggs_per_pod.get_or_insert(4);
    cfg.cores.get_or_insert(16);
    cfg.hosts_per_tor.get_or_insert(16);
    cfg.host_link.get_or_insert(Bw(Rate::gbps(100)));
    cfg.fabric_link.get_or_insert(Bw(Rate::gbps(400)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(1)));
}

/// STRIDE's 256-host fat-tree (its §V.B simulates "256 hosts in FatTree based topology [27]",
/// Al-Fares et al., in OMNeT++, and gives nothing more). A k-ary fat-tree holds k³/4 hosts,
/// never 256, so this is the k = 8 switch fabric (8 pods of 4 ToRs and 4 aggregation switches,
/// 16 cores) with 8 hosts per ToR: the smallest fat-tree fabric that holds 256 hosts on equal
/// ToRs, 2:1 oversubscribed at the ToRs. Rates and delays are not given either: 10 Gbps
/// everywhere, the fastest port of its FPGA testbed (§V.A: 1 and 10 GigE) and the rate of the
/// DCTCP evaluations it compares with, and 1 us per link. Every value may be overridden.
pub fn stride_256_defaults(cfg: &mut TopologyCfg) {
    cfg.pods.get_or_insert(8);
    cfg.tors_per_pod.get_or_insert(4);
    cfg.aggs_per_pod.get_or_insert(4);
    cfg.cores.get_or_insert(16);
    cfg.hosts_per_tor.get_or_insert(8);
    cfg.host_link.get_or_insert(Bw(Rate::gbps(10)));
    cfg.fabric_link.get_or_insert(Bw(Rate::gbps(10)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(1)));
}

/// LEFT's ns-3 evaluation network (Huang et al., "LEFT: LightwEight and FasT packet
/// Reordering for RDMA", APNet 2024, §NS3 evaluation): a dragonfly with 200 Gbps host links,
/// 400 Gbps global links ("400Gbps direct between groups") and 1 us links; its 1 KB MTU is a
/// `[nic] mtu` setting. The talk gives no size and no local-link rate: this is the balanced
/// h = 2 dragonfly (a = 4 routers of p = 2 hosts per group, 9 groups, 72 hosts), the smallest
/// balanced one in which Valiant has a choice of detours (7 intermediate groups per pair),
/// with 400 Gbps local links (one switch generation, hosts on 200 Gbps breakouts of its
/// ports). A router then takes 400 Gbps from its hosts and has 800 Gbps of global links: the
/// 2x a Valiant detour needs. Every value may be overridden.
pub fn left_dragonfly_defaults(cfg: &mut TopologyCfg) {
    cfg.h.get_or_insert(2);
    cfg.host_link.get_or_insert(Bw(Rate::gbps(200)));
    cfg.fabric_link.get_or_insert(Bw(Rate::gbps(400)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(1)));
}

fn kind_name(k: TopologyKind) -> &'static str {
    match k {
        TopologyKind::SingleSwitch => "single-switch",
        TopologyKind::LeafSpine => "leaf-spine",
        TopologyKind::MeloFig4 => "melo-fig4",
        TopologyKind::HpccFile => "hpcc-file",
        TopologyKind::FatTree => "fat-tree",
        TopologyKind::Clos => "clos",
        TopologyKind::Hpcc320 => "hpcc-320",
        TopologyKind::Stride256 => "stride-256",
        TopologyKind::Dragonfly => "dragonfly",
        TopologyKind::LeftDragonfly => "left-dragonfly",
    }
}

/// Rejects a field the kind does not use, naming the fields it does use.
fn check_fields(cfg: &TopologyCfg) -> Result<(), ScenarioError> {
    use TopologyKind::*;
    const ALL_BUT_FILE: &[TopologyKind] = &[SingleSwitch, LeafSpine, MeloFig4, FatTree, Clos, Hpcc320, Stride256, Dragonfly, LeftDragonfly];
    const LEAF_SPINE: &[TopologyKind] = &[LeafSpine, MeloFig4];
    const CLOS: &[TopologyKind] = &[Clos, Hpcc320, Stride256];
    const THREE_TIER: &[TopologyKind] = &[FatTree, Clos, Hpcc320, Stride256];
    const PER_TIER_HOST: &[TopologyKind] = &[FatTree, Clos, Hpcc320, Stride256, Dragonfly, LeftDragonfly];
    const FABRIC: &[TopologyKind] = &[LeafSpine, MeloFig4, FatTree, Clos, Hpcc320, Stride256, Dragonfly, LeftDragonfly];
    const DRAGONFLY: &[TopologyKind] = &[Dragonfly, LeftDragonfly];
    let given: [(&str, bool, &[TopologyKind]); 27] = [
        ("hosts", cfg.hosts.is_some(), &[SingleSwitch]),
        ("spines", cfg.spines.is_some(), LEAF_SPINE),
        ("leaves", cfg.leaves.is_some(), LEAF_SPINE),
        ("hosts_per_leaf", cfg.hosts_per_leaf.is_some(), LEAF_SPINE),
        ("host_link", cfg.host_link.is_some(), ALL_BUT_FILE),
        ("fabric_link", cfg.fabric_link.is_some(), FABRIC),
        ("link_delay", cfg.link_delay.is_some(), ALL_BUT_FILE),
        ("k", cfg.k.is_some(), &[FatTree]),
        ("pods", cfg.pods.is_some(), CLOS),
        ("tors_per_pod", cfg.tors_per_pod.is_some(), CLOS),
        ("aggs_per_pod", cfg.aggs_per_pod.is_some(), CLOS),
        ("cores", cfg.cores.is_some(), CLOS),
        ("hosts_per_tor", cfg.hosts_per_tor.is_some(), CLOS),
        ("tor_agg_link", cfg.tor_agg_link.is_some(), THREE_TIER),
        ("agg_core_link", cfg.agg_core_link.is_some(), THREE_TIER),
        ("host_delay", cfg.host_delay.is_some(), PER_TIER_HOST),
        ("tor_agg_delay", cfg.tor_agg_delay.is_some(), THREE_TIER),
        ("agg_core_delay", cfg.agg_core_delay.is_some(), THREE_TIER),
        ("p", cfg.p.is_some(), DRAGONFLY),
        ("a", cfg.a.is_some(), DRAGONFLY),
        ("h", cfg.h.is_some(), DRAGONFLY),
        ("groups", cfg.groups.is_some(), DRAGONFLY),
        ("local_link", cfg.local_link.is_some(), DRAGONFLY),
        ("global_link", cfg.global_link.is_some(), DRAGONFLY),
        ("local_delay", cfg.local_delay.is_some(), DRAGONFLY),
        ("global_delay", cfg.global_delay.is_some(), DRAGONFLY),
        ("file", cfg.file.is_some(), &[HpccFile]),
    ];
    for (field, present, kinds) in given {
        if present && !kinds.contains(&cfg.kind) {
            let name = kind_name(cfg.kind);
            let msg = if cfg.kind == HpccFile {
                format!("is not used by kind = {name:?} (the file gives every link)")
            } else if field == "file" {
                "is only used with kind = \"hpcc-file\"".to_string()
            } else {
                let used: Vec<&str> = given.iter().filter(|(_, _, k)| k.contains(&cfg.kind)).map(|(f, _, _)| *f).collect();
                format!("is not used by kind = {name:?} (its fields: {})", used.join(", "))
            };
            return Err(ScenarioError::new(format!("topology.{field}"), msg));
        }
    }
    Ok(())
}

/// Fills the defaults of a topology section and checks its ranges.
pub fn resolve(cfg: &mut TopologyCfg) -> Result<(), ScenarioError> {
    if cfg.kind == TopologyKind::HpccFile && cfg.file.is_none() {
        return Err(ScenarioError::new("topology.file", "kind = \"hpcc-file\" needs file = \"topology.txt\""));
    }
    check_fields(cfg)?;
    match cfg.kind {
        TopologyKind::HpccFile => return Ok(()),
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
        TopologyKind::FatTree => match cfg.k {
            None => return Err(ScenarioError::new("topology.k", "fat-tree needs k = 4 (the switch radix: an even number in 2..=64)")),
            Some(k) if !(2..=64).contains(&k) || !k.is_multiple_of(2) => {
                return Err(ScenarioError::new("topology.k", format!("{k} is not allowed (an even number in 2..=64)")));
            }
            Some(_) => {}
        },
        TopologyKind::Clos => {
            cfg.pods.get_or_insert(4);
            cfg.tors_per_pod.get_or_insert(2);
            cfg.aggs_per_pod.get_or_insert(2);
            cfg.cores.get_or_insert(4);
            cfg.hosts_per_tor.get_or_insert(2);
        }
        TopologyKind::Hpcc320 => hpcc_320_defaults(cfg),
        TopologyKind::Stride256 => stride_256_defaults(cfg),
        TopologyKind::LeftDragonfly => left_dragonfly_defaults(cfg),
        TopologyKind::Dragonfly => {
            if cfg.h.is_none() {
                return Err(ScenarioError::new("topology.h", "dragonfly needs h = 2 (global links per router; h alone gives the balanced dragonfly: a = 2h routers per group, p = h hosts per router, a x h + 1 groups)"));
            }
        }
    }
    cfg.host_link.get_or_insert(Bw(Rate::gbps(40)));
    cfg.link_delay.get_or_insert(Dur(Time::from_us(1)));
    if matches!(cfg.kind, TopologyKind::FatTree | TopologyKind::Clos | TopologyKind::Hpcc320 | TopologyKind::Stride256) {
        let fabric = *cfg.fabric_link.get_or_insert(cfg.host_link.expect("set above"));
        cfg.tor_agg_link.get_or_insert(fabric);
        cfg.agg_core_link.get_or_insert(fabric);
        let delay = cfg.link_delay.expect("set above");
        cfg.host_delay.get_or_insert(delay);
        cfg.tor_agg_delay.get_or_insert(delay);
        cfg.agg_core_delay.get_or_insert(delay);
    }
    if matches!(cfg.kind, TopologyKind::Dragonfly | TopologyKind::LeftDragonfly) {
        let fabric = *cfg.fabric_link.get_or_insert(cfg.host_link.expect("set above"));
        cfg.local_link.get_or_insert(fabric);
        cfg.global_link.get_or_insert(fabric);
        let delay = cfg.link_delay.expect("set above");
        cfg.host_delay.get_or_insert(delay);
        cfg.local_delay.get_or_insert(delay);
        cfg.global_delay.get_or_insert(delay);
        // Balanced by default: from h, a = 2h and p = h; the most groups a x h + 1.
        let h = cfg.h.expect("required above");
        if !(1..=64).contains(&h) {
            return Err(ScenarioError::new("topology.h", format!("{h} is out of range (allowed 1..=64)")));
        }
        let a = *cfg.a.get_or_insert(2 * h);
        cfg.p.get_or_insert(h);
        if !(1..=256).contains(&a) {
            return Err(ScenarioError::new("topology.a", format!("{a} is out of range (allowed 1..=256)")));
        }
        cfg.groups.get_or_insert(a * h + 1);
    }
    let check = |field: &str, v: Option<u32>, lo: u32, hi: u32| match v {
        Some(x) if x < lo || x > hi => Err(ScenarioError::new(format!("topology.{field}"), format!("{x} is out of range (allowed {lo}..={hi})"))),
        _ => Ok(()),
    };
    check("hosts", cfg.hosts, 2, MAX_HOSTS as u32)?;
    check("spines", cfg.spines, 1, 1_000)?;
    check("leaves", cfg.leaves, 1, 10_000)?;
    check("hosts_per_leaf", cfg.hosts_per_leaf, 1, 10_000)?;
    check("pods", cfg.pods, 1, 1_000)?;
    check("tors_per_pod", cfg.tors_per_pod, 1, 1_000)?;
    check("aggs_per_pod", cfg.aggs_per_pod, 1, 1_000)?;
    check("cores", cfg.cores, 1, 100_000)?;
    check("hosts_per_tor", cfg.hosts_per_tor, 1, 10_000)?;
    check("p", cfg.p, 1, 256)?;
    for (field, bw) in [
        ("host_link", cfg.host_link),
        ("fabric_link", cfg.fabric_link),
        ("tor_agg_link", cfg.tor_agg_link),
        ("agg_core_link", cfg.agg_core_link),
        ("local_link", cfg.local_link),
        ("global_link", cfg.global_link),
    ] {
        if let Some(Bw(r)) = bw {
            if r < MIN_LINK_RATE {
                return Err(ScenarioError::new(format!("topology.{field}"), format!("{r} is too slow (at least {MIN_LINK_RATE})")));
            }
            if r > MAX_LINK_RATE {
                return Err(ScenarioError::new(format!("topology.{field}"), format!("{r} is too fast (at most {MAX_LINK_RATE})")));
            }
        }
    }
    for (field, d) in [
        ("link_delay", cfg.link_delay),
        ("host_delay", cfg.host_delay),
        ("tor_agg_delay", cfg.tor_agg_delay),
        ("agg_core_delay", cfg.agg_core_delay),
        ("local_delay", cfg.local_delay),
        ("global_delay", cfg.global_delay),
    ] {
        if let Some(Dur(t)) = d {
            if t > MAX_LINK_DELAY {
                return Err(ScenarioError::new(format!("topology.{field}"), format!("{t} is out of range (allowed 0ns..={MAX_LINK_DELAY})")));
            }
        }
    }
    if let Some(c) = clos(cfg) {
        c.validate().map_err(|(field, msg)| ScenarioError::new(format!("topology.{field}"), msg))?;
        let hosts = c.hosts();
        if !(2..=MAX_HOSTS as u64).contains(&hosts) {
            let field = if cfg.kind == TopologyKind::FatTree { "k" } else { "hosts_per_tor" };
            return Err(ScenarioError::new(
                format!("topology.{field}"),
                format!("{hosts} hosts (pods x tors_per_pod x hosts_per_tor) is out of range (allowed 2..={MAX_HOSTS})"),
            ));
        }
        let (pods, tors, aggs) = (c.pods as u64, c.tors_per_pod as u64, c.aggs_per_pod as u64);
        let links = hosts + pods * tors * aggs + pods * c.cores as u64;
        if links > MAX_LINKS as u64 {
            let field = if cfg.kind == TopologyKind::FatTree { "k" } else { "aggs_per_pod" };
            return Err(ScenarioError::new(
                format!("topology.{field}"),
                format!("{links} links (hosts + pods x tors_per_pod x aggs_per_pod + pods x cores) is out of range (allowed up to {MAX_LINKS})"),
            ));
        }
    }
    if let Some(d) = dragonfly(cfg) {
        d.validate().map_err(|(field, msg)| ScenarioError::new(format!("topology.{field}"), msg))?;
        let hosts = d.hosts();
        if !(2..=MAX_HOSTS as u64).contains(&hosts) {
            return Err(ScenarioError::new(
                "topology.p",
                format!("{hosts} hosts (groups x a x p = {} x {} x {}) is out of range (allowed 2..={MAX_HOSTS})", d.groups, d.a, d.p),
            ));
        }
        // Tables: one row per router, one destination group per router.
        let entries = d.routers() * d.routers();
        if entries > MAX_ROUTING_ENTRIES {
            return Err(ScenarioError::new(
                "topology.a",
                format!("{} routers (groups x a) need forwarding tables of {entries} entries, above the limit of {MAX_ROUTING_ENTRIES}", d.routers()),
            ));
        }
    }
    if let (Some(spines), Some(leaves), Some(per_leaf)) = (cfg.spines, cfg.leaves, cfg.hosts_per_leaf) {
        let hosts = leaves as u64 * per_leaf as u64;
        if hosts > MAX_HOSTS as u64 {
            return Err(ScenarioError::new(
                "topology.hosts_per_leaf",
                format!("{hosts} hosts (leaves x hosts_per_leaf) is out of range (allowed 2..={MAX_HOSTS})"),
            ));
        }
        if hosts < 2 {
            return Err(ScenarioError::new("topology.hosts_per_leaf", "1 host in all (leaves x hosts_per_leaf): a network needs at least 2"));
        }
        if spines as u64 * leaves as u64 > MAX_LINKS as u64 {
            return Err(ScenarioError::new("topology.spines", format!("{} spine-leaf links (spines x leaves) is out of range (allowed up to {MAX_LINKS})", spines as u64 * leaves as u64)));
        }
    }
    Ok(())
}

/// Checks a built network: every host reaches every other, and the forwarding tables fit
/// [`MAX_ROUTING_ENTRIES`]. `field` is where the user changes it; `what` prefixes the message.
fn check_built(topo: &Topology, field: &str, what: &str) -> Result<(), ScenarioError> {
    let hosts = topo.hosts().count();
    if hosts < 2 {
        return Err(ScenarioError::new(field, format!("{what}needs at least two hosts, has {hosts}")));
    }
    if let Some((a, b)) = topo.unreachable_pair() {
        let (a, b) = (&topo.nodes[a].name, &topo.nodes[b].name);
        return Err(ScenarioError::new(field, format!("{what}no path from {a} to {b} (every host must reach every other host)")));
    }
    let entries = topo.routing_entries();
    if entries > MAX_ROUTING_ENTRIES {
        return Err(ScenarioError::new(
            field,
            format!("{what}forwarding tables of {entries} entries (switches x edge switches; a single-homed host has no row) are above the limit of {MAX_ROUTING_ENTRIES}; use fewer leaves or ToRs"),
        ));
    }
    let work = topo.routing_work();
    if work > MAX_ROUTING_WORK {
        return Err(ScenarioError::new(
            field,
            format!("{what}building its forwarding tables takes {work} steps (a search over {} port ends per destination switch), above the limit of {MAX_ROUTING_WORK} (minutes before the first packet); use fewer leaves or ToRs, or fewer links", 2 * topo.links.len()),
        ));
    }
    Ok(())
}

/// The three-tier Clos a resolved section describes (fat-tree, clos and their presets).
pub fn clos(cfg: &TopologyCfg) -> Option<Clos> {
    let (pods, tors_per_pod, aggs_per_pod, cores, hosts_per_tor) = match cfg.kind {
        TopologyKind::FatTree => {
            let half = cfg.k? / 2;
            (2 * half, half, half, half * half, half)
        }
        TopologyKind::Clos | TopologyKind::Hpcc320 | TopologyKind::Stride256 => {
            (cfg.pods?, cfg.tors_per_pod?, cfg.aggs_per_pod?, cfg.cores?, cfg.hosts_per_tor?)
        }
        TopologyKind::SingleSwitch | TopologyKind::LeafSpine | TopologyKind::MeloFig4 | TopologyKind::HpccFile | TopologyKind::Dragonfly | TopologyKind::LeftDragonfly => return None,
    };
    Some(Clos {
        pods,
        tors_per_pod,
        aggs_per_pod,
        cores,
        hosts_per_tor,
        host_link: cfg.host_link?.0,
        tor_agg_link: cfg.tor_agg_link?.0,
        agg_core_link: cfg.agg_core_link?.0,
        host_delay: cfg.host_delay?.0,
        tor_agg_delay: cfg.tor_agg_delay?.0,
        agg_core_delay: cfg.agg_core_delay?.0,
    })
}

/// The dragonfly a resolved section describes (dragonfly and its presets).
pub fn dragonfly(cfg: &TopologyCfg) -> Option<Dragonfly> {
    if !matches!(cfg.kind, TopologyKind::Dragonfly | TopologyKind::LeftDragonfly) {
        return None;
    }
    Some(Dragonfly {
        p: cfg.p?,
        a: cfg.a?,
        h: cfg.h?,
        groups: cfg.groups?,
        host_link: cfg.host_link?.0,
        local_link: cfg.local_link?.0,
        global_link: cfg.global_link?.0,
        host_delay: cfg.host_delay?.0,
        local_delay: cfg.local_delay?.0,
        global_delay: cfg.global_delay?.0,
    })
}

/// Builds a resolved topology section; a file is read relative to `base_dir`.
pub fn build(cfg: &TopologyCfg, base_dir: &std::path::Path) -> Result<Topology, ScenarioError> {
    if let Some(file) = &cfg.file {
        let path = base_dir.join(file);
        let text = crate::sim::input::read_text(&path, crate::sim::input::MAX_TOPOLOGY_FILE).map_err(|e| ScenarioError::new("topology.file", e))?;
        let topo = crate::net::hpcc::parse_topology(&text).map_err(|e| ScenarioError::new("topology.file", format!("{}: {e}", path.display())))?;
        check_built(&topo, "topology.file", &format!("{}: ", path.display()))?;
        return Ok(topo);
    }
    let topo = build_preset(cfg);
    let field = match cfg.kind {
        TopologyKind::SingleSwitch => "topology.hosts",
        TopologyKind::LeafSpine | TopologyKind::MeloFig4 => "topology.leaves",
        TopologyKind::FatTree => "topology.k",
        TopologyKind::Dragonfly | TopologyKind::LeftDragonfly => "topology.h",
        _ => "topology.tors_per_pod",
    };
    check_built(&topo, field, "")?;
    Ok(topo)
}

fn build_preset(cfg: &TopologyCfg) -> Topology {
    if let Some(c) = clos(cfg) {
        return c.build();
    }
    if let Some(d) = dragonfly(cfg) {
        return d.build();
    }
    let host = cfg.host_link.expect("resolved").0;
    let delay = cfg.link_delay.expect("resolved").0;
    match cfg.kind {
        TopologyKind::SingleSwitch => Topology::single_switch(cfg.hosts.expect("resolved"), host, delay),
        TopologyKind::HpccFile => unreachable!("built from its file"),
        TopologyKind::FatTree | TopologyKind::Clos | TopologyKind::Hpcc320 | TopologyKind::Stride256 => unreachable!("built as a Clos"),
        TopologyKind::Dragonfly | TopologyKind::LeftDragonfly => unreachable!("built as a dragonfly"),
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

/// The node a scenario names (`field`: where).
pub fn node(topo: &Topology, name: &str, field: &str) -> Result<usize, ScenarioError> {
    topo.find(name).ok_or_else(|| ScenarioError::new(field, format!("no node named {name:?}")))
}

/// Two named nodes joined by a link: (a, b).
pub fn link(topo: &Topology, a: &str, b: &str, field: &str) -> Result<(usize, usize), ScenarioError> {
    let (a, b) = (node(topo, a, field)?, node(topo, b, field)?);
    if topo.link_between(a, b).is_none() {
        return Err(ScenarioError::new(field, format!("no link between {:?} and {:?}", topo.nodes[a].name, topo.nodes[b].name)));
    }
    Ok((a, b))
}

/// A port written "A->B" (node A's port toward node B; "link:A->B" also reads): (A, B).
pub fn port(topo: &Topology, q: &str, field: &str) -> Result<(usize, usize), ScenarioError> {
    let pair = q.strip_prefix("link:").unwrap_or(q);
    let Some((a, b)) = pair.split_once("->") else {
        return Err(ScenarioError::new(field, format!("{q:?}: write a port as \"A->B\" (node A's port toward node B)")));
    };
    link(topo, a.trim(), b.trim(), field)
}

/// Host names to node ids, each named once.
pub fn host_list(topo: &Topology, names: &[String], field: &str) -> Result<Vec<usize>, ScenarioError> {
    let mut out = Vec::with_capacity(names.len());
    let mut listed = vec![false; topo.nodes.len()];
    for h in names {
        match topo.find(h) {
            Some(n) if topo.nodes[n].kind == NodeKind::Host => {
                if std::mem::replace(&mut listed[n], true) {
                    return Err(ScenarioError::new(field, format!("{h:?} is listed twice")));
                }
                out.push(n);
            }
            Some(_) => return Err(ScenarioError::new(field, format!("{h:?} is a switch, not a host"))),
            None => {
                let hosts = topo.hosts().count();
                return Err(ScenarioError::new(field, format!("{h:?} is not a host (hosts are h0..h{})", hosts.saturating_sub(1))));
            }
        }
    }
    Ok(out)
}
