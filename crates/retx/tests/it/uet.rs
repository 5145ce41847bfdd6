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
