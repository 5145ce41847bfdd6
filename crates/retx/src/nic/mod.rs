//! The host NIC: its queue-pair scheduler, an on-chip cache of connection contexts, the host's
//! clock, the state its connections share (with its NIC-wide timer), its receive pipeline and
//! its receive counters.

pub mod clock;
pub mod qp_cache;
pub mod scheduler;

use crate::net::packet::Packet;
use crate::sim::units::Time;
use std::collections::VecDeque;
use crate::transport::Endpoint;
use crate::transport::{NicAgent, PoolOccupancy};

pub use clock::{ClockPlan, HostClock};
pub use qp_cache::QpCache;
pub use scheduler::QpScheduler;

/// One queue pair of a NIC: one end of a connection, and what the engine tracks about it.
pub struct Qp {
    /// The connection (flow) it belongs to.
    pub conn: u32,
    pub endpoint: Endpoint,
    /// In the scheduler's list.
    pub active: bool,
    /// A timer event is pending for this time.
    pub timer_armed: Option<Time>,
    /// Its context is in the on-chip QP cache.
    pub on_chip: bool,
    /// Its band at the NIC scheduler (0: served first).
    pub band: u8,
    /// Its last packet's handling had latency: what it does next (its responses) waits until
    /// then, with the INT records a data packet left to echo.
    pub held: Option<(Time, u32)>,
}

/// The NIC's receive pipeline: packets are handled one at a time, each taking the NIC's fixed
/// per-packet time plus whatever its scheme charges (a bitmap swap, a table lookup); packets
/// that arrive while it is busy wait in order. With no cost (the default) every packet is
/// handled on arrival and the pipeline costs no event. A packet whose connection context must
/// first be swapped into the QP cache at a cost waits that long before it is handled.
#[derive(Default)]
pub struct RxPipeline {
    pub per_packet: Time,
    pub busy_until: Time,
    pub waiting: VecDeque<Packet>,
    /// A "pipeline free" event is pending.
    pub wake_pending: bool,
    /// Packets waiting at which the NIC pauses its link (`[nic] rx_queue`; 0: never).
    pub limit: usize,
    /// The NIC has paused its link's data classes and not yet resumed them.
    pub pausing: bool,
    /// The most packets that waited at once, and the pauses sent.
    pub peak: usize,
    pub pauses: u64,
}

impl RxPipeline {
    /// Whether a packet arriving at `now` must wait.
    pub fn must_wait(&self, now: Time) -> bool {
        now < self.busy_until || !self.waiting.is_empty()
    }

    /// A packet joined the queue: whether the NIC must now pause its link.
    pub fn should_pause(&mut self) -> bool {
        self.peak = self.peak.max(self.waiting.len());
        self.limit > 0 && !self.pausing && self.waiting.len() >= self.limit
    }

    /// A packet left the queue: whether the NIC may now resume its link (half drained).
    pub fn should_resume(&self) -> bool {
        self.pausing && self.waiting.len() <= self.limit / 2
    }
}

/// One host's NIC.
pub struct Nic {
    /// The host's (only) port.
    pub port: usize,
    pub scheduler: QpScheduler,
    /// A "the scheduler may send" event is pending for this time.
    pub wake_at: Option<Time>,
    /// A NIC-wide timer event (the scheme state's deadline) is pending for this time.
    pub timer_at: Option<Time>,
    /// In-order payload bytes delivered to applications, and data bytes arriving off the wire
    /// (duplicates and discarded packets included).
    pub rx_bytes: u64,
    pub rx_wire_bytes: u64,
    /// The NIC agent: what its queue pairs share, per scheme (MELO's bits pools, a pacer).
    pub agent: NicAgent,
    /// The agent's wake list and outbox are being drained (a call made while draining adds
    /// to them; the drain in progress serves it).
    pub draining: bool,
    pub qp_cache: QpCache,
    pub clock: HostClock,
    /// This host's queue pairs, both requesters and responders, indexed by the scheduler.
    pub qps: Vec<Qp>,
    pub rx: RxPipeline,
}

impl Nic {
    pub fn new(port: usize, agent: NicAgent, qp_cache: QpCache, clock: HostClock) -> Nic {
        Nic { port, scheduler: QpScheduler::default(), wake_at: None, timer_at: None, rx_bytes: 0, rx_wire_bytes: 0, agent, draining: false, qp_cache, clock, qps: Vec::new(), rx: RxPipeline::default() }
    }

    /// This NIC's shared on-chip structures now, for the `[output] pools` time series: the
    /// scheme's (e.g. MELO's bits pools) and the QP-context cache when it is bounded.
    pub fn sample_pools(&mut self, mut out: impl FnMut(PoolOccupancy)) {
        self.agent.sample_pools(&mut out);
        if self.qp_cache.is_enabled() {
            // The cache holds at most its capacity and is full once warm: no interval peak.
            let (used, capacity) = self.qp_cache.occupancy();
            let (used, capacity) = (used as u64, capacity as u64);
            out(PoolOccupancy { pool: "qp_cache", unit: "contexts", used, peak: used, capacity });
        }
    }
}
