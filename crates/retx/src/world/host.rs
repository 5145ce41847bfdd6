//! The host side of the event loop: a NIC hands an arriving packet to the endpoint it is
//! addressed to (connection and direction, through the on-chip QP cache for responders),
//! collects the endpoint's responses into its priority queue, serves its queue pairs with its
//! scheduler, and runs their timers and the NIC-wide timer of its scheme state.

use super::{Event, Simulation, SourceEntropy};
use crate::net::int::NO_INT;
use crate::net::packet::{Frame, Packet, PRIORITY_CONTROL};
use crate::nic::qp_cache::Touch;
use crate::nic::scheduler::Offer;
use crate::observe::{Observer, StepBefore};
use crate::sim::rng::mix64;
use crate::sim::units::Time;
use crate::transport::endpoint::Endpoint;
use crate::transport::poll::{Transmit, Want};
use crate::transport::segment::SegKind;

/// Where an endpoint stood before an input, for what the input changed ([`Simulation::settle`]).
#[derive(Clone, Copy)]
struct Progress {
    delivered: u64,
    completed: bool,
    done: bool,
}

impl Progress {
    fn of(ep: &Endpoint) -> Progress {
        Progress { delivered: ep.delivered_bytes(), completed: ep.completed_at().is_some(), done: ep.is_done() }
    }
}

impl<O: Observer> Simulation<O> {
    /// A packet arrived at a host: into the NIC's receive pipeline, handled now if it is free.
    pub(super) fn host_receive(&mut self, node: usize, pkt: Packet) {
        let nic = self.nic_of[node] as usize;
        let rx = &mut self.nics[nic].rx;
        if rx.must_wait(self.now) {
            rx.waiting.push_back(pkt);
            self.rx_wake(nic);
            return;
        }
        self.nic_handle(node, pkt);
    }

    /// The receive pipeline is free: the next waiting packet is handled.
    pub(super) fn nic_rx(&mut self, nic: usize) {
        let host = self.nic_node(nic);
        let origin = Self::node_origin(host);
        let rx = &mut self.nics[nic].rx;
        rx.wake_pending = false;
        if self.now < rx.busy_until {
            rx.wake_pending = true;
            self.events.push(rx.busy_until, origin, Event::NicRx(nic as u32));
            return;
        }
        let Some(pkt) = rx.waiting.pop_front() else { return };
        self.nic_handle(host, pkt);
        if !self.nics[nic].rx.waiting.is_empty() {
            self.rx_wake(nic);
        }
    }

    /// The NIC handles one packet: it is given to the endpoint it is addressed to, and the
    /// pipeline is busy for the NIC's per-packet time plus what the scheme charged. A
    /// responder's context comes through the on-chip QP cache first; if the scheme charged
    /// time for that swap, the packet goes back to the head of the line and is handled when
    /// the swap is done (the packets behind it wait too).
    fn nic_handle(&mut self, node: usize, pkt: Packet) {
        let nic = self.nic_of[node] as usize;
        let end = self.conns[pkt.flow as usize].ends[(pkt.dir ^ 1) as usize];
        // None: the connection has not started here (or the packet is misaddressed).
        let qp = (end.nic as usize == nic).then_some(end.qp as usize);
        let mut on_chip = true;
        if let Some(qp) = qp.filter(|&q| self.nics[nic].qps[q].endpoint.in_qp_cache()) {
            on_chip = self.touch_qp_cache(nic, qp);
            let n = &mut self.nics[nic];
            if n.state.charged > Time::ZERO {
                n.rx.busy_until = self.now + std::mem::take(&mut n.state.charged);
                if on_chip {
                    self.rearm_nic(nic);
                    self.nics[nic].rx.waiting.push_front(pkt);
                    self.rx_wake(nic);
                    return;
                }
            }
        }
        self.c.packets_consumed += 1;
        self.live -= 1;
        if pkt.seg.kind == SegKind::Data {
            self.nics[nic].rx_wire_bytes += pkt.size as u64;
        }
        let Some(qp) = qp else { return };
        if !on_chip {
            self.rearm_nic(nic);
            return; // the scheme could not bring the context on chip: dropped
        }
        let n = &mut self.nics[nic];
        let now = n.clock.local(self.now);
        n.state.qp = qp as u32;
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        // INT: a data packet's records wait to be echoed by the first response it triggers;
        // a response's records go to the endpoint with the packet (the NIC's parser).
        let echo = if pkt.seg.kind == SegKind::Data { pkt.int } else { NO_INT };
        if pkt.int != NO_INT && echo == NO_INT {
            n.state.int_in = self.int.get(pkt.int);
            self.c.int_hops_echoed += n.state.int_in.as_slice().len() as u64;
            self.int.free(pkt.int);
        }
        // Only a hardware tracer wants the snapshot; for other observers this is `false` at
        // compile time and costs nothing.
        let step = self.obs.wants_steps().then(|| StepBefore::of(ep, &pkt.seg, &n.state));
        ep.handle_packet(now, &pkt.seg, &mut n.state);
        if let Some(before) = step {
            self.obs.endpoint_step(node, pkt.flow, &before, ep, &n.state);
        }
        n.state.int_in.clear();
        let cost = n.rx.per_packet + std::mem::take(&mut n.state.charged);
        if cost > Time::ZERO {
            n.rx.busy_until = self.now + cost;
        }
        self.settle(nic, qp, node, before);
        self.after_input(nic, qp, echo);
    }

