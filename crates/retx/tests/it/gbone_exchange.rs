//! Go-Back-ONE (§IV, Algorithms 1-2): scripted exchanges at exact times. Same link arithmetic
//! as `gbn_exchange.rs` (`util/exact.rs`): SER = 209_600 ps per 1048-byte data packet, CSER =
//! 12_000 ps per control packet, D = 1 us one way; the control packet answering a data packet
//! sent at s reaches the sender at s + 2_221_600.


use retx::transport::common::recovery::SendRecovery;
use retx::sim::units::Time;
use retx::transport::loss::gbone::{GboneReceiver, GboneSender};
use retx::transport::RxRecovery;
use retx::transport::common::segment::SegKind;
use retx::transport::TxRecovery;
use crate::util::exact::*;
use crate::util::{scenario, Pair, Rule};

const N: u64 = 20;
const PSN0: u32 = 100;

fn gbone(extra: &str, npkts: u64) -> Pair {
    Pair::packets(&scenario("gbone", &format!("rto = \"100us\"\n{extra}")), npkts, PSN0)
}

fn tx(p: &Pair) -> &GboneSender {
    match p.sender.recovery() {
        TxRecovery::Gbone(s) => s,
        other => panic!("not a Go-Back-ONE sender: {other:?}"),
    }
}

fn rx(p: &Pair) -> &GboneReceiver {
    match p.receiver.recovery() {
        RxRecovery::Gbone(r) => r,
        other => panic!("not a Go-Back-ONE receiver: {other:?}"),
    }
}

fn queue(p: &Pair) -> Vec<u64> {
    tx(p).retrans_queue().copied().collect()
}

/// Every RACK as (sent, expected index, received index), decoded from the wire PSNs.
fn racks(p: &Pair) -> Vec<(u64, u64, u64)> {
    p.ctrl_of(SegKind::Rack)
        .iter()
        .map(|w| (w.sent.0, (w.seg.psn.value() - PSN0) as u64, (w.seg.reported_psn().unwrap().value() - PSN0) as u64))
        .collect()
}

#[test]
fn each_rack_queues_exactly_the_newly_missing_packets_which_go_before_new_data() {
    // A cache of 64 (the default, one BDP, is 11 here: see the ignored test below).
    let mut p = gbone("max_ooo_psn = 64\n", N);
    p.script(Rule::drop_data(2)).script(Rule::drop_data(6));

    // The RACK of 3 (expected 2, received 3) returns at 2_850_400, while the pacer holds
    // until 14 * SER: the queue is exactly [2].
    let rack3 = answered(3 * SER);
    assert_eq!(rack3, 2_850_400);
    p.run_until(t(rack3)).unwrap();
    assert_eq!(queue(&p), vec![2]);
    assert_eq!(tx(&p).snd_una(), 2);
    // 2 takes the next slot, before new data (14 waits one slot).
    p.run_until(t(14 * SER)).unwrap();
    assert!(queue(&p).is_empty());
    // The RACKs of 4 and 5 are consecutive: nothing is queued.
    p.run_until(t(answered(5 * SER))).unwrap();
    assert!(queue(&p).is_empty());
    // The RACK of 7 (6 lost) returns at 3_688_800, the pacer holding until 18 * SER: [6].
    let rack7 = answered(7 * SER);
    assert_eq!(rack7, 3_688_800);
    p.run_until(t(rack7)).unwrap();
    assert_eq!(queue(&p), vec![6]);

    let done = p.run();
    let mut expect: Vec<_> = back_to_back(0, 0..14, false).collect();
    expect.push((14 * SER, 2, true));
    expect.extend(back_to_back(15 * SER, 14..17, false));
    expect.push((18 * SER, 6, true));
    expect.extend(back_to_back(19 * SER, 17..N, false));
    assert_eq!(sends(&p), expect);

    // Every out-of-order arrival is RACKed: 3, 4, 5, 7..=13 expecting 2; the resent 2
    // (arriving at 4_144_000) releases 3..=5, so 14..=16 are RACKed expecting 6.
    let mut expect: Vec<_> = [3, 4, 5].iter().map(|&k| (data_arrival(k * SER), 2, k)).collect();
    expect.extend((7..=13).map(|k| (data_arrival(k * SER), 2, k)));
    expect.extend((14..=16).map(|k| (data_arrival((k + 1) * SER), 6, k)));
    assert_eq!(racks(&p), expect);
    assert_eq!(rx(&p).notifications, 13);
    assert_eq!(p.sender.stats.notifications.racks, 13);
    assert_eq!(p.sender.stats.retx_pkts, 2);
    assert!(p.timer_calls.is_empty());
    // The ACKs naming 6 (resent 2 drains 3..=5) and 17 (resent 6 drains 7..=16).
    let acks: Vec<_> = p.ctrl_of(SegKind::Ack).iter().map(|w| (w.sent.0, w.index)).collect();
    assert!(acks.contains(&(data_arrival(14 * SER), 6)));
    assert!(acks.contains(&(data_arrival(18 * SER), 17)));
    assert_eq!(rx(&p).stored_bytes, 13 * MTU as u64);
    assert_eq!(rx(&p).copied_bytes, 13 * MTU as u64);
    assert_eq!(rx(&p).beyond_bitmap, 0);
    assert_eq!(done, t(answered(21 * SER)));
    assert_delivered_once_in_order(&p, N);
}

