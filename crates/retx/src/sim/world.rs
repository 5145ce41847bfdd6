//! A simulation: the network, the hosts' NICs and the flows, driven by one event queue.
//!
//! Everything lives in flat vectors indexed by small integers (node, port, flow, packet), so
//! the event loop allocates nothing per packet once queues reach their working size.

use super::queue::EventQueue;
use super::rng::{self, Rng, Stream};
use super::units::{Rate, Time};
use crate::config::validate::{loss_target, LossTarget};
use crate::config::{Scenario, ScenarioError};
use crate::net::packet::{Frame, Packet, PacketPool, CLASS_CONTROL, CLASS_DATA};
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::{NodeKind, Topology};
use crate::stats::{Counters, FlowRecord, Sample};
use crate::transport::receiver::Receiver;
use crate::transport::segment::{SegKind, Segment};
use crate::transport::sender::{Sender, Transmit};
use crate::transport::{self, FlowSpec, NicShared, CONTROL_BYTES, DATA_HEADER_BYTES};
use crate::workload::{self, FlowDef};

const PFC_FRAME_BYTES: u32 = 64;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A port finished serialising a packet and may send the next.
    TxDone(u32),
    /// The head of a port's wire reaches the peer.
    Arrive(u32),
    /// A port should try to send (deferred to avoid deep recursion).
    TryTx(u32),
    /// A host NIC's rate limiter may let a queue pair send.
    HostWake(u32),
    /// A flow's sender timer.
    FlowTimer(u32),
    FlowStart(u32),
    Sample,
}

/// Per-host NIC state: the queue pairs with something to send, served round-robin, and the
/// state they share.
struct Nic {
    port: usize,
    active: Vec<u32>,
    rr: usize,
    wake_at: Option<Time>,
    /// In-order payload bytes delivered to applications, and data bytes arriving off the wire
    /// (duplicates and discarded packets included).
    rx_bytes: u64,
    rx_wire_bytes: u64,
    shared: NicShared,
    /// Receiving connections whose MELO state is on chip, least recently used first.
    qp_cache: std::collections::VecDeque<u32>,
}

struct Flow {
    def: FlowDef,
    spec: FlowSpec,
    hash_fwd: u64,
    hash_rev: u64,
    sender: Option<Sender>,
    receiver: Option<Receiver>,
    active: bool,
    timer_armed: Option<Time>,
    ideal_fct: Time,
    /// The receiver's state is in its NIC's on-chip QP cache.
    on_chip: bool,
}

/// Everything one run produces.
pub struct RunOutput {
    pub flows: Vec<FlowRecord>,
    pub samples: Vec<Sample>,
    pub counters: Counters,
    pub end: Time,
    pub host_names: Vec<String>,
    /// Packets still in queues or on wires at the end.
    pub packets_in_flight: u64,
    pub pool_high_water: u64,
    /// MELO bits pools: the highest share of a receive / send pool ever in use at one host,
    /// and blocks still allocated anywhere at the end (0 once every flow has finished).
    pub melo_rx_peak: f64,
    pub melo_tx_peak: f64,
    pub melo_blocks_in_use: u64,
    /// On-chip memory of the scenario's loss recovery, for a NIC sized to the host link and the
    /// longest base RTT, with one connection per flow.
    pub onchip: crate::hw::memory::Footprint,
}

pub struct Simulation {
    s: Scenario,
    topo: Topology,
    now: Time,
    events: EventQueue<Event>,
    pool: PacketPool,
    ports: Vec<Port>,
    is_host: Vec<bool>,
    routes: Routes,
    buffer_used: Vec<u64>,
    ecn_rng: Vec<Rng>,
    salt: Vec<u64>,
    nics: Vec<Nic>,
    flows: Vec<Flow>,
    finite_left: usize,
    endless: usize,
    /// Receiving hosts and their counters at the last sample: (node, rx_bytes, rx_wire_bytes).
    sampled: Vec<(usize, u64, u64)>,
    samples: Vec<Sample>,
    c: Counters,
    bdp_packets: u32,
}

