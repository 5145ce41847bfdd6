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

pub struct Port {
    pub node: usize,
    /// The port at the other end of the link and its node.
    pub peer: usize,
    pub peer_node: usize,
    pub rate: Rate,
    pub delay: Time,
    /// Egress queues, one per class. Packets travel by value (in queues and on wires), so a
    /// port reads them in order from memory it wrote in order: no pool to miss in.
    pub queues: Vec<VecDeque<Packet>>,
    pub queued_bytes: Vec<u64>,
    pub discipline: Discipline,
    deficit: [u32; MAX_QUEUES],
    drr_next: usize,
    /// The queue at `drr_next` has had its quantum for this turn.
    drr_turn: bool,
    /// The transmitter is serialising a packet until then.
    pub busy_until: Time,
    /// A "transmitter free" event is pending (scheduled only when something waits for it).
    pub wake_pending: bool,
    /// Data queues paused by a PFC PAUSE from the peer, as a bit mask by queue.
    pub paused: u8,
    /// PFC frames waiting for the transmitter (sent ahead of any queued packet).
    pub pfc_pending: VecDeque<Frame>,
    /// Packets on the wire: (arrival time at the peer, packet), in order.
    pub pipe: VecDeque<(Time, Packet)>,
    pub loss: PortLoss,
    /// Bytes buffered in this switch that arrived through this port, per queue (PFC ingress).
    pub ingress_bytes: [u64; MAX_QUEUES],
    /// Queues for which we have sent PAUSE to the peer and not yet RESUME, as a bit mask.
    pub pause_sent: u8,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub pauses_sent: u64,
}

impl Port {
    pub fn new(node: usize, rate: Rate, delay: Time, queues: usize, discipline: Discipline, loss: PortLoss) -> Port {
        let queues = queues.clamp(1, MAX_QUEUES);
        Port {
            node,
            peer: usize::MAX,
            peer_node: usize::MAX,
            rate,
            delay,
            queues: (0..queues).map(|_| VecDeque::new()).collect(),
            queued_bytes: vec![0; queues],
            discipline,
            deficit: [0; MAX_QUEUES],
            drr_next: 1,
            drr_turn: false,
            busy_until: Time::ZERO,
            wake_pending: false,
            paused: 0,
            pfc_pending: VecDeque::new(),
            pipe: VecDeque::new(),
            loss,
            ingress_bytes: [0; MAX_QUEUES],
            pause_sent: 0,
            tx_bytes: 0,
            tx_packets: 0,
            pauses_sent: 0,
        }
    }

    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// Appends a packet to queue `q`.
    pub fn enqueue(&mut self, q: usize, pkt: Packet) {
        self.queued_bytes[q] += pkt.size as u64;
        self.queues[q].push_back(pkt);
    }

    /// Packets in the queues and on the wire.
    pub fn packets_held(&self) -> usize {
        self.queues.iter().map(|q| q.len()).sum::<usize>() + self.pipe.len()
    }

    /// Whether any data queue (1..) holds a packet that is not paused.
    pub fn has_sendable_data(&self) -> bool {
        (1..self.queues.len()).any(|q| !self.queues[q].is_empty() && self.paused >> q & 1 == 0)
    }

    pub fn is_paused(&self, q: usize) -> bool {
        self.paused >> q & 1 == 1
    }

    /// Takes the next control packet (queue 0).
    pub fn dequeue_control(&mut self) -> Option<Packet> {
        let pkt = self.queues[0].pop_front()?;
        self.queued_bytes[0] -= pkt.size as u64;
        Some(pkt)
    }

    /// Takes the next data packet as the discipline orders them, skipping paused queues:
    /// (queue, packet).
    pub fn dequeue_data(&mut self) -> Option<(usize, Packet)> {
        let n = self.queues.len();
        let q = match self.discipline {
            Discipline::StrictPriority => (1..n).find(|&q| !self.queues[q].is_empty() && !self.is_paused(q))?,
            Discipline::Drr { quantum } => self.drr_pick(quantum)?,
        };
        let pkt = self.queues[q].pop_front().expect("picked a non-empty queue");
        self.queued_bytes[q] -= pkt.size as u64;
        Some((q, pkt))
    }

    fn drr_pick(&mut self, quantum: u32) -> Option<usize> {
        if !self.has_sendable_data() {
            return None;
        }
        let n = self.queues.len();
        loop {
            let q = self.drr_next;
            let sendable = !self.queues[q].is_empty() && !self.is_paused(q);
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
            Frame::Transport => return,
        };
        if let Some(i) = self.pfc_pending.iter().position(|&f| f == opposite) {
            self.pfc_pending.remove(i);
        } else {
            self.pfc_pending.push_back(frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn pkt(id: u32, size: u32) -> Packet {
        use crate::transport::segment::Segment;
        let seg = Segment::data(Default::default(), size, 0, Time::ZERO);
        Packet { frame: Frame::Transport, seg, flow: id, dir: 0, src: 0, dst: 0, size, class: 1, in_port: 0, entropy: 0, int: crate::net::int::NO_INT }
    }

    /// Queues a packet of `bytes` whose flow id stands for its identity.
    fn put(p: &mut Port, q: usize, id: u32, bytes: u32) {
        p.enqueue(q, pkt(id, bytes));
    }

    /// The next data packet as (queue, id, bytes).
    fn take(p: &mut Port) -> Option<(usize, u32, u32)> {
        p.dequeue_data().map(|(q, x)| (q, x.flow, x.size))
    }

    fn port(queues: usize, d: Discipline) -> Port {
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        Port::new(0, Rate::gbps(10), Time::ZERO, queues, d, loss)
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
        assert_eq!(p.dequeue_data().map(|(q, x)| (q, x.flow)), Some((3, 30)));
        assert!(p.dequeue_data().is_none());
        p.paused = 0;
        assert_eq!(p.dequeue_data().map(|x| x.1.flow), Some(20));
        assert_eq!(p.queued_bytes, vec![0, 0, 100, 0]);
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
            let (q, x) = p.dequeue_data().unwrap();
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
        assert_eq!(p.queued_bytes, vec![0, 3_000, 0]);

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
}
