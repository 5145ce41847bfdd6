//! Trimming with per-port limits, as htsim's NDP switch (`CompositeQueue`,
//! sim/compositequeue.cpp): `[switch] trim = { data_queue, header_queue, victim }` validated
//! field by field, its defaults, and whole runs of public schemes through switches that trim:
//! go-back-N (which finds a trimmed packet as it finds a drop) and NDP (which NACKs it). `net/admission.rs` and
//! `net/port.rs` check the arithmetic by hand and, with the test-only receiver-driven scheme,
//! the exact times at which headers overtake queued data.

use retx::config::TrimVictim;
use retx::net::admission::{PortTrim, Victim};
use retx::net::packet::Packet;
use retx::observe::{DropCause, Observer};
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use retx::{RunOutput, Scenario, ScenarioError};
use std::cell::RefCell;
use std::rc::Rc;

/// Three hosts send 200 KB each to h0 over one 10 Gbps switch at line rate (go-back-N, no
/// congestion control), `trim` the switch's `trim` table, `extra` more `[switch]` keys.
fn three_into_one(trim: &str, extra: &str) -> String {
    format!(
        r#"
name = "trimming"
seed = 7
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "10Gbps"
link_delay = "1us"
[nic]
mtu = 1000
[switch]
pfc = {{ enabled = false }}
{extra}
{trim}
[transport]
recovery = "gbn"
cc = "none"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "200KB" }},
  {{ src = "h2", dst = "h0", size = "200KB" }},
  {{ src = "h3", dst = "h0", size = "200KB" }},
]
"#
    )
}

fn refused(text: &str) -> ScenarioError {
    retx::run_toml(text).err().unwrap_or_else(|| panic!("accepted:\n{text}"))
}

#[test]
fn per_port_limits_are_validated_field_by_field() {
    let cases = [
        ("trim = { data_queue = \"0B\" }", "", "switch.trim.data_queue", "must be greater than 0"),
        ("trim = { data_queue = \"60KB\", header_queue = \"32B\" }", "", "switch.trim.header_queue", "32 B is smaller than one header (switch.trim.header = 64 B)"),
        ("trim = { header = \"100B\", data_queue = \"60KB\", header_queue = \"99B\" }", "", "switch.trim.header_queue", "99 B is smaller than one header (switch.trim.header = 100 B)"),
        ("trim = { data_queue = \"60KB\", victim = \"coin\" }", "", "switch.trim.victim", "unknown variant `coin`, expected `htsim` or `arrival`"),
        ("trim = { data_queue = \"60KB\", victim = \"return\" }", "", "switch.trim.victim", "unknown variant `return`, expected `htsim` or `arrival`"),
        ("trim = { header_queue = \"120KB\" }", "", "switch.trim.header_queue", "needs switch.trim.data_queue (per-port limits)"),
        ("trim = { victim = \"arrival\" }", "", "switch.trim.victim", "needs switch.trim.data_queue (per-port limits)"),
        ("trim = { data_queue = \"60KB\", bounce = true }", "", "switch.trim.bounce", ""),
        ("trim = { data_queue = \"60KB\" }", "queues = 1", "switch.trim.data_queue", "needs switch.queues >= 2 (data queues apart from the header queue)"),
    ];
    for (trim, extra, field, message) in cases {
        let e = refused(&three_into_one(trim, extra));
        assert_eq!(e.field, field, "{trim}: {e}");
        if !message.is_empty() {
            assert_eq!(e.message, message, "{trim}");
        }
    }
    let e = refused(&three_into_one("trim = { data_queue = \"60KB\" }", "").replace("pfc = { enabled = false }", "pfc = { enabled = true }"));
    assert_eq!(e.field, "switch.trim.data_queue", "{e}");
    assert!(e.message.contains("switch.pfc.enabled = false"), "{e}");
}

