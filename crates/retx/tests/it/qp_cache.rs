//! MELO's on-chip QP cache (§3.2.5): connections swapped out return their blocks to the pool
//! and get them back when they return; what a swap costs the receive pipeline is declared in
//! `[nic] qp_swap_time` / `qp_swap_per_block` (LEFT: 5 ns per bitmap block).

use retx::observe::Observer;
use retx::sim::units::{Rate, Time};
use retx::transport::Endpoint;
use retx::transport::common::psn::PsnSpace;
use retx::transport::common::segment::{payload_tag, Segment};
use retx::transport::{FlowSpec, NicAgent};
use retx::Scenario;
use std::cell::RefCell;
use std::rc::Rc;

/// The NIC's MELO pools (its scheme agent).
fn pools(nic: &retx::transport::NicAgent) -> &retx::transport::loss::melo::MeloPools {
    nic.scheme.get::<retx::transport::loss::melo::MeloPools>().expect("MELO's pools")
}


fn scenario(qp_cache: u32) -> String {
    format!(
        r#"
name = "qp-cache"
seed = 3
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 5
[transport]
recovery = "melo"
[recovery.melo]
qp_cache = {qp_cache}
[[loss]]
at = "switch:sw0"
rate = 0.01
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "300KB" }},
  {{ src = "h2", dst = "h0", size = "300KB" }},
  {{ src = "h3", dst = "h0", size = "300KB" }},
  {{ src = "h4", dst = "h0", size = "300KB" }},
]
"#
    )
}

#[test]
fn four_connections_through_a_cache_of_two_all_finish_and_free_the_pool() {
    let out = retx::run_toml(&scenario(2)).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()), "{:?}", out.flows);
    assert_eq!(out.counters.bad_deliveries, 0);
    // Four interleaved senders into a cache of two: connections keep getting swapped.
    assert!(out.counters.qp_swaps > 10, "swaps = {}", out.counters.qp_swaps);
    assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0);
}

#[test]
fn without_a_cache_limit_nothing_is_swapped() {
    let out = retx::run_toml(&scenario(0)).unwrap();
    assert!(out.flows.iter().all(|f| f.finish.is_some()));
    assert_eq!(out.counters.qp_swaps, 0);
    assert_eq!((out.scheme_figure("melo_blocks_in_use_at_end").unwrap() as u64), 0);
}

/// Records every in-order delivery: (true time, flow).
#[derive(Clone, Default)]
struct Deliveries(Rc<RefCell<Vec<(Time, u32)>>>);

impl Observer for Deliveries {
    fn deliver(&mut self, now: Time, _host: usize, flow: u32, _bytes: u64) {
        self.0.borrow_mut().push((now, flow));
    }
}

