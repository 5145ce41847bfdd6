//! STRIDE's connection and reliability exchanges at exact times (`transport/stride.rs`). Same
//! link arithmetic as `gbn_exchange.rs` (`util/exact.rs`): SER = 209_600 ps per data packet,
//! CSER = 12_000 ps per receiver control packet, D = 1 us one way; the sender's own control
//! packets (SYN, ACK, FIN) take the data channel with no payload: SSER = 9_600 ps (48 B).
//! The sender paces at line rate counting STRIDE's 62-byte header: PSER = 212_400 ps per
//! data packet. The receiver acknowledges every 4 packets (`segment = "4000B"`, MTU 1000 B).


use retx::transport::common::recovery::SendRecovery;
use retx::transport::RxRecovery;
use retx::transport::common::segment::SegKind;
use retx::transport::TxRecovery;
use retx::transport::loss::stride::{RxPhase, StrideReceiver, StrideSender, TxPhase};
use crate::util::exact::*;
use crate::util::{scenario, Pair, Rule};

/// The NIC's STRIDE DRAM slots (its scheme agent).
fn dram(nic: &retx::transport::NicAgent) -> &retx::transport::loss::stride::StrideDram {
    nic.scheme.get::<retx::transport::loss::stride::StrideDram>().expect("STRIDE's DRAM")
}


const SSER: u64 = 9_600;
const PSER: u64 = 212_400;
const RTO: u64 = 100_000_000;
/// The SYN+ACK reaches the sender: SYN (SSER + D), then SYN+ACK (CSER + D).
const ESTABLISHED: u64 = SSER + D + CSER + D;
/// Data packet 0 leaves after the handshake's ACK (SSER).
const FIRST: u64 = ESTABLISHED + SSER;

/// When data packet k first leaves, without loss: the channel (busy with the ACK, then a
/// packet every SER) or the pacer (a packet every PSER from ESTABLISHED), whichever is later.
fn leave(k: u64) -> u64 {
    (FIRST + k * SER).max(ESTABLISHED + k * PSER)
}

fn stride(npkts: u64) -> Pair {
    Pair::packets(&scenario("stride", "rto = \"100us\"\nsegment = \"4000B\"\n"), npkts, 7)
}

fn tx(p: &Pair) -> &StrideSender {
    match p.sender.recovery() {
        TxRecovery::Stride(s) => s,
        other => panic!("not a STRIDE sender: {other:?}"),
    }
}

fn rx(p: &Pair) -> &StrideReceiver {
    match p.receiver.recovery() {
        RxRecovery::Stride(r) => r,
        other => panic!("not a STRIDE receiver: {other:?}"),
    }
}

/// (sent, kind, index) of every packet the sender put on the wire.
fn sender_packets(p: &Pair) -> Vec<(u64, SegKind, u64)> {
    p.data.iter().map(|w| (w.sent.0, w.seg.kind, w.index)).collect()
}

/// (sent, index, retransmit) of the data packets only.
fn data_sends(p: &Pair) -> Vec<(u64, u64, bool)> {
    p.data.iter().filter(|w| w.seg.kind == SegKind::Data).map(|w| (w.sent.0, w.index, w.seg.retransmit)).collect()
}

#[test]
fn a_handshake_opens_the_flow_an_ack_per_segment_and_a_fin_close_it() {
    let mut p = stride(8);
    let done = p.run();
    assert_delivered_once_in_order(&p, 8);
    let last = leave(7);
    let ack8 = answered(last);
    let fin_ack = ctrl_arrival(ack8 + SSER + D);
    // Data waits one round trip for the SYN+ACK; the flow completes when the FIN+ACK arrives.
    let mut expect = vec![(0, SegKind::Syn, 0), (ESTABLISHED, SegKind::Ack, 8)];
    expect.extend((0..8).map(|k| (leave(k), SegKind::Data, k)));
    expect.push((ack8, SegKind::Fin, 8));
    assert_eq!(sender_packets(&p), expect);
    // The FIN+ACK is answered by the teardown's final ACK, due at once.
    let mut nic = p.tx_nic.clone();
    match p.sender.poll_transmit(t(fin_ack), &mut nic.call(0), retx::transport::common::poll::Want::Responses) {
        retx::transport::common::poll::Transmit::Send(seg) => assert_eq!(seg.kind, SegKind::Ack),
        other => panic!("no final ACK: {other:?}"),
    }
    assert_eq!(
        ctrls(&p),
        vec![
            (SSER + D, SegKind::SynAck, 0),
            (data_arrival(leave(3)), SegKind::Ack, 4),
            (data_arrival(last), SegKind::Ack, 8),
            (ack8 + SSER + D, SegKind::FinAck, 8),
        ]
    );
    assert_eq!(done.0, fin_ack);
    assert_eq!(p.sender.done_at.unwrap().0, fin_ack);
    // The final ACK has not reached the receiver yet.
    assert_eq!((tx(&p).phase(), rx(&p).phase()), (TxPhase::Closed, RxPhase::LastAck));
    assert_eq!((tx(&p).stats.syns, tx(&p).stats.fins), (1, 1));
    // Two 4-packet segments were in DRAM at once, then none.
    assert_eq!((tx(&p).stats.peak_slots, tx(&p).slots()), (2, 0));
    assert_eq!(dram(&p.tx_nic).peak_slots, 2);
    assert_eq!(dram(&p.tx_nic).slots, 0);
}

