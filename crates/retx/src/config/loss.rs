//! The `[[loss]]` rules: where packets are lost, by which model, which kinds; their checks and
//! their resolution against the network.

use super::ScenarioError;
use crate::net::loss::LossTarget;
use crate::net::topology::{NodeKind, Topology};
use crate::sim::check::range_f64;
use serde::{Deserialize, Serialize};

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossCfg {
    /// "switch:NAME" (all its egress links), "link:A->B" (one direction) or "everywhere".
    pub at: String,
    #[serde(default = "bernoulli")]
    pub model: LossModel,
    /// bernoulli: the probability that a packet is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// gilbert-elliott: probability per packet of moving from the good to the bad state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// gilbert-elliott: probability per packet of moving from bad back to good (mean burst
    /// length 1/r packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<f64>,
    /// gilbert-elliott: loss probability in the good state (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_good: Option<f64>,
    /// gilbert-elliott: loss probability in the bad state (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_bad: Option<f64>,
    /// Also drop control packets (ACK, NAK, CNP): shorthand for every kind.
    #[serde(default)]
    pub control: bool,
    /// The packet kinds the rule drops: any of "data", "ack", "nak" (NAK/NACK/RACK), "cnp".
    /// Default: ["data"], or every kind with control = true.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<PacketKindCfg>,
}

fn bernoulli() -> LossModel {
    LossModel::Bernoulli
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossModel {
    Bernoulli,
    GilbertElliott,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PacketKindCfg {
    Data,
    Ack,
    Nak,
    Cnp,
    /// SYN, SYN-ACK, FIN and FIN-ACK (STRIDE's connection set-up and tear-down).
    Conn,
}

/// Checks one `[[loss]]` rule and resolves it for the network.
pub fn loss_rule(topo: &Topology, l: &LossCfg, i: usize) -> Result<crate::net::loss::LossRule, ScenarioError> {
    use self::{LossModel as M, PacketKindCfg as K};
    use crate::net::loss::{KindMask, LossKind, LossModel, LossRule};
    let field = |name: &str| format!("loss[{i}].{name}");
    let target = loss_target(topo, &l.at, &field("at"))?;
    let unused = |name: &str, present: bool, model: &str| -> Result<(), ScenarioError> {
        if present { Err(err(field(name), format!("is not used by model = {model:?}"))) } else { Ok(()) }
    };
    let prob = |name: &str, v: Option<f64>, default: Option<f64>, model: &str| -> Result<f64, ScenarioError> {
        let v = v.or(default).ok_or_else(|| err(field(name), format!("model = {model:?} needs {name} (a probability in 0..=1)")))?;
        range_f64(&field(name), v, 0.0, 1.0)?;
        Ok(v)
    };
    let model = match l.model {
        M::Bernoulli => {
            for (name, present) in [("p", l.p.is_some()), ("r", l.r.is_some()), ("loss_good", l.loss_good.is_some()), ("loss_bad", l.loss_bad.is_some())] {
                unused(name, present, "bernoulli")?;
            }
            LossModel::Bernoulli { rate: prob("rate", l.rate, None, "bernoulli")? }
        }
        M::GilbertElliott => {
            unused("rate", l.rate.is_some(), "gilbert-elliott")?;
            let g = "gilbert-elliott";
            let (p, r) = (prob("p", l.p, None, g)?, prob("r", l.r, None, g)?);
            if r == 0.0 {
                return Err(err(field("r"), "must be greater than 0 (a bad state that never ends loses everything after it)"));
            }
            LossModel::GilbertElliott { p, r, loss_good: prob("loss_good", l.loss_good, Some(0.0), g)?, loss_bad: prob("loss_bad", l.loss_bad, Some(1.0), g)? }
        }
    };
    if l.control && !l.kinds.is_empty() {
        return Err(err(field("control"), "give control = true or kinds = [...], not both"));
    }
    let kinds = if l.control {
        KindMask::ALL
    } else if l.kinds.is_empty() {
        KindMask::DATA
    } else {
        l.kinds.iter().fold(KindMask::default(), |m, k| {
            m.with(match k {
                K::Data => LossKind::Data,
                K::Ack => LossKind::Ack,
                K::Nak => LossKind::Nak,
                K::Cnp => LossKind::Cnp,
                K::Conn => LossKind::Conn,
            })
        })
    };
    Ok(LossRule { target, kinds, model })
}

/// Parses a loss rule's `at`.
pub fn loss_target(topo: &Topology, at: &str, field: &str) -> Result<LossTarget, ScenarioError> {
    let named = |name: &str| super::topology::node(topo, name, field);
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
        let (a, b) = super::topology::link(topo, a.trim(), b.trim(), field)?;
        Ok(LossTarget::Link(a, b))
    } else {
        Err(err(field, format!("{at:?} is not a loss location (allowed: \"everywhere\", \"switch:NAME\", \"link:A->B\")")))
    }
}
