//! `[output] queues`: watched egress ports sampled with the time series, the bytes queued at
//! each sample and the most held since the previous one; names are validated.

fn run(queues: &str) -> Result<retx::world::RunOutput, String> {
    let text = format!(
        r#"
name = "queues"
duration = "1ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "100Gbps"
[transport]
cc = "none"
[workload]
kind = "long-flows"
pairs = [["h1", "h0"], ["h2", "h0"]]
[output]
sample_interval = "100us"
queues = [{queues}]
"#
    );
    retx::run_toml(&text).map_err(|e| e.to_string())
}

#[test]
fn a_congested_port_is_sampled_with_its_peak() {
    // Two senders at line rate into one 100 Gbps link without congestion control: the
    // queue toward h0 grows by about 100 Gbps x 100 us = 1.25 MB per interval (minus drops
    // once the buffer's dynamic threshold holds it); the uncongested port toward h1 is empty.
    let out = run("\"sw0->h0\", \"h1->sw0\"").unwrap();
    assert_eq!(out.queue_names, ["sw0->h0", "h1->sw0"]);
    let toward_h0: Vec<_> = out.queue_samples.iter().filter(|s| s.link == 0).collect();
    assert_eq!(toward_h0.len(), 10);
    for w in toward_h0.windows(2) {
        assert!(w[1].time > w[0].time);
    }
    assert!(toward_h0.iter().all(|s| s.peak >= s.bytes));
    assert!(toward_h0[0].peak > 1_000_000, "{:?}", toward_h0[0]);
    // h1's NIC paces at its line rate: its egress queue never holds data for long.
    assert!(out.queue_samples.iter().filter(|s| s.link == 1).all(|s| s.peak <= 2 * 1_100), "{:?}", out.queue_samples);
}

fn refused(queues: &str) -> String {
    match run(queues) {
        Err(e) => e,
        Ok(_) => panic!("{queues} must be refused"),
    }
}

#[test]
fn names_are_validated() {
    assert_eq!(refused("\"sw0-h0\""), "output.queues[0]: \"sw0-h0\": write a port as \"A->B\" (node A's port toward node B)");
    assert_eq!(refused("\"sw0->h0\", \"h1->h0\""), "output.queues[1]: no link between \"h1\" and \"h0\"");
    assert!(refused("\"sw9->h0\"").starts_with("output.queues[0]: no node named \"sw9\""));
}

#[test]
fn a_watched_port_reports_its_rate_its_marks_and_pfc() {
    // Two senders without congestion control into h0 through one switch, lossless (PFC) with
    // an ECN step at 10 KB: the port toward h0 runs at line rate in every full interval and
    // marks every data packet it sends; the switch pauses both senders' links.
    let text = r#"
name = "queues-pfc"
duration = "500us"
[topology]
kind = "single-switch"
hosts = 3
host_link = "100Gbps"
[switch]
ecn = { enabled = true, kmin = "10KB", kmax = "10KB", pmax = 1.0 }
pfc = { enabled = true }
[transport]
cc = "none"
[workload]
kind = "long-flows"
pairs = [["h1", "h0"], ["h2", "h0"]]
[output]
sample_interval = "100us"
queues = ["sw0->h0", "sw0->h1"]
"#;
    let out = retx::run_toml(text).unwrap_or_else(|e| panic!("{e}"));
    let toward_h0: Vec<_> = out.queue_samples.iter().filter(|s| s.link == 0).collect();
    assert_eq!(toward_h0.len(), 5);
    // After the first interval (the queue is still filling in it) the port is saturated.
    for s in &toward_h0[1..] {
        assert!(s.tx_bps > 99e9 && s.tx_bps <= 100e9 + 1.0, "{s:?}");
        // 100 Gbps x 100 us is ~1,190 packets of 1 KB, nearly all sent above the 10 KB step.
        assert!(s.ecn_marks > 1_100, "{s:?}");
    }
    // Every mark of the run happened at this port (the only congested one).
    assert_eq!(toward_h0.iter().map(|s| s.ecn_marks).sum::<u64>(), out.counters.ecn_marks);
    // sw0 -> h1 carries only h0's ACKs and sw0's pauses toward h1: it paused h1's link.
    let toward_h1: Vec<_> = out.queue_samples.iter().filter(|s| s.link == 1).collect();
    assert!(toward_h1.iter().map(|s| s.pauses_sent).sum::<u64>() > 0, "{toward_h1:?}");
    assert!(toward_h1.iter().all(|s| s.ecn_marks == 0 && s.tx_bps < 10e9));
    // Nobody pauses the switch's port toward h0 (h0 only receives).
    assert!(toward_h0.iter().all(|s| s.paused == 0 && s.pauses_sent == 0));
}
