//! UET's scenario surface and the two switch settings it brought: `[[switch.degraded]]` slows a
//! port by its factor, `ecn.to_hosts = false` stops marking toward hosts, and bad settings are
//! refused naming the field.

fn scenario(extra_switch: &str, recovery: &str) -> String {
    format!(
        r#"name = "uet"
duration = "5ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
[nic]
mtu = 1000
[switch]
pfc = {{ enabled = false }}
trim = {{ queue = 0, data_queue = "50KB" }}
{extra_switch}
[transport]
recovery = "uet"
cc = "none"
[recovery.uet]
{recovery}
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "500KB", start = "0us" }}]
"#
    )
}

#[test]
fn a_degraded_port_slows_the_flow_through_it_by_its_factor() {
    let fct = |extra: &str| {
        let out = retx::run_toml(&scenario(extra, "")).unwrap();
        assert!(out.unfinished().is_none() && out.counters.bad_deliveries == 0);
        out.flows[0].fct().unwrap().as_us_f64()
    };
    let (full, quarter) = (fct(""), fct("[[switch.degraded]]\nfrom = \"sw0\"\nto = \"h1\"\nfactor = 0.25"));
    // 500 KB at 10 Gbps is 400 us of serialisation at least; at 2.5 Gbps on the last hop, about
    // four times what the full link takes (the window, tiny on this network, limits both).
    assert!(full > 400.0, "{full}");
    assert!(quarter > 2.5 * full && quarter < 4.5 * full && quarter > 1_600.0, "{full} {quarter}");
    // The other direction of the same link is not degraded: h1 -> h0 runs at the full rate.
    let back = retx::run_toml(&scenario("[[switch.degraded]]\nfrom = \"sw0\"\nto = \"h1\"\nfactor = 0.25", "").replace("src = \"h0\", dst = \"h1\"", "src = \"h1\", dst = \"h0\"")).unwrap();
    assert!((back.flows[0].fct().unwrap().as_us_f64() - full).abs() < 0.05 * full, "{} {full}", back.flows[0].fct().unwrap().as_us_f64());
}

#[test]
fn ecn_toward_hosts_can_be_turned_off() {
    // Two senders into one receiver: the port toward it queues and marks, unless to_hosts = false.
    let two = |extra: &str| scenario(extra, "").replace(
        "flows = [{ src = \"h0\", dst = \"h1\", size = \"500KB\", start = \"0us\" }]",
        "flows = [{ src = \"h0\", dst = \"h1\", size = \"500KB\", start = \"0us\" }, { src = \"h2\", dst = \"h1\", size = \"500KB\", start = \"0us\" }]",
    );
    let marks = |extra: &str| retx::run_toml(&two(extra)).unwrap().counters.ecn_marks;
    assert!(marks("ecn = { enabled = true, kmin = \"5KB\", kmax = \"20KB\", pmax = 1.0 }") > 0);
    assert_eq!(marks("ecn = { enabled = true, kmin = \"5KB\", kmax = \"20KB\", pmax = 1.0, to_hosts = false }"), 0);
}

#[test]
fn bad_settings_are_refused_naming_the_field() {
    let err = |extra: &str, recovery: &str| retx::run_toml(&scenario(extra, recovery)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err("[[switch.degraded]]\nfrom = \"sw0\"\nto = \"h1\"\nfactor = 1.5", "").contains("switch.degraded[0].factor"));
    assert!(err("[[switch.degraded]]\nfrom = \"h0\"\nto = \"sw0\"\nfactor = 0.5", "").contains("switch.degraded[0].from"));
    assert!(err("[[switch.degraded]]\nfrom = \"sw0\"\nto = \"h9\"\nfactor = 0.5", "").contains("switch.degraded[0].to"));
    assert!(err("", "paths = 3").contains("recovery.uet.paths"));
    assert!(err("", "delivery = \"rod\"\npaths = 4").contains("recovery.uet.delivery"));
    let dcqcn = scenario("", "").replace("cc = \"none\"", "cc = \"dcqcn\"");
    assert!(retx::run_toml(&dcqcn).err().map(|e| e.to_string()).unwrap_or_default().contains("transport.cc"));
}

