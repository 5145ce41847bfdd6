//! The host side of the event loop: a NIC hands an arriving packet to the endpoint it is
//! addressed to (connection and direction, through the on-chip QP cache for responders),
//! collects the endpoint's responses into its priority queue, serves its queue pairs with its
//! scheduler, and runs their timers.

use super::{Event, Simulation, SourceEntropy};
use crate::net::int::NO_INT;
use crate::net::packet::{Frame, Packet, CLASS_CONTROL};
use crate::nic::qp_cache::Touch;
use crate::nic::scheduler::Offer;
use crate::observe::Observer;
use crate::sim::rng::mix64;
use crate::transport::endpoint::Want;
use crate::transport::segment::SegKind;
use crate::transport::sender::Transmit;
use crate::transport::{CONTROL_BYTES, DATA_HEADER_BYTES};

impl<O: Observer> Simulation<O> {
    /// A packet arrived at a host: into the NIC's receive pipeline, handled now if it is free.
    pub(super) fn host_receive(&mut self, node: usize, pkt: Packet) {
        let nic = self.nic_of[node] as usize;
        let rx = &mut self.nics[nic].rx;
        if rx.must_wait(self.now) {
            rx.waiting.push_back(pkt);
            if !rx.wake_pending {
                rx.wake_pending = true;
                self.events.push(rx.busy_until.max(self.now), Event::NicRx(nic as u32));
            }
            return;
        }
        self.nic_handle(node, pkt);
    }

    /// The receive pipeline is free: the next waiting packet is handled.
    pub(super) fn nic_rx(&mut self, nic: usize) {
        let rx = &mut self.nics[nic].rx;
        rx.wake_pending = false;
        if self.now < rx.busy_until {
            rx.wake_pending = true;
            self.events.push(rx.busy_until, Event::NicRx(nic as u32));
            return;
        }
        let Some(pkt) = rx.waiting.pop_front() else { return };
        let host = self.ports[self.nics[nic].port].node;
        self.nic_handle(host, pkt);
        let rx = &mut self.nics[nic].rx;
        if !rx.waiting.is_empty() && !rx.wake_pending {
            rx.wake_pending = true;
            self.events.push(rx.busy_until.max(self.now), Event::NicRx(nic as u32));
        }
    }

    /// The NIC handles one packet: it is given to the endpoint it is addressed to, and the
    /// pipeline is busy for the NIC's per-packet time plus what the scheme charged.
    fn nic_handle(&mut self, node: usize, pkt: Packet) {
        self.c.packets_consumed += 1;
        self.live -= 1;
        let nic = self.nic_of[node] as usize;
        if pkt.seg.kind == SegKind::Data {
            self.nics[nic].rx_wire_bytes += pkt.size as u64;
        }
        let end = self.conns[pkt.flow as usize].ends[(pkt.dir ^ 1) as usize];
        if end.nic as usize != nic {
            return; // the connection has not started here (or the packet is misaddressed)
        }
        let qp = end.qp as usize;
        if !self.nics[nic].qps[qp].endpoint.sends_data() && !self.touch_qp_cache(nic, qp) {
            return;
        }
        let n = &mut self.nics[nic];
        let now = n.clock.local(self.now);
        let ep = &mut n.qps[qp].endpoint;
        let (before, was_done) = (ep.delivered_bytes(), ep.is_done());
        // INT: a data packet's records wait to be echoed by the first response it triggers;
        // a response's records go to the endpoint with the packet (the NIC's parser).
        let echo = if pkt.seg.kind == SegKind::Data { pkt.int } else { NO_INT };
        if pkt.int != NO_INT && echo == NO_INT {
            n.state.int_in = self.int.get(pkt.int);
            self.c.int_hops_echoed += n.state.int_in.as_slice().len() as u64;
            self.int.free(pkt.int);
        }
        ep.handle_packet(now, &pkt.seg, &mut n.state);
        n.state.int_in.clear();
        let cost = n.rx.per_packet + std::mem::take(&mut n.state.charged);
        if cost > crate::sim::units::Time::ZERO {
            n.rx.busy_until = self.now + cost;
        }
        let delivered = ep.delivered_bytes() - before;
        n.rx_bytes += delivered;
        if delivered > 0 {
            self.obs.deliver(self.now, node, pkt.flow, delivered);
        }
        if ep.sends_data() && !was_done && ep.is_done() {
            self.finite_left -= 1;
        }
        self.after_input(nic, qp, echo);
    }

    /// After an endpoint took an input: its responses go to the NIC's priority queue at once;
    /// an endpoint that sends data joins the scheduler and has its timer armed.
    fn after_input(&mut self, nic: usize, qp: usize, mut echo: u32) {
        let port = self.nics[nic].port;
        let n = &mut self.nics[nic];
        let now = n.clock.local(self.now);
        let conn = n.qps[qp].conn as usize;
        let dir = (self.conns[conn].ends[1] == super::End { nic: nic as u32, qp: qp as u32 }) as u8;
        let (src, dst) = if dir == 0 { (self.conns[conn].def.src, self.conns[conn].def.dst) } else { (self.conns[conn].def.dst, self.conns[conn].def.src) };
        let entropy = self.conns[conn].entropy[dir as usize];
        while let Transmit::Send(seg) = n.qps[qp].endpoint.poll_transmit(now, &mut n.state, Want::Responses) {
            let response = Packet {
                frame: Frame::Transport,
                seg,
                flow: conn as u32,
                dir,
                src: src as u32,
                dst: dst as u32,
                size: CONTROL_BYTES,
                class: CLASS_CONTROL as u8,
                in_port: 0,
                entropy,
                int: std::mem::replace(&mut echo, NO_INT),
            };
            self.c.packets_created += 1;
            self.live += 1;
            self.live_high_water = self.live_high_water.max(self.live);
            self.ports[port].enqueue(CLASS_CONTROL, response);
        }
        self.int.free(echo); // nothing echoed it
        if self.nics[nic].qps[qp].endpoint.sends_data() {
            self.activate(nic, qp);
        } else {
            self.rearm(nic, qp);
            self.try_transmit(port);
        }
    }

