//! What both ends of a flow agree on (its size, packets and marking), the header sizes every
//! scheme starts from, and the run's facts a scheme's ends are built with.

use crate::sim::units::{Rate, Time};
/// Data packet bytes on the wire beyond the payload: Ethernet 14 + IPv4 20 + UDP 8 + 6 of
/// sequence/priority header, as in the HPCC ns-3 model (`CustomHeader`), so FCTs compare with it.
pub const DATA_HEADER_BYTES: u32 = 48;
/// ACK/NAK/CNP size on the wire: the 60-byte minimum frame of the HPCC ns-3 model.
pub const CONTROL_BYTES: u32 = 60;
/// A response's headers without padding: Ethernet 14 + IPv4 20 + the 12 B ACK header of the
/// HPCC ns-3 model (`qbbHeader`: ports, flags, priority group, sequence). With INT records
/// appended it outgrows the 60 B minimum.
pub const RESPONSE_HEADER_BYTES: u32 = 46;

/// Priorities a packet carries (its traffic class; at a switch it takes the egress queue of that
/// number, the port's last if it has fewer): control (ACK/NAK/CNP by default) is strict high
/// priority and never paused, like the high-priority queue of the HPCC ns-3 model; data
/// priorities follow, PFC-protected. Names mean one thing each: a packet has a `priority`, a
/// port has `queue`s, a NIC scheduler has `band`s.
pub const PRIORITY_CONTROL: usize = 0;
pub const PRIORITY_DATA: usize = 1;

/// What a flow is, as both ends agree on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Message bytes; [`FlowSpec::ENDLESS`] for a long-running flow.
    pub size: u64,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// The QP's starting PSN.
    pub initial_psn: u32,
    /// Seeds the payload digests.
    pub key: u64,
    /// How its packets are marked and sized on the wire.
    pub marking: Marking,
}

/// How a flow's packets are marked and sized on the wire, as its ends stamp them on every
/// packet they send. The run fills it from the scenario (a flow's class and colour, the INT
/// header, ns-3's ACK priority); a scheme that cares may choose otherwise in its own file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marking {
    /// Priority of data packets: their egress queue at every switch, their PFC class.
    pub data_priority: u8,
    /// Priority of responses (ACK, NAK, CNP): the control queue, or with ns-3's
    /// `ACK_HIGH_PRIO 0` the flow's data priority.
    pub response_priority: u8,
    /// Drop precedence of data packets (0 green, 1 yellow, 2 red).
    pub colour: u8,
    /// Wire bytes of a data packet beyond its payload (also what a connection packet the
    /// sender opens with weighs).
    pub data_header: u32,
    /// Wire bytes of a response.
    pub response_bytes: u32,
    /// The colour travels as the ECN codepoint, not as a colour a switch reads (Aeolus §4.1,
    /// for switches with RED/ECN but no WRED): a coloured data packet leaves Not-ECT, an
    /// uncoloured one ECT(0).
    pub colour_as_ecn: bool,
}

impl Default for Marking {
    /// Data at the first data priority, green, with the HPCC ns-3 model's headers; responses
    /// at the control priority, 60 B.
    fn default() -> Self {
        Marking {
            data_priority: PRIORITY_DATA as u8,
            response_priority: PRIORITY_CONTROL as u8,
            colour: 0,
            data_header: DATA_HEADER_BYTES,
            response_bytes: CONTROL_BYTES,
            colour_as_ecn: false,
        }
    }
}

impl FlowSpec {
    pub const ENDLESS: u64 = u64::MAX;
    /// The largest finite flow, 10^15 B (1 PB, 80,000 s at 100 Gbps): far below
    /// [`FlowSpec::ENDLESS`] and i64::MAX, so sizes, packet counts and byte columns never
    /// overflow. Every input is checked against it.
    pub const MAX_SIZE: u64 = 1_000_000_000_000_000;

    pub fn npkts(&self) -> u64 {
        if self.size == Self::ENDLESS { u64::MAX } else { self.size.div_ceil(self.mtu as u64) }
    }

    /// Payload of packet `index`: a full MTU except possibly the last.
    pub fn payload(&self, index: u64) -> u32 {
        if self.size == Self::ENDLESS {
            return self.mtu;
        }
        let start = index * self.mtu as u64;
        (self.size - start).min(self.mtu as u64) as u32
    }
}

/// One shared structure's occupancy at a sample (`[output] pools`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOccupancy {
    pub pool: &'static str,
    /// What `used`, `peak` and `capacity` count: "blocks", "contexts".
    pub unit: &'static str,
    pub used: u64,
    /// The most in use at once since the previous sample.
    pub peak: u64,
    pub capacity: u64,
}

/// What moving one connection context between the on-chip QP cache and off-chip memory costs
/// the NIC's receive pipeline, as a scheme declares it: a fixed time per context moved plus a
/// time per bitmap block it carries (LEFT moves a block in 5 ns). Default 0: swaps are free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwapCost {
    pub per_context: Time,
    pub per_block: Time,
}

impl SwapCost {
    /// The cost of moving one context that carries `blocks` bitmap blocks.
    pub fn of(&self, blocks: u32) -> Time {
        Time(self.per_context.0 + self.per_block.0 * blocks as u64)
    }
}

/// The run's reference path, as the HPCC ns-3 model gives every QP with `GLOBAL_T 1`: the
/// longest host-to-host base RTT (twice the propagation delay plus one MTU payload's
/// serialization per hop, `third.cc` maxRtt) and its bandwidth-delay product at that path's
/// bottleneck rate (maxBdp). Window-based controllers size their window from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BasePath {
    pub rtt: Time,
    pub bdp_bytes: u64,
}

impl BasePath {
    /// `rtt` at `rate`: bytes = rtt x rate / 8, truncated as ns-3 does in whole ns and bps.
    pub fn new(rtt: Time, rate: Rate) -> Self {
        BasePath { rtt, bdp_bytes: (rtt.0 as u128 * rate.0 as u128 / 8 / 1_000_000_000_000) as u64 }
    }
}

