//! RED/ECN marking (`net::ecn::RedProfile`) at fixed queue depths: the exact marking
//! probability of the ramp (0 up to Kmin, linear to Pmax at Kmax, 1 above), the empirical
//! frequency of `should_mark` against it, and two cheap whole simulations (ECN off marks
//! nothing; a ramp whose Pmax is 0 marks nothing either; a low Kmin marks a congested port).

use retx::net::ecn::RedProfile;
use retx::sim::rng::{stream, Rng, Stream};

/// The DCQCN-style profile the tests use: 5 KB .. 205 KB, Pmax 0.2 (a ramp 200_000 bytes wide,
/// so every depth below is an exact fraction of it).
const P: RedProfile = RedProfile { kmin: 5_000, kmax: 205_000, pmax: 0.2 };

/// Reference: the RED ramp of the DCQCN paper's Fig. 4, written out independently.
fn reference(p: &RedProfile, q: u64) -> f64 {
    if q <= p.kmin {
        0.0
    } else if q <= p.kmax {
        p.pmax * ((q - p.kmin) as f64) / ((p.kmax - p.kmin) as f64)
    } else {
        1.0
    }
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-15, "probability {got}, expected {want}");
}

fn rng(i: u64) -> Rng {
    stream(0xEC, Stream::SwitchEcn, i)
}

/// Catches "ignores Pmax" (ramp to 1) and "never marks between Kmin and Kmax" in `probability`.
#[test]
fn probability_is_exact_at_fixed_depths() {
    assert_eq!(P.probability(0), 0.0);
    assert_eq!(P.probability(P.kmin - 1), 0.0);
    assert_eq!(P.probability(P.kmin), 0.0);
    // One byte above Kmin: Pmax / 200_000.
    // (Ramp values within 1e-15: floating-point rounding only; 0 and 1 are exact.)
    close(P.probability(P.kmin + 1), 1e-6);
    // A quarter, the midpoint and three quarters of the ramp.
    close(P.probability(55_000), 0.05);
    close(P.probability(105_000), 0.1); // Pmax / 2
    close(P.probability(155_000), 0.15);
    // At Kmax exactly: Pmax, not 1 (marking is certain only above Kmax).
    close(P.probability(P.kmax), 0.2);
    assert_eq!(P.probability(P.kmax + 1), 1.0);
    assert_eq!(P.probability(10 * P.kmax), 1.0);
    for q in (0..=260_000).step_by(997) {
        close(P.probability(q), reference(&P, q));
    }
}

/// Catches a step profile (Kmin = Kmax, DCTCP's K) being treated as a ramp or dividing by zero.
#[test]
fn step_profile_marks_everything_above_k_and_nothing_at_or_below() {
    let step = RedProfile { kmin: 120_000, kmax: 120_000, pmax: 1.0 };
    assert_eq!(step.probability(120_000), 0.0);
    assert_eq!(step.probability(120_001), 1.0);
    let mut r = rng(7);
    assert!(!step.should_mark(120_000, &mut r));
    assert!(step.should_mark(120_001, &mut r));
    // Pmax = 0 with a ramp: nothing is marked anywhere in it.
    let off = RedProfile { kmin: 5_000, kmax: 205_000, pmax: 0.0 };
    assert_eq!(off.probability(205_000), 0.0);
}

/// Catches "never marks between Kmin and Kmax" and "ignores Pmax" in `should_mark`: the
/// marking frequency over 200_000 draws at each depth equals the ramp's probability within
/// 5 binomial standard deviations (a correct implementation fails one depth with probability
/// below 1e-5; the two mutants are off by hundreds of sigmas).
#[test]
fn should_mark_frequency_matches_the_ramp() {
    const N: u64 = 200_000;
    for (i, q) in [5_001u64, 25_000, 55_000, 105_000, 155_000, 205_000].into_iter().enumerate() {
        let p = reference(&P, q);
        let mut r = rng(i as u64);
        let marks = (0..N).filter(|_| P.should_mark(q, &mut r)).count() as f64;
        let mean = N as f64 * p;
        let sigma = (N as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (marks - mean).abs() <= 5.0 * sigma.max(1.0),
            "q = {q}: {marks} marks in {N}, expected {mean} +- {}",
            5.0 * sigma
        );
    }
}

