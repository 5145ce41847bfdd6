//! Settings of different sections that need each other or are bound by physics, in one place
//! (issue 41 item 4). Each section checks its own ranges beside its definition; what relates
//! two sections is declared here, as a table of rules, and checked once after them all:
//!
//! - a *refusal* when the run as configured cannot do what a setting asks (a trimming data
//!   queue smaller than one packet of the largest size any scheme or controller sends, a
//!   trimmed header that is not smaller than the packet it trims, a header queue that is the
//!   data queue, return-to-sender without per-port queues);
//! - a *warning* naming the field when a setting has no effect in the run as configured (ECN
//!   codepoint drops with ECN off, colours sent as ECN codepoints with ECN off).
//!
//! A rule names the field the user would change and, in its message, the other field it
//! relates it to.

use super::lossless::max_frame;
use super::{Scenario, ScenarioError, WorkloadKind};
use crate::net::packet::PRIORITY_DATA;

/// One rule: the field it names, and the check (the message when it is broken).
struct Rule {
    field: &'static str,
    broken: fn(&Scenario) -> Option<String>,
}

/// Settings that need others, or sizes bound to each other: refused.
const NEEDS: &[Rule] = &[
    Rule { field: "switch.trim.return_to_sender", broken: return_without_port_queues },
    Rule { field: "switch.trim.header", broken: header_not_below_packet },
    Rule { field: "switch.trim.data_queue", broken: data_queue_below_one_packet },
    Rule { field: "switch.trim.queue", broken: header_queue_is_a_data_queue },
];

/// Settings with no effect in the run as configured: warned, naming the field.
const INERT: &[Rule] = &[
    Rule { field: "switch.ecn.drop_not_ect", broken: ecn_drops_with_ecn_off },
    Rule { field: "nic.colour_codepoint", broken: ecn_colours_nobody_drops_by },
    Rule { field: "routing.entropy", broken: entropy_the_scheme_chooses },
    Rule { field: "routing.policy", broken: spraying_over_chosen_entropy },
    Rule { field: "recovery.uet.trimming", broken: uet_trimming_unlike_the_switches },
];

/// The first relation broken, as an error naming its field.
pub fn check(s: &Scenario) -> Result<(), ScenarioError> {
    for rule in NEEDS {
        if let Some(message) = (rule.broken)(s) {
            return Err(ScenarioError::new(rule.field, message));
        }
    }
    degraded_queues_below_one_packet(s)
}

