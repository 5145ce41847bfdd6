//! `recovery = "tcp"` driven sans-IO over the two-endpoint harness (`crate::util::Pair`): exactly-once,
//! in-order delivery whatever the channels do (random loss of data, of ACKs and of
//! retransmissions, duplication, reordering), with each window controller and without one;
//! and scripted losses whose recovery path (fast retransmit or timeout) is pinned.


use proptest::prelude::*;
use retx::sim::units::Time;
use retx::transport::TxRecovery;
use retx::transport::common::segment::SegKind;
use crate::util::props::{case, check, Case};
use crate::util::{packets, transport_toml, Pair, Rule, DELAY, LINE};

/// Short timers keep lossy runs to a few thousand round trips of simulated time; the backed-off
/// RTO is capped at 2 ms so a run of lost retransmissions cannot push it past the time limit.
fn tcp(cc: &str) -> String {
    transport_toml("tcp", cc, "min_rto = \"20us\"\nmax_rto = \"2ms\"\n")
}

const CONTROLLERS: [&str; 4] = ["none", "reno", "dctcp-window", "vegas"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn tcp_without_cc_delivers_everything_once_in_order(c in case()) {
        check(&tcp("none"), &c)?;
    }

    #[test]
    fn tcp_reno_delivers_everything_once_in_order(c in case()) {
        check(&tcp("reno"), &c)?;
    }

    #[test]
    fn tcp_dctcp_window_delivers_everything_once_in_order(c in case()) {
        check(&tcp("dctcp-window"), &c)?;
    }

    #[test]
    fn tcp_vegas_delivers_everything_once_in_order(c in case()) {
        check(&tcp("vegas"), &c)?;
    }

    /// Window controllers over the RDMA schemes: the window gate must never strand a
    /// retransmission (IRN's go below snd_nxt even with the window full).
    #[test]
    fn reno_over_gbn_and_irn_delivers_everything_once_in_order(c in case()) {
        check(&transport_toml("gbn", "reno", "nak_interval = \"20us\"\nrto = \"50us\"\n"), &c)?;
        check(&transport_toml("irn", "reno", "rto_low = \"20us\"\nrto_high = \"50us\"\n"), &c)?;
    }
}

/// The corner of the input space at once ([`Case::worst_corner`]), for every controller.
#[test]
fn worst_corner_finishes_with_every_controller() {
    let c = Case::worst_corner();
    for cc in CONTROLLERS {
        check(&tcp(cc), &c).unwrap_or_else(|e| panic!("{cc}: {e}"));
    }
}

fn pair(cc: &str, npkts: u64) -> Pair {
    Pair::with_link(&crate::util::scenario_toml(&tcp(cc)), packets(npkts, 0), LINE, DELAY)
}

fn tcp_sender(p: &Pair) -> &retx::transport::loss::tcp::TcpSender {
    match p.sender.recovery() {
        TxRecovery::Tcp(s) => s,
        _ => unreachable!("a tcp pair"),
    }
}

/// One lost segment among 40 with Reno: the three duplicate ACKs of the segments behind it
/// bring exactly one retransmission, no timeout, and one halving of the window.
#[test]
fn one_loss_is_repaired_by_one_fast_retransmit() {
    let mut p = pair("reno", 40);
    p.script(Rule::drop_data(5));
    p.run();
    let sends = p.sends_of(5);
    assert_eq!(sends.len(), 2);
    assert!(sends[1].seg.retransmit);
    assert_eq!((p.sender.stats.notifications.fast_retransmits, p.sender.stats.timeouts, p.sender.stats.retx_pkts), (1, 0, 1));
    // It went out right after the third duplicate ACK (for 6, 7, 8) reached the sender (the
    // first ACK naming 5 is the in-order one, for 4).
    let dup3 = p.ctrl_of(SegKind::Ack).into_iter().filter(|w| w.index == 5).nth(3).expect("three duplicates").arrived.unwrap();
    assert!(sends[1].sent >= dup3 && sends[1].sent < dup3 + Time::from_ns(500), "{:?} vs {dup3:?}", sends[1].sent);
    assert_eq!(tcp_sender(&p).fast_retransmits, 1);
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    match p.sender.cc() {
        retx::transport::Cc::Reno(r) => assert_eq!(r.w.cuts, 1),
        other => panic!("{other:?}"),
    }
}

/// Two holes in one window: the full recovery takes a fast retransmit and one partial-ACK
/// retransmission (NewReno), still no timeout.
#[test]
fn two_losses_in_a_window_take_one_partial_ack() {
    let mut p = pair("reno", 40);
    p.script(Rule::drop_data(3)).script(Rule::drop_data(6));
    p.run();
    let s = tcp_sender(&p);
    assert_eq!((s.fast_retransmits, s.partial_acks), (1, 1));
    assert_eq!((p.sender.stats.retx_pkts, p.sender.stats.timeouts), (2, 0));
    assert_eq!(p.delivered(), (0..40).collect::<Vec<_>>().as_slice());
}

/// A lost fast retransmission is repaired by the timer: go back to snd_una, one timeout.
#[test]
fn a_lost_retransmission_costs_one_timeout() {
    let mut p = pair("reno", 40);
    p.script(Rule::drop_data(5)).script(Rule::drop_data(5).nth(2));
    p.run();
    assert_eq!(p.sends_of(5).len(), 3);
    assert_eq!((p.sender.stats.timeouts, tcp_sender(&p).fast_retransmits), (1, 1));
    // Duplicate ACKs do not restart the timer: it fires min_rto (20 us, above SRTT + 4 RTTVAR
    // of this 2.5 us path) after the last ACK that moved snd_una, the in-order one for 4.
    let ack5 = p.ctrl_of(SegKind::Ack).into_iter().find(|w| w.index == 5).expect("ACK of 4").arrived.unwrap();
    assert_eq!(p.timer_calls, vec![ack5 + Time::from_us(20)]);
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
}

/// Lost ACKs alone cost nothing: cumulative ACKs cover for each other.
#[test]
fn lost_acks_are_covered_by_later_ones() {
    let mut p = pair("reno", 40);
    p.script(Rule::drop_ctrl(SegKind::Ack).index(3)).script(Rule::drop_ctrl(SegKind::Ack).index(4));
    p.run();
    assert_eq!((p.sender.stats.retx_pkts, p.sender.stats.timeouts), (0, 0));
}
