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
