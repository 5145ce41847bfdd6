//! Whole simulations of the switch MMU options: dynamic PFC with headroom (HPCC ns-3), colour
//! thresholds and WRED, and the shaped queue. Unit tests in `net/switch.rs` and `net/port.rs`
//! check the arithmetic by hand; these check that a run wires them up and validates them.

use retx::{RunOutput, ScenarioError};

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn refused(text: &str) -> ScenarioError {
    retx::run_toml(text).err().unwrap_or_else(|| panic!("accepted:\n{text}"))
}

fn assert_all_delivered(out: &RunOutput, sizes: &[u64]) {
    assert_eq!(out.flows.len(), sizes.len());
    for (f, &size) in out.flows.iter().zip(sizes) {
        assert!(f.finish.is_some(), "flow {} unfinished: {f:?}", f.flow_id);
        assert_eq!(f.delivered_bytes, size, "flow {}", f.flow_id);
    }
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// Three 40 Gbps senders into h0 on one switch (1 us links), 500 KB each, without congestion
/// control, so the switch buffer (`buffer`) overflows unless PFC holds the senders back.
fn incast(buffer: &str, pfc: &str) -> String {
    format!(
        r#"
name = "mmu"
seed = 3
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "40Gbps"
link_delay = "1us"
[switch]
buffer = "{buffer}"
pfc = {{ {pfc} }}
[transport]
recovery = "gbn"
cc = "none"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "incast"
receiver = "h0"
senders = ["h1", "h2", "h3"]
size = "500KB"
"#
    )
}

/// Without PFC the 200 KB buffer drops; dynamic PFC (4 ports x (15_000 B headroom + 4 KiB
/// reserve) set aside, threshold 1/8 of the rest) pauses the senders and loses nothing.
#[test]
fn dynamic_pfc_makes_an_overflowing_incast_lossless() {
    let lossy = run(&incast("200KB", "enabled = false"));
    assert_all_delivered(&lossy, &[500_000; 3]);
    assert!(lossy.counters.drops_buffer > 0, "{:?}", lossy.counters);
    let dynamic = run(&incast("200KB", "enabled = true, mode = \"dynamic\""));
    println!("drops without PFC {}, pauses with dynamic PFC {}", lossy.counters.drops_buffer, dynamic.counters.pfc_pauses);
    assert_all_delivered(&dynamic, &[500_000; 3]);
    assert_eq!(dynamic.counters.drops_buffer, 0);
    assert!(dynamic.counters.pfc_pauses > 0);
    // The defaults are HPCC ns-3's: naming them changes nothing.
    let named = run(&incast("200KB", "enabled = true, mode = \"dynamic\", reserve = \"4KiB\", resume_offset = \"3KiB\", shift = 3"));
    assert_eq!(format!("{:?} {:?}", named.flows, named.counters.pfc_pauses), format!("{:?} {:?}", dynamic.flows, dynamic.counters.pfc_pauses));
    // The fixed mode is still the default.
    let fixed = run(&incast("200KB", "enabled = true"));
    let explicit = run(&incast("200KB", "enabled = true, mode = \"fixed\""));
    assert_eq!(format!("{:?} {:?}", fixed.flows, fixed.counters), format!("{:?} {:?}", explicit.flows, explicit.counters));
}

/// A static per-port buffer: the 12 MB shared buffer holds the whole incast without a drop,
/// a 50 KB port does not; everything is still delivered (go-back-N recovers), and the limit is
/// validated against one packet and the shared buffer.
#[test]
fn a_static_port_buffer_drops_what_the_shared_buffer_would_hold() {
    let shared = run(&incast("12MB", "enabled = false"));
    assert_all_delivered(&shared, &[500_000; 3]);
    assert_eq!(shared.counters.drops_buffer, 0, "{:?}", shared.counters);
    let static_port = incast("12MB", "enabled = false").replace("[switch]\n", "[switch]\nport_buffer = \"50KB\"\n");
    let limited = run(&static_port);
    assert_all_delivered(&limited, &[500_000; 3]);
    assert!(limited.counters.drops_buffer > 0, "{:?}", limited.counters);
    for (bad, why) in [("1KB", "one packet"), ("13MB", "switch.buffer")] {
        let e = refused(&static_port.replace("\"50KB\"", &format!("\"{bad}\"")));
        assert_eq!(e.field, "switch.port_buffer", "{e}");
        assert!(e.message.contains(why), "{e}");
    }
}

#[test]
fn dynamic_pfc_is_validated_field_by_field() {
    let e = refused(&incast("200KB", "mode = \"dynamic\""));
    assert_eq!(e.field, "switch.pfc.mode", "{e}");
    assert!(e.message.contains("enabled = true"), "{e}");
    let e = refused(&incast("200KB", "enabled = true, mode = \"dynamc\""));
    assert_eq!(e.field, "switch.pfc.mode", "{e}");
    assert_eq!(e.message, "unknown variant `dynamc`; did you mean `dynamic`?", "{e}");
    let e = refused(&incast("200KB", "enabled = true, mode = \"dynamic\", shift = 17"));
    assert_eq!((e.field.as_str(), e.message.as_str()), ("switch.pfc.shift", "17 is out of range (allowed 0..=16)"));
    // 4 ports x (50_000 headroom + 4_096 reserve) = 216_384 B: more than the buffer.
    let e = refused(&incast("200KB", "enabled = true, mode = \"dynamic\", headroom = \"50KB\""));
    assert_eq!(e.field, "switch.pfc.headroom", "{e}");
    assert!(e.message.contains("216384 B"), "{e}");
    let e = refused(&incast("200KB", "enabled = true, mode = \"dynamic\", hedroom = \"50KB\""));
    assert_eq!(e.field, "switch.pfc.hedroom", "{e}");
    assert_eq!(e.message, "unknown field `hedroom`; did you mean `headroom`?", "{e}");
}

// ---------------------------------------------------------------------------------------------
// Colours and the shaped queue, packet by packet
// ---------------------------------------------------------------------------------------------

use retx::net::packet::Packet;
use retx::observe::{DropCause, Observer};
use retx::sim::units::{Rate, Time};
use retx::transport::common::segment::SegKind;
use std::cell::RefCell;
use std::rc::Rc;

/// Per flow: the times its data packets went on the watched port's wire, its buffer drops,
/// and the enqueues at the watched port before its first drop.
#[derive(Default)]
struct Tally {
    watch: usize,
    wire: [Vec<Time>; 2],
    drops: [u64; 2],
    enqueued_before_drop: [u64; 2],
    dropped_colours: Vec<u8>,
}

#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Tally>>);

impl Observer for Recorder {
    fn wire(&mut self, now: Time, port: usize, pkt: &Packet) {
        let mut t = self.0.borrow_mut();
        if port == t.watch && pkt.seg.kind == SegKind::Data && pkt.flow < 2 {
            t.wire[pkt.flow as usize].push(now);
        }
    }
    fn enqueue(&mut self, _now: Time, port: usize, _q: usize, pkt: &Packet, _queued: u64) {
        let mut t = self.0.borrow_mut();
        if port == t.watch && pkt.flow < 2 && t.drops[pkt.flow as usize] == 0 {
            t.enqueued_before_drop[pkt.flow as usize] += 1;
        }
    }
    fn drop(&mut self, _now: Time, _port: usize, pkt: &Packet, cause: DropCause) {
        let mut t = self.0.borrow_mut();
        if cause == DropCause::Buffer && pkt.flow < 2 {
            t.drops[pkt.flow as usize] += 1;
            t.dropped_colours.push(pkt.seg.colour);
        }
    }
}

/// h1 and h2 send to h0 over one 10 Gbps switch (go-back-N at line rate, no congestion
/// control): flow 0 from h1 with `flow0` extra keys, flow 1 from h2 with `flow1`, 100 KB each.
fn two_into_one(switch: &str, flow0: &str, flow1: &str) -> String {
    sized_two_into_one("100KB", switch, flow0, flow1)
}

/// The same with flow 0 of `size0`.
fn sized_two_into_one(size0: &str, switch: &str, flow0: &str, flow1: &str) -> String {
    format!(
        r#"
name = "mmu2"
seed = 5
duration = "20ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
link_delay = "1us"
[switch]
queues = 3
{switch}
[transport]
recovery = "gbn"
cc = "none"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "{size0}" {flow0} }},
  {{ src = "h2", dst = "h0", size = "100KB" {flow1} }},
]
"#
    )
}

