//! How a run builds both ends of every connection: the chosen scheme and controller with their
//! parameters, and the NIC settings every end shares.

use super::common::endpoint::Endpoint as EndpointOf;
use super::common::flow::{FlowSpec, Marking, SwapCost};
use super::common::receiver::Receiver as ReceiverOf;
use super::common::scheme::{CcSetup, NetFacts, Setup};
use super::common::sender::Sender as SenderOf;
use super::schemes::{Cc, CcParams, RecoveryParams, RxRecovery, SchemeAgent, TxRecovery};
use crate::sim::units::Rate;

/// The send side of a run's flow: the registry's loss recovery and controller in their shell.
pub type Sender = SenderOf<TxRecovery, Cc>;
/// The receive side of a run's flow.
pub type Receiver = ReceiverOf<RxRecovery>;
/// Either end of a run's flow.
pub type Endpoint = EndpointOf<TxRecovery, RxRecovery, Cc>;

/// How both ends of every connection of a run are built.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub recovery: RecoveryParams,
    pub cc: CcParams,
    /// Receiver ACK coalescing: one ACK per this many in-order data packets.
    pub ack_interval: u32,
    /// What a QP-cache swap costs the receive pipeline (default free).
    pub qp_swap: SwapCost,
    /// Bytes of INT header every data packet and response carries (0: INT off).
    pub int_header: u32,
    /// Responses take their flow's data priority instead of the control priority (ns-3's
    /// `ACK_HIGH_PRIO 0`: buffered, paused and counted like data at switches).
    pub responses_at_data_priority: bool,
    /// Hosts carry a data packet's colour in its ECN field (`[nic] colour_codepoint = "ecn"`).
    pub colour_as_ecn: bool,
}

impl Template {
    /// A run of `recovery` and `cc` with every NIC setting at its default (the harnesses').
    pub fn of(recovery: RecoveryParams, cc: CcParams) -> Self {
        Template { recovery, cc, ack_interval: 1, qp_swap: SwapCost::default(), int_header: 0, responses_at_data_priority: false, colour_as_ecn: false }
    }

    /// Data packet bytes on the wire beyond the payload.
    pub fn data_header(&self) -> u32 {
        self.recovery.data_header() + self.int_header
    }

    /// A response's (ACK, NAK, CNP) bytes on the wire.
    pub fn response_bytes(&self) -> u32 {
        self.recovery.response_bytes(self.int_header)
    }

    /// The scheme's name in the on-chip memory table ([`crate::hw::memory`]).
    pub fn memory_scheme(&self) -> &'static str {
        self.recovery.memory_row()
    }

    /// The scheme's own NIC-wide agent for a host whose link runs at `link` sending
    /// `mtu`-byte payloads.
    pub fn agent(&self, link: Rate, mtu: u32) -> SchemeAgent {
        self.recovery.agent(link, mtu)
    }

    /// Whether each connection's two directions must take the same path, one the reverse of
    /// the other. The engine then picks the data direction's path entropy to match.
    pub fn symmetric_paths(&self) -> bool {
        self.recovery.symmetric_paths()
    }

    /// Whether the scheme's endpoints choose each packet's entropy value
    /// ([`super::common::segment::Segment::ev`]); the engine then hashes it per packet.
    pub fn chooses_entropy(&self) -> bool {
        self.recovery.chooses_entropy()
    }

    /// Whether the scheme's ends size themselves by the run's network (`NetFacts::network_rtt`).
    pub fn sizes_by_network(&self) -> bool {
        self.recovery.sizes_by_network()
    }

    /// Whether a flow's receiver, not its sender, judges when it is over (an unreliable
    /// delivery): the partition running the receiver then counts the flow.
    pub fn receiver_completes(&self) -> bool {
        self.recovery.receiver_completes()
    }

    /// Connection contexts the NIC keeps on chip (0: all of them).
    pub fn qp_cache(&self) -> u32 {
        self.recovery.qp_cache()
    }

    /// Builds the two ends of a flow; `bdp_packets` sizes bitmaps left at 0 (one BDP), `path`
    /// the windows of window-based congestion control. The scheme sizes its packets: the
    /// marking's header bytes are its own.
    pub fn endpoints(&self, spec: FlowSpec, line: Rate, bdp_packets: u32, net: NetFacts) -> (Sender, Receiver) {
        let m = spec.marking;
        let response_priority = if self.responses_at_data_priority { m.data_priority } else { m.response_priority };
        let marking = Marking { data_header: self.data_header(), response_bytes: self.response_bytes(), response_priority, colour_as_ecn: self.colour_as_ecn, ..m };
        let spec = FlowSpec { marking, ..spec };
        let (tx, rx) = self.recovery.endpoints(&Setup { spec: &spec, ack_interval: self.ack_interval, bdp_packets, line, net });
        let cc = self.cc.build(&CcSetup { line, path: net.path, mss: spec.mtu as u64 });
        (SenderOf::new(spec, tx, cc, line), ReceiverOf::new(spec, rx, self.cc.notification_point()))
    }
}
