//! INT plumbing end to end: switches stamp one record per hop on data packets, the receiver's
//! first response echoes them, and they reach the sender's congestion control with the ACK.
//! Telemetry changes nothing else but the bytes its header takes on the wire: with a 0-byte
//! header every flow record is bit-identical; with ns-3's 42 B every packet grows by exactly that.

use retx::RunOutput;

fn run(topology: &str, flow: &str, int: &str, extra: &str) -> RunOutput {
    let text = format!(
        r#"
name = "int"
duration = "10ms"
[topology]
{topology}
[switch]
int = {int}
[transport]
recovery = "gbn"
cc = "dcqcn"
{extra}
[workload]
kind = "flow-list"
flows = [{flow}]
"#
    );
    retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const ONE_SWITCH: &str = "kind = \"single-switch\"\nhosts = 2";
const LEAF_SPINE: &str = "kind = \"leaf-spine\"\nspines = 2\nleaves = 2\nhosts_per_leaf = 2";
/// 100 full packets of the default 1024 B payload.
const FLOW: &str = "{ src = \"h0\", dst = \"h3\", size = \"102400B\" }";

/// One ACK per data packet, each echoing one record per switch crossed: exactly packets x hops.
#[test]
fn every_ack_echoes_one_record_per_switch() {
    let out = run(ONE_SWITCH, &FLOW.replace("h3", "h1"), "true", "");
    assert_eq!(out.counters.int_hops_echoed, 100, "{:?}", out.counters);
    // host - leaf - spine - leaf - host: three switches.
    let out = run(LEAF_SPINE, FLOW, "true", "");
    assert_eq!(out.counters.int_hops_echoed, 300, "{:?}", out.counters);
}

/// With ACK coalescing only the packets that trigger an ACK have their records echoed.
#[test]
fn coalesced_acks_echo_the_records_of_the_packet_that_triggered_them() {
    let out = run(ONE_SWITCH, &FLOW.replace("h3", "h1"), "true", "[nic]\nack_interval = 4");
    assert_eq!(out.counters.int_hops_echoed, 25, "{:?}", out.counters);
}

/// Off, nothing is stamped; on with a header of 0 bytes, the run is the same bit for bit.
#[test]
fn telemetry_changes_no_result() {
    let lossy = "[[loss]]\nat = \"everywhere\"\nrate = 0.02\ncontrol = true";
    let on = run(LEAF_SPINE, FLOW, "true\nint_bytes = 0", lossy);
    let off = run(LEAF_SPINE, FLOW, "false", lossy);
    assert_eq!(off.counters.int_hops_echoed, 0);
    assert!(on.counters.int_hops_echoed > 0);
    assert!(on.counters.drops_loss > 0, "the scenario must lose packets (and their records)");
    assert_eq!(on.flows, off.flows);
    assert_eq!(on.samples, off.samples);
    let (mut a, mut b) = (on.counters.clone(), off.counters.clone());
    a.int_hops_echoed = 0;
    b.int_hops_echoed = 0;
    assert_eq!(a, b);
}

/// INT's header is on the wire: every data packet and every response carries ns-3's 42 B.
#[test]
fn the_int_header_takes_42_bytes_on_every_packet() {
    let one = FLOW.replace("h3", "h1");
    let topo = "kind = \"single-switch\"\nhosts = 2\nhost_link = \"100Gbps\"";
    let on = run(topo, &one, "true", "");
    let off = run(topo, &one, "false", "");
    // 100 data packets (48 B of headers + 1024 B payload) and 100 ACKs (60 B), over two hops;
    // with INT, 90 B of headers and 88 B ACKs (14 + 20 + 12 + 42).
    let wire = |o: &RunOutput| o.counters.packet_hops;
    assert_eq!(wire(&on), wire(&off));
    let (a, b) = (on.flows[0].finish.unwrap(), off.flows[0].finish.unwrap());
    // The sender is paced at line rate on the larger packets: the flow takes longer by about
    // 100 x 42 B at 100 Gbps, within one packet time.
    let extra_ps = 100.0 * 42.0 * 8.0 / 100e9 * 1e12;
    let d = (a.0 - b.0) as f64;
    assert!((d - extra_ps).abs() < 1100.0 * 8.0 / 100e9 * 1e12, "{d} vs {extra_ps}");
}
