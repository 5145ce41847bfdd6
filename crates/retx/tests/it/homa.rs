//! Homa and Homa + Aeolus end to end (`recovery = "homa"`, `transport/homa.rs`): the Aeolus
//! testbed's 7-to-1 incast (8 hosts, 10 Gbps, one switch, 20-50 KB messages) into a small
//! buffer, where Homa loses its unscheduled bursts and waits for its 10 ms timeout while
//! Aeolus's selective dropping and loss recovery finish every message with no timeout; the
//! selective drop never touches a scheduled packet, grant, ACK or probe; every byte arrives
//! once, in order, under random loss (the shared property, `every_scheme.rs`); bad settings are
//! refused naming the field.

use crate::util::nets::{s, Flow, Net};
use retx::net::packet::Packet;
use retx::observe::{DropCause, Observer};
use retx::sim::units::Time;
use retx::transport::common::segment::{Ecn, Ext, SegKind};
use retx::Scenario;
use std::cell::RefCell;
use std::rc::Rc;

/// Rounds of a 7-to-1 incast, h1..h7 to h0 through one switch (10 Gbps, 3 us links: a base
/// RTT of about 14 us, as the testbed's), one message size per round, 40 ms apart.
fn incast(sizes_kb: &[u32], buffer: &str, extra: &str) -> String {
    let flows: Vec<Flow> = sizes_kb.iter().enumerate().flat_map(|(round, kb)| (1..=7).map(move |h| Flow::new(h, 0, &format!("{kb}KB"), round as u32 * 40_000))).collect();
    Net::single_switch(8, "10Gbps", "3us")
        .named("homa-incast", &format!("{}ms", 40 * sizes_kb.len() + 200))
        .nic("mtu", 1460)
        .switch("buffer", s(buffer))
        .switch("queues", 8)
        .switch("ecn", "{ enabled = false }")
        .transport("homa", "none")
        .with(extra)
        .with_flows(&flows)
}

const AEOLUS: &str = "[recovery.homa]\naeolus = true\n[[switch.wred]]\ncolour = 2\nthreshold = \"6000B\"";

/// Every packet a switch or link dropped, and why.
#[derive(Clone, Default)]
struct Drops(Rc<RefCell<Vec<(Packet, DropCause)>>>);

impl Observer for Drops {
    fn drop(&mut self, _now: Time, _port: usize, pkt: &Packet, cause: DropCause) {
        self.0.borrow_mut().push((*pkt, cause));
    }
}

fn mean_ms(out: &retx::RunOutput) -> f64 {
    let fcts: Vec<f64> = out.flows.iter().map(|f| (f.finish.unwrap() - f.start).as_secs_f64() * 1e3).collect();
    fcts.iter().sum::<f64>() / fcts.len() as f64
}