/// A 4:1 leaf-spine (8 hosts of 10 Gbps under each of 4 leaves, 2 spines) with every host
/// sending 300 KB to a host under another leaf, UET with `cc`, the receivers' oversubscribed
/// control as `oversub` says (empty: as uet-htsim decides).
fn oversubscribed(cc: &str, oversub: &str) -> retx::RunOutput {
    use crate::util::nets::{s, Flow, Net};
    let flows: Vec<Flow> = (0..32).map(|i| Flow::new(i, (i + 8) % 32, "300KB", 0)).collect();
    let topology = [("kind", s("leaf-spine")), ("spines", "2".into()), ("leaves", "4".into()), ("hosts_per_leaf", "8".into()), ("host_link", s("10Gbps")), ("fabric_link", s("10Gbps"))];
    let text = Net::custom(&topology)
        .named("uet-oversub", "20ms")
        .nic("mtu", 1000)
        .switch("pfc", "{ enabled = false }")
        .switch("trim", "{ queue = 0, data_queue = \"30KB\" }")
        .transport("uet", "none")
        .with(&format!("[recovery.uet]\ncc = \"{cc}\"\n{oversub}"))
        .with_flows(&flows);
    let out = retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(out.unfinished().is_none() && out.counters.bad_deliveries == 0);
    out
}

#[test]
fn rccc_alone_on_an_oversubscribed_fabric_paces_its_pulls_to_the_fabric() {
    // uet-htsim turns its receivers' OversubscribedCC on for RCCC alone on an oversubscribed
    // network (main_uec.cpp:688): without it, credit at the receivers' line rate overfills the
    // 4:1 uplinks and most packets are trimmed there; with it, the pacers slow on those trims
    // (measured: 3,770 trims and the last flow at 1,179 us, against 54,422 and 1,945 us).
    let (on, off) = (oversubscribed("rccc", ""), oversubscribed("rccc", "oversubscribed_cc = false"));
    assert!(off.counters.packets_trimmed > 3 * on.counters.packets_trimmed, "trimmed {} with the control, {} without", on.counters.packets_trimmed, off.counters.packets_trimmed);
    // Forced on, it is what auto gives here; NSCC runs without it (its own window reacts).
    let forced = oversubscribed("rccc", "oversubscribed_cc = true");
    assert_eq!(forced.counters.packets_trimmed, on.counters.packets_trimmed);
    let both = oversubscribed("both", "");
    assert_eq!(both.counters.packets_trimmed, oversubscribed("both", "oversubscribed_cc = false").counters.packets_trimmed);
}

#[test]
fn the_oversubscribed_control_needs_the_pull_pacer() {
    let err = retx::run_toml(&scenario("", "cc = \"nscc\"\noversubscribed_cc = true")).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("recovery.uet.oversubscribed_cc"), "{err}");
}

/// UUD on the 3-host switch: `flows` as a flow list, the receiver's timeout 200 us.
fn uud(flows: &str, trim: &str, extra: &str) -> retx::RunOutput {
    uud_rto(flows, trim, extra, "200us")
}

fn uud_rto(flows: &str, trim: &str, extra: &str, rto: &str) -> retx::RunOutput {
    uud_on("host_link = \"10Gbps\"", flows, trim, extra, rto)
}

/// [`uud_rto`] with the topology's link line `link`.
fn uud_on(link: &str, flows: &str, trim: &str, extra: &str, rto: &str) -> retx::RunOutput {
    let text = scenario("", &format!("cc = \"none\"\ndelivery = \"uud\"\nload_balancing = \"oblivious\"\nrto = \"{rto}\""))
        .replace("host_link = \"10Gbps\"", link)
        .replace("trim = { queue = 0, data_queue = \"50KB\" }", trim)
        .replace("flows = [{ src = \"h0\", dst = \"h1\", size = \"500KB\", start = \"0us\" }]", flows)
        + extra;
    let out = retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(out.unfinished().is_none(), "every UUD message is judged over");
    assert_eq!(out.counters.bad_deliveries, 0, "each packet delivered at most once, with its own payload");
    for f in &out.flows {
        assert_eq!((f.retx_bytes, f.timeouts), (0, 0), "UUD sends every packet once");
        assert_eq!(f.notifications.total(), 0, "and hears nothing back");
    }
    let report = |k: &str| out.scheme_report.iter().find(|r| r.0 == k).map(|r| r.1);
    assert_eq!((report("uet_acks_received"), report("uet_nacks_received")), (Some(0.0), Some(0.0)));
    out
}

const ONE: &str = "flows = [{ src = \"h0\", dst = \"h1\", size = \"500KB\", start = \"0us\" }]";
const TWO: &str = "flows = [{ src = \"h0\", dst = \"h1\", size = \"500KB\", start = \"0us\" }, { src = \"h2\", dst = \"h1\", size = \"500KB\", start = \"0us\" }]";
const TRIM: &str = "trim = { queue = 0, data_queue = \"50KB\" }";

