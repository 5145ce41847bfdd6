//! The network side of the event loop: ports put packets on wires (with loss), wires deliver
//! them, switches buffer, mark and forward them, and PFC frames pause and resume ports.

use super::{Event, Simulation, PFC_FRAME_BYTES};
use crate::net::packet::{Frame, Packet, CLASS_CONTROL, CLASS_DATA};
use crate::transport::segment::{SegKind, Segment};

impl Simulation {
    /// Sends the next packet on port `p` if its transmitter is free; if it is busy, makes
    /// sure it is woken when it frees up.
    pub(super) fn try_transmit(&mut self, p: usize) {
        if self.now < self.ports[p].busy_until {
            self.wake_when_free(p);
            return;
        }
        if self.transmit_next(p) && self.has_backlog(p) {
            self.wake_when_free(p);
        }
    }

    /// A "transmitter free" event, unless one is pending. Only ports with something waiting
    /// get one, so an idle port costs no event per packet.
    fn wake_when_free(&mut self, p: usize) {
        let port = &mut self.ports[p];
        if !port.wake_pending {
            port.wake_pending = true;
            self.events.push(port.busy_until, Event::TxDone(p as u32));
        }
    }

    /// Whether port `p` has more to send once its transmitter is free.
    fn has_backlog(&self, p: usize) -> bool {
        let port = &self.ports[p];
        let data_waiting = if self.is_host[port.node] { !self.nics[port.node].active.is_empty() } else { !port.queues[CLASS_DATA].is_empty() };
        port.pfc_pending.is_some() || !port.queues[CLASS_CONTROL].is_empty() || (data_waiting && !port.paused)
    }

    /// Puts the next packet on the free port `p`: a PFC frame, then control, then data (unless
    /// paused). Returns whether it sent anything.
    fn transmit_next(&mut self, p: usize) -> bool {
        let node = self.ports[p].node;
        if let Some(frame) = self.ports[p].pfc_pending.take() {
            let id = self.pool.alloc(Packet {
                frame,
                seg: Segment::control(SegKind::Ack, Default::default(), self.now),
                flow: u32::MAX,
                src: node as u32,
                dst: self.ports[p].peer_node as u32,
                size: PFC_FRAME_BYTES,
                class: CLASS_CONTROL as u8,
                in_port: p as u32,
                hash: 0,
            });
            self.c.packets_created += 1;
            self.put_on_wire(p, id);
            return true;
        }
        if let Some(id) = self.ports[p].queues[CLASS_CONTROL].pop_front() {
            self.dequeued(p, id, CLASS_CONTROL);
            self.put_on_wire(p, id);
            return true;
        }
        if self.ports[p].paused {
            return false;
        }
        let next = if self.is_host[node] { self.nic_pull(node) } else { self.ports[p].queues[CLASS_DATA].pop_front() };
        let Some(id) = next else { return false };
        if !self.is_host[node] {
            self.dequeued(p, id, CLASS_DATA);
        }
        self.put_on_wire(p, id);
        true
    }

    /// Switch bookkeeping when a packet leaves an egress queue: buffer, ECN, PFC resume.
    pub(super) fn dequeued(&mut self, p: usize, id: u32, class: usize) {
        let node = self.ports[p].node;
        if self.is_host[node] {
            return;
        }
        let pkt = *self.pool.get(id);
        let size = pkt.size as u64;
        self.buffer_used[node] -= size;
        self.ports[p].queued_bytes[class] -= size;
        if class != CLASS_DATA {
            return;
        }
        // RED/ECN on the egress queue after this packet left (HPCC ns-3 `ShouldSendCN` at
        // dequeue).
        let ecn = &self.s.switch.ecn;
        if ecn.enabled {
            let profile = crate::net::ecn::RedProfile { kmin: ecn.kmin.0, kmax: ecn.kmax.0, pmax: ecn.pmax };
            if profile.should_mark(self.ports[p].queued_bytes[CLASS_DATA], &mut self.ecn_rng[node]) {
                self.pool.get_mut(id).seg.ecn = true;
                self.c.ecn_marks += 1;
            }
        }
        if self.s.switch.pfc.enabled {
            let ip = pkt.in_port as usize;
            let ing = &mut self.ports[ip];
            ing.ingress_bytes -= size;
            if ing.pause_sent && ing.ingress_bytes <= self.s.switch.pfc.xon.0 {
                ing.pause_sent = false;
                ing.request_pfc(Frame::Resume);
                self.events.push(self.now, Event::TryTx(ip as u32));
            }
        }
    }