/// A degraded port's per-port trimming queues are the switch's scaled by its factor
/// (`[[switch.degraded]]`): each must still hold what it queues (a data queue one packet, a
/// header queue one header), or every packet through the port is trimmed (or every header
/// dropped) and its flows never finish, with no word.
fn degraded_queues_below_one_packet(s: &Scenario) -> Result<(), ScenarioError> {
    let Some(t) = s.switch.trim.as_ref() else { return Ok(()) };
    let Some(port) = t.port() else { return Ok(()) };
    let frame = max_frame(s);
    for (i, d) in s.switch.degraded.iter().enumerate() {
        let scaled = |v: u64| (v as f64 * d.factor) as u64;
        let queues = [("data_queue", port.data_queue, frame, "the largest packet sent"), ("header_queue", port.header_queue, t.header.0, "a trimmed header")];
        for (name, q, need, what) in queues {
            if scaled(q) < need {
                return Err(ScenarioError::new(
                    format!("switch.degraded[{i}].factor"),
                    format!(
                        "{} scales switch.trim.{name} ({} B) to {} B on this port, short of {what} ({need} B): every packet through it would be {}; allowed at least {:.4}",
                        crate::sim::check::shown_f64(d.factor),
                        q,
                        scaled(q),
                        if name == "data_queue" { "trimmed" } else { "dropped" },
                        need as f64 / q as f64
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Every setting with no effect, one line each starting with its field.
pub fn warnings(s: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = INERT.iter().filter_map(|rule| (rule.broken)(s).map(|m| format!("{}: {m}", rule.field))).collect();
    // The scheme's own (its section's fields).
    out.extend(s.recovery.params(s.transport.recovery).inert_settings());
    out.extend(unused_recovery_sections(s));
    out.extend(serial_run_settings(s));
    out
}

/// `[recovery.<name>]` sections of schemes the run does not use, set away from their defaults
/// (a section is kept for every scheme, so `retx validate` prints them all; one set by the user
/// for another scheme than `transport.recovery` is read by nothing). MELO's is read by every
/// run: its pool sizes the on-chip memory table (`memory.parquet`) of all schemes.
fn unused_recovery_sections(s: &Scenario) -> Vec<String> {
    let (Ok(toml::Value::Table(set)), Ok(toml::Value::Table(default))) = (toml::Value::try_from(&s.recovery), toml::Value::try_from(super::RecoveryCfg::default())) else {
        return Vec::new();
    };
    let run = s.transport.recovery.name();
    set.iter()
        .filter(|(name, value)| name.as_str() != run && name.as_str() != "melo" && default.get(name.as_str()) != Some(value))
        .map(|(name, _)| format!("recovery.{name}: has no effect: the run's scheme is transport.recovery = {run:?}"))
        .collect()
}

/// `[run]` settings of how a run is split, when it runs on one thread: read by nothing.
fn serial_run_settings(s: &Scenario) -> Vec<String> {
    if super::run::threads(s).unwrap_or(1) > 1 {
        return Vec::new();
    }
    let default = super::run::RunCfg::default();
    let mut out = Vec::new();
    if s.run.partition != default.partition {
        out.push("run.partition: has no effect: the run is on one thread (run.threads = 1, no --threads); it says how a parallel run splits the network".to_string());
    }
    if s.run.min_hosts_per_thread != default.min_hosts_per_thread {
        out.push("run.min_hosts_per_thread: has no effect: the run is on one thread (run.threads = 1, no --threads)".to_string());
    }
    out
}

/// The largest data packet on the wire: a full payload with every header the scheme and the
/// controller add (INT records, TIMELY's timestamp, the recovery scheme's own).
fn data_packet(s: &Scenario) -> u64 {
    (s.nic.mtu + super::template::transport(s).data_header()) as u64
}

fn return_without_port_queues(s: &Scenario) -> Option<String> {
    let t = s.switch.trim.as_ref()?;
    (t.return_to_sender && t.data_queue.is_none())
        .then(|| "needs switch.trim.data_queue (a header is returned when its port's header queue is full; without per-port queues there is none)".into())
}

fn header_not_below_packet(s: &Scenario) -> Option<String> {
    let t = s.switch.trim.as_ref()?;
    let packet = data_packet(s);
    (t.header.0 >= packet).then(|| {
        format!("{} B is not smaller than the data packet it trims ({packet} B: nic.mtu = {} B plus {} B of headers)", t.header.0, s.nic.mtu, packet - s.nic.mtu as u64)
    })
}

fn data_queue_below_one_packet(s: &Scenario) -> Option<String> {
    let t = s.switch.trim.as_ref()?;
    let data = t.data_queue?;
    let frame = max_frame(s);
    (data.0 < frame).then(|| {
        format!("{} B holds no packet: the largest one sent is {frame} B (nic.mtu = {} B with its headers, or the largest response or background frame)", data.0, s.nic.mtu)
    })
}

/// The data classes flows are sent at: a flow list's `class` (default 1), else 1 (every job's).
fn data_classes(s: &Scenario) -> Vec<u32> {
    let mut classes = vec![PRIORITY_DATA as u32];
    for w in s.workload.iter().filter(|w| w.kind == WorkloadKind::FlowList) {
        classes.extend(w.flows.list().iter().filter_map(|f| f.class.map(u32::from)));
    }
    classes
}

fn header_queue_is_a_data_queue(s: &Scenario) -> Option<String> {
    let t = s.switch.trim.as_ref()?;
    data_classes(s).contains(&t.queue).then(|| {
        format!("{} is a queue data is sent on (workload class {}): trimmed headers would wait behind data, and per-port limits would never trim it; use the control queue 0", t.queue, t.queue)
    })
}

fn entropy_the_scheme_chooses(s: &Scenario) -> Option<String> {
    // The default is written into every resolved scenario: only a per-packet choice is the
    // user's, and the scheme's own entropy values replace it (`config::build`).
    (s.routing.entropy == super::EntropyKind::PerPacket && s.recovery.params(s.transport.recovery).chooses_entropy()).then(|| {
        format!("\"per-packet\" has no effect: transport.recovery = {:?} chooses each packet's entropy value itself (its load balancing)", s.transport.recovery.name())
    })
}

fn spraying_over_chosen_entropy(s: &Scenario) -> Option<String> {
    // Spraying picks each packet's port without its entropy (net/routing.rs `Router::pick`):
    // the values the scheme chooses steer nothing. Flowlets and permutations key on it.
    let sprays = matches!(s.routing.policy, super::RoutingKind::SprayRandom | super::RoutingKind::SprayRoundRobin);
    (sprays && s.recovery.params(s.transport.recovery).chooses_entropy()).then(|| {
        let policy = if s.routing.policy == super::RoutingKind::SprayRandom { "spray-random" } else { "spray-round-robin" };
        format!("{policy:?} picks each packet's port itself: transport.recovery = {:?} chooses entropy values (its paths and load balancing) that then steer nothing; its own spraying needs policy = \"ecmp\"", s.transport.recovery.name())
    })
}

/// UET told whether the switches trim (NSCC's default target delay, REPS's freezing) against
/// what `[switch] trim` says they do.
fn uet_trimming_unlike_the_switches(s: &Scenario) -> Option<String> {
    if s.transport.recovery != super::RecoveryKind::Uet {
        return None;
    }
    match (s.recovery.uet.trimming, s.switch.trim.is_some()) {
        (true, false) => Some("true, but there is no [switch] trim: the switches drop, and NSCC's default target delay (0.75 x the RTT) assumes trimmed headers come back".into()),
        (false, true) => Some("false, but [switch] trim trims: NSCC's default target delay is then the whole RTT, as for switches that drop".into()),
        _ => None,
    }
}

fn ecn_drops_with_ecn_off(s: &Scenario) -> Option<String> {
    (s.switch.ecn.drop_not_ect && !s.switch.ecn.enabled).then(|| "has no effect: switch.ecn.enabled = false, so nothing is marked or dropped by its codepoint".into())
}

fn ecn_colours_nobody_drops_by(s: &Scenario) -> Option<String> {
    // With ECN on, Not-ECT packets at least go unmarked; with it off the codepoint is unread.
    (s.nic.colour_codepoint == super::nic::ColourCodepoint::Ecn && !s.switch.ecn.enabled)
        .then(|| "\"ecn\" has no effect: switch.ecn.enabled = false, so no switch reads the codepoint (Aeolus's drop needs switch.ecn.enabled = true and switch.ecn.drop_not_ect = true)".into())
}

#[cfg(test)]
mod tests {
    use super::super::{validate, warnings, Scenario};

    /// NDP on a small leaf-spine with htsim's per-port trimming queues; `switch` replaces the
    /// [switch] table and `nic` the [nic] table.
    fn ndp(nic: &str, switch: &str, flows: &str) -> Scenario {
        Scenario::from_toml(&format!(
            "name = \"r\"\nduration = \"100us\"\n[topology]\nkind = \"single-switch\"\nhosts = 3\nhost_link = \"100Gbps\"\n\
             [nic]\n{nic}\n[switch]\npfc = {{ enabled = false }}\n{switch}\n[transport]\nrecovery = \"ndp\"\ncc = \"none\"\n\
             [workload]\nkind = \"flow-list\"\nflows = [{flows}]\n"
        ))
        .unwrap()
    }

    const FLOW: &str = "{ src = \"h0\", dst = \"h1\", size = \"40KB\" }";

    fn refused(s: Scenario) -> super::ScenarioError {
        validate(&mut s.clone()).unwrap_err()
    }

    #[test]
    fn a_trimming_data_queue_holds_one_packet_with_its_headers() {
        // 4000 B of payload plus NDP's header: 4000 B alone is short of one packet.
        let e = refused(ndp("mtu = 4000", "trim = { queue = 0, data_queue = \"4000B\" }", FLOW));
        assert_eq!(e.field, "switch.trim.data_queue");
        assert!(e.message.contains("nic.mtu = 4000 B"), "{e}");
        let mut ok = ndp("mtu = 4000", "trim = { queue = 0, data_queue = \"8200B\" }", FLOW);
        validate(&mut ok).unwrap();
    }

    #[test]
    fn a_trimmed_header_is_smaller_than_the_packet_it_trims() {
        let e = refused(ndp("mtu = 1000", "trim = { queue = 0, header = \"2000B\" }", FLOW));
        assert_eq!(e.field, "switch.trim.header");
        assert!(e.message.contains("nic.mtu = 1000 B"), "{e}");
    }

    #[test]
    fn the_header_queue_is_not_a_data_queue() {
        let e = refused(ndp("", "queues = 3\ntrim = { queue = 1, data_queue = \"60000B\" }", FLOW));
        assert_eq!(e.field, "switch.trim.queue");
        // A flow's own class too.
        let classed = "{ src = \"h0\", dst = \"h1\", size = \"40KB\", class = 2 }";
        let e = refused(ndp("", "queues = 3\ntrim = { queue = 2, data_queue = \"60000B\" }", classed));
        assert_eq!(e.field, "switch.trim.queue");
        validate(&mut ndp("", "queues = 3\ntrim = { queue = 2, data_queue = \"60000B\" }", FLOW)).unwrap();
    }

    #[test]
    fn return_to_sender_needs_per_port_queues() {
        let e = refused(ndp("", "trim = { queue = 0, return_to_sender = true }", FLOW));
        assert_eq!(e.field, "switch.trim.return_to_sender");
        assert!(e.message.contains("switch.trim.data_queue"), "{e}");
    }

    #[test]
    fn a_degraded_ports_scaled_queues_still_hold_a_packet() {
        // 60,000 B x 0.05 = 3,000 B: short of a 4,000 B packet with NDP's header.
        let trim = "trim = { queue = 0, data_queue = \"60000B\" }";
        let e = refused(ndp("mtu = 4000", &format!("{trim}\ndegraded = [{{ from = \"sw0\", to = \"h1\", factor = 0.05 }}]"), FLOW));
        assert_eq!(e.field, "switch.degraded[0].factor");
        assert!(e.message.contains("switch.trim.data_queue (60000 B) to 3000 B"), "{e}");
        validate(&mut ndp("mtu = 4000", &format!("{trim}\ndegraded = [{{ from = \"sw0\", to = \"h1\", factor = 0.25 }}]"), FLOW)).unwrap();
        // Without per-port queues nothing is scaled but the rate.
        validate(&mut ndp("mtu = 4000", "trim = { queue = 0 }\ndegraded = [{ from = \"sw0\", to = \"h1\", factor = 0.05 }]", FLOW)).unwrap();
    }

    #[test]
    fn another_schemes_section_and_split_settings_on_one_thread_are_warned_by_name() {
        let mut s = ndp("", "trim = { queue = 0 }", FLOW);
        s.recovery.uet.paths = 8;
        s.run.partition = crate::config::run::PartitionMode::Switches;
        let topo = validate(&mut s).unwrap();
        let w = warnings(&s, &topo);
        assert!(w.iter().any(|l| l.starts_with("recovery.uet: has no effect") && l.contains("\"ndp\"")), "{w:?}");
        assert!(w.iter().any(|l| l.starts_with("run.partition: has no effect")), "{w:?}");
        // UET picks its own entropy values: [routing] entropy is not read.
        let mut uet = ndp("", "trim = { queue = 0 }", FLOW);
        uet.transport.recovery = crate::config::RecoveryKind::Uet;
        uet.routing.entropy = crate::config::EntropyKind::PerPacket;
        let topo = validate(&mut uet).unwrap();
        assert!(warnings(&uet, &topo).iter().any(|l| l.starts_with("routing.entropy: \"per-packet\" has no effect")), "{:?}", warnings(&uet, &topo));
        // The run's own section, defaults elsewhere and a split run are not warned.
        let mut quiet = ndp("", "trim = { queue = 0 }", FLOW);
        quiet.recovery.ndp = s.recovery.ndp.clone();
        quiet.run.threads = 2;
        quiet.run.partition = crate::config::run::PartitionMode::Switches;
        let topo = validate(&mut quiet).unwrap();
        let w = warnings(&quiet, &topo);
        assert!(!w.iter().any(|l| l.starts_with("recovery.") || l.starts_with("run.")), "{w:?}");
    }

    #[test]
    fn codepoint_settings_with_ecn_off_are_warned_by_name() {
        let mut s = ndp("colour_codepoint = \"ecn\"", "ecn = { enabled = false, drop_not_ect = true }", FLOW);
        let topo = validate(&mut s).unwrap();
        let w = warnings(&s, &topo);
        assert!(w.iter().any(|l| l.starts_with("switch.ecn.drop_not_ect: has no effect")), "{w:?}");
        assert!(w.iter().any(|l| l.starts_with("nic.colour_codepoint: ")), "{w:?}");
        let mut on = ndp("colour_codepoint = \"ecn\"", "ecn = { enabled = true, drop_not_ect = true }", FLOW);
        let topo = validate(&mut on).unwrap();
        assert!(warnings(&on, &topo).is_empty());
    }
}
