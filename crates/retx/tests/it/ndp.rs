//! NDP end to end (`recovery = "ndp"`, `transport/ndp.rs`): with trimming switches every
//! trimmed packet is NACKed and resent once on a PULL, within about a round trip; a lone flow
//! runs at the pacer's PULL rate. That every byte arrives exactly once, in order, whatever the
//! trimming, loss and spraying, is the shared property (`every_scheme.rs`).

use crate::util::nets::{self, s, Net};
use retx::net::packet::Packet;
use retx::observe::Observer;
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use retx::Scenario;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// `n` senders h1..hn to h0 through one switch whose 100 Gbps ports trim what its buffer
/// refuses; 4,000 B payloads, 1 us links.
fn incast(n: usize, size: &str, buffer: &str, extra: &str) -> String {
    Net::single_switch(n as u32 + 1, "100Gbps", "1us")
        .named("ndp-incast", "100ms")
        .nic("mtu", 4000)
        .switch("buffer", s(buffer))
        .switch("trim", "{ queue = 0, header = \"64B\" }")
        .transport("ndp", "none")
        .with(extra)
        .with_flows(&nets::incast(n as u32, size))
}

/// At the receiving hosts: when each (flow, PSN) arrived trimmed, and when its payload did.
#[derive(Clone, Default)]
struct Arrivals(Rc<RefCell<(HashMap<(u32, u32), Time>, Vec<(Time, Time)>)>>);

impl Observer for Arrivals {
    fn receive(&mut self, now: Time, _host: usize, pkt: &Packet) {
        if pkt.seg.kind != SegKind::Data {
            return;
        }
        let key = (pkt.flow, pkt.seg.psn.value());
        let mut a = self.0.borrow_mut();
        if pkt.seg.trimmed {
            a.0.insert(key, now);
        } else if let Some(t) = a.0.remove(&key) {
            a.1.push((t, now));
        }
    }
}

/// The same incast on a switch that does not trim: its buffer drops; with `aeolus`, red
/// initial windows dropped above 6,000 B of a queue (Aeolus's selective drop).
fn incast_drop_tail(n: usize, size: &str, aeolus: bool) -> String {
    Net::single_switch(n as u32 + 1, "100Gbps", "1us")
        .named("ndp-aeolus-incast", "500ms")
        .nic("mtu", 4000)
        .switch("buffer", s("60KB"))
        .transport("ndp", "none")
        .with(&format!("[recovery.ndp]\ninitial_window = 8\naeolus = {aeolus}\n[[switch.wred]]\ncolour = 2\nthreshold = \"6000B\""))
        .with_flows(&nets::incast(n as u32, size))
}

#[test]
fn aeolus_lets_ndp_recover_a_drop_tail_incast_without_timeouts() {
    // Without trimming NDP hears nothing of a dropped packet: its 50 ms timeout recovers it.
    let plain = retx::run_toml(&incast_drop_tail(8, "200KB", false)).unwrap();
    assert!(plain.unfinished().is_none());
    assert!(plain.counters.drops_buffer > 0, "eight windows of 32 KB overflow 60 KB");
    assert!(plain.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0);
    // With Aeolus only red window packets are dropped, each found by a SACK or the probe and
    // resent on a PULL: no timeout, the incast over in well under one.
    let aeolus = retx::run_toml(&incast_drop_tail(8, "200KB", true)).unwrap();
    let c = &aeolus.counters;
    assert!(aeolus.unfinished().is_none());
    assert_eq!(c.bad_deliveries, 0);
    assert_eq!(aeolus.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 8 * 200_000);
    assert!(c.drops_by_kind.unscheduled_data > 0, "the windows meet the selective drop");
    assert_eq!(c.drops_by_kind.scheduled_data, 0, "pulled data is never dropped");
    assert_eq!(aeolus.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0);
    let found: u64 = aeolus.flows.iter().map(|f| f.notifications.aeolus_sack_losses + f.notifications.aeolus_probe_losses).sum();
    assert_eq!(found, c.drops_by_kind.unscheduled_data, "every dropped window packet found once");
    let last = |o: &retx::RunOutput| o.flows.iter().filter_map(|f| f.finish).max().unwrap();
    assert!(last(&aeolus) < Time::from_ms(1), "{:?}", last(&aeolus));
    assert!(last(&plain) > Time::from_ms(30), "{:?}", last(&plain));
}

