//! Whole simulations through `retx::run_toml`: determinism, packet conservation, PFC versus
//! buffer drops in an incast, and recovery under loss of data and control packets everywhere.

use retx::RunOutput;

/// A 2 x 2 leaf-spine of 40 Gbps links with 1 us of delay (h0, h1 on leaf0; h2, h3 on leaf1)
/// running `recovery` under DCQCN for 1 s; `rest` holds the remaining sections (recovery
/// parameters, losses, workload).
fn leaf_spine_toml(name: &str, seed: u64, recovery: &str, rest: &str) -> String {
    format!(
        r#"
name = "{name}"
seed = {seed}
duration = "1s"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
fabric_link = "40Gbps"
link_delay = "1us"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
{rest}"#
    )
}

/// Four hosts on the leaf-spine, every host sending 200 KB across the fabric.
fn leaf_spine(seed: u64, recovery: &str, extra: &str) -> String {
    let rest = format!(
        r#"[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "flow-list"
flows = [
  {{ src = "h0", dst = "h2", size = "200KB" }},
  {{ src = "h1", dst = "h3", size = "200KB", start = "3us" }},
  {{ src = "h2", dst = "h1", size = "200KB", start = "5us" }},
  {{ src = "h3", dst = "h0", size = "200KB", start = "7us" }},
]
{extra}
"#
    );
    leaf_spine_toml("ls", seed, recovery, &rest)
}

const LOSSY_SPINE: &str = "[[loss]]\nat = \"switch:spine0\"\nrate = 0.02\ncontrol = true\n";
const LOSS_EVERYWHERE: &str = "[[loss]]\nat = \"everywhere\"\nrate = 0.05\ncontrol = true\n";

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn assert_all_finished(out: &RunOutput, sizes: &[u64]) {
    assert_eq!(out.flows.len(), sizes.len());
    for (f, &size) in out.flows.iter().zip(sizes) {
        assert!(f.finish.is_some(), "flow {} unfinished: {f:?}", f.flow_id);
        assert_eq!(f.delivered_bytes, size, "flow {}", f.flow_id);
        assert_eq!(f.size_bytes, size);
    }
    assert_eq!(out.counters.bad_deliveries, 0);
}

fn assert_conserved(out: &RunOutput) {
    let c = &out.counters;
    assert_eq!(
        c.packets_created,
        c.packets_consumed + c.drops_loss + c.drops_buffer + c.drops_unroutable + out.packets_in_flight,
        "{c:?}, in flight {}",
        out.packets_in_flight
    );
}

#[test]
fn same_seed_same_run_different_seed_different_losses() {
    let a = run(&leaf_spine(7, "gbn", LOSSY_SPINE));
    let b = run(&leaf_spine(7, "gbn", LOSSY_SPINE));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.samples, b.samples);
    assert_eq!((a.end, a.packets_in_flight), (b.end, b.packets_in_flight));
    assert!(a.counters.drops_loss > 0, "the scenario must lose packets for the seed to matter");

    let c = run(&leaf_spine(8, "gbn", LOSSY_SPINE));
    assert_ne!(a.counters, c.counters);
    assert_ne!(a.flows, c.flows);
    assert_ne!(a.end, c.end);
}

#[test]
fn irn_runs_are_deterministic_too() {
    let a = run(&leaf_spine(11, "irn", LOSSY_SPINE));
    let b = run(&leaf_spine(11, "irn", LOSSY_SPINE));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters, b.counters);
    assert!(a.counters.drops_loss > 0);
    let c = run(&leaf_spine(12, "irn", LOSSY_SPINE));
    assert_ne!(a.counters, c.counters);
}

#[test]
fn packets_are_conserved_on_a_lossy_leaf_spine() {
    for recovery in ["gbn", "irn"] {
        let out = run(&leaf_spine(3, recovery, LOSSY_SPINE));
        assert!(out.counters.drops_loss > 0, "{recovery}");
        assert_eq!(out.packets_in_flight, 0, "{recovery}: every flow done, stop_when_done");
        assert_conserved(&out);
        assert_all_finished(&out, &[200_000; 4]);
    }
}

