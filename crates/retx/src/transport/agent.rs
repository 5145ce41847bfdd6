//! The NIC agent: state and behaviour that every queue pair of a host's NIC shares, per scheme
//! (MELO's bits pools, STRIDE's DRAM slots, a future LEFT's gather FIFOs, a host-wide pull or
//! credit pacer), and the NIC's side of the contract with its schemes (quinn's `Endpoint`
//! beside its connections; htsim's `EqdsNIC` and pull pacers).
//!
//! It talks both ways with its queue pairs:
//! - each endpoint call gets a [`NicCall`]: the agent, and which queue pair is calling (passed
//!   explicitly, so the agent can note whose work it holds);
//! - it may wake any queue pair ([`NicAgent::wake`]) and send packets itself on behalf of any
//!   (at once: [`NicAgent::send`]; paced, when the NIC offers the wire:
//!   [`NicAgent::poll_transmit`]). The engine drains its wake list and its outbox after every
//!   call, not only on its timer;
//! - it has a timer of the endpoints' shape ([`NicAgent::poll_timeout`],
//!   [`NicAgent::handle_timeout`]), on the host's clock;
//! - a packet's handling may cost the receive pipeline *occupancy* ([`NicAgent::charge`]: the
//!   packets behind it wait) and *latency* ([`NicAgent::delay`]: its own responses wait).
//!
//! Like an endpoint it is sans-IO: no clock, no queue, no event list inside.

use super::segment::Segment;
use super::{int, melo, stride, PoolOccupancy, RecoveryParams, SwapCost, Template};
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

/// What the agent sends when the NIC offers it the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentTransmit {
    /// This packet, on behalf of queue pair `qp` (its connection addresses it).
    Send { qp: u32, seg: Segment },
    /// Something to send, not before then (host clock).
    WaitUntil(Time),
    Idle,
}

/// What a scheme's own NIC-wide agent does (a host-wide pull, credit or grant pacer; a gather
/// FIFO's flush): the agent's calls with no-op defaults, one signature per event.
pub trait HostAgent {
    /// What it sends, paced, when the NIC offers the wire (on behalf of one of its queue pairs).
    fn poll_transmit(&mut self, _now: Time) -> AgentTransmit {
        AgentTransmit::Idle
    }
    /// Whether it has something to send (now or later): the NIC's port keeps polling it.
    fn wants_wire(&self) -> bool {
        false
    }
    /// Its next deadline, on the host's clock.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Its deadline passed: the queue pairs it gave work to go to `wake`.
    fn handle_timeout(&mut self, _now: Time, _wake: &mut Vec<u32>) {}
}

/// A boxed agent is one: a large agent (ExpressPass's pacer) is stored boxed in `SchemeAgent`,
/// so every NIC of every other scheme does not grow with it.
impl<T: HostAgent + ?Sized> HostAgent for Box<T> {
    #[inline]
    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        (**self).poll_transmit(now)
    }
    #[inline]
    fn wants_wire(&self) -> bool {
        (**self).wants_wire()
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        (**self).poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time, wake: &mut Vec<u32>) {
        (**self).handle_timeout(now, wake)
    }
}

/// No NIC-wide agent of its own (every user-visible scheme today): never sends, no timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAgent;

impl HostAgent for NoAgent {}

/// The scheme's own NIC-wide agent, if it has one: one line per scheme that does, and its arm
/// in `each_agent!` (endpoints reach theirs through [`NicCall`] as `nic.scheme`). Dispatch is
/// static, as for `Cc`.
#[derive(Clone, Debug)]
pub enum SchemeAgent {
    None(NoAgent),
    /// NDP's host-wide PULL pacer.
    Ndp(super::ndp::NdpPacer),
    /// Homa's receiver-side SRPT grant scheduler.
    Homa(super::homa::HomaScheduler),
    /// ExpressPass's host-wide credit pacer.
    Xpass(Box<super::xpass::XpassPacer>),
    /// LEFT's dual-state bitmap pool, gather FIFOs and scheduler.
    Left(Box<super::left_nic::LeftNic>),
    /// The test-only receiver-driven scheme's grant pacer ([`super::pull`]).
    #[cfg(test)]
    Pull(super::pull::PullPacer),
}

impl Default for SchemeAgent {
    fn default() -> Self {
        SchemeAgent::None(NoAgent)
    }
}

