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
pub use super::switch::{PortTrim, Trim, Victim};
use crate::transport::common::int::IntHop;
use crate::transport::common::segment::{Ecn, SegKind};

/// What an egress queue does with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Into egress queue `queue`; `lossless`: charged to its ingress queue for PFC.
    Enqueue { queue: usize, lossless: bool },
    /// Cut to `header` bytes (its payload dropped, [`crate::transport::common::segment::Segment::trimmed`])
    /// and put into egress queue `queue`, the header queue, at that priority from here on.
    Trim { queue: usize, header: u32 },
    /// Per-port trimming ([`PortTrim`], htsim's `CompositeQueue`): the arrival goes into data
    /// queue `queue` (charged to the buffer, never to an ingress queue: PFC is off) in place of
    /// the last packet queued there, which [`Switch::trim_last`] cuts to `header` bytes for
    /// header queue `header_queue` (its full size has left the buffer already).
    TrimQueued { queue: usize, header_queue: usize, header: u32 },
    /// No room for its header ([`Trim::return_to_sender`]): cut to `header` bytes at queue
    /// `queue`'s priority (if not cut already), turned back to its sender
    /// ([`Packet::turn_back`]) and routed from this switch like an arrival. Nothing charged.
    Return { queue: usize, header: u32 },
    Drop(Refusal),
}

/// Whether a switch may trim `pkt`: untrimmed transport data at a data priority.
fn trimmable(pkt: &Packet) -> bool {
    pkt.priority as usize != PRIORITY_CONTROL && pkt.frame == Frame::Transport && pkt.seg.kind == SegKind::Data && !pkt.seg.trimmed
}

/// Whether a switch may return `pkt` to its sender: a transport data header (trimmed, or one
/// it may trim) that has not been returned before (htsim: `bounced() == false`).
fn returnable(pkt: &Packet) -> bool {
    (pkt.seg.trimmed || trimmable(pkt)) && pkt.frame == Frame::Transport && pkt.seg.kind == SegKind::Data && !pkt.seg.returned
}

/// The verdict on a packet whose header finds no room: returned if the trim rule says so and
/// it may be, else dropped for `why`.
fn no_room(t: Trim, pkt: &Packet, queue: usize, why: Refusal) -> Verdict {
    if t.return_to_sender && returnable(pkt) {
        Verdict::Return { queue, header: t.header }
    } else {
        Verdict::Drop(why)
    }
}

impl Switch {
    /// The verdict for `pkt` arriving at egress port `out`, from ingress port `ingress` (None:
    /// born in the switch, as background traffic is). On an enqueue or trim the buffer is
    /// charged (the ingress queue is charged by [`Switch::charge_ingress`] after); on a
    /// [`Verdict::TrimQueued`] the arrival is charged and the packet it replaces uncharged.
    pub fn admission(&mut self, p: &SwitchParams, pkt: &Packet, out: &Port, ingress: Option<&Port>) -> Verdict {
        let q = (pkt.priority as usize).min(out.queue_count() - 1);
        let data = pkt.priority as usize != PRIORITY_CONTROL;
        if out.shaped_full(q) {
            // The shaped queue's own small buffer is full (ExpressPass drops excess credits).
            return Verdict::Drop(Refusal::BufferFull);
        }
        let queued = out.queued_bytes[q];
        let lossless = ingress.filter(|_| out.is_lossless(q)).map(|ip| (ip, q));
        // Colour drops (WRED, thresholds) and a full static port buffer are buffer management:
        // counted with buffer drops.
        let by_colour = if p.port_buffer.is_some_and(|cap| out.held_bytes + pkt.size as u64 > cap) {
            Err(Refusal::BufferFull)
        } else if data {
            self.admit_colour(p, pkt.seg.colour, q, out.rate, queued, out.held_bytes).and_then(|()| self.admit_not_ect(p, pkt.seg.ecn, out.rate, queued))
        } else {
            Ok(())
        };
        if let (Some(t @ Trim { port: Some(limits), .. }), Ok(())) = (p.trim, by_colour) {
            if let Some(v) = self.port_limits(p, t, out.trim_limits.unwrap_or(limits), pkt, out, q, lossless) {
                return v;
            }
        }
        match by_colour.and_then(|()| self.admit(p, queued, data, pkt.size as u64, lossless)) {
            Ok(()) => Verdict::Enqueue { queue: q, lossless: lossless.is_some() },
            Err(why) => match p.trim {
                Some(t) if trimmable(pkt) => self.trim_arrival(p, t, pkt, out),
                // A header the buffer refuses is returned if the rule says so; anything else
                // is dropped.
                Some(t) => no_room(t, pkt, q, why),
                None => Verdict::Drop(why),
            },
        }
    }

