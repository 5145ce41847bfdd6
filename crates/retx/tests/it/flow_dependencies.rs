//! Flows that start when others finish, through the whole engine: the workload hears of every
//! finished flow and starts its dependants (flow-list `after` and `gap`), whatever the scheme.

use retx::RunOutput;
use retx::sim::units::Time;

/// Three hosts on one switch (h0, h1, h2) at 10 Gbps; `flows` is the flow list.
fn star(recovery: &str, duration: &str, flows: &str) -> String {
    format!(
        r#"
name = "deps"
seed = 3
duration = "{duration}"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
link_delay = "1us"
[transport]
recovery = "{recovery}"
cc = "none"
[workload]
kind = "flow-list"
flows = [
{flows}
]
"#
    )
}

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// In start order (a waiting flow's `start` is only its earliest), so flow ids are positions.
const CHAIN: &str = r#"
  { src = "h0", dst = "h1", size = "100KB" },
  { src = "h2", dst = "h1", size = "50KB" },
  { src = "h1", dst = "h2", size = "20KB", after = [0], gap = "5us" },
  { src = "h1", dst = "h0", size = "20KB", after = [1, 2] },
  { src = "h2", dst = "h0", size = "10KB", after = [0], start = "200us" },
"#;

#[test]
fn a_dependant_starts_its_gap_after_the_last_of_its_prerequisites_finishes() {
    for recovery in ["gbn", "irn", "melo", "gbone"] {
        let out = run(&star(recovery, "10ms", CHAIN));
        let f = &out.flows;
        let finish = |i: usize| f[i].finish.unwrap_or_else(|| panic!("{recovery}: flow {i} unfinished: {:?}", f[i]));
        assert!(out.unfinished().is_none());
        assert_eq!(f[2].start, finish(0) + Time::from_us(5), "{recovery}: after flow 0, then the gap");
        assert_eq!(f[3].start, finish(1).max(finish(2)), "{recovery}: a barrier waits for the last");
        assert!(finish(0) + Time::from_us(5) < Time::from_us(200), "{recovery}: the case tests its own start time");
        assert_eq!(f[4].start, Time::from_us(200), "{recovery}: not before its own start");
        assert_eq!(f.iter().map(|r| r.delivered_bytes).sum::<u64>(), 200_000, "{recovery}: every byte once");
        // Same seed, same results.
        let again = run(&star(recovery, "10ms", CHAIN));
        assert_eq!(again.flows.iter().map(|r| (r.start, r.finish)).collect::<Vec<_>>(), f.iter().map(|r| (r.start, r.finish)).collect::<Vec<_>>());
    }
}

#[test]
fn after_names_flows_as_written_and_ids_follow_start_order() {
    // Written out of start order: flow 1 (waiting, earliest start 0) gets id 0.
    let out = run(&star("gbn", "10ms", r#"
  { src = "h0", dst = "h1", size = "20KB", start = "10us" },
  { src = "h2", dst = "h0", size = "10KB", after = [0] },
"#));
    let (waited, first) = (&out.flows[0], &out.flows[1]);
    assert_eq!((waited.src.as_str(), first.src.as_str()), ("h2", "h0"));
    assert_eq!(first.start, Time::from_us(10));
    assert_eq!(waited.start, first.finish.unwrap(), "it started when list flow 0 finished");
}

#[test]
fn a_dependant_whose_prerequisite_never_finishes_never_starts_and_is_reported() {
    // 100 KB at 10 Gbps takes 80 us: the run ends first.
    let out = run(&star("gbn", "50us", r#"
  { src = "h0", dst = "h1", size = "100KB" },
  { src = "h1", dst = "h2", size = "20KB", after = [0] },
"#));
    assert_eq!(out.flows[1].start, out.end, "it would have started after the run");
    assert_eq!(out.flows[1].sent_bytes, 0);
    let left = out.unfinished().expect("two flows unfinished");
    assert_eq!((left.count, left.never_started), (2, 1));
}

#[test]
fn waits_are_validated_naming_the_flow() {
    let refuse = |flows: &str| retx::run_toml(&star("gbn", "1ms", flows)).map(|_| ()).unwrap_err().to_string();
    assert_eq!(
        refuse(r#"{ src = "h0", dst = "h1", size = "1KB" }, { src = "h0", dst = "h1", size = "1KB", after = [2] },"#),
        "workload.flows[1].after: waits for flow 2, which does not exist (flows are 0..1)"
    );
    assert_eq!(
        refuse(r#"{ src = "h0", dst = "h1", size = "1KB", after = [1] }, { src = "h0", dst = "h1", size = "1KB", after = [0] },"#),
        "workload.flows[0].after: flows wait for each other in a cycle (0 -> 1 -> 0), so none would ever start"
    );
    assert_eq!(
        refuse(r#"{ src = "h0", dst = "h1", size = "1KB", gap = "1us" },"#),
        "workload.flows[0].gap: is the time after the flows in `after` finish; give after = [...] or leave gap out"
    );
}

#[test]
fn a_dependant_on_received_starts_when_the_last_byte_is_delivered_before_its_ack_returns() {
    for recovery in ["gbn", "irn", "melo", "gbone", "tcp", "stride"] {
        let cc = if recovery == "stride" { "stride" } else { "none" };
        let text = star(recovery, "10ms", r#"
  { src = "h0", dst = "h1", size = "100KB" },
  { src = "h1", dst = "h2", size = "20KB", after = [0], on = "received", gap = "2us" },
  { src = "h2", dst = "h0", size = "20KB", after = [0], on = "sent" },
"#)
        .replace("cc = \"none\"", &format!("cc = \"{cc}\""));
        let out = run(&text);
        let f = &out.flows;
        let (received, sent) = (f[0].received.expect("received"), f[0].finish.expect("finished"));
        // The ACK of the last packet crosses two 1 us links and the switch after delivery.
        assert!(received + Time::from_us(2) <= sent, "{recovery}: received {received:?}, sent {sent:?}");
        assert_eq!(f[1].start, received + Time::from_us(2), "{recovery}: on received, plus the gap");
        assert_eq!(f[2].start, sent, "{recovery}: on sent");
        assert!(f.iter().all(|r| r.received.is_some_and(|t| t <= r.finish.unwrap())), "{recovery}: every flow received before its sender finished");
    }
}

#[test]
fn on_without_after_is_refused_naming_the_field() {
    let Err(e) = retx::run_toml(&star("gbn", "1ms", r#"{ src = "h0", dst = "h1", size = "1KB", on = "received" }"#)) else { panic!("accepted") };
    assert_eq!(e.field, "workload.flows[0].on");
    let Err(e) = retx::run_toml(&star("gbn", "1ms", r#"{ src = "h0", dst = "h1", size = "1KB" }, { src = "h0", dst = "h1", size = "1KB", after = [0], on = "acked" }"#)) else { panic!("accepted") };
    assert_eq!(e.field, "workload.flows[1].on", "{e}");
}