    /// A "pipeline free" event for the waiting packets, unless one is pending.
    fn rx_wake(&mut self, nic: usize) {
        let origin = self.nic_origin(nic);
        let rx = &mut self.nics[nic].rx;
        if !rx.wake_pending {
            rx.wake_pending = true;
            self.events.push(rx.busy_until.max(self.now), origin, Event::NicRx(nic as u32));
        }
    }

    /// After an endpoint took an input: the bytes it delivered in order count (and are
    /// observed), a flow it judged complete leaves the run's count, and an end with nothing
    /// more to do frees its per-packet state.
    fn settle(&mut self, nic: usize, qp: usize, node: usize, before: Progress) {
        let n = &mut self.nics[nic];
        let q = &n.qps[qp];
        let delivered = q.endpoint.delivered_bytes() - before.delivered;
        n.rx_bytes += delivered;
        if delivered > 0 {
            self.obs.deliver(self.now, node, q.conn, delivered);
        }
        if !before.completed && q.endpoint.completed_at().is_some() {
            self.finite_left -= 1;
        }
        if !before.done && q.endpoint.is_done() {
            // Bounded memory: a finished end keeps only what its flow's record reads.
            n.qps[qp].endpoint.release();
        }
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
        n.state.qp = qp as u32;
        // The NIC sends responses first, from its control queue; at switches each takes the
        // priority its endpoint gave it.
        while let Transmit::Send(seg) = n.qps[qp].endpoint.poll_transmit(now, &mut n.state, Want::Responses) {
            let response = Packet {
                frame: Frame::Transport,
                seg,
                flow: conn as u32,
                dir,
                src: src as u32,
                dst: dst as u32,
                size: seg.wire_bytes,
                priority: seg.priority,
                in_port: 0,
                entropy,
                int: std::mem::replace(&mut echo, NO_INT),
            };
            self.c.packets_created += 1;
            self.live += 1;
            self.live_high_water = self.live_high_water.max(self.live);
            self.ports[port].enqueue(PRIORITY_CONTROL, response);
        }
        self.int.free(echo); // nothing echoed it
        self.rearm_nic(nic);
        if self.nics[nic].qps[qp].endpoint.wants_wire() {
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
                    n.state.qp = victim;
                    let victim = &mut n.qps[victim as usize];
                    victim.on_chip = false;
                    victim.endpoint.swap_out(&mut n.state);
                    self.c.qp_swaps += 1;
                }
                n.state.qp = qp as u32;
                if !n.qps[qp].endpoint.swap_in(&mut n.state) {
                    return false;
                }
                n.qps[qp].on_chip = true;
                n.qp_cache.insert(qp as u32);
                true
            }
        }
    }

    /// A new end starts, before any input: one that may send joins the scheduler, and its
    /// timer is armed.
    pub(super) fn start_end(&mut self, nic: usize, qp: usize) {
        if self.nics[nic].qps[qp].endpoint.wants_wire() {
            self.activate(nic, qp);
        } else {
            self.rearm(nic, qp);
        }
    }

    /// Puts a queue pair on its NIC's scheduler and lets the NIC send.
    pub(super) fn activate(&mut self, nic: usize, qp: usize) {
        let n = &mut self.nics[nic];
        if !n.qps[qp].active {
            n.qps[qp].active = true;
            n.scheduler.push(qp as u32, n.qps[qp].band);
        }
        self.rearm(nic, qp);
        let port = self.nics[nic].port;
        self.try_transmit(port);
    }

    /// Makes sure an event is pending no later than the endpoint's next deadline.
    fn rearm(&mut self, nic: usize, qp: usize) {
        let origin = self.nic_origin(nic);
        let n = &mut self.nics[nic];
        let Some(local) = n.qps[qp].endpoint.poll_timeout() else { return };
        let t = n.clock.global(local).max(self.now);
        let q = &mut n.qps[qp];
        if q.timer_armed.is_none_or(|a| t < a) {
            q.timer_armed = Some(t);
            self.events.push(t, origin, Event::QpTimer(nic as u32, qp as u32));
        }
    }

    pub(super) fn qp_timer(&mut self, nic: usize, qp: usize) {
        let n = &mut self.nics[nic];
        if n.qps[qp].timer_armed != Some(self.now) {
            return; // superseded
        }
        n.qps[qp].timer_armed = None;
        let now = n.clock.local(self.now);
        n.state.qp = qp as u32;
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now, &mut n.state);
        }
        let node = self.nic_node(nic);
        self.settle(nic, qp, node, before);
        self.after_input(nic, qp, NO_INT);
    }

    /// Makes sure an event is pending no later than the NIC-wide state's next deadline. While
    /// no scheme keeps a NIC-wide timer `poll_timeout` is None and this costs nothing.
    #[inline]
    fn rearm_nic(&mut self, nic: usize) {
        let Some(local) = self.nics[nic].state.poll_timeout() else { return };
        let origin = self.nic_origin(nic);
        let n = &mut self.nics[nic];
        let t = n.clock.global(local).max(self.now);
        if n.timer_at.is_none_or(|a| t < a) {
            n.timer_at = Some(t);
            self.events.push(t, origin, Event::NicTimer(nic as u32));
        }
    }

    /// The NIC-wide timer: the scheme state handles its deadline, then every queue pair it
    /// woke takes a `handle_timeout` and is served as after any input.
    pub(super) fn nic_timer(&mut self, nic: usize) {
        let n = &mut self.nics[nic];
        if n.timer_at != Some(self.now) {
            return; // superseded by an earlier deadline, or already handled
        }
        n.timer_at = None;
        let now = n.clock.local(self.now);
        let mut woken = std::mem::take(&mut self.woken);
        if n.state.poll_timeout().is_some_and(|t| t <= now) {
            n.state.handle_timeout(now, &mut woken);
        }
        for &qp in &woken {
            self.wake_qp(nic, qp as usize);
        }
        woken.clear();
        self.woken = woken;
        self.rearm_nic(nic);
    }

    /// A queue pair NIC-wide state woke: its endpoint's `handle_timeout` reads what the
    /// timeout left for it (checking its own deadlines against `now` as always).
    fn wake_qp(&mut self, nic: usize, qp: usize) {
        let node = self.nic_node(nic);
        let n = &mut self.nics[nic];
        let now = n.clock.local(self.now);
        n.state.qp = qp as u32;
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        ep.handle_timeout(now, &mut n.state);
        self.settle(nic, qp, node, before);
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
            state.qp = q;
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
        self.rearm_nic(nic);
        match picked {
            Ok((qp, seg)) => {
                let conn_id = self.nics[nic].qps[qp as usize].conn;
                let conn = &self.conns[conn_id as usize];
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
                    size: seg.wire_bytes,
                    priority: seg.priority,
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
                    let origin = self.nic_origin(nic);
                    let n = &mut self.nics[nic];
                    let t = n.clock.global(local);
                    if n.wake_at.is_none_or(|w| t < w || w < real_now) {
                        n.wake_at = Some(t);
                        self.events.push(t, origin, Event::HostWake(nic as u32));
                    }
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Event, Simulation};
    use crate::config::{build, Scenario};
    use crate::sim::units::Time;
    use crate::transport::endpoint::Endpoint;
    use crate::transport::segment::{SegKind, Segment};

    /// Two hosts whose clocks read 5 ns ahead and run 25 ppm fast (local(t) = t + 5 000 +
    /// floor(t / 40 000) ps); one 1 KB flow, finished within microseconds.
    fn sim() -> Simulation {
        let text = r#"
name = "nic-timer"
duration = "10ms"
stop_when_done = false
[topology]
kind = "single-switch"
hosts = 2
[nic]
clock_offset = "5ns"
clock_drift_ppm = 25.0
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "1KB" }]
"#;
        build(Scenario::from_toml(text).unwrap()).unwrap()
    }

    /// One NIC-timer event of NIC `nic`: when it was popped (true time), whether the probe
    /// fired, and how many packets that event created.
    #[derive(Debug, PartialEq)]
    struct Popped {
        at: Time,
        fired: bool,
        created: u64,
    }

    /// Runs every event up to `until` (true time) and reports NIC `nic`'s timer events.
    fn run_until(sim: &mut Simulation, until: Time, nic: usize) -> Vec<Popped> {
        let mut seen = Vec::new();
        while sim.events.peek_time().is_some_and(|t| t <= until) {
            let (t, ev) = sim.events.pop().unwrap();
            sim.now = t;
            let (fired, created) = (sim.nics[nic].state.probe.fired.len(), sim.c.packets_created);
            let timer = matches!(ev, Event::NicTimer(n) if n as usize == nic);
            sim.handle(ev);
            if timer {
                seen.push(Popped { at: t, fired: sim.nics[nic].state.probe.fired.len() > fired, created: sim.c.packets_created - created });
            }
        }
        seen
    }

    #[test]
    fn a_nic_timer_fires_once_at_its_host_time_and_moves_only_earlier() {
        let mut sim = sim();
        let nic = sim.conns[0].dst_nic as usize; // h1's
        // Unarmed: the flow runs and finishes without a single NIC-timer event.
        assert_eq!(run_until(&mut sim, Time::from_us(500), nic), vec![]);
        assert!(sim.nics[nic].timer_at.is_none() && sim.conns[0].ends[1].nic as usize == nic);
        let qp = sim.conns[0].ends[1].qp as usize; // the responder

        // Armed for local 2 000 055 000 ps (true 2 ms), then moved earlier to local
        // 1 000 029 999: the clock skips that reading (999 999 999 reads 1 000 029 998, 1 ms
        // reads 1 000 030 000), so the earliest true time it is due is exactly 1 ms.
        sim.nics[nic].state.probe.at = Some(Time(2_000_055_000));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(2)));
        sim.nics[nic].state.probe.at = Some(Time(1_000_029_999));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(1)));

        // What a flush would leave: an ACK due at the responder, which nobody polls until the
        // timeout wakes its queue pair.
        let Endpoint::Responder(r) = &mut sim.nics[nic].qps[qp].endpoint else { panic!("responder") };
        r.ctx.send(Segment::control(SegKind::Ack, r.ctx.wire(r.ctx.expected()), Time::ZERO));
        sim.nics[nic].state.probe.wake = vec![qp as u32];

        // Fires at true 1 ms with the host reading 1 000 030 000, once, and the woken
        // responder's ACK is created in that event.
        let created = sim.c.packets_created;
        assert_eq!(run_until(&mut sim, Time::from_us(1_500), nic), vec![Popped { at: Time::from_ms(1), fired: true, created: 1 }]);
        assert_eq!(sim.nics[nic].state.probe.fired, vec![Time(1_000_030_000)]);
        assert_eq!(sim.c.packets_created, created + 1);

        // Armed again for true 3 ms, then moved later to local 4 000 105 000 (true 4 ms
        // exactly): lazily, the pending 3 ms event finds nothing due and re-arms for 4 ms. The
        // event left for 2 ms is stale: ignored, it arms nothing more.
        sim.nics[nic].state.probe.wake.clear();
        sim.nics[nic].state.probe.at = Some(Time(3_000_080_000));
        sim.rearm_nic(nic);
        sim.nics[nic].state.probe.at = Some(Time(4_000_105_000));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(3)));
        assert_eq!(run_until(&mut sim, Time::from_ms(10), nic), vec![
            Popped { at: Time::from_ms(2), fired: false, created: 0 },
            Popped { at: Time::from_ms(3), fired: false, created: 0 },
            Popped { at: Time::from_ms(4), fired: true, created: 0 },
        ]);
        assert_eq!(sim.nics[nic].state.probe.fired, vec![Time(1_000_030_000), Time(4_000_105_000)]);
        assert!(sim.nics[nic].timer_at.is_none());
    }
}
