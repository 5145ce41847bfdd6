//! The `[[background]]` sources: unresponsive traffic into switch egress queues, and their
//! checks and resolution against the network.

use super::{Bw, Dur, ScenarioError, Size};
use crate::net::topology::{NodeKind, Topology};
use crate::sim::check::{range_u32, timer};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

/// One `[[background]]` source: packets of `size` wire bytes into egress queue `class` of the
/// switch port `link` ("A->B"), from `start` to `until`, at a rate that follows `profile`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundCfg {
    pub link: String,
    pub profile: BackgroundProfile,
    /// fixed: the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bw>,
    /// random: the range rates are drawn from; linear: the rate at start and at until.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<Bw>,
    /// random: how long each drawn rate lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    #[serde(default)]
    pub start: Dur,
    /// Default: the run's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Dur>,
    /// Wire bytes per packet, 64B..=9216B. Default 1500 B, a full Ethernet frame.
    #[serde(default = "ethernet_frame")]
    pub size: Size,
    /// Egress queue, 1..queues (default 1, the data class flows use by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

fn ethernet_frame() -> Size {
    Size(1500)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackgroundProfile {
    /// A fixed rate (`rate`).
    Fixed,
    /// A rate drawn uniformly in `low..=high` every `interval`.
    Random,
    /// A rate rising linearly from `low` at `start` to `high` at `until`.
    Linear,
}

/// Checks one `[[background]]` source and resolves it for the network (`duration`: the run's,
/// the default `until`; `queues`: egress queues per port).
pub fn background(topo: &Topology, b: &BackgroundCfg, i: usize, duration: Time, queues: u32) -> Result<crate::net::background::Spec, ScenarioError> {
    use self::BackgroundProfile as P;
    use crate::net::background::{Profile, Spec};
    let field = |name: &str| format!("background[{i}].{name}");
    let (from, to) = super::topology::port(topo, &b.link, &field("link"))?;
    if topo.nodes[from].kind != NodeKind::Switch {
        return Err(err(field("link"), format!("{:?} is a host's port; background traffic enters a switch's egress queue (write \"SWITCH->NODE\")", b.link)));
    }
    let link = topo.link_between(from, to).expect("a resolved link").rate;
    let profile_name = match b.profile {
        P::Fixed => "fixed",
        P::Random => "random",
        P::Linear => "linear",
    };
    let given = [("rate", b.rate.is_some()), ("low", b.low.is_some()), ("high", b.high.is_some()), ("interval", b.interval.is_some())];
    let uses: &[&str] = match b.profile {
        P::Fixed => &["rate"],
        P::Random => &["low", "high", "interval"],
        P::Linear => &["low", "high"],
    };
    for (name, present) in given {
        if present && !uses.contains(&name) {
            return Err(err(field(name), format!("is not used by profile = {profile_name:?} (its fields: {})", uses.join(", "))));
        }
    }
    let rate = |name: &str, v: Option<Bw>| -> Result<crate::sim::units::Rate, ScenarioError> {
        let r = v.ok_or_else(|| err(field(name), format!("profile = {profile_name:?} needs {name} (a rate, e.g. \"4Gbps\")")))?.0;
        if r.0 == 0 || r > link {
            return Err(err(field(name), format!("{r} is out of range (allowed above 0, up to the link's rate, {link})")));
        }
        Ok(r)
    };
    let profile = match b.profile {
        P::Fixed => Profile::Fixed(rate("rate", b.rate)?),
        P::Random | P::Linear => {
            let (low, high) = (rate("low", b.low)?, rate("high", b.high)?);
            if high < low {
                return Err(err(field("high"), format!("{high} must not be below low ({low})")));
            }
            if b.profile == P::Linear {
                Profile::Linear { low, high }
            } else {
                let interval = b.interval.ok_or_else(|| err(field("interval"), "profile = \"random\" needs interval (how long each drawn rate lasts, e.g. \"100us\")"))?.0;
                // A rate is drawn per interval begun: a timer of its own.
                timer(&field("interval"), interval)?;
                Profile::Random { low, high, interval }
            }
        }
    };
    let start = b.start.0;
    let until = b.until.map_or(duration, |u| u.0);
    if start >= until {
        return Err(match b.until {
            Some(_) => err(field("until"), format!("{until} must be later than start ({start})")),
            None => err(field("start"), format!("{start} must be before until, which defaults to the run's duration ({until})")),
        });
    }
    if !(64..=9216).contains(&b.size.0) {
        return Err(err(field("size"), format!("{} B is out of range (allowed 64B..=9216B)", b.size.0)));
    }
    let class = match b.class {
        None => crate::net::packet::PRIORITY_DATA as u8,
        Some(_) if queues < 2 => return Err(err(field("class"), "with switch.queues = 1 data has no queue of its own; leave class out")),
        Some(c) => {
            range_u32(&field("class"), c as u32, 1, queues - 1)?;
            c
        }
    };
    Ok(Spec { from, to, queue: class, size: b.size.0 as u32, start, until, profile })
}