#[test]
fn defaults_follow_htsim_and_leave_plain_trimming_as_it_was() {
    let trim_of = |trim: &str| Scenario::from_toml(&three_into_one(trim, "")).unwrap().switch.trim.unwrap();
    // htsim main_ndp: 15 packets x 4000 B of data queue; the header queue twice that.
    let t = trim_of("trim = { data_queue = \"60000B\" }");
    assert_eq!(t.port(), Some(PortTrim { data_queue: 60_000, header_queue: 120_000, victim: Victim::Htsim }));
    let t = trim_of("trim = { data_queue = \"60KB\", header_queue = \"1KB\", victim = \"arrival\" }");
    assert_eq!((t.victim, t.port()), (Some(TrimVictim::Arrival), Some(PortTrim { data_queue: 60_000, header_queue: 1_000, victim: Victim::Arrival })));
    // Written out, the new keys round-trip; without them nothing new is written.
    let s = Scenario::from_toml(&three_into_one("trim = { data_queue = \"60KB\", victim = \"arrival\" }", "")).unwrap();
    let again = Scenario::from_toml(&s.to_toml()).unwrap().switch.trim.unwrap();
    assert_eq!(again.port(), s.switch.trim.unwrap().port());
    let plain = Scenario::from_toml(&three_into_one("trim = { queue = 0 }", "")).unwrap();
    assert_eq!(plain.switch.trim.as_ref().unwrap().port(), None);
    let text = plain.to_toml();
    assert!(!text.contains("data_queue") && !text.contains("header_queue") && !text.contains("victim"), "{text}");
}

/// One enqueue or dequeue at the watched port: (enqueue?, time, queue, trimmed, bytes the
/// queue holds after).
type Event = (bool, Time, usize, bool, u64);

/// What the port into h0 (the first field) saw, in order, and the drops anywhere.
#[derive(Clone, Default)]
struct Watch(Rc<RefCell<(usize, Vec<Event>, u64)>>);

impl Observer for Watch {
    fn enqueue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
        let mut w = self.0.borrow_mut();
        if port == w.0 {
            assert!(pkt.seg.kind == SegKind::Data, "only data goes to h0");
            w.1.push((true, now, queue, pkt.seg.trimmed, queued));
        }
    }
    fn dequeue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
        let mut w = self.0.borrow_mut();
        if port == w.0 {
            w.1.push((false, now, queue, pkt.seg.trimmed, queued));
        }
    }
    fn drop(&mut self, _now: Time, _port: usize, _pkt: &Packet, _cause: DropCause) {
        self.0.borrow_mut().2 += 1;
    }
}

/// Runs `text`, watching the switch's port towards h0 (link 0 joins h0 and the switch).
fn run_watched(text: &str) -> (RunOutput, Vec<Event>, u64) {
    let topo = retx::config::validate(&mut Scenario::from_toml(text).unwrap()).unwrap();
    let (h0, sw) = (topo.find("h0").unwrap(), topo.find("sw0").unwrap());
    let i = topo.links.iter().position(|l| (l.a, l.b) == (h0, sw) || (l.a, l.b) == (sw, h0)).unwrap();
    let watch = Watch::default();
    watch.0.borrow_mut().0 = if topo.links[i].a == sw { 2 * i } else { 2 * i + 1 };
    let sim = retx::config::build_with_observer(Scenario::from_toml(text).unwrap(), watch.clone()).unwrap();
    let out = sim.run(&mut |_, _| true).unwrap();
    let (_, events, drops) = watch.0.take();
    (out, events, drops)
}

fn assert_all_delivered(out: &RunOutput) {
    assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
    assert_eq!(out.counters.bad_deliveries, 0);
    for f in &out.flows {
        assert_eq!(f.delivered_bytes, 200_000, "flow {}", f.flow_id);
    }
}

