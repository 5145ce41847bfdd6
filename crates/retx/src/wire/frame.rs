//! A simulated packet as a RoCEv2 frame: Ethernet II, IPv4, UDP to port 4791, BTH, then an
//! AETH and retx's extension header ([`super::ext`]) on responses, the payload and pad, and the
//! ICRC ([`super::icrc`]). [`Repr::from_packet`] maps a packet, [`Repr::emit`] writes it and
//! [`Repr::parse`] reads a frame back, checking every header and the ICRC.
//!
//! | simulated packet | OpCode | BTH PSN | after the BTH |
//! |---|---|---|---|
//! | data, first / middle / last / only packet of the message | RC RDMA WRITE First 0x06 / Middle 0x07 / Last 0x08 / Only 0x0A; AckReq on Last and Only | its PSN | RETH on First and Only (below), payload (zeros), pad to 4 B |
//! | ACK | RC Acknowledge 0x11 | expected PSN - 1 (the last one acknowledged) | AETH ACK, credit count 31 (none); MSN |
//! | NAK (go-back-N) | RC Acknowledge 0x11 | expected PSN | AETH NAK, PSN sequence error; MSN |
//! | IRN SACK (NACK) | RC Acknowledge 0x11 | expected PSN | AETH NAK, PSN sequence error; MSN; ext SACK (kind 1): the PSN received out of order |
//! | Go-Back-ONE RACK | RC Acknowledge 0x11 | expected PSN | AETH NAK, PSN sequence error; MSN; ext RACK (kind 2): the PSN received out of order |
//! | MELO NACK | RC Acknowledge 0x11 | expected PSN | AETH NAK, PSN sequence error; MSN; ext HOLES (kind 3): up to 3 (PSN, length), most recent first |
//! | CNP | RoCEv2 CNP 0x81, BECN set, PSN 0 | 0 | 16 reserved bytes |
//! | STRIDE SYN / SYN-ACK / FIN / FIN-ACK | manufacturer-specific 0xC0 / 0xC1 / 0xC2 / 0xC3 (AckReq on SYN and FIN) | its PSN | nothing |
//!
//! RDMA WRITE, as bulk RDMA benchmarks (`ib_write_bw`) and the testbeds of DCQCN and HPCC
//! move data, rather than SEND: Wireshark reassembles a multi-packet SEND message as
//! RPC-over-RDMA (its `rpcordma` dissector claims every SEND First..Last sequence), which
//! mislabels the trace. The simulation has no remote buffer, so the RETH is made up: virtual
//! address 0, R_Key the responder's queue pair number, DMA length the flow's size (saturated at
//! 2^32 - 1 B, also for an endless flow).
//! A packet is the first of its message when its PSN is the flow's initial PSN, the last when
//! the simulation marks it so (`Segment::last`). The MSN of a response counts the messages
//! the responder has completed: a flow is one message, so it is 0 until the response
//! acknowledges the flow's last packet, then 1 (endless flows stay at 0).
//!
//! Addressing: host `i` (its index among the topology's hosts) has IPv4 address 10.0.x.y with
//! x.y = i + 1 as a 16-bit number (h0 is 10.0.0.1, h255 10.0.1.0: no host takes 10.0.0.0) and
//! MAC 02:00:0a:00:x:y (locally administered).
//! Flow `f` has queue pairs 2 + 2f (requester) and 3 + 2f (responder), modulo 2^24: the BTH
//! names the one the packet goes to. Every packet of flow `f`, both ways, has UDP source
//! port 10000 + f (mod 2^16; the simulation's 5-tuple entropy uses the same) and destination
//! port 4791. IPv4: TTL 64, Don't Fragment, identification 0, DSCP 0, the packet's ECN
//! codepoint (ECT(0) on data, CE once marked). An ECN echo on a response (`Segment::ece`)
//! sets the BTH's BECN bit. P_Key 0xffff, transport version 0.
//!
//! Lengths: headers are RoCEv2's (58 B with the ICRC, no FCS, plus the 16 B RETH on a
//! message's first packet) and data carries exactly the simulated payload, so a data frame is
//! 58 B + payload + pad (74 B + payload + pad for the first); the simulation's own size
//! model charges 48 B of header per data packet and 60 B per response (the HPCC ns-3 model's),
//! so frames are 10 to 13 B longer than the simulated data packet and 2 B (ACK, NAK) to 30 B
//! (MELO NACK with 3 holes) longer than a simulated response (STRIDE and INT runs size their
//! packets differently). INT records are not written.

