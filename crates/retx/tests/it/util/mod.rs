//! A two-endpoint harness in the manner of quinn-proto's `tests/util.rs` `Pair`: one sender and
//! one receiver joined by two in-memory one-way channels, driven by a tiny event loop over a
//! virtual clock. Nothing here is part of the transport: loss, duplication, reordering and ECN
//! marks are applied to the channels, so the protocol code never holds a test hook.
//!
//! Each channel serialises packets one at a time at the link rate (data: payload + 48 header
//! bytes; control: 60 bytes) and delivers them after a fixed propagation delay plus an optional
//! random jitter (which reorders). The loop always advances to the earliest of: the next
//! channel delivery, either end's timer, either NIC agent's timer, either end's or agent's
//! pacing release. Ties at one instant are broken as: deliveries first (in send order), then
//! the sender's timer, the receiver's, the sending NIC agent's, the receiving one's, then
//! transmission. The harness is symmetric as the engine is: both ends are polled for the wire
//! (the receiver when it says it wants it, so a receiver may speak first), each side has a NIC
//! agent whose wake list and outbox are drained after every call and whose paced sends are
//! polled ahead of its end's, and a test may put any packet on either channel
//! ([`Pair::inject`]).
//!
//! A flow that has nothing pending (no packet in flight, no timer, nothing to send) and is not
//! finished has stalled: [`Pair::try_run`] reports it as [`Failure::Stall`].

#![allow(dead_code)]

pub mod alloc;
pub mod exact;
pub mod iverilog;
pub mod nets;
pub mod props;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use retx::sim::units::{Rate, Time};
use retx::transport::common::psn::PsnSpace;
use retx::transport::Receiver;
use retx::transport::common::poll::{Transmit, Want};
use retx::transport::common::segment::{Ecn, Ext, SegKind, Segment};
use retx::transport::Sender;
use retx::transport::{FlowSpec, NicAgent, CONTROL_BYTES, DATA_HEADER_BYTES};
use retx::Scenario;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Default link: 40 Gbps, 1 us one-way delay.
pub const LINE: Rate = Rate::gbps(40);
pub const DELAY: Time = Time::from_us(1);

/// Transport sections for one scheme: `[transport]` naming `recovery` and `cc`, then the
/// `[recovery.<recovery>]` table holding `extra` (its keys, optionally followed by further
/// tables such as `[nic]`). An empty table leaves every parameter at its default.
pub fn transport_toml(recovery: &str, cc: &str, extra: &str) -> String {
    format!("[transport]\nrecovery = \"{recovery}\"\ncc = \"{cc}\"\n[recovery.{recovery}]\n{extra}")
}

/// A scenario running `recovery` without congestion control; `extra` as in [`transport_toml`].
pub fn scenario(recovery: &str, extra: &str) -> Scenario {
    scenario_toml(&transport_toml(recovery, "none", extra))
}

/// Builds a scenario from transport sections (`[transport]`, `[recovery.*]`, `[nic]`, `[cc.*]`),
/// adding the fields a scenario needs but the transport ignores.
pub fn scenario_toml(sections: &str) -> Scenario {
    let text = format!(
        "name = \"pair\"\nduration = \"1s\"\n{sections}\n[topology]\nkind = \"single-switch\"\n\
         [workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
    );
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{text}"))
}

/// A flow of `npkts` full packets of [`exact::MTU`] bytes starting at PSN `initial_psn`.
pub fn packets(npkts: u64, initial_psn: u32) -> FlowSpec {
    spec(npkts * exact::MTU as u64, exact::MTU, initial_psn)
}

/// A flow of `size` bytes in packets of `mtu` bytes starting at PSN `initial_psn`.
pub fn spec(size: u64, mtu: u32, initial_psn: u32) -> FlowSpec {
    FlowSpec { size, mtu, initial_psn, key: 0x5eed_0000 ^ size ^ (initial_psn as u64) << 32, marking: Default::default() }
}