/// Hands a call to whichever agent a [`SchemeAgent`] holds.
macro_rules! each_agent {
    ($agent:expr, $a:ident => $e:expr) => {
        match $agent {
            SchemeAgent::None($a) => $e,
            SchemeAgent::Ndp($a) => $e,
            SchemeAgent::Homa($a) => $e,
            SchemeAgent::Xpass($a) => $e,
            SchemeAgent::Left($a) => $e,
            #[cfg(test)]
            SchemeAgent::Pull($a) => $e,
        }
    };
}

impl HostAgent for SchemeAgent {
    #[inline]
    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        each_agent!(self, a => a.poll_transmit(now))
    }
    #[inline]
    fn wants_wire(&self) -> bool {
        each_agent!(self, a => a.wants_wire())
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        each_agent!(self, a => a.poll_timeout())
    }
    fn handle_timeout(&mut self, now: Time, wake: &mut Vec<u32>) {
        each_agent!(self, a => a.handle_timeout(now, wake))
    }
}

#[derive(Clone, Debug)]
pub struct NicAgent {
    pub melo: melo::MeloPools,
    /// The run's recovery is MELO: its pools are live (every NIC holds them regardless).
    melo_in_use: bool,
    /// DRAM slots STRIDE's senders hold.
    pub stride: stride::StrideDram,
    /// The run's scheme's own NIC-wide agent (a pacer), if it has one.
    pub scheme: SchemeAgent,
    /// The INT records of the packet being handled, as the NIC's parser extracted them
    /// (empty without INT): congestion control reads them from the ACK sample.
    pub int_in: int::IntHops,
    /// Receive-pipeline occupancy the scheme charged while handling the current packet (a
    /// bitmap swap, an off-chip access): the packets behind it wait that much longer.
    pub charged: Time,
    /// Receive-pipeline latency of the current packet's handling: its responses leave that
    /// much later (the packets behind it are not held by it; charge occupancy for that).
    pub latency: Time,
    /// What the scheme declared moving a context in or out of the on-chip QP cache costs.
    pub swap_cost: SwapCost,
    /// Queue pairs the agent gave work to (a flush made their ACKs due, a grant for another
    /// flow): the engine serves each, as after an input, after the current call.
    wake: Vec<u32>,
    /// Packets the agent sends at once on behalf of a queue pair (a PULL, a credit answering
    /// a packet): the engine sends them after the current call, ahead of data.
    outbox: VecDeque<(u32, Segment)>,
    /// A NIC-wide timer the engine's unit tests arm (no scheme keeps one yet).
    #[cfg(test)]
    pub probe: super::probe::TimerProbe,
}

impl NicAgent {
    /// The agent of a NIC outside a world (the two-endpoint harnesses): a pacing agent paces
    /// as on a 100 Gbps host link with 1,000 B payloads.
    pub fn new(t: &Template) -> Self {
        Self::on_link(t, Rate::gbps(100), 1_000)
    }

    /// The agent of a NIC whose host link runs at `link`, sending `mtu`-byte payloads (what a
    /// pacing agent spaces its packets by).
    pub fn on_link(t: &Template, link: Rate, mtu: u32) -> Self {
        let (melo, melo_in_use) = match &t.recovery {
            RecoveryParams::Melo(p) => (*p, true),
            _ => (melo::MeloParams::default(), false),
        };
        NicAgent {
            melo: melo::MeloPools::new(&melo),
            melo_in_use,
            stride: stride::StrideDram::default(),
            scheme: t.agent(link, mtu),
            int_in: int::IntHops::default(),
            charged: Time::ZERO,
            latency: Time::ZERO,
            swap_cost: t.qp_swap,
            wake: Vec::new(),
            outbox: VecDeque::new(),
            #[cfg(test)]
            probe: super::probe::TimerProbe::default(),
        }
    }

