//! MELO (APNet'17 §3): scripted exchanges at exact times. Same link arithmetic as
//! `gbn_exchange.rs` (`util/exact.rs`): SER = 209_600 ps per 1048-byte data packet, CSER =
//! 12_000 ps per control packet, D = 1 us one way, so data packet k first leaves at k * SER
//! when nothing is lost and a control packet answering the arrival of a packet sent at s
//! reaches the sender at s + SER + D + CSER + D = s + 2_221_600.
//!
//! The MELO sender has no window: with N = 20 it has sent everything by 19 * SER, with more
//! packets a retransmission takes the next pacing slot and pushes the new data back by one.


use retx::sim::units::Time;
use retx::transport::loss::melo::MeloReceiver;
use retx::transport::RxRecovery;
use retx::transport::common::segment::{Hole, SegKind};
use retx::transport::common::psn::Psn;
use crate::util::exact::*;
use crate::util::{packets, scenario, Pair, Rule, LINE};

/// The NIC's MELO pools (its scheme agent).
fn pools(nic: &retx::transport::NicAgent) -> &retx::transport::loss::melo::MeloPools {
    nic.scheme.get::<retx::transport::loss::melo::MeloPools>().expect("MELO's pools")
}


/// The message of most exchanges below, in packets.
const N: u64 = 20;
const PSN0: u32 = 100;

/// A MELO scenario with a 100 us timeout; `extra` adds `[recovery.melo]` keys.
fn melo_scenario(extra: &str) -> retx::Scenario {
    scenario("melo", &format!("rto = \"100us\"\n{extra}"))
}

fn melo(extra: &str, npkts: u64) -> Pair {
    Pair::packets(&melo_scenario(extra), npkts, PSN0)
}

fn rx(p: &Pair) -> &MeloReceiver {
    match p.receiver.recovery() {
        RxRecovery::Melo(r) => r,
        other => panic!("not a MELO receiver: {other:?}"),
    }
}

/// The holes a MELO NACK carries, as wire (PSN, length), in wire order.
fn wire_holes(seg: &retx::transport::common::segment::Segment) -> Vec<(u32, u16)> {
    seg.holes().iter().map(|h| (h.start.value(), h.len)).collect()
}

