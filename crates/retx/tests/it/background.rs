//! Background traffic (`[[background]]`): an unresponsive source feeding one switch egress
//! queue at a fixed, random or linearly rising rate, as the traffic generator of STRIDE's
//! testbed; and per-flow drop counts (the flow table's `drops`).
//!
//! The network is STRIDE's testbed shape: h0 - leaf0 - spine0 - leaf1 - h1, 10 Gbps links of
//! 1 us. Background goes into leaf0's port toward spine0 (the link h0's data crosses) unless a
//! test says otherwise; spine0 consumes it on arrival.

use retx::net::packet::{Frame, Packet};
use retx::observe::{DropCause, Observer};
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use retx::{RunOutput, Scenario};
use std::cell::RefCell;
use std::rc::Rc;

/// The testbed with `flows` (a flow-list), `extra` TOML before `[workload]` (switch, loss
/// sections) and `background` TOML (`[[background]]` tables) after it.
fn testbed(duration: &str, flows: &str, extra: &str, background: &str) -> String {
    format!(
        r#"
name = "background"
seed = 1
duration = "{duration}"
stop_when_done = false
[topology]
kind = "leaf-spine"
spines = 1
leaves = 2
hosts_per_leaf = 1
host_link = "10Gbps"
fabric_link = "10Gbps"
link_delay = "1us"
[transport]
recovery = "gbn"
cc = "none"
{extra}
[workload]
kind = "flow-list"
flows = [{flows}]
{background}
"#
    )
}

/// A flow on the reverse path (h1 -> h0): it never crosses leaf0 -> spine0.
const REVERSE_FLOW: &str = r#"{ src = "h1", dst = "h0", size = "10KB" }"#;

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn error(text: &str) -> String {
    retx::run_toml(text).err().unwrap_or_else(|| panic!("accepted:\n{text}")).to_string()
}

/// What an observer saw of background packets and drops.
#[derive(Default)]
struct Tally {
    /// When each background packet joined its egress queue.
    enqueued: Vec<Time>,
    /// Drops of flow packets by (flow, data or control), and of background packets.
    flow_data_drops: Vec<u64>,
    flow_control_drops: Vec<u64>,
    background_drops: u64,
}

#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Tally>>);

impl Observer for Recorder {
    fn enqueue(&mut self, now: Time, _port: usize, _queue: usize, pkt: &Packet, _queued: u64) {
        if pkt.frame == Frame::Background {
            self.0.borrow_mut().enqueued.push(now);
        }
    }
    fn drop(&mut self, _now: Time, _port: usize, pkt: &Packet, _cause: DropCause) {
        let mut t = self.0.borrow_mut();
        if pkt.frame == Frame::Background {
            t.background_drops += 1;
            return;
        }
        let f = pkt.flow as usize;
        let per_flow = if pkt.seg.kind == SegKind::Data { &mut t.flow_data_drops } else { &mut t.flow_control_drops };
        if per_flow.len() <= f {
            per_flow.resize(f + 1, 0);
        }
        per_flow[f] += 1;
    }
}

