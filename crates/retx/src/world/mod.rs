//! A simulation: the network ([`crate::net`]), the hosts' NICs ([`crate::nic`]) and the
//! connections' endpoints ([`crate::transport`]), driven by one event queue. This module is the
//! glue: it moves packets between elements when events fire and knows no scheme; each element
//! decides for itself (a port what to send, a switch what to admit, an endpoint what to answer).
//!
//! Everything lives in flat vectors indexed by small integers (node, port, connection,
//! packet), so the event loop allocates nothing per packet once queues reach their working
//! size. [`crate::config`] builds a simulation from a scenario; [`Parts`] is what it hands over.

mod forward;
mod host;
mod parallel;
pub mod partition;

pub use parallel::{obstacle, ParallelReport};

use crate::hw::memory::MemoryReport;
use crate::net::background::{self, Source};
use crate::net::int::IntTable;
use crate::net::loss::{KindMask, LossRule, LossTarget, PortLoss};
use crate::net::path;
use crate::net::pfc_watch::{PfcWatch, PortGraph, WatchParams};
use crate::net::port::{Discipline, Port, ShaperSpec};
use crate::net::routing::{Paths, Policy, Router, Routes};
use crate::net::switch::{Pfc, Switch, SwitchParams};
use crate::net::topology::{NodeKind, Topology};
use crate::nic::{ClockPlan, Nic, QpCache};
use crate::observe::{Observer, Quiet};
use crate::sim::queue::EventQueue;
use crate::sim::rng::{self, Stream};
use crate::sim::units::Time;
use crate::stats::links::{LinkReport, LinkWatch};
use crate::stats::{CcSample, Counters, DropKinds, FlowRecord, IterationRecord, PoolSample, QueueSample, Sample, StepRecord};
use crate::nic::Qp;
use crate::transport::common::endpoint::EndRecord;
use crate::transport::common::scheme::NetworkScale;
use crate::transport::Endpoint;
use crate::transport::{self, BasePath, FlowSpec, NetFacts, NicAgent, Template, CONTROL_BYTES, DATA_HEADER_BYTES};
use crate::workload::collective::{self, CollectivePlan};
use crate::workload::{Dependencies, Done, FlowDef};

const PFC_FRAME_BYTES: u32 = 64;

/// The origins of the events the run itself schedules, one per kind so that each kind's own
/// sequence numbers them (flow starts, samples, the PFC watchdog's ticks: at one time, in this
/// order, before any node's). Node `n` is origin `RUN_ORIGINS + n` and the wire of port `p` is
/// origin `RUN_ORIGINS + nodes + p`: see [`crate::sim::queue`] for why events are keyed by
/// origin, and [`parallel`] for why the run's own are keyed by kind.
const FLOW_STARTS: u32 = 0;
const SAMPLES: u32 = 1;
const PFC_TICKS: u32 = 2;
const RUN_ORIGINS: u32 = 3;

/// Where a data packet's path entropy comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceEntropy {
    /// The flow's 5-tuple hash: one path per flow under ECMP (RoCEv2 today).
    PerFlow,
    /// A new value per packet (the NIC varies the UDP source port): ECMP switches spray.
    PerPacket,
    /// The value each packet's sender chose ([`crate::transport::common::segment::Segment::ev`],
    /// a scheme whose senders choose entropy: UET), hashed with the connection's own: packets
    /// of one connection with one value take one path under ECMP, as htsim hashes (flow id,
    /// EV) at every switch.
    Chosen,
}

/// Everything a simulation is built from, resolved and validated by [`crate::config`].
#[derive(Clone)]
pub struct Parts {
    pub topology: Topology,
    pub seed: u64,
    pub duration: Time,
    pub stop_when_done: bool,
    pub sample_interval: Time,
    /// Egress ports sampled with the time series: (node, the node its link leads to).
    pub watched_queues: Vec<(usize, usize)>,
    /// Flows whose sender's congestion control state is sampled with the time series.
    pub watched_flows: Vec<u32>,
    /// Hosts (node ids) whose NIC's shared structures are sampled with the time series.
    pub watched_pools: Vec<usize>,
    /// Fabric statistics (`[output] links`), if asked for.
    pub links: Option<LinkPlan>,
    pub switch: SwitchParams,
    /// Degraded switch egress ports: (switch, the node it sends to, the share of the link's
    /// rate), their queue limits and ECN thresholds scaled alike.
    pub degraded: Vec<(usize, usize, f64)>,
    /// Egress queues per port (queue 0: control) and how data queues share the port.
    pub queues: usize,
    pub discipline: Discipline,
    /// A shaped queue on every switch port (ExpressPass's credit queue), if any.
    pub shaped: Option<ShaperSpec>,
    pub routing: Policy,
    /// Minimal paths, or detours through the topology's switch groups (Valiant, UGAL).
    pub paths: Paths,
    pub entropy: SourceEntropy,
    /// Loss rules, applied to every port they target, in order.
    pub loss: Vec<LossRule>,
    pub transport: Template,
    pub mtu: u32,
    pub flows: Vec<FlowDef>,
    /// The jobs' names, by position (`FlowDef::job` indexes it).
    pub jobs: Vec<String>,
    /// Flows that start when others finish (the workload's; [`Dependencies::none`] if none).
    pub dependencies: Dependencies,
    /// The collectives the flows make up (reported per step and iteration), if any.
    pub collectives: Option<CollectivePlan>,
    /// How every host's clock is drawn.
    pub clock: ClockPlan,
    /// Switches stamp INT hop records on data packets; receivers echo them in ACKs.
    pub int: bool,
    /// Every NIC's receive pipeline time per packet (schemes may charge more).
    pub rx_latency: Time,
    /// Every NIC's receive input queue, in packets, past which it pauses its link (0: none).
    pub rx_queue: u32,
    /// Background traffic sources (`[[background]]`), each on a switch egress port.
    pub background: Vec<background::Spec>,
    /// The PFC watchdog's settings (used when PFC is on).
    pub pfc_watch: WatchParams,
}

