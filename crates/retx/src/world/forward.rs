//! The network side of the event loop: ports put packets on wires (where loss models may drop
//! them), wires deliver them, switches admit, mark and forward them, PFC frames pause and
//! resume queues, and background sources feed switch egress queues.

use super::{Event, Simulation, PFC_FRAME_BYTES};
use crate::net::admission::{self, Booted, Verdict};
use crate::net::int::NO_INT;
use crate::net::packet::{Frame, Packet, NO_VIA, PRIORITY_CONTROL};
use crate::net::port::PortEcn;
use crate::observe::{DropCause, Observer};
use crate::transport::common::int::IntHop;
use crate::transport::common::segment::{Ecn, SegKind, Segment};

impl<O: Observer> Simulation<O> {
    /// Sends the next packet on port `p` if its transmitter is free; if it is busy, makes
    /// sure it is woken when it frees up.
    pub(super) fn try_transmit(&mut self, p: usize) {
        if self.now < self.ports[p].busy_until {
            self.wake_when_free(p);
            return;
        }
        if self.transmit_next(p) && self.has_backlog(p) {
            self.wake_when_free(p);
        } else if let Some(t) = self.ports[p].shaper_wait() {
            // Only the shaped queue waits: wake when its shaper opens.
            self.wake_at(p, t.max(self.ports[p].busy_until));
        }
    }

    /// A "transmitter free" event, unless one is pending. Only ports with something waiting
    /// get one, so an idle port costs no event per packet.
    fn wake_when_free(&mut self, p: usize) {
        self.wake_at(p, self.ports[p].busy_until);
    }

    /// A wake-up of port `p` at `t`, unless one is pending no later. Without a shaper every
    /// request is for `busy_until`, which only grows, so a port has one wake-up at a time; a
    /// shaper's later wake-up may be overtaken by an earlier one, and is then ignored when
    /// it fires (see `Event::TxDone`).
    fn wake_at(&mut self, p: usize, t: crate::sim::units::Time) {
        let port = &mut self.ports[p];
        if !port.wake_pending || t < port.wake_time {
            port.wake_pending = true;
            port.wake_time = t;
            self.events.push(t, Self::node_origin(port.node), Event::TxDone(p as u32));
        }
    }

    /// Whether port `p` has more to send once its transmitter is free.
    fn has_backlog(&self, p: usize) -> bool {
        let port = &self.ports[p];
        let data_waiting = if self.is_host[port.node] {
            let nic = &self.nics[self.nic_of[port.node] as usize];
            !port.any_data_paused() && (!nic.scheduler.is_empty() || nic.agent.wants_wire())
        } else {
            port.has_sendable_data()
        };
        !port.pfc_pending.is_empty() || port.has_control() || data_waiting
    }

    /// Puts the next packet on the free port `p`: a PFC frame, then control, then data (from
    /// the NIC at a host, by the port's discipline at a switch). Returns whether it sent.
    fn transmit_next(&mut self, p: usize) -> bool {
        let node = self.ports[p].node;
        if let Some(frame) = self.ports[p].pfc_pending.pop_front() {
            let pkt = Packet {
                frame,
                seg: Segment::control(SegKind::Ack, Default::default(), self.now),
                flow: u32::MAX,
                dir: 0,
                src: node as u32,
                dst: self.ports[p].peer_node as u32,
                size: PFC_FRAME_BYTES,
                priority: PRIORITY_CONTROL as u8,
                in_port: p as u32,
                entropy: 0,
                int: NO_INT,
                via: NO_VIA,
            };
            self.created();
            self.put_on_wire(p, pkt);
            return true;
        }
        if let Some(mut pkt) = self.ports[p].dequeue_control() {
            self.dequeued(p, &mut pkt, PRIORITY_CONTROL);
            self.put_on_wire(p, pkt);
            return true;
        }
        if self.is_host[node] {
            if self.ports[p].any_data_paused() {
                return false;
            }
            let Some(pkt) = self.nic_pull(self.nic_of[node] as usize) else { return false };
            self.put_on_wire(p, pkt);
            return true;
        }
        let Some((q, mut pkt)) = self.ports[p].dequeue_data(self.now) else { return false };
        self.dequeued(p, &mut pkt, q);
        self.put_on_wire(p, pkt);
        true
    }