fn run_observed(text: &str) -> (RunOutput, Tally) {
    let rec = Recorder::default();
    let scenario = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let sim = retx::config::build_with_observer(scenario, rec.clone()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let out = sim.run(&mut |_, _| true).expect("no abort");
    let tally = rec.0.take();
    (out, tally)
}

fn fixed(link: &str, rate: &str, size: &str, start: &str, until: &str) -> String {
    format!("[[background]]\nlink = \"{link}\"\nprofile = \"fixed\"\nrate = \"{rate}\"\nsize = \"{size}\"\nstart = \"{start}\"\nuntil = \"{until}\"\n")
}

#[test]
fn a_fixed_source_sends_its_rate_and_an_idle_link_delivers_every_packet() {
    // (rate, size, expected packets over 1 ms): ticks every size x 8 / rate (rounded up to a
    // picosecond) from start while before until, so ceil(1 ms / gap) packets:
    // 4 Gbps x 1500 B: gap 3 us, 333.3 -> 334; 3 Gbps x 1000 B: gap 2666.667 ns, 375.0 -> 375
    // (the rounded-up gap makes 375 gaps 0.1 ns longer than 1 ms); 10 Gbps x 64 B: the line
    // rate, gap 51.2 ns, 19531.25 -> 19532.
    for (rate, size, bits_per_s, bytes, want) in [("4Gbps", "1500B", 4e9, 1500.0, 334), ("3Gbps", "1000B", 3e9, 1000.0, 375), ("10Gbps", "64B", 10e9, 64.0, 19532)] {
        let text = testbed("2ms", REVERSE_FLOW, "", &fixed("leaf0->spine0", rate, size, "100us", "1100us"));
        let out = run(&text);
        let c = &out.counters;
        let ideal: f64 = 1e-3 * bits_per_s / (bytes * 8.0);
        assert_eq!(c.background_sent, want, "{rate} x {size}");
        assert!((c.background_sent as f64 - ideal.floor()).abs() <= 1.0, "{rate} x {size}: {} vs {ideal}", c.background_sent);
        assert_eq!((c.background_delivered, c.background_dropped, c.drops_buffer), (want, 0, 0), "{rate} x {size}");

        // Each background packet crosses exactly one link; the reverse flow is untouched.
        let quiet = run(&testbed("2ms", REVERSE_FLOW, "", ""));
        assert_eq!(c.packet_hops - quiet.counters.packet_hops, want);
        assert_eq!(c.packets_created - quiet.counters.packets_created, want);
        assert_eq!(c.packets_consumed - quiet.counters.packets_consumed, want);
        assert_eq!(out.flows, quiet.flows);
        assert_eq!((quiet.counters.background_sent, quiet.counters.background_delivered), (0, 0));
    }
}

#[test]
fn a_host_at_the_end_of_the_link_consumes_background_without_its_nic() {
    // Background at 5 Gbps into leaf1's port toward h1, beside a 1 MB flow h0 -> h1 (at most
    // 10 Gbps offered into a 10 Gbps port, so the port's queue holds the excess): h1's NIC never
    // sees a background packet, the flow delivers every byte exactly once.
    let flow = r#"{ src = "h0", dst = "h1", size = "1MB" }"#;
    let out = run(&testbed("2ms", flow, "", &fixed("leaf1->h1", "5Gbps", "1500B", "0us", "500us")));
    let c = &out.counters;
    // 500 us at 5 Gbps in 1500 B packets: 208.3 -> 209 ticks.
    // The 12 MB buffer holds the excess: nothing is dropped.
    assert_eq!((c.background_sent, c.background_delivered, c.background_dropped), (209, 209, 0));
    assert_eq!((c.drops_buffer, out.flows[0].drops, c.bad_deliveries), (0, 0, 0));
    assert_eq!(out.flows[0].delivered_bytes, 1_000_000);
    assert!(out.flows[0].finish.is_some());
}

#[test]
fn loss_models_skip_background_packets() {
    // Half of every packet kind is lost everywhere, yet every background packet arrives.
    let loss = "[[loss]]\nat = \"everywhere\"\nrate = 0.5\ncontrol = true\n";
    let out = run(&testbed("1ms", REVERSE_FLOW, loss, &fixed("leaf0->spine0", "4Gbps", "1500B", "0us", "300us")));
    let c = &out.counters;
    // 300 us / 3 us = 100 ticks exactly.
    assert_eq!((c.background_sent, c.background_delivered, c.background_dropped), (100, 100, 0));
    assert!(c.drops_loss > 0);
    assert_eq!(out.flows[0].drops, c.drops_loss);
}

#[test]
fn a_linear_source_sends_the_integral_of_its_rate() {
    // 1 -> 9 Gbps over 2 ms in 1500 B packets. Packets in a window are the rate's integral
    // over it / 12000 bits: the first quarter 1e6 bits (83.3 packets), the last 4e6 bits
    // (333.3), the whole 1e7 bits (833.3). Tolerance 2 packets: 1 for where the window's edges
    // cut the ticks, 1 for the gap being taken at the rate when it begins (the rate rises
    // 0.01 Gbps per packet at most, so the lag over a quarter stays under one packet).
    let bg = "[[background]]\nlink = \"leaf0->spine0\"\nprofile = \"linear\"\nlow = \"1Gbps\"\nhigh = \"9Gbps\"\nuntil = \"2ms\"\n";
    let (out, tally) = run_observed(&testbed("3ms", REVERSE_FLOW, "", bg));
    let t = &tally.enqueued;
    assert_eq!(t.len() as u64, out.counters.background_sent);
    assert_eq!(out.counters.background_delivered, out.counters.background_sent);
    let (low, high, window) = (1e9, 9e9, 2e-3);
    let integral = |a: f64, b: f64| {
        let rate = |x: f64| low + (high - low) * x / window;
        (b - a) * (rate(a) + rate(b)) / 2.0 / 12_000.0
    };
    let count = |a: f64, b: f64| t.iter().filter(|x| (a..b).contains(&(x.0 as f64 * 1e-12))).count() as f64;
    let q = window / 4.0;
    for (a, b) in [(0.0, q), (3.0 * q, window), (0.0, window)] {
        let (got, want) = (count(a, b), integral(a, b));
        assert!((got - want).abs() <= 2.0, "[{a}, {b}): {got} packets, integral {want:.1}");
    }
    assert_eq!((count(0.0, q), count(3.0 * q, window), out.counters.background_sent), (83.0, 333.0, 833));
    // Nothing after until.
    assert!(t.last().unwrap().0 < 2_000_000_000);
}

#[test]
fn a_random_source_follows_its_seed() {
    // 1..9 Gbps drawn every 50 us for 1 ms: the counts per interval are the seed's alone.
    let bg = "[[background]]\nlink = \"leaf0->spine0\"\nprofile = \"random\"\nlow = \"1Gbps\"\nhigh = \"9Gbps\"\ninterval = \"50us\"\nuntil = \"1ms\"\n";
    let per_interval = |seed: u64| {
        let text = testbed("1ms", REVERSE_FLOW, "", bg).replace("seed = 1", &format!("seed = {seed}"));
        let (out, tally) = run_observed(&text);
        let mut counts = [0u64; 20];
        for t in &tally.enqueued {
            counts[(t.0 / 50_000_000) as usize] += 1;
        }
        assert_eq!(counts.iter().sum::<u64>(), out.counters.background_sent);
        (out.counters.background_sent, counts)
    };
    let (a, b, c) = (per_interval(1), per_interval(1), per_interval(2));
    assert_eq!(a, b);
    assert_ne!(a.0, c.0);
    assert_ne!(a.1, c.1);
    for (sent, counts) in [a, c] {
        // Between the counts at 1 and at 9 Gbps throughout (83.3 and 750 packets), and every
        // interval between 50 us at 1 Gbps (4.2 packets) and at 9 Gbps (37.5), +-1 for edges.
        assert!((84..=750).contains(&sent), "{sent}");
        assert!(counts.iter().all(|&n| (4..=38).contains(&n)), "{counts:?}");
    }
}

#[test]
fn background_overload_drops_are_counted_apart_from_each_flows_drops() {
    // An endless flow h0 -> h1 at line rate (no congestion control) and 9 Gbps of background
    // share leaf0's 10 Gbps port toward spine0 behind a 200 KB buffer: both lose packets there.
    // spine0 also loses 2 % of every packet kind it sends (the flow's data toward leaf1 and
    // its ACKs and NAKs toward leaf0), so loss drops are data and control.
    let flows = r#"{ src = "h0", dst = "h1", size = "1GB" }, { src = "h1", dst = "h0", size = "200KB" }"#;
    let extra = "[switch]\nbuffer = \"200KB\"\n[[loss]]\nat = \"switch:spine0\"\nrate = 0.02\ncontrol = true\n";
    let (out, tally) = run_observed(&testbed("2ms", flows, extra, &fixed("leaf0->spine0", "9Gbps", "1500B", "0us", "2ms")));
    let c = &out.counters;
    assert!(c.drops_buffer > 0 && c.drops_loss > 0, "{c:?}");
    assert!(c.background_dropped > 0, "{c:?}");
    assert_eq!(c.background_dropped, tally.background_drops);
    // 2 ms at 9 Gbps in 1500 B packets: 1500 ticks exactly.
    assert_eq!(c.background_sent, 1500);
    // Sent = dropped + delivered + still queued or on the wire (at most the buffer's worth).
    let left = c.background_sent - c.background_dropped - c.background_delivered;
    assert!(left <= 200_000 / 1500, "{left}");
    // Every drop is a flow's or background's.
    let flow_drops: u64 = out.flows.iter().map(|f| f.drops).sum();
    assert_eq!(flow_drops + c.background_dropped, c.drops_buffer + c.drops_loss + c.drops_unroutable);
    // And each flow's is its own packets' (data and control), as the observer saw them.
    for f in &out.flows {
        let i = f.flow_id as usize;
        let (data, control) = (tally.flow_data_drops.get(i).copied().unwrap_or(0), tally.flow_control_drops.get(i).copied().unwrap_or(0));
        assert_eq!(f.drops, data + control, "flow {i}");
    }
    assert!(tally.flow_data_drops[0] > 0 && tally.flow_control_drops[0] > 0, "{:?} {:?}", tally.flow_data_drops, tally.flow_control_drops);
}

/// What a PFC test sees: background packets joining and leaving spine0's queue toward leaf1,
/// and the PAUSE/RESUME frames leaf1 sends spine0 for data queue 1.
#[derive(Default)]
struct PfcTally {
    ports: (usize, usize),
    enqueued: Vec<Time>,
    wired: Vec<Time>,
    /// (wire time, pause): PAUSE true, RESUME false.
    frames: Vec<(Time, bool)>,
}

#[derive(Clone, Default)]
struct PfcRecorder(Rc<RefCell<PfcTally>>);

impl Observer for PfcRecorder {
    fn enqueue(&mut self, now: Time, port: usize, _queue: usize, pkt: &Packet, _queued: u64) {
        let mut t = self.0.borrow_mut();
        if pkt.frame == Frame::Background && port == t.ports.0 {
            t.enqueued.push(now);
        }
    }
    fn wire(&mut self, now: Time, port: usize, pkt: &Packet) {
        let mut t = self.0.borrow_mut();
        match pkt.frame {
            Frame::Background if port == t.ports.0 => t.wired.push(now),
            Frame::Pause(1) if port == t.ports.1 => t.frames.push((now, true)),
            Frame::Resume(1) if port == t.ports.1 => t.frames.push((now, false)),
            _ => {}
        }
    }
}

#[test]
fn a_paused_egress_queue_holds_background_packets() {
    // Two endless line-rate flows into h2 (h0 -> h2 through spine0, h3 -> h2 beside it on
    // leaf1) make leaf1 PAUSE spine0's data queue 1; 2 Gbps of background shares that queue
    // at spine0 toward leaf1. No background packet leaves while the queue is paused (between
    // a PAUSE's arrival and the next RESUME's), and those that arrive then wait for RESUME.
    let flows = r#"{ src = "h0", dst = "h2", size = "1GB" }, { src = "h3", dst = "h2", size = "1GB" }"#;
    let text = testbed("1ms", flows, "[switch]\npfc = { enabled = true }", &fixed("spine0->leaf1", "2Gbps", "1500B", "0us", "1ms"))
        .replace("hosts_per_leaf = 1", "hosts_per_leaf = 2");
    let scenario = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let topo = retx::config::validate(&mut scenario.clone()).expect("valid");
    // Link i gives port 2i at its `a` end and 2i + 1 at its `b` end.
    let port = |from: &str, to: &str| {
        let (a, b) = (topo.find(from).unwrap(), topo.find(to).unwrap());
        let i = topo.links.iter().position(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).expect("a link");
        if topo.links[i].a == a { 2 * i } else { 2 * i + 1 }
    };
    let rec = PfcRecorder::default();
    rec.0.borrow_mut().ports = (port("spine0", "leaf1"), port("leaf1", "spine0"));
    let out = retx::config::build_with_observer(scenario, rec.clone()).expect("valid").run(&mut |_, _| true).expect("no abort");
    let t = rec.0.take();
    let c = &out.counters;
    assert!(c.pfc_pauses > 0 && t.frames.iter().any(|f| f.1), "no PAUSE: {c:?}");
    // 1 ms at 2 Gbps: 166.7 -> 167 ticks; PFC keeps the flows lossless and 12 MB holds the rest.
    assert_eq!((c.background_sent, c.background_dropped, c.drops_buffer), (167, 0, 0));
    assert_eq!(t.enqueued.len(), 167);
    // A frame takes effect at spine0 after its 64 B (51.2 ns at 10 Gbps) and the 1 us wire.
    let arrival = |w: Time| Time(w.0 + 51_200 + 1_000_000);
    let mut paused: Vec<(Time, Time)> = Vec::new();
    for &(w, pause) in &t.frames {
        match (pause, paused.last_mut()) {
            (true, _) => paused.push((arrival(w), Time(u64::MAX))),
            (false, Some(last)) => last.1 = arrival(w),
            (false, None) => panic!("RESUME before any PAUSE"),
        }
    }
    let (mut held, mut sent) = (0, 0u64);
    for (k, &w) in t.wired.iter().enumerate() {
        assert!(!paused.iter().any(|&(a, b)| a < w && w < b), "background packet {k} sent at {w} while paused: {paused:?}");
        if let Some(&(_, b)) = paused.iter().find(|&&(a, b)| a < t.enqueued[k] && t.enqueued[k] < b) {
            assert!(w >= b, "packet {k} enqueued while paused left at {w}, before RESUME at {b}");
            held += 1;
        }
        sent += 1;
    }
    // (In this run: 4 pauses, 10 packets held until a RESUME, 111 of 167 sent by the end.)
    assert!(held > 0, "no background packet arrived while the queue was paused ({} pauses)", paused.len());
    assert_eq!(sent, c.background_delivered);
}

#[test]
fn background_leaves_no_trace_when_absent() {
    // Counters and the drops column are 0 without background and without drops.
    let out = run(&testbed("1ms", REVERSE_FLOW, "", ""));
    let c = &out.counters;
    assert_eq!((c.background_sent, c.background_dropped, c.background_delivered, c.drops_buffer), (0, 0, 0, 0));
    assert_eq!(out.flows[0].drops, 0);
}

#[test]
fn background_errors_name_the_field() {
    let bg = |body: &str| testbed("1ms", REVERSE_FLOW, "", &format!("[[background]]\n{body}\n"));
    let cases = [
        ("link = \"leaf0->spine9\"\nprofile = \"fixed\"\nrate = \"1Gbps\"", "background[0].link: no node named \"spine9\""),
        ("link = \"leaf0-spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"", "background[0].link: \"leaf0-spine0\": write a port as \"A->B\""),
        ("link = \"h0->leaf0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"", "background[0].link: \"h0->leaf0\" is a host's port"),
        ("link = \"leaf0->leaf1\"\nprofile = \"fixed\"\nrate = \"1Gbps\"", "background[0].link: no link between \"leaf0\" and \"leaf1\""),
        ("link = \"leaf0->spine0\"\nprofile = \"steady\"\nrate = \"1Gbps\"", "background[0].profile: unknown variant `steady`, expected one of `fixed`, `random`, `linear`"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"", "background[0].rate: profile = \"fixed\" needs rate"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"11Gbps\"", "background[0].rate: 11Gbps is out of range (allowed above 0, up to the link's rate, 10Gbps)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"0Gbps\"", "background[0].rate: 0bps is out of range"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nlow = \"1Gbps\"", "background[0].low: is not used by profile = \"fixed\" (its fields: rate)"),
        ("link = \"leaf0->spine0\"\nprofile = \"random\"\nrate = \"1Gbps\"", "background[0].rate: is not used by profile = \"random\" (its fields: low, high, interval)"),
        ("link = \"leaf0->spine0\"\nprofile = \"random\"\nlow = \"1Gbps\"\nhigh = \"2Gbps\"", "background[0].interval: profile = \"random\" needs interval"),
        ("link = \"leaf0->spine0\"\nprofile = \"random\"\nlow = \"1Gbps\"\nhigh = \"2Gbps\"\ninterval = \"0us\"", "background[0].interval: must be greater than 0"),
        ("link = \"leaf0->spine0\"\nprofile = \"linear\"\nlow = \"3Gbps\"\nhigh = \"2Gbps\"", "background[0].high: 2Gbps must not be below low (3Gbps)"),
        ("link = \"leaf0->spine0\"\nprofile = \"linear\"\nhigh = \"2Gbps\"", "background[0].low: profile = \"linear\" needs low"),
        ("link = \"leaf0->spine0\"\nprofile = \"linear\"\nlow = \"1Gbps\"\nhigh = \"2Gbps\"\ninterval = \"5us\"", "background[0].interval: is not used by profile = \"linear\" (its fields: low, high)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nstart = \"50us\"\nuntil = \"50us\"", "background[0].until: 50us must be later than start (50us)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nstart = \"2ms\"", "background[0].start: 2ms must be before until, which defaults to the run's duration (1ms)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nsize = \"63B\"", "background[0].size: 63 B is out of range (allowed 64B..=9216B)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nsize = \"9217B\"", "background[0].size: 9217 B is out of range"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nclass = 2", "background[0].class: 2 is out of range (allowed 1..=1)"),
        ("link = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nburst = 3", "background[0].burst: unknown field `burst`, expected one of `link`, `profile`, `rate`"),
    ];
    for (body, want) in cases {
        let got = error(&bg(body));
        assert!(got.starts_with(want), "{body}\n  got:  {got}\n  want: {want}...");
        assert_eq!(got.lines().count(), 1, "{got}");
    }
    // The second source is named by its index.
    let two = format!("{}[[background]]\nlink = \"spine0->leaf1\"\nprofile = \"fixed\"\nrate = \"20Gbps\"\n", fixed("leaf0->spine0", "1Gbps", "1500B", "0us", "1ms"));
    assert!(error(&testbed("1ms", REVERSE_FLOW, "", &two)).starts_with("background[1].rate: 20Gbps is out of range"));
    // With one queue per port there is no data class to name.
    let one_queue = testbed("1ms", REVERSE_FLOW, "[switch]\nqueues = 1", "[[background]]\nlink = \"leaf0->spine0\"\nprofile = \"fixed\"\nrate = \"1Gbps\"\nclass = 1\n");
    assert!(error(&one_queue).starts_with("background[0].class: with switch.queues = 1"));
}

#[test]
fn a_resolved_scenario_keeps_its_background_and_runs_the_same() {
    let text = testbed("1ms", REVERSE_FLOW, "", "[[background]]\nlink = \"leaf0->spine0\"\nprofile = \"linear\"\nlow = \"1Gbps\"\nhigh = \"3Gbps\"\n");
    let resolved = retx::resolve_toml(&text).expect("valid");
    assert!(resolved.contains("[[background]]") && resolved.contains("size = \"1500B\"") && resolved.contains("start = \"0ps\""), "{resolved}");
    let (a, b) = (run(&text), run(&resolved));
    assert_eq!(a.counters, b.counters);
    // 1 -> 3 Gbps over the whole 1 ms: 2e6 bits, 166.7 packets.
    assert_eq!(a.counters.background_sent, 167);
}
