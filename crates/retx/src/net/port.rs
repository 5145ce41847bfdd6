//! One end of a full-duplex link: N egress queues served by a discipline, the transmitter, the
//! wire towards the peer (a FIFO: an idle port costs no event), the loss models on that wire,
//! and PFC state.
//!
//! Queue 0 carries control packets (ACK, NAK, CNP) and is always served first and never paused,
//! like the high-priority queue of the HPCC ns-3 model; queues 1.. carry data classes, which PFC
//! pauses and the port's [`Discipline`] shares. At a host only queue 0 is used: data is pulled
//! from the NIC's queue pairs when the transmitter frees up.

use super::loss::PortLoss;
use super::packet::{Frame, Packet};
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

/// The most egress queues a port may have.
pub const MAX_QUEUES: usize = 8;

/// How a port shares its transmitter among its data queues (queue 0, control, always first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// The lowest-numbered non-empty, unpaused queue first.
    StrictPriority,
    /// Deficit round robin (Shreedhar and Varghese, 1995): each visit adds `quantum` bytes to a
    /// queue's deficit; it sends while its head fits.
    Drr { quantum: u32 },
}

/// A shaped queue with a small buffer of its own, as ExpressPass's credit queue (SIGCOMM '17):
/// served ahead of the other data queues whenever its shaper allows, at most `rate` on
/// average, holding at most `buffer` packets (an arrival beyond that is dropped). The shaper
/// is a next-allowed time (a token bucket `burst` packets deep, as GCRA keeps one): a packet
/// of `s` bytes sent at `t` lets the next go at `max(next, t - (burst - 1) x s / rate) + s /
/// rate`, so idle time earns at most `burst` packets back to back (1: no burst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shaper {
    pub queue: usize,
    pub rate: Rate,
    pub buffer: u32,
    pub burst: u32,
}

/// A run's shaped queue, the same on every switch port: its rate a share of each port's link
/// rate or a fixed rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShaperSpec {
    pub queue: usize,
    pub rate: ShapedRate,
    pub buffer: u32,
    pub burst: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapedRate {
    Share(f64),
    Fixed(Rate),
}

impl ShaperSpec {
    /// The shaper of a port whose link runs at `link`.
    pub fn at(&self, link: Rate) -> Shaper {
        let rate = match self.rate {
            ShapedRate::Share(f) => Rate((link.bps() as f64 * f).round() as u64),
            ShapedRate::Fixed(r) => r,
        };
        Shaper { queue: self.queue, rate, buffer: self.buffer, burst: self.burst }
    }
}

/// Laid out in the order the transmitter reads it (`repr(C)`): what every hop touches (the
/// transmitter's clock, counters, queue headers, the wire, the loss models) shares the first
/// few cache lines, each port starting on a line of its own, instead of being scattered over
/// the nine of the whole struct.
#[repr(C, align(64))]
pub struct Port {
    /// The transmitter is serialising a packet until then.
    pub busy_until: Time,
    pub wake_time: Time,
    /// Picoseconds per byte at `rate` when that is a whole number (every common link speed:
    /// 200 at 40 Gbps, 80 at 100 Gbps), else 0: serialising a packet is then a
    /// multiplication instead of a division on every hop.
    ps_per_byte: u64,
    pub delay: Time,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Bytes in all its queues, and the most since [`Port::take_peak`] last read it.
    pub held_bytes: u64,
    peak_bytes: u64,
    /// Egress queues, one per class. Packets travel by value (in queues and on wires), so a
    /// port reads them in order from memory it wrote in order: no pool to miss in.
    /// Held in the port itself (not behind a pointer): the header of the queue a hop uses
    /// is read from the port's own lines. Only the first `queue_count` are used.
    queues: [VecDeque<Packet>; MAX_QUEUES],
    pub queued_bytes: [u64; MAX_QUEUES],
    n_queues: u8,
    pub shaper_next: Time,
    /// A "transmitter free" event is pending for `wake_time` (scheduled only when something
    /// waits for it).
    pub wake_pending: bool,
    /// Data queues paused by a PFC PAUSE from the peer, as a bit mask by queue.
    pub paused: u8,
    /// Which queues hold a packet, as a bit mask: the transmitter decides what to send from
    /// this word beside the port's other hot fields instead of reading every queue's header
    /// (a cache miss each, on most hops, for a control queue that is almost always empty).
    nonempty: u8,
    /// Queues for which we have sent PAUSE to the peer and not yet RESUME, as a bit mask.
    pub pause_sent: u8,
    /// The queue at `drr_next` has had its quantum for this turn.
    drr_turn: bool,
    /// Packets on the wire: (arrival time at the peer, packet), in order.
    pub pipe: VecDeque<(Time, Packet)>,
    /// The wire leads into another partition of a parallel run: what is put on it is sent
    /// there, and its packets are that partition's `pipe`.
    pub remote: bool,
    /// PFC frames waiting for the transmitter (sent ahead of any queued packet).
    pub pfc_pending: VecDeque<Frame>,
    pub loss: PortLoss,
    pub discipline: Discipline,
    /// The shaped queue, if any, and when its shaper lets the next packet go.
    pub shaper: Option<Shaper>,
    pub node: usize,
    /// The port at the other end of the link and its node.
    pub peer: usize,
    pub peer_node: usize,
    pub rate: Rate,
    /// How this port marks ECN (a switch port's; by its rate unless the run said otherwise).
    pub ecn: PortEcn,
    /// Per-port trimming limits of this port, if not the switch's (a degraded link's).
    pub trim_limits: Option<PortTrim>,
    /// Packets this port marked CE (at dequeue) since the start.
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    deficit: [u32; MAX_QUEUES],
    drr_next: usize,
    /// Bytes buffered in this switch that arrived through this port, per queue (PFC ingress).
    pub ingress_bytes: [u64; MAX_QUEUES],
    /// Dynamic PFC: bytes per queue held in this port's headroom (ns-3 `hdrm_bytes`), the
    /// headroom's size, and the shift of this port's threshold.
    pub hdrm_bytes: [u64; MAX_QUEUES],
    pub pfc_headroom: u64,
    pub pfc_shift: u32,
}

