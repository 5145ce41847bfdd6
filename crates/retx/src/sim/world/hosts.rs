//! The host side of the event loop: what a NIC does with arriving packets, its on-chip QP
//! cache, and its queue-pair scheduler.

use super::{Simulation, Event};
use crate::net::packet::{Frame, Packet, CLASS_CONTROL, CLASS_DATA};
use crate::sim::units::Time;
use crate::transport::segment::SegKind;
use crate::transport::sender::Transmit;
use crate::transport::{CONTROL_BYTES, DATA_HEADER_BYTES};

impl Simulation {
    pub(super) fn host_receive(&mut self, node: usize, id: u32) {
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        self.c.packets_consumed += 1;
        let f = pkt.flow as usize;
        let now = self.now;
        if pkt.seg.kind == SegKind::Data {
            self.nics[node].rx_wire_bytes += pkt.size as u64;
            if self.flows[f].receiver.is_none() || !self.touch_qp_cache(node, f) {
                return;
            }
            let Some(rx) = self.flows[f].receiver.as_mut() else { return };
            let before = rx.ctx.delivered_bytes;
            rx.handle_segment(now, &pkt.seg, &mut self.nics[node].shared);
            self.nics[node].rx_bytes += rx.ctx.delivered_bytes - before;
            let port = self.nics[node].port;
            let hash = self.flows[f].hash_rev;
            while let Some(seg) = self.flows[f].receiver.as_mut().and_then(|r| r.poll_transmit()) {
                let cid = self.pool.alloc(Packet {
                    frame: Frame::Transport,
                    seg,
                    flow: f as u32,
                    src: node as u32,
                    dst: pkt.src,
                    size: CONTROL_BYTES,
                    class: CLASS_CONTROL as u8,
                    in_port: 0,
                    hash,
                });
                self.c.packets_created += 1;
                self.ports[port].queues[CLASS_CONTROL].push_back(cid);
            }
            self.try_transmit(port);
        } else {
            let Some(tx) = self.flows[f].sender.as_mut() else { return };
            let was_done = tx.is_done();
            tx.handle_segment(now, &pkt.seg, &mut self.nics[node].shared);
            if !was_done && tx.is_done() {
                self.finite_left -= 1;
            }
            self.activate(f);
        }
    }

    /// Brings flow `f`'s receiver into its NIC's on-chip QP cache (MELO §3.2.5), evicting the
    /// least recently used connection if the cache is full. False if its bitmap cannot get
    /// blocks back from the pool: the packet is dropped.
    pub(super) fn touch_qp_cache(&mut self, node: usize, f: usize) -> bool {
        let cap = self.s.recovery.melo.qp_cache as usize;
        if cap == 0 || self.s.transport.recovery != crate::config::RecoveryKind::Melo {
            return true;
        }
        let nic = &mut self.nics[node];
        if self.flows[f].on_chip {
            if let Some(i) = nic.qp_cache.iter().position(|&x| x as usize == f) {
                nic.qp_cache.remove(i);
            }
            nic.qp_cache.push_back(f as u32);
            return true;
        }
        if nic.qp_cache.len() >= cap {
            let victim = nic.qp_cache.pop_front().expect("a full cache") as usize;
            self.flows[victim].on_chip = false;
            if let Some(rx) = self.flows[victim].receiver.as_mut() {
                rx.swap_out(&mut nic.shared);
            }
            self.c.qp_swaps += 1;
        }
        let Some(rx) = self.flows[f].receiver.as_mut() else { return false };
        if !rx.swap_in(&mut nic.shared) {
            return false;
        }
        self.flows[f].on_chip = true;
        nic.qp_cache.push_back(f as u32);
        true
    }

    /// The NIC's QP scheduler: round-robin over active queue pairs that the rate limiter
    /// lets send now; if none can, wake up when the first one can.
    pub(super) fn nic_pull(&mut self, node: usize) -> Option<u32> {
        let now = self.now;
        let mut earliest: Option<Time> = None;
        let mut checked = 0;
        while checked < self.nics[node].active.len() {
            let nic = &mut self.nics[node];
            if nic.rr >= nic.active.len() {
                nic.rr = 0;
            }
            let f = nic.active[nic.rr] as usize;
            let flow = &mut self.flows[f];
            let shared = &mut nic.shared;
            match flow.sender.as_mut().map_or(Transmit::Idle, |s| s.poll_transmit(now, shared)) {
                Transmit::Send(seg) => {
                    nic.rr += 1;
                    let pkt = Packet {
                        frame: Frame::Transport,
                        seg,
                        flow: f as u32,
                        src: flow.def.src as u32,
                        dst: flow.def.dst as u32,
                        size: seg.payload + DATA_HEADER_BYTES,
                        class: CLASS_DATA as u8,
                        in_port: 0,
                        hash: flow.hash_fwd,
                    };
                    self.c.packets_created += 1;
                    self.rearm(f);
                    return Some(self.pool.alloc(pkt));
                }
                Transmit::WaitUntil(t) => {
                    earliest = Some(earliest.map_or(t, |e| e.min(t)));
                    nic.rr += 1;
                    checked += 1;
                }
                Transmit::Idle => {
                    flow.active = false;
                    nic.active.swap_remove(nic.rr);
                }
            }
        }
        if let Some(t) = earliest {
            let nic = &mut self.nics[node];
            if nic.wake_at.is_none_or(|w| t < w || w < now) {
                nic.wake_at = Some(t);
                self.events.push(t, Event::HostWake(node as u32));
            }
        }
        None
    }
}