/// What `[output] links` asks of a run: the ports it selects (port ids, in order), every
/// port's tier (names, and per port its index) and the busiest ports kept per interval.
#[derive(Clone, Debug)]
pub struct LinkPlan {
    pub selected: Vec<u32>,
    pub tiers: (Vec<String>, Vec<u16>),
    pub series: usize,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A port finished serialising a packet and may send the next (scheduled only when
    /// something was waiting for the transmitter).
    TxDone(u32),
    /// The head of a port's wire reaches the peer.
    Arrive(u32),
    /// A port should try to send (deferred to avoid deep recursion).
    TryTx(u32),
    /// A host NIC's scheduler may let a queue pair send.
    HostWake(u32),
    /// A queue pair's timer: (NIC, queue pair).
    QpTimer(u32, u32),
    /// A NIC's receive pipeline is free for its next waiting packet.
    NicRx(u32),
    /// A NIC's agent has a deadline (NIC-wide timer).
    NicTimer(u32),
    /// A NIC's agent has queue pairs to wake or packets to send, left by a call made while
    /// its port chose what to send.
    AgentNews(u32),
    FlowStart(u32),
    Sample,
    /// A background source's tick: it sends a packet into its egress queue.
    Background(u32),
    /// The PFC watchdog's tick (pending only while some port is paused).
    PfcWatch,
}

/// Where one end of a connection lives: (NIC, queue pair), or unset before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct End {
    nic: u32,
    qp: u32,
}

const UNSET: End = End { nic: u32::MAX, qp: u32::MAX };

/// One connection: where its two endpoints live (each in its host's QP table).
struct Conn {
    def: FlowDef,
    spec: FlowSpec,
    /// Path entropy of each direction (0: requester to responder).
    entropy: [u64; 2],
    src_nic: u32,
    dst_nic: u32,
    /// The requester and the responder, once started.
    ends: [End; 2],
    ideal_fct: Time,
    /// Its packets the network dropped, and by kind.
    drops: u64,
    drops_by_kind: DropKinds,
    /// When its receiver had delivered every byte, and first heard of it.
    received: Option<Time>,
    first_arrival: Option<Time>,
}

/// Everything one run produces.
pub struct RunOutput {
    pub flows: Vec<FlowRecord>,
    /// A collective workload's iterations and steps (empty otherwise).
    pub collectives: Vec<IterationRecord>,
    pub collective_steps: Vec<StepRecord>,
    pub samples: Vec<Sample>,
    /// `[output] queues`: the watched ports' names ("A->B") and their samples.
    pub queue_names: Vec<String>,
    pub queue_samples: Vec<QueueSample>,
    /// `[output] cc_flows`: their senders' samples.
    pub cc_samples: Vec<CcSample>,
    /// `[output] pools`: the watched hosts' NIC structures.
    pub pool_samples: Vec<PoolSample>,
    /// `[output] links`: the fabric's statistics, when asked for.
    pub links: Option<LinkReport>,
    pub counters: Counters,
    /// When the run stopped: its duration, or earlier when every finite flow finished (or a
    /// PFC deadlock ended it).
    pub end: Time,
    /// The duration the scenario asked for.
    pub duration: Time,
    pub host_names: Vec<String>,
    /// Packets still in queues or on wires at the end.
    pub packets_in_flight: u64,
    /// The most packets alive at once.
    pub pool_high_water: u64,
    /// What the transport schemes report about their NIC-wide state, e.g.
    /// `melo_rx_pool_peak`: (name, value).
    pub scheme_report: Vec<(&'static str, f64)>,
    /// On-chip memory of every loss recovery scheme for a NIC sized like the run's hosts
    /// (attached by [`crate::config`] when it builds the simulation).
    pub memory: Option<MemoryReport>,
    /// A PFC deadlock the watchdog found (the run ended there), and the ports in pause storms.
    pub pfc_deadlock: Option<PfcDeadlock>,
    pub pfc_storms: Vec<PfcStorm>,
    /// Settings that do not fit the built network (the scheme's, against its BDP and switch
    /// queues), one line each naming its field.
    pub warnings: Vec<String>,
}

/// A port named for a report: its id, the node it belongs to and the node it leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortName {
    pub port: u32,
    pub node: String,
    pub peer: String,
}

/// A PFC deadlock: when detected, and the cycle of paused ports (each port's peer switch owns
/// the next).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PfcDeadlock {
    pub at: Time,
    pub ports: Vec<PortName>,
}

/// A port in a pause storm: first detected at `first_at`, in `windows` storm windows, at most
/// `max_fraction` of a window paused.
#[derive(Clone, Debug, PartialEq)]
pub struct PfcStorm {
    pub port: PortName,
    pub first_at: Time,
    pub windows: u32,
    pub max_fraction: f64,
}

impl RunOutput {
    /// A figure of [`RunOutput::scheme_report`] by name.
    pub fn scheme_figure(&self, name: &str) -> Option<f64> {
        self.scheme_report.iter().find(|(n, _)| *n == name).map(|x| x.1)
    }

    /// The finite flows that did not finish, and why, when some did not: a run that reports
    /// only its finished flows must not look complete.
    pub fn unfinished(&self) -> Option<Unfinished> {
        let left: Vec<&FlowRecord> = self.flows.iter().filter(|f| f.size_bytes > 0 && f.finish.is_none()).collect();
        if left.is_empty() {
            return None;
        }
        let never_started = left.iter().filter(|f| f.start >= self.end).count();
        let reason = match &self.pfc_deadlock {
            Some(d) => format!("a PFC deadlock ended the run at {}", d.at),
            None if self.end >= self.duration => format!("the run reached its duration ({}) first", self.duration),
            None => format!("the run stopped at {}", self.end),
        };
        Some(Unfinished { count: left.len(), never_started, reason })
    }
}

/// Finite flows a run did not finish ([`RunOutput::unfinished`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    pub count: usize,
    /// Of them, the ones whose start lies at or after the run's end.
    pub never_started: usize,
    /// Why, in words: "the run reached its duration (1ms) first", "a PFC deadlock ended ...".
    pub reason: String,
}

