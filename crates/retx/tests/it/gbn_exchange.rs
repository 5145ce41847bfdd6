//! Go-back-N scripted exchanges at exact times (smoltcp-style): every time below follows from
//! the link (40 Gbps, 1 us) and a 1000-byte MTU, as worked out in `util/exact.rs`: SER =
//! 209_600 ps per 1048-byte data packet, CSER = 12_000 ps per control packet, D = 1 us one
//! way. With no loss the sender paces at line rate, so packet k first leaves at k * SER.


use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;
use crate::util::exact::*;
use crate::util::{scenario, Pair, Rule};

const N: u64 = 20;

fn gbn(extra: &str) -> Pair {
    Pair::packets(&scenario("gbn", extra), N, 100)
}

/// The sends when index 5 is lost and the NAK from the arrival of 6 reaches the sender at
/// 3_479_200: the pacer last released index 16 at 3_353_600, so from 17 * SER it goes back to
/// 5, resending 5..=16 (flagged as retransmissions) and then sending 17..N for the first time.
fn first_go_back_to_5() -> Vec<(u64, u64, bool)> {
    let mut expect: Vec<_> = back_to_back(0, 0..=16, false).collect();
    expect.extend((5..N).map(|k| (17 * SER + (k - 5) * SER, k, k <= 16)));
    expect
}

#[test]
fn without_loss_every_packet_is_sent_once_at_line_rate() {
    let mut p = gbn("");
    let done = p.run();
    let expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    assert_eq!(sends(&p), expect);
    // One ACK per packet, naming the next expected index.
    let expect: Vec<_> = (0..N).map(|k| (data_arrival(k * SER), SegKind::Ack, k + 1)).collect();
    assert_eq!(ctrls(&p), expect);
    assert_eq!(done, t(ctrl_arrival(data_arrival((N - 1) * SER))));
    assert_eq!(p.sender.done_at, Some(done));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn lost_packet_is_naked_when_the_next_one_arrives_and_the_sender_goes_back() {
    let mut p = gbn("");
    p.script(Rule::drop_data(5));
    let done = p.run();

    // Index 6 is the first out-of-order arrival: it triggers the one NAK, naming index 5.
    let t6 = data_arrival(6 * SER);
    assert_eq!(t6, 2_467_200);
    let naks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index, w.seg.psn.value())).collect();
    assert_eq!(naks, vec![(t6, 5, 105)]);
    assert_eq!(p.receiver.ctx.naks_sent, 1);

    // The NAK reaches the sender at 3_479_200; the pacer last released index 16 at
    // 3_353_600, so the next packet, index 5 flagged as a retransmission, leaves at 17 * SER.
    assert_eq!(ctrl_arrival(t6), 3_479_200);
    assert_eq!(sends(&p), first_go_back_to_5());
    assert_eq!(p.data[17].sent, t(3_563_200));

    assert_eq!(p.sender.stats.sent_pkts, 32);
    assert_eq!(p.sender.stats.retx_pkts, 12);
    assert_eq!(p.sender.stats.notifications.naks, 1);
    assert_eq!(p.sender.stats.timeouts, 0);
    assert!(p.timer_calls.is_empty());
    assert_delivered_once_in_order(&p, N);
    // Last retransmission (index 19) leaves at 17 * SER + 14 * SER.
    assert_eq!(done, t(ctrl_arrival(data_arrival(31 * SER))));
    assert_eq!(done, t(8_719_200));
}

#[test]
fn lost_last_packet_is_recovered_by_the_rto() {
    let mut p = gbn("rto = \"100us\"\n");
    p.script(Rule::drop_data(N - 1));
    let done = p.run();
    // The timer restarts on every ACK that advances snd_una; the last one (for index 18,
    // naming 19) reaches the sender at 5_994_400, so the RTO fires 100 us later.
    let last_ack = ctrl_arrival(data_arrival(18 * SER));
    assert_eq!(last_ack, 5_994_400);
    let rto = last_ack + 100_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    assert_eq!(p.sender.stats.timeouts, 1);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.push((rto, N - 1, true));
    assert_eq!(sends(&p), expect);
    assert!(p.ctrl_of(SegKind::Nak).is_empty());
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto))));
    assert_eq!(done, t(108_216_000));
    assert_delivered_once_in_order(&p, N);
}

/// Index 5 is lost, and so is the first NAK (sent at the arrival of 6, 2_467_200), under a
/// 2 us NAK interval.
fn lost_nak_pair(extra: &str) -> Pair {
    let mut p = gbn(&format!("nak_interval = \"2us\"\n{extra}"));
    p.script(Rule::drop_data(5)).script(Rule::drop_ctrl(SegKind::Nak));
    p
}

