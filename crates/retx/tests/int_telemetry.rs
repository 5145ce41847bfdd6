//! INT plumbing end to end: switches stamp one record per hop on data packets, the receiver's
//! first response echoes them, and they reach the sender's congestion control with the ACK.
//! Telemetry changes nothing else: with it on, every flow record is bit-identical.

use retx::RunOutput;

fn run(topology: &str, flow: &str, int: bool, extra: &str) -> RunOutput {
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
    let out = run(ONE_SWITCH, &FLOW.replace("h3", "h1"), true, "");
    assert_eq!(out.counters.int_hops_echoed, 100, "{:?}", out.counters);
    // host - leaf - spine - leaf - host: three switches.
    let out = run(LEAF_SPINE, FLOW, true, "");
    assert_eq!(out.counters.int_hops_echoed, 300, "{:?}", out.counters);
}

/// With ACK coalescing only the packets that trigger an ACK have their records echoed.
#[test]
fn coalesced_acks_echo_the_records_of_the_packet_that_triggered_them() {
    let out = run(ONE_SWITCH, &FLOW.replace("h3", "h1"), true, "[nic]\nack_interval = 4");
    assert_eq!(out.counters.int_hops_echoed, 25, "{:?}", out.counters);
}

/// Off, nothing is stamped; on or off, the run is the same bit for bit.
#[test]
fn telemetry_changes_no_result() {
    let lossy = "[[loss]]\nat = \"everywhere\"\nrate = 0.02\ncontrol = true";
    let on = run(LEAF_SPINE, FLOW, true, lossy);
    let off = run(LEAF_SPINE, FLOW, false, lossy);
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
