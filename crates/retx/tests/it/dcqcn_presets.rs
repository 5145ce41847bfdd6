//! DCQCN presets end to end: the HPCC ns-3 model's mechanisms (`preset = "ns3"`) in a real
//! incast, beside the paced notification point; and the preset's validation.

use retx::run_toml;

/// An 8-to-1 incast of 1 MB flows through one switch at 100 Gbps with PFC and ECN, DCQCN set
/// by `dcqcn` (the body of `[cc.dcqcn]`).
fn incast(dcqcn: &str) -> retx::world::RunOutput {
    let text = format!(
        r#"
name = "dcqcn-preset"
seed = 1
duration = "20ms"
[topology]
kind = "single-switch"
hosts = 9
host_link = "100Gbps"
[switch]
buffer = "4MB"
pfc = {{ enabled = true }}
[transport]
recovery = "gbn"
cc = "dcqcn"
[cc.dcqcn]
{dcqcn}
[workload]
kind = "incast"
receiver = "h0"
fan_in = 8
size = "1MB"
rounds = 1
interval = "1ms"
"#
    );
    run_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_ns3_preset_echoes_every_mark_and_still_delivers_every_byte() {
    let ns3 = incast("preset = \"ns3\"");
    let paced = incast("preset = \"ns3\"\ncnp = \"paced\"");
    for (name, out) in [("per-mark", &ns3), ("paced", &paced)] {
        assert_eq!(out.counters.bad_deliveries, 0, "{name}");
        assert!(out.flows.iter().all(|f| f.finish.is_some() && f.delivered_bytes == 1_000_000), "{name}");
        assert!(out.counters.ecn_marks > 0, "{name}: the incast must mark");
    }
    // Paced: at most one CNP per flow per 50 us while the flow runs. Per mark: one per marked
    // packet that triggered an ACK, far more.
    for f in &paced.flows {
        let fct = f.finish.unwrap() - f.start;
        assert!(f.cnps <= fct.0 / 50_000_000 + 1, "paced flow {}: {} CNPs in {fct:?}", f.flow_id, f.cnps);
    }
    let (marks_echoed, paced_cnps): (u64, u64) = (ns3.flows.iter().map(|f| f.cnps).sum(), paced.flows.iter().map(|f| f.cnps).sum());
    assert!(marks_echoed > 4 * paced_cnps, "per-mark {marks_echoed} vs paced {paced_cnps}");
    assert!(marks_echoed <= ns3.counters.ecn_marks, "an echo per marked packet at most");
}

#[test]
fn the_default_preset_is_unchanged_when_named() {
    let default = incast("");
    let named = incast("preset = \"retx\"");
    let fcts = |o: &retx::world::RunOutput| o.flows.iter().map(|f| (f.finish, f.cnps)).collect::<Vec<_>>();
    assert_eq!(fcts(&default), fcts(&named));
}

#[test]
fn a_periodic_cut_needs_a_period() {
    let text = "name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\nhosts = 2\n\
                [transport]\nrecovery = \"gbn\"\ncc = \"dcqcn\"\n[cc.dcqcn]\npreset = \"ns3\"\ndecrease_interval = \"0us\"\n\
                [workload]\nkind = \"flow-list\"\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]\n";
    let e = run_toml(text).err().expect("rejected").to_string();
    assert!(e.contains("cc.dcqcn.decrease_interval"), "{e}");
    let bad = text.replace("decrease_interval = \"0us\"", "cnp = \"every\"");
    let e = run_toml(&bad).err().expect("rejected").to_string();
    assert!(e.contains("per-mark") && e.contains("paced"), "{e}");
}
