//! Collective workloads through the whole engine: a ring all-reduce on an idle, lossless
//! network completes within 2 % of its ideal; each step starts when the data it forwards has
//! arrived; the tables add up; and bad settings are refused naming the field.

use retx::sim::units::Time;
use retx::RunOutput;

/// `hosts` hosts on one 100 Gbps switch; `collective` is the `[workload.collective]` body.
fn scenario(recovery: &str, hosts: u32, collective: &str, extra: &str) -> String {
    format!(
        r#"
name = "collective"
seed = 1
duration = "100ms"
[topology]
kind = "single-switch"
hosts = {hosts}
host_link = "100Gbps"
link_delay = "1us"
[transport]
recovery = "{recovery}"
cc = "none"
[workload]
kind = "collective"
[workload.collective]
{collective}
{extra}
"#
    )
}

fn run(text: &str) -> RunOutput {
    retx::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn a_ring_all_reduce_on_an_idle_network_completes_within_2_percent_of_its_ideal() {
    // Every rank sends and receives at once, so its link also carries the ACKs of what it
    // receives: with an ACK per packet (60 B per 1 KB) that alone is 5 % the ideal leaves out;
    // coalesced every 16 packets it is 0.4 %. (IRN caps its window at a BDP, which coalesced
    // ACKs starve: 31 % slower here, so it is left out.)
    for recovery in ["gbn", "melo"] {
        let out = run(&scenario(recovery, 8, "op = \"all-reduce\"\nranks = 8\nsize = \"8MB\"\niterations = 2\ngap = \"10us\"", "[nic]\nack_interval = 16"));
        assert_eq!(out.flows.len(), 2 * 14 * 8);
        assert_eq!(out.collectives.len(), 2);
        assert_eq!(out.collective_steps.len(), 2 * 14);
        for it in &out.collectives {
            let slowdown = it.slowdown().expect("finished");
            assert!((1.0..1.02).contains(&slowdown), "{recovery}: iteration {} slowdown {slowdown}", it.iteration);
            // Bus bandwidth close to the 100 Gbps links (payload only: headers cost ~5 %).
            let busbw = it.busbw_bps().unwrap() / 1e9;
            assert!((88.0..100.0).contains(&busbw), "{recovery}: busbw {busbw}");
        }
        // The second iteration starts its gap after the first's last flow is received.
        let (a, b) = (&out.collectives[0], &out.collectives[1]);
        assert_eq!(b.start, a.end.unwrap() + Time::from_us(10), "{recovery}");
        // Steps follow each other: each starts when the data of the previous one arrived.
        for w in out.collective_steps.windows(2).filter(|w| w[0].iteration == w[1].iteration) {
            assert!(w[1].start <= w[0].end.unwrap() && w[1].start >= w[0].start, "{recovery}: {w:?}");
            assert_eq!(w[0].bytes, 8 * 1_000_000, "{recovery}: each rank sends one 1 MB chunk per step");
        }
    }
}

#[test]
fn each_ring_step_waits_for_the_chunk_it_forwards() {
    let out = run(&scenario("irn", 4, "op = \"all-gather\"\nranks = 4\nsize = \"400KB\"", ""));
    let f = &out.flows;
    // Step 1, rank r (flow 4 + r) starts when step 0's send into r (flow r - 1) was received.
    for r in 0..4usize {
        let into_r = (r + 3) % 4;
        assert_eq!(f[4 + r].start, f[into_r].received.unwrap(), "rank {r}");
        assert_eq!((f[4 + r].src.as_str(), f[into_r].dst.as_str()), (f[into_r].dst.as_str(), f[4 + r].src.as_str()));
    }
    let steps = &out.collective_steps;
    assert_eq!(steps.iter().map(|s| s.flows).collect::<Vec<_>>(), [4, 4, 4]);
    let slowest = &f[steps[0].slowest_flow as usize];
    assert_eq!(Some(slowest.received.unwrap()), steps[0].end);
    assert_eq!(out.collectives[0].end, steps[2].end);
}

#[test]
fn every_algorithm_runs_to_completion_under_loss() {
    let cases = [
        ("all-reduce", "ring", 6),
        ("all-reduce", "halving-doubling", 8),
        ("all-reduce", "htsim-ring", 4),
        ("reduce-scatter", "ring", 5),
        ("all-to-all", "direct", 6),
        ("all-to-all", "rounds", 6),
    ];
    for (op, algorithm, ranks) in cases {
        let c = format!("op = \"{op}\"\nalgorithm = \"{algorithm}\"\nranks = {ranks}\nsize = \"600KB\"\nplacement = \"random\"");
        let loss = "[[loss]]\nat = \"everywhere\"\nrate = 0.001";
        let out = run(&scenario("irn", 8, &c, loss));
        assert!(out.unfinished().is_none(), "{op} {algorithm}");
        let it = &out.collectives[0];
        assert!(it.slowdown().unwrap() >= 1.0, "{op} {algorithm}: {it:?}");
        assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), out.collective_steps.iter().map(|s| s.bytes).sum::<u64>());
    }
}