#[test]
fn uud_on_a_clean_path_delivers_every_packet_at_the_line_rate_and_ends_with_the_last() {
    let out = uud(ONE, TRIM, "");
    let f = &out.flows[0];
    assert_eq!(f.delivered_bytes, 500_000);
    // 500 packets of 1,000 B + 64 B at 10 Gbps: 425.6 us of serialisation, two hops of
    // propagation and store-and-forward; no timeout waited for (every packet was heard of).
    let fct = f.fct().unwrap().as_us_f64();
    assert!(fct > 425.6 && fct < 440.0, "{fct}");
    // Its ideal is one way (the receiver ends it; no ACK comes back): on 50 us links (an ACK's
    // way back would add 100 us) the run is within 3 % of it, never below (64 B UET headers
    // against the ideal's RoCEv2 ones).
    let far = uud_on("host_link = \"10Gbps\"\nlink_delay = \"50us\"", ONE, TRIM, "", "200us");
    let (fct, ideal) = (far.flows[0].fct().unwrap().as_us_f64(), far.flows[0].ideal_fct.as_us_f64());
    assert!(fct >= ideal && fct < 1.03 * ideal, "{fct} against {ideal}");
}

#[test]
fn uud_loses_what_is_trimmed_and_judges_the_message_over_when_every_header_came() {
    // Two senders at the line rate into one 10 Gbps port: about half of the packets are
    // trimmed; their headers tell the receiver they are lost, so neither flow waits for the
    // 200 us timeout.
    let out = uud(TWO, TRIM, "");
    let trimmed = out.counters.packets_trimmed;
    let delivered: u64 = out.flows.iter().map(|f| f.delivered_bytes).sum();
    assert!(trimmed > 200, "{trimmed}");
    assert_eq!(1_000_000 - delivered, trimmed * 1_000, "every byte not delivered was trimmed");
    for f in &out.flows {
        assert!(f.fct().unwrap().as_us_f64() < 2.0 * 425.6, "{:?}", f.fct());
    }
}

#[test]
fn uud_waits_its_timeout_only_for_packets_lost_without_a_word() {
    // Without trimming a full 50 KB buffer drops packets silently: the receiver of a flow that
    // lost some judges it over `rto` after the last packet it heard of, so a longer timeout
    // moves exactly those flows' completions by the difference; a flow that lost nothing ends
    // with its last packet whatever the timeout.
    let (short, long) = (uud_rto(TWO, "buffer = \"50KB\"", "", "200us"), uud_rto(TWO, "buffer = \"50KB\"", "", "500us"));
    assert_eq!(short.counters.packets_trimmed, 0);
    let lossy = |f: &retx::stats::FlowRecord| f.delivered_bytes < f.size_bytes;
    assert!(short.flows.iter().any(lossy), "the buffer overflowed");
    for (a, b) in short.flows.iter().zip(&long.flows) {
        assert_eq!(a.delivered_bytes, b.delivered_bytes, "the receiver's timeout changes nothing in the network");
        let moved = b.fct().unwrap().as_us_f64() - a.fct().unwrap().as_us_f64();
        let expected = if lossy(a) { 300.0 } else { 0.0 };
        assert!((moved - expected).abs() < 1e-6, "flow {} moved {moved} us", a.flow_id);
    }
}

#[test]
fn uud_under_random_loss_delivers_what_arrives_once() {
    // 5 % loss on every link (data only: UUD sends nothing back): what is lost is lost, what
    // arrives is delivered once; the run is the same twice.
    let loss = "[[loss]]\nat = \"everywhere\"\nrate = 0.05\n";
    let out = uud(TWO, TRIM, loss);
    let lost: u64 = out.flows.iter().map(|f| f.size_bytes - f.delivered_bytes).sum();
    assert!(lost > 0);
    let again = uud(TWO, TRIM, loss);
    for (a, b) in out.flows.iter().zip(&again.flows) {
        assert_eq!((a.finish, a.delivered_bytes), (b.finish, b.delivered_bytes));
    }
}

