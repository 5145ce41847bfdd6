//! Congestion control end to end: two long flows into one 40 Gbps receiver must share it,
//! with ECN doing the work (no drops) and the link kept busy. Go-back-N has no send window,
//! so only congestion control (or PFC) keeps the queue in check; IRN's in-flight cap of one
//! BDP would hide it.

fn incast(cc: &str, ecn: &str) -> retx::RunOutput {
    let text = format!(
        r#"
name = "two-to-one"
seed = 4
duration = "20ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "40Gbps"
link_delay = "2us"
[switch]
ecn = {ecn}
pfc = {{ enabled = true }}
[transport]
recovery = "gbn"
cc = "{cc}"
[workload]
kind = "long-flows"
pairs = [["h1", "h0"], ["h2", "h0"]]
[output]
sample_interval = "1ms"
"#
    );
    retx::run_toml(&text).expect("valid scenario")
}

fn check_sharing(out: &retx::RunOutput) {
    let g: Vec<f64> = out.flows.iter().map(|f| f.goodput_bps / 1e9).collect();
    // Line-rate goodput at 40 Gbps with 1024 B payloads is 38.2 Gbps; a fair share 19.1.
    let total: f64 = g.iter().sum();
    assert!(total > 34.0, "link underused: {g:?}");
    for x in &g {
        assert!((12.0..=26.0).contains(x), "unfair split: {g:?}");
    }
    assert!(out.counters.ecn_marks > 0);
    assert_eq!(out.counters.drops_buffer, 0);
    assert_eq!(out.counters.bad_deliveries, 0);
}

#[test]
fn dcqcn_shares_a_bottleneck() {
    let out = incast("dcqcn", r#"{ enabled = true, kmin = "5KB", kmax = "200KB", pmax = 0.01 }"#);
    check_sharing(&out);
    assert!(out.flows.iter().all(|f| f.cnps > 0));
}

#[test]
fn dctcp_shares_a_bottleneck() {
    // DCTCP marks on a step (Kmin = Kmax = K, Pmax = 1), as in HPCC's run.py.
    let out = incast("dctcp", r#"{ enabled = true, kmin = "120KB", kmax = "120KB", pmax = 1.0 }"#);
    check_sharing(&out);
}

#[test]
fn without_congestion_control_pfc_alone_keeps_it_lossless() {
    let out = incast("none", r#"{ enabled = false }"#);
    assert!(out.counters.pfc_pauses > 0);
    assert_eq!(out.counters.drops_buffer, 0);
    let total: f64 = out.flows.iter().map(|f| f.goodput_bps / 1e9).sum();
    assert!(total > 36.0, "{total}");
}
