//! The `[nic]` section: packet size, ACK coalescing, host clocks, the receive pipeline's
//! timing, and its checks.

use super::Dur;
use crate::sim::check::{range_f64, range_u32, Checked, FieldError};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

/// The largest host clock offset and offset spread: 1 s, far beyond any real NIC's, and small
/// enough that offset plus spread stays inside the signed picoseconds a clock keeps.
pub const MAX_CLOCK_OFFSET: Time = Time::from_ms(1000);
/// The deepest receive-pipeline input queue, in packets.
pub const MAX_RX_QUEUE: u32 = 1 << 20;
/// The largest per-packet or per-swap time of the receive pipeline.
pub const MAX_PIPELINE_TIME: Time = Time::from_ms(1);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicCfg {
    /// Payload bytes per data packet.
    pub mtu: u32,
    /// Receiver ACK coalescing: one ACK per this many in-order data packets (and always on
    /// the last packet of a message).
    pub ack_interval: u32,
    /// Every host clock's offset from true time (hardware timestamps read it).
    pub clock_offset: Dur,
    /// Every host clock's rate error in ppm (a 0.0025 % crystal is 25 ppm); default perfect.
    pub clock_drift_ppm: f64,
    /// Each host's offset is `clock_offset` plus its own uniform draw within +-this.
    pub clock_offset_spread: Dur,
    /// Each host's drift is `clock_drift_ppm` plus its own uniform draw within +-this many ppm.
    /// Default: 0.5 ppm with `recovery = "stride"` (two hosts under 1 ppm apart: the paper's
    /// measured STT change of under 1 ns per ms between two FPGAs, §IV.B), 0 otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_drift_spread_ppm: Option<f64>,
    /// The receive pipeline's time per packet: packets arriving faster wait in the NIC
    /// (schemes may charge more per operation). Default 0: handled on arrival.
    pub rx_latency: Dur,
    /// The receive pipeline's input queue, in packets; 0 (the default): unbounded. When this
    /// many wait, the NIC pauses its link's data classes (a PFC PAUSE to its switch port, so
    /// a slow pipeline backs traffic up into the network and, through a window, to the
    /// senders) and resumes them when half have been handled. What is already on the wire
    /// still arrives: the queue exceeds this by at most the link's flight. Needs
    /// `[switch] queues` of 2 or more (data in a class of its own, which PFC pauses).
    pub rx_queue: u32,
    /// Receive pipeline time to move one connection context into or out of the on-chip QP
    /// cache (a miss that evicts moves two), before the packet that missed is handled.
    /// Matters only with a QP cache (today `recovery.melo.qp_cache`). Default 0: free.
    pub qp_swap_time: Dur,
    /// Added per bitmap block the moved context carries (LEFT: 5 ns per block). Default 0.
    pub qp_swap_per_block: Dur,
    /// Which switch queue ACKs, NAKs and CNPs take: "control" (the highest priority, queue 0,
    /// never paused: ns-3 `ACK_HIGH_PRIO 1`) or "data" (their flow's data class, buffered,
    /// paused and counted like data: `ACK_HIGH_PRIO 0`, what ns-3 `run.py` writes for HPCC).
    /// The NIC always sends them before data.
    pub ack_class: AckClass,
    /// htsim's packet-size model: every data packet carries a whole `mtu` of payload, so a
    /// flow's bytes are rounded up to whole packets (what htsim reports as `acked_bytes`).
    /// Default false: the last packet carries what is left.
    pub whole_packets: bool,
    /// How a host puts a data packet's colour (drop precedence) on the wire: "dscp" (default:
    /// a switch's ACL turns it into the colour its `[[switch.wred]]` rules read) or "ecn"
    /// (Aeolus §4.1 for switches with only RED/ECN: coloured packets leave Not-ECT, the rest
    /// ECT(0); pair with `[switch.ecn] drop_not_ect = true`).
    pub colour_codepoint: ColourCodepoint,
}

/// `[nic] colour_codepoint`: where a data packet's colour travels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ColourCodepoint {
    #[default]
    Dscp,
    Ecn,
}


#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AckClass {
    #[default]
    Control,
    Data,
}