    /// Per-port limits (htsim's `CompositeQueue::receivePacket`) on `pkt` arriving at queue
    /// `q` of `out`: the verdict when they decide, None when the packet goes on to the shared
    /// buffer as without them. A packet for the header queue that does not fit it is dropped
    /// (htsim: every header-only packet, its ACKs, NACKs and PULLs too); untrimmed data that
    /// does not fit its data queue is trimmed, or with [`Victim::Htsim`] on a coin flip the
    /// arrival takes the place of the last packet queued there, which is trimmed instead
    /// (htsim's `_enqueued_low.pop_front()`, the most recent). The coin is drawn only then,
    /// and only if that last packet may be trimmed (not background traffic).
    #[allow(clippy::too_many_arguments)]
    fn port_limits(&mut self, p: &SwitchParams, t: Trim, l: PortTrim, pkt: &Packet, out: &Port, q: usize, ingress: Option<(&Port, usize)>) -> Option<Verdict> {
        let h = t.queue.min(out.queue_count() - 1);
        let size = pkt.size as u64;
        if q == h {
            return (out.queued_bytes[h] + size > l.header_queue).then(|| no_room(t, pkt, h, Refusal::HeaderQueueFull));
        }
        if !trimmable(pkt) || out.queued_bytes[q] + size <= l.data_queue {
            return None;
        }
        debug_assert!(p.pfc.is_none(), "validation: per-port trimming runs without PFC");
        if l.victim == Victim::Htsim {
            if let Some(last) = out.last(q).filter(|v| trimmable(v)) {
                if self.trim_rng.uniform() < 0.5 {
                    // The victim's bytes leave the buffer; the arrival takes them if it may.
                    let freed = last.size as u64;
                    self.buffer_used -= freed;
                    if self.admit(p, out.queued_bytes[q] - freed, true, size, ingress).is_ok() {
                        return Some(Verdict::TrimQueued { queue: q, header_queue: h, header: t.header });
                    }
                    self.buffer_used += freed;
                }
            }
        }
        Some(self.trim_arrival(p, t, pkt, out))
    }

    /// The arrival cut to its header, into the header queue if there is room for it there.
    fn trim_arrival(&mut self, p: &SwitchParams, t: Trim, pkt: &Packet, out: &Port) -> Verdict {
        let queue = t.queue.min(out.queue_count() - 1);
        match self.admit_header(p, t, out, queue) {
            Ok(()) => Verdict::Trim { queue, header: t.header },
            Err(why) => no_room(t, pkt, queue, why),
        }
    }

    /// Room for a header in header queue `h` of `out`: below the per-port cap, if any, and in
    /// the buffer (charged on success).
    fn admit_header(&mut self, p: &SwitchParams, t: Trim, out: &Port, h: usize) -> Result<(), Refusal> {
        if t.port.map(|l| out.trim_limits.unwrap_or(l)).is_some_and(|l| out.queued_bytes[h] + t.header as u64 > l.header_queue) {
            return Err(Refusal::HeaderQueueFull);
        }
        self.admit(p, out.queued_bytes[h], false, t.header as u64, None)
    }

    /// Carries out [`Verdict::TrimQueued`] at `out`: takes the last packet of data queue
    /// `queue` (its bytes left the buffer with the verdict) and cuts it to `header` bytes for
    /// header queue `header_queue`: [`Booted::Queued`], charged to the buffer, to enqueue there;
    /// without room for its header, [`Booted::Returned`] to its sender if the rule says so, else
    /// [`Booted::Dropped`] (htsim drops it too).
    pub fn trim_last(&mut self, p: &SwitchParams, out: &mut Port, queue: usize, header_queue: usize, header: u32) -> Booted {
        let mut victim = out.pop_last(queue).expect("a verdict on a non-empty queue");
        // The verdict's `header` is the rule's.
        let t = p.trim.expect("per-port trimming is on");
        if self.admit_header(p, t, out, header_queue).is_err() {
            return match no_room(t, &victim, header_queue, Refusal::HeaderQueueFull) {
                Verdict::Return { .. } => Booted::Returned(victim),
                _ => Booted::Dropped(victim),
            };
        }
        victim.trim(header_queue, header);
        Booted::Queued(victim)
    }
}

/// What became of the packet a [`Verdict::TrimQueued`] boots out of its data queue.
#[derive(Debug)]
pub enum Booted {
    /// Cut to its header, for the header queue.
    Queued(Packet),
    /// No room for its header: back to its sender (untrimmed yet).
    Returned(Packet),
    /// No room for its header: dropped.
    Dropped(Packet),
}

impl Packet {
    /// The packet cut to its header by a trimming queue: `header` bytes, at the header queue's
    /// priority from here on (so every later hop queues it there too).
    pub fn trim(&mut self, queue: usize, header: u32) {
        self.size = header;
        self.priority = queue as u8;
        self.seg.trimmed = true;
    }

