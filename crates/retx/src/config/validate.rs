//! Checks that need more than one field: ranges, names of hosts and switches, loss targets.

use super::{Flows, Pairing, Scenario, ScenarioError, WorkloadCfg, WorkloadKind};
use super::{topology, workload};
use crate::net::loss::LossTarget;
use crate::net::topology::{NodeKind, Topology};
use crate::sim::units::Time;
use crate::transport::FlowSpec;
use crate::workload::poisson;

const MAX_FLOW_SIZE: u64 = FlowSpec::MAX_SIZE;

/// The most flows a workload may generate (each costs a few hundred bytes during a run).
const MAX_FLOWS: u64 = 10_000_000;
/// The most poisson arrivals expected after the run's end (they are generated, never start).
const MAX_LATE_ARRIVALS: u64 = 10_000;
/// The longest run: 10^6 s of simulated time (picoseconds stay far below u64::MAX).
pub const MAX_DURATION: Time = Time(1_000_000_000_000_000_000);
/// The most sample intervals in a run's duration: every sampled series (receivers, watched
/// queues and flows) gets a row per interval.
pub const MAX_SAMPLES: u64 = 1_000_000;
/// The longest scenario name (it names the output folder).
pub const MAX_NAME: usize = 128;

/// A scenario name names its output folder, so it is one plain folder name: letters, digits
/// and `. _ - + = ,` (labels such as "hpcc+win"), starting with a letter, digit or `_` (so
/// never `..`, hidden, absolute or with a separator).
pub fn check_name(name: &str) -> Result<(), ScenarioError> {
    let ok_first = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let ok_rest = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '=' | ','));
    if name.is_empty() {
        return Err(err("name", "must not be empty"));
    }
    if !(ok_first && ok_rest) || name.len() > MAX_NAME {
        return Err(err(
            "name",
            format!("{name:?} is not a plain name (it names the output folder: up to {MAX_NAME} letters, digits and . _ - + = , starting with a letter, digit or _)"),
        ));
    }
    Ok(())
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