impl Simulation {
    /// Builds a simulation from a scenario (validating it first).
    pub fn new(mut s: Scenario) -> Result<Simulation, ScenarioError> {
        let topo = crate::config::validate(&mut s)?;
        let n = topo.nodes.len();
        let is_host: Vec<bool> = topo.nodes.iter().map(|x| x.kind == NodeKind::Host).collect();
        let mut ports: Vec<Port> = Vec::with_capacity(topo.links.len() * 2);
        let mut node_ports = vec![Vec::new(); n];
        for l in &topo.links {
            let (pa, pb) = (ports.len(), ports.len() + 1);
            for (node, id) in [(l.a, pa), (l.b, pb)] {
                ports.push(Port::new(node, l.rate, l.delay, rng::stream(s.seed, Stream::LinkLoss, id as u64)));
                node_ports[node].push(id);
            }
            ports[pa].peer = pb;
            ports[pa].peer_node = l.b;
            ports[pb].peer = pa;
            ports[pb].peer_node = l.a;
        }
        for (i, rule) in s.loss.iter().enumerate() {
            let target = loss_target(&topo, &rule.at, &format!("loss[{i}].at"))?;
            for p in ports.iter_mut() {
                let applies = match target {
                    LossTarget::Everywhere => true,
                    LossTarget::Switch(sw) => p.node == sw,
                    LossTarget::Link(a, b) => p.node == a && p.peer_node == b,
                };
                if applies {
                    // Independent rules combine: P(lost) = 1 - prod(1 - p_i).
                    let combine = |t: u64| {
                        let old = t as f64 / 18_446_744_073_709_551_616.0;
                        rng::threshold(1.0 - (1.0 - old) * (1.0 - rule.rate))
                    };
                    p.loss_data = combine(p.loss_data);
                    if rule.control {
                        p.loss_control = combine(p.loss_control);
                    }
                }
            }
        }
        let peer_node: Vec<usize> = ports.iter().map(|p| p.peer_node).collect();
        let routes = Routes::build(&node_ports, &peer_node, &is_host);
        let mut nics: Vec<Nic> = (0..n)
            .map(|_| Nic {
                port: 0,
                active: Vec::new(),
                rr: 0,
                wake_at: None,
                rx_bytes: 0,
                rx_wire_bytes: 0,
                shared: NicShared::new(&s),
                qp_cache: std::collections::VecDeque::new(),
            })
            .collect();
        for (node, nic) in nics.iter_mut().enumerate() {
            if is_host[node] {
                nic.port = node_ports[node][0];
            }
        }
        let ecn_rng = (0..n).map(|i| rng::stream(s.seed, Stream::SwitchEcn, i as u64)).collect();
        let salt = (0..n).map(|i| rng::stream(s.seed, Stream::EcmpSalt, i as u64).next_u64()).collect();

        let mut sim = Simulation {
            topo,
            now: Time::ZERO,
            events: EventQueue::new(),
            pool: PacketPool::default(),
            ports,
            is_host,
            routes,
            buffer_used: vec![0; n],
            ecn_rng,
            salt,
            nics,
            flows: Vec::new(),
            finite_left: 0,
            endless: 0,
            sampled: Vec::new(),
            samples: Vec::new(),
            c: Counters::default(),
            bdp_packets: 1,
            s,
        };
        sim.bdp_packets = sim.compute_bdp_packets();
        sim.add_flows();
        sim.events.push(sim.s.output.sample_interval.0, Event::Sample);
        Ok(sim)
    }

    /// One BDP of the longest host-to-host path, in packets: the default bitmap of IRN and
    /// Go-Back-ONE. The round trip is a full data packet out and an ACK back, store and
    /// forward at every hop; one packet more covers the one on the sender's wire when the
    /// ACK arrives.
    fn compute_bdp_packets(&self) -> u32 {
        let hosts: Vec<usize> = self.topo.hosts().collect();
        let pkt = (self.s.nic.mtu + DATA_HEADER_BYTES) as u64;
        let rtt_of = |h: usize| {
            let (prop, rates) = self.route(hosts[0], h);
            let ser: Time = rates.iter().map(|r| r.serialization(pkt) + r.serialization(CONTROL_BYTES as u64)).fold(Time::ZERO, |a, b| a + b);
            (prop + prop + ser, rates.into_iter().min().expect("a path has a hop"))
        };
        let (rtt, rate) = hosts[1..].iter().map(|&h| rtt_of(h)).max_by_key(|p| p.0).expect("at least 2 hosts");
        let bytes = rate.0 as u128 * rtt.0 as u128 / 8 / 1_000_000_000_000;
        (bytes.div_ceil(pkt as u128) as u32 + 1).max(1)
    }

    /// (base RTT, hops, bottleneck rate) from host `a` to host `b`, the HPCC ns-3 way: twice
    /// the propagation delay plus one MTU payload's serialization at every hop.
    fn path(&self, a: usize, b: usize) -> (Time, u32, Rate) {
        let (prop, rates) = self.route(a, b);
        let ser = rates.iter().map(|r| r.serialization(self.s.nic.mtu as u64)).fold(Time::ZERO, |x, y| x + y);
        let rate = rates.iter().copied().min().expect("a path has a hop");
        (prop + prop + ser, rates.len() as u32, rate)
    }