fn assert_pools_empty(p: &Pair) {
    assert_eq!(pools(&p.rx_nic).rx.used_blocks(), 0, "receive pool");
    assert_eq!(pools(&p.tx_nic).tx.used_blocks(), 0, "send pool");
    assert!(rx(p).bitmap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// (a) One loss.

#[test]
fn one_loss_one_nack_one_retransmission_and_the_reorder_buffer_drains() {
    let mut p = melo("", N);
    p.script(Rule::drop_data(5));

    // Just before the retransmission of 5 arrives: 6..=16 wait in the reorder buffer, which
    // spans three 8-bit blocks, [0,8), [8,16), [16,24).
    let resent = 17 * SER; // NACK lands at 3_479_200; the pacer is next free at 17 * SER
    assert_eq!(answered(6 * SER), 3_479_200);
    p.run_until(t(data_arrival(resent) - 1)).unwrap();
    let r = rx(&p);
    assert_eq!(r.holes().as_slice(), &[(5, 1)]);
    assert_eq!((r.bitmap().base(), r.bitmap().blocks()), (0, 3));
    assert_eq!(pools(&p.rx_nic).rx.used_blocks(), 3);
    assert_eq!(r.stored_bytes, 11 * MTU as u64);
    assert_eq!(r.copied_bytes, 0);
    // The sender's bitmap holds one block (for the hole), its bit cleared once sent.
    assert_eq!(pools(&p.tx_nic).tx.used_blocks(), 1);

    let done = p.run();

    // Control: ACKs naming 1..=5; one NACK, at the arrival of 6; nothing for 7..=16; the
    // resent 5 fills the hole (ACK naming 17), then 17, 18, 19 in order.
    let mut expect: Vec<_> = (0..5).map(|k| (data_arrival(k * SER), SegKind::Ack, k + 1)).collect();
    expect.push((data_arrival(6 * SER), SegKind::MeloNack, 5));
    expect.push((data_arrival(resent), SegKind::Ack, 17));
    expect.extend((17..N).map(|k| (data_arrival((k + 1) * SER), SegKind::Ack, k + 1)));
    assert_eq!(ctrls(&p), expect);
    assert_eq!(data_arrival(6 * SER), 2_467_200);
    let nack = p.ctrl_of(SegKind::MeloNack)[0].seg;
    assert_eq!(nack.psn, Psn::new(PSN0 + 5));
    assert_eq!(nack.holes().len(), 1);
    assert_eq!(nack.holes()[0], Hole { start: Psn::new(PSN0 + 5), len: 1 });
    assert_eq!(p.receiver.ctx.naks_sent, 1);

    let mut expect: Vec<_> = back_to_back(0, 0..=16, false).collect();
    expect.push((resent, 5, true));
    expect.extend(back_to_back(18 * SER, 17..N, false));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.retx_pkts, 1);
    assert_eq!(p.sender.stats.notifications.nacks, 1);
    assert!(p.timer_calls.is_empty());

    // The hole filled: exactly 6..=16 (RCV.HIGH - 1 = 16) came out of the reorder buffer.
    let r = rx(&p);
    assert_eq!(r.copied_bytes, 11 * MTU as u64);
    assert_eq!(r.stored_bytes, 11 * MTU as u64);
    assert!(r.holes().as_slice().is_empty());
    assert_eq!((r.dropped_middle, r.dropped_no_bits), (0, 0));
    assert_eq!(pools(&p.rx_nic).rx.peak_used, 3);
    assert_eq!(pools(&p.tx_nic).tx.peak_used, 1);
    assert_eq!((pools(&p.rx_nic).rx.exhausted, pools(&p.tx_nic).tx.exhausted), (0, 0));
    assert_pools_empty(&p);
    assert_eq!(done, t(answered(20 * SER)));
    assert_delivered_once_in_order(&p, N);
}

// ---------------------------------------------------------------------------------------------
// (b) Four holes in one window: the NACK carries the three most recent.

/// 64 packets over a 10 us link (one RTT = ~97 packets), so every first transmission is out
/// before the first NACK returns and the holes at 5, 20, 35, 50 are all open at once. The
/// initial PSN makes the wire PSNs wrap at index 16.
fn four_holes(resend_reported: bool) -> Pair {
    let s = melo_scenario(&format!("resend_reported = {resend_reported}\n"));
    let mut p = Pair::with_link(&s, packets(64, 0xFF_FFF0), LINE, Time::from_us(10));
    for k in [5, 20, 35, 50] {
        p.script(Rule::drop_data(k));
    }
    p
}

const D10: u64 = 10_000_000;
fn data_arrival10(sent: u64) -> u64 {
    sent + SER + D10
}
fn answered10(sent: u64) -> u64 {
    data_arrival10(sent) + CSER + D10
}

/// When each of the four NACKs (at the arrivals of 6, 21, 36, 51) reaches the sender.
fn four_hole_nack_returns() -> [u64; 4] {
    [answered10(6 * SER), answered10(21 * SER), answered10(36 * SER), answered10(51 * SER)]
}

fn check_four_hole_nacks(p: &Pair) {
    let nacks = p.ctrl_of(SegKind::MeloNack);
    let got: Vec<_> = nacks.iter().map(|w| (w.sent.0, w.index, w.seg.psn.value(), wire_holes(&w.seg))).collect();
    let psn = |k: u32| (0xFF_FFF0 + k) & 0xFF_FFFF;
    let expect = vec![
        (data_arrival10(6 * SER), 5, psn(5), vec![(psn(5), 1)]),
        (data_arrival10(21 * SER), 5, psn(5), vec![(psn(20), 1), (psn(5), 1)]),
        (data_arrival10(36 * SER), 5, psn(5), vec![(psn(35), 1), (psn(20), 1), (psn(5), 1)]),
        // The fourth hole pushes the oldest (5) out: most recent first.
        (data_arrival10(51 * SER), 5, psn(5), vec![(psn(50), 1), (psn(35), 1), (psn(20), 1)]),
    ];
    assert_eq!(got, expect);
    assert_eq!((psn(50), psn(35), psn(20)), (34, 19, 4));
}

#[test]
fn nack_of_the_fourth_hole_carries_the_three_most_recent_most_recent_first() {
    let mut p = four_holes(true);
    let done = p.run();
    check_four_hole_nacks(&p);
    // All 64 first transmissions left by 63 * SER = 13_204_800, before the first NACK
    // returned (21_479_200): the sender is idle and answers each NACK at once. With
    // resend_reported every NACK resends every hole it reports that is not already queued,
    // even one already resent (its retransmission cannot have arrived yet: the first arrives
    // at 31_688_800, after the last NACK returns at 30_911_200).
    let n = four_hole_nack_returns();
    assert_eq!(n, [21_479_200, 24_623_200, 27_767_200, 30_911_200]);
    let mut expect: Vec<_> = back_to_back(0, 0..64, false).collect();
    expect.push((n[0], 5, true));
    expect.extend([(n[1], 5, true), (n[1] + SER, 20, true)]);
    expect.extend([(n[2], 5, true), (n[2] + SER, 20, true), (n[2] + 2 * SER, 35, true)]);
    expect.extend([(n[3], 20, true), (n[3] + SER, 35, true), (n[3] + 2 * SER, 50, true)]);
    assert_eq!(sends(&p), expect);
    assert!(p.timer_calls.is_empty());
    // The last hole (50) fills when its only retransmission arrives.
    assert_eq!(done, t(answered10(n[3] + 2 * SER)));
    assert_eq!(pools(&p.rx_nic).rx.peak_used, 8); // [0,64) in 8-bit blocks
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 64);
}