impl Port {
    /// The port's link runs at `rate` from now on (a degraded link's: `[[switch.degraded]]`).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.ps_per_byte = if rate.0 > 0 && 8_000_000_000_000u64.is_multiple_of(rate.0) { 8_000_000_000_000 / rate.0 } else { 0 };
    }
}

/// How a switch port marks ECN on the data it sends.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum PortEcn {
    /// The switch's profile for the port's link rate (`[switch.ecn]`, `per_link`).
    #[default]
    ByRate,
    /// Never (`[switch.ecn] to_hosts = false` at a port toward a host).
    Off,
    /// This profile (a degraded link's, scaled with its rate).
    Profile(super::ecn::RedProfile),
}

impl Port {
    pub fn new(node: usize, rate: Rate, delay: Time, queues: usize, discipline: Discipline, loss: PortLoss) -> Port {
        let queues = queues.clamp(1, MAX_QUEUES);
        Port {
            node,
            peer: usize::MAX,
            peer_node: usize::MAX,
            rate,
            ps_per_byte: if rate.0 > 0 && 8_000_000_000_000u64.is_multiple_of(rate.0) { 8_000_000_000_000 / rate.0 } else { 0 },
            delay,
            queues: Default::default(),
            n_queues: queues as u8,
            nonempty: 0,
            queued_bytes: [0; MAX_QUEUES],
            discipline,
            shaper: None,
            shaper_next: Time::ZERO,
            deficit: [0; MAX_QUEUES],
            drr_next: 1,
            drr_turn: false,
            busy_until: Time::ZERO,
            wake_pending: false,
            wake_time: Time::ZERO,
            paused: 0,
            pfc_pending: VecDeque::new(),
            pipe: VecDeque::new(),
            remote: false,
            loss,
            ingress_bytes: [0; MAX_QUEUES],
            hdrm_bytes: [0; MAX_QUEUES],
            pfc_headroom: 0,
            pfc_shift: 0,
            pause_sent: 0,
            tx_bytes: 0,
            held_bytes: 0,
            peak_bytes: 0,
            tx_packets: 0,
            pauses_sent: 0,
            ecn_marks: 0,
            ecn: PortEcn::ByRate,
            trim_limits: None,
        }
    }

    /// Time to put `bytes` on this port's wire: exactly [`Rate::serialization`].
    #[inline]
    pub fn serialization(&self, bytes: u64) -> Time {
        if self.ps_per_byte != 0 && bytes < 1 << 21 {
            return Time(bytes * self.ps_per_byte);
        }
        self.rate.serialization(bytes)
    }

    pub fn queue_count(&self) -> usize {
        self.n_queues as usize
    }