pub struct Simulation<O: Observer = Quiet> {
    now: Time,
    end: Time,
    stop_when_done: bool,
    sample_interval: Time,
    /// When the time series was last sampled (or starts): a sample covers the time since.
    last_sample: Time,
    events: EventQueue<Event>,
    /// The first wire's event origin (after the run's and the nodes').
    wire_origins: u32,
    /// Packets alive (created, not yet consumed or dropped) and the most ever at once.
    live: u64,
    live_high_water: u64,
    int_enabled: bool,
    int: IntTable,
    ports: Vec<Port>,
    is_host: Vec<bool>,
    routes: Routes,
    switch_params: SwitchParams,
    /// Per node: its switch state and routing state (None at hosts).
    switches: Vec<Option<(Switch, Router)>>,
    /// Per node: its NIC's index in `nics` (u32::MAX at switches).
    nic_of: Vec<u32>,
    nics: Vec<Nic>,
    template: Template,
    entropy: SourceEntropy,
    conns: Vec<Conn>,
    /// The workload's flows that wait for others: told of every finished flow.
    dependencies: Dependencies,
    collectives: Option<CollectivePlan>,
    /// The jobs' names, by position.
    jobs: Vec<String>,
    finite_left: usize,
    endless: usize,
    /// Receiving NICs and their counters at the last sample: (nic, node, rx_bytes, rx_wire_bytes).
    sampled: Vec<(usize, usize, u64, u64)>,
    samples: Vec<Sample>,
    /// Watched ports and their samples.
    watched: Vec<usize>,
    /// Their counters at the last sample: (tx_bytes, ecn_marks, pauses_sent).
    watched_last: Vec<(u64, u64, u64)>,
    watched_flows: Vec<u32>,
    cc_samples: Vec<CcSample>,
    /// Watched hosts' NICs: (nic, node).
    watched_pools: Vec<(usize, usize)>,
    pool_samples: Vec<PoolSample>,
    queue_names: Vec<String>,
    queue_samples: Vec<QueueSample>,
    /// Fabric statistics (`[output] links`), if asked for.
    links: Option<Box<LinkWatch>>,
    c: Counters,
    bdp_packets: u32,
    /// Settings that do not fit the built network (see [`RunOutput::warnings`]).
    warnings: Vec<String>,
    base_path: BasePath,
    /// What the run's network is, as schemes size their ends by it.
    net: NetFacts,
    host_names: Vec<String>,
    memory: Option<MemoryReport>,
    /// Background traffic sources; `Event::Background(i)` is the tick of source `i`.
    background: Vec<Source>,
    /// The PFC watchdog (None without PFC).
    pfc_watch: Option<PfcWatch>,
    /// The run must end now (a PFC deadlock was found).
    halted: bool,
    /// The part of a parallel run this simulation plays (None: the whole run, serially).
    shard: Option<Box<parallel::Shard>>,
    obs: O,
}

impl Simulation<Quiet> {
    /// Assembles a simulation from resolved parts.
    pub fn assemble(parts: Parts) -> Simulation<Quiet> {
        Simulation::with_observer(parts, Quiet)
    }
}

impl<O: Observer> Simulation<O> {
    /// Assembles a simulation whose engine events go to `obs`.
    pub fn with_observer(p: Parts, obs: O) -> Simulation<O> {
        Simulation::with_observer_in(p, obs, None)
    }

