//! IRN-style selective repeat: scripted exchanges at exact times. Same link arithmetic as
//! `gbn_exchange.rs` (`util/exact.rs`): SER = 209_600 ps per 1048-byte data packet, CSER =
//! 12_000 ps per control packet, D = 1 us one way.


use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use crate::util::exact::*;
use crate::util::{scenario, Faults, Pair, Rule};

const N: u64 = 20;

fn irn(extra: &str, npkts: u64) -> Pair {
    Pair::packets(&scenario("irn", extra), npkts, 0xFF_FFF0)
}

/// The sends when index 5 is lost: 0..=16 at line rate; the first SACK lands at 3_479_200 and
/// the pacer is next free at 17 * SER, when 5 (only) is resent; 17..N follow one slot late.
fn resend_5_at_17_ser() -> Vec<(u64, u64, bool)> {
    let mut expect: Vec<_> = back_to_back(0, 0..=16, false).collect();
    expect.push((17 * SER, 5, true));
    expect.extend(back_to_back(18 * SER, 17..N, false));
    expect
}

#[test]
fn each_out_of_order_arrival_is_sacked_and_only_the_lost_packet_is_resent() {
    // The initial PSN 0xFFFFF0 makes the PSNs wrap to 0 at index 16, in the middle of it all.
    let mut p = irn("bitmap_packets = 64\n", N);
    p.script(Rule::drop_data(5));
    let done = p.run();

    // Control packets: ACKs naming 1..=5, one SACK (cum 5, sack k) per arrival of 6..=16,
    // then the resent 5 fills the hole (ACK naming 17), then 17, 18, 19 in order.
    let resent = 17 * SER; // the first SACK lands at 3_479_200; the pacer frees at 17 * SER
    assert_eq!(ctrl_arrival(data_arrival(6 * SER)), 3_479_200);
    let mut expect: Vec<(u64, SegKind, u64, Option<u64>)> =
        (0..5).map(|k| (data_arrival(k * SER), SegKind::Ack, k + 1, None)).collect();
    expect.extend((6..=16).map(|k| (data_arrival(k * SER), SegKind::Sack, 5, Some(k))));
    expect.push((data_arrival(resent), SegKind::Ack, 17, None));
    expect.extend((17..N).map(|k| (data_arrival(resent + (k - 16) * SER), SegKind::Ack, k + 1, None)));
    let got: Vec<_> = p.ctrl.iter().map(|w| (w.sent.0, w.seg.kind, w.index, w.aux)).collect();
    assert_eq!(got, expect);
    // The SACK carries the wire PSNs: cum = PSN of index 5, sack = PSN of index k (wrapped).
    let first_sack = p.ctrl_of(SegKind::Sack)[0].seg;
    assert_eq!((first_sack.psn.value(), first_sack.reported_psn().unwrap().value()), (0xFF_FFF5, 0xFF_FFF6));
    let last_sack = p.ctrl_of(SegKind::Sack)[10].seg;
    assert_eq!((last_sack.psn.value(), last_sack.reported_psn().unwrap().value()), (0xFF_FFF5, 0));

    assert_eq!(sends(&p), resend_5_at_17_ser());
    assert_eq!(p.sender.stats.retx_pkts, 1);
    assert_eq!(p.sender.stats.notifications.sacks, 11);
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(done, t(ctrl_arrival(data_arrival(resent + 3 * SER))));
    assert_delivered_once_in_order(&p, N);
}

/// Index 5 is lost, and so is its first retransmission (sent at 17 * SER, before index 17).
fn lost_retransmission(detect: bool) -> Pair {
    let mut p = irn(&format!("bitmap_packets = 64\ndetect_lost_retransmissions = {detect}\n"), N);
    p.script(Rule::drop_data(5)).script(Rule::drop_data(5).nth(2));
    p
}

#[test]
fn lost_retransmission_is_detected_by_a_later_sack_before_any_timeout() {
    let mut p = lost_retransmission(true);
    let done = p.run();
    // Index 17 was sent after 5's retransmission; its SACK reaches the sender at 5_994_400,
    // which proves that retransmission lost: 5 goes again at once (the pacer is free).
    let sack17 = ctrl_arrival(data_arrival(18 * SER));
    assert_eq!(sack17, 5_994_400);
    let mut expect = resend_5_at_17_ser();
    expect.push((sack17, 5, true));
    assert_eq!(sends(&p), expect);
    assert!(p.timer_calls.is_empty());
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(p.sender.stats.retx_pkts, 2);
    assert_eq!(done, t(ctrl_arrival(data_arrival(sack17))));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn lost_retransmission_waits_for_rto_high_without_detection() {
    let mut p = lost_retransmission(false);
    let done = p.run();
    // The timer last restarted on the ACK naming 5 (3_060_000) with 15 - 5 = 10 > 3 packets
    // in flight: RTO_high = 320 us.
    let last_ack = ctrl_arrival(data_arrival(4 * SER));
    assert_eq!(last_ack, 3_060_000);
    let rto = last_ack + 320_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect = resend_5_at_17_ser();
    // Every other packet was SACKed, so the timeout resends only index 5.
    expect.push((rto, 5, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.timeouts, 1);
    assert_eq!(p.sender.stats.retx_pkts, 2);
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto))));
    assert_delivered_once_in_order(&p, N);
}