#[test]
fn packets_are_conserved_when_the_run_stops_with_packets_on_the_wires() {
    // 30 us is too short for any flow to finish: packets are still queued and in flight.
    let text = leaf_spine(3, "gbn", LOSSY_SPINE).replace("duration = \"1s\"", "duration = \"30us\"");
    let out = run(&text);
    assert!(out.packets_in_flight > 0);
    assert!(out.counters.drops_loss > 0);
    assert!(out.flows.iter().all(|f| f.finish.is_none()));
    assert_conserved(&out);
}

/// 8 senders (h1..h8) -> h0 on one switch, 100 KB each, no congestion control.
fn incast(recovery: &str, switch: &str) -> String {
    let flows: Vec<String> = (1..=8).map(|h| format!("{{ src = \"h{h}\", dst = \"h0\", size = \"100KB\" }}")).collect();
    format!(
        r#"
name = "incast"
duration = "1s"
[topology]
kind = "single-switch"
hosts = 9
host_link = "40Gbps"
link_delay = "1us"
[switch]
{switch}
[transport]
recovery = "{recovery}"
cc = "none"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "flow-list"
flows = [{}]
"#,
        flows.join(", ")
    )
}

#[test]
fn incast_with_pfc_pauses_instead_of_dropping() {
    // Per ingress: XOFF at 20 KB; the bytes still arriving after a PAUSE (2 x 1 us of wire at
    // 40 Gbps = 10 KB, plus a packet or two) fit in 400 KB for all 8 ingress ports.
    let sw = "buffer = \"400KB\"\npfc = { enabled = true, xoff = \"20KB\", xon = \"10KB\" }\n";
    for recovery in ["gbn", "irn"] {
        let out = run(&incast(recovery, sw));
        assert!(out.counters.pfc_pauses > 0, "{recovery}: {:?}", out.counters);
        assert_eq!(out.counters.drops_buffer, 0, "{recovery}");
        assert_eq!(out.counters.drops_loss, 0);
        assert!(out.flows.iter().all(|f| f.retx_bytes == 0 && f.timeouts == 0 && f.notifications.total() == 0), "{recovery}");
        assert_all_finished(&out, &[100_000; 8]);
        assert_conserved(&out);
    }
}

#[test]
fn incast_without_pfc_drops_and_recovers() {
    let sw = "buffer = \"100KB\"\npfc = { enabled = false }\n";
    for recovery in ["gbn", "irn"] {
        let out = run(&incast(recovery, sw));
        assert!(out.counters.drops_buffer > 0, "{recovery}");
        assert_eq!(out.counters.pfc_pauses, 0);
        assert!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>() > 0, "{recovery}");
        assert_all_finished(&out, &[100_000; 8]);
        assert_conserved(&out);
    }
}

#[test]
fn loss_of_data_and_control_everywhere_is_recovered() {
    for recovery in ["gbn", "irn"] {
        for seed in 1..=3 {
            let out = run(&leaf_spine(seed, recovery, LOSS_EVERYWHERE));
            assert!(out.counters.drops_loss > 0, "{recovery} seed {seed}");
            assert!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>() > 0);
            assert_all_finished(&out, &[200_000; 4]);
            assert_conserved(&out);
        }
    }
}

/// The 2 x 2 leaf-spine with eight 200 KB flows, two each way between every cross-leaf pair
/// of hosts (so each host's NIC sends two and receives two at once, sharing its MELO pools),
/// and 1 % loss on every link, data and control alike.
fn hw_leaf_spine(seed: u64, recovery: &str, extra: &str) -> String {
    let pairs = [("h0", "h2"), ("h2", "h0"), ("h1", "h3"), ("h3", "h1"), ("h0", "h3"), ("h3", "h0"), ("h1", "h2"), ("h2", "h1")];
    let flows: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(i, (s, d))| format!("{{ src = \"{s}\", dst = \"{d}\", size = \"200KB\", start = \"{}us\" }}", i))
        .collect();
    let rest = format!(
        r#"[recovery.gbone]
rto = "200us"
[[loss]]
at = "everywhere"
rate = 0.01
control = true
[workload]
kind = "flow-list"
flows = [{}]
{extra}
"#,
        flows.join(", ")
    );
    leaf_spine_toml("hw", seed, recovery, &rest)
}

