//! Whole simulations of the network features the scenario file exposes: Gilbert-Elliott burst
//! loss and per-kind loss rules, packet spraying and flowlets, egress queues and DRR, per-link
//! ECN profiles, host clocks, the observation hook, routing tables at 10,000 hosts and on a
//! k = 32 fat-tree, and ECMP and delivery on a k = 4 fat-tree.
//!
//! Where a test needs to see individual packets it runs the scenario with an [`Observer`]
//! (`retx::config::build_with_observer`) that tallies the engine's events; ports are named by
//! the topology's links (link i gives port 2i at its `a` end and 2i + 1 at its `b` end).

use retx::net::packet::Packet;
use retx::net::topology::Topology;
use retx::observe::{DropCause, Observer};
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use retx::{RunOutput, Scenario};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

// ---------------------------------------------------------------------------------------------
// Plumbing
// ---------------------------------------------------------------------------------------------

/// What the recording observer saw.
#[derive(Default)]
struct Tally {
    /// Every wire event (every hop of every packet, PFC frames included).
    wire: u64,
    /// Data packets put on the wire, by (port, flow).
    data_wire: HashMap<(usize, u32), u64>,
    /// Drops by cause (loss, buffer, unroutable).
    drops: [u64; 3],
    /// Loss drops by (port, segment kind is data).
    loss_drops: HashMap<(usize, bool), u64>,
    /// Control packets dropped by a loss model, by kind (`SegKind` debug name).
    control_loss: HashMap<String, u64>,
    /// Delivered bytes by flow.
    delivered: HashMap<u32, u64>,
    /// For the watched port: one entry per data packet put on its wire, true if it was lost.
    watched: Vec<bool>,
    watch: Option<usize>,
}

/// An observer that tallies into shared state, so the tally outlives the simulation
/// (`Simulation::run` consumes it).
#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Tally>>);

impl Observer for Recorder {
    fn wire(&mut self, _now: Time, port: usize, pkt: &Packet) {
        let mut t = self.0.borrow_mut();
        t.wire += 1;
        if pkt.seg.kind == SegKind::Data && pkt.flow != u32::MAX {
            *t.data_wire.entry((port, pkt.flow)).or_default() += 1;
            if t.watch == Some(port) {
                t.watched.push(false);
            }
        }
    }
    fn drop(&mut self, _now: Time, port: usize, pkt: &Packet, cause: DropCause) {
        let mut t = self.0.borrow_mut();
        t.drops[cause_index(cause)] += 1;
        let data = pkt.seg.kind == SegKind::Data;
        if cause == DropCause::Loss {
            *t.loss_drops.entry((port, data)).or_default() += 1;
            if !data {
                *t.control_loss.entry(format!("{:?}", pkt.seg.kind)).or_default() += 1;
            }
            if data && t.watch == Some(port) {
                // A loss drop follows the wire event of the same packet at once.
                *t.watched.last_mut().expect("wire before drop") = true;
            }
        }
    }
    fn deliver(&mut self, _now: Time, _host: usize, flow: u32, bytes: u64) {
        *self.0.borrow_mut().delivered.entry(flow).or_default() += bytes;
    }
}