/// Which way a packet travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Sender to receiver (data).
    Data,
    /// Receiver to sender (ACK, NAK, SACK, CNP).
    Ctrl,
}

/// What a scripted rule does to the packet it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Drop,
    /// Set the ECN congestion-experienced bit (data packets).
    MarkEcn,
}

/// A deterministic fault: "drop the 1st transmission of data index 5", "drop the 1st NAK",
/// "drop the 1st ACK whose cumulative index is 20", "mark data index 3".
///
/// A rule counts the packets it matches (kind, and index if given); it acts on the `nth`
/// match (1-based), or on every match.
#[derive(Clone, Debug)]
pub struct Rule {
    kind: SegKind,
    /// Absolute index: of the data packet, or the cumulative index a control packet names.
    index: Option<u64>,
    nth: Option<u32>,
    action: Action,
    seen: u32,
    pub fired: u32,
}

impl Rule {
    /// Drops the first transmission of data packet `index`.
    pub fn drop_data(index: u64) -> Rule {
        Rule { kind: SegKind::Data, index: Some(index), nth: Some(1), action: Action::Drop, seen: 0, fired: 0 }
    }
    /// Drops the first control packet of `kind`.
    pub fn drop_ctrl(kind: SegKind) -> Rule {
        assert!(kind.is_control());
        Rule { kind, index: None, nth: Some(1), action: Action::Drop, seen: 0, fired: 0 }
    }
    /// Drops the first packet of `kind` (any index); see [`Rule::every`].
    pub fn drop_kind(kind: SegKind) -> Rule {
        Rule { kind, index: None, nth: Some(1), action: Action::Drop, seen: 0, fired: 0 }
    }
    /// Marks the first transmission of data packet `index` with ECN.
    pub fn mark_ecn(index: u64) -> Rule {
        Rule { kind: SegKind::Data, index: Some(index), nth: Some(1), action: Action::MarkEcn, seen: 0, fired: 0 }
    }
    /// Only packets naming this (cumulative) index.
    pub fn index(mut self, index: u64) -> Rule {
        self.index = Some(index);
        self
    }
    /// Acts on the `n`th match (1 = first transmission) instead.
    pub fn nth(mut self, n: u32) -> Rule {
        assert!(n >= 1);
        self.nth = Some(n);
        self
    }
    /// Acts on every match.
    pub fn every(mut self) -> Rule {
        self.nth = None;
        self
    }
    fn apply(&mut self, kind: SegKind, index: u64) -> Option<Action> {
        if kind != self.kind || self.index.is_some_and(|i| i != index) {
            return None;
        }
        self.seen += 1;
        if self.nth.is_none_or(|n| n == self.seen) {
            self.fired += 1;
            Some(self.action)
        } else {
            None
        }
    }
}

/// Random faults on one direction, drawn from a seeded RNG.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Probability that a packet is lost.
    pub loss: f64,
    /// Probability that a (surviving) packet is delivered twice.
    pub dup: f64,
    /// Each delivery is delayed by a uniform extra 0..=jitter (reorders packets).
    pub jitter: Time,
}

/// One packet put on a channel.
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    /// When it started serialising.
    pub sent: Time,
    pub seg: Segment,
    /// Data: the packet's absolute index. Control: the cumulative index it names.
    pub index: u64,
    /// SACK: the absolute index of the out-of-order packet it reports.
    pub aux: Option<u64>,
    /// When it reached the other end (first copy); None if it was dropped.
    pub arrived: Option<Time>,
    /// Data only: the highest cumulative index the sender had received when this was sent.
    pub cum_at_sender: u64,
}

/// Why a run did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Nothing in flight, no timer, nothing to send, and the flow is not done.
    Stall { at: Time, delivered: u64, npkts: u64 },
    /// Still busy at the time limit.
    TimeLimit { at: Time, delivered: u64, npkts: u64 },
}

struct Channel {
    rate: Rate,
    delay: Time,
    busy_until: Time,
    faults: Faults,
    rng: Pcg64,
}