use super::{aeth, bth, ethernet, ext, icrc, ipv4, reth, udp, Error, Result};
use crate::net::packet::Packet;
use crate::transport::common::psn::{Psn, PSN_MASK};
use crate::transport::common::segment::{Ecn, Ext, SegKind};

/// Ethernet, IPv4, UDP and BTH.
pub const BASE_HEADER_LEN: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN;
pub const ICRC_LEN: usize = 4;
/// The reserved bytes of a CNP after its BTH.
pub const CNP_RESERVED_LEN: usize = 16;
/// The longest frame [`Repr::emit`] writes for a payload of at most `mtu` bytes.
pub const fn max_frame_len(mtu: usize) -> usize {
    BASE_HEADER_LEN + aeth::HEADER_LEN + ext::FIXED_LEN + ext::ENTRY_LEN * ext::MAX_ENTRIES + mtu + 3 + ICRC_LEN
}

/// The STRIDE connection opcodes (manufacturer-specific range).
pub mod opcode {
    use super::bth::opcode::VENDOR_BASE;
    pub const SYN: u8 = VENDOR_BASE;
    pub const SYN_ACK: u8 = VENDOR_BASE + 1;
    pub const FIN: u8 = VENDOR_BASE + 2;
    pub const FIN_ACK: u8 = VENDOR_BASE + 3;
    /// A receiver's grant (PULL, credit): header only, its PSN names what it permits.
    pub const GRANT: u8 = VENDOR_BASE + 4;
}

const TTL: u8 = 64;
const FIRST_UDP_PORT: u16 = 10_000;

/// Host `i`'s IPv4 address, 10.0.x.y with x.y = i + 1 (mod 2^16).
pub fn ip_addr(host: u32) -> ipv4::Address {
    let [x, y] = (host as u16).wrapping_add(1).to_be_bytes();
    ipv4::Address([10, 0, x, y])
}

/// Host `i`'s MAC address, 02:00:0a:00:x:y with x.y as in [`ip_addr`].
pub fn mac_addr(host: u32) -> ethernet::Address {
    let [x, y] = (host as u16).wrapping_add(1).to_be_bytes();
    ethernet::Address([0x02, 0x00, 0x0a, 0x00, x, y])
}

/// The queue pair of flow `flow`'s requester (`end` 0) or responder (`end` 1).
pub fn qpn(flow: u32, end: u8) -> u32 {
    (2 + 2 * flow as u64 + end as u64) as u32 & PSN_MASK
}

/// What a frame needs beyond the packet: its hosts, and what the writer knows of its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// Host indices (position among the topology's hosts) of the sender and the receiver.
    pub src_host: u32,
    pub dst_host: u32,
    /// The flow's first PSN: a data packet with it opens the message.
    pub initial_psn: Psn,
    /// The AETH MSN of a response.
    pub msn: u32,
    /// The RETH DMA length of a message's first data packet: the flow's bytes.
    pub message_len: u32,
}

/// A whole frame's headers; the payload is `payload_len` zero bytes (for a CNP its 16
/// reserved bytes), then `bth.pad` zero bytes, then the ICRC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub eth: ethernet::Repr,
    pub ip: ipv4::Repr,
    pub udp: udp::Repr,
    pub bth: bth::Repr,
    /// On the first data packet of a message (RDMA WRITE First or Only).
    pub reth: Option<reth::Repr>,
    pub aeth: Option<aeth::Repr>,
    pub ext: Option<ext::Repr>,
    pub payload_len: usize,
}

fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect => 0b10,
        Ecn::Ce => 0b11,
    }
}

impl Repr {
    /// The frame of a transport packet (see the module's table).
    pub fn from_packet(pkt: &Packet, ctx: &Context) -> Repr {
        use bth::opcode::*;
        let seg = &pkt.seg;
        let nak = |msn| Some(aeth::Repr { syndrome: aeth::Syndrome::Nak(aeth::NakCode::PsnSequenceError), msn });
        let single = |kind, psn| Some(ext::Repr::single(kind, psn));
        let dest_qp = qpn(pkt.flow, pkt.dir ^ 1);
        let mut reth = None;
        // (opcode, PSN, AckReq, AETH, extension, payload bytes)
        let (opcode, psn, ack_req, aeth, ext, payload_len) = match seg.kind {
            SegKind::Data => {
                let first = seg.psn == ctx.initial_psn;
                if first {
                    reth = Some(reth::Repr { virtual_address: 0, rkey: dest_qp, dma_len: ctx.message_len });
                }
                let op = match (first, seg.last) {
                    (true, true) => RC_RDMA_WRITE_ONLY,
                    (true, false) => RC_RDMA_WRITE_FIRST,
                    (false, true) => RC_RDMA_WRITE_LAST,
                    (false, false) => RC_RDMA_WRITE_MIDDLE,
                };
                (op, seg.psn, seg.last, None, None, seg.payload as usize)
            }
            SegKind::Ack => {
                let ack = aeth::Repr { syndrome: aeth::Syndrome::Ack { credits: aeth::CREDITS_INVALID }, msn: ctx.msn };
                (RC_ACKNOWLEDGE, seg.psn.wrapping_prev(), false, Some(ack), None, 0)
            }
            SegKind::Nak => (RC_ACKNOWLEDGE, seg.psn, false, nak(ctx.msn), None, 0),
            SegKind::Sack => {
                let at = match seg.ext {
                    Ext::Sack(p) => p,
                    _ => seg.psn,
                };
                (RC_ACKNOWLEDGE, seg.psn, false, nak(ctx.msn), single(ext::Kind::Sack, at), 0)
            }
            SegKind::Rack => {
                let at = match seg.ext {
                    Ext::Rack(p) => p,
                    _ => seg.psn,
                };
                (RC_ACKNOWLEDGE, seg.psn, false, nak(ctx.msn), single(ext::Kind::Rack, at), 0)
            }
            SegKind::MeloNack => {
                let holes = seg.holes();
                let ext = (!holes.is_empty()).then(|| {
                    let mut entries = [ext::Entry::default(); ext::MAX_ENTRIES];
                    for (e, h) in entries.iter_mut().zip(holes) {
                        *e = ext::Entry { psn: h.start, len: h.len };
                    }
                    ext::Repr { kind: ext::Kind::Holes, entries, n: holes.len().min(ext::MAX_ENTRIES) as u8 }
                });
                (RC_ACKNOWLEDGE, seg.psn, false, nak(ctx.msn), ext, 0)
            }
            SegKind::Cnp => (CNP, Psn::new(0), false, None, None, CNP_RESERVED_LEN),
            SegKind::Syn => (opcode::SYN, seg.psn, true, None, None, 0),
            SegKind::SynAck => (opcode::SYN_ACK, seg.psn, false, None, None, 0),
            SegKind::Fin => (opcode::FIN, seg.psn, true, None, None, 0),
            SegKind::FinAck => (opcode::FIN_ACK, seg.psn, false, None, None, 0),
            SegKind::Grant => (opcode::GRANT, seg.psn, false, None, None, 0),
        };
        let pad = if seg.kind == SegKind::Data { ((4 - payload_len % 4) % 4) as u8 } else { 0 };
        let bth = bth::Repr {
            opcode,
            solicited: false,
            migreq: false,
            pad,
            pkey: bth::DEFAULT_PKEY,
            fecn: false,
            becn: seg.kind == SegKind::Cnp || seg.ece,
            dest_qp,
            ack_req,
            psn,
        };
        let udp_payload = bth::HEADER_LEN
            + reth.map_or(0, |r| r.buffer_len())
            + aeth.map_or(0, |a| a.buffer_len())
            + ext.map_or(0, |e| e.buffer_len())
            + payload_len
            + pad as usize
            + ICRC_LEN;
        Repr {
            eth: ethernet::Repr { src_addr: mac_addr(ctx.src_host), dst_addr: mac_addr(ctx.dst_host), ethertype: ethernet::ETHERTYPE_IPV4 },
            ip: ipv4::Repr {
                src_addr: ip_addr(ctx.src_host),
                dst_addr: ip_addr(ctx.dst_host),
                next_header: ipv4::PROTOCOL_UDP,
                payload_len: udp::HEADER_LEN + udp_payload,
                hop_limit: TTL,
                dscp: 0,
                ecn: ecn_bits(seg.ecn),
                ident: 0,
                dont_frag: true,
            },
            udp: udp::Repr { src_port: FIRST_UDP_PORT.wrapping_add(pkt.flow as u16), dst_port: udp::ROCEV2_PORT, payload_len: udp_payload },
            bth,
            reth,
            aeth,
            ext,
            payload_len,
        }
    }