fn cause_index(c: DropCause) -> usize {
    match c {
        DropCause::Loss => 0,
        DropCause::Buffer => 1,
        DropCause::Unroutable => 2,
    }
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The scenario's topology, as the run builds it.
fn topology(text: &str) -> Topology {
    retx::config::validate(&mut scenario(text)).expect("valid scenario")
}

/// The port at node `from` on its link to node `to`.
fn port(topo: &Topology, from: &str, to: &str) -> usize {
    let (a, b) = (topo.find(from).expect("node"), topo.find(to).expect("node"));
    let i = topo.links.iter().position(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).expect("a link");
    if topo.links[i].a == a { 2 * i } else { 2 * i + 1 }
}

/// Runs a scenario with the recording observer; `watch`: the port whose data packets are
/// recorded one by one.
fn run_observed(text: &str, watch: Option<usize>) -> (RunOutput, Tally) {
    let rec = Recorder::default();
    rec.0.borrow_mut().watch = watch;
    let sim = retx::config::build_with_observer(scenario(text), rec.clone()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let out = sim.run(&mut |_, _| true).expect("no abort");
    let tally = rec.0.take();
    (out, tally)
}

fn assert_all_delivered(out: &RunOutput, sizes: &[u64]) {
    assert_eq!(out.flows.len(), sizes.len());
    for (f, &size) in out.flows.iter().zip(sizes) {
        assert!(f.finish.is_some(), "flow {} unfinished: {f:?}", f.flow_id);
        assert_eq!(f.delivered_bytes, size, "flow {}", f.flow_id);
    }
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// Loss runs in a sequence of per-packet outcomes: (packets lost, runs of consecutive losses).
fn runs(outcomes: &[bool]) -> (u64, u64) {
    let lost = outcomes.iter().filter(|&&l| l).count() as u64;
    let bursts = outcomes.windows(2).filter(|w| w[1] && !w[0]).count() as u64 + outcomes.first().is_some_and(|&l| l) as u64;
    (lost, bursts)
}

// ---------------------------------------------------------------------------------------------
// 1. Gilbert-Elliott burst loss and per-kind rules
// ---------------------------------------------------------------------------------------------

/// Two hosts on one 40 Gbps switch (1 us links), one endless go-back-N flow h0 -> h1 without
/// congestion control for `duration`, and `loss` (TOML `[[loss]]` tables).
fn two_hosts_long_flow(duration: &str, loss: &str) -> String {
    format!(
        r#"
name = "ge"
seed = 11
duration = "{duration}"
[topology]
kind = "single-switch"
hosts = 2
host_link = "40Gbps"
link_delay = "1us"
[transport]
recovery = "gbn"
cc = "none"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[workload]
kind = "long-flows"
pairs = [["h0", "h1"]]
{loss}
"#
    )
}

const GE_P: f64 = 0.005;
const GE_R: f64 = 0.2;

/// A Gilbert-Elliott rule on the switch's link to h1 loses data packets at its stationary rate
/// p / (p + r) (within 4 standard deviations of the chain's estimate) in bursts of mean 1/r.
#[test]
fn gilbert_elliott_loses_at_the_stationary_rate_in_bursts() {
    let loss = format!("[[loss]]\nat = \"link:sw0->h1\"\nmodel = \"gilbert-elliott\"\np = {GE_P}\nr = {GE_R}\n");
    let text = two_hosts_long_flow("100ms", &loss);
    let watch = port(&topology(&text), "sw0", "h1");
    let (out, t) = run_observed(&text, Some(watch));
    let n = t.watched.len() as f64;
    let (lost, bursts) = runs(&t.watched);
    let pi = GE_P / (GE_P + GE_R);
    // The loss indicator is the chain's state (loss_good 0, loss_bad 1): a two-state Markov
    // chain with second eigenvalue 1 - p - r, so the variance of the mean is inflated by
    // (2 - p - r) / (p + r) over the binomial one.
    let sd = (pi * (1.0 - pi) / n * (2.0 - GE_P - GE_R) / (GE_P + GE_R)).sqrt();
    let rate = lost as f64 / n;
    let mean_burst = lost as f64 / bursts as f64;
    println!("GE: {n} data packets on the lossy wire, {lost} lost in {bursts} bursts: rate {rate:.5} (stationary {pi:.5}, sd {sd:.5}), mean burst {mean_burst:.2} (1/r = {})", 1.0 / GE_R);
    assert!((rate - pi).abs() < 4.0 * sd, "loss rate {rate} vs {pi} (sd {sd})");
    // Bursts are geometric with mean 1/r = 5, sd sqrt(1 - r)/r = 4.5 each; over > 1000 bursts
    // the mean's sd is < 3 %: allow 10 %.
    assert!(bursts > 1000, "{bursts}");
    assert!((mean_burst - 1.0 / GE_R).abs() < 0.1 / GE_R, "mean burst {mean_burst}");
    // Every data drop of the run is the rule's, on that wire, and the counters agree.
    assert_eq!(out.counters.drops_loss, lost);
    assert_eq!(t.loss_drops.get(&(watch, false)), None, "no control packet is targeted");
    assert_eq!(out.counters.bad_deliveries, 0);
}

/// The general stationary rate (r loss_good + p loss_bad) / (p + r) holds with lossy good and
/// leaky bad states (within 4 sd of a binomial with the chain's variance inflation).
#[test]
fn gilbert_elliott_with_loss_in_both_states_matches_the_general_formula() {
    let (p, r, lg, lb): (f64, f64, f64, f64) = (0.01, 0.1, 0.002, 0.5);
    let loss = format!("[[loss]]\nat = \"link:sw0->h1\"\nmodel = \"gilbert-elliott\"\np = {p}\nr = {r}\nloss_good = {lg}\nloss_bad = {lb}\n");
    let text = two_hosts_long_flow("50ms", &loss);
    let watch = port(&topology(&text), "sw0", "h1");
    let (_, t) = run_observed(&text, Some(watch));
    let n = t.watched.len() as f64;
    let (lost, _) = runs(&t.watched);
    let mean = (r * lg + p * lb) / (p + r);
    // Variance of the mean: binomial part plus the state's autocorrelated part,
    // (lb - lg)^2 pi_bad (1 - pi_bad) (1 + l) / (1 - l) / n with l = 1 - p - r.
    let pb = p / (p + r);
    let l = 1.0 - p - r;
    let var = (mean * (1.0 - mean) + (lb - lg).powi(2) * pb * (1.0 - pb) * (1.0 + l) / (1.0 - l)) / n;
    let rate = lost as f64 / n;
    println!("GE general: {n} packets, rate {rate:.5} vs {mean:.5} (sd {:.5})", var.sqrt());
    assert!((rate - mean).abs() < 4.0 * var.sqrt(), "loss rate {rate} vs {mean}");
}

/// Burst loss costs go-back-N fewer loss episodes than Bernoulli loss of the same mean rate:
/// far fewer NAKs and loss runs on the wire, and more goodput.
#[test]
fn bursty_loss_gives_go_back_n_fewer_episodes_than_bernoulli_of_the_same_rate() {
    let pi = GE_P / (GE_P + GE_R);
    let ge = format!("[[loss]]\nat = \"link:sw0->h1\"\nmodel = \"gilbert-elliott\"\np = {GE_P}\nr = {GE_R}\n");
    let be = format!("[[loss]]\nat = \"link:sw0->h1\"\nrate = {pi}\n");
    let (a, b) = (two_hosts_long_flow("20ms", &ge), two_hosts_long_flow("20ms", &be));
    let watch = port(&topology(&a), "sw0", "h1");
    let (out_ge, t_ge) = run_observed(&a, Some(watch));
    let (out_be, t_be) = run_observed(&b, Some(watch));
    let (lost_ge, runs_ge) = runs(&t_ge.watched);
    let (lost_be, runs_be) = runs(&t_be.watched);
    let (f_ge, f_be) = (&out_ge.flows[0], &out_be.flows[0]);
    println!(
        "same mean loss {pi:.4}: GE lost {lost_ge} in {runs_ge} runs, {} NAKs, {:.2} Gbps; Bernoulli lost {lost_be} in {runs_be} runs, {} NAKs, {:.2} Gbps",
        f_ge.notifications.naks,
        f_ge.goodput_bps / 1e9,
        f_be.notifications.naks,
        f_be.goodput_bps / 1e9
    );
    // Both lose about pi of the packets on the wire (loose: 30 %), ...
    for (lost, n) in [(lost_ge, t_ge.watched.len()), (lost_be, t_be.watched.len())] {
        let rate = lost as f64 / n as f64;
        assert!((rate - pi).abs() < 0.3 * pi, "rate {rate} vs {pi}");
    }
    // ... but in runs of 1/r = 5 versus about 1, so GE has at least 3x fewer loss episodes,
    // fewer go-back NAKs and more goodput.
    assert!(runs_ge * 3 < runs_be, "runs: GE {runs_ge}, Bernoulli {runs_be}");
    assert!(f_ge.notifications.naks * 2 < f_be.notifications.naks, "NAKs: GE {}, Bernoulli {}", f_ge.notifications.naks, f_be.notifications.naks);
    assert!(f_ge.goodput_bps > f_be.goodput_bps, "goodput: GE {}, Bernoulli {}", f_ge.goodput_bps, f_be.goodput_bps);
}

/// A rule with `kinds = ["ack"]` drops ACKs only: no data packet is lost, the flow completes
/// with every byte delivered and no bad delivery.
#[test]
fn a_rule_on_acks_drops_only_acks() {
    for recovery in ["gbn", "irn"] {
        let text = format!(
            r#"
name = "ack-loss"
seed = 5
duration = "100ms"
[topology]
kind = "single-switch"
hosts = 2
host_link = "40Gbps"
link_delay = "1us"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[recovery.gbn]
rto = "200us"
[[loss]]
at = "switch:sw0"
model = "gilbert-elliott"
p = 0.02
r = 0.3
kinds = ["ack"]
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "2MB" }}]
"#
        );
        let (out, t) = run_observed(&text, None);
        let data_lost: u64 = t.loss_drops.iter().filter(|(k, _)| k.1).map(|(_, v)| v).sum();
        println!("{recovery}: ACK-only rule dropped {:?}, data {data_lost}, fct {:?}", t.control_loss, out.flows[0].fct());
        assert_eq!(data_lost, 0);
        assert!(t.control_loss.get("Ack").copied().unwrap_or(0) > 10, "{:?}", t.control_loss);
        assert!(t.control_loss.keys().all(|k| k == "Ack"), "{:?}", t.control_loss);
        assert_eq!(out.counters.drops_loss, t.control_loss.values().sum::<u64>());
        assert_all_delivered(&out, &[2_000_000]);
    }
}