impl Channel {
    fn new(rate: Rate, delay: Time, seed: u64) -> Channel {
        Channel { rate, delay, busy_until: Time::ZERO, faults: Faults::default(), rng: Pcg64::seed_from_u64(seed) }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: Time,
    seq: u64,
    to_receiver: bool,
    log: usize,
}

/// A sender and a receiver on a virtual clock.
pub struct Pair {
    pub now: Time,
    pub sender: Sender,
    pub receiver: Receiver,
    /// NIC-wide state of the sending host and of the receiving host.
    pub tx_nic: NicAgent,
    pub rx_nic: NicAgent,
    spec: FlowSpec,
    psn: PsnSpace,
    data_ch: Channel,
    ctrl_ch: Channel,
    rules: Vec<Rule>,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    /// Every data packet the sender emitted, in order.
    pub data: Vec<Wire>,
    /// Every control packet the receiver emitted, in order.
    pub ctrl: Vec<Wire>,
    /// Times the sender's timer was handled.
    pub timer_calls: Vec<Time>,
    /// Times the receiver's timer was handled.
    pub rx_timer_calls: Vec<Time>,
    /// Pacing releases: the sender's, the receiver's, each NIC agent's (tx, rx).
    wait: Option<Time>,
    rx_wait: Option<Time>,
    agent_wait: [Option<Time>; 2],
    highest_sent: u64,
    cum_at_sender: u64,
    pub limit: Time,
    pub steps: u64,
}

impl Pair {
    /// Builds a pair over a 40 Gbps, 1 us link from transport sections of a scenario.
    pub fn new(sections: &str, spec: FlowSpec) -> Pair {
        Pair::with_link(&scenario_toml(sections), spec, LINE, DELAY)
    }

    /// The pair of the scripted exchanges: `npkts` full packets (see [`packets`]) over the
    /// default link.
    pub fn packets(s: &Scenario, npkts: u64, initial_psn: u32) -> Pair {
        Pair::with_link(s, packets(npkts, initial_psn), LINE, DELAY)
    }

    pub fn with_link(s: &Scenario, spec: FlowSpec, rate: Rate, delay: Time) -> Pair {
        // One BDP in packets, as the simulator computes it (used when bitmap_packets = 0).
        let rtt = delay + delay + rate.serialization(spec.mtu as u64);
        let bdp = (rate.0 as u128 * rtt.0 as u128 / 8 / 1_000_000_000_000).div_ceil((spec.mtu + DATA_HEADER_BYTES) as u128);
        let template = retx::config::template::transport(s);
        let (sender, mut receiver) = template.endpoints(spec, rate, (bdp as u32).max(1), Default::default());
        receiver.ctx.log = Some(Vec::new());
        Pair {
            now: Time::ZERO,
            sender,
            receiver,
            tx_nic: NicAgent::new(&template),
            rx_nic: NicAgent::new(&template),
            spec,
            psn: PsnSpace::new(spec.initial_psn),
            data_ch: Channel::new(rate, delay, 1),
            ctrl_ch: Channel::new(rate, delay, 2),
            rules: Vec::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            data: Vec::new(),
            ctrl: Vec::new(),
            timer_calls: Vec::new(),
            rx_timer_calls: Vec::new(),
            wait: None,
            rx_wait: None,
            agent_wait: [None; 2],
            highest_sent: 0,
            cum_at_sender: 0,
            limit: Time::from_ms(1_000),
            steps: 0,
        }
    }

    pub fn script(&mut self, rule: Rule) -> &mut Self {
        self.rules.push(rule);
        self
    }

    /// Random faults per direction; `seed` makes them reproducible.
    pub fn faults(&mut self, data: Faults, ctrl: Faults, seed: u64) -> &mut Self {
        self.data_ch.faults = data;
        self.ctrl_ch.faults = ctrl;
        self.data_ch.rng = Pcg64::seed_from_u64(seed);
        self.ctrl_ch.rng = Pcg64::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15);
        self
    }