    /// The agent as queue pair `qp` calls into it.
    pub fn call(&mut self, qp: u32) -> NicCall<'_> {
        NicCall::new(self, qp)
    }

    /// Charges receive-pipeline occupancy for an operation of the packet being handled.
    pub fn charge(&mut self, t: Time) {
        self.charged += t;
    }

    /// Delays the current packet's responses by `t` (an operation its answer waits for).
    pub fn delay(&mut self, t: Time) {
        self.latency += t;
    }

    /// Queue pair `qp` has news from the agent: the engine calls its `handle_timeout` (which
    /// reads the news) and serves it after the current call.
    pub fn wake(&mut self, qp: u32) {
        self.wake.push(qp);
    }

    /// Sends `seg` now on behalf of queue pair `qp` (its connection addresses it).
    pub fn send(&mut self, qp: u32, seg: Segment) {
        self.outbox.push_back((qp, seg));
    }

    /// Whether the engine has queue pairs to wake or packets to send after a call.
    #[inline]
    pub fn has_news(&self) -> bool {
        !self.wake.is_empty() || !self.outbox.is_empty()
    }

    /// The next queue pair to wake, for the engine.
    pub fn next_woken(&mut self) -> Option<u32> {
        (!self.wake.is_empty()).then(|| self.wake.remove(0))
    }

    /// The next packet to send at once, for the engine.
    pub fn next_sent(&mut self) -> Option<(u32, Segment)> {
        self.outbox.pop_front()
    }

    /// Whether the agent has paced packets to send: the host's port keeps offering it the wire.
    #[inline]
    pub fn wants_wire(&self) -> bool {
        self.scheme.wants_wire()
    }

    /// What the agent sends, paced, when the NIC offers the wire (ahead of its queue pairs):
    /// its scheme agent's (nothing for every user-visible scheme today).
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        self.scheme.poll_transmit(now)
    }

    /// When the agent next needs [`NicAgent::handle_timeout`], on the host's clock: the
    /// earliest deadline of the schemes' NIC-wide timers. None for every user-visible scheme
    /// today, so the engine schedules nothing.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        #[cfg(test)]
        if let Some(t) = self.probe.at {
            return Some(t);
        }
        self.scheme.poll_timeout()
    }

    /// A NIC-wide deadline passed (`now`: the host's clock, at or after
    /// [`NicAgent::poll_timeout`]). Queue pairs the timeout gave work to are woken
    /// ([`NicAgent::wake`], by the number their [`NicCall`] named when they queued it).
    pub fn handle_timeout(&mut self, now: Time) {
        #[cfg(test)]
        {
            let mut woken = Vec::new();
            self.probe.fire(now, &mut woken);
            self.wake.extend(woken);
        }
        if self.scheme.poll_timeout().is_some_and(|t| t <= now) {
            self.scheme.handle_timeout(now, &mut self.wake);
        }
    }

    /// The schemes' shared on-chip structures on this NIC now, for the `[output] pools` time
    /// series: each one's occupancy, its peak since the previous call (which starts a new
    /// interval) and its capacity.
    pub fn sample_pools(&mut self, mut out: impl FnMut(PoolOccupancy)) {
        if self.melo_in_use {
            for (pool, p) in [("melo_rx", &mut self.melo.rx), ("melo_tx", &mut self.melo.tx)] {
                let peak = p.take_interval_peak() as u64;
                out(PoolOccupancy { pool, unit: "blocks", used: p.used_blocks() as u64, peak, capacity: p.blocks() as u64 });
            }
        }
    }

    /// Figures the schemes report about their NIC-wide state over every NIC of a run:
    /// (name, value), e.g. the peak share of MELO's pools.
    pub fn report<'a>(nics: impl Iterator<Item = &'a NicAgent>) -> Vec<(&'static str, f64)> {
        let nics: Vec<&NicAgent> = nics.collect();
        let mut report = melo::MeloPools::report(nics.iter().map(|n| &n.melo));
        report.extend(stride::StrideDram::report(nics.iter().map(|n| &n.stride)));
        report.extend(super::xpass::report(nics.iter().filter_map(|n| match &n.scheme {
            SchemeAgent::Xpass(p) => Some(&**p),
            _ => None,
        })));
        report.extend(super::left_nic::LeftNic::report(nics.iter().filter_map(|n| match &n.scheme {
            SchemeAgent::Left(l) => Some(&**l),
            _ => None,
        })));
        report
    }
}


/// One queue pair's call into its NIC: the agent, and which queue pair is calling. Endpoints
/// get one with every input; it reads as the agent itself (`Deref`).
pub struct NicCall<'a> {
    agent: &'a mut NicAgent,
    caller: u32,
}

impl<'a> NicCall<'a> {
    pub fn new(agent: &'a mut NicAgent, caller: u32) -> Self {
        NicCall { agent, caller }
    }

    /// The queue pair calling (its number on this NIC).
    pub fn caller(&self) -> u32 {
        self.caller
    }
}

impl Deref for NicCall<'_> {
    type Target = NicAgent;
    fn deref(&self) -> &NicAgent {
        self.agent
    }
}

impl DerefMut for NicCall<'_> {
    fn deref_mut(&mut self) -> &mut NicAgent {
        self.agent
    }
}