    /// Brings a responder's context into its NIC's on-chip QP cache, swapping out the least
    /// recently used one if the cache is full. False if the scheme cannot bring its state back
    /// on chip (MELO: no free blocks): the packet is dropped.
    fn touch_qp_cache(&mut self, nic: usize, qp: usize) -> bool {
        let n = &mut self.nics[nic];
        if !n.qp_cache.is_enabled() {
            return true;
        }
        match n.qp_cache.touch(qp as u32, n.qps[qp].on_chip) {
            Touch::Hit => true,
            Touch::Miss { evict } => {
                if let Some(victim) = evict {
                    let victim = &mut n.qps[victim as usize];
                    victim.on_chip = false;
                    victim.endpoint.swap_out(&mut n.state);
                    self.c.qp_swaps += 1;
                }
                if !n.qps[qp].endpoint.swap_in(&mut n.state) {
                    return false;
                }
                n.qps[qp].on_chip = true;
                n.qp_cache.insert(qp as u32);
                true
            }
        }
    }

    /// Puts a queue pair on its NIC's scheduler and lets the NIC send.
    pub(super) fn activate(&mut self, nic: usize, qp: usize) {
        let n = &mut self.nics[nic];
        if !n.qps[qp].active {
            n.qps[qp].active = true;
            n.scheduler.push(qp as u32, n.qps[qp].class);
        }
        self.rearm(nic, qp);
        let port = self.nics[nic].port;
        self.try_transmit(port);
    }

    /// Makes sure an event is pending no later than the endpoint's next deadline.
    fn rearm(&mut self, nic: usize, qp: usize) {
        let n = &mut self.nics[nic];
        let Some(local) = n.qps[qp].endpoint.poll_timeout() else { return };
        let t = n.clock.global(local).max(self.now);
        let q = &mut n.qps[qp];
        if q.timer_armed.is_none_or(|a| t < a) {
            q.timer_armed = Some(t);
            self.events.push(t, Event::QpTimer(nic as u32, qp as u32));
        }
    }

    pub(super) fn qp_timer(&mut self, nic: usize, qp: usize) {
        let n = &mut self.nics[nic];
        if n.qps[qp].timer_armed != Some(self.now) {
            return; // superseded
        }
        n.qps[qp].timer_armed = None;
        let now = n.clock.local(self.now);
        let ep = &mut n.qps[qp].endpoint;
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now, &mut n.state);
        }
        self.after_input(nic, qp, NO_INT);
    }

    /// The NIC's scheduler offers the wire to its queue pairs in turn; the packet of the first
    /// that sends, or none (then the NIC wakes when the first held-back one may send).
    pub(super) fn nic_pull(&mut self, nic: usize) -> Option<Packet> {
        let real_now = self.now;
        let n = &mut self.nics[nic];
        let now = n.clock.local(real_now);
        let qps = &mut n.qps;
        let state = &mut n.state;
        let picked = n.scheduler.pull(|q| {
            let qp = &mut qps[q as usize];
            match qp.endpoint.poll_transmit(now, state, Want::Any) {
                Transmit::Send(seg) => Offer::Send(seg),
                Transmit::WaitUntil(t) => Offer::WaitUntil(t),
                Transmit::Idle => {
                    qp.active = false;
                    Offer::Idle
                }
            }
        });
        match picked {
            Ok((qp, mut seg)) => {
                let conn_id = self.nics[nic].qps[qp as usize].conn;
                let conn = &self.conns[conn_id as usize];
                let data = seg.kind == SegKind::Data;
                if data {
                    seg.colour = conn.def.colour;
                }
                let dir = (conn.ends[1] == super::End { nic: nic as u32, qp }) as u8;
                let (src, dst) = if dir == 0 { (conn.def.src, conn.def.dst) } else { (conn.def.dst, conn.def.src) };
                let entropy = match self.entropy {
                    SourceEntropy::PerFlow => conn.entropy[dir as usize],
                    SourceEntropy::PerPacket => mix64(conn.entropy[dir as usize] ^ seg.psn.value() as u64),
                };
                let pkt = Packet {
                    frame: Frame::Transport,
                    seg,
                    flow: conn_id,
                    dir,
                    src: src as u32,
                    dst: dst as u32,
                    size: seg.payload + DATA_HEADER_BYTES,
                    class: if data { conn.def.class } else { CLASS_CONTROL as u8 },
                    in_port: 0,
                    entropy,
                    int: if self.int_enabled && seg.kind == SegKind::Data { self.int.alloc() } else { NO_INT },
                };
                self.created();
                self.rearm(nic, qp as usize);
                Some(pkt)
            }
            Err(earliest) => {
                if let Some(local) = earliest {
                    let n = &mut self.nics[nic];
                    let t = n.clock.global(local);
                    if n.wake_at.is_none_or(|w| t < w || w < real_now) {
                        n.wake_at = Some(t);
                        self.events.push(t, Event::HostWake(nic as u32));
                    }
                }
                None
            }
        }
    }
}