    pub fn spec(&self) -> FlowSpec {
        self.spec
    }

    pub fn npkts(&self) -> u64 {
        self.spec.npkts()
    }

    /// Wire time of a data packet of `payload` bytes at the link rate.
    pub fn data_ser(&self, payload: u32) -> Time {
        self.data_ch.rate.serialization((payload + DATA_HEADER_BYTES) as u64)
    }

    pub fn ctrl_ser(&self) -> Time {
        self.ctrl_ch.rate.serialization(CONTROL_BYTES as u64)
    }

    pub fn is_done(&self) -> bool {
        self.sender.is_done() && self.receiver.is_done()
    }

    /// The receiver's delivery log.
    pub fn delivered(&self) -> &[u64] {
        self.receiver.ctx.log.as_deref().expect("log enabled")
    }

    /// Data packets sent with `index`, in order.
    pub fn sends_of(&self, index: u64) -> Vec<&Wire> {
        self.data.iter().filter(|w| w.index == index).collect()
    }

    /// Control packets of `kind`, in order.
    pub fn ctrl_of(&self, kind: SegKind) -> Vec<&Wire> {
        self.ctrl.iter().filter(|w| w.seg.kind == kind).collect()
    }

    /// Indices of the data packets sent, in order.
    pub fn sent_indices(&self) -> Vec<u64> {
        self.data.iter().map(|w| w.index).collect()
    }

    /// Runs until the flow is done; panics with a summary on a stall or at the time limit.
    pub fn run(&mut self) -> Time {
        match self.try_run() {
            Ok(t) => t,
            Err(f) => panic!("{f:?}\nsent: {:?}\ncontrol: {:?}", self.brief_data(), self.brief_ctrl()),
        }
    }

    /// Runs until the flow is done; returns the time it finished.
    pub fn try_run(&mut self) -> Result<Time, Failure> {
        loop {
            if self.is_done() {
                return Ok(self.now);
            }
            self.step_until(self.limit)?;
        }
    }

    /// Runs every event up to and including `t` (or until done); the clock ends at `t`.
    pub fn run_until(&mut self, t: Time) -> Result<(), Failure> {
        while !self.is_done() {
            match self.next_event_time() {
                Some(next) if next <= t => self.step_until(t)?,
                _ => break,
            }
        }
        self.now = self.now.max(t);
        Ok(())
    }

    fn next_event_time(&mut self) -> Option<Time> {
        self.pump();
        let arrival = self.queue.peek().map(|Reverse(f)| f.at);
        let timers = [self.sender.poll_timeout(), self.receiver.poll_timeout(), self.tx_nic.poll_timeout(), self.rx_nic.poll_timeout()];
        let waits = [self.wait, self.rx_wait, self.agent_wait[0], self.agent_wait[1]];
        [arrival].into_iter().chain(timers).chain(waits).flatten().min()
    }

    /// Puts `seg` on a channel now, as if `dir`'s sending end had sent it (a receiver that
    /// speaks first, a stray notification): logged and subject to the channel's rules.
    pub fn inject(&mut self, dir: Dir, seg: Segment) {
        let index = match dir {
            Dir::Data => self.psn.unwrap(seg.psn, self.highest_sent).unwrap_or(0),
            Dir::Ctrl => self.psn.unwrap(seg.psn, self.receiver.ctx.expected()).unwrap_or(0),
        };
        self.put(dir, seg, index);
    }