    /// Appends a packet to queue `q`.
    pub fn enqueue(&mut self, q: usize, pkt: Packet) {
        self.queued_bytes[q] += pkt.size as u64;
        self.held_bytes += pkt.size as u64;
        self.peak_bytes = self.peak_bytes.max(self.held_bytes);
        push_tight(&mut self.queues[q], pkt);
        self.nonempty |= 1 << q;
    }

    /// Takes the head of queue `q`, keeping `nonempty` and the byte counts.
    fn take(&mut self, q: usize) -> Option<Packet> {
        if self.nonempty >> q & 1 == 0 {
            return None;
        }
        let queue = &mut self.queues[q];
        let pkt = queue.pop_front().expect("a queue marked non-empty");
        if queue.is_empty() {
            // Emptied, the ring starts again at its first slot (std's `clear` moves it back):
            // the next packet is written where the last restart wrote, a line still in cache,
            // not into a slot cold since the ring last wrapped (0.986 of the fabric bench's
            // CPU time, A/B pairs).
            queue.clear();
            self.nonempty &= !(1 << q);
        }
        self.queued_bytes[q] -= pkt.size as u64;
        self.held_bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// The last packet queued in `q` (its tail), if any.
    pub fn last(&self, q: usize) -> Option<&Packet> {
        self.queues[q].back()
    }

    /// Takes the last packet queued in `q` (its tail: the most recent arrival), keeping
    /// `nonempty` and the byte counts, as htsim's `CompositeQueue` boots one to trim it.
    pub fn pop_last(&mut self, q: usize) -> Option<Packet> {
        let queue = &mut self.queues[q];
        let pkt = queue.pop_back()?;
        if queue.is_empty() {
            queue.clear();
            self.nonempty &= !(1 << q);
        }
        self.queued_bytes[q] -= pkt.size as u64;
        self.held_bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Whether the control queue (0) holds a packet.
    pub fn has_control(&self) -> bool {
        self.nonempty & 1 != 0
    }

    /// The most bytes the queues held since the last call (or the start), and start over.
    pub fn take_peak(&mut self) -> u64 {
        std::mem::replace(&mut self.peak_bytes, self.held_bytes)
    }

    /// The most bytes the queues held since [`Port::take_peak`] last read it (or the start).
    pub fn peak(&self) -> u64 {
        self.peak_bytes
    }

    /// Packets in the queues and on the wire.
    pub fn packets_held(&self) -> usize {
        self.queues.iter().map(|q| q.len()).sum::<usize>() + self.pipe.len()
    }

    /// Whether any data queue (1..) but the shaped one holds a packet that is not paused.
    pub fn has_sendable_data(&self) -> bool {
        self.sendable_data() != 0
    }

    /// Data queues (1..) but the shaped one that hold a packet and are not paused, as a mask.
    fn sendable_data(&self) -> u8 {
        let shaped = self.shaper.map_or(0, |s| 1u8 << s.queue);
        self.nonempty & !self.paused & !shaped & !1
    }

    fn sendable(&self, q: usize) -> bool {
        (self.nonempty & !self.paused) >> q & 1 == 1
    }

    pub fn is_paused(&self, q: usize) -> bool {
        self.paused >> q & 1 == 1
    }

    /// Whether any data queue is paused (a host holds all its data then: it has one stream).
    pub fn any_data_paused(&self) -> bool {
        self.paused >> 1 != 0
    }

    pub fn is_shaped(&self, q: usize) -> bool {
        self.shaper.is_some_and(|s| s.queue == q)
    }

    /// Whether egress queue `q` is PFC-protected: a data queue (1..) other than the shaped
    /// one. Its packets are charged to their ingress queue on admission and uncharged when
    /// they leave.
    pub fn is_lossless(&self, q: usize) -> bool {
        q != 0 && !self.is_shaped(q)
    }

    /// Whether queue `q` is the shaped queue and its buffer is full (an arrival is dropped).
    pub fn shaped_full(&self, q: usize) -> bool {
        self.shaper.is_some_and(|s| s.queue == q && self.queues[q].len() >= s.buffer as usize)
    }

    /// When the shaped queue may send next, if it holds a packet that is not paused.
    pub fn shaper_wait(&self) -> Option<Time> {
        let s = self.shaper?;
        self.sendable(s.queue).then_some(self.shaper_next)
    }

    /// Takes the next control packet (queue 0).
    pub fn dequeue_control(&mut self) -> Option<Packet> {
        self.take(0)
    }

    /// Takes the next data packet at `now`: the shaped queue's if its shaper allows, else as
    /// the discipline orders the others, skipping paused queues: (queue, packet).
    pub fn dequeue_data(&mut self, now: Time) -> Option<(usize, Packet)> {
        let q = match self.shaper {
            Some(s) if self.shaper_wait().is_some_and(|t| t <= now) => s.queue,
            _ => match self.discipline {
                Discipline::StrictPriority => match self.sendable_data() {
                    0 => return None,
                    m => m.trailing_zeros() as usize,
                },
                Discipline::Drr { quantum } => self.drr_pick(quantum)?,
            },
        };
        let pkt = self.take(q).expect("picked a non-empty queue");
        if let Some(s) = self.shaper.filter(|s| s.queue == q) {
            let gap = s.rate.serialization(pkt.size as u64);
            let tolerance = Time(gap.0 * (s.burst.max(1) as u64 - 1));
            self.shaper_next = self.shaper_next.max(now.saturating_sub(tolerance)) + gap;
        }
        Some((q, pkt))
    }

    fn drr_pick(&mut self, quantum: u32) -> Option<usize> {
        if !self.has_sendable_data() {
            return None;
        }
        let n = self.queue_count();
        loop {
            let q = self.drr_next;
            let sendable = self.sendable_data() >> q & 1 == 1;
            if !self.drr_turn {
                if !sendable {
                    if self.queues[q].is_empty() {
                        self.deficit[q] = 0; // an empty queue keeps no credit (DRR's rule)
                    }
                    self.drr_next = if q + 1 >= n { 1 } else { q + 1 };
                    continue;
                }
                self.deficit[q] += quantum;
                self.drr_turn = true;
            }
            match self.queues[q].front().map(|p| p.size) {
                Some(bytes) if sendable && self.deficit[q] >= bytes => {
                    self.deficit[q] -= bytes;
                    if self.queues[q].len() == 1 {
                        self.deficit[q] = 0;
                        self.drr_turn = false;
                        self.drr_next = if q + 1 >= n { 1 } else { q + 1 };
                    }
                    return Some(q);
                }
                _ => {
                    self.drr_turn = false;
                    self.drr_next = if q + 1 >= n { 1 } else { q + 1 };
                }
            }
        }
    }

    /// Queues a PAUSE or RESUME for the peer; a pending opposite frame for the same queue
    /// cancels out instead.
    pub fn request_pfc(&mut self, frame: Frame) {
        let opposite = match frame {
            Frame::Pause(q) => Frame::Resume(q),
            Frame::Resume(q) => Frame::Pause(q),
            Frame::Transport | Frame::Background => return,
        };
        if let Some(i) = self.pfc_pending.iter().position(|&f| f == opposite) {
            self.pfc_pending.remove(i);
        } else {
            self.pfc_pending.push_back(frame);
        }
    }
}

/// Asks the CPU to bring `item`'s cache lines near (a hint: nothing is read or written).
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = item as *const T as *const i8;
        let n = std::mem::size_of::<T>();
        let mut off = 0;
        while off < n {
            // SAFETY: a prefetch never faults and changes no memory; the address is in `item`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
            off += 64;
        }
        if n > 0 {
            // SAFETY: as above (the last byte: the line an unaligned item ends in).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(n - 1)) };
        }
    }
}

