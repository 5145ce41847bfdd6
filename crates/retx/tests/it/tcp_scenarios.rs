//! `recovery = "tcp"` with its window controllers end to end: two flows into one receiver
//! through one switch (the switch-to-receiver port is the bottleneck), the bottleneck's data
//! queue watched by an observer; and the new sections' validation.

use retx::net::packet::Packet;
use retx::observe::Observer;
use retx::sim::units::Time;
use retx::world::RunOutput;
use retx::Scenario;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Data-queue bytes over time on every port: the time integral and the maximum between
/// `from` and `to`, per (port, queue).
#[derive(Default)]
struct Queues {
    from: Time,
    to: Time,
    last: HashMap<(usize, usize), (Time, u64)>,
    area: HashMap<(usize, usize), f64>,
    max: HashMap<(usize, usize), u64>,
}

#[derive(Clone, Default)]
struct Watch(Rc<RefCell<Queues>>);

impl Watch {
    fn at(&self, now: Time, port: usize, queue: usize, queued: u64) {
        if queue == 0 {
            return; // control
        }
        let mut q = self.0.borrow_mut();
        let (from, to) = (q.from, q.to);
        let (t0, q0) = q.last.insert((port, queue), (now, queued)).unwrap_or((now, 0));
        let (a, b) = (t0.max(from), now.min(to));
        if b > a {
            *q.area.entry((port, queue)).or_default() += q0 as f64 * (b.0 - a.0) as f64;
        }
        if now >= from && now <= to {
            let m = q.max.entry((port, queue)).or_default();
            *m = (*m).max(queued);
        }
    }
}

impl Observer for Watch {
    fn enqueue(&mut self, now: Time, port: usize, queue: usize, _pkt: &Packet, queued: u64) {
        self.at(now, port, queue, queued);
    }
    fn dequeue(&mut self, now: Time, port: usize, queue: usize, _pkt: &Packet, queued: u64) {
        self.at(now, port, queue, queued);
    }
}

/// Payload + header bytes of one full segment on the wire (1000 B MSS).
const PKT: f64 = 1_048.0;

/// Two 8 MB flows, h0 -> h2 and h1 -> h2, at 10 Gbps through one switch, with `sections`
/// (the `[transport]`, `[cc.*]`, `[switch]`... text). Returns the run and, for the busiest data
/// queue, its mean from 2 ms to 8 ms (both flows run then) and its maximum over that span, in
/// packets.
fn two_to_one(sections: &str) -> (RunOutput, f64, f64) {
    let text = format!(
        r#"
name = "tcp-two-to-one"
duration = "200ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
[nic]
mtu = 1000
{sections}
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h2", size = "8MB" }}, {{ src = "h1", dst = "h2", size = "8MB" }}]
"#
    );
    let scenario = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let watch = Watch::default();
    watch.0.borrow_mut().from = Time::from_ms(2);
    watch.0.borrow_mut().to = Time::from_ms(8);
    let sim = retx::config::build_with_observer(scenario, watch.clone()).unwrap_or_else(|e| panic!("{e}"));
    let out = sim.run(&mut |_, _| true).expect("no abort");
    assert_eq!(out.counters.bad_deliveries, 0);
    for f in &out.flows {
        assert_eq!((f.delivered_bytes, f.finish.is_some()), (8_000_000, true), "flow {}", f.flow_id);
    }
    let q = watch.0.take();
    let (key, area) = q.area.iter().max_by(|a, b| a.1.total_cmp(b.1)).map(|(k, a)| (*k, *a)).expect("a data queue");
    let mean = area / (q.to.0 - q.from.0) as f64 / PKT;
    (out, mean, q.max[&key] as f64 / PKT)
}

/// FCT of the later flow over that of the earlier: 1 when they share the bottleneck evenly.
fn finish_ratio(out: &RunOutput) -> f64 {
    let f: Vec<u64> = out.flows.iter().map(|f| f.fct().unwrap().0).collect();
    f[0].max(f[1]) as f64 / f[0].min(f[1]) as f64
}

/// DCTCP with a step marking threshold K = 20 packets: the flows share the bottleneck evenly
/// and the queue stays near K (never more than K plus a few windows' growth), with no drop.
#[test]
fn dctcp_window_shares_evenly_with_the_queue_near_k() {
    let (out, mean, max) = two_to_one(
        "[transport]\nrecovery = \"tcp\"\ncc = \"dctcp-window\"\n\
         [switch]\necn = { kmin = \"20960B\", kmax = \"20960B\", pmax = 1.0 }\n",
    );
    assert!(out.counters.ecn_marks > 0);
    assert_eq!(out.counters.drops_buffer, 0);
    assert!(finish_ratio(&out) < 1.05, "{}", finish_ratio(&out));
    assert!((10.0..=24.0).contains(&mean), "mean queue {mean:.1} packets");
    assert!(max <= 35.0, "max queue {max:.1} packets");
    // Both flows ran at nearly the bottleneck's rate together: 16 MB at 10 Gbps is 12.8 ms.
    let last = out.flows.iter().map(|f| f.finish.unwrap()).max().unwrap();
    assert!(last < Time::from_us(14_000), "{last:?}");
}