    /// A simulation of the whole run, or of one partition of a parallel run (`shard`).
    fn with_observer_in(p: Parts, obs: O, shard: Option<Box<parallel::Shard>>) -> Simulation<O> {
        let topo = p.topology;
        let n = topo.nodes.len();
        let is_host: Vec<bool> = topo.nodes.iter().map(|x| x.kind == NodeKind::Host).collect();
        let mut ports: Vec<Port> = Vec::with_capacity(topo.links.len() * 2);
        let mut node_ports = vec![Vec::new(); n];
        for l in &topo.links {
            let (pa, pb) = (ports.len(), ports.len() + 1);
            for (node, id) in [(l.a, pa), (l.b, pb)] {
                debug_assert_eq!(topo.port_node(id), Some(node), "ports are numbered as Topology::port_node says");
                let loss = PortLoss::new(rng::stream(p.seed, Stream::LinkLoss, id as u64), rng::stream(p.seed, Stream::BurstLoss, id as u64));
                ports.push(Port::new(node, l.rate, l.delay, p.queues, p.discipline, loss));
                node_ports[node].push(id);
            }
            if l.loss > 0.0 {
                // The file's per-link error rate drops any packet, both ways (HPCC ns-3).
                for port in [pa, pb] {
                    ports[port].loss.set_bernoulli(l.loss, KindMask::ALL);
                }
            }
            ports[pa].peer = pb;
            ports[pa].peer_node = l.b;
            ports[pb].peer = pa;
            ports[pb].peer_node = l.a;
        }
        // How each switch port marks ECN and limits its queues: by the switch's settings,
        // except ports toward hosts without ECN there and degraded ports.
        for port in ports.iter_mut().filter(|x| !is_host[x.node]) {
            if !p.switch.ecn_to_hosts && is_host[port.peer_node] {
                port.ecn = crate::net::port::PortEcn::Off;
            }
        }
        for &(a, b, factor) in &p.degraded {
            // The switch's own ports, not every port of the network per entry.
            let Some(&id) = node_ports[a].iter().find(|&&id| ports[id].peer_node == b) else { continue };
            let port = &mut ports[id];
            let scale = |v: u64| (v as f64 * factor) as u64;
            if port.ecn == crate::net::port::PortEcn::ByRate {
                port.ecn = match p.switch.red_for(port.rate) {
                    Some(r) => crate::net::port::PortEcn::Profile(crate::net::ecn::RedProfile { kmin: scale(r.kmin), kmax: scale(r.kmax), pmax: r.pmax }),
                    None => crate::net::port::PortEcn::Off,
                };
            }
            port.trim_limits = p.switch.trim.and_then(|t| t.port).map(|l| crate::net::switch::PortTrim { data_queue: scale(l.data_queue), header_queue: scale(l.header_queue), ..l });
            port.set_rate(crate::sim::units::Rate((port.rate.0 as f64 * factor) as u64));
        }
        if let Some(spec) = p.shaped {
            for port in ports.iter_mut().filter(|x| !is_host[x.node]) {
                port.shaper = Some(spec.at(port.rate));
            }
        }
        // Each rule on the ports it targets, in rule order per port; a rule on one switch or
        // link visits that node's ports only (not every port of the network per rule).
        for rule in &p.loss {
            let targeted = match rule.target {
                LossTarget::Everywhere => 0..ports.len(),
                LossTarget::Switch(_) | LossTarget::Link(..) => 0..0,
            };
            let own: &[usize] = match rule.target {
                LossTarget::Switch(n) | LossTarget::Link(n, _) => node_ports.get(n).map_or(&[], Vec::as_slice),
                LossTarget::Everywhere => &[],
            };
            for id in targeted.chain(own.iter().copied()) {
                let port = &mut ports[id];
                if rule.target.applies(port.node, port.peer_node) {
                    rule.install(&mut port.loss);
                }
            }
        }
        let peer_node: Vec<usize> = ports.iter().map(|p| p.peer_node).collect();
        let routes = Routes::build(&node_ports, &peer_node, &is_host, &topo.groups).detouring(p.paths, &topo.groups, &peer_node);
        let mut nic_of = vec![u32::MAX; n];
        let mut nics = Vec::new();
        for node in 0..n {
            if is_host[node] {
                nic_of[node] = nics.len() as u32;
                let mut nic = Nic::new(node_ports[node][0], NicAgent::on_link(&p.transport, ports[node_ports[node][0]].rate, p.mtu), QpCache::new(p.transport.qp_cache()), p.clock.host(p.seed, node));
                nic.rx.per_packet = p.rx_latency;
                nic.rx.limit = p.rx_queue as usize;
                nics.push(nic);
            }
        }
        let mut switches: Vec<Option<(Switch, Router)>> = (0..n)
            .map(|i| {
                (!is_host[i]).then(|| {
                    let salt = rng::stream(p.seed, Stream::EcmpSalt, i as u64).next_u64();
                    (Switch::new(rng::stream(p.seed, Stream::SwitchEcn, i as u64), rng::stream(p.seed, Stream::SwitchWred, i as u64), rng::stream(p.seed, Stream::SwitchTrim, i as u64)), Router::new(p.routing, salt, rng::stream(p.seed, Stream::Routing, i as u64)))
                })
            })
            .collect();
        if let Some(Pfc::Dynamic(d)) = p.switch.pfc {
            // HPCC ns-3 third.cc: headroom and shift per switch port; the switch sets aside
            // every port's headroom and one reserve per port (`ConfigNPort`).
            let host_rate = (0..n).find(|&h| is_host[h]).map(|h| ports[node_ports[h][0]].rate).expect("at least one host");
            for (node, sw) in switches.iter_mut().enumerate() {
                let Some((sw, _)) = sw else { continue };
                for &id in &node_ports[node] {
                    let port = &mut ports[id];
                    port.pfc_headroom = d.headroom_for(port.rate, port.delay);
                    port.pfc_shift = d.shift_for(port.rate, host_rate);
                    sw.pfc_reserved += port.pfc_headroom + d.reserve;
                }
            }
        }
        if let Some(Pfc::FixedHeadroom(_, headroom)) = p.switch.pfc {
            // Each lossless ingress queue of a switch port has headroom of its own, set aside
            // from the shared buffer.
            for (node, sw) in switches.iter_mut().enumerate() {
                let Some((sw, _)) = sw else { continue };
                for &id in &node_ports[node] {
                    let port = &mut ports[id];
                    port.pfc_headroom = headroom.for_link(port.rate, port.delay);
                    let lossless = (1..port.queue_count()).filter(|&q| port.is_lossless(q)).count() as u64;
                    sw.pfc_reserved += port.pfc_headroom * lossless;
                }
            }
        }

        let pfc_watch = p.switch.pfc.is_some().then(|| {
            let peer_switch = ports.iter().map(|x| (!is_host[x.peer_node]).then_some(x.peer_node as u32)).collect();
            let ports_of = node_ports.iter().map(|v| v.iter().map(|&x| x as u32).collect()).collect();
            PfcWatch::new(p.pfc_watch, PortGraph { peer_switch, ports_of })
        });
        let mut sim = Simulation {
            now: Time::ZERO,
            end: p.duration,
            stop_when_done: p.stop_when_done,
            sample_interval: p.sample_interval,
            last_sample: Time::ZERO,
            events: EventQueue::new(RUN_ORIGINS as usize + n + ports.len()),
            wire_origins: RUN_ORIGINS + n as u32,
            live: 0,
            live_high_water: 0,
            int_enabled: p.int,
            int: IntTable::default(),
            ports,
            is_host,
            routes,
            switch_params: p.switch,
            switches,
            nic_of,
            nics,
            template: p.transport,
            entropy: p.entropy,
            conns: Vec::new(),
            dependencies: p.dependencies,
            collectives: p.collectives,
            jobs: p.jobs,
            finite_left: 0,
            endless: 0,
            sampled: Vec::new(),
            samples: Vec::new(),
            watched: Vec::new(),
            watched_last: Vec::new(),
            watched_flows: p.watched_flows,
            watched_pools: Vec::with_capacity(p.watched_pools.len()),
            pool_samples: Vec::new(),
            cc_samples: Vec::new(),
            queue_names: Vec::new(),
            queue_samples: Vec::new(),
            links: None,
            c: Counters::default(),
            bdp_packets: 1,
            warnings: Vec::new(),
            base_path: BasePath::default(),
            net: NetFacts::default(),
            host_names: topo.nodes.iter().map(|n| n.name.clone()).collect(),
            memory: None,
            background: Vec::with_capacity(p.background.len()),
            pfc_watch,
            halted: false,
            shard,
            obs,
        };
        if let Some(shard) = sim.shard.as_ref() {
            // A wire into another partition: what is put on it is sent there.
            for port in sim.ports.iter_mut() {
                port.remote = shard.owner[port.node] != shard.owner[port.peer_node];
            }
        }
        for &host in &p.watched_pools {
            sim.watched_pools.push((sim.nic_of[host] as usize, host));
        }
        if let Some(plan) = p.links {
            sim.links = Some(Box::new(LinkWatch::new(sim.ports.len(), plan.selected, plan.tiers, plan.series)));
        }
        let port_toward = |ports: &[Port], a: usize, b: usize| -> usize {
            *node_ports[a].iter().find(|&&x| ports[x].peer_node == b).expect("a validated link")
        };
        for &(a, b) in &p.watched_queues {
            let port = port_toward(&sim.ports, a, b);
            sim.watched.push(port);
            sim.watched_last.push((0, 0, 0));
            sim.queue_names.push(format!("{}->{}", sim.host_names[a], sim.host_names[b]));
        }
        sim.bdp_packets = sim.compute_bdp_packets(p.mtu);
        sim.base_path = sim.compute_base_path(p.mtu);
        sim.net = sim.compute_net_facts(p.mtu);
        let switch_queues = (0..sim.ports.len()).filter(|&i| !sim.is_host[sim.ports[i].node]).map(|i| sim.ports[i].queue_count() as u32).max().unwrap_or(0);
        sim.warnings = sim.template.recovery.network_warnings(&NetworkScale { bdp_packets: sim.bdp_packets, mtu: p.mtu, switch_queues });
        sim.add_flows(p.flows, p.seed, p.mtu);
        // The time series starts on the sampling grid point at or before the first flow or
        // background source (HPCC flow files start at 2 s: sampling the idle warm-up would
        // give rows of zeros).
        let first = sim.conns.iter().map(|c| c.def.start).chain(p.background.iter().map(|b| b.start)).min().unwrap_or(Time::ZERO);
        let dt = sim.sample_interval.0.max(1);
        sim.last_sample = Time(first.0 / dt * dt);
        if let Some(l) = sim.links.as_mut() {
            l.start_at(sim.last_sample);
        }
        sim.events.push(sim.last_sample + sim.sample_interval, SAMPLES, Event::Sample);
        for (i, spec) in p.background.into_iter().enumerate() {
            let source = Source::new(spec, port_toward(&sim.ports, spec.from, spec.to), rng::stream(p.seed, Stream::Background, i as u64));
            // A source's ticks are its switch's events, as the port's own are.
            if let Some(t) = source.first_tick().filter(|_| sim.owns(spec.from)) {
                sim.events.push(t, Self::node_origin(spec.from), Event::Background(i as u32));
            }
            sim.background.push(source);
        }
        sim
    }