/// Appends to a ring that grows by an eighth (not doubling) when full, so its capacity stays
/// close to the most it has held. A ring's slots are reused round its whole capacity, so
/// doubling left rings of packets by value (wires, egress queues) spanning about twice the
/// bytes they hold: fabric bench 14.4 -> 13.4 MiB peak, 0.98 of the CPU time (A/B pairs).
#[inline(always)]
pub fn push_tight<T>(ring: &mut VecDeque<T>, item: T) {
    if ring.len() == ring.capacity() {
        ring.reserve_exact(ring.capacity() / 8 + 4);
    }
    ring.push_back(item);
}

/// htsim's `CompositeQueue` (sim/compositequeue.cpp) on every switch port: each data queue
/// holds at most `data_queue` bytes and the header queue at most `header_queue` (htsim:
/// `_maxsize` and 2 x `_maxsize`). A data packet that does not fit its data queue is trimmed,
/// or, with [`Victim::Htsim`], on a coin flip the last packet queued there is trimmed and the
/// arrival takes its place; a packet that does not fit the header queue is dropped, or with
/// `Trim::return_to_sender` (the switch's) a trimmed data header goes back to its sender. The shared buffer
/// still applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortTrim {
    pub data_queue: u64,
    pub header_queue: u64,
    pub victim: Victim,
}