#[test]
fn homa_recovers_a_lost_incast_burst_by_timeouts_and_aeolus_without_any() {
    let sizes = [20, 30, 40, 50];
    // Homa: the unscheduled bursts overflow the buffer; lost packets wait for the 10 ms timer.
    let homa = retx::run_toml(&incast(&sizes, "200KB", "")).unwrap();
    assert!(homa.unfinished().is_none());
    assert_eq!(homa.counters.bad_deliveries, 0);
    assert!(homa.counters.drops_buffer > 0);
    let timeouts: u64 = homa.flows.iter().map(|f| f.timeouts).sum();
    assert!(timeouts > 0);
    // With Aeolus, the same switch drops only red unscheduled packets above 6,000 B: the probe
    // and the SACKs find every loss, and grants resend them.
    let drops = Drops::default();
    let sim = retx::config::build_with_observer(Scenario::from_toml(&incast(&sizes, "200KB", AEOLUS)).unwrap(), drops.clone()).unwrap();
    let aeolus = sim.run(&mut |_, _| true).unwrap();
    assert!(aeolus.unfinished().is_none());
    assert_eq!(aeolus.counters.bad_deliveries, 0);
    assert_eq!(aeolus.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0);
    assert!(aeolus.counters.drops_buffer > 0, "the selective drop worked");
    for f in homa.flows.iter().chain(&aeolus.flows) {
        assert_eq!(f.delivered_bytes, f.size_bytes);
    }
    let (h, a) = (mean_ms(&homa), mean_ms(&aeolus));
    eprintln!("mean MCT: Homa {h:.3} ms, Homa + Aeolus {a:.3} ms; timeouts {timeouts}");
    assert!(h > 5.0, "Homa waits for its timeouts: {h} ms");
    assert!(a < 0.5 && a * 20.0 < h, "Aeolus: {a} ms against {h} ms");
    // Only red (unscheduled, first transmission) data was dropped.
    let drops = drops.0.borrow();
    assert_eq!(drops.len() as u64, aeolus.counters.drops_buffer);
    for (pkt, cause) in drops.iter() {
        let s = &pkt.seg;
        assert_eq!(*cause, DropCause::Buffer);
        assert!(s.kind == SegKind::Data && s.colour == 2 && s.payload > 0 && !s.retransmit, "{s:?}");
        assert!(!matches!(s.ext, Ext::Homa(_)), "a probe: {s:?}");
    }
}

/// Aeolus on a switch with RED/ECN but no WRED (§4.1): hosts send unscheduled packets
/// Not-ECT and the rest ECT(0), both RED thresholds sit at the selective-drop threshold, and
/// RED drops the Not-ECT packets above it. The run is the WRED rule's, packet for packet;
/// with the colour left in DSCP (no packet Not-ECT) the same switch drops nothing selectively.
#[test]
fn selective_drop_by_ecn_codepoint_matches_the_wred_colour_rule() {
    let sizes = [20, 50];
    let red_ecn = |codepoint: &str| {
        incast(&sizes, "200KB", "[recovery.homa]\naeolus = true")
            .replace("ecn = { enabled = false }", r#"ecn = { enabled = true, kmin = "6000B", kmax = "6000B", pmax = 1.0, drop_not_ect = true }"#)
            .replace("mtu = 1460", &format!("mtu = 1460\ncolour_codepoint = \"{codepoint}\""))
    };
    let wred = retx::run_toml(&incast(&sizes, "200KB", AEOLUS)).unwrap();
    let drops = Drops::default();
    let sim = retx::config::build_with_observer(Scenario::from_toml(&red_ecn("ecn")).unwrap(), drops.clone()).unwrap();
    let ecn = sim.run(&mut |_, _| true).unwrap();
    assert!(ecn.unfinished().is_none());
    assert_eq!(ecn.counters.bad_deliveries, 0);
    let fcts = |o: &retx::RunOutput| o.flows.iter().map(|f| f.finish.unwrap() - f.start).collect::<Vec<_>>();
    assert_eq!(fcts(&ecn), fcts(&wred));
    assert_eq!(ecn.counters.drops_buffer, wred.counters.drops_buffer);
    assert!(ecn.counters.drops_buffer > 0);
    for (pkt, _) in drops.0.borrow().iter() {
        let s = &pkt.seg;
        assert!(s.kind == SegKind::Data && s.ecn == Ecn::NotEct && s.colour == 0 && s.payload > 0 && !s.retransmit, "{s:?}");
    }
    assert!(ecn.counters.ecn_marks > 0, "ECN-capable (scheduled) packets are marked, not dropped");
    // The colour in DSCP: every data packet ECN-capable, so RED marks and drops nothing; only
    // the 200 KB buffer overflows, far less often than the 6,000 B threshold drops.
    let overflow = Drops::default();
    let sim = retx::config::build_with_observer(Scenario::from_toml(&red_ecn("dscp")).unwrap(), overflow.clone()).unwrap();
    let dscp = sim.run(&mut |_, _| true).unwrap();
    assert!(dscp.unfinished().is_none());
    assert!(dscp.counters.drops_buffer < ecn.counters.drops_buffer, "{} vs {}", dscp.counters.drops_buffer, ecn.counters.drops_buffer);
    assert!(overflow.0.borrow().iter().all(|(pkt, _)| pkt.seg.ecn == Ecn::Ect));
}

#[test]
fn selective_drop_never_touches_a_scheduled_packet_grant_ack_or_probe() {
    // A smaller threshold and a roomy buffer: every drop is the WRED rule's.
    for threshold in ["1500B", "3000B", "12000B"] {
        let extra = AEOLUS.replace("6000B", threshold);
        let drops = Drops::default();
        let sim = retx::config::build_with_observer(Scenario::from_toml(&incast(&[30, 50], "1MB", &extra)).unwrap(), drops.clone()).unwrap();
        let out = sim.run(&mut |_, _| true).unwrap();
        assert!(out.unfinished().is_none());
        assert_eq!(out.counters.bad_deliveries, 0);
        assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0, "{threshold}");
        let drops = drops.0.borrow();
        assert!(!drops.is_empty(), "{threshold}");
        for (pkt, _) in drops.iter() {
            let s = &pkt.seg;
            assert!(s.kind == SegKind::Data && s.colour == 2 && s.payload > 0 && !s.retransmit, "{threshold}: {s:?}");
        }
    }
}

