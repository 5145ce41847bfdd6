//! A NIC's agent as the engine holds it: the NIC's own state ([`NicState`]) beside the run's
//! scheme's agent ([`SchemeAgent`], from the registry). Endpoints see both through a
//! [`NicCall`]; the engine drives the scheme's agent's pacing and timer through here.

use super::common::agent::{AgentTransmit, HostAgent, NicCall, NicState};
use super::common::flow::PoolOccupancy;
use super::schemes::SchemeAgent;
use super::template::Template;
use crate::sim::units::{Rate, Time};
use std::ops::{Deref, DerefMut};

#[derive(Clone, Debug)]
pub struct NicAgent {
    pub state: NicState,
    /// The run's scheme's own NIC-wide agent (a pacer, a pool), if it has one.
    pub scheme: SchemeAgent,
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
        NicAgent { state: NicState::new(t.qp_swap), scheme: t.agent(link, mtu) }
    }

    /// The agent as queue pair `qp` calls into it.
    pub fn call(&mut self, qp: u32) -> NicCall<'_> {
        NicCall::new(&mut self.state, &mut self.scheme, qp)
    }

    /// Whether the scheme's agent has paced packets to send: the host's port keeps offering
    /// it the wire.
    #[inline]
    pub fn wants_wire(&self) -> bool {
        self.scheme.wants_wire()
    }

    /// What the scheme's agent sends, paced, when the NIC offers the wire (ahead of its queue
    /// pairs).
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        self.scheme.poll_transmit(now)
    }

    /// When the agent next needs [`NicAgent::handle_timeout`], on the host's clock. None for
    /// schemes without a NIC-wide timer, so the engine schedules nothing.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        #[cfg(test)]
        if let Some(t) = self.state.probe.at {
            return Some(t);
        }
        self.scheme.poll_timeout()
    }

    /// A NIC-wide deadline passed (`now`: the host's clock, at or after
    /// [`NicAgent::poll_timeout`]). Queue pairs the timeout gave work to are woken (by the
    /// number their [`NicCall`] named when they queued it).
    pub fn handle_timeout(&mut self, now: Time) {
        #[cfg(test)]
        {
            let mut woken = Vec::new();
            self.state.probe.fire(now, &mut woken);
            self.state.wake_list().extend(woken);
        }
        if self.scheme.poll_timeout().is_some_and(|t| t <= now) {
            self.scheme.handle_timeout(now, self.state.wake_list());
        }
    }

    /// The scheme's shared on-chip structures on this NIC now, for the `[output] pools` time
    /// series.
    pub fn sample_pools(&mut self, mut out: impl FnMut(PoolOccupancy)) {
        self.scheme.sample_pools(&mut out);
    }

    /// Figures the scheme reports about its NIC-wide state over every NIC of a run.
    pub fn report<'a>(nics: impl Iterator<Item = &'a NicAgent> + Clone) -> Vec<(&'static str, f64)> {
        SchemeAgent::report(nics.map(|n| &n.scheme))
    }
}

impl Deref for NicAgent {
    type Target = NicState;
    fn deref(&self) -> &NicState {
        &self.state
    }
}

impl DerefMut for NicAgent {
    fn deref_mut(&mut self) -> &mut NicState {
        &mut self.state
    }
}