#[test]
fn placement_puts_ranks_where_it_says() {
    // Group 0's two ranks send first (flows 0 and 1): their hosts.
    let hosts = |c: &str| -> Vec<String> { run(&scenario("gbn", 8, c, "")).flows[..2].iter().map(|f| f.src.clone()).collect() };
    assert_eq!(hosts("op = \"all-gather\"\nranks = 2\nsize = \"2KB\"\ngroups = 2"), ["h0", "h1"]);
    assert_eq!(hosts("op = \"all-gather\"\nranks = 2\nsize = \"2KB\"\ngroups = 2\nplacement = \"strided\""), ["h0", "h4"]);
}

#[test]
fn bad_collective_settings_are_refused_naming_the_field() {
    let cases = [
        ("op = \"all-gather\"\nranks = 4\nsize = \"4KB\"\nalgorithm = \"direct\"", "workload.collective.algorithm", "does not compute all-gather"),
        ("op = \"all-reduce\"\nranks = 6\nsize = \"6KB\"\nalgorithm = \"halving-doubling\"", "workload.collective.ranks", "power of two"),
        ("op = \"all-reduce\"\nranks = 1\nsize = \"6KB\"", "workload.collective.ranks", "out of range"),
        ("op = \"all-reduce\"\nranks = 9\nsize = \"9KB\"", "workload.collective.ranks", "the topology has 8"),
        ("op = \"all-reduce\"\nranks = 4\nsize = \"3B\"", "workload.collective.size", "empty chunk"),
        ("op = \"all-reduce\"\nranks = 4\nsize = \"4KB\"\nstride = 2", "workload.collective.stride", "strided"),
        ("op = \"all-reduce\"\nranks = 4\nsize = \"4KB\"\nplacement = \"strided\"\nstride = 3", "workload.collective.stride", "last rank on host 9"),
        ("op = \"all-reduce\"\nranks = 4\nsize = \"4KB\"\niterations = 0", "workload.collective.iterations", "out of range"),
        ("op = \"all-reduce\"\nranks = 4\nsize = \"4KB\"\nspeed = 3", "workload.collective.speed", "unknown field `speed`"),
    ];
    for (body, field, words) in cases {
        let Err(e) = retx::run_toml(&scenario("gbn", 8, body, "")) else { panic!("accepted: {body}") };
        assert_eq!(e.field, field, "{body}: {e}");
        assert!(e.to_string().contains(words) && !e.to_string().contains('\n'), "{body}: {e}");
    }
    let Err(e) = retx::run_toml(&scenario("gbn", 8, "", "").replace("[workload.collective]\n", "")) else { panic!("accepted") };
    assert_eq!(e.field, "workload.collective");
}