#[test]
fn without_resend_reported_each_hole_is_resent_exactly_once() {
    let mut p = four_holes(false);
    let done = p.run();
    check_four_hole_nacks(&p);
    let n = four_hole_nack_returns();
    let mut expect: Vec<_> = back_to_back(0, 0..64, false).collect();
    expect.extend([(n[0], 5, true), (n[1], 20, true), (n[2], 35, true), (n[3], 50, true)]);
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.retx_pkts, 4);
    assert!(p.timer_calls.is_empty());
    assert_eq!(done, t(answered10(n[3])));
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 64);
}

// ---------------------------------------------------------------------------------------------
// (c) A multi-packet hole split by a retransmission from its middle.

#[test]
fn a_retransmission_inside_a_hole_splits_it() {
    let mut p = melo("", N);
    for k in 10..14 {
        p.script(Rule::drop_data(k));
    }
    for k in [10, 11, 13] {
        p.script(Rule::drop_data(k).nth(2));
    }
    // 14 opens the hole (10, 4). The NACK returns at 5_156_000, after the last first
    // transmission (19 * SER): 10..=13 leave back to back from then on; only 12 arrives.
    let back = answered(14 * SER);
    assert_eq!(back, 5_156_000);
    let arrive12 = data_arrival(back + 2 * SER);
    p.run_until(t(arrive12 - 1)).unwrap();
    assert_eq!(rx(&p).holes().as_slice(), &[(10, 4)]);
    p.run_until(t(arrive12)).unwrap();
    assert_eq!(rx(&p).holes().as_slice(), &[(10, 2), (13, 1)]);
    assert_eq!(p.receiver.ctx.expected(), 10);
    assert!(rx(&p).bitmap().get(&pools(&p.rx_nic).rx, 12));

    let done = p.run();
    let nacks: Vec<_> = p.ctrl_of(SegKind::MeloNack).iter().map(|w| (w.sent.0, w.index, wire_holes(&w.seg))).collect();
    assert_eq!(nacks, vec![(data_arrival(14 * SER), 10, vec![(PSN0 + 10, 4)])]);
    // No new hole forms, so no NACK reports (10, 2) and (13, 1) again: the timeout, 100 us
    // after the last cumulative progress (the ACK naming 10), resends from snd_una = 10.
    let rto = answered(9 * SER) + 100_000_000;
    assert_eq!(rto, 104_108_000);
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..N, false).collect();
    expect.extend(back_to_back(back, 10..14, true));
    expect.extend(back_to_back(rto, 10..N, true));
    assert_eq!(sends(&p), expect);
    // 13 (sent at rto + 3 * SER) completes the message; the ACK naming 20 ends the flow.
    assert_eq!(done, t(answered(rto + 3 * SER)));
    let r = rx(&p);
    assert_eq!(r.stored_bytes, 7 * MTU as u64); // 14..=19, then 12
    assert_eq!(r.copied_bytes, 7 * MTU as u64); // 12 behind 11, then 14..=19 behind 13
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, N);
}

