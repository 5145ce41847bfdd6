//! The wire codecs against hostile input: every parser takes arbitrary bytes without
//! panicking, and every valid representation survives emit then parse.

use proptest::prelude::*;
use retx::net::int::NO_INT;
use retx::net::packet::{Frame, Packet, PRIORITY_DATA};
use retx::sim::units::Time;
use retx::transport::common::psn::Psn;
use retx::transport::common::segment::{Ecn, Ext, Hole, SegKind, Segment};
use retx::wire::{aeth, bth, ethernet, ext, frame, icrc, ipv4, udp};

fn any_psn() -> impl Strategy<Value = Psn> {
    any::<u32>().prop_map(Psn::new)
}

fn any_syndrome() -> impl Strategy<Value = aeth::Syndrome> {
    prop_oneof![
        (0u8..32).prop_map(|credits| aeth::Syndrome::Ack { credits }),
        (0u8..32).prop_map(|timer| aeth::Syndrome::Rnr { timer }),
        (0u8..5).prop_map(|c| aeth::Syndrome::Nak(aeth::NakCode::from_code(c).unwrap())),
    ]
}

fn any_ext() -> impl Strategy<Value = ext::Repr> {
    let entry = (any_psn(), any::<u16>()).prop_map(|(psn, len)| ext::Entry { psn, len });
    prop_oneof![
        any_psn().prop_map(|p| ext::Repr::single(ext::Kind::Sack, p)),
        any_psn().prop_map(|p| ext::Repr::single(ext::Kind::Rack, p)),
        (proptest::array::uniform3(entry), 1u8..=3).prop_map(|(entries, n)| {
            let mut e = [ext::Entry::default(); 3];
            e[..n as usize].copy_from_slice(&entries[..n as usize]);
            ext::Repr { kind: ext::Kind::Holes, entries: e, n }
        }),
    ]
}

fn any_kind() -> impl Strategy<Value = SegKind> {
    prop_oneof![
        Just(SegKind::Data),
        Just(SegKind::Ack),
        Just(SegKind::Nak),
        Just(SegKind::Sack),
        Just(SegKind::Cnp),
        Just(SegKind::MeloNack),
        Just(SegKind::Rack),
        Just(SegKind::Syn),
        Just(SegKind::SynAck),
        Just(SegKind::Fin),
        Just(SegKind::FinAck),
        Just(SegKind::Grant),
    ]
}