#[test]
fn a_full_data_queue_trims_headers_overtake_data_and_every_byte_arrives_once() {
    // 15 packets of 1,048 B on the wire: htsim's default data queue of 15 packets.
    let cap = 15 * 1_048;
    for victim in ["htsim", "arrival"] {
        let text = three_into_one(&format!("trim = {{ data_queue = \"{cap}B\", victim = \"{victim}\" }}"), "");
        let (out, events, drops) = run_watched(&text);
        assert_all_delivered(&out);
        let c = &out.counters;
        assert!(c.packets_trimmed > 0, "{victim}: {c:?}");
        assert_eq!((drops, c.drops_buffer), (0, 0), "{victim}: the header queue (2 x {cap} B) never fills");
        let (mut headers_waiting, mut trimmed, mut overtakes, mut data_held) = (0u64, 0u64, 0u64, 0u64);
        for &(enq, t, q, cut, queued) in &events {
            match (enq, q) {
                (true, 1) => assert!(queued <= cap, "{victim}: {queued} B in the data queue at {t:?}"),
                (false, 1) => assert_eq!(headers_waiting, 0, "{victim}: data left at {t:?} ahead of a header"),
                (true, 0) => {
                    assert!(cut, "{victim}: only headers share h0's control queue");
                    trimmed += 1;
                    overtakes += (data_held > 0) as u64;
                }
                _ => {}
            }
            if q == 0 {
                headers_waiting = queued;
            } else {
                data_held = queued;
            }
        }
        assert_eq!(trimmed, c.packets_trimmed, "{victim}: every trim at h0's port");
        assert_eq!(overtakes, trimmed, "{victim}: each header was queued ahead of waiting data");
    }
    // The same run without data_queue: the 12 MB buffer never refuses, nothing is trimmed.
    let out = retx::run_toml(&three_into_one("trim = { queue = 0 }", "")).unwrap();
    assert_all_delivered(&out);
    assert_eq!((out.counters.packets_trimmed, out.counters.drops_buffer), (0, 0));
}

#[test]
fn a_full_header_queue_drops_and_runs_repeat_bit_for_bit() {
    // One header's room: the senders' bursts overflow it, so headers are dropped as well.
    let text = three_into_one("trim = { data_queue = \"4192B\", header_queue = \"64B\" }", "");
    let (out, _, drops) = run_watched(&text);
    assert_all_delivered(&out);
    assert!(out.counters.packets_trimmed > 0 && out.counters.drops_buffer > 0, "{:?}", out.counters);
    assert_eq!(drops, out.counters.drops_buffer);
    assert_eq!(out.flows.iter().map(|f| f.drops).sum::<u64>(), out.counters.drops_buffer, "each drop is a flow's");
    // Same seed, same coins.
    let again = retx::run_toml(&text).unwrap();
    assert_eq!((again.counters.packets_trimmed, again.counters.drops_buffer, again.end), (out.counters.packets_trimmed, out.counters.drops_buffer, out.end));
    // Another seed tosses other coins (the trims and drops move; compare a few seeds).
    let differs = (8..12).any(|seed| {
        let other = retx::run_toml(&text.replace("seed = 7", &format!("seed = {seed}"))).unwrap();
        (other.counters.packets_trimmed, other.counters.drops_buffer, other.end) != (out.counters.packets_trimmed, out.counters.drops_buffer, out.end)
    });
    assert!(differs, "the coin follows the seed");
}

#[test]
fn ndp_through_per_port_trimming_resends_each_trimmed_packet_once_on_its_nack() {
    // htsim's main_ndp switch: 15 packets of 4,000 B per data queue, twice that for headers;
    // eight senders at 100 Gbps into one host with a 12 MB buffer that never refuses.
    let flows: Vec<String> = (1..=8).map(|h| format!("{{ src = \"h{h}\", dst = \"h0\", size = \"400KB\" }}")).collect();
    for victim in ["htsim", "arrival"] {
        let text = format!(
            r#"
name = "ndp-composite"
duration = "100ms"
[topology]
kind = "single-switch"
hosts = 9
host_link = "100Gbps"
link_delay = "1us"
[nic]
mtu = 4000
[switch]
pfc = {{ enabled = false }}
trim = {{ queue = 0, header = "64B", data_queue = "60000B", victim = "{victim}" }}
[transport]
recovery = "ndp"
cc = "none"
[workload]
kind = "flow-list"
flows = [{}]
"#,
            flows.join(", ")
        );
        let out = retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.unfinished().is_none(), "{victim}: {:?}", out.unfinished());
        let c = &out.counters;
        assert_eq!(c.bad_deliveries, 0, "{victim}");
        assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 8 * 400_000, "{victim}");
        assert!(c.packets_trimmed > 0, "{victim}: {c:?}");
        assert_eq!(c.drops_buffer, 0, "{victim}: 120,000 B of headers is room enough");
        assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0, "{victim}");
        assert_eq!(out.flows.iter().map(|f| f.notifications.naks).sum::<u64>(), c.packets_trimmed, "{victim}: a NACK per trimmed packet");
        assert_eq!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>(), c.packets_trimmed * 4_000, "{victim}: resent once each");
    }
}