// ---------------------------------------------------------------------------------------------
// (d) A retransmission whose bit lies in a middle block.

/// 40 packets; index 3 and its (only, resend_reported = false) retransmission are lost, so
/// RCV.NXT stays at 3; index 12 is lost too, and its retransmission arrives when RCV.HIGH is
/// 23: the bitmap is [0,8), [8,16), [16,24) and 12 lies in the middle block.
fn middle(drop_middle: bool) -> Pair {
    let mut p = melo(&format!("resend_reported = false\ndrop_middle = {drop_middle}\n"), 40);
    p.script(Rule::drop_data(3)).script(Rule::drop_data(3).nth(2)).script(Rule::drop_data(12));
    p
}

/// Times common to both `middle` runs.
struct Middle {
    resent12: u64,
    rto: u64,
}

fn middle_times(p: &Pair) -> Middle {
    // NACK(4) returns at 3_060_000: 3 is resent at 15 * SER (lost); new data k >= 15 then
    // leaves at (k + 1) * SER. NACK(13) reports (12,1),(3,1) and returns at 4_946_400; 3 is
    // marked sent, so only 12 is queued, for the next slot, 24 * SER.
    assert_eq!(answered(4 * SER), 3_060_000);
    let n13 = answered(13 * SER);
    assert_eq!(n13, 4_946_400);
    let resent12 = 24 * SER;
    let nacks: Vec<_> = p.ctrl_of(SegKind::MeloNack).iter().map(|w| (w.sent.0, wire_holes(&w.seg))).collect();
    assert_eq!(
        nacks,
        vec![
            (data_arrival(4 * SER), vec![(PSN0 + 3, 1)]),
            (data_arrival(13 * SER), vec![(PSN0 + 12, 1), (PSN0 + 3, 1)]),
        ]
    );
    // The last cumulative progress is the ACK naming 3.
    let rto = answered(2 * SER) + 100_000_000;
    assert_eq!(rto, 102_640_800);
    Middle { resent12, rto }
}

fn middle_first_sends(m: &Middle) -> Vec<(u64, u64, bool)> {
    let mut expect: Vec<_> = back_to_back(0, 0..15, false).collect();
    expect.push((15 * SER, 3, true));
    expect.extend(back_to_back(16 * SER, 15..23, false));
    expect.push((m.resent12, 12, true));
    expect.extend(back_to_back(25 * SER, 23..40, false));
    expect
}