    fn hosts(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.is_host.len()).filter(|&n| self.is_host[n])
    }

    /// Whether this simulation runs node `node` (every node, unless it is a partition).
    fn owns(&self, node: usize) -> bool {
        self.shard.as_ref().is_none_or(|s| s.owns(node))
    }

    /// The event origin of node `node`.
    fn node_origin(node: usize) -> u32 {
        RUN_ORIGINS + node as u32
    }

    /// The host node of NIC `nic`.
    fn nic_node(&self, nic: usize) -> usize {
        self.ports[self.nics[nic].port].node
    }

    /// The event origin of NIC `nic`: its host.
    fn nic_origin(&self, nic: usize) -> u32 {
        Self::node_origin(self.nic_node(nic))
    }

    fn host_port(&self, host: usize) -> usize {
        self.nics[self.nic_of[host] as usize].port
    }

    /// One BDP of the longest host-to-host path, in packets: the default bitmap of IRN and
    /// Go-Back-ONE. The round trip is a full data packet out and an ACK back, store and
    /// forward at every hop; one packet more covers the one on the sender's wire when the
    /// ACK arrives.
    fn compute_bdp_packets(&self, mtu: u32) -> u32 {
        let hosts: Vec<usize> = self.hosts().collect();
        let pkt = (mtu + DATA_HEADER_BYTES) as u64;
        let hop = |p: &Port| p.rate.serialization(pkt) + p.rate.serialization(CONTROL_BYTES as u64);
        let (rtt, rate) = hosts[1..]
            .iter()
            .map(|&h| path::longest_round_trip(&self.ports, &self.routes, self.host_port(hosts[0]), h, &hop))
            .max_by_key(|p| p.0)
            .expect("at least 2 hosts");
        let bytes = rate.0 as u128 * rtt.0 as u128 / 8 / 1_000_000_000_000;
        // Saturating, not wrapping: 10 Tbps over light-second links is 10^10 packets.
        (bytes.div_ceil(pkt as u128) + 1).min(u32::MAX as u128) as u32
    }

    /// The longest host-to-host base RTT, the HPCC ns-3 way (twice the propagation delay plus
    /// one MTU payload's serialization at every hop), and its BDP at that path's bottleneck.
    fn compute_base_path(&self, mtu: u32) -> BasePath {
        let hosts: Vec<usize> = self.hosts().collect();
        let hop = |p: &Port| p.rate.serialization(mtu as u64);
        hosts[1..]
            .iter()
            .map(|&h| path::longest_round_trip(&self.ports, &self.routes, self.host_port(hosts[0]), h, &hop))
            .max_by_key(|p| p.0)
            .map(|(rtt, rate)| BasePath::new(rtt, rate))
            .unwrap_or_default()
    }

    /// The run's network as schemes size their ends by it ([`NetFacts`]): the reference path,
    /// the switches' per-port data queue and, for a scheme that sizes itself by the network,
    /// the longest round trip of a full data packet out and a response back (the scheme's
    /// sizes), every hop serialised at the first host's rate (uet-htsim `calculate_rtt`).
    fn compute_net_facts(&self, mtu: u32) -> NetFacts {
        let switch_queue = self.switch_params.trim.and_then(|t| t.port).map(|p| p.data_queue);
        let mut net = NetFacts { path: self.base_path, switch_queue, ..NetFacts::default() };
        if self.template.sizes_by_network() {
            let hosts: Vec<usize> = self.hosts().collect();
            let line = self.ports[self.host_port(hosts[0])].rate;
            let (data, response) = ((mtu + self.template.data_header()) as u64, self.template.response_bytes() as u64);
            let per_hop = line.serialization(data) + line.serialization(response);
            let hop = |_: &Port| per_hop;
            net.network_rtt = hosts[1..].iter().map(|&h| path::longest_round_trip(&self.ports, &self.routes, self.host_port(hosts[0]), h, &hop).0).max().unwrap_or(Time::ZERO);
            net.oversubscription_milli = self.oversubscription_milli();
        }
        net
    }

    /// Over the switches with hosts, the largest ratio of the bandwidth toward hosts to the
    /// bandwidth toward other switches, in thousandths (1,000 with none oversubscribed).
    fn oversubscription_milli(&self) -> u32 {
        let n = self.is_host.len();
        let (mut down, mut up) = (vec![0u128; n], vec![0u128; n]);
        for p in &self.ports {
            if self.is_host[p.node] {
                continue;
            }
            let bps = p.rate.bps() as u128;
            if self.is_host[p.peer_node] { down[p.node] += bps } else { up[p.node] += bps }
        }
        (0..n)
            .filter(|&i| down[i] > 0 && up[i] > 0)
            .map(|i| (down[i] * 1000 / up[i]).min(u32::MAX as u128) as u32)
            .max()
            .unwrap_or(1000)
            .max(1000)
    }

    /// The longest host-to-host base RTT ([`Simulation::base_path`]): what the memory table
    /// sizes NICs for.
    pub fn longest_base_rtt(&self) -> Time {
        self.base_path.rtt
    }

    /// The reference path every window-based controller of the run is sized by.
    pub fn base_path(&self) -> BasePath {
        self.base_path
    }

    /// The first host's link rate (what the memory table sizes NICs for).
    pub fn first_host_rate(&self) -> crate::sim::units::Rate {
        let h = self.hosts().next().expect("at least 2 hosts");
        self.ports[self.host_port(h)].rate
    }

    pub fn flow_count(&self) -> usize {
        self.conns.len()
    }

    /// Bytes the routing tables hold.
    pub fn routing_table_bytes(&self) -> usize {
        self.routes.table_bytes()
    }

    /// Attaches the on-chip memory report the run's output carries.
    pub fn set_memory_report(&mut self, m: MemoryReport) {
        self.memory = Some(m);
    }

    fn ideal_fct(&self, a: usize, b: usize, spec: &FlowSpec) -> Time {
        let header = DATA_HEADER_BYTES as u64;
        let total = spec.size + spec.npkts() * header;
        let first = spec.payload(0) as u64 + header;
        path::ideal_fct(&self.ports, &self.routes, self.host_port(a), b, first, total)
    }

    /// The ECMP path from host `a` to host `b` of a packet with this entropy, as the egress
    /// ports it leaves by (its host's first). None if a switch on the way does not route by
    /// ECMP, or `b` is not reached.
    fn ecmp_path(&self, a: usize, b: usize, entropy: u64) -> Option<Vec<usize>> {
        let mut path = vec![self.host_port(a)];
        loop {
            let node = self.ports[*path.last()?].peer_node;
            if node == b {
                return Some(path);
            }
            let (_, router) = self.switches[node].as_ref()?;
            let c = self.routes.candidates(node, b);
            if c.is_empty() || path.len() > 64 {
                return None;
            }
            path.push(router.ecmp_port(c, entropy)?);
        }
    }

    /// The path entropy of a connection's requester-to-responder direction (`a` to `b`,
    /// `forth` as the 5-tuple gives it) when its scheme wants both directions on one path
    /// ([`Template::symmetric_paths`], ExpressPass): the first of `forth`, then values derived
    /// from it, whose ECMP path is the reverse of the path `back` gives the other direction,
    /// link for link (a link's two ports are numbered 2i and 2i + 1). `forth` unchanged
    /// otherwise: other schemes, non-ECMP policies, per-packet entropy, detours, or no such
    /// value among the first 4,096 tried (an asymmetric network).
    fn symmetric_entropy(&self, a: usize, b: usize, forth: u64, back: u64) -> u64 {
        if !self.template.symmetric_paths() || self.entropy != SourceEntropy::PerFlow || self.routes.detours_enabled() {
            return forth;
        }
        let Some(reverse) = self.ecmp_path(b, a, back) else { return forth };
        let wanted: Vec<usize> = reverse.iter().rev().map(|&p| self.ports[p].peer).collect();
        (0..4_096u64)
            .map(|k| if k == 0 { forth } else { rng::mix64(forth ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15)) })
            .find(|&e| self.ecmp_path(a, b, e).as_ref() == Some(&wanted))
            .unwrap_or(forth)
    }

    fn add_flows(&mut self, defs: Vec<FlowDef>, seed: u64, mtu: u32) {
        let mut psn_rng = rng::stream(seed, Stream::InitialPsn, 0);
        let mut receivers = std::collections::BTreeSet::new();
        let receiver_completes = self.template.receiver_completes();
        for (i, def) in defs.into_iter().enumerate() {
            // The workload's marking of the flow (its priority and colour); the transport
            // template adds the rest (`Template::endpoints`: sizes, where responses queue).
            let marking = transport::Marking { data_priority: def.priority, colour: def.colour, ..Default::default() };
            let spec = FlowSpec {
                size: def.size,
                mtu,
                initial_psn: (psn_rng.next_u64() & transport::psn::PSN_MASK as u64) as u32,
                key: rng::mix64(seed ^ (i as u64) << 20),
                marking,
            };
            // Only the results read it: a partition finds it for the flows it sends (the
            // merged run takes each from there).
            let ideal_fct = if def.size == FlowSpec::ENDLESS || !self.owns(def.src) {
                Time::ZERO
            } else if receiver_completes {
                // It ends when its last packet arrives: no ACK's way back.
                self.ideal_fct(def.src, def.dst, &spec) - path::propagation(&self.ports, &self.routes, self.host_port(def.src), def.dst)
            } else {
                self.ideal_fct(def.src, def.dst, &spec)
            };
            // RoCEv2 5-tuple: addresses, UDP source port (per QP), destination port 4791.
            let sport = 10_000 + i as u64;
            let tuple = |s: usize, d: usize, sp: u64, dp: u64| rng::mix64((s as u64) << 40 ^ (d as u64) << 16 ^ sp << 48 ^ dp);
            let back = tuple(def.dst, def.src, 4791, sport);
            let forth = self.symmetric_entropy(def.src, def.dst, tuple(def.src, def.dst, sport, 4791), back);
            self.conns.push(Conn {
                def,
                spec,
                entropy: [forth, back],
                src_nic: self.nic_of[def.src],
                dst_nic: self.nic_of[def.dst],
                ends: [UNSET; 2],
                ideal_fct,
                drops: 0,
                drops_by_kind: DropKinds::default(),
                first_arrival: None,
                received: None,
            });
            // A partition counts the finite flows whose completing ends it runs (they finish
            // there: the sender, or an unreliable delivery's receiver).
            if def.size == FlowSpec::ENDLESS {
                self.endless += 1
            } else if self.owns(if receiver_completes { def.dst } else { def.src }) {
                self.finite_left += 1
            }
            receivers.insert(def.dst);
            if !self.dependencies.waits(i) {
                self.events.push(def.start, FLOW_STARTS, Event::FlowStart(i as u32));
            }
        }
        self.sampled = receivers.into_iter().map(|h| (self.nic_of[h] as usize, h, 0, 0)).collect();
    }

    pub fn bdp_packets(&self) -> u32 {
        self.bdp_packets
    }

    /// Runs to the end. `progress(now, duration)` is called about every 0.2 s of wall time;
    /// returning false aborts the run.
    pub fn run(mut self, progress: &mut dyn FnMut(Time, Time) -> bool) -> Result<RunOutput, Aborted> {
        let end = self.end;
        let wall = std::time::Instant::now();
        let mut last_report = wall;
        let mut stopped_at = end;
        while let Some((t, ev)) = self.events.pop_until(end) {
            self.now = t;
            self.c.events += 1;
            self.handle(ev);
            if self.halted || (self.stop_when_done && self.endless == 0 && self.finite_left == 0) {
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
        if stopped_at > self.last_sample {
            // The last, partial interval: without it a run that stops between samples loses
            // its end (all of it, when the flows fit in one interval).
            self.now = stopped_at;
            self.record_sample();
        }
        Ok(self.finish(stopped_at))
    }

    #[inline(always)]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone(p) => {
                let port = &mut self.ports[p as usize];
                // A wake-up overtaken by an earlier one (a shaper's) is stale.
                if port.wake_pending && port.wake_time == self.now {
                    port.wake_pending = false;
                    self.try_transmit(p as usize);
                }
            }
            Event::Arrive(p) => self.arrive(p as usize),
            Event::TryTx(p) => self.try_transmit(p as usize),
            Event::HostWake(n) => {
                let nic = &mut self.nics[n as usize];
                if nic.wake_at == Some(self.now) {
                    nic.wake_at = None;
                    let port = nic.port;
                    self.try_transmit(port);
                }
            }
            Event::QpTimer(nic, qp) => self.qp_timer(nic as usize, qp as usize),
            Event::NicRx(nic) => self.nic_rx(nic as usize),
            Event::NicTimer(nic) => self.nic_timer(nic as usize),
            Event::AgentNews(nic) => self.drain_agent(nic as usize),
            Event::FlowStart(f) => self.start_flow(f as usize),
            Event::Sample => self.sample(),
            Event::Background(i) => self.background_tick(i as usize),
            Event::PfcWatch => self.pfc_watch_tick(),
        }
    }

    /// A port's data queues were paused or resumed: the watchdog may need a tick.
    pub(super) fn pause_changed(&mut self, port: usize, paused: bool) {
        if let Some(l) = self.links.as_mut() {
            l.pause_changed(port, self.now, paused);
        }
        if let Some(shard) = self.shard.as_mut() {
            // A partition's watchdog hears the whole run's changes when its window ends.
            if self.pfc_watch.is_some() {
                shard.pauses.push((self.now, port as u32, paused));
            }
            return;
        }
        if let Some(t) = self.pfc_watch.as_mut().and_then(|w| w.on_change(self.now, port, paused)) {
            self.events.push(t, PFC_TICKS, Event::PfcWatch);
        }
    }

    /// The watchdog's tick: storms are noted; a deadlock ends the run.
    fn pfc_watch_tick(&mut self) {
        let Some(w) = self.pfc_watch.as_mut() else { return };
        let ports = &self.ports;
        match w.tick(self.now, |p| holds_paused_data(&ports[p])) {
            Some(t) => self.events.push(t, PFC_TICKS, Event::PfcWatch),
            None => self.halted = w.deadlock.is_some(),
        }
    }

    fn port_name(&self, port: usize) -> PortName {
        let p = &self.ports[port];
        PortName { port: port as u32, node: self.host_names[p.node].clone(), peer: self.host_names[p.peer_node].clone() }
    }

    /// Creates both endpoints of flow `f` in their hosts' QP tables and starts both: each is
    /// served as after an input (its first packets, its timers).
    fn start_flow(&mut self, f: usize) {
        let (src, dst) = (self.conns[f].src_nic as usize, self.conns[f].dst_nic as usize);
        // A partition places the ends on its own hosts only.
        let owned = [self.owns(self.nic_node(src)), self.owns(self.nic_node(dst))];
        if owned == [false, false] {
            return;
        }
        let line = self.ports[self.nics[src].port].rate;
        let (tx, rx) = self.template.endpoints(self.conns[f].spec, line, self.bdp_packets, self.net);
        let mut place = |nic: usize, endpoint: Endpoint, owned: bool| {
            if !owned {
                return UNSET;
            }
            let qps = &mut self.nics[nic].qps;
            qps.push(Qp { conn: f as u32, endpoint, active: false, timer_armed: None, on_chip: false, band: 0, held: None });
            End { nic: nic as u32, qp: (qps.len() - 1) as u32 }
        };
        let ends = [place(src, Endpoint::Requester(tx), owned[0]), place(dst, Endpoint::Responder(rx), owned[1])];
        self.conns[f].ends = ends;
        self.obs.flow_start(self.now, f as u32, &self.conns[f].spec);
        for end in ends.into_iter().filter(|&e| e != UNSET) {
            self.start_end(end.nic as usize, end.qp as usize);
        }
    }

    /// Flow `f` finished (its sender saw every byte acknowledged): the workload starts the
    /// flows that waited for that (when, it says).
    pub(super) fn flow_finished(&mut self, f: usize) {
        self.flow_done(f, Done::Sent);
    }

    /// Flow `f`'s receiver delivered every byte: recorded, and the workload starts the flows
    /// that waited for that.
    pub(super) fn flow_received(&mut self, f: usize) {
        self.conns[f].received = Some(self.now);
        self.flow_done(f, Done::Received);
    }

    fn flow_done(&mut self, f: usize, on: Done) {
        let (conns, events) = (&mut self.conns, &mut self.events);
        self.dependencies.done(f, on, self.now, |g, at| {
            conns[g].def.start = at;
            events.push(at, FLOW_STARTS, Event::FlowStart(g as u32));
        });
    }

    fn endpoint(&self, end: End) -> Option<&Endpoint> {
        (end != UNSET).then(|| &self.nics[end.nic as usize].qps[end.qp as usize].endpoint)
    }

    fn sample(&mut self) {
        self.record_sample();
        let next = self.now + self.sample_interval;
        if next <= self.end {
            self.events.push(next, SAMPLES, Event::Sample);
        }
    }

    /// Rates over the time since the last sample (a full interval, or the run's last,
    /// partial one) and the watched queues now.
    fn record_sample(&mut self) {
        let dt = self.now - self.last_sample;
        self.last_sample = self.now;
        let rate = |now: u64, before: u64| (now - before) as f64 * 8.0 / dt.as_secs_f64();
        let shard = self.shard.as_deref();
        let owns = |node: usize| shard.is_none_or(|s| s.owns(node));
        for (nic, h, last, last_wire) in self.sampled.iter_mut().filter(|s| owns(s.1)) {
            let (cur, wire) = (self.nics[*nic].rx_bytes, self.nics[*nic].rx_wire_bytes);
            let sample = Sample { time: self.now, host: *h as u32, bps: rate(cur, *last), wire_bps: rate(wire, *last_wire) };
            (*last, *last_wire) = (cur, wire);
            self.samples.push(sample);
        }
        if let Some(l) = self.links.as_mut() {
            l.sample(self.now, dt, &mut self.ports);
        }
        for (i, &p) in self.watched.iter().enumerate() {
            if !owns(self.ports[p].node) {
                continue;
            }
            let port = &mut self.ports[p];
            let last = &mut self.watched_last[i];
            // A port the fabric statistics sample too had its peak taken there.
            let peak = self.links.as_ref().and_then(|l| l.interval_peak(p)).unwrap_or_else(|| port.take_peak());
            let sample = QueueSample {
                time: self.now,
                link: i as u32,
                bytes: port.held_bytes,
                peak,
                tx_bps: rate(port.tx_bytes, last.0),
                ecn_marks: port.ecn_marks - last.1,
                pauses_sent: port.pauses_sent - last.2,
                paused: port.paused,
            };
            *last = (port.tx_bytes, port.ecn_marks, port.pauses_sent);
            self.queue_samples.push(sample);
        }
        for &f in &self.watched_flows {
            // Before its start a flow has no ends yet: no row.
            let ends = self.conns[f as usize].ends;
            let Some(v) = ends.iter().filter_map(|&e| self.endpoint(e)).find_map(Endpoint::cc_view) else { continue };
            let window = crate::transport::common::congestion::CongestionControl::window(v.cc);
            self.cc_samples.push(CcSample { time: self.now, flow: f, rate_bps: v.rate.0 as f64, window, in_flight: v.in_flight, done: v.done });
        }
        let (now, pool_samples) = (self.now, &mut self.pool_samples);
        for &(nic, host) in &self.watched_pools {
            self.nics[nic].sample_pools(|occupancy| pool_samples.push(PoolSample { time: now, host: host as u32, occupancy }));
        }
    }

    fn finish(self, end: Time) -> RunOutput {
        let mut c = self.c.clone();
        let name = |n: usize| self.host_names[n].clone();
        let mut flows = Vec::with_capacity(self.conns.len());
        for (i, f) in self.conns.iter().enumerate() {
            let mut record = EndRecord::default();
            let mut finish = None;
            for end in f.ends.into_iter().filter(|&e| e != UNSET) {
                let ep = &self.nics[end.nic as usize].qps[end.qp as usize].endpoint;
                record = record.merge(ep.record());
                // An end stamps completion with its host's clock; results are in true time.
                finish = finish.or(ep.completed_at().map(|t| self.nics[end.nic as usize].clock.global(t)));
            }
            c.bad_deliveries += record.bad_deliveries;
            let (stats, delivered) = (record.sent, record.delivered_bytes);
            let (stored, copied, rx_dropped) = (record.reorder_stored_bytes, record.reorder_copied_bytes, record.rx_dropped);
            let active_until = finish.unwrap_or(end);
            let span = active_until.saturating_sub(f.def.start);
            let goodput_bps = if span.0 > 0 { delivered as f64 * 8.0 / span.as_secs_f64() } else { 0.0 };
            flows.push(FlowRecord {
                flow_id: i as u32,
                src: name(f.def.src),
                dst: name(f.def.dst),
                size_bytes: if f.def.size == FlowSpec::ENDLESS { 0 } else { f.def.size },
                // A flow that never started would have started at or after the run's end
                // (one still waiting for others has only its earliest start).
                start: if f.ends[0] == UNSET { f.def.start.max(end) } else { f.def.start },
                finish,
                received: f.received,
                ideal_fct: f.ideal_fct,
                delivered_bytes: delivered,
                sent_bytes: stats.sent_bytes,
                retx_bytes: stats.retx_bytes,
                notifications: stats.notifications,
                timeouts: stats.timeouts,
                cnps: stats.cnps,
                reorder_stored_bytes: stored,
                reorder_copied_bytes: copied,
                rx_dropped,
                drops: f.drops,
                drops_by_kind: f.drops_by_kind,
                first_arrival: f.first_arrival,
                goodput_bps,
                job: self.jobs.get(f.def.job as usize).cloned().unwrap_or_default(),
            });
        }
        let (pfc_deadlock, pfc_storms) = match &self.pfc_watch {
            Some(w) => (
                w.deadlock.as_ref().map(|d| PfcDeadlock { at: d.at, ports: d.ports.iter().map(|&p| self.port_name(p)).collect() }),
                w.storms.iter().map(|s| PfcStorm { port: self.port_name(s.port), first_at: s.first_at, windows: s.windows, max_fraction: s.max_fraction }).collect(),
            ),
            None => (None, Vec::new()),
        };
        let mut scheme_report = NicAgent::report(self.nics.iter().map(|n| &n.agent));
        let controllers = self.conns.iter().flat_map(|f| f.ends).filter_map(|e| self.endpoint(e)).filter_map(Endpoint::cc_view).map(|v| v.cc);
        scheme_report.extend(crate::transport::cc_report(controllers));
        let (collectives, collective_steps) = match &self.collectives {
            // Steps end when the data is received: the ideal FCT less the last ACK's way back.
            Some(plan) => collective::summarise(plan, &flows, |f, bytes| {
                let c = &self.conns[f];
                let back = path::propagation(&self.ports, &self.routes, self.host_port(c.def.src), c.def.dst);
                self.ideal_fct(c.def.src, c.def.dst, &FlowSpec { size: bytes, ..c.spec }) - back
            }),
            None => (Vec::new(), Vec::new()),
        };
        let is_switch: Vec<bool> = self.is_host.iter().map(|h| !h).collect();
        let links = self.links.map(|l| l.finish(end, &self.ports, &self.host_names, &is_switch));
        RunOutput {
            links,
            collectives,
            collective_steps,
            scheme_report,
            memory: self.memory,
            pfc_deadlock,
            pfc_storms,
            warnings: self.warnings,
            flows,
            samples: self.samples,
            queue_names: self.queue_names,
            queue_samples: self.queue_samples,
            pool_samples: self.pool_samples,
            cc_samples: self.cc_samples,
            counters: c,
            end,
            duration: self.end,
            host_names: self.host_names,
            packets_in_flight: self.ports.iter().map(|p| p.packets_held() as u64).sum::<u64>()
                + self.nics.iter().map(|n| n.rx.waiting.len() as u64).sum::<u64>(),
            pool_high_water: self.live_high_water,
        }
    }
}

/// Whether some paused data queue of `port` holds a packet (what the PFC watchdog asks).
fn holds_paused_data(port: &Port) -> bool {
    (1..port.queue_count()).any(|q| port.paused >> q & 1 == 1 && port.queued_bytes[q] > 0)
}

/// The progress callback asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;