#[test]
fn every_trimmed_packet_is_nacked_and_resent_once_on_a_pull_within_a_round_trip() {
    let toml = incast(4, "400KB", "30KB", "[recovery.ndp]\ninitial_window = 4");
    let seen = Arrivals::default();
    let sim = retx::config::build_with_observer(Scenario::from_toml(&toml).unwrap(), seen.clone()).unwrap();
    let out = sim.run(&mut |_, _| true).unwrap();
    let c = &out.counters;
    assert!(out.unfinished().is_none());
    assert_eq!(c.bad_deliveries, 0);
    assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 4 * 400_000);
    assert!(c.packets_trimmed > 0, "the initial windows overflow the buffer");
    assert_eq!(c.drops_buffer, 0, "headers fit: nothing is dropped");
    // One NACK and one resend per trimmed packet, no timeout.
    assert_eq!(out.flows.iter().map(|f| f.notifications.naks).sum::<u64>(), c.packets_trimmed);
    assert_eq!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>(), c.packets_trimmed * 4_000);
    assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0);
    // From the header's arrival to the payload's: the NACK's and the data's trips (two 1 us
    // links each way, a 4,064 B packet's 0.33 us per hop) plus waiting for a PULL behind the
    // other flows' (four flows, one PULL each per 0.33 us): well inside 10 us.
    let (waiting, recovered) = seen.0.borrow().clone();
    assert!(waiting.is_empty(), "every trimmed packet arrived whole later");
    assert_eq!(recovered.len() as u64, c.packets_trimmed);
    let worst = recovered.iter().map(|&(t, r)| r - t).max().unwrap();
    assert!(worst >= Time::from_us(4) && worst < Time::from_us(10), "{worst:?}");
}