    /// The packet sent back the way it came (htsim's `bounce()`): addressed to its source,
    /// handed to the end that sent it, marked returned so that it is never returned again.
    pub fn turn_back(&mut self) {
        (self.src, self.dst) = (self.dst, self.src);
        self.dir ^= 1;
        self.seg.returned = true;
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
    use crate::transport::common::segment::Segment;

    fn switch() -> Switch {
        Switch::new(stream(1, Stream::SwitchEcn, 0), stream(1, Stream::SwitchWred, 0), stream(1, Stream::SwitchTrim, 0))
    }

    fn params(buffer: u64, trim: Option<Trim>) -> SwitchParams {
        SwitchParams { buffer, dt_alpha: 1.0, pfc: Some(Pfc::Fixed(PfcThresholds { xoff: 1 << 40, xon: 1 << 39 })), ecn: None, ecn_by_rate: Vec::new(), colour: Vec::new(), trim, port_buffer: None, ecn_drops_not_ect: false, ecn_to_hosts: true }
    }

    fn port() -> Port {
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        Port::new(0, Rate::gbps(100), Time::from_us(1), 3, Discipline::StrictPriority, loss)
    }

    fn pkt(priority: u8, size: u32) -> Packet {
        let seg = Segment::data(Default::default(), size, 0, Time::ZERO);
        Packet { frame: Frame::Transport, seg, flow: 0, dir: 0, src: 0, dst: 0, size, priority, in_port: 0, entropy: 0, int: NO_INT, via: crate::net::packet::NO_VIA }
    }

    #[test]
    fn a_full_buffer_drops_or_trims_data_to_its_header_and_never_trims_twice_or_control() {
        let trim = Trim { queue: 0, header: 64, port: None, return_to_sender: false };
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
    fn a_static_port_buffer_refuses_what_would_overfill_the_port_across_its_queues_control_too() {
        // 3_000 B a port, a 1 MB shared buffer: the port's limit decides.
        let p = SwitchParams { port_buffer: Some(3_000), ..params(1_000_000, None) };
        let (mut s, mut out, ingress) = (switch(), port(), port());
        for (q, size) in [(1, 1_000), (2, 1_500)] {
            assert_eq!(s.admission(&p, &pkt(q, size), &out, Some(&ingress)), Verdict::Enqueue { queue: q as usize, lossless: true });
            out.enqueue(q as usize, pkt(q, size));
        }
        // 2_500 B held over two queues: 500 B more fits exactly, 501 B does not, whatever
        // the queue or kind.
        assert_eq!(s.admission(&p, &pkt(2, 500), &out, Some(&ingress)), Verdict::Enqueue { queue: 2, lossless: true });
        assert_eq!(s.admission(&p, &pkt(1, 501), &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull));
        assert_eq!(s.admission(&p, &pkt(0, 501), &out, None), Verdict::Drop(Refusal::BufferFull), "control too");
        // Another port's buffer is its own.
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &port(), Some(&ingress)), Verdict::Enqueue { queue: 1, lossless: true });
    }