/// snd_una after the ACK answering each data packet k (lossless, every packet ACKed).
fn snd_una_after_each_ack(extra: &str, n: u64) -> Vec<u64> {
    let mut p = gbone(extra, n);
    let mut una = Vec::new();
    for k in 0..n {
        p.run_until(t(answered(k * SER))).unwrap();
        una.push(tx(&p).snd_una());
    }
    assert!(p.is_done());
    assert_delivered_once_in_order(&p, n);
    una
}

#[test]
fn back_to_zero_rounds_cumulative_acks_down_to_a_chunk() {
    // The ACK answering k names k + 1: 7 rounds down to 4, 8 stays 8, 20 is the whole flow.
    let una = snd_una_after_each_ack("back_to_zero = true\nchunk_packets = 4\n", N);
    assert_eq!(una, (0..N).map(|k| (k + 1) / 4 * 4).collect::<Vec<_>>());
    assert_eq!(una[6], 4);
    let una = snd_una_after_each_ack("back_to_zero = false\nchunk_packets = 4\n", N);
    assert_eq!(una, (1..=N).collect::<Vec<_>>());
}

#[test]
fn back_to_zero_finishes_a_flow_that_is_not_a_whole_number_of_chunks() {
    let mut p = gbone("back_to_zero = true\nchunk_packets = 4\n", 19);
    p.limit = Time::from_ms(10);
    let r = p.try_run();
    assert!(r.is_ok(), "{r:?}; snd_una {} timeouts {}", tx(&p).snd_una(), p.sender.stats.timeouts);
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_delivered_once_in_order(&p, 19);
}

#[test]
fn lost_retransmission_is_recovered_by_the_rto_going_back_to_snd_una() {
    let mut p = gbone("max_ooo_psn = 64\n", N);
    p.script(Rule::drop_data(2)).script(Rule::drop_data(2).nth(2));
    let done = p.run();
    // No later RACK re-queues 2 (each is one above the last); the timer last restarted on
    // the ACK naming 2 (2_431_200).
    let rto = answered(SER) + 100_000_000;
    assert_eq!(rto, 102_431_200);
    assert_eq!(p.timer_calls, vec![t(rto)]);
    assert_eq!(p.sender.stats.timeouts, 1);
    // Go back to snd_una = 2: the resent 2 releases 3..=19 from the cache; its ACK
    // (rto + 2_221_600) ends the flow after 2..=12 were resent.
    let mut expect: Vec<_> = back_to_back(0, 0..14, false).collect();
    expect.push((14 * SER, 2, true));
    expect.extend(back_to_back(15 * SER, 14..N, false));
    expect.extend(back_to_back(rto, 2..=12, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(rx(&p).copied_bytes, 17 * MTU as u64);
    assert_eq!(done, t(answered(rto)));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn packets_beyond_max_ooo_psn_are_dropped_and_counted() {
    let mut p = gbone("max_ooo_psn = 4\n", N);
    p.script(Rule::drop_data(2));
    let done = p.run();
    let r = rx(&p);
    // With expected = 2 the cache takes offsets 1..=3 (3, 4, 5); 6..=13 are dropped. The
    // resent 2 (14 * SER) releases 3..=5; then expected = 6 and 14..=19 lie 8..=13 beyond it.
    assert_eq!(r.beyond_bitmap, 14);
    assert_eq!(r.stored_bytes, 3 * MTU as u64);
    assert_eq!(r.copied_bytes, 3 * MTU as u64);
    // Only the cached 3, 4, 5 are RACKed: a dropped packet is not reported as received. No
    // packet arrives after 19 to RACK the gap 6..=19, so the RTO, 100 us after the ACK naming
    // 6 (5_156_000), goes back to 6.
    assert_eq!(rx(&p).notifications, 3);
    let ack6 = answered(14 * SER);
    assert_eq!(ack6, 5_156_000);
    let rto = ack6 + 100_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..14, false).collect();
    expect.push((14 * SER, 2, true));
    expect.extend(back_to_back(15 * SER, 14..N, false));
    expect.extend(back_to_back(rto, 6..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(done, t(answered(rto + 13 * SER)));
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn a_packet_dropped_beyond_the_bitmap_is_queued_by_the_next_rack() {
    // The harness's one-BDP bitmap (11 packets on this 40 Gbps / 1 us link) caches offsets
    // 1..=10 behind the hole at 2, so 13 arrives beyond it and is dropped. It is not RACKed;
    // the RACK for 14, after the resent 2 drained 3..=12, names the gap 13 and queues it.
    let mut p = gbone("", N);
    p.script(Rule::drop_data(2));
    p.run();
    assert_eq!(rx(&p).beyond_bitmap, 1);
    assert!(p.timer_calls.is_empty(), "RTO at {:?}", p.timer_calls);
    let retransmitted: Vec<u64> = sends(&p).into_iter().filter(|s| s.2).map(|s| s.1).collect();
    assert_eq!(retransmitted, vec![2, 13]);
    assert_delivered_once_in_order(&p, N);
}
