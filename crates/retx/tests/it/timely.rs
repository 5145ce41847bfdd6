//! TIMELY end to end: two long flows into one receiver on a single 100 Gbps switch share it,
//! with the RTT (no ECN) doing the work and the bottleneck queue held near the RTT band the
//! controller aims for; the "+win" variant holds it far lower. And every bad `[cc.timely]`
//! value is refused on one line that names its field.

use retx::observe::Observer;
use retx::sim::units::Time;
use retx::net::packet::Packet;
use retx::RunOutput;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The deepest the watched egress queue got after `from`, in bytes, and the bytes each flow
/// delivered after `from`.
#[derive(Clone, Default)]
struct Watch {
    port: usize,
    from: Time,
    peak: Rc<Cell<u64>>,
    delivered: Rc<RefCell<Vec<u64>>>,
}

impl Observer for Watch {
    fn enqueue(&mut self, now: Time, port: usize, _queue: usize, _pkt: &Packet, queued: u64) {
        if port == self.port && now >= self.from && queued > self.peak.get() {
            self.peak.set(queued);
        }
    }
    fn deliver(&mut self, now: Time, _host: usize, flow: u32, bytes: u64) {
        if now >= self.from {
            let mut d = self.delivered.borrow_mut();
            if d.len() <= flow as usize {
                d.resize(flow as usize + 1, 0);
            }
            d[flow as usize] += bytes;
        }
    }
}