    #[test]
    fn red_drops_a_not_ect_data_packet_where_it_would_mark_an_ect_one() {
        // Aeolus's codepoint rule: both RED thresholds at 6_000 B.
        let mut p = SwitchParams { ecn: Some(crate::net::ecn::RedProfile { kmin: 6_000, kmax: 6_000, pmax: 1.0 }), ecn_drops_not_ect: true, ..params(1_000_000, None) };
        let (mut s, mut out, ingress) = (switch(), port(), port());
        let not_ect = |priority: u8| {
            let mut x = pkt(priority, 1_000);
            x.seg.ecn = Ecn::NotEct;
            x
        };
        out.enqueue(1, pkt(1, 6_000));
        let ok = Verdict::Enqueue { queue: 1, lossless: true };
        assert_eq!(s.admission(&p, &not_ect(1), &out, Some(&ingress)), ok, "6_000 B ahead: at the threshold");
        out.enqueue(1, pkt(1, 1));
        assert_eq!(s.admission(&p, &not_ect(1), &out, Some(&ingress)), Verdict::Drop(Refusal::Colour), "6_001 B ahead");
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), ok, "ECN-capable: marked at departure, never dropped here");
        assert_eq!(s.admission(&p, &not_ect(0), &out, None), Verdict::Enqueue { queue: 0, lossless: false }, "control is exempt");
        p.ecn_drops_not_ect = false;
        assert_eq!(s.admission(&p, &not_ect(1), &out, Some(&ingress)), ok, "without the rule Not-ECT passes");
    }

    #[test]
    fn only_untrimmed_transport_data_at_a_data_priority_is_trimmed_even_when_a_header_fits() {
        let trim = Trim { queue: 0, header: 64, port: None, return_to_sender: false };
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
        out.shaper = Some(crate::net::port::Shaper { queue: 2, rate: Rate::mbps(500), buffer: 1, burst: 1 });
        out.enqueue(2, pkt(2, 84));
        assert_eq!(s.admission(&p, &pkt(2, 84), &out, Some(&ingress)), Verdict::Drop(Refusal::BufferFull), "the shaped queue's own buffer");
    }

    /// Per-port trimming (htsim's `CompositeQueue`): room for two 1000 B packets in the data
    /// queue, `headers` headers in the header queue, a lossy buffer of `buffer` bytes.
    fn composite(buffer: u64, headers: u64, victim: Victim) -> SwitchParams {
        let port = PortTrim { data_queue: 2_000, header_queue: headers * 64, victim };
        // Lossy (validation requires it) and the dynamic threshold out of the way.
        SwitchParams { pfc: None, dt_alpha: 1024.0, ..params(buffer, Some(Trim { queue: 0, header: 64, port: Some(port), return_to_sender: false })) }
    }

    fn seeded(seed: u64) -> Switch {
        Switch::new(stream(seed, Stream::SwitchEcn, 0), stream(seed, Stream::SwitchWred, 0), stream(seed, Stream::SwitchTrim, 0))
    }

    /// A seed whose switch's first coin comes up `heads` (htsim: `drand() < 0.5` keeps the
    /// arrival and trims the last packet queued).
    fn seed_with(heads: bool) -> u64 {
        (0..).find(|&seed| (stream(seed, Stream::SwitchTrim, 0).uniform() < 0.5) == heads).unwrap()
    }

    /// Data packet `id` (its flow id stands for its identity) of `size` bytes.
    fn data(id: u32, size: u32) -> Packet {
        Packet { flow: id, ..pkt(1, size) }
    }

    /// Carries out `pkt`'s verdict as `world/forward.rs` does; returns it and the packet
    /// dropped, if any.
    fn arrive(s: &mut Switch, p: &SwitchParams, out: &mut Port, mut pkt: Packet) -> (Verdict, Option<Packet>) {
        let v = s.admission(p, &pkt, out, None);
        let dropped = match v {
            Verdict::Enqueue { queue, .. } => {
                out.enqueue(queue, pkt);
                None
            }
            Verdict::Trim { queue, header } => {
                pkt.trim(queue, header);
                out.enqueue(queue, pkt);
                None
            }
            Verdict::TrimQueued { queue, header_queue, header } => {
                let victim = match s.trim_last(p, out, queue, header_queue, header) {
                    Booted::Queued(cut) => {
                        out.enqueue(header_queue, cut);
                        None
                    }
                    Booted::Returned(victim) | Booted::Dropped(victim) => Some(victim),
                };
                out.enqueue(queue, pkt);
                victim
            }
            Verdict::Drop(_) | Verdict::Return { .. } => Some(pkt),
        };
        (v, dropped)
    }

    /// What queue `q` of `out` holds, as (id, bytes, trimmed), head first.
    fn contents(out: &mut Port, q: usize) -> Vec<(u32, u32, bool)> {
        let mut all = Vec::new();
        while let Some(x) = out.pop_last(q) {
            all.insert(0, x);
        }
        let seen = all.iter().map(|x| (x.flow, x.size, x.seg.trimmed)).collect();
        for x in all {
            out.enqueue(q, x);
        }
        seen
    }

    #[test]
    fn a_full_data_queue_trims_the_arrival_and_a_full_header_queue_drops() {
        let p = composite(1_000_000, 2, Victim::Arrival);
        let (mut s, mut out) = (switch(), port());
        let trim = Verdict::Trim { queue: 0, header: 64 };
        let full = Verdict::Drop(Refusal::HeaderQueueFull);
        // Two fit the data queue (2_000 B exactly); the next two are trimmed into the header
        // queue (128 B exactly); then a fifth finds both full, and so does a control packet.
        let mut steps = Vec::new();
        for id in 1..=5 {
            steps.push((arrive(&mut s, &p, &mut out, data(id, 1_000)).0, out.queued_bytes[1], out.queued_bytes[0], out.held_bytes, s.buffer_used));
        }
        let enq = Verdict::Enqueue { queue: 1, lossless: false };
        assert_eq!(steps, vec![(enq, 1_000, 0, 1_000, 1_000), (enq, 2_000, 0, 2_000, 2_000), (trim, 2_000, 64, 2_064, 2_064), (trim, 2_000, 128, 2_128, 2_128), (full, 2_000, 128, 2_128, 2_128)]);
        assert_eq!(contents(&mut out, 1), vec![(1, 1_000, false), (2, 1_000, false)]);
        assert_eq!(contents(&mut out, 0), vec![(3, 64, true), (4, 64, true)]);
        assert_eq!(s.admission(&p, &pkt(0, 64), &out, None), full, "control shares the header queue's cap (htsim)");
        let mut upstream = data(6, 1_000);
        upstream.trim(0, 64);
        assert_eq!(s.admission(&p, &upstream, &out, None), full, "so does a header trimmed upstream");
        // One header leaves: room for exactly one more.
        out.dequeue_control();
        s.buffer_used -= 64;
        assert_eq!(s.admission(&p, &pkt(0, 64), &out, None), Verdict::Enqueue { queue: 0, lossless: false });
        assert_eq!(s.buffer_used, 2_128);
        // "arrival" never tosses the coin.
        assert_eq!(s.trim_rng.clone().next_u64(), switch().trim_rng.next_u64());
    }

    #[test]
    fn htsim_s_coin_trims_the_arrival_or_the_last_packet_queued_in_its_place() {
        let p = composite(1_000_000, 100, Victim::Htsim);
        for heads in [true, false] {
            let mut s = seeded(seed_with(heads));
            let mut out = port();
            arrive(&mut s, &p, &mut out, data(1, 1_000));
            arrive(&mut s, &p, &mut out, data(2, 1_000));
            let (v, dropped) = arrive(&mut s, &p, &mut out, data(3, 1_000));
            assert!(dropped.is_none());
            let (data_queue, header_queue) = if heads {
                assert_eq!(v, Verdict::TrimQueued { queue: 1, header_queue: 0, header: 64 });
                // Packet 2, the last queued, is cut; the arrival sits at the tail in its place.
                (vec![(1, 1_000, false), (3, 1_000, false)], vec![(2, 64, true)])
            } else {
                assert_eq!(v, Verdict::Trim { queue: 0, header: 64 });
                (vec![(1, 1_000, false), (2, 1_000, false)], vec![(3, 64, true)])
            };
            assert_eq!((contents(&mut out, 1), contents(&mut out, 0)), (data_queue, header_queue.clone()), "heads {heads}");
            assert_eq!((out.queued_bytes[1], out.queued_bytes[0], out.held_bytes, s.buffer_used), (2_000, 64, 2_064, 2_064), "heads {heads}");
            assert_eq!(out.dequeue_control().map(|x| (x.flow, x.priority)), Some((header_queue[0].0, 0)), "served first");
        }
    }

    #[test]
    fn with_return_to_sender_a_header_without_room_goes_back_once_and_control_is_still_dropped() {
        let mut p = composite(1_000_000, 2, Victim::Arrival);
        p.trim = p.trim.map(|t| Trim { return_to_sender: true, ..t });
        let (mut s, mut out) = (switch(), port());
        for id in 1..=4 {
            arrive(&mut s, &p, &mut out, data(id, 1_000)); // two queued, two trimmed: both full
        }
        let (back, full) = (Verdict::Return { queue: 0, header: 64 }, Verdict::Drop(Refusal::HeaderQueueFull));
        let charged = s.buffer_used;
        assert_eq!(s.admission(&p, &data(5, 1_000), &out, None), back, "an arrival trimmed with no room");
        let mut upstream = data(6, 1_000);
        upstream.trim(0, 64);
        assert_eq!(s.admission(&p, &upstream, &out, None), back, "a header trimmed upstream");
        assert_eq!(s.buffer_used, charged, "a returned packet is charged nothing here");
        let mut again = upstream;
        again.turn_back();
        assert_eq!(s.admission(&p, &again, &out, None), full, "returned once, then dropped");
        assert_eq!(s.admission(&p, &pkt(0, 64), &out, None), full, "nor is an untrimmed packet at the control priority");
        let mut ack = pkt(0, 64);
        ack.seg.kind = SegKind::Ack;
        assert_eq!(s.admission(&p, &ack, &out, None), full, "nor control");
        // Turned back: addressed to its source, handed to the end that sent it.
        let mut t = Packet { src: 3, dst: 9, dir: 0, ..data(7, 1_000) };
        t.turn_back();
        assert_eq!((t.src, t.dst, t.dir, t.seg.returned), (9, 3, 1, true));
        t.turn_back();
        assert_eq!((t.src, t.dst, t.dir), (3, 9, 0));
        // Without the rule the same arrival is dropped.
        p.trim = p.trim.map(|t| Trim { return_to_sender: false, ..t });
        assert_eq!(s.admission(&p, &data(5, 1_000), &out, None), full);
    }

    #[test]
    fn without_per_port_limits_a_header_the_shared_buffer_refuses_is_returned_too() {
        // Room for one 1000 B packet and one header, no per-port limits.
        let trim = Trim { queue: 0, header: 64, port: None, return_to_sender: true };
        let p = params(1_064, Some(trim));
        let (mut s, out, ingress) = (switch(), port(), port());
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Enqueue { queue: 1, lossless: true });
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), Verdict::Trim { queue: 0, header: 64 });
        // Full: an arrival trimmed here, and a header trimmed upstream, go back.
        let back = Verdict::Return { queue: 0, header: 64 };
        assert_eq!(s.admission(&p, &pkt(1, 1_000), &out, Some(&ingress)), back);
        let mut upstream = pkt(1, 1_000);
        upstream.trim(0, 64);
        assert_eq!(s.admission(&p, &upstream, &out, Some(&ingress)), Verdict::Return { queue: 0, header: 64 });
        // Control the buffer refuses is dropped.
        let mut ack = pkt(0, 64);
        ack.seg.kind = SegKind::Ack;
        assert_eq!(s.admission(&p, &ack, &out, None), Verdict::Drop(Refusal::BufferFull));
    }

    #[test]
    fn htsim_s_coin_is_fair_drawn_only_when_the_data_queue_is_full_and_keeps_the_bytes_exact() {
        // One switch, 1_000 arrivals at a full data queue, the header queue drained after
        // each: about half trim the packet queued last (which the arrival replaces).
        let p = composite(1_000_000, 1, Victim::Htsim);
        let (mut s, mut out) = (switch(), port());
        arrive(&mut s, &p, &mut out, data(1, 1_000));
        arrive(&mut s, &p, &mut out, data(2, 1_000));
        assert_eq!(s.trim_rng.clone().next_u64(), switch().trim_rng.next_u64(), "no coin while there is room");
        let (mut tail, mut booted) = (2, 0);
        for id in 3..1_003 {
            let (v, dropped) = arrive(&mut s, &p, &mut out, data(id, 1_000));
            assert!(dropped.is_none());
            let cut = out.dequeue_control().unwrap();
            let want = if matches!(v, Verdict::TrimQueued { .. }) {
                booted += 1;
                std::mem::replace(&mut tail, id)
            } else {
                id
            };
            assert_eq!((cut.flow, cut.size, cut.seg.trimmed), (want, 64, true));
            assert_eq!(contents(&mut out, 1), vec![(1, 1_000, false), (tail, 1_000, false)]);
            assert_eq!((out.queued_bytes[1], out.queued_bytes[0], out.held_bytes, s.buffer_used), (2_000, 0, 2_000, 2_064));
            s.buffer_used -= 64; // the header left
        }
        // Binomial(1_000, 0.5): sd 15.8, so 420..=580 is five of them.
        assert!((420..=580).contains(&booted), "{booted} of 1_000 trimmed the packet queued last");
        // Background traffic at the tail is not trimmed: the arrival is, with no coin tossed.
        let mut background = data(9, 1_000);
        background.frame = Frame::Background;
        let (mut s, mut out) = (switch(), port());
        arrive(&mut s, &p, &mut out, data(1, 1_000));
        arrive(&mut s, &p, &mut out, background);
        assert_eq!(arrive(&mut s, &p, &mut out, data(3, 1_000)).0, Verdict::Trim { queue: 0, header: 64 });
        assert_eq!(s.trim_rng.clone().next_u64(), switch().trim_rng.next_u64());
    }

    #[test]
    fn a_booted_packet_whose_header_finds_no_room_is_dropped_and_its_bytes_leave_the_buffer() {
        // The header queue holds one header; heads: the last queued packet is booted, and its
        // header, finding the header queue full, is dropped; tails: the arrival's header is.
        for heads in [true, false] {
            let p = composite(1_000_000, 1, Victim::Htsim);
            let mut s = seeded(seed_with(true));
            let mut out = port();
            arrive(&mut s, &p, &mut out, data(1, 1_000));
            arrive(&mut s, &p, &mut out, data(2, 1_000));
            assert!(matches!(arrive(&mut s, &p, &mut out, data(3, 1_000)).0, Verdict::TrimQueued { .. }), "the seed's first coin is heads");
            s.trim_rng = stream(seed_with(heads), Stream::SwitchTrim, 0); // this round's coin
            let (v, dropped) = arrive(&mut s, &p, &mut out, data(4, 1_000));
            let (want_v, lost, tail) = if heads { (Verdict::TrimQueued { queue: 1, header_queue: 0, header: 64 }, 3, 4) } else { (Verdict::Drop(Refusal::HeaderQueueFull), 4, 3) };
            assert_eq!((v, dropped.map(|x| (x.flow, x.size))), (want_v, Some((lost, 1_000))), "heads {heads}");
            assert_eq!(contents(&mut out, 1), vec![(1, 1_000, false), (tail, 1_000, false)]);
            assert_eq!((out.queued_bytes[1], out.queued_bytes[0], out.held_bytes, s.buffer_used), (2_000, 64, 2_064, 2_064), "heads {heads}");
        }
    }

    #[test]
    fn the_shared_buffer_still_applies_under_per_port_limits() {
        // A buffer of 2_064 B: two packets and one header.
        let p = composite(2_064, 100, Victim::Htsim);
        let mut s = seeded(seed_with(true));
        let mut out = port();
        arrive(&mut s, &p, &mut out, data(1, 1_000));
        arrive(&mut s, &p, &mut out, data(2, 1_000));
        // Heads: packet 2's 1_000 B make room for the arrival, its header takes the last 64.
        assert!(matches!(arrive(&mut s, &p, &mut out, data(3, 1_000)).0, Verdict::TrimQueued { .. }));
        assert_eq!((out.held_bytes, s.buffer_used), (2_064, 2_064));
        // A larger arrival than the packet it would replace does not fit the buffer even so: it is
        // trimmed itself, and its header finds the buffer full (whichever the coin).
        let before = s.trim_rng.clone().next_u64();
        let (v, dropped) = arrive(&mut s, &p, &mut out, data(4, 1_500));
        assert_eq!((v, dropped.map(|x| x.flow)), (Verdict::Drop(Refusal::BufferFull), Some(4)));
        assert_ne!(s.trim_rng.clone().next_u64(), before, "a coin was tossed");
        assert_eq!((out.queued_bytes[1], out.queued_bytes[0], s.buffer_used), (2_000, 64, 2_064));
        // Room in the data queue but not in the buffer: trimmed as without per-port limits.
        let p = composite(1_064, 100, Victim::Arrival);
        let (mut s, mut out) = (switch(), port());
        arrive(&mut s, &p, &mut out, data(1, 1_000));
        assert_eq!(arrive(&mut s, &p, &mut out, data(2, 1_000)).0, Verdict::Trim { queue: 0, header: 64 });
        assert_eq!((out.queued_bytes[1], out.queued_bytes[0], s.buffer_used), (1_000, 64, 1_064));
    }

    /// An enqueue or dequeue: (enqueue?, time, port, queue, packet id (flow, PSN), trimmed,
    /// bytes the queue holds after).
    type QueueEvent = (bool, Time, usize, usize, (u32, u32), bool, u64);

    /// What the observer saw at ports, in order, and the drops.
    #[derive(Clone, Default)]
    struct Queues(std::rc::Rc<std::cell::RefCell<(Vec<QueueEvent>, u64)>>);

    impl crate::observe::Observer for Queues {
        fn enqueue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
            self.0.borrow_mut().0.push((true, now, port, queue, (pkt.flow, pkt.seg.psn.value()), pkt.seg.trimmed, queued));
        }
        fn dequeue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
            self.0.borrow_mut().0.push((false, now, port, queue, (pkt.flow, pkt.seg.psn.value()), pkt.seg.trimmed, queued));
        }
        fn drop(&mut self, _now: Time, _port: usize, _pkt: &Packet, _cause: crate::observe::DropCause) {
            self.0.borrow_mut().1 += 1;
        }
    }

    /// Three hosts send 100 KB each at 10 Gbps to a fourth through one switch whose ports
    /// trim as htsim's NDP switch, with a data queue of 4 packets (4 x 1_048 B); the test-only
    /// receiver-driven scheme NACKs each trimmed packet and resends it on a grant.
    fn three_into_one(victim: &str) -> String {
        let flows: Vec<String> = (1..=3).map(|h| format!("{{ src = \"h{h}\", dst = \"h0\", size = \"100KB\" }}")).collect();
        format!(
            r#"
name = "composite"
duration = "20ms"
[topology]
kind = "single-switch"
hosts = 4
host_link = "10Gbps"
link_delay = "1us"
[nic]
mtu = 1000
[switch]
pfc = {{ enabled = false }}
trim = {{ queue = 0, header = "64B", data_queue = "4192B", victim = "{victim}" }}
[transport]
recovery = "pull"
cc = "none"
[workload]
kind = "flow-list"
flows = [{}]
"#,
            flows.join(", ")
        )
    }

    #[test]
    fn per_port_trimming_end_to_end_headers_overtake_queued_data_and_every_byte_arrives_once() {
        use crate::config::{build_with_observer, Scenario};
        let data_time = Rate::gbps(10).serialization(1_048);
        let header_time = Rate::gbps(10).serialization(64);
        for victim in ["htsim", "arrival"] {
            let seen = Queues::default();
            let sim = build_with_observer(Scenario::from_toml(&three_into_one(victim)).unwrap(), seen.clone()).unwrap();
            let out = sim.run(&mut |_, _| true).unwrap();
            let c = &out.counters;
            assert!(out.unfinished().is_none(), "{victim}: {:?}", out.unfinished());
            assert_eq!(c.bad_deliveries, 0, "{victim}");
            assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 300_000, "{victim}: every byte once");
            assert!(c.packets_trimmed > 0, "{victim}: {c:?}");
            let (events, drops) = seen.0.borrow().clone();
            assert_eq!((drops, c.drops_buffer), (0, 0), "{victim}: the header queue (8_384 B) never fills");
            // The port into h0 is the only one that queues data.
            let mut data_ports: Vec<usize> = events.iter().filter(|e| e.3 == 1).map(|e| e.2).collect();
            data_ports.dedup();
            assert_eq!(data_ports.len(), 1, "{victim}");
            let b = data_ports[0];
            // By hand: the senders' packets k reach the switch together at t0 + k x D (D: a
            // data packet's time on the wire), and the port sends one per D. Batch 0 leaves
            // 2 queued, batch 1 fills the 4 of the data queue exactly, in batch 2 only one of
            // three fits: two headers. The first leaves when the packet on the wire is done,
            // at t0 + 3 x D, and so do three more of batch 3 and batch 2's second, five back
            // to back: the data packet queued longest (since t0 + D) waits behind them.
            let t0 = data_time + Time::from_us(1);
            let at = |k: u64, headers: u64| Time(t0.0 + k * data_time.0 + headers * header_time.0);
            let at_b: Vec<_> = events.iter().filter(|e| e.2 == b).collect();
            let headers_in: Vec<Time> = at_b.iter().filter(|e| e.0 && e.3 == 0).map(|e| e.1).take(5).collect();
            assert_eq!(headers_in, vec![at(2, 0), at(2, 0), at(3, 0), at(3, 0), at(3, 0)], "{victim}");
            let out_times: Vec<(usize, Time)> = at_b.iter().filter(|e| !e.0).map(|e| (e.3, e.1)).take(9).collect();
            let data_first = [(1, at(0, 0)), (1, at(1, 0)), (1, at(2, 0))];
            let headers_then = [(0, at(3, 0)), (0, at(3, 1)), (0, at(3, 2)), (0, at(3, 3)), (0, at(3, 4)), (1, at(3, 5))];
            assert_eq!(out_times, [&data_first[..], &headers_then[..]].concat(), "{victim}");
            let oldest = at_b.iter().find(|e| !e.0 && e.3 == 1 && e.1 == at(3, 5)).unwrap().4;
            assert!(at_b.iter().any(|e| e.0 && e.3 == 1 && e.4 == oldest && e.1 == at(1, 0)), "{victim}: queued since t0 + D");
            let (mut occ, mut in_data) = ([0u64; 2], std::collections::HashMap::<(u32, u32), u32>::new());
            let (mut waiting, mut overtakes, mut victims, mut trims, mut max_data_wait) = (std::collections::VecDeque::new(), 0, 0, 0, Time::ZERO);
            let mut data_since = std::collections::HashMap::new();
            for &(enq, t, port, q, id, trimmed, queued) in events.iter().filter(|e| e.2 == b) {
                match (enq, q) {
                    (true, 1) => {
                        assert!(queued <= 4_192, "{victim}: the data queue holds at most its cap, {queued} B at {t}");
                        *in_data.entry(id).or_default() += 1;
                        data_since.insert(id, t);
                    }
                    (false, 1) => {
                        // Strict priority: no data leaves while a header waits.
                        assert_eq!(occ[0], 0, "{victim}: data left port {port} at {t} with {} B of headers waiting", occ[0]);
                        *in_data.get_mut(&id).unwrap() -= 1;
                        max_data_wait = max_data_wait.max(t - data_since[&id]);
                    }
                    (true, 0) => {
                        assert!(trimmed, "{victim}: only trimmed headers go to h0's header queue");
                        trims += 1;
                        overtakes += (occ[1] > 0) as u32;
                        // A victim: queued as data at this port, now its header (htsim's boot).
                        if let Some(n) = in_data.get_mut(&id).filter(|n| **n > 0) {
                            *n -= 1;
                            victims += 1;
                        }
                        waiting.push_back((t, (queued - 64) / 64));
                    }
                    (false, _) => {
                        // A header leaves at most one data packet's time after it came, plus
                        // one header time per header ahead of it, to the picosecond.
                        let (since, ahead) = waiting.pop_front().unwrap();
                        assert!(t - since <= data_time + Time(header_time.0 * ahead), "{victim}: a header waited {} from {since}", t - since);
                    }
                    (true, _) => unreachable!(),
                }
                occ[q] = queued;
            }
            assert_eq!(trims, c.packets_trimmed, "{victim}: every trim is at the bottleneck");
            assert!(overtakes > 0, "{victim}: headers went ahead of queued data");
            assert!(max_data_wait >= Time(data_time.0 * 3), "{victim}: data queued behind data ({max_data_wait})");
            if victim == "htsim" {
                assert!(victims > 0 && victims < trims, "{victim}: {victims} of {trims} trimmed packets were queued ones");
            } else {
                assert_eq!(victims, 0, "{victim}: only arrivals are trimmed");
            }
        }
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
