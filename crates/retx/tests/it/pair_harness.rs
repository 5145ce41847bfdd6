//! The two-endpoint harness is symmetric, as the engine is: a receiver may speak first, and
//! what either host's NIC agent sends (at once or woken) reaches the other end. These check
//! the harness itself with a scheme that ignores such packets, so every exchange still
//! delivers each packet once, in order.


use retx::sim::units::Time;
use retx::transport::common::psn::Psn;
use retx::transport::common::segment::{SegKind, Segment};
use crate::util::{scenario, Dir, Pair};

fn gbn_pair(npkts: u64) -> Pair {
    Pair::packets(&scenario("gbn", ""), npkts, 100)
}

#[test]
fn a_receiver_that_speaks_first_is_carried_and_heard() {
    let mut pair = gbn_pair(8);
    // Before any data: the receiver acknowledges nothing (PSN 100, the first) at time 0.
    pair.inject(Dir::Ctrl, Segment::control(SegKind::Ack, Psn::new(100), Time::ZERO));
    pair.run();
    let first = &pair.ctrl[0];
    assert_eq!((first.seg.kind, first.sent, first.index), (SegKind::Ack, Time::ZERO, 0));
    assert_eq!(first.arrived, Some(pair.ctrl_ser() + crate::util::DELAY), "it crossed the control channel");
    assert_eq!(pair.delivered(), (0..8).collect::<Vec<u64>>());
    assert_eq!(pair.data.len(), 8, "an ACK of nothing changes nothing");
}

#[test]
fn what_either_nic_agent_sends_crosses_to_the_other_end() {
    let mut pair = gbn_pair(4);
    // The receiving host's agent sends a grant and the sending host's a stray control packet,
    // both on behalf of queue pair 0, before the flow starts.
    pair.rx_nic.send(0, Segment::control(SegKind::Grant, Psn::new(100), Time::ZERO));
    pair.tx_nic.send(0, Segment::control(SegKind::Grant, Psn::new(100), Time::ZERO));
    pair.run();
    assert_eq!(pair.ctrl_of(SegKind::Grant).len(), 1);
    assert_eq!(pair.ctrl_of(SegKind::Grant)[0].sent, Time::ZERO);
    let stray: Vec<_> = pair.data.iter().filter(|w| w.seg.kind == SegKind::Grant).collect();
    assert_eq!(stray.len(), 1, "the sending host's agent used the data channel");
    assert_eq!(pair.delivered(), (0..4).collect::<Vec<u64>>());
}

#[test]
fn agent_wakes_are_drained_on_both_sides() {
    let mut pair = gbn_pair(4);
    pair.rx_nic.wake(0);
    pair.tx_nic.wake(0);
    assert!(pair.rx_nic.has_news() && pair.tx_nic.has_news());
    // Each woken end takes a handle_timeout, which checks its own deadlines: none is due, so
    // the exchange is as without the wakes.
    pair.run();
    assert!(!pair.rx_nic.has_news() && !pair.tx_nic.has_news(), "both wake lists drained");
    assert_eq!(pair.delivered(), (0..4).collect::<Vec<u64>>());
    assert_eq!(pair.data.len(), 4);
    assert!(pair.timer_calls.is_empty() && pair.rx_timer_calls.is_empty());
}
