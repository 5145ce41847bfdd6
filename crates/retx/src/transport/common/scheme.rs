//! What a scheme is, to the rest of retx: its parameters' type implements [`Scheme`] (a loss
//! recovery or receiver-driven transport) or [`Controller`] (a congestion controller), and so
//! is its own factory, as quinn's `ControllerFactory` is: it checks itself, builds both ends of
//! a flow and its NIC-wide agent, and says what it needs of the run (header sizes, symmetric
//! paths, an on-chip QP cache). Defaults cover what most schemes share, so a scheme writes only
//! where it differs. The registry (`transport/schemes.rs`) lists the types, one line each, and
//! generates every enum and dispatch from them; nothing else names a scheme.

use super::agent::HostAgent;
use super::cnp::CnpPacer;
use super::congestion::CongestionControl;
use super::flow::{BasePath, FlowSpec, CONTROL_BYTES, DATA_HEADER_BYTES, RESPONSE_HEADER_BYTES};
use super::recovery::{ReceiveRecovery, SendRecovery};
use crate::sim::check::Checked;
use crate::sim::units::{Rate, Time};
use std::fmt::Debug;

/// What one flow's ends are built from, beyond the scheme's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    pub spec: &'a FlowSpec,
    /// One ACK per this many in-order data packets (`[nic] ack_interval`).
    pub ack_interval: u32,
    /// One BDP of the run's longest path, in packets: what a size left at 0 means.
    pub bdp_packets: u32,
    /// The sender's line rate.
    pub line: Rate,
    /// The run's network, as the ends may size themselves by it.
    pub net: NetFacts,
}

/// What the run's network is, for the schemes that size themselves by it: the reference path
/// window controllers take, and the longest unloaded round trip of the scheme's own packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetFacts {
    /// The HPCC ns-3 reference path ([`BasePath`]).
    pub path: BasePath,
    /// The longest host-to-host round trip of a full data packet out and a response back,
    /// store and forward, every hop at the first host's link rate, with the scheme's header
    /// and response sizes (uet-htsim's `network_max_unloaded_rtt`, `main_uec.cpp:51-60`,
    /// which also takes the host's rate for every hop).
    pub network_rtt: Time,
    /// Bytes a switch port's data queue holds, if the switches set one (`[switch] trim`
    /// `data_queue`).
    pub switch_queue: Option<u64>,
    /// The network's oversubscription in thousandths (0: not computed, taken as 1): over the
    /// switches with hosts, the largest ratio of host bandwidth to the rest (a 4:1 leaf-spine:
    /// 4,000), as uet-htsim's `get_oversubscription_ratio` gives it for its topologies.
    pub oversubscription_milli: u32,
}

impl NetFacts {
    /// The oversubscription (1 when not computed).
    pub fn oversubscription(&self) -> f64 {
        if self.oversubscription_milli == 0 { 1.0 } else { self.oversubscription_milli as f64 / 1000.0 }
    }
}

impl Setup<'_> {
    /// The flow's packets.
    pub fn npkts(&self) -> u64 {
        self.spec.npkts()
    }

    /// `v`, or one BDP if `v` is 0 (a bitmap or window "of one BDP").
    pub fn or_bdp(&self, v: u32) -> u32 {
        if v == 0 { self.bdp_packets } else { v }
    }
}

/// The built network's scale, for the warnings of settings that do not fit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkScale {
    /// One BDP of the run's longest path, in packets of `mtu` payload bytes.
    pub bdp_packets: u32,
    pub mtu: u32,
    /// Egress queues per switch port (0 without switches).
    pub switch_queues: u32,
}

impl NetworkScale {
    /// One BDP in payload bytes.
    pub fn bdp_bytes(&self) -> u64 {
        self.bdp_packets as u64 * self.mtu as u64
    }

    /// `value` over `bdp` (both in one unit), when it is below half or above twice it: a
    /// setting that far from the network's BDP is warned.
    pub fn far_from_bdp(value: u64, bdp: u64) -> Option<f64> {
        let ratio = value as f64 / bdp.max(1) as f64;
        (!(0.5..=2.0).contains(&ratio)).then_some(ratio)
    }
}

/// What the rest of the scenario says that a scheme's parameters must agree with.
#[derive(Clone, Copy, Debug)]
pub struct RunFacts {
    /// Payload bytes per packet (`[nic] mtu`).
    pub mtu: u32,
    /// The switches' shaped (credit) queue, if they have one (`[switch] shaped.queue`).
    pub shaped_queue: Option<u32>,
    /// The workload draws flow sizes from a table (`[workload] cdf`).
    pub has_size_table: bool,
}

