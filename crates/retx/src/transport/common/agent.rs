//! The NIC's side of the contract with its schemes (quinn's `Endpoint` beside its connections;
//! htsim's `EqdsNIC` and pull pacers): what every queue pair of a host's NIC shares.
//!
//! Two parts, so that nothing here names a scheme:
//! - [`NicState`], the NIC's own: the receive pipeline's occupancy ([`NicState::charge`]: the
//!   packets behind wait) and latency ([`NicState::delay`]: this packet's responses wait), the
//!   queue pairs to wake ([`NicState::wake`]) and the packets to send at once on their behalf
//!   ([`NicState::send`]), which the engine drains after every call;
//! - the scheme's own NIC-wide agent (a [`HostAgent`]: a host-wide pull, credit or grant pacer,
//!   LEFT's gather FIFOs, MELO's bits pools, STRIDE's DRAM slots), stored by the registry
//!   (`transport::schemes`) and reached by an endpoint as its concrete type with
//!   [`NicCall::agent`].
//!
//! Every endpoint call gets a [`NicCall`]: both parts, and which queue pair is calling (passed
//! explicitly, so the agent can note whose work it holds). Like an endpoint, it is sans-IO: no
//! clock, no queue, no event list inside.

use super::flow::{PoolOccupancy, SwapCost};
use super::int;
use super::segment::Segment;
use crate::sim::units::Time;
use std::any::Any;
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
/// FIFO's flush; a shared pool): the agent's calls with no-op defaults, one signature per event.
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
    /// Its shared on-chip structures now, for the `[output] pools` series: each one's
    /// occupancy, its peak since the previous call (which starts a new interval), its capacity.
    fn sample_pools(&mut self, _out: &mut dyn FnMut(PoolOccupancy)) {}
}

/// A boxed agent is one: a large agent (ExpressPass's pacer) is stored boxed, so every NIC of
/// every other scheme does not grow with it.
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
    fn sample_pools(&mut self, out: &mut dyn FnMut(PoolOccupancy)) {
        (**self).sample_pools(out)
    }
}

/// No NIC-wide agent of its own (most schemes): never sends, no timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAgent;

impl HostAgent for NoAgent {}

/// The NIC's own state beside its queue pairs, whatever the scheme.
#[derive(Clone, Debug, Default)]
pub struct NicState {
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
    /// Packets sent at once on behalf of a queue pair (a PULL, a credit answering a packet):
    /// the engine sends them after the current call, ahead of data.
    outbox: VecDeque<(u32, Segment)>,
    /// A NIC-wide timer the engine's unit tests arm (no scheme keeps one here).
    #[cfg(test)]
    pub probe: probe::TimerProbe,
}

impl NicState {
    pub fn new(swap_cost: SwapCost) -> Self {
        NicState { swap_cost, ..NicState::default() }
    }

    /// Charges receive-pipeline occupancy for an operation of the packet being handled.
    pub fn charge(&mut self, t: Time) {
        self.charged += t;
    }

    /// Delays the current packet's responses by `t` (an operation its answer waits for).
    pub fn delay(&mut self, t: Time) {
        self.latency += t;
    }

    /// Queue pair `qp` has news: the engine calls its `handle_timeout` (which reads the news)
    /// and serves it after the current call.
    pub fn wake(&mut self, qp: u32) {
        self.wake.push(qp);
    }

    /// Queue pairs a scheme agent's timeout gave work to, to wake after the current call.
    pub fn wake_list(&mut self) -> &mut Vec<u32> {
        &mut self.wake
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
}

/// Where a NIC keeps its scheme's agent (the registry's enum over every scheme's): lends the
/// agent itself as `Any`, so a scheme can find its own by type. A call that never asks for
/// the agent (most, for most schemes) pays nothing for it.
pub trait AgentSlot {
    fn agent_any(&mut self) -> &mut dyn Any;
}

/// One queue pair's call into its NIC: the NIC's state (it reads as it: `Deref`), the scheme's
/// agent by its concrete type ([`NicCall::agent`]), and which queue pair is calling.
pub struct NicCall<'a> {
    state: &'a mut NicState,
    scheme: &'a mut dyn AgentSlot,
    caller: u32,
}

impl<'a> NicCall<'a> {
    pub fn new(state: &'a mut NicState, scheme: &'a mut dyn AgentSlot, caller: u32) -> Self {
        NicCall { state, scheme, caller }
    }

    /// The queue pair calling (its number on this NIC).
    pub fn caller(&self) -> u32 {
        self.caller
    }

    /// The scheme's NIC-wide agent, if it is an `A` (stored as is or boxed): a scheme reads
    /// its own (NDP's pacer, MELO's pools). None on a NIC whose scheme keeps another.
    #[inline]
    pub fn agent<A: 'static>(&mut self) -> Option<&mut A> {
        downcast_mut::<A>(self.scheme.agent_any())
    }

    /// The agent and the NIC's state together (an agent call that queues a send or a wake).
    #[inline]
    pub fn agent_and_state<A: 'static>(&mut self) -> (Option<&mut A>, &mut NicState) {
        (downcast_mut::<A>(self.scheme.agent_any()), self.state)
    }
}

/// `x` as an `A`: itself, or what it boxes.
#[inline]
fn downcast_mut<A: 'static>(x: &mut dyn Any) -> Option<&mut A> {
    if x.is::<A>() {
        x.downcast_mut::<A>()
    } else {
        x.downcast_mut::<Box<A>>().map(|b| &mut **b)
    }
}

impl Deref for NicCall<'_> {
    type Target = NicState;
    fn deref(&self) -> &NicState {
        self.state
    }
}

impl DerefMut for NicCall<'_> {
    fn deref_mut(&mut self) -> &mut NicState {
        self.state
    }
}

#[cfg(test)]
pub mod probe {
    use crate::sim::units::Time;

    /// A NIC-wide timer for the engine's tests: due at `at` (host clock), it records the host
    /// time it fired at, disarms, and wakes the queue pairs in `wake`.
    #[derive(Clone, Debug, Default)]
    pub struct TimerProbe {
        pub at: Option<Time>,
        pub fired: Vec<Time>,
        pub wake: Vec<u32>,
    }

    impl TimerProbe {
        pub fn fire(&mut self, now: Time, wake: &mut Vec<u32>) {
            if self.at.is_some_and(|t| t <= now) {
                self.at = None;
                self.fired.push(now);
                wake.extend_from_slice(&self.wake);
            }
        }
    }
}
