//! Property: whatever the network does (loss of data and of control packets, duplication,
//! reordering), every recovery scheme delivers the whole message exactly once, in order, and
//! finishes (the harness fails a run that stalls or exceeds its time limit).

mod util;

use proptest::prelude::*;
use retx::sim::units::Time;
use retx::transport::psn::PSN_MASK;
use util::{spec, Faults, Pair};

#[derive(Clone, Debug)]
struct Case {
    size: u64,
    mtu: u32,
    initial_psn: u32,
    data: Faults,
    ctrl: Faults,
    seed: u64,
    ack_interval: u32,
}

fn faults() -> impl Strategy<Value = Faults> {
    (0.0..0.3f64, 0.0..0.1f64, prop_oneof![Just(0u64), 0..3_000_000u64])
        .prop_map(|(loss, dup, jitter)| Faults { loss, dup, jitter: Time(jitter) })
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![1..3_000u64, 1..300_000u64],
        256..=4096u32,
        // Near the 24-bit wrap half of the time.
        prop_oneof![0..=PSN_MASK, (PSN_MASK - 3_000)..=PSN_MASK],
        faults(),
        faults(),
        any::<u64>(),
        1..=4u32,
    )
        .prop_map(|(size, mtu, initial_psn, data, ctrl, seed, ack_interval)| Case {
            size,
            mtu,
            initial_psn,
            data,
            ctrl,
            seed,
            ack_interval,
        })
}

/// Short timers keep lossy runs to a few thousand round trips of simulated time.
fn check(sections: &str, c: &Case) -> Result<(), TestCaseError> {
    let sections = format!("[nic]\nack_interval = {}\n{sections}", c.ack_interval);
    let mut p = Pair::new(&sections, spec(c.size, c.mtu, c.initial_psn));
    p.faults(c.data, c.ctrl, c.seed);
    p.limit = Time::from_ms(10_000);
    let r = p.try_run();
    prop_assert!(r.is_ok(), "{r:?} after {} data / {} control packets", p.data.len(), p.ctrl.len());
    let n = c.size.div_ceil(c.mtu as u64);
    let log = p.delivered();
    prop_assert_eq!(log.len() as u64, n);
    prop_assert!(log.iter().copied().eq(0..n), "delivery log out of order");
    prop_assert_eq!(p.receiver.ctx.delivered_bytes, c.size);
    prop_assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    prop_assert!(p.sender.is_done());
    Ok(())
}

fn gbn(policy: &str) -> String {
    format!(
        "[transport]\nrecovery = \"gbn\"\ncc = \"none\"\n[recovery.gbn]\nnak_policy = \"{policy}\"\n\
         nak_interval = \"20us\"\nrto = \"50us\"\n"
    )
}

fn irn(detect: bool) -> String {
    format!(
        "[transport]\nrecovery = \"irn\"\ncc = \"none\"\n[recovery.irn]\ndetect_lost_retransmissions = {detect}\n\
         rto_low = \"20us\"\nrto_high = \"50us\"\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn gbn_per_psn_delivers_everything_once_in_order(c in case()) {
        check(&gbn("per-psn"), &c)?;
    }

    #[test]
    fn gbn_strict_delivers_everything_once_in_order(c in case()) {
        check(&gbn("strict"), &c)?;
    }

    #[test]
    fn gbn_once_per_gap_delivers_everything_once_in_order(c in case()) {
        check(&gbn("once-per-gap"), &c)?;
    }

    #[test]
    fn irn_detecting_lost_retransmissions_delivers_everything_once_in_order(c in case()) {
        check(&irn(true), &c)?;
    }

    #[test]
    fn irn_paper_rule_delivers_everything_once_in_order(c in case()) {
        check(&irn(false), &c)?;
    }
}

/// The corner of the input space at once: 1172 packets of 256 bytes starting 5 PSNs below the
/// wrap, 29 % loss, 9 % duplication and 2 us of jitter both ways (about 9 packets of
/// reordering at this size). Go-back-N resends ~130-310 thousand packets here.
#[test]
fn worst_corner_finishes_for_every_scheme() {
    let f = Faults { loss: 0.29, dup: 0.09, jitter: Time(2_000_000) };
    let c = Case { size: 300_000, mtu: 256, initial_psn: PSN_MASK - 5, data: f, ctrl: f, seed: 3, ack_interval: 2 };
    for sections in [gbn("per-psn"), gbn("strict"), gbn("once-per-gap"), irn(true), irn(false)] {
        check(&sections, &c).unwrap_or_else(|e| panic!("{sections}: {e}"));
    }
}