/// Eight 15-packet initial windows into one port whose data queue holds 4 packets and header
/// queue 3 headers: most headers find no room. Dropped, they wait for NDP's timer (htsim's
/// main_ndp floor, 50 ms x [0.75, 1.25]); returned to their senders (htsim's return-to-sender),
/// they are resent on the next PULLs and nothing waits for a timer.
#[test]
fn returned_headers_are_resent_on_pulls_where_dropped_ones_wait_for_the_timeout() {
    let scenario = |extra: &str| {
        let limits = format!(r#"trim = {{ queue = 0, header = "64B", data_queue = "16256B", header_queue = "192B"{extra} }}"#);
        incast(8, "200KB", "10MB", "").replace(r#"trim = { queue = 0, header = "64B" }"#, &limits)
    };
    let dropped = retx::run_toml(&scenario("")).unwrap();
    let returned = retx::run_toml(&scenario(", return_to_sender = true")).unwrap();
    let slowest = |o: &retx::RunOutput| o.flows.iter().map(|f| f.fct().unwrap()).max().unwrap();
    for out in [&dropped, &returned] {
        assert!(out.unfinished().is_none());
        assert_eq!(out.counters.bad_deliveries, 0);
        assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 8 * 200_000);
        assert!(out.counters.packets_trimmed > 0);
    }
    let (d, r) = (&dropped.counters, &returned.counters);
    println!("dropped: {} drops, slowest {:?}; returned: {} returned, {} drops, slowest {:?}", d.drops_buffer, slowest(&dropped), r.packets_returned, r.drops_buffer, slowest(&returned));
    assert!(d.drops_buffer > 0 && d.packets_returned == 0);
    assert!(dropped.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0);
    assert!(slowest(&dropped) >= Time::from_us(37_500), "{:?}", slowest(&dropped));
    assert!(r.packets_returned > 0 && r.drops_buffer == 0, "{r:?}");
    assert_eq!(returned.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0);
    assert!(slowest(&returned) < Time::from_ms(1), "{:?}", slowest(&returned));
}

#[test]
fn a_lone_flow_runs_at_the_pull_rate() {
    // After its 15-packet window, one 4,064 B packet per PULL at 0.99 of 100 Gbps: the payload
    // goes at 0.99 x 4000/4064 x 100 Gbps = 97.44 Gbps.
    let out = retx::run_toml(&incast(1, "40MB", "1MB", "")).unwrap();
    let f = &out.flows[0];
    assert_eq!(out.counters.packets_trimmed, 0);
    let gbps = f.goodput_bps / 1e9;
    assert!((gbps - 97.44).abs() < 0.3, "{gbps} Gbps");
    // Without pacing (pull_rate 1) the flow gets the whole link but for the headers.
    let out = retx::run_toml(&incast(1, "40MB", "1MB", "[recovery.ndp]\npull_rate = 1.0")).unwrap();
    let gbps = out.flows[0].goodput_bps / 1e9;
    assert!((gbps - 98.43).abs() < 0.3, "{gbps} Gbps");
}

#[test]
fn bad_ndp_settings_are_refused_naming_the_field() {
    for (extra, field) in [
        ("[recovery.ndp]\ninitial_window = 0", "recovery.ndp.initial_window"),
        ("[recovery.ndp]\npull_rate = 1.5", "recovery.ndp.pull_rate"),
        ("[recovery.ndp]\nrto_min = \"0s\"", "recovery.ndp.rto_min"),
        ("[recovery.ndp]\ncwnd = 3", "cwnd"),
        ("[recovery.ndp]\naeolus = true\naeolus_colour = 3", "recovery.ndp.aeolus_colour"),
    ] {
        let Err(e) = retx::run_toml(&incast(2, "10KB", "30KB", extra)) else { panic!("{extra}: accepted") };
        let e = e.to_string();
        assert!(e.contains(field) && !e.contains('\n'), "{extra}: {e}");
    }
}

#[test]
fn whole_packets_round_every_flow_up_to_full_packets_as_htsim_does() {
    // 5,000 B at 4,000 B a packet: htsim sends two full packets (acked_bytes 8,000).
    for (whole, want) in [(false, 5_000), (true, 8_000)] {
        let toml = incast(2, "5000B", "30KB", "").replace("mtu = 4000", &format!("mtu = 4000\nwhole_packets = {whole}"));
        let out = retx::run_toml(&toml).unwrap();
        for f in &out.flows {
            assert_eq!((f.size_bytes, f.delivered_bytes), (want, want), "whole_packets = {whole}");
        }
    }
}

#[test]
fn an_initial_window_far_from_the_bdp_is_warned_and_bdp_takes_the_networks() {
    // 10 Gbps, 1 us links, one switch, 4,000 B payloads: a BDP of about 3 packets, where 15 is
    // several times it.
    let flows = nets::incast(2, "200KB");
    let net = |extra: &str| {
        Net::single_switch(3, "10Gbps", "1us").named("ndp-bdp", "10ms").nic("mtu", 4000).switch("buffer", s("1MB"))
            .switch("trim", "{ queue = 0, header = \"64B\" }").transport("ndp", "none").with(extra).with_flows(&flows)
    };
    let default = retx::run_toml(&net("")).unwrap();
    assert!(default.warnings.iter().any(|w| w.starts_with("recovery.ndp.initial_window: 15 packets is ")), "{:?}", default.warnings);
    let bdp = retx::run_toml(&net("[recovery.ndp]\ninitial_window = \"bdp\"")).unwrap();
    assert!(bdp.warnings.is_empty(), "{:?}", bdp.warnings);
    assert!(bdp.unfinished().is_none() && bdp.counters.bad_deliveries == 0);
    // The window is the BDP: fewer packets in the first RTT than 15, so fewer trimmed.
    assert!(bdp.counters.packets_trimmed < default.counters.packets_trimmed || default.counters.packets_trimmed == 0);
}