/// The switch port towards h0: link 0 joins h0 and the switch (port 0 at h0, port 1 at it).
fn run_watched(text: &str) -> (RunOutput, Tally) {
    let topo = retx::config::validate(&mut retx::Scenario::from_toml(text).unwrap()).unwrap();
    let (h0, sw) = (topo.find("h0").unwrap(), topo.find("sw0").unwrap());
    let i = topo.links.iter().position(|l| (l.a, l.b) == (h0, sw) || (l.a, l.b) == (sw, h0)).unwrap();
    let watch = if topo.links[i].a == sw { 2 * i } else { 2 * i + 1 };
    let rec = Recorder::default();
    rec.0.borrow_mut().watch = watch;
    let sim = retx::config::build_with_observer(retx::Scenario::from_toml(text).unwrap(), rec.clone()).unwrap();
    let out = sim.run(&mut |_, _| true).unwrap();
    let tally = rec.0.take();
    (out, tally)
}

/// Two line-rate senders overflow h0's port; a red threshold of 20 KB (Aeolus's selective
/// dropping) drops only the red flow, and both still complete.
#[test]
fn a_red_threshold_drops_only_red_packets() {
    let text = two_into_one("wred = [{ colour = 2, threshold = \"20KB\" }]", ", colour = 2", "");
    let (out, t) = run_watched(&text);
    assert_all_delivered(&out, &[100_000; 2]);
    println!("drops: red flow {}, green flow {}", t.drops[0], t.drops[1]);
    assert!(t.drops[0] > 0);
    assert_eq!(t.drops[1], 0);
    assert!(t.dropped_colours.iter().all(|&c| c == 2));
    // Without the rule nothing is dropped (the 12 MB buffer holds both flows).
    let (plain, t) = run_watched(&two_into_one("", ", colour = 2", ""));
    assert_all_delivered(&plain, &[100_000; 2]);
    assert_eq!(t.drops, [0, 0]);
}