/// Loses the first transmissions of the last `tail` packets: no SACK can report them.
fn tail_loss(tail: u64) -> Pair {
    let mut p = irn("bitmap_packets = 64\n", N);
    for k in N - tail..N {
        p.script(Rule::drop_data(k));
    }
    p
}

/// The timeout fires once, at `rto`, and resends exactly the lost tail, back to back; the ACK
/// of its last packet ends the flow.
fn assert_tail_resent_at(p: &Pair, done: Time, tail: u64, rto: u64) {
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.extend(back_to_back(rto, N - tail..N, true));
    assert_eq!(sends(p), expect);
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto + (tail - 1) * SER))));
    assert_delivered_once_in_order(p, N);
}

#[test]
fn tail_loss_with_three_in_flight_uses_rto_low() {
    let mut p = tail_loss(3);
    let done = p.run();
    // Last restart: the ACK naming 17 (5_575_200), with 20 - 17 = 3 <= N = 3 in flight.
    let rto = ctrl_arrival(data_arrival(16 * SER)) + 100_000_000;
    assert_eq!(rto, 105_575_200);
    assert!(p.ctrl_of(SegKind::Sack).is_empty());
    assert_tail_resent_at(&p, done, 3, rto);
}

#[test]
fn tail_loss_with_four_in_flight_uses_rto_high() {
    let mut p = tail_loss(4);
    let done = p.run();
    let rto = ctrl_arrival(data_arrival(15 * SER)) + 320_000_000;
    assert_eq!(rto, 325_365_600);
    assert_tail_resent_at(&p, done, 4, rto);
}

#[test]
fn rto_low_and_high_are_configurable() {
    let short_timers = || irn("bitmap_packets = 64\nrto_low = \"7us\"\nrto_high = \"9us\"\nrto_low_packets = 1\n", N);
    let mut p = short_timers();
    p.script(Rule::drop_data(N - 1)).script(Rule::drop_data(N - 2));
    p.run();
    // Two in flight > rto_low_packets = 1: RTO_high (9 us) after the ACK naming 18.
    let rto = ctrl_arrival(data_arrival(17 * SER)) + 9_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    assert_delivered_once_in_order(&p, N);

    let mut p = short_timers();
    p.script(Rule::drop_data(N - 1));
    p.run();
    let rto = ctrl_arrival(data_arrival(18 * SER)) + 7_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn in_flight_is_capped_at_the_bitmap_size() {
    let n = 100;
    let mut p = irn("bitmap_packets = 8\n", n);
    p.run();
    // One RTT (2_221_600) is longer than 8 packets (1_676_800): the sender is window-bound
    // and sends bursts of 8, each packet released by the ACK of the one 8 before it, so
    // index k leaves at (k / 8) * RTT + (k % 8) * SER.
    let rtt = ctrl_arrival(data_arrival(0));
    assert_eq!(rtt, 2_221_600);
    let expect: Vec<_> = (0..n).map(|k| ((k / 8) * rtt + (k % 8) * SER, k, false)).collect();
    assert_eq!(sends(&p), expect);
    let max_in_flight = p.data.iter().map(|w| w.index + 1 - w.cum_at_sender).max();
    assert_eq!(max_in_flight, Some(8));
    assert_delivered_once_in_order(&p, n);
}

#[test]
fn in_flight_cap_holds_under_random_loss_and_reordering() {
    for seed in 0..20 {
        let n = 300;
        let mut p = irn("bitmap_packets = 8\n", n);
        let f = Faults { loss: 0.1, dup: 0.05, jitter: Time::from_ns(300) };
        p.faults(f, f, seed);
        p.run();
        // A packet (new or resent) is never sent at or beyond cum + 8, the receiver's bitmap.
        let max_in_flight = p.data.iter().map(|w| w.index + 1 - w.cum_at_sender).max();
        assert_eq!(max_in_flight, Some(8), "seed {seed}");
        assert!(p.sender.stats.retx_pkts > 0, "seed {seed}");
        assert_delivered_once_in_order(&p, n);
    }
}

fn coalesced(ack_interval: u32) -> Pair {
    let extra = format!("bitmap_packets = 8\n[nic]\nack_interval = {ack_interval}\n");
    Pair::packets(&scenario("irn", &extra), 100, 0)
}

#[test]
fn ack_coalescing_up_to_the_bitmap_size_costs_no_timeout() {
    let mut p = coalesced(8);
    p.run();
    // One ACK per 8 in-order packets, released exactly when the window is full.
    assert_eq!(p.ctrl_of(SegKind::Ack).len(), 13); // 12 full windows + the last packet
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(p.sender.stats.retx_pkts, 0);
    assert_eq!(p.data.len(), 100);
    assert_delivered_once_in_order(&p, 100);
}

#[test]
// Regression: with ack_interval > bitmap_packets the sender (capped at one bitmap in flight)
// and the receiver (waiting for ack_interval in-order packets) used to wait on each other
// until RTO_high, every window.
fn ack_coalescing_beyond_the_bitmap_size_must_not_wait_for_the_rto() {
    let mut p = coalesced(9);
    p.run();
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(p.sender.stats.retx_pkts, 0);
    assert_eq!(p.data.len(), 100);
    assert_delivered_once_in_order(&p, 100);
}