    /// Starts serialising packet `id` on port `p`; it reaches the peer after the wire delay
    /// unless the port's loss model drops it.
    pub(super) fn put_on_wire(&mut self, p: usize, id: u32) {
        let now = self.now;
        let port = &mut self.ports[p];
        let pkt = self.pool.get(id);
        let ser = port.rate.serialization(pkt.size as u64);
        port.busy_until = now + ser;
        port.tx_bytes += pkt.size as u64;
        port.tx_packets += 1;
        self.c.packet_hops += 1;
        let threshold = match pkt.frame {
            Frame::Transport if pkt.class == CLASS_DATA as u8 => port.loss_data,
            Frame::Transport => port.loss_control,
            _ => 0,
        };
        if port.loss_rng.chance(threshold) {
            self.c.drops_loss += 1;
            self.pool.free(id);
            return;
        }
        let arrival = now + ser + port.delay;
        port.pipe.push_back((arrival, id));
        if port.pipe.len() == 1 {
            self.events.push(arrival, Event::Arrive(p as u32));
        }
    }

    pub(super) fn arrive(&mut self, p: usize) {
        let (t, id) = self.ports[p].pipe.pop_front().expect("arrival event with an empty wire");
        debug_assert_eq!(t, self.now);
        if let Some(&(next, _)) = self.ports[p].pipe.front() {
            self.events.push(next, Event::Arrive(p as u32));
        }
        let in_port = self.ports[p].peer;
        let node = self.ports[in_port].node;
        match self.pool.get(id).frame {
            Frame::Pause | Frame::Resume => {
                let pause = self.pool.get(id).frame == Frame::Pause;
                self.pool.free(id);
                self.c.packets_consumed += 1;
                // The PAUSE arrived on the port whose egress it stops.
                self.ports[in_port].paused = pause;
                if !pause {
                    self.try_transmit(in_port);
                }
            }
            Frame::Transport if self.is_host[node] => self.host_receive(node, id),
            Frame::Transport => self.switch_receive(node, in_port, id),
        }
    }

    pub(super) fn drop_packet(&mut self, id: u32) {
        self.pool.free(id);
    }

    pub(super) fn switch_receive(&mut self, node: usize, in_port: usize, id: u32) {
        let pkt = *self.pool.get(id);
        let Some(out) = self.routes.next_port(node, pkt.dst as usize, pkt.hash, self.salt[node]) else {
            self.c.drops_unroutable += 1;
            return self.drop_packet(id);
        };
        let size = pkt.size as u64;
        let class = pkt.class as usize;
        let sw = &self.s.switch;
        let used = self.buffer_used[node];
        let full = used + size > sw.buffer.0;
        // Without PFC the data class also obeys the egress dynamic threshold.
        let over_threshold = class == CLASS_DATA
            && !sw.pfc.enabled
            && (self.ports[out].queued_bytes[CLASS_DATA] + size) as f64 > sw.dt_alpha * (sw.buffer.0 - used) as f64;
        if full || over_threshold {
            self.c.drops_buffer += 1;
            return self.drop_packet(id);
        }
        self.buffer_used[node] += size;
        self.ports[out].queued_bytes[class] += size;
        self.pool.get_mut(id).in_port = in_port as u32;
        if class == CLASS_DATA && sw.pfc.enabled {
            let xoff = sw.pfc.xoff.0;
            let ing = &mut self.ports[in_port];
            ing.ingress_bytes += size;
            if !ing.pause_sent && ing.ingress_bytes >= xoff {
                ing.pause_sent = true;
                ing.pauses_sent += 1;
                ing.request_pfc(Frame::Pause);
                self.c.pfc_pauses += 1;
                self.try_transmit(in_port);
            }
        }
        self.ports[out].queues[class].push_back(id);
        self.try_transmit(out);
    }
}