#[test]
fn dram_slots_and_snd_una_follow_the_segment_acks() {
    // 12 packets, 4 per segment: the pacer sends all 12 before ACK 4 returns (three segments
    // held); ACK 4 frees the first.
    let mut p = stride(12);
    let ack4 = answered(leave(3));
    assert!(leave(11) < ack4, "the timing this test assumes");
    p.run_until(t(ack4 - 1)).unwrap();
    assert_eq!((tx(&p).snd_una(), tx(&p).slots(), dram(&p.tx_nic).slots), (0, 3, 3));
    // Everything sent, nothing due: the connection has no packet to offer.
    assert!(!tx(&p).has_data());
    p.run_until(t(ack4)).unwrap();
    assert_eq!((tx(&p).snd_una(), tx(&p).slots(), dram(&p.tx_nic).slots), (4, 2, 2));
    p.run();
    assert_eq!((tx(&p).snd_una(), tx(&p).slots(), tx(&p).stats.peak_slots), (12, 0, 3));
}

#[test]
fn a_nack_names_the_missing_packet_and_the_sender_goes_back_to_it() {
    let mut p = stride(8);
    p.script(Rule::drop_data(2));
    p.run();
    assert_delivered_once_in_order(&p, 8);
    // Packet 3 arrives out of order: one NACK naming 2 (rate-limited per missing packet, so
    // 4..7 arriving behind it send none).
    let nacks: Vec<_> = p.ctrl_of(SegKind::Nak).iter().map(|w| (w.sent.0, w.index)).collect();
    assert_eq!(nacks, vec![(data_arrival(leave(3)), 2)]);
    let back = answered(leave(3));
    // The pacer released packet 7 before the NACK returned; then 2..7 again, paced.
    let mut expect: Vec<_> = (0..8).map(|k| (leave(k), k, false)).collect();
    expect.extend((2..8).map(|k| (back + (k - 2) * PSER, k, true)));
    assert_eq!(data_sends(&p), expect);
    assert_eq!(p.sender.stats.notifications.naks, 1);
    assert_eq!(p.sender.stats.timeouts, 0);
}

#[test]
fn a_lost_tail_waits_for_the_timer_which_resends_everything_unacknowledged() {
    let mut p = stride(8);
    p.script(Rule::drop_data(7));
    p.run();
    assert_delivered_once_in_order(&p, 8);
    // No packet follows 7, so no NACK: the timer, restarted by ACK 4, fires one RTO later and
    // goes back to snd_una = 4.
    let ack4 = answered(leave(3));
    assert_eq!(p.timer_calls, vec![t(ack4 + RTO)]);
    let resent: Vec<_> = data_sends(&p).into_iter().filter(|s| s.2).collect();
    assert_eq!(resent, (4..8).map(|k| (ack4 + RTO + (k - 4) * PSER, k, true)).collect::<Vec<_>>());
    assert_eq!(p.sender.stats.timeouts, 1);
}

#[test]
fn the_timer_runs_from_the_pacing_gap_after_the_last_packet_when_no_answer_comes() {
    // ACK 4 and packet 7 are lost: the sender hears nothing after the handshake. Its timer
    // runs from when the pacer would have let the packet after 7 go (one PSER after 7 left),
    // not from packet 0, and goes back to snd_una = 0.
    let mut p = stride(8);
    p.script(Rule::drop_data(7));
    p.script(Rule::drop_ctrl(SegKind::Ack).index(4));
    p.run();
    assert_delivered_once_in_order(&p, 8);
    let fired = leave(7) + PSER + RTO;
    assert_eq!(p.timer_calls, vec![t(fired)]);
    let resent: Vec<_> = data_sends(&p).into_iter().filter(|s| s.2).collect();
    assert_eq!(resent, (0..8).map(|k| (fired + k * PSER, k, true)).collect::<Vec<_>>());
    assert_eq!(p.sender.stats.timeouts, 1);
}