/// Checks one `[[loss]]` rule and resolves it for the network.
pub fn loss_rule(topo: &Topology, l: &super::LossCfg, i: usize) -> Result<crate::net::loss::LossRule, ScenarioError> {
    use super::{LossModel as M, PacketKindCfg as K};
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

/// Checks `[output] cc_flows` against the workload's `flows` flows.
pub fn watched_flows(ids: &[u32], flows: usize) -> Result<Vec<u32>, ScenarioError> {
    for (i, &id) in ids.iter().enumerate() {
        if id as usize >= flows {
            let have = if flows == 0 { "the workload has no flows".to_string() } else { format!("flows are 0..={}", flows - 1) };
            return Err(err(format!("output.cc_flows[{i}]"), format!("flow {id} does not exist ({have})")));
        }
    }
    Ok(ids.to_vec())
}

/// Resolves `[output] queues`: each "A->B" names the egress port of node A toward node B.
pub fn watched_queues(topo: &Topology, queues: &[String]) -> Result<Vec<(usize, usize)>, ScenarioError> {
    queues.iter().enumerate().map(|(i, q)| port(topo, q, &format!("output.queues[{i}]"))).collect()
}

/// Resolves `[output] pcap`: the node ids of its hosts, after checking every field.
pub fn pcap_hosts(topo: &Topology, p: &super::PcapCfg) -> Result<Vec<usize>, ScenarioError> {
    if p.hosts.is_empty() {
        return Err(err("output.pcap.hosts", "name at least one host, e.g. [\"h0\"]"));
    }
    if !(1..=super::MAX_PCAP_PACKETS).contains(&p.max_packets) {
        return Err(err("output.pcap.max_packets", format!("{} is out of range (allowed 1..={})", p.max_packets, super::MAX_PCAP_PACKETS)));
    }
    let plain = std::path::Path::new(&p.file).file_name().is_some_and(|n| n == p.file.as_str());
    if p.file.trim().is_empty() || !plain || p.file.contains(['/', '\\']) || p.file.starts_with('.') {
        return Err(err("output.pcap.file", format!("{:?} is not a plain file name (it goes into the output folder: no '/', '\\', or leading '.')", p.file)));
    }
    host_list(topo, &p.hosts, "output.pcap.hosts")
}

/// Resolves `[output] pools`: the node ids of the hosts whose NIC pools are sampled.
pub fn watched_pools(topo: &Topology, hosts: &[String]) -> Result<Vec<usize>, ScenarioError> {
    host_list(topo, hosts, "output.pools")
}

/// Host names to node ids, each named once.
fn host_list(topo: &Topology, names: &[String], field: &str) -> Result<Vec<usize>, ScenarioError> {
    let mut out = Vec::with_capacity(names.len());
    for h in names {
        match topo.find(h) {
            Some(n) if topo.nodes[n].kind == NodeKind::Host => {
                if out.contains(&n) {
                    return Err(err(field, format!("{h:?} is listed twice")));
                }
                out.push(n);
            }
            Some(_) => return Err(err(field, format!("{h:?} is a switch, not a host"))),
            None => {
                let hosts = topo.hosts().count();
                return Err(err(field, format!("{h:?} is not a host (hosts are h0..h{})", hosts.saturating_sub(1))));
            }
        }
    }
    Ok(out)
}

/// Resolves a port written "A->B" (node A's port toward node B): (A, B).
fn port(topo: &Topology, q: &str, field: &str) -> Result<(usize, usize), ScenarioError> {
    let pair = q.strip_prefix("link:").unwrap_or(q);
    if !pair.contains("->") {
        return Err(err(field, format!("{q:?}: write a port as \"A->B\" (node A's port toward node B)")));
    }
    match loss_target(topo, &format!("link:{pair}"), field)? {
        crate::net::loss::LossTarget::Link(a, b) => Ok((a, b)),
        _ => unreachable!("a link: target"),
    }
}

/// Checks one `[[background]]` source and resolves it for the network (`duration`: the run's,
/// the default `until`; `queues`: egress queues per port).
pub fn background(topo: &Topology, b: &super::BackgroundCfg, i: usize, duration: Time, queues: u32) -> Result<crate::net::background::Spec, ScenarioError> {
    use super::BackgroundProfile as P;
    use crate::net::background::{Profile, Spec};
    let field = |name: &str| format!("background[{i}].{name}");
    let (from, to) = port(topo, &b.link, &field("link"))?;
    if topo.nodes[from].kind != NodeKind::Switch {
        return Err(err(field("link"), format!("{:?} is a host's port; background traffic enters a switch's egress queue (write \"SWITCH->NODE\")", b.link)));
    }
    let link = topo.links.iter().find(|l| (l.a == from && l.b == to) || (l.a == to && l.b == from)).expect("a resolved link").rate;
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
    let rate = |name: &str, v: Option<super::Bw>| -> Result<crate::sim::units::Rate, ScenarioError> {
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
                if interval == Time::ZERO {
                    return Err(err(field("interval"), "must be greater than 0"));
                }
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
        None => crate::net::packet::CLASS_DATA as u8,
        Some(_) if queues < 2 => return Err(err(field("class"), "with switch.queues = 1 data has no queue of its own; leave class out")),
        Some(c) => {
            range_u32(&field("class"), c as u32, 1, queues - 1)?;
            c
        }
    };
    Ok(Spec { from, to, class, size: b.size.0 as u32, start, until, profile })
}

/// Checks one `[[switch.wred]]` rule: a colour, an optional data queue, and either a
/// threshold or a WRED ramp.
fn wred_rule(w: &super::WredCfg, i: usize, queues: u32) -> Result<(), ScenarioError> {
    let field = |name: &str| format!("switch.wred[{i}].{name}");
    range_u32(&field("colour"), w.colour as u32, 0, 2)?;
    if let Some(c) = w.class {
        if queues < 2 {
            return Err(err(field("class"), "with switch.queues = 1 there is no data queue to name; leave class out"));
        }
        range_u32(&field("class"), c as u32, 1, queues - 1)?;
    }
    match (w.threshold, w.min, w.max, w.pmax) {
        (Some(_), None, None, None) => {}
        (Some(_), ..) => return Err(err(field("threshold"), "give threshold, or min, max and pmax (WRED), not both")),
        (None, Some(min), Some(max), Some(pmax)) => {
            range_f64(&field("pmax"), pmax, 0.0, 1.0)?;
            if min > max {
                return Err(err(field("min"), "must not exceed max"));
            }
        }
        (None, min, max, _) => {
            let missing = if min.is_none() { "min" } else if max.is_none() { "max" } else { "pmax" };
            return Err(err(field(missing), "a rule needs threshold = \"8KB\", or min, max and pmax (WRED)"));
        }
    }
    Ok(())
}

/// Checks `[switch] pfc` in mode "dynamic": its ranges, and that every switch keeps some shared
/// buffer after its ports' headroom and reserves.
fn pfc_dynamic(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let p = &sw.pfc;
    if !p.enabled {
        return Err(err("switch.pfc.mode", "\"dynamic\" needs enabled = true (allowed modes: \"fixed\", \"dynamic\")"));
    }
    range_u32("switch.pfc.shift", p.shift, 0, 16)?;
    if p.resume_offset.0 > sw.buffer.0 {
        return Err(err("switch.pfc.resume_offset", "must not exceed switch.buffer"));
    }
    let headroom = super::lossless::headroom(s).unwrap_or(crate::net::headroom::Headroom::Ns3);
    let d = crate::net::switch::DynamicPfc { reserve: p.reserve.0, resume_offset: p.resume_offset.0, headroom, shift: p.shift };
    for (n, node) in topo.nodes.iter().enumerate() {
        if node.kind != NodeKind::Switch {
            continue;
        }
        let set_aside: u64 = topo.links.iter().filter(|l| l.a == n || l.b == n).map(|l| d.headroom_for(l.rate, l.delay) + d.reserve).sum();
        if set_aside >= sw.buffer.0 {
            let field = if p.headroom.is_some() { "switch.pfc.headroom" } else { "switch.pfc.reserve" };
            return Err(err(field, format!("switch {:?} sets aside {set_aside} B of headroom and reserve for its ports, not less than switch.buffer ({} B)", node.name, sw.buffer.0)));
        }
    }
    Ok(())
}

/// The PFC watchdog's settings: a deadlock timeout and a storm window above 0, a storm
/// fraction in (0, 1].
fn pfc_watch(p: &super::PfcCfg) -> Result<(), ScenarioError> {
    for (field, t) in [("switch.pfc.deadlock_timeout", p.deadlock_timeout.0), ("switch.pfc.storm_window", p.storm_window.0)] {
        if t.0 == 0 {
            return Err(err(field, "must be greater than 0"));
        }
    }
    if !(p.storm_fraction > 0.0 && p.storm_fraction <= 1.0) {
        return Err(err("switch.pfc.storm_fraction", format!("{} is out of range (allowed above 0, up to 1)", p.storm_fraction)));
    }
    Ok(())
}

/// Rate steps and floors of the rate-based controllers are above 0 (a zero step never
/// recovers a cut rate, a zero floor starves a flow), and IRN's timeouts are ordered.
fn cc_rates(s: &Scenario) -> Result<(), ScenarioError> {
    let (d, t, h) = (&s.cc.dcqcn, &s.cc.dctcp, &s.cc.hpcc);
    for (field, rate) in [
        ("cc.dcqcn.rate_ai", d.rate_ai),
        ("cc.dcqcn.rate_hai", d.rate_hai),
        ("cc.dcqcn.min_rate", d.min_rate),
        ("cc.dctcp.rate_ai", t.rate_ai),
        ("cc.dctcp.min_rate", t.min_rate),
        ("cc.hpcc.rate_ai", h.rate_ai),
    ] {
        if rate.0 .0 == 0 {
            return Err(err(field, "must be greater than 0"));
        }
    }
    if d.rate_hai.0 < d.rate_ai.0 {
        return Err(err("cc.dcqcn.rate_hai", format!("{} must not be below cc.dcqcn.rate_ai ({})", d.rate_hai.0, d.rate_ai.0)));
    }
    if d.use_byte_counter && d.byte_counter.0 == 0 {
        return Err(err("cc.dcqcn.byte_counter", "must be greater than 0 with use_byte_counter = true"));
    }
    let irn = &s.recovery.irn;
    if irn.rto_low.0 > irn.rto_high.0 {
        return Err(err("recovery.irn.rto_low", format!("{} must not exceed recovery.irn.rto_high ({})", irn.rto_low.0, irn.rto_high.0)));
    }
    Ok(())
}

/// `[cc.timely]`: weights in (0, 1], T_low below T_high, a positive min RTT and steps.
fn cc_timely(t: &crate::transport::timely::TimelyParams) -> Result<(), ScenarioError> {
    for (field, v) in [("cc.timely.alpha", t.alpha), ("cc.timely.beta", t.beta)] {
        if !(v > 0.0 && v <= 1.0) {
            return Err(err(field, format!("{v} is out of range (allowed greater than 0, at most 1)")));
        }
    }
    if t.t_low.0 >= t.t_high.0 {
        return Err(err("cc.timely.t_low", format!("{} must be less than cc.timely.t_high ({})", t.t_low.0, t.t_high.0)));
    }
    for (field, zero) in [("cc.timely.min_rtt", t.min_rtt.0 .0 == 0), ("cc.timely.rate_ai", t.rate_ai.0 .0 == 0), ("cc.timely.min_rate", t.min_rate.0 .0 == 0)] {
        if zero {
            return Err(err(field, "must be greater than 0"));
        }
    }
    if t.rate_hai.0 < t.rate_ai.0 {
        return Err(err("cc.timely.rate_hai", format!("{} must not be below cc.timely.rate_ai ({})", t.rate_hai.0, t.rate_ai.0)));
    }
    Ok(())
}

/// `[recovery.tcp]` and the window controllers' sections (`[cc.reno]`, `[cc.dctcp-window]`,
/// `[cc.vegas]`), and which recovery schemes a window controller runs over.
fn tcp_and_windows(s: &Scenario) -> Result<(), ScenarioError> {
    let t = &s.recovery.tcp;
    if t.min_rto.0 .0 == 0 {
        return Err(err("recovery.tcp.min_rto", "must be greater than 0"));
    }
    if t.max_rto.0 < t.min_rto.0 {
        return Err(err("recovery.tcp.max_rto", "must not be below recovery.tcp.min_rto"));
    }
    range_u32("recovery.tcp.dupack_threshold", t.dupack_threshold, 1, 1 << 16)?;
    let c = &s.cc;
    range_u32("cc.reno.initial_window", c.reno.initial_window, 0, 1 << 20)?;
    let d = &c.dctcp_window;
    if !(d.g > 0.0 && d.g <= 1.0) {
        return Err(err("cc.dctcp-window.g", format!("{} is out of range (allowed above 0, up to 1)", d.g)));
    }
    range_f64("cc.dctcp-window.initial_alpha", d.initial_alpha, 0.0, 1.0)?;
    range_u32("cc.dctcp-window.initial_window", d.initial_window, 0, 1 << 20)?;
    let v = &c.vegas;
    range_f64("cc.vegas.alpha", v.alpha, 0.0, 1e6)?;
    range_f64("cc.vegas.beta", v.beta, 0.0, 1e6)?;
    range_f64("cc.vegas.gamma", v.gamma, 0.0, 1e6)?;
    if v.alpha >= v.beta {
        return Err(err("cc.vegas.alpha", "must be below cc.vegas.beta"));
    }
    range_u32("cc.vegas.initial_window", v.initial_window, 0, 1 << 20)?;
    use super::RecoveryKind as R;
    if s.transport.cc.is_window() && matches!(s.transport.recovery, R::Melo | R::Gbone) {
        return Err(err("transport.cc", "a window controller (reno, dctcp-window, vegas) runs over recovery \"tcp\", \"gbn\" or \"irn\""));
    }
    Ok(())
}

/// Fills defaults that depend on other fields, checks every range and name, and builds the
/// topology.
pub fn validate(s: &mut Scenario) -> Result<Topology, ScenarioError> {
    check_name(&s.name)?;
    if s.duration.0 .0 == 0 {
        return Err(err("duration", "must be greater than 0"));
    }
    if s.duration.0 > MAX_DURATION {
        return Err(err("duration", format!("{} is out of range (allowed up to {MAX_DURATION})", s.duration.0)));
    }
    if s.output.sample_interval.0 == Time::ZERO {
        return Err(err("output.sample_interval", "must be greater than 0"));
    }
    let samples = s.duration.0 .0 / s.output.sample_interval.0 .0;
    if samples > MAX_SAMPLES {
        let floor = Time(s.duration.0 .0.div_ceil(MAX_SAMPLES));
        return Err(err(
            "output.sample_interval",
            format!("{} gives {samples} samples in duration = {} (at most {MAX_SAMPLES}: allowed {floor} or more)", s.output.sample_interval.0, s.duration.0),
        ));
    }
    topology::resolve(&mut s.topology)?;
    let topo = topology::build(&s.topology, &s.base_dir)?;

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
    if sw.pfc.mode == super::PfcMode::Dynamic {
        pfc_dynamic(s, &topo)?;
    }
    pfc_watch(&sw.pfc)?;
    range_u32("nic.mtu", s.nic.mtu, 64, 9000)?;
    range_u32("nic.ack_interval", s.nic.ack_interval, 1, 1 << 16)?;
    range_u32("recovery.irn.bitmap_packets", s.recovery.irn.bitmap_packets, 0, 1 << 20)?;
    let m = &s.recovery.melo;
    range_u32("recovery.melo.block_bits", m.block_bits, 1, 64)?;
    range_u32("recovery.melo.pool_bits", m.pool_bits, m.block_bits, m.block_bits.saturating_mul(60_000))?;
    range_u32("recovery.melo.nack_holes", m.nack_holes, 1, 3)?;
    if m.copy_gbps_per_core.is_nan() || m.copy_gbps_per_core <= 0.0 {
        return Err(err("recovery.melo.copy_gbps_per_core", "must be greater than 0"));
    }
    range_u32("recovery.gbone.chunk_packets", s.recovery.gbone.chunk_packets, 1, 1 << 20)?;
    range_u32("recovery.gbone.max_ooo_psn", s.recovery.gbone.max_ooo_psn, 0, 1 << 24)?;
    let seg = s.recovery.stride.segment.0;
    if !(64..=1 << 30).contains(&seg) {
        return Err(err("recovery.stride.segment", format!("{seg} B is out of range (allowed 64B..=1GiB)")));
    }
    range_f64("cc.dctcp.g", s.cc.dctcp.g, 0.0, 1.0)?;
    let h = &s.cc.hpcc;
    if !(h.eta > 0.0 && h.eta <= 1.0) {
        return Err(err("cc.hpcc.eta", format!("{} is out of range (allowed above 0, up to 1)", h.eta)));
    }
    range_u32("cc.hpcc.max_stage", h.max_stage, 0, 1000)?;
    range_u32("cc.hpcc.int_multi", h.int_multi, 0, 1 << 16)?;
    if h.min_rate.0 .0 == 0 {
        return Err(err("cc.hpcc.min_rate", "must be greater than 0"));
    }
    range_u32("switch.int_bytes", s.switch.int_bytes, 0, 1024)?;
    tcp_and_windows(s)?;
    let d = &s.cc.dcqcn;
    range_f64("cc.dcqcn.g", d.g, 0.0, 1.0)?;
    if d.rate_cut == crate::transport::dcqcn::Cadence::Periodic && d.decrease_interval.0 .0 == 0 {
        return Err(err("cc.dcqcn.decrease_interval", "must be greater than 0 with rate_cut = \"periodic\" (it is the period of the cut checks)"));
    }
    cc_timely(&s.cc.timely)?;
    cc_rates(s)?;
    if let Err((field, message)) = s.cc.stride.validate() {
        return Err(err(format!("cc.stride.{field}"), message));
    }
    for (field, t) in [
        ("recovery.gbn.nak_interval", s.recovery.gbn.nak_interval.0),
        ("recovery.gbn.rto", s.recovery.gbn.rto.0),
        ("recovery.irn.rto_low", s.recovery.irn.rto_low.0),
        ("recovery.irn.rto_high", s.recovery.irn.rto_high.0),
        ("recovery.melo.rto", s.recovery.melo.rto.0),
        ("recovery.gbone.rto", s.recovery.gbone.rto.0),
        ("recovery.stride.rto", s.recovery.stride.rto.0),
        ("recovery.stride.nack_interval", s.recovery.stride.nack_interval.0),
        ("cc.dcqcn.alpha_interval", d.alpha_interval.0),
        ("cc.dcqcn.increase_interval", d.increase_interval.0),
        ("output.sample_interval", s.output.sample_interval.0),
    ] {
        if t.0 == 0 {
            return Err(err(field, "must be greater than 0"));
        }
    }

    for (i, l) in s.loss.iter().enumerate() {
        loss_rule(&topo, l, i)?;
    }
    if let Some(p) = &s.output.pcap {
        pcap_hosts(&topo, p)?;
    }
    watched_pools(&topo, &s.output.pools)?;
    range_u32("switch.queues", s.switch.queues, 1, crate::net::port::MAX_QUEUES as u32)?;
    for (i, b) in s.background.iter().enumerate() {
        background(&topo, b, i, s.duration.0, s.switch.queues)?;
    }
    if s.switch.queues == 1 && s.switch.pfc.enabled {
        return Err(err("switch.queues", "PFC needs at least 2 queues (queue 0, control, is never paused; with 1 queue data shares it)"));
    }
    if s.switch.drr_quantum.0 < 64 || s.switch.drr_quantum.0 > 1 << 20 {
        return Err(err("switch.drr_quantum", format!("{} B is out of range (allowed 64B..=1MiB)", s.switch.drr_quantum.0)));
    }
    for (i, e) in s.switch.ecn.per_link.iter().enumerate() {
        range_f64(&format!("switch.ecn.per_link[{i}].pmax"), e.pmax, 0.0, 1.0)?;
        if e.kmin > e.kmax {
            return Err(err(format!("switch.ecn.per_link[{i}].kmin"), "must not exceed kmax"));
        }
    }
    if let Some(x) = &s.switch.shaped {
        if s.switch.queues < 2 {
            return Err(err("switch.shaped.queue", "a shaped queue needs switch.queues >= 2 (queue 0 is control)"));
        }
        range_u32("switch.shaped.queue", x.queue, 1, s.switch.queues - 1)?;
        range_u32("switch.shaped.buffer", x.buffer, 1, 1 << 16)?;
        match (x.share, x.rate) {
            (Some(_), Some(_)) => return Err(err("switch.shaped.rate", "give share (a fraction of the link rate) or rate, not both")),
            (Some(f), None) if !(f > 0.0 && f <= 1.0) => return Err(err("switch.shaped.share", format!("{f} is out of range (allowed above 0, up to 1)"))),
            (None, Some(r)) if r.0.bps() == 0 => return Err(err("switch.shaped.rate", "must be greater than 0")),
            _ => {}
        }
    }
    for (i, w) in s.switch.wred.iter().enumerate() {
        wred_rule(w, i, s.switch.queues)?;
    }
    let r = &s.routing;
    if !r.flowlet_entries.is_power_of_two() || r.flowlet_entries > 1 << 24 {
        return Err(err("routing.flowlet_entries", format!("{} is not a power of two in 1..=16777216", r.flowlet_entries)));
    }
    if r.flowlet_gap.0 .0 == 0 {
        return Err(err("routing.flowlet_gap", "must be greater than 0"));
    }
    for (field, t) in [("nic.rx_latency", s.nic.rx_latency.0), ("nic.qp_swap_time", s.nic.qp_swap_time.0), ("nic.qp_swap_per_block", s.nic.qp_swap_per_block.0)] {
        if t > Time::from_ms(1) {
            return Err(err(field, format!("{t} is out of range (allowed 0ps..=1ms)")));
        }
    }
    if let Some(x) = s.nic.clock_drift_spread_ppm {
        if !(0.0..=1000.0).contains(&x) {
            return Err(err("nic.clock_drift_spread_ppm", format!("{x} is out of range (allowed 0..=1000)")));
        }
    }
    if s.nic.clock_offset_spread.0 .0 > 1_000_000_000_000 {
        return Err(err("nic.clock_offset_spread", "is out of range (allowed up to 1s)"));
    }
    if s.nic.clock_drift_ppm.is_nan() || s.nic.clock_drift_ppm.abs() > 1000.0 {
        return Err(err("nic.clock_drift_ppm", format!("{} is out of range (allowed -1000..=1000)", s.nic.clock_drift_ppm)));
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
    check_workload_fields(&s.workload)?;
    let check_pairs = |pairs: &[(String, String)], kind: &str| -> Result<(), ScenarioError> {
        if pairs.is_empty() {
            return Err(err("workload.pairs", format!("{kind} needs at least one pair, e.g. [[\"h0\", \"h1\"]]")));
        }
        for (i, (a, b)) in pairs.iter().enumerate() {
            let (x, y) = (host(a, format!("workload.pairs[{i}]"))?, host(b, format!("workload.pairs[{i}]"))?);
            if x == y {
                return Err(err(format!("workload.pairs[{i}]"), "source and destination are the same host"));
            }
        }
        Ok(())
    };
    let w = &mut s.workload;
    match w.kind {
        WorkloadKind::LongFlows => check_pairs(&w.pairs, "long-flows")?,
        WorkloadKind::Poisson => {
            let cdf = workload::poisson_cdf(w, &s.base_dir)?;
            w.interpolation = Some(cdf.interpolation());
            let load = w.load.ok_or_else(|| err("workload.load", "poisson needs load = 0.5 (a fraction of each sender's host link rate)"))?;
            range_f64("workload.load", load, 0.0, 1.0)?;
            if load == 0.0 {
                return Err(err("workload.load", "must be greater than 0"));
            }
            let pairing = *w.pairing.get_or_insert(if w.pairs.is_empty() { Pairing::Random } else { Pairing::Pairs });
            if pairing == Pairing::Pairs {
                check_pairs(&w.pairs, "pairing = \"pairs\"")?;
            } else if !w.pairs.is_empty() {
                return Err(err("workload.pairs", "only used with pairing = \"pairs\""));
            }
            match w.flows {
                Flows::List(ref v) if !v.is_empty() => {
                    return Err(err("workload.flows", "poisson takes a flow count here (flows = 1000), not a list"));
                }
                Flows::Count(n) if n == 0 || n > MAX_FLOWS => {
                    return Err(err("workload.flows", format!("{n} is out of range (allowed 1..={MAX_FLOWS})")));
                }
                _ => {}
            }
            let start = w.start.get_or_insert(super::Dur(Time::ZERO)).0;
            match (w.until, w.flows.count()) {
                (None, None) => {
                    return Err(err("workload.until", "poisson needs until = \"10ms\" (when arrivals stop) and/or flows = N (a flow count)"));
                }
                (Some(until), _) if until.0 <= start => return Err(err("workload.until", "must be later than workload.start")),
                _ => {}
            }
            if start >= s.duration.0 {
                return Err(err("workload.start", format!("{start} is not before the run's duration ({}): no flow would start", s.duration.0)));
            }
            let sources = workload::poisson_sources(w, &topo)?;
            if let Some(until) = w.until {
                let n = poisson::expected_flows(&topo, &sources, cdf.mean(), load, until.0 - start);
                if n > MAX_FLOWS as f64 && w.flows.count().is_none() {
                    return Err(err("workload.until", format!("about {n:.0} flows would arrive (at most {MAX_FLOWS}); set flows = N or an earlier until")));
                }
                let late_from = start.max(s.duration.0);
                if until.0 > late_from && w.flows.count().is_none() {
                    let late = poisson::expected_flows(&topo, &sources, cdf.mean(), load, until.0 - late_from);
                    if late > MAX_LATE_ARRIVALS as f64 {
                        return Err(err(
                            "workload.until",
                            format!("{} is past the run's duration ({}): about {late:.0} flows would arrive after the run ends (at most {MAX_LATE_ARRIVALS}); set until <= duration", until.0, s.duration.0),
                        ));
                    }
                }
                // Few arrivals expected: generate them (cheap) to say so if there are none.
                if n < 1000.0 && workload::flows(w, &topo, s.seed, &s.base_dir)?.is_empty() {
                    return Err(err(
                        "workload.until",
                        format!(
                            "no flow arrives between start ({start}) and until ({}): at load {load} and a mean size of {:.0} B about {n:.2} were expected; use a later until or a higher load",
                            until.0,
                            cdf.mean()
                        ),
                    ));
                }
            }
        }
        WorkloadKind::HpccFlows => {
            for (i, f) in workload::hpcc_flows(w, &s.base_dir)?.iter().enumerate() {
                let field = || format!("workload.file: flow {} ({} -> {})", i + 1, f.src, f.dst);
                let is_host = |n: usize| topo.nodes.get(n).is_some_and(|x| x.kind == NodeKind::Host);
                if !is_host(f.src) || !is_host(f.dst) || f.src == f.dst {
                    return Err(err(field(), "needs two different host ids of the topology"));
                }
            }
        }
        WorkloadKind::Incast => {
            let receiver = w.receiver.as_deref().ok_or_else(|| err("workload.receiver", "incast needs a receiver, e.g. receiver = \"h0\""))?;
            let rx = host(receiver, "workload.receiver".into())?;
            if !w.senders.is_empty() && w.fan_in.is_some() {
                return Err(err("workload.fan_in", "give senders or fan_in, not both"));
            }
            for (i, name) in w.senders.iter().enumerate() {
                let field = format!("workload.senders[{i}]");
                if host(name, field.clone())? == rx {
                    return Err(err(field, "the receiver cannot also send"));
                }
                if w.senders[..i].contains(name) {
                    return Err(err(field, format!("{name:?} is listed twice")));
                }
            }
            let senders = workload::incast_senders(w, &topo)?.len() as u64;
            match w.size {
                None => return Err(err("workload.size", "incast needs the size of each flow, e.g. size = \"64KB\"")),
                Some(sz) if sz.0 == 0 || sz.0 > MAX_FLOW_SIZE => return Err(err("workload.size", format!("{} B is out of range (allowed 1B..={MAX_FLOW_SIZE}B)", sz.0))),
                _ => {}
            }
            let rounds = *w.rounds.get_or_insert(1);
            range_u32("workload.rounds", rounds, 1, 1_000_000)?;
            if senders * rounds as u64 > MAX_FLOWS {
                return Err(err("workload.rounds", format!("{} flows in all (at most {MAX_FLOWS})", senders * rounds as u64)));
            }
            match w.interval {
                None if rounds > 1 => return Err(err("workload.interval", "more than one round needs interval = \"100us\" between round starts")),
                Some(d) if d.0 .0 == 0 => return Err(err("workload.interval", "must be greater than 0")),
                _ => {}
            }
            w.start.get_or_insert(super::Dur(Time::ZERO));
        }
        WorkloadKind::FlowList => {
            let list = w.flows.list();
            if list.is_empty() {
                let msg = if w.flows.count().is_some() { "flow-list needs a list of flows, not a count" } else { "flow-list needs at least one flow" };
                return Err(err("workload.flows", msg));
            }
            for (i, f) in list.iter().enumerate() {
                let x = host(&f.src, format!("workload.flows[{i}].src"))?;
                let y = host(&f.dst, format!("workload.flows[{i}].dst"))?;
                if x == y {
                    return Err(err(format!("workload.flows[{i}]"), "source and destination are the same host"));
                }
                if f.size.0 == 0 || f.size.0 > MAX_FLOW_SIZE {
                    return Err(err(format!("workload.flows[{i}].size"), format!("{} B is out of range (allowed 1B..={MAX_FLOW_SIZE}B)", f.size.0)));
                }
                if let Some(c) = f.class {
                    if s.switch.queues < 2 {
                        return Err(err(format!("workload.flows[{i}].class"), "with switch.queues = 1 data has no queue of its own; leave class out"));
                    }
                    range_u32(&format!("workload.flows[{i}].class"), c as u32, 1, s.switch.queues - 1)?;
                }
                if let Some(c) = f.colour {
                    range_u32(&format!("workload.flows[{i}].colour"), c as u32, 0, 2)?;
                }
            }
        }
    }
    watched_queues(&topo, &s.output.queues)?;
    if let Some(n) = known_flow_count(s)? {
        watched_flows(&s.output.cc_flows, n)?;
    }
    Ok(topo)
}

/// How many flows a validated workload starts, when that is known without generating them
/// (a poisson workload bounded only by `until` is not).
fn known_flow_count(s: &Scenario) -> Result<Option<usize>, ScenarioError> {
    let w = &s.workload;
    Ok(match w.kind {
        WorkloadKind::LongFlows => Some(w.pairs.len()),
        WorkloadKind::FlowList => Some(w.flows.list().len()),
        WorkloadKind::Incast => Some(w.senders.len().max(w.fan_in.unwrap_or(0) as usize) * w.rounds.unwrap_or(1) as usize),
        WorkloadKind::HpccFlows => Some(workload::hpcc_flows(w, &s.base_dir)?.len()),
        WorkloadKind::Poisson if w.until.is_none() => w.flows.count().map(|n| n as usize),
        WorkloadKind::Poisson => None,
    })
}

fn kind_name(k: WorkloadKind) -> &'static str {
    match k {
        WorkloadKind::LongFlows => "long-flows",
        WorkloadKind::FlowList => "flow-list",
        WorkloadKind::Poisson => "poisson",
        WorkloadKind::Incast => "incast",
        WorkloadKind::HpccFlows => "hpcc-flows",
    }
}

/// Rejects a `[workload]` field that its kind does not use (a typo'd kind would otherwise
/// silently ignore it).
fn check_workload_fields(w: &WorkloadCfg) -> Result<(), ScenarioError> {
    use WorkloadKind::*;
    let given: [(&str, bool, &[WorkloadKind]); 15] = [
        ("file", w.file.is_some(), &[HpccFlows]),
        ("pairs", !w.pairs.is_empty(), &[LongFlows, Poisson]),
        ("flows", !w.flows.list().is_empty() || w.flows.count().is_some(), &[FlowList, Poisson]),
        ("cdf", w.cdf.is_some(), &[Poisson]),
        ("interpolation", w.interpolation.is_some(), &[Poisson]),
        ("load", w.load.is_some(), &[Poisson]),
        ("pairing", w.pairing.is_some(), &[Poisson]),
        ("until", w.until.is_some(), &[Poisson]),
        ("start", w.start.is_some(), &[Poisson, Incast]),
        ("senders", !w.senders.is_empty(), &[Incast]),
        ("fan_in", w.fan_in.is_some(), &[Incast]),
        ("receiver", w.receiver.is_some(), &[Incast]),
        ("size", w.size.is_some(), &[Incast]),
        ("rounds", w.rounds.is_some(), &[Incast]),
        ("interval", w.interval.is_some(), &[Incast]),
    ];
    for (field, present, kinds) in given {
        if present && !kinds.contains(&w.kind) {
            return Err(err(format!("workload.{field}"), format!("is not used by kind = {:?}", kind_name(w.kind))));
        }
    }
    Ok(())
}