    /// One-way propagation delay and the rate of every hop from host `a` to host `b` (the
    /// path of ECMP hash 0; every equal-cost path looks alike in the built-in topologies).
    fn route(&self, a: usize, b: usize) -> (Time, Vec<Rate>) {
        let (mut prop, mut rates) = (Time::ZERO, Vec::new());
        let mut port = self.nics[a].port;
        loop {
            let p = &self.ports[port];
            prop += p.delay;
            rates.push(p.rate);
            if p.peer_node == b {
                return (prop, rates);
            }
            port = self.routes.next_port(p.peer_node, b, 0, 0).expect("validated topology is connected");
        }
    }

    /// FCT on an empty network: the first packet crosses every hop store-and-forward, the rest
    /// follow at the bottleneck rate, the last ACK comes back (its serialization ignored). This
    /// is HPCC ns-3's `standalone_fct` (base RTT + all bytes / bottleneck) with the first
    /// packet's real size in place of a full MTU, so a flow smaller than an MTU is not given
    /// an ideal it could never be slower than.
    fn ideal_fct(&self, a: usize, b: usize, spec: &FlowSpec) -> Time {
        let (prop, rates) = self.route(a, b);
        let header = DATA_HEADER_BYTES as u64;
        let total = spec.size + spec.npkts() * header;
        let first = spec.payload(0) as u64 + header;
        let store_and_forward = rates.iter().map(|r| r.serialization(first)).fold(Time::ZERO, |x, y| x + y);
        let bottleneck = rates.iter().copied().min().expect("a path has a hop");
        prop + prop + store_and_forward + bottleneck.serialization(total - first)
    }

    fn add_flows(&mut self) {
        let defs = workload::flows(&self.s.workload, &self.topo, self.s.seed, &self.s.base_dir).expect("validated workload");
        let mut psn_rng = rng::stream(self.s.seed, Stream::InitialPsn, 0);
        let mut receivers = std::collections::BTreeSet::new();
        for (i, def) in defs.into_iter().enumerate() {
            let spec = FlowSpec {
                size: def.size,
                mtu: self.s.nic.mtu,
                initial_psn: (psn_rng.next_u64() & transport::psn::PSN_MASK as u64) as u32,
                key: rng::mix64(self.s.seed ^ (i as u64) << 20),
            };
            let ideal_fct = if def.size == FlowSpec::ENDLESS { Time::ZERO } else { self.ideal_fct(def.src, def.dst, &spec) };
            // RoCEv2 5-tuple: addresses, UDP source port (per QP), destination port 4791.
            let sport = 10_000 + i as u64;
            let tuple = |s: usize, d: usize, sp: u64, dp: u64| rng::mix64((s as u64) << 40 ^ (d as u64) << 16 ^ sp << 48 ^ dp);
            self.flows.push(Flow {
                def,
                spec,
                hash_fwd: tuple(def.src, def.dst, sport, 4791),
                hash_rev: tuple(def.dst, def.src, 4791, sport),
                sender: None,
                receiver: None,
                active: false,
                timer_armed: None,
                ideal_fct,
                on_chip: false,
            });
            if def.size == FlowSpec::ENDLESS { self.endless += 1 } else { self.finite_left += 1 }
            receivers.insert(def.dst);
            self.events.push(def.start, Event::FlowStart(i as u32));
        }
        self.sampled = receivers.into_iter().map(|h| (h, 0, 0)).collect();
    }

    pub fn bdp_packets(&self) -> u32 {
        self.bdp_packets
    }