#[test]
fn a_lost_syn_or_syn_ack_is_sent_again_after_the_timer() {
    for lost in [SegKind::Syn, SegKind::SynAck] {
        let mut p = stride(4);
        p.script(Rule::drop_kind(lost));
        p.run();
        assert_delivered_once_in_order(&p, 4);
        let syns: Vec<_> = sender_packets(&p).into_iter().filter(|s| s.1 == SegKind::Syn).map(|s| s.0).collect();
        assert_eq!(syns, vec![0, RTO], "{lost:?}");
        // The receiver answers every SYN it gets.
        let answers = p.ctrl_of(SegKind::SynAck).len();
        assert_eq!(answers, if lost == SegKind::Syn { 1 } else { 2 });
        assert_eq!(data_sends(&p)[0].0, RTO + FIRST, "{lost:?}");
        assert_eq!(p.sender.stats.timeouts, 0, "a SYN sent again is not a data timeout");
    }
}

#[test]
fn a_lost_fin_or_fin_ack_is_sent_again_and_the_flow_ends_on_its_answer() {
    for lost in [SegKind::Fin, SegKind::FinAck] {
        let mut p = stride(4);
        p.script(Rule::drop_kind(lost));
        let done = p.run();
        assert_delivered_once_in_order(&p, 4);
        let ack4 = answered(leave(3));
        let fins: Vec<_> = sender_packets(&p).into_iter().filter(|s| s.1 == SegKind::Fin).map(|s| s.0).collect();
        assert_eq!(fins, vec![ack4, ack4 + RTO], "{lost:?}");
        assert_eq!(done.0, ctrl_arrival(ack4 + RTO + SSER + D), "{lost:?}");
        assert_eq!(tx(&p).stats.fins, 2);
    }
}

#[test]
fn a_lost_handshake_ack_is_implied_by_the_first_data_packet() {
    let mut p = stride(4);
    p.script(Rule::drop_kind(SegKind::Ack));
    p.run();
    assert_delivered_once_in_order(&p, 4);
    assert_eq!(data_sends(&p)[0].0, FIRST);
    // Established by data 0 (the ACK never came), then closing: FIN answered.
    assert_eq!(rx(&p).phase(), RxPhase::LastAck);
    assert_eq!(p.ctrl_of(SegKind::Ack)[0].sent.0, data_arrival(leave(3)));
    // The same, stopped just after data 0 arrives: the receiver left SynReceived on it.
    let mut p = stride(4);
    p.script(Rule::drop_kind(SegKind::Ack));
    p.run_until(t(data_arrival(FIRST) - 1)).unwrap();
    assert_eq!(rx(&p).phase(), RxPhase::SynReceived);
    p.run_until(t(data_arrival(FIRST))).unwrap();
    assert_eq!(rx(&p).phase(), RxPhase::Established);
}

#[test]
fn the_receiver_is_established_by_the_handshake_ack_and_closed_by_the_last() {
    use retx::transport::common::segment::Segment;
    let mut p = stride(4);
    // The handshake's ACK leaves at ESTABLISHED and arrives SSER + D later.
    p.run_until(t(ESTABLISHED + SSER + D - 1)).unwrap();
    assert_eq!(rx(&p).phase(), RxPhase::SynReceived);
    p.run_until(t(ESTABLISHED + SSER + D)).unwrap();
    assert_eq!(rx(&p).phase(), RxPhase::Established);
    let done = p.run();
    assert_eq!(rx(&p).phase(), RxPhase::LastAck);
    // The teardown's final ACK (which the harness stops before delivering) closes it.
    let last = Segment::control(SegKind::Ack, retx::transport::common::psn::Psn::new(7 + 4), done);
    let mut nic = p.rx_nic.clone();
    p.receiver.handle_packet(done, &last, &mut nic.call(0));
    assert_eq!(rx(&p).phase(), RxPhase::Closed);
}

#[test]
fn data_before_any_syn_is_not_delivered() {
    use retx::transport::common::segment::Segment;
    let mut p = stride(4);
    let seg = Segment::data(retx::transport::common::psn::Psn::new(7), 1000, 0, t(5));
    let mut nic = p.rx_nic.clone();
    p.receiver.handle_packet(t(5), &seg, &mut nic.call(0));
    assert_eq!(p.receiver.ctx.delivered_bytes, 0);
    assert_eq!(rx(&p).phase(), RxPhase::Listen);
}