    /// Handles the earliest pending thing.
    fn step_until(&mut self, limit: Time) -> Result<(), Failure> {
        self.steps += 1;
        let Some(t) = self.next_event_time() else {
            return Err(Failure::Stall { at: self.now, delivered: self.receiver.ctx.expected(), npkts: self.npkts() });
        };
        if t > limit {
            return Err(Failure::TimeLimit { at: self.now, delivered: self.receiver.ctx.expected(), npkts: self.npkts() });
        }
        self.now = self.now.max(t);
        if self.queue.peek().is_some_and(|Reverse(f)| f.at <= self.now) {
            let Reverse(f) = self.queue.pop().expect("peeked");
            self.deliver(f);
        } else if self.sender.poll_timeout().is_some_and(|d| d <= self.now) {
            self.timer_calls.push(self.now);
            self.sender.handle_timeout(self.now, &mut self.tx_nic.call(0));
            self.drain_agents();
        } else if self.receiver.poll_timeout().is_some_and(|d| d <= self.now) {
            self.rx_timer_calls.push(self.now);
            self.receiver.handle_timeout(self.now, &mut self.rx_nic.call(0));
            self.send_responses();
        } else if self.tx_nic.poll_timeout().is_some_and(|d| d <= self.now) {
            self.tx_nic.handle_timeout(self.now);
            self.drain_agents();
        } else if self.rx_nic.poll_timeout().is_some_and(|d| d <= self.now) {
            self.rx_nic.handle_timeout(self.now);
            self.drain_agents();
        }
        // Otherwise a pacer released: the next pump sends.
        Ok(())
    }

    /// Offers the wire to both sides: each NIC agent's paced sends first, then its end (the
    /// receiver only when it says it wants the wire).
    fn pump(&mut self) {
        self.drain_agents();
        self.pump_agent(Dir::Data);
        self.pump_sender();
        self.pump_agent(Dir::Ctrl);
        self.rx_wait = None;
        while self.receiver.wants_wire() {
            match self.receiver.poll_transmit(self.now, &mut self.rx_nic.call(0), Want::Any) {
                Transmit::Send(c) => {
                    let index = self.psn.unwrap(c.psn, self.receiver.ctx.expected()).unwrap_or(0);
                    self.put(Dir::Ctrl, c, index);
                    self.drain_agents();
                }
                Transmit::WaitUntil(t) => {
                    assert!(t > self.now, "receiver WaitUntil({t:?}) not in the future at {:?}", self.now);
                    self.rx_wait = Some(t);
                    break;
                }
                Transmit::Idle => break,
            }
        }
    }

    /// The paced sends of the NIC agent on `side`'s host (Data: the sender's, Ctrl: the
    /// receiver's), onto that side's channel.
    fn pump_agent(&mut self, side: Dir) {
        let slot = (side == Dir::Ctrl) as usize;
        self.agent_wait[slot] = None;
        loop {
            let nic = if side == Dir::Data { &mut self.tx_nic } else { &mut self.rx_nic };
            match nic.poll_transmit(self.now) {
                retx::transport::common::agent::AgentTransmit::Send { seg, .. } => self.inject(side, seg),
                retx::transport::common::agent::AgentTransmit::WaitUntil(t) => {
                    self.agent_wait[slot] = Some(t);
                    return;
                }
                retx::transport::common::agent::AgentTransmit::Idle => return,
            }
        }
    }

    /// What calls left with either NIC agent: its packets go out at once and the ends it woke
    /// take a `handle_timeout` (their news), until nothing is left.
    fn drain_agents(&mut self) {
        loop {
            if let Some((_, seg)) = self.tx_nic.next_sent() {
                self.inject(Dir::Data, seg);
            } else if let Some((_, seg)) = self.rx_nic.next_sent() {
                self.inject(Dir::Ctrl, seg);
            } else if self.tx_nic.next_woken().is_some() {
                self.sender.handle_timeout(self.now, &mut self.tx_nic.call(0));
            } else if self.rx_nic.next_woken().is_some() {
                self.receiver.handle_timeout(self.now, &mut self.rx_nic.call(0));
                self.send_responses();
            } else {
                return;
            }
        }
    }

    /// The receiver's queued responses, onto the control channel.
    fn send_responses(&mut self) {
        while let Transmit::Send(c) = self.receiver.poll_transmit(self.now, &mut self.rx_nic.call(0), Want::Responses) {
            let reference = self.receiver.ctx.expected();
            let index = self.psn.unwrap(c.psn, reference).expect("control PSN in range");
            self.put(Dir::Ctrl, c, index);
        }
    }