#[test]
fn per_psn_policy_repeats_a_lost_nak_only_after_the_nak_interval() {
    let mut p = lost_nak_pair("nak_policy = \"per-psn\"\n");
    let done = p.run();
    // First NAK at 2_467_200 is lost. Indices 7..15 arrive inside the 2 us interval (15 at
    // 4_353_600) and are not NAKed; 16 arrives at 4_563_200 >= 4_467_200 and is.
    let first = data_arrival(6 * SER);
    let second = data_arrival(16 * SER);
    assert!(data_arrival(15 * SER) < first + 2_000_000 && second >= first + 2_000_000);
    let naks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index, w.arrived.is_some())).collect();
    assert_eq!(naks, vec![(first, 5, false), (second, 5, true)]);
    assert_eq!(second, 4_563_200);
    // All 20 went out before the second NAK arrived (5_575_200); the pacer is free, so index
    // 5 is resent the instant it arrives.
    let back = ctrl_arrival(second);
    assert_eq!(back, 5_575_200);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.extend(back_to_back(back, 5..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.notifications.naks, 1);
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(done, t(ctrl_arrival(data_arrival(back + 14 * SER))));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn once_per_gap_policy_never_repeats_a_lost_nak_so_the_rto_recovers() {
    let mut p = lost_nak_pair("nak_policy = \"once-per-gap\"\nrto = \"100us\"\n");
    let done = p.run();
    let naks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index)).collect();
    assert_eq!(naks, vec![(data_arrival(6 * SER), 5)]);
    // The last advancing ACK (for index 4) arrives at 3_060_000.
    let rto = ctrl_arrival(data_arrival(4 * SER)) + 100_000_000;
    assert_eq!(rto, 103_060_000);
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.extend(back_to_back(rto, 5..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto + 14 * SER))));
    assert_delivered_once_in_order(&p, N);
}

/// Index 5 is lost, then the retransmission of index 8. The receiver's expected PSN moves from
/// 5 to 8 while still inside the 500 us NAK interval opened at 2_467_200.
fn second_gap_pair(policy: &str) -> Pair {
    let mut p = gbn(&format!("nak_policy = \"{policy}\"\nrto = \"100us\"\n"));
    p.script(Rule::drop_data(5)).script(Rule::drop_data(8).nth(2));
    p
}

#[test]
fn strict_policy_suppresses_a_nak_for_a_different_psn_inside_the_interval() {
    let mut p = second_gap_pair("strict");
    let done = p.run();
    // Only the first NAK: the arrival of the resent 9 (at 5_611_200) names 8 but is inside
    // the interval.
    let naks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index)).collect();
    assert_eq!(naks, vec![(2_467_200, 5)]);
    // Recovery by timeout: the last advancing ACK is for the resent index 7 (sent at
    // 3_982_400), which reaches the sender at 6_204_000.
    let rto = ctrl_arrival(data_arrival(17 * SER + 2 * SER)) + 100_000_000;
    assert_eq!(rto, 106_204_000);
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect = first_go_back_to_5();
    expect.extend(back_to_back(rto, 8..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.timeouts, 1);
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto + 11 * SER))));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn per_psn_policy_naks_a_different_psn_at_once() {
    let mut p = second_gap_pair("per-psn");
    let done = p.run();
    let resent9 = 17 * SER + 4 * SER;
    assert_eq!(data_arrival(resent9), 5_611_200);
    let naks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index)).collect();
    assert_eq!(naks, vec![(2_467_200, 5), (5_611_200, 8)]);
    // The second NAK arrives at 6_623_200 while the pacer holds until 6_707_200 (the resent
    // 19 left at 6_497_600).
    let mut expect = first_go_back_to_5();
    expect.extend(back_to_back(6_707_200, 8..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.timeouts, 0);
    assert!(p.timer_calls.is_empty());
    assert_eq!(done, t(ctrl_arrival(data_arrival(6_707_200 + 11 * SER))));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn lost_ack_of_the_last_packet_is_answered_by_a_re_ack_of_the_duplicate() {
    let mut p = gbn("rto = \"100us\"\n");
    p.script(Rule::drop_ctrl(SegKind::Ack).index(N));
    let done = p.run();
    // The receiver finished when index 19 first arrived.
    assert_eq!(p.receiver.ctx.done_at, Some(t(data_arrival(19 * SER))));
    let rto = ctrl_arrival(data_arrival(18 * SER)) + 100_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.push((rto, N - 1, true));
    assert_eq!(sends(&p), expect);
    // Two ACKs name 20: the lost one and the re-ACK of the duplicate.
    let acks20: Vec<_> = p.ctrl.iter().filter(|w| w.index == N).map(|w| (w.sent.0, w.seg.kind, w.arrived.is_some())).collect();
    assert_eq!(acks20, vec![(data_arrival(19 * SER), SegKind::Ack, false), (data_arrival(rto), SegKind::Ack, true)]);
    assert_eq!(done, t(ctrl_arrival(data_arrival(rto))));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn a_flow_that_cannot_progress_hits_the_time_limit_with_the_rto_retrying_from_snd_una() {
    // Every data packet is lost: nothing ever restarts the timer, so the sender goes back to
    // index 0 exactly every 100 us and the harness gives up at its limit.
    let mut p = gbn("rto = \"100us\"\n");
    p.script(Rule::drop_kind(SegKind::Data).every());
    p.limit = Time(1_000_000_000 - 1);
    let err = p.try_run().unwrap_err();
    assert_eq!(err, crate::util::Failure::TimeLimit { at: t(900_000_000 + 19 * SER), delivered: 0, npkts: N });
    let zeros: Vec<_> = p.sends_of(0).iter().map(|w| w.sent.0).collect();
    assert_eq!(zeros, (0..10).map(|k| k * 100_000_000).collect::<Vec<_>>());
    assert_eq!(p.data.len(), 200);
    assert!(p.ctrl.is_empty());
}