#[test]
fn bad_homa_settings_are_refused_naming_the_field() {
    for (extra, field) in [
        ("[recovery.homa]\nrtt_bytes = \"0B\"", "recovery.homa.rtt_bytes"),
        ("[recovery.homa]\nunscheduled_priorities = 8", "recovery.homa.unscheduled_priorities"),
        ("[recovery.homa]\nscheduled_priorities = 3", "recovery.homa.scheduled_priorities"),
        ("[recovery.homa]\ncutoffs = [\"2KB\", \"1KB\", \"3KB\", \"4KB\", \"5KB\"]", "recovery.homa.cutoffs"),
        ("[recovery.homa]\ncutoffs = [\"2KB\"]", "recovery.homa.cutoffs"),
        ("[recovery.homa]\novercommitment = 0", "recovery.homa.overcommitment"),
        ("[recovery.homa]\nrto = \"0s\"", "recovery.homa.rto"),
        ("[recovery.homa]\naeolus_colour = 3", "recovery.homa.aeolus_colour"),
        ("[recovery.homa]\ncredits = 3", "credits"),
        // A flow list has no size table to take cutoffs from.
        ("[recovery.homa]\nworkload_cutoffs = true", "recovery.homa.workload_cutoffs"),
    ] {
        let Err(e) = retx::run_toml(&incast(&[20], "60KB", extra)) else { panic!("{extra}: accepted") };
        let e = e.to_string();
        assert!(e.contains(field) && !e.contains('\n'), "{extra}: {e}");
    }
}