/// h1 and h2 each send 8 packets to h0 at once, through a QP cache of one connection: 40 Gbps
/// links of 1 us, no loss, no congestion control. A data packet is 1024 + 48 B = 214 400 ps
/// on a link; both first packets reach the switch at 214 400 + 1 000 000 ps (h1's first), so
/// h0's link carries them back to back: packet k reaches h0 at 2 428 800 + 214 400 k ps,
/// alternating h1, h2, h1, ... Every packet misses: the first costs one context moved in, each
/// later one two (the other connection out, its own in).
fn alternating(qp_swap_time: &str) -> (retx::RunOutput, Vec<(Time, u32)>) {
    let text = format!(
        r#"
name = "swap-cost"
duration = "1ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "40Gbps"
link_delay = "1us"
[nic]
qp_swap_time = "{qp_swap_time}"
[transport]
recovery = "melo"
cc = "none"
[recovery.melo]
qp_cache = 1
[workload]
kind = "flow-list"
flows = [
  {{ src = "h1", dst = "h0", size = "8192B" }},
  {{ src = "h2", dst = "h0", size = "8192B" }},
]
"#
    );
    let rec = Deliveries::default();
    let sim = retx::config::build_with_observer(Scenario::from_toml(&text).unwrap(), rec.clone()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let out = sim.run(&mut |_, _| true).expect("no abort");
    let seen = rec.0.take();
    (out, seen)
}

/// Expected deliveries: packet k arrives at `arrival(k)`, waits for the pipeline, then for its
/// swap (`swap` per context moved), and is handled.
fn expected(swap: u64) -> Vec<(Time, u32)> {
    let arrival = |k: u64| 2_428_800 + 214_400 * k;
    let mut free = 0;
    (0..16u64)
        .map(|k| {
            let moved = if k == 0 { 1 } else { 2 };
            free = arrival(k).max(free) + moved * swap;
            (Time(free), (k % 2) as u32)
        })
        .collect()
}

#[test]
fn free_swaps_deliver_every_packet_on_arrival() {
    let (out, seen) = alternating("0ns");
    assert_eq!(seen, expected(0));
    assert_eq!(out.counters.qp_swaps, 15); // every packet but the first evicts the other
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// LEFT's 5 ns: a miss that evicts costs 10 ns, far less than the 214.4 ns between packets, so
/// each packet is handled exactly its own swap time after it arrives.
#[test]
fn each_miss_delays_its_packet_by_the_swap_time() {
    let (out, seen) = alternating("5ns");
    assert_eq!(seen, expected(5_000));
    assert_eq!(seen[0].0, Time(2_428_800 + 5_000));
    assert_eq!(seen[15].0, Time(2_428_800 + 15 * 214_400 + 10_000));
    assert_eq!(out.counters.qp_swaps, 15);
    // The last ACK leaves h0 10 ns later than with free swaps, so each flow ends 10 ns later.
    let (free, _) = alternating("0ns");
    for (f, g) in out.flows.iter().zip(&free.flows) {
        assert_eq!(f.fct().unwrap().0, g.fct().unwrap().0 + 10_000, "flow {}", f.flow_id);
    }
}

/// 150 ns per context: a miss that evicts (300 ns) outlasts the 214.4 ns between arrivals, so
/// packets queue behind the swaps: from the second on, one every 300 ns.
#[test]
fn swaps_slower_than_the_line_hold_back_the_packets_behind() {
    let (out, seen) = alternating("150ns");
    assert_eq!(seen, expected(150_000));
    assert_eq!(seen[1].0, Time(2_428_800 + 214_400 + 300_000));
    assert_eq!(seen[15].0, Time(2_428_800 + 214_400 + 15 * 300_000));
    assert_eq!(out.counters.bad_deliveries, 0);
    assert!(out.flows.iter().all(|f| f.delivered_bytes == 8192));
}

/// Per block: a MELO responder holding an out-of-order packet keeps bitmap blocks in the pool;
/// swapping it out and back in each costs the context's time plus 5 ns per block.
#[test]
fn a_swap_costs_its_fixed_time_plus_its_blocks() {
    let text = "name = \"blocks\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\n\
                [nic]\nqp_swap_time = \"7ns\"\nqp_swap_per_block = \"5ns\"\n[transport]\nrecovery = \"melo\"\n\
                [workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]\n";
    let template = retx::config::template::transport(&Scenario::from_toml(text).unwrap());
    let spec = FlowSpec { size: 32 * 1024, mtu: 1024, initial_psn: 0, key: 9, marking: Default::default() };
    let (_, rx) = template.endpoints(spec, Rate::gbps(40), 16, Default::default());
    let mut ep = Endpoint::Responder(rx);
    let mut nic = NicAgent::new(&template);
    // Packet 10 first: the bitmap covers 0..16, two blocks of 8 bits.
    let seg = Segment::data(PsnSpace::new(0).wire(10), 1024, payload_tag(9, 10), Time::ZERO);
    ep.handle_packet(Time::ZERO, &seg, &mut nic.call(0));
    assert_eq!(pools(&nic).rx.used_blocks(), 2);
    assert_eq!(nic.charged, Time::ZERO);
    ep.swap_out(&mut nic.call(0));
    assert_eq!((nic.charged, pools(&nic).rx.used_blocks()), (Time(7_000 + 2 * 5_000), 0));
    nic.charged = Time::ZERO;
    assert!(ep.swap_in(&mut nic.call(0)));
    assert_eq!((nic.charged, pools(&nic).rx.used_blocks()), (Time(7_000 + 2 * 5_000), 2));
    // A connection with nothing out of order moves no blocks: the fixed time only.
    let (_, rx) = template.endpoints(spec, Rate::gbps(40), 16, Default::default());
    nic.charged = Time::ZERO;
    Endpoint::Responder(rx).swap_out(&mut nic.call(0));
    assert_eq!(nic.charged, Time(7_000));
}

#[test]
fn swap_costs_are_validated_by_field() {
    for field in ["qp_swap_time", "qp_swap_per_block"] {
        let text = format!("name = \"v\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\n[nic]\n{field} = \"2ms\"\n\
                            [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n");
        let e = retx::run_toml(&text).err().expect("2 ms is out of range").to_string();
        assert!(e.contains(&format!("nic.{field}")) && e.contains("out of range"), "{e}");
    }
}