    fn pump_sender(&mut self) {
        loop {
            match self.sender.poll_transmit(self.now, &mut self.tx_nic.call(0), Want::Any) {
                Transmit::Send(seg) => {
                    self.wait = None;
                    let index = self.psn.unwrap(seg.psn, self.highest_sent).expect("sender PSN in range");
                    self.highest_sent = self.highest_sent.max(index);
                    self.put(Dir::Data, seg, index);
                }
                Transmit::WaitUntil(t) => {
                    assert!(t > self.now, "WaitUntil({t:?}) not in the future at {:?}", self.now);
                    self.wait = Some(t);
                    return;
                }
                Transmit::Idle => {
                    self.wait = None;
                    return;
                }
            }
        }
    }

    fn put(&mut self, dir: Dir, mut seg: Segment, index: u64) {
        let aux = match seg.ext {
            Ext::Sack(p) => Some(self.psn.unwrap(p, index).expect("SACK PSN in range")),
            _ => None,
        };
        let mut dropped = false;
        for r in &mut self.rules {
            match r.apply(seg.kind, index) {
                Some(Action::Drop) => dropped = true,
                Some(Action::MarkEcn) => seg.ecn = Ecn::Ce,
                None => {}
            }
        }
        let (ch, bytes) = match dir {
            Dir::Data => (&mut self.data_ch, (seg.payload + DATA_HEADER_BYTES) as u64),
            Dir::Ctrl => (&mut self.ctrl_ch, CONTROL_BYTES as u64),
        };
        let start = self.now.max(ch.busy_until);
        ch.busy_until = start + ch.rate.serialization(bytes);
        let base = ch.busy_until + ch.delay;
        let f = ch.faults;
        if !dropped && f.loss > 0.0 && ch.rng.gen_bool(f.loss) {
            dropped = true;
        }
        let mut arrivals = Vec::new();
        if !dropped {
            let copies = if f.dup > 0.0 && ch.rng.gen_bool(f.dup) { 2 } else { 1 };
            for _ in 0..copies {
                let jitter = if f.jitter.0 > 0 { Time(ch.rng.gen_range(0..=f.jitter.0)) } else { Time::ZERO };
                arrivals.push(base + jitter);
            }
        }
        let log = match dir {
            Dir::Data => &mut self.data,
            Dir::Ctrl => &mut self.ctrl,
        };
        log.push(Wire {
            sent: start,
            seg,
            index,
            aux,
            arrived: arrivals.iter().copied().min(),
            cum_at_sender: self.cum_at_sender,
        });
        let slot = log.len() - 1;
        for at in arrivals {
            self.seq += 1;
            self.queue.push(Reverse(InFlight { at, seq: self.seq, to_receiver: dir == Dir::Data, log: slot }));
        }
    }

    fn deliver(&mut self, f: InFlight) {
        let now = self.now;
        if f.to_receiver {
            let seg = self.data[f.log].seg;
            self.receiver.handle_packet(now, &seg, &mut self.rx_nic.call(0));
            self.send_responses();
        } else {
            let w = self.ctrl[f.log];
            if matches!(w.seg.kind, SegKind::Ack | SegKind::Sack) {
                self.cum_at_sender = self.cum_at_sender.max(w.index);
            }
            self.sender.handle_packet(now, &w.seg, &mut self.tx_nic.call(0));
        }
        self.drain_agents();
    }

    fn brief_data(&self) -> Vec<(u64, u64, bool, bool)> {
        self.data.iter().rev().take(40).map(|w| (w.sent.0, w.index, w.seg.retransmit, w.arrived.is_some())).collect()
    }

    fn brief_ctrl(&self) -> Vec<(u64, SegKind, u64, bool)> {
        self.ctrl.iter().rev().take(40).map(|w| (w.sent.0, w.seg.kind, w.index, w.arrived.is_some())).collect()
    }
}