/// Which packet a full data queue trims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    /// htsim's rule: `drand() < 0.5` the last packet queued (the tail), else the arrival.
    Htsim,
    /// Always the arrival.
    Arrival,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn pkt(id: u32, size: u32) -> Packet {
        use crate::transport::common::segment::Segment;
        let seg = Segment::data(Default::default(), size, 0, Time::ZERO);
        Packet { frame: Frame::Transport, seg, flow: id, dir: 0, src: 0, dst: 0, size, priority: 1, in_port: 0, entropy: 0, int: crate::net::int::NO_INT, via: crate::net::packet::NO_VIA }
    }

    #[test]
    fn a_tight_ring_keeps_order_and_grows_by_an_eighth() {
        // Filled and drained in waves that wrap round it, a ring keeps FIFO order, and its
        // capacity stays within an eighth (plus 4) of the most it has held: doubling would
        // leave it near twice that.
        let mut ring = VecDeque::new();
        let (mut next_in, mut next_out, mut most) = (0u32, 0u32, 0usize);
        for wave in [3usize, 40, 17, 300, 5, 1000, 999] {
            for _ in 0..wave {
                push_tight(&mut ring, next_in);
                next_in += 1;
            }
            most = most.max(ring.len());
            assert!(ring.capacity() <= most + most / 8 + 4, "capacity {} for at most {most}", ring.capacity());
            for _ in 0..wave / 2 + 1 {
                assert_eq!(ring.pop_front(), Some(next_out));
                next_out += 1;
            }
        }
        assert_eq!(ring.len(), (next_in - next_out) as usize);
        assert!(ring.iter().copied().eq(next_out..next_in));
    }

    #[test]
    fn an_emptied_queue_starts_again_at_its_ring_s_first_slot() {
        // Head moved mid-ring, then emptied: filled to capacity again, the queue lies in one
        // piece from the ring's first slot (it does not wrap round from where the head was).
        let mut p = port(2, Discipline::StrictPriority);
        for i in 0..20 {
            put(&mut p, 1, i, 1000);
        }
        for i in 0..20 {
            assert_eq!(p.dequeue_data(Time::ZERO).map(|(q, pkt)| (q, pkt.flow)), Some((1, i)));
        }
        let cap = p.queues[1].capacity() as u32;
        for i in 0..cap {
            put(&mut p, 1, i, 1000);
        }
        assert_eq!(p.queues[1].capacity() as u32, cap, "no growth while it had room");
        let (first, rest) = p.queues[1].as_slices();
        assert!(rest.is_empty() && first.iter().map(|pkt| pkt.flow).eq(0..cap), "wrapped: {} then {}", first.len(), rest.len());
    }

    /// Queues a packet of `bytes` whose flow id stands for its identity.
    fn put(p: &mut Port, q: usize, id: u32, bytes: u32) {
        p.enqueue(q, pkt(id, bytes));
    }

    /// The next data packet as (queue, id, bytes).
    fn take(p: &mut Port) -> Option<(usize, u32, u32)> {
        p.dequeue_data(Time::ZERO).map(|(q, x)| (q, x.flow, x.size))
    }

    fn port(queues: usize, d: Discipline) -> Port {
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        Port::new(0, Rate::gbps(10), Time::ZERO, queues, d, loss)
    }

    #[test]
    fn the_transmitter_sees_exactly_which_queues_hold_packets() {
        // The non-empty mask decides what the transmitter looks at: it must follow every
        // enqueue and every dequeue, or a port idles with packets or wakes for nothing.
        let mut p = port(3, Discipline::StrictPriority);
        assert_eq!(p.queue_count(), 3);
        assert!(!p.has_control() && !p.has_sendable_data());
        assert!(p.dequeue_control().is_none());
        p.enqueue(0, pkt(1, 64));
        p.enqueue(0, pkt(2, 64));
        assert!(p.has_control() && !p.has_sendable_data());
        assert_eq!(p.dequeue_control().map(|x| x.flow), Some(1));
        assert!(p.has_control(), "one control packet is left");
        assert_eq!(p.dequeue_control().map(|x| x.flow), Some(2));
        assert!(!p.has_control() && p.dequeue_control().is_none());
        put(&mut p, 2, 3, 500);
        assert!(p.has_sendable_data() && !p.has_control());
        p.paused = 1 << 2;
        assert!(!p.has_sendable_data(), "queue 2 is paused");
        assert_eq!(take(&mut p), None);
        p.paused = 0;
        assert_eq!(take(&mut p), Some((2, 3, 500)));
        assert!(!p.has_sendable_data());
        assert_eq!((p.held_bytes, p.queued_bytes[..3].to_vec()), (0, vec![0, 0, 0]));
    }

    #[test]
    fn pop_last_takes_the_tail_and_keeps_the_masks_and_byte_counts() {
        let mut p = port(3, Discipline::StrictPriority);
        assert!(p.pop_last(1).is_none() && p.last(1).is_none());
        put(&mut p, 1, 10, 1000);
        put(&mut p, 1, 11, 700);
        put(&mut p, 0, 1, 64);
        assert_eq!(p.last(1).map(|x| x.flow), Some(11));
        assert_eq!(p.pop_last(1).map(|x| (x.flow, x.size)), Some((11, 700)), "the most recent arrival");
        assert_eq!((p.queued_bytes[1], p.held_bytes), (1_000, 1_064));
        assert!(p.has_sendable_data());
        assert_eq!(p.pop_last(1).map(|x| x.flow), Some(10));
        assert_eq!((p.queued_bytes[1], p.held_bytes), (0, 64));
        assert!(!p.has_sendable_data() && p.has_control(), "queue 1 is empty, queue 0 is not");
        assert_eq!(take(&mut p), None);
        // Refilled, it serves in order from the head.
        put(&mut p, 1, 12, 500);
        put(&mut p, 1, 13, 500);
        assert_eq!(p.pop_last(1).map(|x| x.flow), Some(13));
        assert_eq!(take(&mut p), Some((1, 12, 500)));
        assert_eq!(p.pop_last(0).map(|x| x.flow), Some(1));
        assert!(!p.has_control() && p.held_bytes == 0);
    }

    #[test]
    fn serialization_matches_the_rate_whether_or_not_it_is_a_whole_ps_per_byte() {
        let loss = || PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        for rate in [Rate::gbps(40), Rate::gbps(100), Rate::gbps(400), Rate::gbps(25), Rate(40_000_000_007), Rate(3), Rate::mbps(1)] {
            let p = Port::new(0, rate, Time::ZERO, 2, Discipline::StrictPriority, loss());
            for bytes in [0u64, 1, 64, 1086, 9000, (1 << 21) - 1, 1 << 21, 1 << 30] {
                assert_eq!(p.serialization(bytes), rate.serialization(bytes), "{rate} {bytes} B");
            }
        }
        assert_eq!(port(2, Discipline::StrictPriority).ps_per_byte, 800, "10 Gbps is 800 ps a byte");
    }

    #[test]
    fn strict_priority_serves_the_lowest_unpaused_queue_first() {
        let mut p = port(4, Discipline::StrictPriority);
        p.enqueue(3, pkt(30, 100));
        p.enqueue(2, pkt(20, 100));
        p.enqueue(2, pkt(21, 100));
        p.enqueue(0, pkt(1, 60));
        assert_eq!(p.dequeue_control().map(|x| (x.flow, x.size)), Some((1, 60)));
        p.paused = 1 << 2;
        assert_eq!(p.dequeue_data(Time::ZERO).map(|(q, x)| (q, x.flow)), Some((3, 30)));
        assert!(p.dequeue_data(Time::ZERO).is_none());
        p.paused = 0;
        assert_eq!(p.dequeue_data(Time::ZERO).map(|x| x.1.flow), Some(20));
        assert_eq!(p.queued_bytes[..4], [0, 0, 100, 0]);
    }

    #[test]
    fn drr_shares_bytes_in_proportion_to_quanta_not_packets() {
        // Queue 1 sends 1500 B packets, queue 2 sends 500 B: with equal quanta each gets
        // the same bytes, so queue 2 sends three packets per packet of queue 1.
        let mut p = port(3, Discipline::Drr { quantum: 1500 });
        for i in 0..30 {
            p.enqueue(1, pkt(100 + i, 1500));
            p.enqueue(2, pkt(200 + i, 500));
            p.enqueue(2, pkt(300 + i, 500));
            p.enqueue(2, pkt(400 + i, 500));
        }
        let mut bytes = [0u64; 3];
        for _ in 0..60 {
            let (q, x) = p.dequeue_data(Time::ZERO).unwrap();
            bytes[q] += x.size as u64;
        }
        assert_eq!(bytes[1], bytes[2], "{bytes:?}");
    }

    #[test]
    fn opposite_pfc_frames_cancel_per_queue() {
        let mut p = port(3, Discipline::StrictPriority);
        p.request_pfc(Frame::Pause(1));
        p.request_pfc(Frame::Pause(2));
        p.request_pfc(Frame::Resume(1));
        assert_eq!(p.pfc_pending.iter().copied().collect::<Vec<_>>(), vec![Frame::Pause(2)]);
    }

    #[test]
    fn a_paused_queue_is_not_sendable_data_under_either_discipline() {
        for d in [Discipline::StrictPriority, Discipline::Drr { quantum: 1500 }] {
            let mut p = port(3, d);
            put(&mut p, 0, 1, 60);
            put(&mut p, 2, 20, 1000);
            p.paused = 1 << 2;
            assert!(p.is_paused(2) && !p.is_paused(1));
            // Control waiting in queue 0 is not data; the only data queue is paused.
            assert!(!p.has_sendable_data(), "{d:?}");
            assert_eq!(take(&mut p), None, "{d:?}");
            put(&mut p, 1, 10, 1000);
            assert!(p.has_sendable_data(), "{d:?}");
            assert_eq!(take(&mut p), Some((1, 10, 1000)), "{d:?}");
            p.paused = 0;
            assert!(p.has_sendable_data(), "{d:?}");
            assert_eq!(take(&mut p), Some((2, 20, 1000)), "{d:?}");
            assert!(!p.has_sendable_data(), "{d:?}");
        }
    }

    #[test]
    fn drr_never_serves_a_paused_queue_and_keeps_no_credit_for_an_empty_one() {
        // Queue 1 paused with a backlog: DRR serves queue 2 only.
        let mut p = port(3, Discipline::Drr { quantum: 1500 });
        for i in 0..6 {
            put(&mut p, 1, 100 + i, 500);
            put(&mut p, 2, 200 + i, 500);
        }
        p.paused = 1 << 1;
        let picks: Vec<u32> = std::iter::from_fn(|| take(&mut p)).map(|x| x.1).collect();
        assert_eq!(picks, (200..206).collect::<Vec<_>>());
        assert_eq!(p.queued_bytes[..3], [0, 3_000, 0]);

        // Queue 1 empty while queue 2 sends: it earns nothing, so once it has packets it gets
        // one quantum (3 x 500 B) per turn, like queue 2, not a burst of saved-up credit.
        let mut p = port(3, Discipline::Drr { quantum: 1500 });
        for i in 0..12 {
            put(&mut p, 2, 200 + i, 500);
        }
        for i in 0..6 {
            assert_eq!(take(&mut p), Some((2, 200 + i, 500)));
        }
        for i in 0..10 {
            put(&mut p, 1, 100 + i, 500);
        }
        let queues: Vec<usize> = (0..12).map(|_| take(&mut p).unwrap().0).collect();
        assert_eq!(queues, vec![1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]);
    }

    #[test]
    fn drr_moves_on_after_a_queue_empties_even_if_it_refills_at_once() {
        // Queue 1 sends its only packet and gets another straight away: its turn is over, so
        // queue 2 has its quantum (3 x 500 B) before queue 1 goes again.
        let mut p = port(3, Discipline::Drr { quantum: 1500 });
        put(&mut p, 1, 100, 500);
        for i in 0..6 {
            put(&mut p, 2, 200 + i, 500);
        }
        assert_eq!(take(&mut p), Some((1, 100, 500)));
        put(&mut p, 1, 101, 500);
        let ids: Vec<u32> = std::iter::from_fn(|| take(&mut p)).map(|x| x.1).collect();
        assert_eq!(ids, vec![200, 201, 202, 101, 203, 204, 205]);
    }

    /// A shaped queue 2 at 5 % of 10 Gbps (500 Mbps) with a buffer of 8: 84 B credits (an
    /// ExpressPass credit frame) leave exactly 84 x 8 / 500e6 s = 1.344 us apart.
    fn shaped(d: Discipline) -> Port {
        let mut p = port(3, d);
        p.shaper = Some(Shaper { queue: 2, rate: Rate::mbps(500), buffer: 8, burst: 1 });
        p
    }

    const GAP: Time = Time(1_344_000);

    #[test]
    fn the_shaped_queue_sends_at_its_rate_and_holds_at_most_its_buffer() {
        let mut p = shaped(Discipline::StrictPriority);
        for i in 0..8 {
            assert!(!p.shaped_full(2), "credit {i} fits");
            put(&mut p, 2, i, 84);
        }
        assert!(p.shaped_full(2), "the 9th credit finds the buffer of 8 full");
        assert!(!p.shaped_full(1), "other queues have no such limit");
        // Credit k leaves at k x 1.344 us, not a picosecond earlier.
        for k in 0..8u64 {
            let t = Time(GAP.0 * k);
            if k > 0 {
                assert!(p.dequeue_data(Time(t.0 - 1)).is_none(), "credit {k} before its time");
                assert_eq!(p.shaper_wait(), Some(t));
            }
            assert_eq!(p.dequeue_data(t).map(|(q, x)| (q, x.flow)), Some((2, k as u32)));
        }
        assert_eq!(p.shaper_wait(), None, "empty: nothing to wake for");
        // 8 credits in 7 gaps: 7 x 84 B x 8 / 9.408 us = 500 Mbps.
        assert_eq!(p.shaper_next, Time(GAP.0 * 8));
        // An idle shaper earns no burst: two credits after a long pause still go one gap apart.
        put(&mut p, 2, 100, 84);
        put(&mut p, 2, 101, 84);
        assert_eq!(p.dequeue_data(Time::from_us(100)).map(|x| x.1.flow), Some(100));
        assert!(p.dequeue_data(Time::from_us(100)).is_none());
        assert_eq!(p.shaper_wait(), Some(Time(Time::from_us(100).0 + GAP.0)));
    }

    #[test]
    fn a_shaper_two_deep_lets_two_go_back_to_back_after_a_pause_then_its_rate() {
        let mut p = shaped(Discipline::StrictPriority);
        p.shaper = Some(Shaper { burst: 2, ..p.shaper.unwrap() });
        for i in 0..5 {
            put(&mut p, 2, i, 84);
        }
        // Busy from the start: the first two go at once (a burst of 2), then one per gap.
        let t0 = Time::from_us(100);
        assert_eq!(p.dequeue_data(t0).map(|x| x.1.flow), Some(0));
        assert_eq!(p.dequeue_data(t0).map(|x| x.1.flow), Some(1));
        assert!(p.dequeue_data(t0).is_none(), "a third is beyond the burst");
        assert_eq!(p.shaper_wait(), Some(Time(t0.0 + GAP.0)));
        assert_eq!(p.dequeue_data(Time(t0.0 + GAP.0)).map(|x| x.1.flow), Some(2));
        assert_eq!(p.shaper_wait(), Some(Time(t0.0 + 2 * GAP.0)), "sustained: the rate");
        assert_eq!(p.dequeue_data(Time(t0.0 + 2 * GAP.0)).map(|x| x.1.flow), Some(3));
        // Idle for long: the burst is earned back, no more.
        assert_eq!(p.dequeue_data(Time(t0.0 + 50 * GAP.0)).map(|x| x.1.flow), Some(4));
        put(&mut p, 2, 5, 84);
        put(&mut p, 2, 6, 84);
        assert_eq!(p.dequeue_data(Time(t0.0 + 50 * GAP.0)).map(|x| x.1.flow), Some(5));
        assert!(p.dequeue_data(Time(t0.0 + 50 * GAP.0)).is_none());
    }

    #[test]
    fn the_shaped_queue_goes_ahead_of_data_only_when_its_shaper_allows() {
        for d in [Discipline::StrictPriority, Discipline::Drr { quantum: 1500 }] {
            let mut p = shaped(d);
            for i in 0..3 {
                put(&mut p, 2, 20 + i, 84);
                put(&mut p, 1, 10 + i, 1000);
            }
            assert!(p.has_sendable_data(), "{d:?}: queue 1");
            let at = |p: &mut Port, ps: u64| p.dequeue_data(Time(ps)).map(|(q, x)| (q, x.flow));
            assert_eq!(at(&mut p, 0), Some((2, 20)), "{d:?}");
            assert_eq!(at(&mut p, 800_000), Some((1, 10)), "{d:?}: shaper closed, data goes");
            assert_eq!(at(&mut p, 1_344_000), Some((2, 21)), "{d:?}: shaper open again, ahead of data");
            assert_eq!(at(&mut p, 1_344_001), Some((1, 11)), "{d:?}");
            assert_eq!(at(&mut p, 1_344_002), Some((1, 12)), "{d:?}");
            assert_eq!(at(&mut p, 1_344_003), None, "{d:?}: only a shaped credit left, not yet");
            assert!(!p.has_sendable_data(), "{d:?}: the shaped queue is not the discipline's");
            assert_eq!(p.shaper_wait(), Some(Time(2 * 1_344_000)), "{d:?}");
            // A paused shaped queue waits for nothing.
            p.paused = 1 << 2;
            assert_eq!(p.shaper_wait(), None, "{d:?}");
            assert_eq!(at(&mut p, 10_000_000), None, "{d:?}");
        }
    }
}