/// Catches marking below Kmin, not marking above Kmax, and drawing randomness outside the
/// ramp (which would shift every later decision of the switch's stream).
#[test]
fn outside_the_ramp_the_decision_is_certain_and_draws_nothing() {
    let mut r = rng(99);
    let mut untouched = r.clone();
    for q in [0, 1, 4_999, 5_000] {
        for _ in 0..1_000 {
            assert!(!P.should_mark(q, &mut r), "marked at q = {q} <= Kmin");
        }
    }
    for q in [205_001, 300_000, u64::MAX / 2] {
        for _ in 0..1_000 {
            assert!(P.should_mark(q, &mut r), "did not mark at q = {q} > Kmax");
        }
    }
    assert_eq!(r.next_u64(), untouched.next_u64(), "the stream advanced outside the ramp");
    // Inside the ramp exactly one draw per decision.
    let mut r = rng(100);
    let mut twin = r.clone();
    P.should_mark(105_000, &mut r);
    twin.next_u64();
    assert_eq!(r.next_u64(), twin.next_u64(), "one decision must take exactly one draw");
}

/// Two flows into one 40 Gbps host for 2 ms (the `cc_dynamics.rs` incast without CC, PFC on),
/// with the given `[switch] ecn` table.
fn incast(ecn: &str) -> retx::RunOutput {
    let text = format!(
        r#"
name = "ecn-incast"
seed = 4
duration = "2ms"
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
cc = "none"
[workload]
kind = "long-flows"
pairs = [["h1", "h0"], ["h2", "h0"]]
"#
    );
    retx::run_toml(&text).expect("valid scenario")
}

/// Catches a switch that marks with ECN disabled, one that marks on a ramp whose Pmax is 0
/// ("ignores Pmax"), one that never marks inside the ramp, and one that does not mark a
/// queue above Kmax.
#[test]
fn whole_simulation_marks_only_when_the_profile_says_so() {
    let off = incast(r#"{ enabled = false }"#);
    assert_eq!(off.counters.ecn_marks, 0);
    // PFC holds the egress queue far below 12 MB, so the whole run stays inside this ramp,
    // where Pmax = 0 makes the probability 0.
    let zero = incast(r#"{ enabled = true, kmin = "1KB", kmax = "12MB", pmax = 0.0 }"#);
    assert_eq!(zero.counters.ecn_marks, 0);
    // The same ramp with Pmax = 1: p = q / 12 MB. For this seed the mean queue (~450 KB) gives
    // 357 marks (3.7 % of ~9_650 data packets); the bound allows other draw orders (+-3x) but
    // not a ramp that never marks.
    let ramp = incast(r#"{ enabled = true, kmin = "1KB", kmax = "12MB", pmax = 1.0 }"#);
    assert!((120..=1_100).contains(&ramp.counters.ecn_marks), "{} marks", ramp.counters.ecn_marks);
    // Above a 2 KB Kmax every packet is marked: two line-rate senders into one port keep more
    // than 2 KB queued behind nearly every packet (9_317 of them for this seed); at most every
    // data packet sent (1 KB payloads) and at least 90 % of them.
    let step = incast(r#"{ enabled = true, kmin = "1KB", kmax = "2KB", pmax = 1.0 }"#);
    let data_pkts: u64 = step.flows.iter().map(|f| f.sent_bytes.div_ceil(1024)).sum();
    let marks = step.counters.ecn_marks;
    assert!(marks <= data_pkts && marks * 10 >= data_pkts * 9, "{marks} marks of {data_pkts} packets");
    for out in [&off, &zero, &ramp, &step] {
        assert_eq!(out.counters.bad_deliveries, 0);
        assert_eq!(out.counters.drops_buffer, 0);
    }
}