/// Vegas keeps alpha..beta packets per flow queued: with two flows, 4 to 8 in all (a packet
/// or so beyond, since BaseRTT includes one packet's wait), without ECN and without loss.
#[test]
fn vegas_keeps_the_queue_between_alpha_and_beta_per_flow() {
    let (out, mean, max) = two_to_one("[transport]\nrecovery = \"tcp\"\ncc = \"vegas\"\n[switch]\necn = { enabled = false }\n");
    assert_eq!((out.counters.drops_buffer, out.flows.iter().map(|f| f.timeouts).sum::<u64>()), (0, 0));
    assert!((4.0..=9.0).contains(&mean), "mean queue {mean:.1} packets");
    assert!(max <= 14.0, "max queue {max:.1} packets");
    assert!(finish_ratio(&out) < 1.25, "{}", finish_ratio(&out));
}

/// Reno with random loss at the switch repairs it mostly by fast retransmit; into a small
/// buffer it grows until the switch drops (here one flow loses its whole first burst and waits
/// out timeouts while the other runs at line rate: plain TCP is not fair to a timed-out flow).
/// Either way both flows complete with every byte delivered once.
#[test]
fn reno_completes_through_random_loss_and_buffer_overflow() {
    let (out, _, _) = two_to_one("[transport]\nrecovery = \"tcp\"\ncc = \"reno\"\n[[loss]]\nat = \"switch:sw0\"\nrate = 0.002\n");
    let fast: u64 = out.flows.iter().map(|f| f.notifications.fast_retransmits).sum();
    let rto: u64 = out.flows.iter().map(|f| f.timeouts).sum();
    assert!(out.counters.drops_loss > 10);
    assert!(fast > 0 && fast >= 2 * rto, "fast retransmits {fast}, timeouts {rto}");
    assert!(out.flows.iter().all(|f| f.retx_bytes > 0));

    let (out, _, max) = two_to_one("[transport]\nrecovery = \"tcp\"\ncc = \"reno\"\n[switch]\nbuffer = \"60KB\"\n");
    assert!(out.counters.drops_buffer > 0, "Reno grows until the buffer overflows");
    assert!(out.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0);
    assert!(max * PKT <= 30_000.0 + PKT, "the dynamic threshold holds a queue to half the buffer: {max:.1} packets");
}

/// Window controllers over the RDMA schemes: Reno over go-back-N and IRN with random loss.
#[test]
fn window_controllers_run_over_gbn_and_irn() {
    for recovery in ["gbn", "irn"] {
        for cc in ["reno", "dctcp-window", "vegas"] {
            let (out, _, _) = two_to_one(&format!(
                "[transport]\nrecovery = \"{recovery}\"\ncc = \"{cc}\"\n[[loss]]\nat = \"switch:sw0\"\nrate = 0.001\n"
            ));
            assert!(out.counters.drops_loss > 0, "{recovery}/{cc}");
        }
    }
}

fn rejected(sections: &str) -> String {
    let text = format!(
        "name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\n{sections}\n\
         [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
    );
    retx::run_toml(&text).err().expect("rejected").to_string()
}

#[test]
fn the_new_sections_are_validated_by_field() {
    let e = rejected("[transport]\nrecovery = \"tcp\"\ncc = \"vegas\"\n[cc.vegas]\nalpha = 4.0\nbeta = 2.0\n");
    assert_eq!(e, "cc.vegas.alpha: must be below beta");
    let e = rejected("[transport]\nrecovery = \"tcp\"\ncc = \"reno\"\n[recovery.tcp]\nmin_rto = \"2ms\"\nmax_rto = \"1ms\"\n");
    assert_eq!(e, "recovery.tcp.max_rto: must not be below min_rto");
    let e = rejected("[transport]\nrecovery = \"tcp\"\ncc = \"dctcp-window\"\n[cc.dctcp-window]\ng = 0.0\n");
    assert!(e.starts_with("cc.dctcp-window.g: "), "{e}");
    let e = rejected("[transport]\nrecovery = \"melo\"\ncc = \"reno\"\n");
    assert!(e.starts_with("transport.cc: "), "{e}");
    let e = rejected("[transport]\nrecovery = \"tcp\"\ncc = \"reno\"\n[cc.reno]\ninitial_windw = 4\n");
    assert!(e.contains("cc.reno") && e.contains("initial_windw"), "{e}");
}
