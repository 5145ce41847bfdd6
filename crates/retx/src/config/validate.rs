//! Checks that need more than one field: ranges, names of hosts and switches, loss targets.

use super::{Scenario, ScenarioError, WorkloadKind};
use crate::net::topology::{self, NodeKind, Topology};

/// Where a loss rule applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LossTarget {
    Everywhere,
    /// Every egress link of a switch.
    Switch(usize),
    /// One direction of one link: from node a to node b.
    Link(usize, usize),
}

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

fn range_f64(field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ScenarioError> {
    if !(v >= lo && v <= hi) {
        return Err(err(field, format!("{v} is out of range (allowed {lo}..={hi})")));
    }
    Ok(())
}

fn range_u32(field: &str, v: u32, lo: u32, hi: u32) -> Result<(), ScenarioError> {
    if v < lo || v > hi {
        return Err(err(field, format!("{v} is out of range (allowed {lo}..={hi})")));
    }
    Ok(())
}

/// Parses a loss rule's `at`.
pub fn loss_target(topo: &Topology, at: &str, field: &str) -> Result<LossTarget, ScenarioError> {
    let named = |name: &str| topo.find(name).ok_or_else(|| err(field, format!("no node named {name:?}")));
    if at == "everywhere" {
        Ok(LossTarget::Everywhere)
    } else if let Some(name) = at.strip_prefix("switch:") {
        let n = named(name)?;
        if topo.nodes[n].kind != NodeKind::Switch {
            return Err(err(field, format!("{name:?} is a host, not a switch")));
        }
        Ok(LossTarget::Switch(n))
    } else if let Some(pair) = at.strip_prefix("link:") {
        let (a, b) = pair.split_once("->").ok_or_else(|| err(field, format!("{at:?}: write a link as \"link:A->B\"")))?;
        let (a, b) = (named(a.trim())?, named(b.trim())?);
        if !topo.links.iter().any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a)) {
            return Err(err(field, format!("no link between {:?} and {:?}", topo.nodes[a].name, topo.nodes[b].name)));
        }
        Ok(LossTarget::Link(a, b))
    } else {
        Err(err(field, format!("{at:?} is not a loss location (allowed: \"everywhere\", \"switch:NAME\", \"link:A->B\")")))
    }
}

/// Fills defaults that depend on other fields, checks every range and name, and builds the
/// topology.
pub fn validate(s: &mut Scenario) -> Result<Topology, ScenarioError> {
    if s.name.trim().is_empty() {
        return Err(err("name", "must not be empty"));
    }
    if s.duration.0 .0 == 0 {
        return Err(err("duration", "must be greater than 0"));
    }
    topology::resolve(&mut s.topology)?;
    let topo = topology::build(&s.topology);

    let sw = &s.switch;
    if sw.buffer.0 < 10_000 {
        return Err(err("switch.buffer", format!("{} B is too small (at least 10KB)", sw.buffer.0)));
    }
    range_f64("switch.dt_alpha", sw.dt_alpha, 1.0 / 1024.0, 1024.0)?;
    range_f64("switch.ecn.pmax", sw.ecn.pmax, 0.0, 1.0)?;
    if sw.ecn.kmin > sw.ecn.kmax {
        return Err(err("switch.ecn.kmin", "must not exceed switch.ecn.kmax"));
    }
    if sw.pfc.xon > sw.pfc.xoff {
        return Err(err("switch.pfc.xon", "must not exceed switch.pfc.xoff"));
    }
    range_u32("nic.mtu", s.nic.mtu, 64, 9000)?;
    range_u32("nic.ack_interval", s.nic.ack_interval, 1, 1 << 16)?;
    range_u32("recovery.irn.bitmap_packets", s.recovery.irn.bitmap_packets, 0, 1 << 20)?;
    let d = &s.cc.dcqcn;
    range_f64("cc.dcqcn.g", d.g, 0.0, 1.0)?;
    for (field, t) in [
        ("recovery.gbn.nak_interval", s.recovery.gbn.nak_interval.0),
        ("recovery.gbn.rto", s.recovery.gbn.rto.0),
        ("recovery.irn.rto_low", s.recovery.irn.rto_low.0),
        ("recovery.irn.rto_high", s.recovery.irn.rto_high.0),
        ("cc.dcqcn.alpha_interval", d.alpha_interval.0),
        ("cc.dcqcn.increase_interval", d.increase_interval.0),
        ("output.sample_interval", s.output.sample_interval.0),
    ] {
        if t.0 == 0 {
            return Err(err(field, "must be greater than 0"));
        }
    }

    for (i, l) in s.loss.iter().enumerate() {
        range_f64(&format!("loss[{i}].rate"), l.rate, 0.0, 1.0)?;
        loss_target(&topo, &l.at, &format!("loss[{i}].at"))?;
    }

    let host = |name: &str, field: String| -> Result<usize, ScenarioError> {
        match topo.find(name) {
            Some(n) if topo.nodes[n].kind == NodeKind::Host => Ok(n),
            Some(_) => Err(err(field, format!("{name:?} is a switch, not a host"))),
            None => {
                let hosts = topo.hosts().count();
                Err(err(field, format!("unknown host {name:?} (hosts are h0..h{})", hosts - 1)))
            }
        }
    };
    let w = &s.workload;
    match w.kind {
        WorkloadKind::LongFlows => {
            if w.pairs.is_empty() {
                return Err(err("workload.pairs", "long-flows needs at least one pair, e.g. [[\"h0\", \"h1\"]]"));
            }
            for (i, (a, b)) in w.pairs.iter().enumerate() {
                let (x, y) = (host(a, format!("workload.pairs[{i}]"))?, host(b, format!("workload.pairs[{i}]"))?);
                if x == y {
                    return Err(err(format!("workload.pairs[{i}]"), "source and destination are the same host"));
                }
            }
        }
        WorkloadKind::FlowList => {
            if w.flows.is_empty() {
                return Err(err("workload.flows", "flow-list needs at least one flow"));
            }
            for (i, f) in w.flows.iter().enumerate() {
                let x = host(&f.src, format!("workload.flows[{i}].src"))?;
                let y = host(&f.dst, format!("workload.flows[{i}].dst"))?;
                if x == y {
                    return Err(err(format!("workload.flows[{i}]"), "source and destination are the same host"));
                }
                if f.size.0 == 0 {
                    return Err(err(format!("workload.flows[{i}].size"), "must be at least 1 byte"));
                }
            }
        }
    }
    Ok(topo)
}