    /// A packet came into being (at a NIC, or a PFC frame at a port).
    pub(super) fn created(&mut self) {
        self.c.packets_created += 1;
        self.live += 1;
        self.live_high_water = self.live_high_water.max(self.live);
    }

    /// A packet left the network (consumed at a host or by a port, or dropped).
    fn gone(&mut self) {
        self.live -= 1;
    }

    /// Switch bookkeeping when a packet leaves egress queue `q` of port `p`: buffer, ECN,
    /// PFC resume. Hosts queue only control packets and keep no buffer accounting.
    fn dequeued(&mut self, p: usize, pkt: &mut Packet, q: usize) {
        let node = self.ports[p].node;
        self.obs.dequeue(self.now, p, q, pkt, self.ports[p].queued_bytes[q]);
        let Some((sw, _)) = self.switches[node].as_mut() else { return };
        let (rate, left) = (self.ports[p].rate, self.ports[p].queued_bytes[q]);
        let (ip, data) = (pkt.in_port as usize, pkt.priority as usize != PRIORITY_CONTROL);
        // Charged to an ingress queue on admission iff it came in by another port (background
        // and trimmed packets name this one) into a lossless queue.
        let pfc_queue = (self.ports[p].is_lossless(q) && ip != p).then_some(q);
        let red = match self.ports[p].ecn {
            PortEcn::ByRate => self.switch_params.red_for(rate),
            PortEcn::Off => None,
            PortEcn::Profile(r) => Some(r),
        };
        let d = sw.depart(&self.switch_params, red, left, &mut self.ports[ip], pfc_queue, data, pkt.size as u64);
        let (tx_bytes, now) = (self.ports[p].tx_bytes, self.now);
        if admission::stamp(pkt, &d, &mut self.int, || IntHop { qlen: left, tx_bytes, ts: now, rate }) {
            self.c.ecn_marks += 1;
            self.ports[p].ecn_marks += 1;
        }
        if d.resume {
            self.events.push(self.now, Self::node_origin(node), Event::TryTx(ip as u32));
        }
    }

    /// Starts serialising `pkt` on port `p`; it reaches the peer after the wire delay unless
    /// the port's loss models drop it.
    pub(super) fn put_on_wire(&mut self, p: usize, pkt: Packet) {
        let now = self.now;
        let port = &mut self.ports[p];
        let ser = port.serialization(pkt.size as u64);
        port.busy_until = now + ser;
        port.tx_bytes += pkt.size as u64;
        port.tx_packets += 1;
        self.c.packet_hops += 1;
        self.obs.wire(now, p, &pkt);
        let lost = pkt.frame == Frame::Transport && port.loss.drops(pkt.loss_kind());
        if lost {
            return self.drop_packet(p, &pkt, DropCause::Loss);
        }
        let arrival = now + ser + port.delay;
        if port.remote {
            return self.cross(p, arrival, pkt);
        }
        // Arrivals off one wire are strictly increasing in time: one key per (time, wire).
        debug_assert!(port.pipe.back().is_none_or(|&(t, _)| t < arrival));
        crate::net::port::push_tight(&mut port.pipe, (arrival, pkt));
        if port.pipe.len() == 1 {
            self.events.push_unique(arrival, self.wire_origins + p as u32, Event::Arrive(p as u32));
        }
    }