impl Default for NicCfg {
    fn default() -> Self {
        let zero = Dur(Time::ZERO);
        NicCfg {
            mtu: 1024,
            ack_interval: 1,
            clock_offset: zero,
            clock_drift_ppm: 0.0,
            clock_offset_spread: zero,
            clock_drift_spread_ppm: None,
            rx_latency: zero,
            rx_queue: 0,
            qp_swap_time: zero,
            qp_swap_per_block: zero,
            ack_class: AckClass::Control,
            whole_packets: false,
            colour_codepoint: ColourCodepoint::Dscp,
        }
    }
}

impl NicCfg {
    /// Fields by their names within `[nic]`.
    pub fn check(&self) -> Checked {
        range_u32("mtu", self.mtu, 64, 9000)?;
        range_u32("ack_interval", self.ack_interval, 1, 1 << 16)?;
        range_u32("rx_queue", self.rx_queue, 0, MAX_RX_QUEUE)?;
        for (field, t) in [("rx_latency", self.rx_latency.0), ("qp_swap_time", self.qp_swap_time.0), ("qp_swap_per_block", self.qp_swap_per_block.0)] {
            if t > MAX_PIPELINE_TIME {
                return Err(FieldError::new(field, format!("{t} is out of range (allowed 0ps..={MAX_PIPELINE_TIME})")));
            }
        }
        if let Some(x) = self.clock_drift_spread_ppm {
            range_f64("clock_drift_spread_ppm", x, 0.0, 1000.0)?;
        }
        for (field, t) in [("clock_offset", self.clock_offset.0), ("clock_offset_spread", self.clock_offset_spread.0)] {
            if t > MAX_CLOCK_OFFSET {
                return Err(FieldError::new(field, format!("{t} is out of range (allowed up to {MAX_CLOCK_OFFSET})")));
            }
        }
        range_f64("clock_drift_ppm", self.clock_drift_ppm, -1000.0, 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_hold_exactly_at_their_edges() {
        let ok = NicCfg::default();
        assert!(ok.check().is_ok());
        for field in ["rx_latency", "qp_swap_time", "qp_swap_per_block"] {
            let with = |t: Time| {
                let mut n = NicCfg::default();
                *match field {
                    "rx_latency" => &mut n.rx_latency,
                    "qp_swap_time" => &mut n.qp_swap_time,
                    _ => &mut n.qp_swap_per_block,
                } = Dur(t);
                n.check()
            };
            assert!(with(MAX_PIPELINE_TIME).is_ok(), "{field}");
            assert_eq!(with(MAX_PIPELINE_TIME + Time(1)).unwrap_err().field, field);
        }
        for field in ["clock_offset", "clock_offset_spread"] {
            let with = |t: Time| {
                let mut n = NicCfg::default();
                *if field == "clock_offset" { &mut n.clock_offset } else { &mut n.clock_offset_spread } = Dur(t);
                n.check()
            };
            assert!(with(MAX_CLOCK_OFFSET).is_ok(), "{field}");
            let e = with(MAX_CLOCK_OFFSET + Time(1)).unwrap_err();
            assert_eq!((e.field.as_str(), e.message.as_str()), (field, "1000000000001ps is out of range (allowed up to 1s)"));
        }
        let drift = |ppm: f64| NicCfg { clock_drift_ppm: ppm, ..NicCfg::default() }.check();
        assert!(drift(-1000.0).is_ok() && drift(1000.0).is_ok());
        assert!(drift(-1000.5).is_err() && drift(f64::NAN).is_err());
        let spread = |ppm: f64| NicCfg { clock_drift_spread_ppm: Some(ppm), ..NicCfg::default() }.check();
        assert!(spread(0.0).is_ok() && spread(1000.0).is_ok() && spread(-0.5).is_err());
        assert_eq!(NicCfg { mtu: 63, ..NicCfg::default() }.check().unwrap_err().field, "mtu");
        assert_eq!(NicCfg { ack_interval: 0, ..NicCfg::default() }.check().unwrap_err().field, "ack_interval");
        assert!(NicCfg { ack_interval: 1 << 16, ..NicCfg::default() }.check().is_ok());
    }
}
