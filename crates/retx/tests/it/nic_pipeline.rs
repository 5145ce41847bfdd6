//! The NIC's receive pipeline: packets are handled one at a time at its per-packet time (plus
//! what a scheme charges); faster arrivals wait in order inside the NIC.

use retx::RunOutput;

fn run(rx_latency: &str, duration: &str) -> RunOutput {
    let text = format!(
        r#"
name = "pipeline"
duration = "{duration}"
[topology]
kind = "single-switch"
hosts = 2
[nic]
rx_latency = "{rx_latency}"
[transport]
recovery = "gbn"
cc = "none"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "5000KB" }}]
"#
    );
    retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A pipeline slower than the line makes the receiver the bottleneck: one packet per 500 ns.
#[test]
fn a_slow_pipeline_paces_the_flow() {
    let out = run("500ns", "100ms");
    let f = &out.flows[0];
    let npkts = 5_000_000u64.div_ceil(1024);
    let fct = f.fct().expect("the flow completes").0;
    // npkts x 500 ns of handling, plus the first packet's trip and the last ACK's way back.
    assert!(fct >= npkts * 500_000 && fct <= npkts * 500_000 + 20_000_000, "fct {fct} ps for {npkts} packets");
    assert_eq!(f.delivered_bytes, 5_000_000);
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// A pipeline faster than packets arrive (40 Gbps: one per 214 ns) never delays anything.
#[test]
fn a_pipeline_faster_than_the_line_changes_nothing() {
    let fast = run("100ns", "100ms");
    let none = run("0ns", "100ms");
    assert_eq!(fast.flows, none.flows);
    assert_eq!(fast.counters.packet_hops, none.counters.packet_hops);
}

/// Packets waiting in the NIC at the end still count: created = consumed + dropped + in flight.
#[test]
fn waiting_packets_are_conserved() {
    let out = run("2us", "200us");
    let c = &out.counters;
    assert!(out.packets_in_flight > 50, "{}", out.packets_in_flight);
    assert_eq!(c.packets_created, c.packets_consumed + c.drops_loss + c.drops_buffer + c.drops_unroutable + out.packets_in_flight);
}