    /// Bytes of the whole frame (no Ethernet FCS).
    pub fn buffer_len(&self) -> usize {
        ethernet::HEADER_LEN + self.ip.buffer_len()
    }

    /// Writes the frame into the start of `buf`, payload and pad as zeros, with the ICRC;
    /// returns its length. [`Error::Truncated`] if `buf` is shorter than
    /// [`Repr::buffer_len`]; [`Error::Malformed`] if the lengths do not add up (a `Repr` not
    /// made by [`Repr::from_packet`] or [`Repr::parse`]) or exceed IPv4's 65535 B.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        let inner = self.bth.buffer_len()
            + self.reth.map_or(0, |r| r.buffer_len())
            + self.aeth.map_or(0, |a| a.buffer_len())
            + self.ext.map_or(0, |e| e.buffer_len())
            + self.payload_len
            + self.bth.pad as usize
            + ICRC_LEN;
        if self.udp.payload_len != inner || self.ip.payload_len != udp::HEADER_LEN + inner || self.ip.buffer_len() > 65535 || self.bth.pad > 3 {
            return Err(Error::Malformed);
        }
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..len];
        let mut frame = ethernet::Frame::new_unchecked(&mut *buf);
        self.eth.emit(&mut frame);
        let mut ip = ipv4::Packet::new_unchecked(frame.payload_mut());
        self.ip.emit(&mut ip);
        let mut udp = udp::Packet::new_unchecked(ip.payload_mut());
        self.udp.emit(&mut udp);
        let mut bth = bth::Header::new_unchecked(udp.payload_mut());
        self.bth.emit(&mut bth);
        let mut rest = bth.payload_mut();
        if let Some(r) = &self.reth {
            r.emit(&mut reth::Header::new_unchecked(&mut *rest));
            rest = &mut rest[reth::HEADER_LEN..];
        }
        if let Some(a) = &self.aeth {
            a.emit(&mut aeth::Header::new_unchecked(&mut *rest));
            rest = &mut rest[aeth::HEADER_LEN..];
        }
        if let Some(e) = &self.ext {
            e.emit(&mut ext::Header::new_unchecked(&mut *rest));
            rest = &mut rest[e.buffer_len()..];
        }
        let body = self.payload_len + self.bth.pad as usize;
        rest[..body].fill(0);
        let crc = icrc::compute(&buf[ethernet::HEADER_LEN..len - ICRC_LEN])?;
        buf[len - ICRC_LEN..].copy_from_slice(&crc.to_le_bytes());
        Ok(len)
    }

    /// Reads a frame this module writes: Ethernet II carrying IPv4 carrying UDP to port 4791
    /// (anything else [`Error::Unsupported`]), a BTH with one of the table's opcodes, what
    /// that opcode carries, and a matching ICRC ([`Error::Checksum`] otherwise). Bytes after
    /// the IPv4 packet (an Ethernet trailer) are ignored.
    pub fn parse(buf: &[u8]) -> Result<Repr> {
        use bth::opcode::*;
        let frame = ethernet::Frame::new_checked(buf)?;
        let eth = ethernet::Repr::parse(&frame)?;
        if eth.ethertype != ethernet::ETHERTYPE_IPV4 {
            return Err(Error::Unsupported);
        }
        let ip_packet = ipv4::Packet::new_checked(frame.payload())?;
        let ip = ipv4::Repr::parse(&ip_packet)?;
        if ip.next_header != ipv4::PROTOCOL_UDP || ip_packet.header_len() as usize != ipv4::HEADER_LEN {
            return Err(Error::Unsupported);
        }
        let udp_packet = udp::Packet::new_checked(ip_packet.payload())?;
        let udp = udp::Repr::parse(&udp_packet)?;
        if udp.dst_port != udp::ROCEV2_PORT {
            return Err(Error::Unsupported);
        }
        if udp.buffer_len() != ip.payload_len {
            return Err(Error::Malformed);
        }
        let roce = udp_packet.payload();
        if roce.len() < bth::HEADER_LEN + ICRC_LEN {
            return Err(Error::Truncated);
        }
        let (body, crc) = roce.split_at(roce.len() - ICRC_LEN);
        let ip_bytes = frame.payload();
        let expected = icrc::compute(&ip_bytes[..ip.buffer_len() - ICRC_LEN])?;
        if crc != expected.to_le_bytes() {
            return Err(Error::Checksum);
        }
        let bth_header = bth::Header::new_checked(body)?;
        let bth = bth::Repr::parse(&bth_header)?;
        let mut rest = bth_header.payload();
        let (mut reth, mut aeth, mut ext) = (None, None, None);
        let payload_len = match bth.opcode {
            RC_RDMA_WRITE_FIRST | RC_RDMA_WRITE_MIDDLE | RC_RDMA_WRITE_LAST | RC_RDMA_WRITE_ONLY => {
                if matches!(bth.opcode, RC_RDMA_WRITE_FIRST | RC_RDMA_WRITE_ONLY) {
                    reth = Some(reth::Repr::parse(&reth::Header::new_checked(rest)?)?);
                    rest = &rest[reth::HEADER_LEN..];
                }
                let pad = bth.pad as usize;
                if rest.len() < pad || rest.len() % 4 != 0 {
                    return Err(Error::Malformed);
                }
                rest.len() - pad
            }
            RC_ACKNOWLEDGE => {
                let h = aeth::Header::new_checked(rest)?;
                let a = aeth::Repr::parse(&h)?;
                rest = &rest[aeth::HEADER_LEN..];
                if !rest.is_empty() {
                    if a.syndrome != aeth::Syndrome::Nak(aeth::NakCode::PsnSequenceError) {
                        return Err(Error::Malformed);
                    }
                    let h = ext::Header::new_checked(rest)?;
                    let e = ext::Repr::parse(&h)?;
                    if e.buffer_len() != rest.len() {
                        return Err(Error::Malformed);
                    }
                    ext = Some(e);
                }
                aeth = Some(a);
                0
            }
            CNP if rest.len() == CNP_RESERVED_LEN => CNP_RESERVED_LEN,
            opcode::SYN | opcode::SYN_ACK | opcode::FIN | opcode::FIN_ACK | opcode::GRANT if rest.is_empty() => 0,
            CNP | opcode::SYN | opcode::SYN_ACK | opcode::FIN | opcode::FIN_ACK | opcode::GRANT => return Err(Error::Malformed),
            _ => return Err(Error::Unsupported),
        };
        let is_data = matches!(bth.opcode, RC_RDMA_WRITE_FIRST..=RC_RDMA_WRITE_ONLY);
        if !is_data && bth.pad != 0 {
            return Err(Error::Malformed);
        }
        Ok(Repr { eth, ip, udp, bth, reth, aeth, ext, payload_len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Frame, PRIORITY_DATA};
    use crate::net::int::NO_INT;
    use crate::sim::units::Time;
    use crate::transport::common::segment::{Hole, Segment};

    fn packet(seg: Segment, dir: u8) -> Packet {
        Packet { frame: Frame::Transport, seg, flow: 5, dir, src: 0, dst: 1, size: 0, priority: PRIORITY_DATA as u8, in_port: 0, entropy: 0, int: NO_INT, via: crate::net::packet::NO_VIA }
    }

    fn ctx() -> Context {
        Context { src_host: 1, dst_host: 258, initial_psn: Psn::new(100), msn: 0, message_len: 10_000 }
    }

    fn round_trip(r: &Repr) -> Vec<u8> {
        let mut buf = vec![0u8; r.buffer_len()];
        assert_eq!(r.emit(&mut buf), Ok(buf.len()));
        assert_eq!(Repr::parse(&buf).as_ref(), Ok(r));
        buf
    }

    #[test]
    fn a_data_packet_is_an_rdma_write_with_its_payload_and_pad() {
        let seg = Segment { last: true, ..Segment::data(Psn::new(103), 1021, 0, Time::ZERO) };
        let r = Repr::from_packet(&packet(seg, 0), &ctx());
        assert_eq!((r.bth.opcode, r.bth.psn, r.bth.ack_req, r.bth.pad, r.bth.dest_qp), (bth::opcode::RC_RDMA_WRITE_LAST, Psn::new(103), true, 3, 13));
        assert_eq!(r.reth, None, "only a message's first packet says where it goes");
        assert_eq!(r.buffer_len(), 58 + 1021 + 3);
        let buf = round_trip(&r);
        assert_eq!(&buf[26..34], &[10, 0, 0, 2, 10, 0, 1, 3]); // hosts 1 -> 258
        assert_eq!(&buf[..12], &[2, 0, 10, 0, 1, 3, 2, 0, 10, 0, 0, 2]);
        assert_eq!(buf[15] & 3, 0b10, "ECT(0)");
        let first = Repr::from_packet(&packet(Segment::data(Psn::new(100), 1024, 0, Time::ZERO), 0), &ctx());
        assert_eq!((first.bth.opcode, first.bth.ack_req), (bth::opcode::RC_RDMA_WRITE_FIRST, false));
        assert_eq!(first.reth, Some(reth::Repr { virtual_address: 0, rkey: 13, dma_len: 10_000 }));
        let buf = round_trip(&first);
        assert_eq!(buf.len(), 58 + 16 + 1024);
        assert_eq!(&buf[54..70], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0x27, 0x10], "RETH after the BTH");
        let only = Repr::from_packet(&packet(Segment { last: true, ..Segment::data(Psn::new(100), 8, 0, Time::ZERO) }, 0), &ctx());
        assert_eq!(only.bth.opcode, bth::opcode::RC_RDMA_WRITE_ONLY);
        assert_eq!(round_trip(&only).len(), 58 + 16 + 8);
        let middle = Repr::from_packet(&packet(Segment::data(Psn::new(101), 1024, 0, Time::ZERO), 0), &ctx());
        assert_eq!((middle.bth.opcode, middle.reth), (bth::opcode::RC_RDMA_WRITE_MIDDLE, None));
    }

    #[test]
    fn responses_carry_an_aeth_and_the_notifications_an_extension() {
        let to = Segment::data(Psn::new(0), 0, 0, Time::ZERO);
        let ack = Repr::from_packet(&packet(Segment::reply(SegKind::Ack, Psn::new(0), Time::ZERO, &to), 1), &Context { msn: 1, ..ctx() });
        assert_eq!(ack.bth.psn, Psn::new(PSN_MASK), "an ACK names the last PSN it acknowledges");
        assert_eq!(ack.aeth, Some(aeth::Repr { syndrome: aeth::Syndrome::Ack { credits: 31 }, msn: 1 }));
        assert_eq!(ack.bth.dest_qp, 12, "to the requester");
        assert_eq!(round_trip(&ack).len(), 62);
        let nak = Repr::from_packet(&packet(Segment::reply(SegKind::Nak, Psn::new(7), Time::ZERO, &to), 1), &ctx());
        assert_eq!((nak.bth.psn, nak.aeth.unwrap().syndrome.byte()), (Psn::new(7), 0x60));
        round_trip(&nak);
        let mut melo = Segment::reply(SegKind::MeloNack, Psn::new(7), Time::ZERO, &to);
        let holes = [Hole { start: Psn::new(9), len: 2 }, Hole { start: Psn::new(7), len: 1 }, Hole::default()];
        melo.ext = Ext::Holes { holes, n: 2 };
        let r = Repr::from_packet(&packet(melo, 1), &ctx());
        assert_eq!(r.ext.unwrap().entries(), &[ext::Entry { psn: Psn::new(9), len: 2 }, ext::Entry { psn: Psn::new(7), len: 1 }]);
        assert_eq!(round_trip(&r).len(), 62 + 4 + 16);
        for (kind, e) in [(SegKind::Sack, Ext::Sack(Psn::new(12))), (SegKind::Rack, Ext::Rack(Psn::new(12)))] {
            let mut s = Segment::reply(kind, Psn::new(7), Time::ZERO, &to);
            s.ext = e;
            let r = Repr::from_packet(&packet(s, 1), &ctx());
            assert_eq!(r.ext.unwrap().entries(), &[ext::Entry { psn: Psn::new(12), len: 1 }]);
            round_trip(&r);
        }
    }

    #[test]
    fn a_cnp_has_the_captured_layout() {
        let to = Segment::data(Psn::new(0), 0, 0, Time::ZERO);
        let r = Repr::from_packet(&packet(Segment::reply(SegKind::Cnp, Psn::new(3), Time::ZERO, &to), 1), &ctx());
        assert_eq!((r.bth.opcode, r.bth.becn, r.bth.psn, r.payload_len), (0x81, true, Psn::new(0), 16));
        assert_eq!(round_trip(&r).len(), 74, "as the ConnectX-4 Lx capture");
        for (kind, op) in [(SegKind::Syn, 0xc0), (SegKind::SynAck, 0xc1), (SegKind::Fin, 0xc2), (SegKind::FinAck, 0xc3), (SegKind::Grant, 0xc4)] {
            let r = Repr::from_packet(&packet(Segment::control(kind, Psn::new(4), Time::ZERO), 0), &ctx());
            assert_eq!(r.bth.opcode, op);
            assert_eq!(round_trip(&r).len(), 58);
        }
    }

    #[test]
    fn a_corrupted_frame_fails_its_icrc() {
        let r = Repr::from_packet(&packet(Segment::data(Psn::new(101), 64, 0, Time::ZERO), 0), &ctx());
        let mut buf = round_trip(&r);
        let n = buf.len();
        buf[n - 10] ^= 1; // payload
        assert_eq!(Repr::parse(&buf), Err(Error::Checksum));
        assert_eq!(r.emit(&mut buf[..n - 1]), Err(Error::Truncated));
    }
}
