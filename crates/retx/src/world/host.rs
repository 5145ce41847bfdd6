//! The host side of the event loop: what a NIC does with an arriving packet (hands it to the
//! endpoint it is addressed to, through the on-chip QP cache), its queue-pair scheduler, and
//! the connections' timers.

use super::{Event, Simulation};
use crate::net::packet::{Frame, Packet, CLASS_CONTROL, CLASS_DATA};
use crate::nic::qp_cache::Touch;
use crate::nic::scheduler::Offer;
use crate::observe::Observer;
use crate::sim::rng::mix64;
use crate::transport::segment::SegKind;
use crate::transport::sender::Transmit;
use crate::transport::{CONTROL_BYTES, DATA_HEADER_BYTES};
use super::SourceEntropy;

impl<O: Observer> Simulation<O> {
    pub(super) fn host_receive(&mut self, node: usize, id: u32) {
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        self.c.packets_consumed += 1;
        let f = pkt.flow as usize;
        let nic = self.nic_of[node] as usize;
        let now = self.nics[nic].clock.local(self.now);
        if pkt.seg.kind == SegKind::Data {
            self.nics[nic].rx_wire_bytes += pkt.size as u64;
            if self.conns[f].receiver.is_none() || !self.touch_qp_cache(nic, f) {
                return;
            }
            let Some(rx) = self.conns[f].receiver.as_mut() else { return };
            let before = rx.ctx.delivered_bytes;
            rx.handle_segment(now, &pkt.seg, &mut self.nics[nic].state);
            let delivered = rx.ctx.delivered_bytes - before;
            self.nics[nic].rx_bytes += delivered;
            if delivered > 0 {
                self.obs.deliver(self.now, node, pkt.flow, delivered);
            }
            let port = self.nics[nic].port;
            let entropy = self.conns[f].entropy_rev;
            while let Some(seg) = self.conns[f].receiver.as_mut().and_then(|r| r.poll_transmit()) {
                let cid = self.pool.alloc(Packet {
                    frame: Frame::Transport,
                    seg,
                    flow: f as u32,
                    src: node as u32,
                    dst: pkt.src,
                    size: CONTROL_BYTES,
                    class: CLASS_CONTROL as u8,
                    in_port: 0,
                    entropy,
                });
                self.c.packets_created += 1;
                self.ports[port].enqueue(CLASS_CONTROL, cid, CONTROL_BYTES);
            }
            self.try_transmit(port);
        } else {
            let Some(tx) = self.conns[f].sender.as_mut() else { return };
            let was_done = tx.is_done();
            tx.handle_segment(now, &pkt.seg, &mut self.nics[nic].state);
            if !was_done && tx.is_done() {
                self.finite_left -= 1;
            }
            self.activate(f);
        }
    }

    /// Brings flow `f`'s receiver into its NIC's on-chip QP cache, swapping out the least
    /// recently used connection if the cache is full. False if the scheme cannot bring its
    /// state back on chip (MELO: no free blocks): the packet is dropped.
    fn touch_qp_cache(&mut self, nic: usize, f: usize) -> bool {
        if !self.nics[nic].qp_cache.is_enabled() {
            return true;
        }
        let n = &mut self.nics[nic];
        match n.qp_cache.touch(f as u32, self.conns[f].on_chip) {
            Touch::Hit => true,
            Touch::Miss { evict } => {
                if let Some(victim) = evict {
                    let victim = victim as usize;
                    self.conns[victim].on_chip = false;
                    if let Some(rx) = self.conns[victim].receiver.as_mut() {
                        rx.swap_out(&mut n.state);
                    }
                    self.c.qp_swaps += 1;
                }
                let Some(rx) = self.conns[f].receiver.as_mut() else { return false };
                if !rx.swap_in(&mut n.state) {
                    return false;
                }
                self.conns[f].on_chip = true;
                n.qp_cache.insert(f as u32);
                true
            }
        }
    }

    /// Puts a flow on its NIC's scheduler and lets the NIC send.
    pub(super) fn activate(&mut self, f: usize) {
        let nic = self.conns[f].src_nic as usize;
        if !self.conns[f].active {
            self.conns[f].active = true;
            self.nics[nic].scheduler.push(f as u32);
        }
        self.rearm(f);
        let port = self.nics[nic].port;
        self.try_transmit(port);
    }

    /// Makes sure an event is pending no later than the sender's next deadline.
    fn rearm(&mut self, f: usize) {
        let Some(local) = self.conns[f].sender.as_ref().and_then(|s| s.poll_timeout()) else { return };
        let t = self.nics[self.conns[f].src_nic as usize].clock.global(local).max(self.now);
        if self.conns[f].timer_armed.is_none_or(|a| t < a) {
            self.conns[f].timer_armed = Some(t);
            self.events.push(t, Event::FlowTimer(f as u32));
        }
    }

    pub(super) fn flow_timer(&mut self, f: usize) {
        if self.conns[f].timer_armed != Some(self.now) {
            return; // superseded
        }
        self.conns[f].timer_armed = None;
        let nic = &mut self.nics[self.conns[f].src_nic as usize];
        let now = nic.clock.local(self.now);
        if let Some(s) = self.conns[f].sender.as_mut() {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.handle_timeout(now, &mut nic.state);
            }
        }
        self.activate(f);
    }

    /// The NIC's scheduler offers the transmitter to its queue pairs in turn; the packet of the
    /// first that sends, or none (then the NIC wakes when the first held-back one may send).
    pub(super) fn nic_pull(&mut self, nic: usize) -> Option<u32> {
        let real_now = self.now;
        let n = &mut self.nics[nic];
        let now = n.clock.local(real_now);
        let conns = &mut self.conns;
        let state = &mut n.state;
        let picked = n.scheduler.pull(|c| {
            let conn = &mut conns[c as usize];
            match conn.sender.as_mut().map_or(Transmit::Idle, |s| s.poll_transmit(now, state)) {
                Transmit::Send(seg) => Offer::Send(seg),
                Transmit::WaitUntil(t) => Offer::WaitUntil(t),
                Transmit::Idle => {
                    conn.active = false;
                    Offer::Idle
                }
            }
        });
        match picked {
            Ok((f, seg)) => {
                let f = f as usize;
                let flow = &self.conns[f];
                let entropy = match self.entropy {
                    SourceEntropy::PerFlow => flow.entropy_fwd,
                    SourceEntropy::PerPacket => mix64(flow.entropy_fwd ^ seg.psn.value() as u64),
                };
                let pkt = Packet {
                    frame: Frame::Transport,
                    seg,
                    flow: f as u32,
                    src: flow.def.src as u32,
                    dst: flow.def.dst as u32,
                    size: seg.payload + DATA_HEADER_BYTES,
                    class: CLASS_DATA as u8,
                    in_port: 0,
                    entropy,
                };
                self.c.packets_created += 1;
                self.rearm(f);
                Some(self.pool.alloc(pkt))
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
