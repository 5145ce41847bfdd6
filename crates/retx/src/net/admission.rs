//! Admission and departure at a switch's egress queue: the queue discipline decides what
//! happens to a packet from its priority, colour and ECN codepoint and the queue's and buffer's
//! state — enqueue (charged to its ingress queue for PFC when the queue is lossless), trim
//! (keep a header-only copy in a header queue, as NDP's switches do), or drop — and what a
//! leaving packet carries away (an ECN mark, an INT hop record). The engine only carries out
//! the verdict (htsim's `CompositeQueue` and `AeolusQueue` keep the policy in the queue too).

use super::int::{IntTable, NO_INT};
use super::packet::{Frame, Packet, PRIORITY_CONTROL};
use super::port::Port;
use super::switch::{Departure, Refusal, Switch, SwitchParams};
pub use super::switch::Trim;
use crate::transport::int::IntHop;
use crate::transport::segment::{Ecn, SegKind};

/// What an egress queue does with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Into egress queue `queue`; `lossless`: charged to its ingress queue for PFC.
    Enqueue { queue: usize, lossless: bool },
    /// Cut to `header` bytes (its payload dropped, [`crate::transport::segment::Segment::trimmed`])
    /// and put into egress queue `queue`, the header queue, at that priority from here on.
    Trim { queue: usize, header: u32 },
    Drop(Refusal),
}

impl Switch {
    /// The verdict for `pkt` arriving at egress port `out`, from ingress port `ingress` (None:
    /// born in the switch, as background traffic is). On an enqueue or trim the buffer is
    /// charged (the ingress queue is charged by [`Switch::charge_ingress`] after).
    pub fn admission(&mut self, p: &SwitchParams, pkt: &Packet, out: &Port, ingress: Option<&Port>) -> Verdict {
        let q = (pkt.priority as usize).min(out.queue_count() - 1);
        let data = pkt.priority as usize != PRIORITY_CONTROL;
        if out.shaped_full(q) {
            // The shaped queue's own small buffer is full (ExpressPass drops excess credits).
            return Verdict::Drop(Refusal::BufferFull);
        }
        let queued = out.queued_bytes[q];
        let lossless = ingress.filter(|_| out.is_lossless(q));
        // Colour drops (WRED, thresholds) are buffer management: counted with buffer drops.
        let by_colour = if data { self.admit_colour(p, pkt.seg.colour, q, out.rate, queued) } else { Ok(()) };
        match by_colour.and_then(|()| self.admit(p, queued, data, pkt.size as u64, lossless.map(|ip| (ip, q)))) {
            Ok(()) => Verdict::Enqueue { queue: q, lossless: lossless.is_some() },
            Err(why) => match p.trim {
                Some(t) if data && pkt.frame == Frame::Transport && pkt.seg.kind == SegKind::Data && !pkt.seg.trimmed => {
                    let queue = t.queue.min(out.queue_count() - 1);
                    match self.admit(p, out.queued_bytes[queue], false, t.header as u64, None) {
                        Ok(()) => Verdict::Trim { queue, header: t.header },
                        Err(why) => Verdict::Drop(why),
                    }
                }
                _ => Verdict::Drop(why),
            },
        }
    }
}

impl Packet {
    /// The packet cut to its header by a trimming queue: `header` bytes, at the header queue's
    /// priority from here on (so every later hop queues it there too).
    pub fn trim(&mut self, queue: usize, header: u32) {
        self.size = header;
        self.priority = queue as u8;
        self.seg.trimmed = true;
    }
}

