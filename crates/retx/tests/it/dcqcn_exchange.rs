//! DCQCN: the notification point (receiver CNPs) and the reaction point (sender rate and
//! pacing), at exact times. Link arithmetic as in `gbn_exchange.rs`.


use retx::sim::units::{Rate, Time};
use retx::transport::common::poll::{Transmit, Want};
use retx::transport::common::segment::{Ecn, SegKind, Segment};
use retx::transport::{NicAgent, DATA_HEADER_BYTES};
use retx::Scenario;
use crate::util::exact::*;
use crate::util::{packets, scenario_toml, transport_toml, Pair, Rule, LINE};

/// Go-back-N under DCQCN.
fn dcqcn() -> Scenario {
    scenario_toml(&transport_toml("gbn", "dcqcn", ""))
}

/// The first `n` data segments a fresh sender emits (pacing ignored: polled far apart).
fn data_segments(n: u64) -> Vec<Segment> {
    let s = dcqcn();
    let (mut tx, _) = retx::config::template::transport(&s).endpoints(packets(n, 7), LINE, 10, Default::default());
    let mut nic = NicAgent::new(&retx::config::template::transport(&s));
    (0..n)
        .map(|k| match tx.poll_transmit(Time::from_us(k), &mut nic.call(0), Want::Any) {
            Transmit::Send(s) => s,
            other => panic!("expected a data packet, got {other:?}"),
        })
        .collect()
}

#[test]
fn receiver_sends_one_cnp_per_50us_for_marked_packets() {
    let segs = data_segments(5);
    let s = dcqcn();
    let (_, mut rx) = retx::config::template::transport(&s).endpoints(packets(5, 7), LINE, 10, Default::default());
    let mut nic = NicAgent::new(&retx::config::template::transport(&s));
    let mut feed = |now: Time, k: usize, ecn: bool| {
        let mut s = segs[k];
        s.ecn = if ecn { Ecn::Ce } else { Ecn::Ect };
        rx.handle_packet(now, &s, &mut nic.call(0));
        std::iter::from_fn(|| match rx.poll_transmit(now, &mut nic.call(0), Want::Responses) {
            Transmit::Send(c) => Some(c),
            _ => None,
        })
        .map(|c| (c.kind, c.psn.value(), c.echo_ts))
        .collect::<Vec<_>>()
    };
    // A marked packet: a CNP (naming its PSN, echoing its send time) ahead of the ACK.
    assert_eq!(feed(t(1_000_000), 0, true), vec![(SegKind::Cnp, 7, segs[0].ts), (SegKind::Ack, 8, segs[0].ts)]);
    // Marked again 1 ps before the 50 us interval ends: no CNP.
    assert_eq!(feed(t(51_000_000 - 1), 1, true), vec![(SegKind::Ack, 9, segs[1].ts)]);
    // Unmarked after the interval: no CNP.
    assert_eq!(feed(t(60_000_000), 2, false), vec![(SegKind::Ack, 10, segs[2].ts)]);
    // Marked, 50 us after the last CNP (not after the last mark): a CNP.
    assert_eq!(feed(t(61_000_000), 3, true), vec![(SegKind::Cnp, 10, segs[3].ts), (SegKind::Ack, 11, segs[3].ts)]);
    assert_eq!(rx.cnps_sent, 2);
}

#[test]
fn one_cnp_halves_the_rate_and_doubles_the_pacing_gap() {
    let n = 30;
    let mut p = Pair::packets(&dcqcn(), n, 0);
    // Mark index 3 and index 20; the second arrives within 50 us of the first CNP.
    p.script(Rule::mark_ecn(3)).script(Rule::mark_ecn(20));
    let done = p.run();

    let cnps: Vec<_> = p.ctrl_of(SegKind::Cnp).iter().map(|w| (w.sent.0, w.index, w.arrived.map(|a| a.0))).collect();
    let marked = 4 * SER + D; // index 3 arrives at 1_838_400
    assert_eq!(cnps, vec![(marked, 3, Some(marked + CSER + D))]);
    // The ACK for index 3 queued behind the CNP on the control wire.
    let ack3 = p.ctrl.iter().find(|w| w.seg.kind == SegKind::Ack && w.index == 4).expect("ACK of 3");
    assert_eq!((ack3.sent, ack3.arrived), (t(marked + CSER), Some(t(marked + 2 * CSER + D))));
    assert_eq!(p.receiver.cnps_sent, 1);
    assert_eq!(p.sender.stats.cnps, 1);

    // alpha starts at 1: Rc = 40 Gbps * (1 - 1/2) = 20 Gbps.
    assert_eq!(p.sender.rate(), Rate::gbps(20));
    // The CNP arrives at 2_850_400. Index 13 left at 2_724_800 at line rate, so 14 leaves at
    // 14 * SER = 2_934_400; from then on packets are (1000 + 48) * 8 / 20e9 s = 419_200 ps
    // apart.
    let slow = Rate::gbps(20).serialization((MTU + DATA_HEADER_BYTES) as u64);
    assert_eq!(slow, t(419_200));
    assert_eq!(slow.0, 2 * SER);
    let expect: Vec<u64> = (0..n).map(|k| if k <= 14 { k * SER } else { 14 * SER + (k - 14) * slow.0 }).collect();
    let got: Vec<u64> = p.data.iter().map(|w| w.sent.0).collect();
    assert_eq!(got, expect);
    let gaps: Vec<u64> = got.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps[..14], [SER; 14]);
    assert_eq!(gaps[14..], [2 * SER; 15]);

    assert_eq!(p.delivered(), (0..n).collect::<Vec<_>>().as_slice());
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    assert_eq!(done, t(14 * SER + 15 * slow.0 + SER + D + CSER + D));
}

#[test]
fn without_marks_the_sender_stays_at_line_rate() {
    let n = 30;
    let mut p = Pair::packets(&dcqcn(), n, 0);
    p.run();
    assert!(p.ctrl_of(SegKind::Cnp).is_empty());
    assert_eq!(p.sender.rate(), LINE);
    let got: Vec<u64> = p.data.iter().map(|w| w.sent.0).collect();
    assert_eq!(got, (0..n).map(|k| k * SER).collect::<Vec<_>>());
}