/// Cutoffs from the workload: a Poisson run of Google's all-RPC sizes (Homa W3) takes them from
/// its table, each unscheduled level an equal share of the unscheduled bytes (with the
/// default rtt_bytes of 20,000 B: 683, 4,096, 8,397, 14,292 and 38,000 B, against the
/// testbed's fixed 2-10 KB), and the run delivers everything.
#[test]
fn cutoffs_from_the_workload_split_its_unscheduled_bytes_and_the_run_delivers() {
    let text = incast(&[20], "1MB", "[recovery.homa]\nworkload_cutoffs = true");
    let text = format!(
        "{}[workload]\nkind = \"poisson\"\ncdf = \"homa_w3\"\ninterpolation = \"step\"\nload = 0.5\npairing = \"random\"\nflows = 2000\n",
        &text[..text.find("[workload]").unwrap()]
    );
    let mut scenario = Scenario::from_toml(&text).unwrap();
    let topo = retx::config::validate(&mut scenario).unwrap();
    assert!(retx::config::warnings(&scenario, &topo).is_empty());
    // Cutoffs given beside workload_cutoffs do nothing: warned, naming the field.
    let given = text.replace("workload_cutoffs = true", "workload_cutoffs = true\ncutoffs = [\"1KB\", \"2KB\", \"3KB\", \"4KB\", \"5KB\"]");
    let mut with_cutoffs = Scenario::from_toml(&given).unwrap();
    let topo = retx::config::validate(&mut with_cutoffs).unwrap();
    let warned = retx::config::warnings(&with_cutoffs, &topo);
    assert!(warned.len() == 1 && warned[0].starts_with("recovery.homa.cutoffs: ignored"), "{warned:?}\n{given}");
    let retx::transport::RecoveryParams::Homa(p) = retx::config::template::transport(&scenario).recovery else { panic!("homa") };
    println!("cutoffs from homa_w3: {:?}", p.cutoffs);
    assert_eq!(p.cutoffs.len(), 5);
    assert!(p.cutoffs.windows(2).all(|w| w[0] < w[1]));
    assert_ne!(p.cutoffs, retx::transport::proactive::homa::HomaParams::default().cutoffs);
    // W3 is mostly tiny RPCs: its top level ends well below the testbed's first cutoff.
    assert!(p.cutoffs[0].0 < 1_000, "{:?}", p.cutoffs);
    let out = retx::run_toml(&text).unwrap();
    assert!(out.unfinished().is_none());
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// Homa on a 100 Gbps fat-tree (k = 4, 1 us links): its BDP is about 8 times the testbed's
/// 20,000 B, so the default warns, naming the field, and "bdp" takes the network's own.
fn fast_fabric(extra: &str) -> String {
    Net::fat_tree(4, "100Gbps")
        .named("homa-100g", "5ms")
        .nic("mtu", 1460)
        .switch("queues", 8)
        .transport("homa", "none")
        .with(extra)
        .with_flows(&[Flow::new(0, 15, "2MB", 0), Flow::new(4, 15, "2MB", 0)])
}

#[test]
fn homa_warns_where_rtt_bytes_or_the_queues_do_not_fit_the_network_and_takes_bdp_as_asked() {
    let default = retx::run_toml(&fast_fabric("")).unwrap();
    assert_eq!(default.warnings.len(), 1, "{:?}", default.warnings);
    assert!(default.warnings[0].starts_with("recovery.homa.rtt_bytes: 20000 B is 0."), "{}", default.warnings[0]);
    let bdp = retx::run_toml(&fast_fabric("[recovery.homa]\nrtt_bytes = \"bdp\"")).unwrap();
    assert!(bdp.warnings.is_empty(), "{:?}", bdp.warnings);
    assert!(bdp.unfinished().is_none() && bdp.counters.bad_deliveries == 0);
    // A BDP ahead, the two messages finish sooner than 20,000 B ahead lets them.
    let last = |o: &retx::RunOutput| o.flows.iter().filter_map(|f| f.finish).max().unwrap();
    assert!(last(&bdp) < last(&default), "{:?} against {:?}", last(&bdp), last(&default));
    // Two switch queues for 6 unscheduled levels: warned; with one queue for all data, not.
    let two = retx::run_toml(&fast_fabric("[recovery.homa]\nrtt_bytes = \"bdp\"").replace("queues = 8", "queues = 2")).unwrap();
    assert!(two.warnings.iter().any(|w| w.starts_with("recovery.homa.unscheduled_priorities:") && w.contains("switch.queues >= 8")), "{:?}", two.warnings);
    let one = fast_fabric("[recovery.homa]\nrtt_bytes = \"bdp\"\nsingle_queue = true").replace("queues = 8", "queues = 2");
    assert!(retx::run_toml(&one).unwrap().warnings.is_empty());
}