#[test]
fn melo_flows_both_ways_recover_from_loss_everywhere_and_return_every_block() {
    for seed in 1..=3 {
        let out = run(&hw_leaf_spine(seed, "melo", ""));
        assert!(out.counters.drops_loss > 0, "seed {seed}");
        assert!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>() > 0, "seed {seed}");
        assert!(out.flows.iter().map(|f| f.notifications.nacks).sum::<u64>() > 0, "seed {seed}: MELO NACKs");
        assert!(out.flows.iter().map(|f| f.reorder_copied_bytes).sum::<u64>() > 0, "seed {seed}");
        assert_all_finished(&out, &[200_000; 8]);
        assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0, "seed {seed}: blocks still allocated at the end");
        // The pools were used and never overflowed (8 bits x 128 blocks per NIC and way).
        assert!(out.scheme_figure("melo_rx_pool_peak").unwrap() > 0.0 && out.scheme_figure("melo_rx_pool_peak").unwrap() <= 1.0, "seed {seed}: {}", out.scheme_figure("melo_rx_pool_peak").unwrap());
        assert!(out.scheme_figure("melo_tx_pool_peak").unwrap() > 0.0 && out.scheme_figure("melo_tx_pool_peak").unwrap() <= 1.0, "seed {seed}: {}", out.scheme_figure("melo_tx_pool_peak").unwrap());
        // The run stops when the last flow finishes; packets of flows finished earlier (a
        // redundant retransmission, a late ACK) may still be on the wires: counted in flight.
        assert_conserved(&out);
    }
}

#[test]
fn melo_with_small_pools_and_neither_refinement_still_recovers() {
    // 64-bit pools in 4-bit blocks, shared by the two flows each NIC receives (and sends):
    // packets are dropped for want of bits, lost retransmissions wait for the timeout.
    let extra = "[recovery.melo]\npool_bits = 64\nblock_bits = 4\nresend_reported = false\n";
    let out = run(&hw_leaf_spine(5, "melo", extra));
    assert!(out.flows.iter().map(|f| f.rx_dropped).sum::<u64>() > 0, "no packet dropped for want of bits");
    assert_all_finished(&out, &[200_000; 8]);
    assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0);
    assert_eq!(out.scheme_figure("melo_rx_pool_peak").unwrap(), 1.0);
    assert_conserved(&out);
}

#[test]
fn gbone_flows_both_ways_recover_from_loss_everywhere() {
    for seed in 1..=3 {
        let out = run(&hw_leaf_spine(seed, "gbone", ""));
        assert!(out.counters.drops_loss > 0, "seed {seed}");
        assert!(out.flows.iter().map(|f| f.retx_bytes).sum::<u64>() > 0, "seed {seed}");
        assert!(out.flows.iter().map(|f| f.notifications.racks).sum::<u64>() > 0, "seed {seed}: RACKs");
        assert_all_finished(&out, &[200_000; 8]);
        // Go-Back-ONE's NICs hold no MELO pools, so none are reported.
        assert!(["melo_rx_pool_peak", "melo_tx_pool_peak", "melo_blocks_in_use_at_end"].iter().all(|n| out.scheme_figure(n).is_none()));
        assert_conserved(&out);
    }
}

#[test]
fn melo_and_gbone_runs_are_deterministic_and_conserve_packets_mid_run() {
    for recovery in ["melo", "gbone"] {
        let a = run(&hw_leaf_spine(9, recovery, ""));
        let b = run(&hw_leaf_spine(9, recovery, ""));
        assert_eq!(a.flows, b.flows, "{recovery}");
        assert_eq!(a.counters, b.counters, "{recovery}");
        assert_eq!((a.scheme_figure("melo_blocks_in_use_at_end"), a.end), (b.scheme_figure("melo_blocks_in_use_at_end"), b.end), "{recovery}");
        // Stopped at 30 us, before any flow can finish: packets are still queued and on wires.
        let text = hw_leaf_spine(9, recovery, "").replace("duration = \"1s\"", "duration = \"30us\"");
        let out = run(&text);
        assert!(out.packets_in_flight > 0, "{recovery}");
        assert!(out.counters.drops_loss > 0, "{recovery}");
        assert!(out.flows.iter().all(|f| f.finish.is_none()), "{recovery}");
        assert_conserved(&out);
    }
}
