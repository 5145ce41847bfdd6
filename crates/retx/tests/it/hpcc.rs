//! HPCC end to end: switches stamp INT, receivers echo it, senders pace and window by it. In
//! an incast HPCC holds the bottleneck queue near empty where DCQCN (the ns-3 model's) builds
//! one that PFC has to hold back; every byte still arrives once and in order.

use retx::net::packet::Packet;
use retx::observe::Observer;
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use std::cell::RefCell;
use std::rc::Rc;

/// The largest data queue any switch port held, and when the last byte arrived.
#[derive(Default)]
struct Peak {
    max_queued: u64,
    /// The largest data queue from 20 us (five base RTTs) on.
    max_queued_late: u64,
    last_delivery: Time,
}

#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Peak>>);

impl Observer for Recorder {
    fn enqueue(&mut self, now: Time, _port: usize, queue: usize, pkt: &Packet, queued: u64) {
        if queue > 0 && pkt.seg.kind == SegKind::Data {
            let mut p = self.0.borrow_mut();
            p.max_queued = p.max_queued.max(queued);
            if now >= Time::from_us(20) {
                p.max_queued_late = p.max_queued_late.max(queued);
            }
        }
    }
    fn deliver(&mut self, now: Time, _host: usize, _flow: u32, _bytes: u64) {
        let mut p = self.0.borrow_mut();
        p.last_delivery = p.last_delivery.max(now);
    }
}

/// An 8-to-1 incast of 1 MB flows through one 100 Gbps switch, 1 us links, dynamic PFC, the
/// ns-3 model's ECN profile; `cc` with its section body `extra`.
fn incast(cc: &str, extra: &str) -> (retx::world::RunOutput, Peak) {
    let text = format!(
        r#"
name = "hpcc-incast"
seed = 1
duration = "20ms"
[topology]
kind = "single-switch"
hosts = 9
host_link = "100Gbps"
link_delay = "1us"
[switch]
buffer = "32MiB"
pfc = {{ enabled = true, mode = "dynamic" }}
ecn = {{ kmin = "400KB", kmax = "1600KB", pmax = 0.2 }}
[transport]
recovery = "gbn"
cc = "{cc}"
{extra}
[nic]
mtu = 1000
[workload]
kind = "incast"
receiver = "h0"
fan_in = 8
size = "1MB"
rounds = 1
interval = "1ms"
"#
    );
    let rec = Recorder::default();
    let scenario = retx::config::Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let sim = retx::config::build::build_with_observer(scenario, rec.clone()).unwrap_or_else(|e| panic!("{e}"));
    let out = sim.run(&mut |_, _| true).expect("not aborted");
    let peak = std::mem::take(&mut *rec.0.borrow_mut());
    (out, peak)
}

#[test]
fn hpcc_holds_an_incast_queue_far_below_dcqcn_and_keeps_the_link_busy() {
    let (hpcc, hp) = incast("hpcc", "");
    let (dcqcn, dc) = incast("dcqcn", "[cc.dcqcn]\npreset = \"ns3\"");
    for (name, out) in [("hpcc", &hpcc), ("dcqcn", &dcqcn)] {
        assert_eq!(out.counters.bad_deliveries, 0, "{name}");
        assert!(out.flows.iter().all(|f| f.delivered_bytes == 1_000_000 && f.finish.is_some()), "{name}");
        assert_eq!(out.counters.drops_buffer, 0, "{name}: PFC makes the fabric lossless");
    }
    // Every HPCC data packet crossed one switch: one INT record echoed per ACK.
    assert!(hpcc.counters.int_hops_echoed >= 8 * 1000, "{:?}", hpcc.counters);
    assert_eq!(dcqcn.counters.int_hops_echoed, 0);
    // In the first RTT every sender sends its window (one BDP: 4.16 us x 100 Gbps = 52 KB)
    // at line rate before any feedback, so up to 8 windows meet at the switch (401 KB
    // measured). HPCC then drains that: from five base RTTs on the queue stays below about
    // two windows (111 KB measured). The ns-3 DCQCN reacts only to marks above 400 KB and
    // builds a queue of megabytes (2.08 MB measured).
    assert!(hp.max_queued <= 8 * 52_000 + 16_000, "HPCC peak queue {} B", hp.max_queued);
    assert!(hp.max_queued_late < 150_000, "HPCC queue after 20 us {} B", hp.max_queued_late);
    assert!(dc.max_queued > 4 * hp.max_queued, "DCQCN {} vs HPCC {}", dc.max_queued, hp.max_queued);
    assert_eq!(hpcc.counters.pfc_pauses, 0);
    // The link stays busy at about eta: 8 MB of payload in 1090 B frames (1000 payload + 48
    // headers + 42 INT) at 95 % of 100 Gbps is 734 us (746 us measured: the first RTTs).
    let busy = hp.last_delivery.as_secs_f64() - hpcc.flows.iter().map(|f| f.start.as_secs_f64()).fold(f64::MAX, f64::min);
    let ideal = 8.0 * 1000.0 * 1090.0 * 8.0 / (0.95 * 100e9);
    assert!(busy < ideal * 1.05 && busy > ideal * 0.95, "incast took {busy:.6} s, {ideal:.6} s at eta");
}

#[test]
fn hpcc_fields_are_validated_by_name() {
    for (body, field) in [("eta = 1.5", "cc.hpcc.eta"), ("min_rate = \"0Gbps\"", "cc.hpcc.min_rate"), ("window = \"huge\"", "cc.hpcc")] {
        let text = format!("name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\nhosts = 2\n[transport]\ncc = \"hpcc\"\n[cc.hpcc]\n{body}\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"10KB\" }}]\n");
        let Err(e) = retx::run_toml(&text) else { panic!("{body} must be refused") };
        let e = e.to_string();
        assert!(e.starts_with(field) && !e.contains('\n'), "{body}: {e}");
    }
}