/// The red flow in queue 1 and the green one in queue 2 of h0's port: queue 1 goes first, so it
/// holds little and a per-queue red rule, counting its bytes alone, drops nothing; with
/// `scope = "port"` the green backlog in queue 2 counts too and red packets are dropped. Never
/// a green one either way.
#[test]
fn a_port_scoped_colour_rule_counts_every_queue_of_the_port() {
    let rule = |scope: &str| two_into_one(&format!("wred = [{{ colour = 2, threshold = \"20KB\", scope = \"{scope}\" }}]"), ", colour = 2, class = 1", ", class = 2");
    let (queue_out, per_queue) = run_watched(&rule("queue"));
    let (port_out, per_port) = run_watched(&rule("port"));
    assert_all_delivered(&queue_out, &[100_000; 2]);
    assert_all_delivered(&port_out, &[100_000; 2]);
    println!("red drops: per queue {}, per port {}", per_queue.drops[0], per_port.drops[0]);
    assert_eq!((per_queue.drops[1], per_port.drops[1]), (0, 0));
    assert_eq!(per_queue.drops[0], 0);
    assert!(per_port.drops[0] > 0);
}

/// Flow 0 (10 packets of 1072 B: 1024 payload + 48 header) is mapped to queue 2, shaped to
/// 5 % of 10 Gbps with a buffer of 8 packets. Its first packet goes at once; 8 more wait; the
/// 10th arrives to a full buffer and is dropped (go-back-N resends it). Its packets leave
/// exactly 1072 x 8 / 500e6 s = 17.152 us apart: the shaper's rate, not the link's. (A long
/// go-back-N flow at line rate into such a queue barely progresses: most of what it sends is
/// dropped and resent.)
#[test]
fn the_shaped_queue_paces_its_class_and_drops_beyond_its_buffer() {
    // Flow 1 starts once flow 0's first packets are out, so no unshaped packet holds the
    // transmitter when the shaper opens.
    let text = sized_two_into_one("10240B", "shaped = { queue = 2, share = 0.05, buffer = 8 }", ", class = 2", ", start = \"1ms\"");
    let (out, t) = run_watched(&text);
    assert_all_delivered(&out, &[10_240, 100_000]);
    assert_eq!(t.enqueued_before_drop[0], 9);
    assert!(t.drops[0] > 0);
    assert_eq!(t.drops[1], 0, "flow 1 uses queue 1, unshaped, in the 12 MB buffer");
    let gap = Time(17_152_000);
    assert_eq!(Rate::mbps(500).serialization(1072), gap);
    let w = &t.wire[0];
    assert!(w.len() >= 10, "{}", w.len());
    for k in 1..9 {
        assert_eq!(w[k].0 - w[k - 1].0, gap.0, "packet {k}");
    }
    // Every gap of the flow on that port is at least the shaper's (retransmissions included).
    assert!(w.windows(2).all(|x| x[1].0 - x[0].0 >= gap.0));
    // Flow 0 takes at least its 9 gaps; the unshaped 100 KB flow less.
    let fct = |i: usize| out.flows[i].fct().unwrap();
    assert!(fct(0) >= Time(9 * gap.0), "{:?}", fct(0));
    assert!(fct(1) < fct(0), "{:?} {:?}", fct(1), fct(0));
    // The same run without the shaper sends flow 0 at line rate.
    let (_, plain) = run_watched(&sized_two_into_one("10240B", "", ", class = 2", ", start = \"1ms\""));
    assert!(plain.wire[0].windows(2).all(|x| x[1].0 - x[0].0 < gap.0));
}

