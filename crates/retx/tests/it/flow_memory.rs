//! Bounded memory: per-flow state lives only while a flow does, and is sized by what the flow
//! can have outstanding. 200 000 one-packet flows at a ~200 us RTT (where one BDP is ~2 400
//! packets) run with IRN and with go-back-N; IRN's peak heap must stay within 2x go-back-N's.
//! Before per-flow state was bounded, IRN kept a BDP of bitmap, reorder tags and
//! retransmission marks (~50 KB) for every flow for the whole run: ~9 GB here. A second run
//! holds long flows to what they have outstanding (rings that grow on demand).
//!
//! The heap is measured by a counting global allocator, which the test binary installs, per
//! thread (exact and deterministic, unlike the process's resident set).

use retx::Simulation;
use crate::util::alloc::measure;

/// Runs measure one at a time (the counts are per thread; this keeps the two big runs from
/// sharing the machine's memory at once).
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

const FLOWS: u64 = 200_000;

/// 16 hosts on one switch, 100 Gbps links of 50 us each way: the round trip crosses four
/// links, 200 us of propagation. Every flow is one 1000 B packet (a point-mass size table),
/// Poisson arrivals at 30 % load between random pairs: ~2.6 ms of simulated time, some
/// 10 000 flows alive at once.
fn scenario(recovery: &str, dir: &std::path::Path) -> String {
    format!(
        r#"
name = "memory-{recovery}"
seed = 5
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 16
host_link = "100Gbps"
link_delay = "50us"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[output]
sample_interval = "1ms"
[workload]
kind = "poisson"
cdf = "{cdf}"
load = 0.3
pairing = "random"
flows = {FLOWS}
"#,
        cdf = dir.join("one-packet.cdf").display()
    )
}

/// Builds and runs `recovery`'s scenario; returns the peak heap above what was live before
/// (bytes) and the flows that finished.
fn peak_heap(recovery: &str, dir: &std::path::Path) -> (usize, usize, u32) {
    let (peak, (finished, bdp)) = measure(|| {
        let sim = Simulation::new(retx::Scenario::from_toml(&scenario(recovery, dir)).unwrap()).unwrap();
        let bdp = sim.bdp_packets();
        let out = sim.run(&mut |_, _| true).unwrap();
        assert_eq!(out.counters.bad_deliveries, 0);
        (out.flows.iter().filter(|f| f.finish.is_some()).count(), bdp)
    });
    (peak, finished, bdp)
}

#[test]
fn irn_with_200k_short_flows_peaks_within_twice_go_back_n() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("flow_memory");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("one-packet.cdf"), "# every flow is 1000 B\n1000 1\n").unwrap();

    let (gbn, gbn_done, _) = peak_heap("gbn", &dir);
    let (irn, irn_done, bdp) = peak_heap("irn", &dir);
    eprintln!("peak heap: go-back-N {:.1} MB, IRN {:.1} MB (BDP {bdp} packets)", gbn as f64 / 1e6, irn as f64 / 1e6);
    // The premise: a ~200 us BDP is thousands of packets (so a BDP-sized bitmap per flow
    // would cost tens of KB), and every flow ran to completion under both schemes.
    assert!((2_000..=3_000).contains(&bdp), "BDP {bdp} packets");
    assert_eq!((gbn_done as u64, irn_done as u64), (FLOWS, FLOWS));
    assert!(irn <= 2 * gbn, "IRN peaked at {irn} B, more than twice go-back-N's {gbn} B");
}

/// 300 flows of 2 560 packets (more than the 2 336-packet BDP, so a ring sized up front would
/// take a BDP's 4 096 slots) from 15 senders into one receiver at once, through PFC with
/// headroom (no drops), same 200 us RTT: the receiver's link is shared by all of them, so each
/// has a few packets outstanding, not a BDP, and IRN's rings grow only as far as that.
fn concurrent(recovery: &str) -> String {
    format!(
        r#"
name = "memory-concurrent-{recovery}"
seed = 5
duration = "200ms"
[topology]
kind = "single-switch"
hosts = 16
host_link = "100Gbps"
link_delay = "50us"
[switch]
buffer = "32MB"            # 16 ports x 1.25 MB of headroom for 50 us links, and 12 MB shared
pfc = {{ enabled = true, headroom = "auto" }}
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[output]
sample_interval = "1ms"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 15
size = "2621440B"
rounds = 20
interval = "1us"
"#
    )
}

fn concurrent_peak(recovery: &str) -> (usize, usize) {
    measure(|| {
        let out = retx::run_toml(&concurrent(recovery)).unwrap();
        assert_eq!((out.counters.bad_deliveries, out.counters.drops_buffer), (0, 0));
        out.flows.iter().filter(|f| f.finish.is_some()).count()
    })
}

#[test]
fn concurrent_long_flows_keep_rings_sized_to_what_is_outstanding() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let (gbn, gbn_done) = concurrent_peak("gbn");
    let (irn, irn_done) = concurrent_peak("irn");
    eprintln!("300 concurrent 2 560-packet flows, peak heap: go-back-N {:.1} MB, IRN {:.1} MB", gbn as f64 / 1e6, irn as f64 / 1e6);
    assert_eq!((gbn_done, irn_done), (300, 300));
    assert!(irn <= 2 * gbn, "IRN peaked at {irn} B, more than twice go-back-N's {gbn} B");
}