    pub(super) fn arrive(&mut self, p: usize) {
        let (t, pkt) = self.ports[p].pipe.pop_front().expect("arrival event with an empty wire");
        debug_assert_eq!(t, self.now);
        if let Some(head) = self.ports[p].pipe.front() {
            // The next packets off this wire are read at their arrivals, one and two packet
            // times from now (a thousand events and more): written a wire delay ago, they
            // have gone cold, and fetched now they wait in cache. With the rings' restarts
            // (below, and `Port::take`): fabric bench 0.917 and hpcc 0.872 of the CPU time
            // (A/B pairs, Intel Xeon host; docs/BENCHMARKS.md).
            crate::net::port::prefetch(head);
            self.events.push_unique(head.0, self.wire_origins + p as u32, Event::Arrive(p as u32));
            if let Some(after) = self.ports[p].pipe.get(1) {
                crate::net::port::prefetch(after);
            }
        } else {
            // Emptied, the wire's ring starts again at its first slot, as an egress queue's
            // does (`Port::take`).
            self.ports[p].pipe.clear();
        }
        let in_port = self.ports[p].peer;
        let node = self.ports[in_port].node;
        match pkt.frame {
            Frame::Pause(q) | Frame::Resume(q) => {
                self.c.packets_consumed += 1;
                self.gone();
                // The PAUSE arrived on the port whose egress queue it stops.
                let port = &mut self.ports[in_port];
                let was_paused = port.paused != 0;
                if matches!(pkt.frame, Frame::Pause(_)) {
                    port.paused |= 1 << q;
                } else {
                    port.paused &= !(1 << q);
                }
                let paused = port.paused != 0;
                if paused != was_paused {
                    self.pause_changed(in_port, paused);
                }
                if matches!(pkt.frame, Frame::Resume(_)) {
                    self.try_transmit(in_port);
                }
            }
            Frame::Background => {
                // It has crossed the one link it loads: the node at the end consumes it.
                self.c.packets_consumed += 1;
                self.c.background_delivered += 1;
                self.gone();
            }
            Frame::Transport if self.is_host[node] => {
                self.obs.receive(self.now, node, &pkt);
                self.host_receive(node, pkt)
            }
            Frame::Transport => self.switch_receive(node, in_port, pkt),
        }
    }

    /// Drops `pkt` at `port`: counted by cause, and against its flow (or as background).
    fn drop_packet(&mut self, port: usize, pkt: &Packet, cause: DropCause) {
        match cause {
            DropCause::Loss => self.c.drops_loss += 1,
            DropCause::Buffer => self.c.drops_buffer += 1,
            DropCause::Unroutable => self.c.drops_unroutable += 1,
        }
        if let Some(l) = self.links.as_mut() {
            // A packet no switch could route counts against the link it arrived over.
            let at = if cause == DropCause::Unroutable { self.ports[port].peer } else { port };
            match pkt.frame {
                Frame::Transport => l.drop_at(at, Some(&pkt.seg)),
                Frame::Background => l.drop_at(at, None),
                Frame::Pause(_) | Frame::Resume(_) => {}
            }
        }
        match pkt.frame {
            Frame::Transport => {
                self.c.drops_by_kind.count(&pkt.seg);
                let conn = &mut self.conns[pkt.flow as usize];
                conn.drops += 1;
                conn.drops_by_kind.count(&pkt.seg);
            }
            Frame::Background => self.c.background_dropped += 1,
            Frame::Pause(_) | Frame::Resume(_) => {} // never dropped: not lost, not buffered
        }
        self.obs.drop(self.now, port, pkt, cause);
        self.int.free(pkt.int);
        self.gone();
    }

    #[inline(always)]
    fn switch_receive(&mut self, node: usize, in_port: usize, mut pkt: Packet) {
        let (_, router) = self.switches[node].as_mut().expect("a switch node");
        // Routing decides where it goes, and whether a first switch sends it on a detour
        // (non-minimal routing: `pkt.via`), weighing this switch's queues.
        let first = self.is_host[self.ports[in_port].peer_node];
        let ports = &self.ports;
        let Some(out) = self.routes.next_port(node, &mut pkt.via, pkt.dst as usize, first, pkt.entropy, router, self.now, &|p| ports[p as usize].held_bytes) else {
            return self.drop_packet(in_port, &pkt, DropCause::Unroutable);
        };
        self.switch_enqueue(node, out, Some(in_port), pkt);
    }

