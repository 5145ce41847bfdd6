//! A simulation: the network, the hosts' NICs and the flows, driven by one event queue.
//!
//! Everything lives in flat vectors indexed by small integers (node, port, flow, packet), so
//! the event loop allocates nothing per packet once queues reach their working size.

use super::queue::EventQueue;
use super::rng::{self, Rng, Stream};
use super::units::{Rate, Time};
use crate::config::validate::{loss_target, LossTarget};
use crate::config::{Scenario, ScenarioError};
use crate::net::packet::PacketPool;
use crate::net::port::Port;
use crate::net::routing::Routes;
use crate::net::topology::{NodeKind, Topology};
use crate::stats::{Counters, FlowRecord, Sample};
use crate::transport::receiver::Receiver;
use crate::transport::sender::Sender;
use crate::transport::{self, FlowSpec, NicShared, CONTROL_BYTES, DATA_HEADER_BYTES};
use crate::workload::{self, FlowDef};

mod hosts;
mod links;

const PFC_FRAME_BYTES: u32 = 64;

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A port finished serialising a packet and may send the next (scheduled only when
    /// something was waiting for the transmitter).
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
    /// The same for every scheme, and what the NIC was sized for.
    pub memory: Vec<crate::hw::memory::Footprint>,
    pub sizing: crate::hw::memory::Sizing,
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
            if l.loss > 0.0 {
                // The file's per-link error rate drops any packet, both ways (HPCC ns-3).
                for p in [pa, pb] {
                    ports[p].loss_data = rng::threshold(l.loss);
                    ports[p].loss_control = rng::threshold(l.loss);
                }
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

    /// The longest host-to-host base RTT, the HPCC ns-3 way: twice the propagation delay plus
    /// one MTU payload's serialization at every hop. What the memory table sizes NICs for.
    fn longest_base_rtt(&self) -> Time {
        let hosts: Vec<usize> = self.topo.hosts().collect();
        let rtt = |h: usize| {
            let (prop, rates) = self.route(hosts[0], h);
            let ser = rates.iter().map(|r| r.serialization(self.s.nic.mtu as u64)).fold(Time::ZERO, |x, y| x + y);
            prop + prop + ser
        };
        hosts[1..].iter().map(|&h| rtt(h)).max().unwrap_or(Time::ZERO)
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
                self.ports[p as usize].wake_pending = false;
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
        let first_host = self.topo.hosts().next().expect("at least 2 hosts");
        let melo = &self.s.recovery.melo;
        let sizing = crate::hw::memory::Sizing {
            bandwidth: self.ports[self.nics[first_host].port].rate,
            rtt: self.longest_base_rtt(),
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
        let memory = crate::hw::memory::footprints(&sizing);
        let onchip = memory.iter().find(|r| r.scheme == scheme).expect("every scheme has a row").clone();
        RunOutput {
            onchip,
            memory,
            sizing,
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