/// Validation names the field: `rate` with gilbert-elliott, a missing `p`, `r = 0`, and
/// `control` together with `kinds`.
#[test]
fn gilbert_elliott_rules_are_validated_field_by_field() {
    let base = |rule: &str| two_hosts_long_flow("1ms", &format!("[[loss]]\nat = \"switch:sw0\"\n{rule}"));
    let cases = [
        ("model = \"gilbert-elliott\"\np = 0.01\nr = 0.2\nrate = 0.01\n", "loss[0].rate", "not used"),
        ("model = \"gilbert-elliott\"\nr = 0.2\n", "loss[0].p", "needs p"),
        ("model = \"gilbert-elliott\"\np = 0.01\nr = 0\n", "loss[0].r", "greater than 0"),
        ("model = \"gilbert-elliott\"\np = 0.01\nr = 0.2\ncontrol = true\nkinds = [\"ack\"]\n", "loss[0].control", "not both"),
        ("model = \"gilbert-elliott\"\np = 1.5\nr = 0.2\n", "loss[0].p", "out of range"),
        ("rate = 0.01\np = 0.1\n", "loss[0].p", "not used"),
        ("model = \"gilbert-elliott\"\np = 0.01\nr = 0.2\nkinds = [\"syn\"]\n", "loss[0].kinds[0]", "unknown variant `syn`"),
    ];
    for (rule, field, words) in cases {
        let text = base(rule);
        let e = match Scenario::from_toml(&text) {
            Err(e) => e,
            Ok(mut s) => retx::config::validate(&mut s).err().unwrap_or_else(|| panic!("accepted:\n{rule}")),
        };
        println!("{rule:?} -> {e}");
        assert_eq!(e.field, field, "{rule:?}: {e}");
        assert!(e.message.contains(words), "{rule:?}: {e}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Spraying and flowlets
// ---------------------------------------------------------------------------------------------

/// A leaf-spine of 4 spines and 2 leaves (h0, h1 on leaf0; h2, h3 on leaf1), 40 Gbps
/// everywhere, one 4 MB flow h0 -> h2 without congestion control; `routing` is the body of
/// `[routing]`.
fn four_spines(routing: &str) -> String {
    format!(
        r#"
name = "spray"
seed = 3
duration = "20ms"
[topology]
kind = "leaf-spine"
spines = 4
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
fabric_link = "40Gbps"
link_delay = "1us"
[transport]
recovery = "irn"
cc = "none"
[routing]
{routing}
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h2", size = "4MB" }}]
"#
    )
}

/// Data packets of flow 0 leaving leaf0 towards each spine.
fn per_spine(routing: &str) -> (Vec<u64>, RunOutput) {
    let text = four_spines(routing);
    let topo = topology(&text);
    let (out, t) = run_observed(&text, None);
    let counts = (0..4).map(|s| t.data_wire.get(&(port(&topo, "leaf0", &format!("spine{s}")), 0)).copied().unwrap_or(0)).collect();
    assert_all_delivered(&out, &[4_000_000]);
    (counts, out)
}

/// Packets of a 4 MB flow: 4e6 / 1024 rounded up (no loss, no retransmission).
const SPRAY_PKTS: u64 = 3907;

/// ECMP keeps a flow on exactly one spine.
#[test]
fn ecmp_keeps_a_flow_on_one_spine() {
    let (c, _) = per_spine("policy = \"ecmp\"");
    println!("ecmp: {c:?}");
    assert_eq!(c.iter().filter(|&&n| n > 0).count(), 1, "{c:?}");
    assert_eq!(c.iter().sum::<u64>(), SPRAY_PKTS);
}

/// Round-robin spraying gives every spine a quarter of the packets (within one packet);
/// random spraying within 15 % (5 binomial sd).
#[test]
fn spraying_shares_a_flow_over_every_spine() {
    let (rr, _) = per_spine("policy = \"spray-round-robin\"");
    let (rnd, _) = per_spine("policy = \"spray-random\"");
    println!("round robin {rr:?}, random {rnd:?}");
    for c in [&rr, &rnd] {
        assert_eq!(c.iter().sum::<u64>(), SPRAY_PKTS);
    }
    let quarter = SPRAY_PKTS as f64 / 4.0;
    assert!(rr.iter().all(|&n| (n as f64 - quarter).abs() <= 1.0), "{rr:?}");
    assert!(rnd.iter().all(|&n| (n as f64 - quarter).abs() < 0.15 * quarter), "{rnd:?}");
}

/// Flowlets: with a gap (50 us) far above the 0.2 us between packets the flow stays on one
/// spine; with a 1 ns gap every packet starts a flowlet and the flow uses every spine (each
/// at least 15 %).
#[test]
fn flowlets_stay_on_one_path_unless_the_gap_is_tiny() {
    let (long, _) = per_spine("policy = \"flowlet\"\nflowlet_gap = \"50us\"");
    let (tiny, _) = per_spine("policy = \"flowlet\"\nflowlet_gap = \"1ns\"");
    println!("flowlet 50us {long:?}, 1ns {tiny:?}");
    assert_eq!(long.iter().filter(|&&n| n > 0).count(), 1, "{long:?}");
    assert!(tiny.iter().all(|&n| n as f64 > 0.15 * SPRAY_PKTS as f64), "{tiny:?}");
}

/// Per-packet entropy at the source makes plain ECMP switches spread one flow over every
/// spine (each within 15 % of a quarter).
#[test]
fn per_packet_entropy_spreads_a_flow_under_ecmp() {
    let (c, _) = per_spine("policy = \"ecmp\"\nentropy = \"per-packet\"");
    println!("ecmp per-packet entropy: {c:?}");
    let quarter = SPRAY_PKTS as f64 / 4.0;
    assert!(c.iter().all(|&n| (n as f64 - quarter).abs() < 0.15 * quarter), "{c:?}");
}

/// Random spraying over 4 spines of 10 Gbps (their sum is one 40 Gbps host link) with two
/// flows sharing them: queues differ per spine, packets arrive out of order (every scheme
/// NAKs, none does under ECMP), every scheme still delivers every byte exactly once, and
/// go-back-N pays for the reordering with over 5x the retransmitted bytes of IRN.
#[test]
fn transports_complete_under_spraying_with_reordering() {
    let mut sprayed_retx = HashMap::new();
    for recovery in ["gbn", "irn", "melo", "gbone"] {
        for policy in ["ecmp", "spray-random"] {
            let text = format!(
                r#"
name = "spray-reorder"
seed = 9
duration = "200ms"
[topology]
kind = "leaf-spine"
spines = 4
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
fabric_link = "10Gbps"
link_delay = "1us"
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[routing]
policy = "{policy}"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h2", size = "2MB" }}, {{ src = "h1", dst = "h3", size = "2MB", start = "5us" }}]
"#
            );
            let out = run(&text);
            let f = &out.flows;
            println!(
                "{recovery:>5} {policy:>12}: fct {:.1} / {:.1} us, retx {} / {} B, naks {} / {}, timeouts {} / {}, drops buffer {}",
                f[0].fct().map_or(f64::NAN, |t| t.as_us_f64()),
                f[1].fct().map_or(f64::NAN, |t| t.as_us_f64()),
                f[0].retx_bytes,
                f[1].retx_bytes,
                f[0].notifications.total(),
                f[1].notifications.total(),
                f[0].timeouts,
                f[1].timeouts,
                out.counters.drops_buffer
            );
            assert_all_delivered(&out, &[2_000_000, 2_000_000]);
            let naks: u64 = f.iter().map(|x| x.notifications.total()).sum();
            let retx: u64 = f.iter().map(|x| x.retx_bytes).sum();
            if policy == "ecmp" {
                assert_eq!((naks, retx), (0, 0), "{recovery}: in order on one path each");
            } else {
                assert!(naks > 100, "{recovery}: {naks} NAKs under spraying");
                sprayed_retx.insert(recovery, retx);
            }
        }
    }
    assert!(sprayed_retx["gbn"] > 5 * sprayed_retx["irn"], "{sprayed_retx:?}");
}

// ---------------------------------------------------------------------------------------------
// 3. Egress queues and DRR
// ---------------------------------------------------------------------------------------------

/// The golden-style leaf-spine run: 2 x 2 of 40 Gbps, four 200 KB cross-fabric flows under
/// DCQCN with 2 % loss of every packet kind at spine0; `switch` is the body of `[switch]`.
fn queues_scenario(recovery: &str, switch: &str) -> String {
    format!(
        r#"
name = "queues"
seed = 7
duration = "1s"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
fabric_link = "40Gbps"
link_delay = "1us"
[switch]
{switch}
[transport]
recovery = "{recovery}"
cc = "dcqcn"
[recovery.gbn]
rto = "200us"
nak_interval = "20us"
[[loss]]
at = "switch:spine0"
rate = 0.02
control = true
[workload]
kind = "flow-list"
flows = [
  {{ src = "h0", dst = "h2", size = "200KB" }},
  {{ src = "h1", dst = "h3", size = "200KB", start = "3us" }},
  {{ src = "h2", dst = "h1", size = "200KB", start = "5us" }},
  {{ src = "h3", dst = "h0", size = "200KB", start = "7us" }},
]
"#
    )
}

/// Everything a run's result holds except the event count (an engine detail).
fn result_digest(out: &RunOutput) -> String {
    let mut c = out.counters.clone();
    c.events = 0;
    format!("{:?}\n{c:?}\nend {:?} in flight {}", out.flows, out.end, out.packets_in_flight)
}

/// Since all data uses queue 1, 2 to 8 queues give bit-identical results, and so does DRR
/// (any quantum) with one data queue; with 1 queue control and data share one FIFO and every
/// flow still completes.
#[test]
fn queue_count_and_drr_change_nothing_while_one_data_queue_is_used() {
    for recovery in ["gbn", "irn"] {
        let reference = run(&queues_scenario(recovery, "queues = 2"));
        assert_all_delivered(&reference, &[200_000; 4]);
        let want = result_digest(&reference);
        for q in 3..=8 {
            for discipline in ["strict-priority", "drr"] {
                let out = run(&queues_scenario(recovery, &format!("queues = {q}\ndiscipline = \"{discipline}\"")));
                assert_eq!(result_digest(&out), want, "{recovery}, queues = {q}, {discipline}");
            }
        }
        for quantum in ["64B", "1500B", "9000B"] {
            let out = run(&queues_scenario(recovery, &format!("discipline = \"drr\"\ndrr_quantum = \"{quantum}\"")));
            assert_eq!(result_digest(&out), want, "{recovery}, drr quantum {quantum}");
        }
        let one = run(&queues_scenario(recovery, "queues = 1"));
        println!(
            "{recovery}: 2 queues fct {:?} us; 1 queue fct {:?} us",
            reference.flows.iter().map(|f| f.fct().unwrap().as_us_f64()).collect::<Vec<_>>(),
            one.flows.iter().map(|f| f.fct().map(|t| t.as_us_f64())).collect::<Vec<_>>()
        );
        assert_all_delivered(&one, &[200_000; 4]);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Per-link ECN profiles
// ---------------------------------------------------------------------------------------------

/// Three 40 Gbps senders into h0 on one switch (500 KB each) under DCQCN; `ecn` is the inline
/// table of `[switch] ecn`, `switch` more `[switch]` keys.
fn incast(ecn: &str, switch: &str) -> String {
    format!(
        r#"
name = "ecn"
seed = 2
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "40Gbps"
link_delay = "1us"
[switch]
ecn = {{ {ecn} }}
{switch}
[transport]
recovery = "irn"
cc = "dcqcn"
[workload]
kind = "incast"
receiver = "h0"
senders = ["h1", "h2", "h3"]
size = "500KB"
"#
    )
}

/// A profile for the host links' rate with a tiny kmin marks far more than the default
/// profile; a profile for a rate no port has leaves the run bit-identical to the default; with
/// ECN disabled a profile marks nothing.
#[test]
fn per_link_ecn_profiles_apply_by_egress_rate() {
    let default = run(&incast("enabled = true", ""));
    let low = run(&incast("enabled = true, per_link = [{ rate = \"40Gbps\", kmin = \"1KB\", kmax = \"3KB\", pmax = 1.0 }]", ""));
    let other = run(&incast("enabled = true, per_link = [{ rate = \"100Gbps\", kmin = \"1KB\", kmax = \"3KB\", pmax = 1.0 }]", ""));
    let off = run(&incast("enabled = false, per_link = [{ rate = \"40Gbps\", kmin = \"1KB\", kmax = \"3KB\", pmax = 1.0 }]", ""));
    let marks = |o: &RunOutput| o.counters.ecn_marks;
    println!("ECN marks: default {}, 40G low profile {}, 100G profile {}, disabled {}", marks(&default), marks(&low), marks(&other), marks(&off));
    for o in [&default, &low, &other, &off] {
        assert_all_delivered(o, &[500_000; 3]);
    }
    assert!(marks(&default) > 0);
    assert!(marks(&low) > 5 * marks(&default), "{} vs {}", marks(&low), marks(&default));
    // 1500 data packets cross the switch: the low profile marks a good share of them.
    assert!(marks(&low) > 150, "{}", marks(&low));
    assert_eq!(result_digest(&other), result_digest(&default));
    assert_eq!(marks(&off), 0);
}

/// With one egress queue data shares queue 0 with control, and is still ECN-marked (within
/// 25 % of the two-queue run's marks with the same aggressive profile); PFC, which cannot
/// pause queue 0, is refused with one queue.
#[test]
fn one_queue_still_marks_data_and_refuses_pfc() {
    let low = "enabled = true, per_link = [{ rate = \"40Gbps\", kmin = \"1KB\", kmax = \"3KB\", pmax = 1.0 }]";
    let two = run(&incast(low, "queues = 2"));
    let one = run(&incast(low, "queues = 1"));
    println!("ECN marks: 2 queues {}, 1 queue {}", two.counters.ecn_marks, one.counters.ecn_marks);
    assert_all_delivered(&one, &[500_000; 3]);
    let (a, b) = (two.counters.ecn_marks as f64, one.counters.ecn_marks as f64);
    assert!((a - b).abs() < 0.25 * a, "marks: 2 queues {a}, 1 queue {b}");
    let e = retx::run_toml(&incast("enabled = true", "queues = 1\npfc = { enabled = true }")).err().expect("refused");
    assert_eq!(e.field, "switch.queues", "{e}");
}

// ---------------------------------------------------------------------------------------------
// 5. Host clocks
// ---------------------------------------------------------------------------------------------

fn clocked(clock: &str) -> String {
    format!(
        r#"
name = "clock"
seed = 4
duration = "50ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 2
host_link = "40Gbps"
fabric_link = "40Gbps"
link_delay = "1us"
[nic]
{clock}
[transport]
recovery = "irn"
cc = "dcqcn"
[[loss]]
at = "switch:spine1"
rate = 0.01
[workload]
kind = "flow-list"
flows = [
  {{ src = "h0", dst = "h2", size = "1MB" }},
  {{ src = "h1", dst = "h3", size = "1MB", start = "10us" }},
  {{ src = "h2", dst = "h0", size = "300KB", start = "20us" }},
]
"#
    )
}

/// Every host's clock 100 us ahead and 50 ppm fast: transports see local time, every flow
/// still completes with every byte, and FCTs (in true time) stay within 2 % (+ 1 us) of the
/// perfect clock's.
#[test]
fn host_clock_offset_and_drift_change_results_only_slightly() {
    let perfect = run(&clocked(""));
    let skewed = run(&clocked("clock_offset = \"100us\"\nclock_drift_ppm = 50.0"));
    let sizes = [1_000_000, 1_000_000, 300_000];
    assert_all_delivered(&perfect, &sizes);
    assert_all_delivered(&skewed, &sizes);
    for (a, b) in perfect.flows.iter().zip(&skewed.flows) {
        let (x, y) = (a.fct().unwrap().as_us_f64(), b.fct().unwrap().as_us_f64());
        println!("flow {}: fct perfect {x:.2} us, skewed clock {y:.2} us", a.flow_id);
        assert!((x - y).abs() < 0.02 * x + 1.0, "flow {}: {x} vs {y}", a.flow_id);
        assert!(b.finish.unwrap() <= skewed.end, "finish {:?} after the end {:?}", b.finish, skewed.end);
    }
}

// ---------------------------------------------------------------------------------------------
// 6. The observer
// ---------------------------------------------------------------------------------------------

/// The observer sees what the counters count: wire events = packet hops, drop events = loss +
/// buffer + unroutable drops, delivered bytes per flow = the flow records'.
#[test]
fn observer_events_agree_with_the_counters() {
    // An incast without PFC into a small buffer (buffer drops) plus loss of every kind at a
    // spine (loss drops), on a leaf-spine.
    let text = r#"
name = "observed"
seed = 8
duration = "100ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_link = "40Gbps"
fabric_link = "40Gbps"
link_delay = "1us"
[switch]
buffer = "60KB"
[transport]
recovery = "irn"
cc = "none"
[[loss]]
at = "switch:spine0"
rate = 0.01
control = true
[workload]
kind = "incast"
receiver = "h0"
fan_in = 7
size = "200KB"
"#;
    let (out, t) = run_observed(text, None);
    let c = &out.counters;
    println!("hops {}, drops loss {} buffer {} unroutable {}; observer wire {}, drops {:?}", c.packet_hops, c.drops_loss, c.drops_buffer, c.drops_unroutable, t.wire, t.drops);
    assert!(c.drops_loss > 0 && c.drops_buffer > 0, "{c:?}");
    assert_eq!(t.wire, c.packet_hops);
    assert_eq!(t.drops.iter().sum::<u64>(), c.drops_loss + c.drops_buffer + c.drops_unroutable);
    assert_eq!(t.drops, [c.drops_loss, c.drops_buffer, c.drops_unroutable]);
    for f in &out.flows {
        assert_eq!(t.delivered.get(&f.flow_id).copied().unwrap_or(0), f.delivered_bytes, "flow {}", f.flow_id);
    }
    assert_all_delivered(&out, &[200_000; 7]);
}

// ---------------------------------------------------------------------------------------------
// 7. Routing at scale
// ---------------------------------------------------------------------------------------------

/// 10,000 hosts (100 leaves x 100 hosts, 16 spines) build in under 10 s with routing tables
/// under 200 MB, and a short flow across the fabric runs.
#[test]
fn ten_thousand_hosts_build_fast_with_small_routing_tables() {
    let text = r#"
name = "scale"
duration = "50us"
[topology]
kind = "leaf-spine"
spines = 16
leaves = 100
hosts_per_leaf = 100
host_link = "100Gbps"
fabric_link = "400Gbps"
link_delay = "1us"
[transport]
recovery = "irn"
cc = "dcqcn"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h9999", size = "10KB" }]
"#;
    let wall = std::time::Instant::now();
    let sim = retx::config::build(scenario(text)).expect("builds");
    let built = wall.elapsed().as_secs_f64();
    let bytes = sim.routing_table_bytes();
    let out = sim.run(&mut |_, _| true).expect("no abort");
    let total = wall.elapsed().as_secs_f64();
    println!("10,000 hosts: built in {built:.2} s, routing tables {:.2} MB, run done at {:.2} s", bytes as f64 / 1e6, total);
    assert!(built < 10.0, "build took {built} s");
    assert!(bytes < 200_000_000, "{bytes} B of routing tables");
    assert_all_delivered(&out, &[10_000]);
}

/// A k = 32 fat-tree (8,192 hosts, 1,280 switches) builds in a few seconds with routing tables
/// under 150 MB (one table per ToR, 512 of them), the whole process stays under 1 GB, and a
/// short flow from pod 0 to pod 31 runs.
#[test]
fn a_k32_fat_tree_builds_fast_with_small_routing_tables() {
    let text = r#"
name = "scale-fat-tree"
duration = "50us"
[topology]
kind = "fat-tree"
k = 32
host_link = "100Gbps"
link_delay = "1us"
[transport]
recovery = "irn"
cc = "dcqcn"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h8191", size = "10KB" }]
"#;
    let wall = std::time::Instant::now();
    // The peak heap of this test's own thread (the counting allocator), not the process's
    // resident peak, which every test running beside it in the binary adds to.
    let (peak, (built, bytes, out, total)) = crate::util::alloc::measure(|| {
        let sim = retx::config::build(scenario(text)).expect("builds");
        let built = wall.elapsed().as_secs_f64();
        let bytes = sim.routing_table_bytes();
        let out = sim.run(&mut |_, _| true).expect("no abort");
        (built, bytes, out, wall.elapsed().as_secs_f64())
    });
    let peak_kb = peak as u64 / 1024;
    println!("k = 32 fat-tree: built in {built:.2} s, routing tables {:.2} MB, run done at {total:.2} s, peak heap {peak_kb} kB", bytes as f64 / 1e6);
    assert!(built < 10.0, "build took {built} s");
    assert!(bytes < 150_000_000, "{bytes} B of routing tables");
    assert!(peak_kb < 1_000_000, "peak heap {peak_kb} kB");
    assert_all_delivered(&out, &[10_000]);
}

/// A k = 4 fat-tree of 40 Gbps links, 1 us; `flows` is the workload's flow list.
fn fat_tree_k4(flows: &str, transport: &str) -> String {
    format!(
        r#"
name = "fat-tree"
seed = 5
duration = "20ms"
[topology]
kind = "fat-tree"
k = 4
host_link = "40Gbps"
link_delay = "1us"
[transport]
{transport}
[workload]
kind = "flow-list"
flows = [{flows}]
"#
    )
}

/// ECMP on a k = 4 fat-tree: 64 flows from pod 0 (h0..h3) to pods 2 and 3 (h8..h15), each with
/// its own 5-tuple, keep one core each and together use all (k/2)² = 4 cores, each for at
/// least 6 of them (the mean is 16; 6 is 3 binomial sd below).
#[test]
fn ecmp_spreads_flows_between_pods_over_every_core_of_a_fat_tree() {
    let flows: Vec<String> = (0..64).map(|i| format!("{{ src = \"h{}\", dst = \"h{}\", size = \"8KB\", start = \"{i}us\" }}", i % 4, 8 + i % 8)).collect();
    let text = fat_tree_k4(&flows.join(", "), "recovery = \"irn\"\ncc = \"none\"");
    let topo = topology(&text);
    let (out, t) = run_observed(&text, None);
    assert_all_delivered(&out, &[8_000; 64]);
    let mut flows_per_core = [0u32; 4];
    for flow in 0..64u32 {
        let mut cores = Vec::new();
        for (i, l) in topo.links.iter().enumerate() {
            let core = topo.nodes[l.b].name.strip_prefix("core").and_then(|c| c.parse::<usize>().ok());
            // Port 2i is the link's `a` end, the aggregation switch: data going up.
            if let (Some(c), Some(_)) = (core, t.data_wire.get(&(2 * i, flow))) {
                cores.push(c);
            }
        }
        cores.sort_unstable();
        cores.dedup();
        assert_eq!(cores.len(), 1, "flow {flow} went up to cores {cores:?}");
        flows_per_core[cores[0]] += 1;
    }
    println!("flows per core: {flows_per_core:?}");
    assert!(flows_per_core.iter().all(|&n| n >= 6), "{flows_per_core:?}");
}

/// A small run on a k = 4 fat-tree delivers every byte of every flow, once: a 6-to-1 incast
/// into h15 across pods under DCQCN with go-back-N, and cross-pod, intra-pod and same-ToR
/// flows alongside.
#[test]
fn a_fat_tree_run_delivers_every_byte() {
    let mut flows: Vec<String> = [0, 2, 4, 6, 8, 10].iter().map(|s| format!("{{ src = \"h{s}\", dst = \"h15\", size = \"300KB\" }}")).collect();
    for (s, d) in [(1, 9), (3, 2), (5, 7), (7, 12), (9, 13), (11, 0), (13, 4), (14, 3)] {
        flows.push(format!("{{ src = \"h{s}\", dst = \"h{d}\", size = \"500KB\", start = \"3us\" }}"));
    }
    let out = run(&fat_tree_k4(&flows.join(", "), "recovery = \"gbn\"\ncc = \"dcqcn\""));
    let mut sizes = vec![300_000; 6];
    sizes.extend([500_000; 8]);
    println!("end {}, drops buffer {}, ecn {}", out.end, out.counters.drops_buffer, out.counters.ecn_marks);
    assert_all_delivered(&out, &sizes);
}