#[test]
fn uud_refuses_what_needs_feedback_and_warns_of_inert_settings() {
    let err = |recovery: &str| retx::run_toml(&scenario("", recovery)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err("delivery = \"uud\"\nload_balancing = \"oblivious\"").contains("recovery.uet.cc"));
    assert!(err("delivery = \"uud\"\ncc = \"none\"").contains("recovery.uet.load_balancing"));
    assert!(err("delivery = \"uud\"\ncc = \"none\"\npaths = 1").is_empty(), "one path needs no steering");
    let warned = |recovery: &str| {
        let mut s = retx::Scenario::from_toml(&scenario("", recovery)).unwrap();
        let topo = retx::config::validate(&mut s).unwrap();
        retx::config::warnings(&s, &topo)
    };
    let w = warned("delivery = \"uud\"\ncc = \"none\"\npaths = 1\nsack_threshold = \"4KB\"\npull_rate = 0.5");
    assert!(w.iter().any(|l| l.starts_with("recovery.uet.sack_threshold: ignored")), "{w:?}");
    assert!(w.iter().any(|l| l.starts_with("recovery.uet.pull_rate: ignored")), "{w:?}");
    let w = warned("cc = \"rccc\"\ntarget_delay = \"5us\"");
    assert!(w.len() == 1 && w[0].starts_with("recovery.uet.target_delay: ignored"), "{w:?}");
    assert!(warned("cc = \"both\"\ntarget_delay = \"5us\"\npull_rate = 0.5").is_empty());
}

#[test]
fn uet_settings_that_do_nothing_or_overflow_are_named() {
    let warned = |text: String| {
        let mut s = retx::Scenario::from_toml(&text).unwrap();
        let topo = retx::config::validate(&mut s).unwrap();
        retx::config::warnings(&s, &topo)
    };
    let has = |w: &[String], field: &str| w.iter().any(|l| l.starts_with(field));
    let w = warned(scenario("", "quick_adapt = false\nqa_gate = 5\npaths = 1\nload_balancing = \"oblivious\"\ntrimming = false"));
    assert!(has(&w, "recovery.uet.qa_gate: ignored") && has(&w, "recovery.uet.load_balancing: ignored"), "{w:?}");
    assert!(has(&w, "recovery.uet.trimming: false, but [switch] trim trims"), "{w:?}");
    let untrimmed = scenario("", "").replace("trim = { queue = 0, data_queue = \"50KB\" }\n", "");
    assert!(has(&warned(untrimmed), "recovery.uet.trimming: true, but there is no [switch] trim"));
    let sprayed = scenario("", "") + "[routing]\npolicy = \"spray-random\"\n";
    assert!(has(&warned(sprayed), "routing.policy: \"spray-random\" picks each packet's port itself"));
    assert!(warned(scenario("", "")).is_empty(), "UET as the cross-check runs it warns of nothing");
    // NSCC's window bytes are 32-bit counts (uet-htsim's `uint32_t`): a first window past them
    // is refused, naming it.
    let big = scenario("", "initial_window = 1048576").replace("mtu = 1000", "mtu = 9000");
    let e = retx::run_toml(&big).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("recovery.uet.initial_window") && e.contains("32-bit"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 32, ..proptest::prelude::ProptestConfig::default() })]
    /// UUD under random loss (and duplication by the loss model's copies), trimming or a
    /// shared buffer alone, on a k = 4 fat-tree: every flow is judged over, every packet that
    /// arrives is delivered at most once with its own payload, nothing is sent twice, and what
    /// a flow delivered is at most its size.
    #[test]
    fn uud_delivers_at_most_once_and_always_ends(
        seed in 0u64..1_000,
        loss in 0u32..50,
        flows in proptest::collection::vec((0u32..16, 1u32..16, 1u32..300, 0u32..50), 1..12),
        trim in proptest::bool::ANY,
    ) {
        use crate::util::nets::{Flow, Net};
        let flows: Vec<Flow> = flows.iter().map(|&(a, d, kb, at)| Flow::new(a, (a + d) % 16, &format!("{kb}KB"), at)).collect();
        let net = Net::fat_tree(4, "10Gbps").named("uud-prop", "20ms").top("seed", seed).nic("mtu", 1000);
        let net = if trim { net.switch("trim", "{ queue = 0, data_queue = \"20KB\" }") } else { net.switch("buffer", "\"100KB\"") };
        let net = if loss > 0 { net.lossy(loss as f64 / 1_000.0) } else { net };
        let text = net.transport("uet", "none")
            .with("[recovery.uet]\ncc = \"none\"\ndelivery = \"uud\"\nload_balancing = \"oblivious\"\nrto = \"100us\"")
            .with_flows(&flows);
        let out = retx::run_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        proptest::prop_assert!(out.unfinished().is_none(), "{text}");
        proptest::prop_assert_eq!(out.counters.bad_deliveries, 0);
        for f in &out.flows {
            proptest::prop_assert!(f.delivered_bytes <= f.size_bytes && f.retx_bytes == 0 && f.sent_bytes == f.size_bytes, "{f:?}");
        }
    }
}
