//! Property: whatever the network does (loss of data and of control packets, duplication,
//! reordering), every recovery scheme delivers the whole message exactly once, in order, and
//! finishes (the harness fails a run that stalls or exceeds its time limit).


use proptest::prelude::*;
use crate::util::props::{case, check, Case};
use crate::util::transport_toml;

/// Short timers keep lossy runs to a few thousand round trips of simulated time.
fn gbn(policy: &str) -> String {
    transport_toml("gbn", "none", &format!("nak_policy = \"{policy}\"\nnak_interval = \"20us\"\nrto = \"50us\"\n"))
}

fn irn(detect: bool) -> String {
    transport_toml(
        "irn",
        "none",
        &format!("detect_lost_retransmissions = {detect}\nrto_low = \"20us\"\nrto_high = \"50us\"\n"),
    )
}

/// STRIDE: SYN, FIN and their answers are lost, duplicated and reordered like everything else.
fn stride(cc: &str) -> String {
    transport_toml("stride", cc, "rto = \"50us\"\nnack_interval = \"20us\"\nsegment = \"4KB\"\n")
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

    #[test]
    fn stride_delivers_everything_once_in_order(c in case()) {
        check(&stride("none"), &c)?;
    }

    #[test]
    fn stride_with_its_rate_control_delivers_everything_once_in_order(c in case()) {
        check(&stride("stride"), &c)?;
    }
}

/// The corner of the input space at once ([`Case::worst_corner`]). Go-back-N resends
/// ~130-310 thousand packets here.
#[test]
fn worst_corner_finishes_for_every_scheme() {
    let c = Case::worst_corner();
    for sections in [gbn("per-psn"), gbn("strict"), gbn("once-per-gap"), irn(true), irn(false), stride("none"), stride("stride")] {
        check(&sections, &c).unwrap_or_else(|e| panic!("{sections}: {e}"));
    }
}