/// Runs `text`, watching the switch's egress port towards h0 from `from` on: returns the run,
/// that queue's peak and each flow's bytes delivered after `from`.
fn run(text: &str, from: Time) -> (RunOutput, u64, Vec<u64>) {
    let topo = retx::config::validate(&mut retx::Scenario::from_toml(text).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let (h0, sw) = (topo.find("h0").unwrap(), topo.find("sw0").unwrap());
    let i = topo.links.iter().position(|l| (l.a, l.b) == (h0, sw) || (l.a, l.b) == (sw, h0)).unwrap();
    let port = if topo.links[i].a == sw { 2 * i } else { 2 * i + 1 };
    let obs = Watch { port, from, ..Watch::default() };
    let sim = retx::config::build_with_observer(retx::Scenario::from_toml(text).unwrap(), obs.clone()).unwrap();
    let out = sim.run(&mut |_, _| true).unwrap();
    let delivered = obs.delivered.borrow().clone();
    (out, obs.peak.get(), delivered)
}

/// h1 sends to h0 from 0 and h2 from 5 ms (10 GB each, longer than the run) over 100 Gbps links
/// with 1 us of delay on one switch: go-back-N under TIMELY (`timely`: the body of
/// `[cc.timely]`), no ECN and no PFC, so only TIMELY keeps the 12 MB buffer from overflowing.
fn two_to_one(timely: &str) -> String {
    format!(
        r#"
name = "timely-two-to-one"
seed = 5
duration = "30ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "100Gbps"
link_delay = "1us"
[switch]
ecn = {{ enabled = false }}
pfc = {{ enabled = false }}
[transport]
recovery = "gbn"
cc = "timely"
[cc.timely]
{timely}
[workload]
kind = "flow-list"
flows = [{{ src = "h1", dst = "h0", size = "10GB" }}, {{ src = "h2", dst = "h0", size = "10GB", start = "5ms" }}]
"#
    )
}

/// Goodput of each flow over the last 10 ms of the run, in Gbps.
fn late_gbps(delivered: &[u64]) -> Vec<f64> {
    delivered.iter().map(|&b| b as f64 * 8.0 / 10e-3 / 1e9).collect()
}

const LATE: Time = Time::from_ms(20);

#[test]
fn two_flows_share_the_bottleneck_by_rtt_alone() {
    let (out, peak, delivered) = run(&two_to_one(""), LATE);
    let g = late_gbps(&delivered);
    eprintln!("rate only: {g:?}, peak queue {peak} B");
    // A fair share of the 95.5 Gbps of goodput 100 Gbps carries with 1000 B payloads is 47.8.
    assert_eq!(g.len(), 2);
    for x in &g {
        assert!((36.0..=52.0).contains(x), "unfair split: {g:?}");
    }
    assert!(g.iter().sum::<f64>() > 75.0, "link underused: {g:?}");
    assert_eq!((out.counters.drops_buffer, out.counters.ecn_marks, out.counters.pfc_pauses), (0, 0, 0));
    assert_eq!(out.counters.bad_deliveries, 0);
    // The queue sits where the RTT crosses T_low = 50 us (625 KB at 100 Gbps) and stays far
    // below T_high = 500 us (6.25 MB).
    assert!((300_000..1_500_000).contains(&peak), "peak queue {peak} B");
}

#[test]
fn a_lower_rtt_band_keeps_a_shorter_queue() {
    let (_, default_peak, _) = run(&two_to_one(""), LATE);
    let (out, peak, delivered) = run(&two_to_one("t_low = \"20us\"\nt_high = \"200us\""), LATE);
    let g = late_gbps(&delivered);
    eprintln!("t_low 20 us: {g:?}, peak queue {peak} B (default {default_peak} B)");
    assert!(peak < default_peak * 2 / 3, "{peak} vs {default_peak}");
    for x in &g {
        assert!((30.0..=52.0).contains(x), "unfair split: {g:?}");
    }
    assert_eq!(out.counters.drops_buffer, 0);
}

#[test]
fn the_variable_window_holds_the_queue_near_one_bdp() {
    // Base RTT 4 us of propagation plus a payload's serialization per hop: about 52 KB at
    // 100 Gbps. Two windows of it fill the pipe and leave at most about one BDP queued.
    let (out, peak, delivered) = run(&two_to_one("window = \"variable\""), LATE);
    let g = late_gbps(&delivered);
    eprintln!("variable window: {g:?}, peak queue {peak} B");
    for x in &g {
        assert!((45.0..=50.0).contains(x), "unfair split: {g:?}");
    }
    assert!(peak < 80_000, "peak queue {peak} B");
    assert_eq!((out.counters.drops_buffer, out.counters.bad_deliveries), (0, 0));
}

#[test]
fn every_bad_value_is_refused_on_one_line_naming_its_field() {
    for (body, field, hint) in [
        ("alpha = 0.0", "cc.timely.alpha", "out of range"),
        ("alpha = 1.5", "cc.timely.alpha", "at most 1"),
        ("beta = 1.5", "cc.timely.beta", "at most 1"),
        ("beta = -0.1", "cc.timely.beta", "greater than 0"),
        ("t_low = \"600us\"", "cc.timely.t_low", "less than t_high"),
        ("t_high = \"50us\"", "cc.timely.t_low", "less than t_high"),
        ("t_high = \"5\"", "cc.timely.t_high", "is not a time"),
        ("min_rtt = \"0us\"", "cc.timely.min_rtt", "greater than 0"),
        ("rate_ai = \"0Mbps\"", "cc.timely.rate_ai", "greater than 0"),
        ("rate_hai = \"10Mbps\"", "cc.timely.rate_hai", "below rate_ai"),
        ("min_rate = \"0Mbps\"", "cc.timely.min_rate", "greater than 0"),
        ("min_rate = \"fast\"", "cc.timely.min_rate", "is not a"),
        ("hai_after = -1", "cc.timely.hai_after", "u32"),
        ("window = \"dynamic\"", "cc.timely.window", "`none`, `fixed`, `variable`"),
        ("gain = 0.5", "cc.timely.gain", "unknown field"),
    ] {
        let e = retx::run_toml(&two_to_one(body)).err().unwrap_or_else(|| panic!("accepted: {body}")).to_string();
        assert!(e.starts_with(&format!("{field}: ")) && e.contains(hint) && !e.contains('\n'), "{body}: {e}");
    }
}