/// A loss recovery scheme or receiver-driven transport, implemented by its parameters' type
/// (its `[recovery.<NAME>]` section).
pub trait Scheme: Clone + Debug + PartialEq + Default + 'static {
    /// Its name: `[transport] recovery = NAME`, its `[recovery.NAME]` section (with `_` for
    /// `-`, as the registry's field), its row of the on-chip memory table unless
    /// [`Scheme::MEMORY_ROW`] says otherwise.
    const NAME: &'static str;
    /// Its row in the on-chip memory table (`hw::memory`).
    const MEMORY_ROW: &'static str = Self::NAME;
    /// A window controller (Reno, DCTCP's window, Vegas) may run over it.
    const TAKES_WINDOW_CC: bool = true;
    /// It runs its own congestion control (UET's NSCC and RCCC): `[transport] cc` must be
    /// "none".
    const OWN_CC: bool = false;
    /// The spread of its hosts' clock drift when `[nic]` sets none, in ppm (0: perfect
    /// clocks; a scheme that reads one-way delays models real ones).
    const CLOCK_SPREAD_PPM: f64 = 0.0;
    type Sender: SendRecovery + Clone + Debug;
    type Receiver: ReceiveRecovery + Clone + Debug;
    /// Its NIC-wide state ([`super::agent::NoAgent`] if none).
    type Agent: HostAgent + Clone + Debug + 'static;

    /// Its fields' ranges, each error naming the field within the section.
    fn check(&self) -> Checked {
        Ok(())
    }
    /// What it must agree with elsewhere in the scenario; errors name a field of its section.
    fn check_run(&self, _run: &RunFacts) -> Checked {
        Ok(())
    }
    /// Its settings that have no effect as set (one line each, starting with the field's name
    /// within its section): none by default.
    fn inert_settings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Settings far from what the built network implies (a window or unscheduled size far
    /// from its BDP, too few switch queues for its priorities): one line each, starting with
    /// the field's name within its section. None by default.
    fn network_warnings(&self, _net: &NetworkScale) -> Vec<String> {
        Vec::new()
    }
    /// Both ends of one flow.
    fn endpoints(&self, flow: &Setup<'_>) -> (Self::Sender, Self::Receiver);
    /// Its NIC-wide agent on a host whose link runs at `link`, sending `mtu`-byte payloads.
    fn agent(&self, _link: Rate, _mtu: u32) -> Option<Self::Agent> {
        None
    }
    /// Data packet bytes on the wire beyond the payload (INT's bytes come on top).
    fn data_header(&self) -> u32 {
        DATA_HEADER_BYTES
    }
    /// A response's bytes on the wire, with `int_header` bytes of INT.
    fn response_bytes(&self, int_header: u32) -> u32 {
        CONTROL_BYTES.max(RESPONSE_HEADER_BYTES + int_header)
    }
    /// Each connection's two directions take the same path, one the reverse of the other
    /// (ExpressPass's data on its credits' path).
    fn symmetric_paths(&self) -> bool {
        false
    }
    /// Its endpoints choose each packet's entropy value ([`super::segment::Segment::ev`]), which
    /// the network hashes with the connection's entropy (UET's EVs: spraying, REPS): the
    /// scenario's `[routing] entropy` then does not apply.
    fn chooses_entropy(&self) -> bool {
        false
    }
    /// Its ends size themselves by the run's network ([`Setup::net`]'s `network_rtt`, UET's
    /// NSCC and windows): the engine walks every host's longest path for it only then, once
    /// at build (a 16k-host network takes seconds).
    fn sizes_by_network(&self) -> bool {
        false
    }
    /// Its receivers judge when a flow is over (an unreliable delivery: the sender hears
    /// nothing back), as [`super::recovery::ReceiveRecovery::completes_flow`] says per end.
    fn receiver_completes(&self) -> bool {
        false
    }
    /// Connection contexts the NIC keeps on chip (0: all of them).
    fn qp_cache(&self) -> u32 {
        0
    }
    /// Whether it derives parameters from the workload's flow sizes ([`Scheme::with_sizes`]).
    fn wants_sizes(&self) -> bool {
        false
    }
    /// Itself with parameters derived from `sizes`, flow sizes at evenly spaced quantiles of
    /// the workload (Homa's unscheduled cutoffs).
    fn with_sizes(&self, _sizes: &[u64]) -> Self {
        self.clone()
    }
    /// Figures about its NIC-wide state over every NIC of a run: (name, value).
    fn report<'a>(_agents: &mut dyn Iterator<Item = &'a Self::Agent>) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// What a controller's ends are built with.
#[derive(Clone, Copy, Debug)]
pub struct CcSetup {
    /// The sender's line rate.
    pub line: Rate,
    /// The run's reference path (window controllers size their window from it).
    pub path: BasePath,
    /// Payload bytes per packet.
    pub mss: u64,
}

/// A congestion controller, implemented by its parameters' type (its `[cc.<NAME>]` section).
pub trait Controller: Clone + Debug + PartialEq + Default + 'static {
    /// Its name: `[transport] cc = NAME` and its `[cc.NAME]` section.
    const NAME: &'static str;
    /// A window of bytes in flight, not a rate: it runs over recoveries that count bytes.
    const IS_WINDOW: bool = false;
    type Cc: CongestionControl + Clone + Debug + 'static;

    /// Its fields' ranges, each error naming the field within the section.
    fn check(&self) -> Checked {
        Ok(())
    }
    /// One sender's controller.
    fn build(&self, setup: &CcSetup) -> Self::Cc;
    /// The receiver's congestion notification point, if it sends CNPs (DCQCN's paced ones).
    fn notification_point(&self) -> Option<CnpPacer> {
        None
    }
    /// Figures over every sender's controller of a run: (name, value).
    fn report<'a>(_ccs: &mut dyn Iterator<Item = &'a Self::Cc>) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Whether two names agree, `-` and `_` alike: a registry field and its scheme's name.
pub const fn same_name(field: &str, name: &str) -> bool {
    let (a, b) = (field.as_bytes(), name.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        let (x, y) = (if a[i] == b'-' { b'_' } else { a[i] }, if b[i] == b'-' { b'_' } else { b[i] });
        if x != y {
            return false;
        }
        i += 1;
    }
    true
}