fn any_packet() -> impl Strategy<Value = Packet> {
    let hole = (any_psn(), any::<u16>()).prop_map(|(start, len)| Hole { start, len });
    (any_kind(), any_psn(), 0u32..=9000, any::<bool>(), 0u8..3, any::<bool>(), any_psn(), proptest::array::uniform3(hole), 0u8..=3, any::<u32>(), 0u8..2)
        .prop_map(|(kind, psn, payload, last, ecn, ece, other, holes, n, flow, dir)| {
            let ext = match kind {
                SegKind::Sack => Ext::Sack(other),
                SegKind::Rack => Ext::Rack(other),
                SegKind::MeloNack => Ext::Holes { holes, n },
                _ => Ext::None,
            };
            let seg = Segment {
                kind,
                payload: if kind == SegKind::Data { payload } else { 0 },
                last,
                ecn: [Ecn::NotEct, Ecn::Ect, Ecn::Ce][ecn as usize],
                ece,
                ext,
                ..Segment::data(psn, 0, 0, Time::ZERO)
            };
            Packet { frame: Frame::Transport, seg, flow, dir, src: 0, dst: 1, size: 0, priority: PRIORITY_DATA as u8, in_port: 0, entropy: 0, int: NO_INT, via: retx::net::packet::NO_VIA }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_parser_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let b = &bytes[..];
        if let Ok(f) = ethernet::Frame::new_checked(b) { let _ = ethernet::Repr::parse(&f); let _ = f.payload(); }
        if let Ok(p) = ipv4::Packet::new_checked(b) { let _ = ipv4::Repr::parse(&p); let _ = p.payload(); }
        if let Ok(p) = udp::Packet::new_checked(b) { let _ = udp::Repr::parse(&p); let _ = p.payload(); }
        if let Ok(h) = bth::Header::new_checked(b) { let _ = bth::Repr::parse(&h); let _ = h.payload(); }
        if let Ok(h) = aeth::Header::new_checked(b) { let _ = aeth::Repr::parse(&h); }
        if let Ok(h) = ext::Header::new_checked(b) { let _ = ext::Repr::parse(&h); }
        let _ = icrc::compute(b);
        let _ = frame::Repr::parse(b);
    }

    /// Arbitrary bytes behind a valid Ethernet/IPv4/UDP prefix reach the inner parsers.
    #[test]
    fn frame_parse_survives_any_roce_payload(tail in proptest::collection::vec(any::<u8>(), 0..120)) {
        let ip = ipv4::Repr { src_addr: ipv4::Address([10, 0, 0, 1]), dst_addr: ipv4::Address([10, 0, 0, 2]), next_header: ipv4::PROTOCOL_UDP, payload_len: 8 + tail.len(), hop_limit: 64, dscp: 0, ecn: 0, ident: 0, dont_frag: true };
        let mut buf = vec![0u8; 14 + ip.buffer_len()];
        ethernet::Repr { src_addr: ethernet::Address([2; 6]), dst_addr: ethernet::Address([4; 6]), ethertype: ethernet::ETHERTYPE_IPV4 }.emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        ip.emit(&mut ipv4::Packet::new_unchecked(&mut buf[14..]));
        udp::Repr { src_port: 1, dst_port: udp::ROCEV2_PORT, payload_len: tail.len() }.emit(&mut udp::Packet::new_unchecked(&mut buf[34..]));
        buf[42..].copy_from_slice(&tail);
        // Fix the ICRC so the inner headers get parsed too, as often as not.
        if tail.len() >= 16 && tail[0] & 1 == 0 {
            let n = buf.len();
            let crc = icrc::compute(&buf[14..n - 4]).unwrap();
            buf[n - 4..].copy_from_slice(&crc.to_le_bytes());
        }
        let _ = frame::Repr::parse(&buf);
    }

    #[test]
    fn headers_round_trip(
        mac in any::<[u8; 6]>(), mac2 in any::<[u8; 6]>(), ethertype in any::<u16>(),
        a in any::<[u8; 4]>(), b in any::<[u8; 4]>(), proto in any::<u8>(), ip_len in 0usize..2000, ttl in any::<u8>(), dscp in 0u8..64, ecn in 0u8..4, ident in any::<u16>(), df in any::<bool>(),
        sport in any::<u16>(), dport in any::<u16>(), udp_len in 0usize..2000,
        opcode in any::<u8>(), flags in any::<[bool; 6]>(), pad in 0u8..4, pkey in any::<u16>(), qp in 0u32..1 << 24, psn in any_psn(),
        syndrome in any_syndrome(), msn in 0u32..1 << 24, x in any_ext(),
    ) {
        let e = ethernet::Repr { src_addr: ethernet::Address(mac), dst_addr: ethernet::Address(mac2), ethertype };
        let mut buf = vec![0u8; e.buffer_len()];
        e.emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        prop_assert_eq!(ethernet::Repr::parse(&ethernet::Frame::new_checked(&buf[..]).unwrap()), Ok(e));

        let ip = ipv4::Repr { src_addr: ipv4::Address(a), dst_addr: ipv4::Address(b), next_header: proto, payload_len: ip_len, hop_limit: ttl, dscp, ecn, ident, dont_frag: df };
        let mut buf = vec![0u8; ip.buffer_len()];
        ip.emit(&mut ipv4::Packet::new_unchecked(&mut buf[..]));
        prop_assert_eq!(ipv4::Repr::parse(&ipv4::Packet::new_checked(&buf[..]).unwrap()), Ok(ip));

        let u = udp::Repr { src_port: sport, dst_port: dport, payload_len: udp_len };
        let mut buf = vec![0u8; u.buffer_len()];
        u.emit(&mut udp::Packet::new_unchecked(&mut buf[..]));
        prop_assert_eq!(udp::Repr::parse(&udp::Packet::new_checked(&buf[..]).unwrap()), Ok(u));

        let h = bth::Repr { opcode, solicited: flags[0], migreq: flags[1], pad, pkey, fecn: flags[2], becn: flags[3], dest_qp: qp, ack_req: flags[4], psn };
        let mut buf = [0u8; bth::HEADER_LEN];
        h.emit(&mut bth::Header::new_unchecked(&mut buf[..]));
        prop_assert_eq!(bth::Repr::parse(&bth::Header::new_checked(&buf[..]).unwrap()), Ok(h));

        let ae = aeth::Repr { syndrome, msn };
        let mut buf = [0u8; aeth::HEADER_LEN];
        ae.emit(&mut aeth::Header::new_unchecked(&mut buf[..]));
        prop_assert_eq!(aeth::Repr::parse(&aeth::Header::new_checked(&buf[..]).unwrap()), Ok(ae));

        let mut buf = vec![0u8; x.buffer_len()];
        x.emit(&mut ext::Header::new_unchecked(&mut buf[..]));
        prop_assert_eq!(ext::Repr::parse(&ext::Header::new_checked(&buf[..]).unwrap()), Ok(x));
    }

    /// Every simulated packet maps to a frame that parses back to the same headers, with a
    /// good ICRC, and flipping a bit of any byte is caught, except where nothing covers it:
    /// the Ethernet header (no FCS in a capture), the UDP checksum (RoCEv2 leaves it 0, the
    /// ICRC masks it) and BTH byte 4 (FECN/BECN, masked by the ICRC; its reserved bit 0 is
    /// ignored).
    #[test]
    fn packets_round_trip_as_frames(pkt in any_packet(), src in 0u32..70_000, dst in 0u32..70_000, initial in any_psn(), msn in 0u32..2, message_len in any::<u32>(), flip in any::<prop::sample::Index>()) {
        let ctx = frame::Context { src_host: src, dst_host: dst, initial_psn: initial, msn, message_len };
        let r = frame::Repr::from_packet(&pkt, &ctx);
        let mut buf = vec![0u8; r.buffer_len()];
        prop_assert_eq!(r.emit(&mut buf), Ok(buf.len()));
        prop_assert_eq!(frame::Repr::parse(&buf), Ok(r));
        if pkt.seg.kind == SegKind::Data {
            prop_assert_eq!(r.payload_len, pkt.seg.payload as usize);
            prop_assert_eq!(buf.len() % 2, 0);
        }
        let i = flip.index(buf.len());
        buf[i] ^= 0x01;
        let uncovered = i < 14 || i == 40 || i == 41 || i == 46;
        prop_assert!(uncovered || frame::Repr::parse(&buf).is_err(), "flipped byte {} went unnoticed", i);
    }
}