    /// Puts `pkt` into its egress queue at port `out` of switch `node`, or drops it (the shaped
    /// queue's buffer, colour rules, the shared buffer, the dynamic threshold, PFC headroom),
    /// and starts the port. `ingress`: the port it came in by, whose ingress queue it is
    /// charged to for PFC if its egress queue is lossless; None for background traffic, which
    /// is born in the egress queue.
    #[inline(always)]
    fn switch_enqueue(&mut self, node: usize, out: usize, ingress: Option<usize>, mut pkt: Packet) {
        let (sw, _) = self.switches[node].as_mut().expect("a switch node");
        // The egress queue decides (net/admission.rs); here its verdict is carried out.
        // A packet this switch returns to its sender while queueing the arrival (htsim's
        // CompositeQueue can bounce the packet it trims in the arrival's place).
        let mut returned = None;
        let q = match sw.admission(&self.switch_params, &pkt, &self.ports[out], ingress.map(|ip| &self.ports[ip])) {
            Verdict::Drop(_) => return self.drop_packet(out, &pkt, DropCause::Buffer),
            Verdict::Return { queue, header } => return self.return_to_sender(node, out, pkt, queue, header),
            Verdict::Trim { queue, header } => {
                pkt.trim(queue, header);
                pkt.seg.path.set_trimmed_last_hop(self.is_host[self.ports[out].peer_node]);
                self.c.packets_trimmed += 1;
                if let Some(l) = self.links.as_mut() {
                    l.trim_at(out);
                }
                pkt.in_port = out as u32; // charged to no ingress queue
                queue
            }
            Verdict::TrimQueued { queue, header_queue, header } => {
                // The arrival takes the place of the last packet queued, trimmed instead (htsim's
                // CompositeQueue): observers see its header join the header queue, or its drop.
                match sw.trim_last(&self.switch_params, &mut self.ports[out], queue, header_queue, header) {
                    Booted::Queued(mut cut) => {
                        self.c.packets_trimmed += 1;
                        if let Some(l) = self.links.as_mut() {
                            l.trim_at(out);
                        }
                        cut.seg.path.set_trimmed_last_hop(self.is_host[self.ports[out].peer_node]);
                        cut.in_port = out as u32;
                        self.ports[out].enqueue(header_queue, cut);
                        self.obs.enqueue(self.now, out, header_queue, &cut, self.ports[out].queued_bytes[header_queue]);
                    }
                    Booted::Returned(victim) => returned = Some((victim, header_queue, header)),
                    Booted::Dropped(victim) => self.drop_packet(out, &victim, DropCause::Buffer),
                }
                pkt.in_port = ingress.unwrap_or(out) as u32;
                queue
            }
            Verdict::Enqueue { queue, lossless } => {
                // A background packet names its own port: `dequeued` charges it to no
                // ingress queue.
                pkt.in_port = ingress.unwrap_or(out) as u32;
                if let Some(ip) = ingress.filter(|_| lossless) {
                    if sw.charge_ingress(&self.switch_params, &mut self.ports[ip], queue, pkt.size as u64) {
                        self.c.pfc_pauses += 1;
                        self.try_transmit(ip);
                    }
                }
                queue
            }
        };
        self.ports[out].enqueue(q, pkt);
        self.obs.enqueue(self.now, out, q, &pkt, self.ports[out].queued_bytes[q]);
        self.try_transmit(out);
        if let Some((victim, header_queue, header)) = returned {
            self.return_to_sender(node, out, victim, header_queue, header);
        }
    }

    /// Sends `pkt`, which found no room at port `out` of switch `node`, back to its sender:
    /// cut to `header` bytes at queue `queue`'s priority if it is not a header already, turned
    /// around, and routed from here as if it had just arrived by `out`.
    fn return_to_sender(&mut self, node: usize, out: usize, mut pkt: Packet, queue: usize, header: u32) {
        if !pkt.seg.trimmed {
            pkt.trim(queue, header);
            self.c.packets_trimmed += 1;
            if let Some(l) = self.links.as_mut() {
                l.trim_at(out);
            }
        }
        pkt.turn_back();
        self.c.packets_returned += 1;
        self.switch_receive(node, out, pkt);
    }

    /// Background source `i`'s tick: one packet into its egress queue, through the switch's
    /// admission as transit traffic (it may be dropped), and the next tick at its rate now.
    pub(super) fn background_tick(&mut self, i: usize) {
        let (p, queue, size) = (self.background[i].port, self.background[i].spec.queue, self.background[i].spec.size);
        let (node, peer) = (self.ports[p].node, self.ports[p].peer_node);
        let pkt = Packet {
            frame: Frame::Background,
            seg: Segment { ecn: Ecn::NotEct, ..Segment::data(Default::default(), 0, 0, self.now) },
            flow: u32::MAX,
            dir: 0,
            src: node as u32,
            dst: peer as u32,
            size,
            priority: queue,
            in_port: p as u32,
            entropy: 0,
            int: NO_INT,
            via: NO_VIA,
        };
        self.created();
        self.c.background_sent += 1;
        self.switch_enqueue(node, p, None, pkt);
        if let Some(t) = self.background[i].next_tick(self.now) {
            self.events.push(t, Self::node_origin(node), Event::Background(i as u32));
        }
    }
}
