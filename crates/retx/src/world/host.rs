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
use crate::transport::Endpoint;
use crate::transport::common::agent::AgentTransmit;
use crate::transport::common::poll::{Transmit, Want};
use crate::transport::common::segment::Segment;
use crate::transport::common::segment::SegKind;

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
    /// After the NIC polled its agent or queue pairs for the wire: the agent's timer may have
    /// moved, and what the calls left with it is served, in an event of its own (the port is
    /// in the middle of choosing what to send).
    fn after_pull(&mut self, nic: usize) {
        self.rearm_nic(nic);
        if self.nics[nic].agent.has_news() {
            let origin = self.nic_origin(nic);
            self.events.push(self.now, origin, Event::AgentNews(nic as u32));
        }
    }

    /// A packet arrived at a host: into the NIC's receive pipeline, handled now if it is free.
    pub(super) fn host_receive(&mut self, node: usize, pkt: Packet) {
        let nic = self.nic_of[node] as usize;
        let rx = &mut self.nics[nic].rx;
        if rx.must_wait(self.now) {
            rx.waiting.push_back(pkt);
            if rx.should_pause() {
                self.rx_backpressure(nic, true);
            }
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
        if rx.should_resume() {
            self.rx_backpressure(nic, false);
        }
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
        let conn = &mut self.conns[pkt.flow as usize];
        if pkt.dir == 0 && conn.first_arrival.is_none() {
            conn.first_arrival = Some(self.now);
        }
        let end = conn.ends[(pkt.dir ^ 1) as usize];
        // None: the connection has not started here (or the packet is misaddressed).
        let qp = (end.nic as usize == nic).then_some(end.qp as usize);
        let mut on_chip = true;
        if let Some(qp) = qp.filter(|&q| self.nics[nic].qps[q].endpoint.in_qp_cache()) {
            on_chip = self.touch_qp_cache(nic, qp);
            let n = &mut self.nics[nic];
            if n.agent.charged > Time::ZERO {
                n.rx.busy_until = self.now + std::mem::take(&mut n.agent.charged);
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
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        // INT: a data packet's records wait to be echoed by the first response it triggers;
        // a response's records go to the endpoint with the packet (the NIC's parser).
        let echo = if pkt.seg.kind == SegKind::Data { pkt.int } else { NO_INT };
        if pkt.int != NO_INT && echo == NO_INT {
            n.agent.int_in = self.int.get(pkt.int);
            self.c.int_hops_echoed += n.agent.int_in.as_slice().len() as u64;
            self.int.free(pkt.int);
        }
        // Only a hardware tracer wants the snapshot; for other observers this is `false` at
        // compile time and costs nothing.
        let step = self.obs.wants_steps().then(|| StepBefore::of(ep, &pkt.seg, &n.agent));
        ep.handle_packet(now, &pkt.seg, &mut n.agent.call(qp as u32));
        if let Some(before) = step {
            self.obs.endpoint_step(node, pkt.flow, &before, ep, &n.agent);
        }
        n.agent.int_in.clear();
        let cost = n.rx.per_packet + std::mem::take(&mut n.agent.charged);
        if cost > Time::ZERO {
            n.rx.busy_until = self.now + cost;
        }
        // Latency: this packet's answer waits (the occupancy above holds the ones behind it).
        let latency = std::mem::take(&mut n.agent.latency);
        if latency > Time::ZERO {
            self.hold(nic, qp, self.now + latency);
        }
        self.settle(nic, qp, node, before);
        self.after_input(nic, qp, echo);
    }

    /// What queue pair `qp` does after its current input (its responses) waits until `until`.
    fn hold(&mut self, nic: usize, qp: usize, until: Time) {
        let q = &mut self.nics[nic].qps[qp];
        q.held = Some(match q.held {
            Some((t, echo)) => (t.max(until), echo),
            None => (until, NO_INT),
        });
    }

    /// The receive pipeline's input queue reached `[nic] rx_queue` (`pause`) or drained to
    /// half of it: the NIC pauses or resumes its switch port's data classes (queues 1..), as
    /// a switch's PFC does for an ingress queue.
    fn rx_backpressure(&mut self, nic: usize, pause: bool) {
        let p = self.nics[nic].port;
        self.nics[nic].rx.pausing = pause;
        let classes = self.ports[self.ports[p].peer].queue_count();
        let port = &mut self.ports[p];
        for q in 1..classes {
            port.request_pfc(if pause { Frame::Pause(q as u8) } else { Frame::Resume(q as u8) });
        }
        if pause {
            port.pauses_sent += 1;
            self.nics[nic].rx.pauses += 1;
            self.c.pfc_pauses += 1;
        }
        self.try_transmit(p);
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
    /// observed), an end with nothing more to do frees its per-packet state, and a flow it
    /// judged complete leaves the run's count and tells the workload (which may start others).
    fn settle(&mut self, nic: usize, qp: usize, node: usize, before: Progress) {
        let n = &mut self.nics[nic];
        let q = &n.qps[qp];
        let delivered = q.endpoint.delivered_bytes() - before.delivered;
        n.rx_bytes += delivered;
        if delivered > 0 {
            self.obs.deliver(self.now, node, q.conn, delivered);
        }
        let (conn, completed) = (q.conn as usize, !before.completed && q.endpoint.completed_at().is_some());
        let done_now = !before.done && q.endpoint.is_done();
        let received = done_now && q.endpoint.received_all();
        if done_now {
            // Bounded memory: a finished end keeps only what its flow's record reads.
            n.qps[qp].endpoint.release();
        }
        if received {
            self.flow_received(conn);
        }
        if completed {
            self.finite_left -= 1;
            self.flow_finished(conn);
        }
    }

    /// After an endpoint took an input: its responses go to the NIC's priority queue at once;
    /// an endpoint that wants the wire joins the scheduler; its timer is armed; and what the
    /// call left with the NIC agent (queue pairs to wake, packets to send) is served. While
    /// the queue pair is held (its input's handling has latency) all of this waits.
    fn after_input(&mut self, nic: usize, qp: usize, mut echo: u32) {
        if let Some((until, held_echo)) = self.nics[nic].qps[qp].held {
            if until > self.now {
                // The first unechoed records wait with it; later ones have no response left.
                let keep = if held_echo == NO_INT { echo } else { self.int.free(echo); held_echo };
                self.nics[nic].qps[qp].held = Some((until, keep));
                self.rearm(nic, qp);
                return;
            }
            self.nics[nic].qps[qp].held = None;
            if held_echo != NO_INT {
                self.int.free(std::mem::replace(&mut echo, held_echo));
            }
        }
        let port = self.nics[nic].port;
        let now = self.nics[nic].clock.local(self.now);
        // The NIC sends responses first, from its control queue; at switches each takes the
        // priority its endpoint gave it.
        loop {
            let n = &mut self.nics[nic];
            let Transmit::Send(seg) = n.qps[qp].endpoint.poll_transmit(now, &mut n.agent.call(qp as u32), Want::Responses) else { break };
            let response = self.packet(nic, qp, seg, false, std::mem::replace(&mut echo, NO_INT));
            self.created();
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
        if self.nics[nic].agent.has_news() {
            self.drain_agent(nic);
        }
    }

    /// A packet of queue pair `qp` of NIC `nic` as the network carries it: addressed by its
    /// connection, sized and prioritised as its endpoint chose, with the connection's path
    /// entropy (or, `spray`ing, a per-packet one under per-packet entropy).
    fn packet(&self, nic: usize, qp: usize, seg: Segment, spray: bool, int: u32) -> Packet {
        let conn_id = self.nics[nic].qps[qp].conn;
        let conn = &self.conns[conn_id as usize];
        let dir = (conn.ends[1] == super::End { nic: nic as u32, qp: qp as u32 }) as u8;
        let (src, dst) = if dir == 0 { (conn.def.src, conn.def.dst) } else { (conn.def.dst, conn.def.src) };
        let entropy = match self.entropy {
            SourceEntropy::PerPacket if spray => mix64(conn.entropy[dir as usize] ^ seg.psn.value() as u64),
            SourceEntropy::Chosen => mix64(conn.entropy[dir as usize] ^ (seg.path.ev() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            _ => conn.entropy[dir as usize],
        };
        Packet {
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
            int,
            via: crate::net::packet::NO_VIA,
        }
    }

    /// Serves what calls left with NIC `nic`'s agent: its packets go out (ahead of data, as
    /// responses do) and the queue pairs it woke take a `handle_timeout`, each served as after
    /// an input (which may leave more: served in the same drain).
    pub(super) fn drain_agent(&mut self, nic: usize) {
        if self.nics[nic].draining {
            return;
        }
        self.nics[nic].draining = true;
        let port = self.nics[nic].port;
        loop {
            if let Some((qp, seg)) = self.nics[nic].agent.next_sent() {
                let pkt = self.packet(nic, qp as usize, seg, false, NO_INT);
                self.created();
                self.ports[port].enqueue(PRIORITY_CONTROL, pkt);
            } else if let Some(qp) = self.nics[nic].agent.next_woken() {
                self.wake_qp(nic, qp as usize);
            } else {
                break;
            }
        }
        self.nics[nic].draining = false;
        self.try_transmit(port);
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
                    let v = &mut n.qps[victim as usize];
                    v.on_chip = false;
                    v.endpoint.swap_out(&mut n.agent.call(victim));
                    self.c.qp_swaps += 1;
                }
                if !n.qps[qp].endpoint.swap_in(&mut n.agent.call(qp as u32)) {
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
        let held = n.qps[qp].held.map(|(until, _)| until);
        let deadline = n.qps[qp].endpoint.poll_timeout().map(|local| n.clock.global(local));
        let Some(t) = deadline.into_iter().chain(held).min() else { return };
        let t = t.max(self.now);
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
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now, &mut n.agent.call(qp as u32));
        }
        self.occupy_rx(nic);
        let node = self.nic_node(nic);
        self.settle(nic, qp, node, before);
        self.after_input(nic, qp, NO_INT);
    }

    /// Makes sure an event is pending no later than the NIC-wide state's next deadline. While
    /// no scheme keeps a NIC-wide timer `poll_timeout` is None and this costs nothing.
    #[inline]
    fn rearm_nic(&mut self, nic: usize) {
        let Some(local) = self.nics[nic].agent.poll_timeout() else { return };
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
        if n.agent.poll_timeout().is_some_and(|t| t <= now) {
            n.agent.handle_timeout(now);
        }
        self.drain_agent(nic);
        self.rearm_nic(nic);
    }

    /// A queue pair NIC-wide state woke: its endpoint's `handle_timeout` reads what the
    /// timeout left for it (checking its own deadlines against `now` as always).
    fn wake_qp(&mut self, nic: usize, qp: usize) {
        let node = self.nic_node(nic);
        let n = &mut self.nics[nic];
        let now = n.clock.local(self.now);
        let ep = &mut n.qps[qp].endpoint;
        let before = Progress::of(ep);
        ep.handle_timeout(now, &mut n.agent.call(qp as u32));
        self.occupy_rx(nic);
        self.settle(nic, qp, node, before);
        self.after_input(nic, qp, NO_INT);
    }

    /// Receive-pipeline time a scheme charged outside a packet's handling (a timer's work, a
    /// woken queue pair recording a gathered batch): the pipeline is busy that much longer,
    /// and packets arriving meanwhile wait.
    #[inline]
    fn occupy_rx(&mut self, nic: usize) {
        let n = &mut self.nics[nic];
        let (rx, charged) = (&mut n.rx, std::mem::take(&mut n.agent.charged));
        if charged > Time::ZERO {
            rx.busy_until = rx.busy_until.max(self.now) + charged;
            if !rx.waiting.is_empty() {
                self.rx_wake(nic);
            }
        }
    }

    /// The NIC's scheduler offers the wire to its queue pairs in turn; the packet of the first
    /// that sends, or none (then the NIC wakes when the first held-back one may send).
    pub(super) fn nic_pull(&mut self, nic: usize) -> Option<Packet> {
        let real_now = self.now;
        let n = &mut self.nics[nic];
        let now = n.clock.local(real_now);
        // The agent's paced packets (a pull or credit pacer) come first.
        let agent_wait = match n.agent.poll_transmit(now) {
            AgentTransmit::Send { qp, seg } => {
                let pkt = self.packet(nic, qp as usize, seg, false, NO_INT);
                self.created();
                self.after_pull(nic);
                return Some(pkt);
            }
            AgentTransmit::WaitUntil(t) => Some(t),
            AgentTransmit::Idle => None,
        };
        let qps = &mut n.qps;
        let agent = &mut n.agent;
        let picked = n.scheduler.pull(|q| {
            let qp = &mut qps[q as usize];
            match qp.endpoint.poll_transmit(now, &mut agent.call(q), Want::Any) {
                Transmit::Send(seg) => Offer::Send(seg),
                Transmit::WaitUntil(t) => Offer::WaitUntil(t),
                Transmit::Idle => {
                    qp.active = false;
                    Offer::Idle
                }
            }
        });
        self.after_pull(nic);
        match picked {
            Ok((qp, seg)) => {
                let int = if self.int_enabled && seg.kind == SegKind::Data { self.int.alloc() } else { NO_INT };
                let pkt = self.packet(nic, qp as usize, seg, true, int);
                self.created();
                self.rearm(nic, qp as usize);
                Some(pkt)
            }
            Err(earliest) => {
                let earliest = earliest.into_iter().chain(agent_wait).min();
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
    use crate::transport::Endpoint;
    use crate::transport::common::segment::{SegKind, Segment};

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
            let (fired, created) = (sim.nics[nic].agent.probe.fired.len(), sim.c.packets_created);
            let timer = matches!(ev, Event::NicTimer(n) if n as usize == nic);
            sim.handle(ev);
            if timer {
                seen.push(Popped { at: t, fired: sim.nics[nic].agent.probe.fired.len() > fired, created: sim.c.packets_created - created });
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
        sim.nics[nic].agent.probe.at = Some(Time(2_000_055_000));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(2)));
        sim.nics[nic].agent.probe.at = Some(Time(1_000_029_999));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(1)));

        // What a flush would leave: an ACK due at the responder, which nobody polls until the
        // timeout wakes its queue pair.
        let Endpoint::Responder(r) = &mut sim.nics[nic].qps[qp].endpoint else { panic!("responder") };
        r.ctx.send(Segment::control(SegKind::Ack, r.ctx.wire(r.ctx.expected()), Time::ZERO));
        sim.nics[nic].agent.probe.wake = vec![qp as u32];

        // Fires at true 1 ms with the host reading 1 000 030 000, once, and the woken
        // responder's ACK is created in that event.
        let created = sim.c.packets_created;
        assert_eq!(run_until(&mut sim, Time::from_us(1_500), nic), vec![Popped { at: Time::from_ms(1), fired: true, created: 1 }]);
        assert_eq!(sim.nics[nic].agent.probe.fired, vec![Time(1_000_030_000)]);
        assert_eq!(sim.c.packets_created, created + 1);

        // Armed again for true 3 ms, then moved later to local 4 000 105 000 (true 4 ms
        // exactly): lazily, the pending 3 ms event finds nothing due and re-arms for 4 ms. The
        // event left for 2 ms is stale: ignored, it arms nothing more.
        sim.nics[nic].agent.probe.wake.clear();
        sim.nics[nic].agent.probe.at = Some(Time(3_000_080_000));
        sim.rearm_nic(nic);
        sim.nics[nic].agent.probe.at = Some(Time(4_000_105_000));
        sim.rearm_nic(nic);
        assert_eq!(sim.nics[nic].timer_at, Some(Time::from_ms(3)));
        assert_eq!(run_until(&mut sim, Time::from_ms(10), nic), vec![
            Popped { at: Time::from_ms(2), fired: false, created: 0 },
            Popped { at: Time::from_ms(3), fired: false, created: 0 },
            Popped { at: Time::from_ms(4), fired: true, created: 0 },
        ]);
        assert_eq!(sim.nics[nic].agent.probe.fired, vec![Time(1_000_030_000), Time(4_000_105_000)]);
        assert!(sim.nics[nic].timer_at.is_none());
    }

    /// Deliveries (true time) at the receiving host, for the latency test.
    #[derive(Clone, Default)]
    struct Deliveries(std::rc::Rc<std::cell::RefCell<Vec<Time>>>);

    impl crate::observe::Observer for Deliveries {
        fn deliver(&mut self, now: Time, _host: usize, _flow: u32, _bytes: u64) {
            self.0.borrow_mut().push(now);
        }
    }

    /// One 4-packet flow of the test-only pull scheme whose receiver takes `latency` to handle
    /// each data packet: when each packet was delivered, and when the flow finished.
    fn pull_flow(latency: Time) -> (Vec<Time>, Time) {
        let text = r#"
name = "latency"
duration = "1ms"
[topology]
kind = "single-switch"
hosts = 2
host_link = "10Gbps"
link_delay = "1us"
[nic]
mtu = 1000
[transport]
recovery = "pull"
cc = "none"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "4KB" }]
"#;
        let seen = Deliveries::default();
        let mut sim = crate::config::build_with_observer(Scenario::from_toml(text).unwrap(), seen.clone()).unwrap();
        let params = crate::transport::proactive::pull::PullParams { rx_latency: latency, ..Default::default() };
        sim.template.recovery = crate::transport::RecoveryParams::Pull(params);
        let out = sim.run(&mut |_, _| true).unwrap();
        let delivered = seen.0.borrow().clone();
        (delivered, out.flows[0].finish.expect("finished"))
    }

    /// h0 -> h1 through one switch with PFC on, 100 Gbps, one 4 MB flow of `recovery` whose
    /// receiving NIC takes 2 packet times per packet, behind an input queue of `rx_queue`
    /// packets: (h1's NIC after the run, the run's output).
    fn slow_receiver(recovery: &str, rx_queue: u32) -> (crate::nic::RxPipeline, crate::RunOutput) {
        let text = format!(r#"
name = "slow-receiver"
duration = "2ms"
[topology]
kind = "single-switch"
hosts = 2
host_link = "100Gbps"
link_delay = "100ns"
[switch]
pfc = {{ enabled = true }}
[nic]
mtu = 1000
rx_latency = "{}ps"
rx_queue = {rx_queue}
[transport]
recovery = "{recovery}"
cc = "none"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "4MB" }}]
"#, 2 * crate::sim::units::Rate::gbps(100).serialization(1048).0);
        let mut sim = crate::config::build(Scenario::from_toml(&text).unwrap()).unwrap();
        // The run's own loop, by hand up to the flow's end, so the NIC can be read after.
        while sim.finite_left > 0 {
            let Some((t, ev)) = sim.events.pop_until(sim.end) else { break };
            sim.now = t;
            sim.handle(ev);
        }
        let nic = sim.conns[0].dst_nic as usize; // h1's
        let rx = std::mem::take(&mut sim.nics[nic].rx);
        (rx, sim.run(&mut |_, _| true).unwrap())
    }

    #[test]
    fn a_full_receive_queue_pauses_the_link_so_a_slow_nic_slows_the_sender_losing_nothing() {
        let (rx, out) = slow_receiver("gbn", 16);
        let f = &out.flows[0];
        assert!(f.finish.is_some() && f.delivered_bytes == f.size_bytes);
        assert_eq!((out.counters.drops_buffer, out.counters.bad_deliveries), (0, 0));
        // Bounded: the queue holds at most its 16 packets plus what was on the wire when the
        // PAUSE left (100 ns each way at 100 Gbps: a few packets).
        assert!(rx.pauses > 10 && rx.peak >= 16 && rx.peak <= 16 + 4, "peak {} pauses {}", rx.peak, rx.pauses);
        // Counted with the switch's own (it pauses h0 in turn as its buffer fills).
        assert!(out.counters.pfc_pauses >= rx.pauses);
        assert!(!rx.pausing && rx.waiting.is_empty());
        // The NIC handles a packet per 2 packet times, so the flow takes about twice as long as
        // the line would: 4 MB at 100 Gbps is 335 us of wire (1,048 B per 1,000 B payload).
        let took = (f.finish.unwrap() - f.start).0 as f64 / 1e6;
        assert!((640.0..720.0).contains(&took), "{took} us");
        // Unbounded (the default), the same NIC lets its queue grow: nothing pauses the link.
        let (free, out) = slow_receiver("gbn", 0);
        assert!(free.peak > 1_000 && free.pauses == 0 && out.counters.pfc_pauses == 0, "peak {}", free.peak);
    }

    #[test]
    fn a_receive_queue_needs_a_data_class_of_its_own() {
        let text = "name = \"q\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\nhosts = 2\n[switch]\nqueues = 1\n[nic]\nrx_queue = 8\n[workload]\nkind = \"long-flows\"\npairs = [[\"h0\", \"h1\"]]\n";
        let e = crate::config::build(Scenario::from_toml(text).unwrap()).map(drop).unwrap_err();
        assert!(e.to_string().contains("nic.rx_queue"), "{e}");
    }

    #[test]
    fn latency_delays_a_packets_own_response_and_not_the_packets_behind_it() {
        let (at0, finish0) = pull_flow(Time::ZERO);
        let latency = Time::from_us(3);
        let (at3, finish3) = pull_flow(latency);
        assert_eq!(at0.len(), 4);
        // Latency is not occupancy: every packet is handled (and delivered) when it would be.
        assert_eq!(at3, at0);
        // Its responses wait: the queue pair is held until 3 us after its last packet, so the
        // four ACKs leave together and the last (which completes the flow: it fits the initial
        // window, no grant) crosses the host link behind the other three.
        let ack = crate::sim::units::Rate::gbps(10).serialization(crate::transport::CONTROL_BYTES as u64);
        assert_eq!(finish3, finish0 + latency + Time(3 * ack.0));
    }
}