/// What a data packet carries away from an egress queue: the ECN mark the departure decided
/// (on an ECN-capable packet), and an INT hop record (HPCC's switch stamps data as it leaves
/// the egress queue; the ACK that echoes the records crosses switches unstamped). Returns
/// whether the departure marked it (counted whatever its codepoint).
pub fn stamp(pkt: &mut Packet, d: &Departure, int: &mut IntTable, hop: impl FnOnce() -> IntHop) -> bool {
    if pkt.int != NO_INT && pkt.seg.kind == SegKind::Data {
        int.stamp(pkt.int, hop());
    }
    if d.mark && pkt.seg.ecn == Ecn::Ect {
        pkt.seg.ecn = Ecn::Ce;
    }
    d.mark
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::loss::PortLoss;
    use crate::net::port::Discipline;
    use crate::net::switch::{Pfc, PfcThresholds};
    use crate::sim::rng::{stream, Stream};
    use crate::sim::units::{Rate, Time};
    use crate::transport::segment::Segment;

    fn switch() -> Switch {
        Switch::new(stream(1, Stream::SwitchEcn, 0), stream(1, Stream::SwitchWred, 0))
    }

    fn params(buffer: u64, trim: Option<Trim>) -> SwitchParams {
        SwitchParams { buffer, dt_alpha: 1.0, pfc: Some(Pfc::Fixed(PfcThresholds { xoff: 1 << 40, xon: 1 << 39 })), ecn: None, ecn_by_rate: Vec::new(), colour: Vec::new(), trim }
    }

    fn port() -> Port {
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        Port::new(0, Rate::gbps(100), Time::from_us(1), 3, Discipline::StrictPriority, loss)
    }

    fn pkt(priority: u8, size: u32) -> Packet {
        let seg = Segment::data(Default::default(), size, 0, Time::ZERO);
        Packet { frame: Frame::Transport, seg, flow: 0, dir: 0, src: 0, dst: 0, size, priority, in_port: 0, entropy: 0, int: NO_INT }
    }

    #[test]
    fn a_full_buffer_drops_or_trims_data_to_its_header_and_never_trims_twice_or_control() {
        let trim = Trim { queue: 0, header: 64 };
        let (out, ingress) = (port(), port());
        // Room for one 1000 B packet and two headers.
        for (p, want) in [(params(1_128, None), Verdict::Drop(Refusal::BufferFull)), (params(1_128, Some(trim)), Verdict::Trim { queue: 0, header: 64 })] {
            let mut s = switch();
            assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Enqueue { queue: 1, lossless: true });
            assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), want);
        }
        let p = params(1_128, Some(trim));
        let mut s = switch();
        s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress));
        let mut cut = pkt(1, 1_000);
        assert_eq!(s.admission(&p, &cut, &out, Some(&ingress)), Verdict::Trim { queue: 0, header: 64 });
        cut.trim(0, 64);
        assert_eq!((cut.size, cut.priority, cut.seg.trimmed, cut.seg.payload), (64, 0, true, 1_000), "the payload's length stays known");
        assert_eq!(s.buffer_used, 1_064, "the header is charged, the payload is not");
        // Full: a header that no longer fits is dropped, and so is an already-trimmed packet
        // or a control packet the buffer refuses (only data is trimmed).
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Trim { queue: 0, header: 64 });
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull));
        assert_eq!(s.admission(&p, &cut, &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull));
        assert_eq!(s.admission(&p, &pkt(0, 100), &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull));
    }

    #[test]
    fn only_untrimmed_transport_data_at_a_data_priority_is_trimmed_even_when_a_header_fits() {
        let trim = Trim { queue: 0, header: 64 };
        let (out, ingress) = (port(), port());
        // Room for one 1000 B packet and one header; each candidate below is 100 B.
        let p = params(1_064, Some(trim));
        let mut s = switch();
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Enqueue { queue: 1, lossless: true });
        let mut control = pkt(0, 100);
        control.seg.kind = SegKind::Data;
        let mut ack = pkt(1, 100);
        ack.seg.kind = SegKind::Ack;
        let mut cut = pkt(1, 100);
        cut.seg.trimmed = true;
        let mut background = pkt(1, 100);
        background.frame = Frame::Background;
        for (what, p2) in [("control priority", control), ("not data", ack), ("already trimmed", cut), ("not a transport frame", background)] {
            assert_eq!(s.admission(&p, &p2, &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull), "{what}");
        }
        assert_eq!(s.admission(&p, &pkt(1, 100), &out, Some(&ingress)), Verdict::Trim { queue: 0, header: 64 }, "the header fits");
    }

    #[test]
    fn the_queue_is_the_priority_clamped_to_the_port_and_only_lossless_queues_charge_ingress() {
        let p = params(1_000_000, None);
        let (mut out, ingress) = (port(), port());
        let mut s = switch();
        assert_eq!(s.admission(&p, &pkt(7, 100), &out, Some(&ingress)), Verdict::Enqueue { queue: 2, lossless: true });
        assert_eq!(s.admission(&p, &pkt(0, 100), &out, Some(&ingress)), Verdict::Enqueue { queue: 0, lossless: false }, "control is never paused");
        assert_eq!(s.admission(&p, &pkt(1, 100), &out, None), Verdict::Enqueue { queue: 1, lossless: false }, "born here: no ingress");
        out.shaper = Some(crate::net::port::Shaper { queue: 2, rate: Rate::mbps(500), buffer: 1 });
        out.enqueue(2, pkt(2, 84));
        assert_eq!(s.admission(&p, &pkt(2, 84), &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull), "the shaped queue's own buffer");
    }

    #[test]
    fn departure_stamps_int_on_data_and_marks_only_ecn_capable_packets() {
        let mut int = IntTable::default();
        let hop = || IntHop { qlen: 5, tx_bytes: 7, ts: Time(9), rate: Rate::gbps(100) };
        let mut data = pkt(1, 1_000);
        data.int = int.alloc();
        let mark = Departure { mark: true, resume: false };
        assert!(stamp(&mut data, &mark, &mut int, hop));
        assert_eq!((data.seg.ecn, int.get(data.int).as_slice().len()), (Ecn::Ce, 1));
        let mut not_ect = pkt(1, 1_000);
        not_ect.seg.ecn = Ecn::NotEct;
        assert!(stamp(&mut not_ect, &mark, &mut int, || unreachable!("no INT slot: no record")), "counted");
        assert_eq!(not_ect.seg.ecn, Ecn::NotEct, "not ECN-capable: not marked");
        let mut clean = pkt(1, 1_000);
        assert!(!stamp(&mut clean, &Departure::default(), &mut int, hop));
        assert_eq!(clean.seg.ecn, Ecn::Ect);
    }
}