    /// Runs to the end. `progress(now, duration)` is called about every 0.2 s of wall time;
    /// returning false aborts the run.
    pub fn run(mut self, progress: &mut dyn FnMut(Time, Time) -> bool) -> Result<RunOutput, Aborted> {
        let end = self.s.duration.0;
        let wall = std::time::Instant::now();
        let mut last_report = wall;
        let mut stopped_at = end;
        while let Some(t) = self.events.peek_time() {
            if t > end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.c.events += 1;
            self.handle(ev);
            if self.s.stop_when_done && self.endless == 0 && self.finite_left == 0 {
                stopped_at = self.now;
                break;
            }
            if self.c.events & 0xFFFF == 0 && last_report.elapsed().as_millis() >= 200 {
                last_report = std::time::Instant::now();
                if !progress(self.now, end) {
                    return Err(Aborted);
                }
            }
        }
        progress(stopped_at, end);
        Ok(self.finish(stopped_at))
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone(p) => {
                self.ports[p as usize].busy = false;
                self.try_transmit(p as usize);
            }
            Event::Arrive(p) => self.arrive(p as usize),
            Event::TryTx(p) => self.try_transmit(p as usize),
            Event::HostWake(h) => {
                let nic = &mut self.nics[h as usize];
                if nic.wake_at == Some(self.now) {
                    nic.wake_at = None;
                    let port = nic.port;
                    self.try_transmit(port);
                }
            }
            Event::FlowTimer(f) => self.flow_timer(f as usize),
            Event::FlowStart(f) => self.start_flow(f as usize),
            Event::Sample => self.sample(),
        }
    }

    fn start_flow(&mut self, f: usize) {
        let line = self.ports[self.nics[self.flows[f].def.src].port].rate;
        let (tx, rx) = transport::endpoints(&self.s, self.flows[f].spec, line, self.bdp_packets);
        self.flows[f].sender = Some(tx);
        self.flows[f].receiver = Some(rx);
        self.activate(f);
    }

    /// Puts a flow on its NIC's active list and lets the NIC send.
    fn activate(&mut self, f: usize) {
        let host = self.flows[f].def.src;
        if !self.flows[f].active {
            self.flows[f].active = true;
            self.nics[host].active.push(f as u32);
        }
        self.rearm(f);
        let port = self.nics[host].port;
        self.try_transmit(port);
    }

    /// Makes sure an event is pending no later than the sender's next deadline.
    fn rearm(&mut self, f: usize) {
        let Some(t) = self.flows[f].sender.as_ref().and_then(|s| s.poll_timeout()) else { return };
        let t = t.max(self.now);
        if self.flows[f].timer_armed.is_none_or(|a| t < a) {
            self.flows[f].timer_armed = Some(t);
            self.events.push(t, Event::FlowTimer(f as u32));
        }
    }

    fn flow_timer(&mut self, f: usize) {
        if self.flows[f].timer_armed != Some(self.now) {
            return; // superseded
        }
        self.flows[f].timer_armed = None;
        let now = self.now;
        let shared = &mut self.nics[self.flows[f].def.src].shared;
        if let Some(s) = self.flows[f].sender.as_mut() {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.handle_timeout(now, shared);
            }
        }
        self.activate(f);
    }

    fn try_transmit(&mut self, p: usize) {
        if self.ports[p].busy {
            return;
        }
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
            return;
        }
        if let Some(id) = self.ports[p].queues[CLASS_CONTROL].pop_front() {
            self.dequeued(p, id, CLASS_CONTROL);
            self.put_on_wire(p, id);
            return;
        }
        if self.ports[p].paused {
            return;
        }
        let next = if self.is_host[node] { self.nic_pull(node) } else { self.ports[p].queues[CLASS_DATA].pop_front() };
        if let Some(id) = next {
            if !self.is_host[node] {
                self.dequeued(p, id, CLASS_DATA);
            }
            self.put_on_wire(p, id);
        }
    }

    /// Switch bookkeeping when a packet leaves an egress queue: buffer, ECN, PFC resume.
    fn dequeued(&mut self, p: usize, id: u32, class: usize) {
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
            let q = self.ports[p].queued_bytes[CLASS_DATA];
            let mark = if q > ecn.kmax.0 {
                true
            } else if q > ecn.kmin.0 {
                let prob = ecn.pmax * (q - ecn.kmin.0) as f64 / (ecn.kmax.0 - ecn.kmin.0).max(1) as f64;
                self.ecn_rng[node].uniform() < prob
            } else {
                false
            };
            if mark {
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
    fn put_on_wire(&mut self, p: usize, id: u32) {
        let now = self.now;
        let port = &mut self.ports[p];
        let pkt = self.pool.get(id);
        let ser = port.rate.serialization(pkt.size as u64);
        port.busy = true;
        port.tx_bytes += pkt.size as u64;
        port.tx_packets += 1;
        self.c.packet_hops += 1;
        self.events.push(now + ser, Event::TxDone(p as u32));
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

    fn arrive(&mut self, p: usize) {
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

    fn drop_packet(&mut self, id: u32) {
        self.pool.free(id);
    }

    fn switch_receive(&mut self, node: usize, in_port: usize, id: u32) {
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

    fn host_receive(&mut self, node: usize, id: u32) {
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
    fn touch_qp_cache(&mut self, node: usize, f: usize) -> bool {
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
    fn nic_pull(&mut self, node: usize) -> Option<u32> {
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

    fn sample(&mut self) {
        let dt = self.s.output.sample_interval.0;
        let rate = |now: u64, before: u64| (now - before) as f64 * 8.0 / dt.as_secs_f64();
        for (h, last, last_wire) in self.sampled.iter_mut() {
            let (cur, wire) = (self.nics[*h].rx_bytes, self.nics[*h].rx_wire_bytes);
            let sample = Sample { time: self.now, host: *h as u32, bps: rate(cur, *last), wire_bps: rate(wire, *last_wire) };
            (*last, *last_wire) = (cur, wire);
            self.samples.push(sample);
        }
        let next = self.now + dt;
        if next <= self.s.duration.0 {
            self.events.push(next, Event::Sample);
        }
    }

    fn finish(self, end: Time) -> RunOutput {
        let mut c = self.c.clone();
        let name = |n: usize| self.topo.nodes[n].name.clone();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let (stats, finish) = f.sender.as_ref().map_or((Default::default(), None), |s| (s.stats, s.done_at));
            let delivered = f.receiver.as_ref().map_or(0, |r| r.ctx.delivered_bytes);
            let (stored, copied, rx_dropped) = f.receiver.as_ref().map_or((0, 0, 0), |r| r.reorder_stats());
            if let Some(r) = f.receiver.as_ref() {
                c.bad_deliveries += r.ctx.bad_deliveries;
            }
            let active_until = finish.unwrap_or(end);
            let span = active_until.saturating_sub(f.def.start);
            let goodput_bps = if span.0 > 0 { delivered as f64 * 8.0 / span.as_secs_f64() } else { 0.0 };
            flows.push(FlowRecord {
                flow_id: i as u32,
                src: name(f.def.src),
                dst: name(f.def.dst),
                size_bytes: if f.def.size == FlowSpec::ENDLESS { 0 } else { f.def.size },
                start: f.def.start,
                finish,
                ideal_fct: f.ideal_fct,
                delivered_bytes: delivered,
                sent_bytes: stats.sent_bytes,
                retx_bytes: stats.retx_bytes,
                naks: stats.naks,
                timeouts: stats.timeouts,
                cnps: stats.cnps,
                reorder_stored_bytes: stored,
                reorder_copied_bytes: copied,
                rx_dropped,
                goodput_bps,
            });
        }
        let share = |p: &crate::hw::bits_pool::BitsPool| p.peak_used as f64 / p.blocks() as f64;
        let hosts = self.nics.iter().enumerate().filter(|(i, _)| self.is_host[*i]).map(|(_, n)| &n.shared.melo);
        let (mut rx_peak, mut tx_peak, mut in_use) = (0.0f64, 0.0f64, 0u64);
        for m in hosts {
            rx_peak = rx_peak.max(share(&m.rx));
            tx_peak = tx_peak.max(share(&m.tx));
            in_use += (m.rx.used_blocks() + m.tx.used_blocks()) as u64;
        }
        let hosts: Vec<usize> = self.topo.hosts().collect();
        let rtt = hosts[1..].iter().map(|&h| self.path(hosts[0], h).0).max().unwrap_or(Time::ZERO);
        let melo = &self.s.recovery.melo;
        let sizing = crate::hw::memory::Sizing {
            bandwidth: self.ports[self.nics[hosts[0]].port].rate,
            rtt,
            mtu: self.s.nic.mtu,
            connections: self.flows.len().max(1) as u32,
            pool_bits: melo.pool_bits,
            block_bits: melo.block_bits,
        };
        let scheme = match self.s.transport.recovery {
            crate::config::RecoveryKind::Gbn => "go-back-N",
            crate::config::RecoveryKind::Irn => "irn",
            crate::config::RecoveryKind::Melo => "melo",
            crate::config::RecoveryKind::Gbone => "gbone",
        };
        let onchip = crate::hw::memory::footprints(&sizing).into_iter().find(|r| r.scheme == scheme).expect("every scheme has a row");
        RunOutput {
            onchip,
            melo_rx_peak: rx_peak,
            melo_tx_peak: tx_peak,
            melo_blocks_in_use: in_use,
            flows,
            samples: self.samples,
            counters: c,
            end,
            host_names: self.topo.nodes.iter().map(|n| n.name.clone()).collect(),
            packets_in_flight: self.pool.live() as u64,
            pool_high_water: self.pool.capacity() as u64,
        }
    }
}

/// The progress callback asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;