#[test]
fn colour_rules_shaped_queues_and_flow_classes_are_validated() {
    let e = refused(&two_into_one("wred = [{ colour = 3, threshold = \"8KB\" }]", "", ""));
    assert_eq!((e.field.as_str(), e.message.as_str()), ("switch.wred[0].colour", "3 is out of range (allowed 0..=2)"));
    let e = refused(&two_into_one("wred = [{ colour = 2, threshold = \"8KB\", min = \"1KB\" }]", "", ""));
    assert_eq!(e.field, "switch.wred[0].threshold", "{e}");
    let e = refused(&two_into_one("wred = [{ colour = 2, min = \"1KB\", max = \"9KB\" }]", "", ""));
    assert_eq!(e.field, "switch.wred[0].pmax", "{e}");
    let e = refused(&two_into_one("wred = [{ colour = 2, min = \"9KB\", max = \"1KB\", pmax = 0.5 }]", "", ""));
    assert_eq!(e.field, "switch.wred[0].min", "{e}");
    let e = refused(&two_into_one("wred = [{ colour = 2, threshold = \"8KB\", scope = \"switch\" }]", "", ""));
    assert!(e.field.starts_with("switch.wred") && e.message.contains("`queue`") && e.message.contains("`port`"), "{e}");
    let e = refused(&two_into_one("wred = [{ colour = 1, class = 3, threshold = \"8KB\" }]", "", ""));
    assert_eq!((e.field.as_str(), e.message.as_str()), ("switch.wred[0].class", "3 is out of range (allowed 1..=2)"));
    let e = refused(&two_into_one("shaped = { queue = 3 }", "", ""));
    assert_eq!(e.field, "switch.shaped.queue", "{e}");
    let e = refused(&two_into_one("shaped = { queue = 2, share = 0.05, rate = \"1Gbps\" }", "", ""));
    assert_eq!(e.field, "switch.shaped.rate", "{e}");
    let e = refused(&two_into_one("shaped = { queue = 2, share = 1.5 }", "", ""));
    assert_eq!(e.field, "switch.shaped.share", "{e}");
    let e = refused(&two_into_one("shaped = { queue = 2, buffer = 0 }", "", ""));
    assert_eq!(e.field, "switch.shaped.buffer", "{e}");
    let e = refused(&two_into_one("shaped = { queue = 2, depth = 8 }", "", ""));
    assert_eq!(e.field, "switch.shaped.depth", "{e}");
    let e = refused(&two_into_one("", ", class = 3", ""));
    assert_eq!(e.field, "workload.flows[0].class", "{e}");
    let e = refused(&two_into_one("", ", colour = 4", ""));
    assert_eq!(e.field, "workload.flows[0].colour", "{e}");
}