#[test]
fn retransmission_into_a_middle_block_is_dropped() {
    let mut p = middle(true);
    p.run_until(t(data_arrival(24 * SER))).unwrap();
    let r = rx(&p);
    assert_eq!(p.receiver.ctx.expected(), 3);
    // RCV.HIGH = 23: 22 (sent at 23 * SER) arrived at 6_030_400, 23 arrives at 6_449_600.
    assert_eq!((r.bitmap().base(), r.bitmap().blocks()), (0, 3));
    assert_eq!(r.dropped_middle, 1);
    assert!(!r.bitmap().get(&pools(&p.rx_nic).rx, 12));
    assert_eq!(r.holes().as_slice(), &[(3, 1), (12, 1)]);

    let done = p.run();
    let m = middle_times(&p);
    assert_eq!(p.timer_calls, vec![t(m.rto)]);
    // The timeout resends from 3; the resent 3 releases 4..=11, the resent 12 (sent at
    // rto + 9 * SER) releases 13..=39 and its ACK ends the flow. Meanwhile the ACK naming 12
    // (rto + 2_221_600) did not move snd_nxt (already 14).
    let mut expect = middle_first_sends(&m);
    expect.extend(back_to_back(m.rto, 3..=22, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(done, t(answered(m.rto + 9 * SER)));
    let r = rx(&p);
    assert_eq!(r.dropped_middle, 1);
    assert_eq!(r.dropped_no_bits, 0);
    assert_eq!(r.copied_bytes, (8 + 27) * MTU as u64);
    assert_eq!(r.stored_bytes, 35 * MTU as u64); // first copies of 4..=39 except 12
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 40);
}

#[test]
fn retransmission_into_a_middle_block_is_accepted_without_the_rule() {
    let mut p = middle(false);
    p.run_until(t(data_arrival(24 * SER))).unwrap();
    let r = rx(&p);
    assert_eq!((r.bitmap().base(), r.bitmap().blocks()), (0, 3));
    assert_eq!(r.dropped_middle, 0);
    assert!(r.bitmap().get(&pools(&p.rx_nic).rx, 12));
    assert_eq!(r.holes().as_slice(), &[(3, 1)]);

    let done = p.run();
    let m = middle_times(&p);
    assert_eq!(p.timer_calls, vec![t(m.rto)]);
    // The resent 3 now releases 4..=39 at once: its ACK (rto + 2_221_600) ends the flow after
    // 3..=13 were resent.
    let mut expect = middle_first_sends(&m);
    expect.extend(back_to_back(m.rto, 3..=13, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(done, t(answered(m.rto)));
    let r = rx(&p);
    assert_eq!(r.dropped_middle, 0);
    assert_eq!(r.copied_bytes, 36 * MTU as u64);
    assert_eq!(r.stored_bytes, 36 * MTU as u64); // first copies of 4..=39 except 12, then 12
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 40);
}

// ---------------------------------------------------------------------------------------------
// (e) The pool runs out.

#[test]
fn a_packet_that_cannot_get_a_block_is_dropped_and_the_timeout_recovers() {
    // Two 8-bit blocks per NIC: RCV.NXT = 3 can cover [0,16) only.
    let mut p = melo("pool_bits = 16\n", N);
    p.script(Rule::drop_data(3)).script(Rule::drop_data(3).nth(2));
    let done = p.run();
    let r = rx(&p);
    // 16..=19 (sent at 17..=20 * SER, after the lost retransmission of 3 at 15 * SER) each
    // need a third block: dropped, no hole, no NACK.
    assert_eq!(r.dropped_no_bits, 4);
    assert_eq!(r.dropped_middle, 0);
    assert_eq!(pools(&p.rx_nic).rx.exhausted, 4);
    assert_eq!(pools(&p.rx_nic).rx.peak_used, 2);
    assert_eq!(pools(&p.rx_nic).rx.blocks(), 2);
    assert_eq!(p.ctrl_of(SegKind::MeloNack).len(), 1);
    // Go-back-N for them: the timeout (100 us after the ACK naming 3) resends from 3.
    let rto = answered(2 * SER) + 100_000_000;
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect: Vec<_> = back_to_back(0, 0..15, false).collect();
    expect.push((15 * SER, 3, true));
    expect.extend(back_to_back(16 * SER, 15..N, false));
    // The resent 3 releases 4..=15; its ACK (rto + 2_221_600) moves snd_nxt from 14 to 16.
    expect.extend(back_to_back(rto, 3..=13, true));
    expect.extend(back_to_back(rto + 11 * SER, 16..N, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(done, t(answered(rto + 14 * SER)));
    assert_eq!(r.copied_bytes, 12 * MTU as u64); // 4..=15
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, N);
}

// ---------------------------------------------------------------------------------------------
// (f) A lost retransmission.

/// 30 packets: 5 is lost, and so is its first retransmission (at 17 * SER); 20 is lost, and
/// the NACK of 21 (returning at 6_832_800, the sender idle) reports (20,1),(5,1).
fn lost_retransmission(resend_reported: bool) -> Pair {
    let mut p = melo(&format!("resend_reported = {resend_reported}\n"), 30);
    p.script(Rule::drop_data(5)).script(Rule::drop_data(5).nth(2)).script(Rule::drop_data(20));
    p
}

fn lost_retransmission_first_sends() -> Vec<(u64, u64, bool)> {
    let mut expect: Vec<_> = back_to_back(0, 0..17, false).collect();
    expect.push((17 * SER, 5, true));
    expect.extend(back_to_back(18 * SER, 17..30, false));
    expect
}

#[test]
fn lost_retransmission_is_resent_by_the_next_nack_reporting_its_hole() {
    let mut p = lost_retransmission(true);
    let done = p.run();
    let n21 = answered(22 * SER);
    assert_eq!(n21, 6_832_800);
    let nacks: Vec<_> = p.ctrl_of(SegKind::MeloNack).iter().map(|w| wire_holes(&w.seg)).collect();
    assert_eq!(nacks, vec![vec![(PSN0 + 5, 1)], vec![(PSN0 + 20, 1), (PSN0 + 5, 1)]]);
    let mut expect = lost_retransmission_first_sends();
    expect.extend([(n21, 5, true), (n21 + SER, 20, true)]);
    assert_eq!(sends(&p), expect);
    assert!(p.timer_calls.is_empty());
    assert_eq!(p.sender.stats.timeouts, 0);
    assert_eq!(done, t(answered(n21 + SER)));
    assert!(done < t(answered(2 * SER) + 100_000_000));
    // The resent 5 (8_042_400) moved RCV.NXT to 20 before the resent 20 arrived: 20 then
    // lies in the first block, not a middle one.
    assert_eq!(rx(&p).dropped_middle, 0);
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 30);
}

#[test]
fn lost_retransmission_waits_for_the_timeout_without_resend_reported() {
    let mut p = lost_retransmission(false);
    let done = p.run();
    let n21 = answered(22 * SER);
    // The timer last restarted on the ACK naming 5 (3_060_000): NACKs carry cum 5 too but
    // move nothing.
    let rto = answered(4 * SER) + 100_000_000;
    assert_eq!(rto, 103_060_000);
    assert_eq!(p.timer_calls, vec![t(rto)]);
    let mut expect = lost_retransmission_first_sends();
    expect.push((n21, 20, true));
    // That retransmission of 20 arrives (8_042_400) while RCV.NXT = 5 and RCV.HIGH = 30: the
    // bitmap is [0,8) .. [24,32) and 20 lies in the third of four blocks, so it is dropped.
    // Go back to 5: the resent 5 releases 6..=19; its ACK (rto + 2_221_600) moves snd_nxt
    // from 16 to 20, and the resent 20 releases 21..=29.
    expect.extend(back_to_back(rto, 5..=15, true));
    expect.extend(back_to_back(rto + 11 * SER, 20..30, true));
    assert_eq!(sends(&p), expect);
    assert_eq!(p.sender.stats.timeouts, 1);
    assert_eq!(rx(&p).dropped_middle, 1);
    assert_eq!(done, t(answered(rto + 11 * SER)));
    assert_pools_empty(&p);
    assert_delivered_once_in_order(&p, 30);
}

// ---------------------------------------------------------------------------------------------
// Configuration corners.

#[test]
fn a_pool_smaller_than_one_block_never_delivers_the_wrong_payload() {
    // One 8-bit block; the reorder ring has 4 slots. Losing 1 stores 2..=7; 6 overwrites 2.
    let mut p = melo("pool_bits = 4\nblock_bits = 8\n", N);
    p.script(Rule::drop_data(1));
    p.run();
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    assert_delivered_once_in_order(&p, N);
}

#[test]
fn an_invalid_block_size_is_a_scenario_error_not_a_panic() {
    for bits in [0, 65] {
        let text = format!(
            "name = \"x\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\n\
             [transport]\nrecovery = \"melo\"\n[recovery.melo]\nblock_bits = {bits}\n\
             [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
        );
        let r = std::panic::catch_unwind(|| retx::run_toml(&text).map(|_| ()));
        match r {
            Ok(Err(e)) => assert!(e.to_string().contains("block_bits"), "{e}"),
            Ok(Ok(())) => panic!("block_bits = {bits} accepted"),
            Err(_) => panic!("block_bits = {bits}: run_toml panicked"),
        }
    }
}
