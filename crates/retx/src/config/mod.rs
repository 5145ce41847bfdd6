//! Scenario files: TOML in, a validated [`Scenario`] out, with errors that name the field.
//!
//! Parsing is strict (unknown keys are errors) and every value with a unit goes through
//! [`crate::sim::units`], so "40Gbs" is caught with a hint of the units allowed. Cross-field checks (known
//! host names, ranges) happen in [`validate`] after the topology is known.

pub mod build;
pub mod fct_txt;
pub mod hpcc_config;
pub mod lossless;
pub mod template;
pub mod topology;
pub mod validate;
pub mod workload;

pub use build::{build, build_with_observer, pcap_writer};
pub use lossless::warnings;
pub use validate::validate;
pub use crate::sim::units::{Bw, Dur, Size};

use crate::transport::dcqcn::DcqcnParams;
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A scenario error: the dotted path of the offending field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.field, self.message) }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration: Dur,
    #[serde(default = "yes")]
    pub stop_when_done: bool,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub nic: NicCfg,
    #[serde(default)]
    pub transport: TransportCfg,
    #[serde(default)]
    pub recovery: RecoveryCfg,
    #[serde(default)]
    pub cc: CcCfg,
    #[serde(default)]
    pub routing: RoutingCfg,
    #[serde(default)]
    pub loss: Vec<LossCfg>,
    /// Unresponsive background traffic into switch egress queues (a traffic generator's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundCfg>,
    pub workload: WorkloadCfg,
    #[serde(default)]
    pub output: OutputCfg,
    /// Directory that relative paths in the scenario (e.g. `workload.cdf`) resolve against:
    /// the scenario file's directory. Not part of the file; empty means the current directory.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

fn default_seed() -> u64 {
    1
}
fn yes() -> bool {
    true
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// N hosts on one switch.
    SingleSwitch,
    /// Two-tier Clos: every leaf connects to every spine.
    LeafSpine,
    /// The MELO (APNet'17) Fig. 4 network: a leaf-spine preset.
    MeloFig4,
    /// A topology file in the HPCC ns-3 format (`file`).
    HpccFile,
    /// The k-ary fat-tree (`k`): a three-tier Clos with k pods.
    FatTree,
    /// A general three-tier Clos: pods of ToRs and aggregation switches, cores in stripes.
    Clos,
    /// The HPCC paper's 320-server network (HPCC ns-3 `mix/fat.txt`): a Clos preset.
    #[serde(rename = "hpcc-320")]
    Hpcc320,
    /// STRIDE's 256-host fat-tree (OMNeT++ evaluation): a Clos preset.
    #[serde(rename = "stride-256")]
    Stride256,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub kind: TopologyKind,
    /// hpcc-file: the topology file, relative to the scenario's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_link: Option<Bw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<Bw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_delay: Option<Dur>,
    /// fat-tree: the switch radix (even).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// clos (and its presets): the counts of each tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tors_per_pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggs_per_pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_tor: Option<u32>,
    /// fat-tree, clos: ToR-aggregation and aggregation-core rates (default `fabric_link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_agg_link: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg_core_link: Option<Bw>,
    /// fat-tree, clos: per-tier propagation delays (default `link_delay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_agg_delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg_core_delay: Option<Dur>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchCfg {
    /// Shared packet buffer per switch. Default 12 MB, the Broadcom Trident II of the DCQCN
    /// paper's testbed.
    pub buffer: Size,
    /// Egress dynamic threshold: a queue may grow to alpha x the free shared buffer.
    pub dt_alpha: f64,
    pub ecn: EcnCfg,
    pub pfc: PfcCfg,
    /// Egress queues per port, 1..=8: queue 0 carries control (ACK, NAK, CNP) at strict
    /// priority, the others data (all data uses queue 1 until workloads carry priorities).
    /// With 1, data shares queue 0 with control in one FIFO (still ECN-marked; no PFC).
    pub queues: u32,
    /// How data queues share a port: "strict-priority" or "drr" (deficit round robin).
    pub discipline: DisciplineKind,
    /// DRR quantum per visit (default one MTU-sized frame of 1500 B).
    pub drr_quantum: Size,
    /// In-band network telemetry: every switch appends a hop record (queue length, bytes
    /// sent, time, link rate) to data packets at dequeue and receivers echo them in ACKs, for
    /// congestion control that reads them (HPCC). On whenever `transport.cc = "hpcc"`.
    pub int: bool,
    /// Bytes the INT header adds to every data packet and every response while INT is on:
    /// 5 hops x 8 B + a 2 B hop count (the HPCC ns-3 model's `IntHeader` and the paper's
    /// 42 B). A response is then 14 + 20 + 12 + this = 88 B (ns-3's ACK with INT).
    pub int_bytes: u32,
    /// Drop profiles by packet colour (drop precedence), at enqueue: WRED, or a hard
    /// threshold. The first rule that matches a packet applies. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wred: Vec<WredCfg>,
    /// A shaped queue with a small buffer of its own on every switch port (ExpressPass's
    /// credit queue). Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shaped: Option<ShapedCfg>,
}

/// `[switch] shaped`: egress queue `queue` of every switch port is served ahead of the other
/// data queues at most at `share` of the link rate (or at `rate`), and holds at most `buffer`
/// packets.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapedCfg {
    pub queue: u32,
    /// A fraction of each port's link rate. Default (with no `rate`) 84 / (84 + 1538): the
    /// share of ExpressPass's credits, an 84 B credit per 1538 B data frame (SIGCOMM '17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Or an absolute rate, the same on every port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bw>,
    /// Packets the queue holds; an arrival beyond is dropped. Default 8, a credit queue of a
    /// few credits as in ExpressPass.
    #[serde(default = "eight")]
    pub buffer: u32,
}

fn eight() -> u32 {
    8
}

/// ExpressPass's credit share of a link: 84 B credits per 84 + 1538 B (SIGCOMM '17, §3).
pub const EXPRESSPASS_CREDIT_SHARE: f64 = 84.0 / (84.0 + 1538.0);

/// One `[[switch.wred]]` rule: packets of `colour` (0 green, 1 yellow, 2 red) entering egress
/// queue `class` (every data queue if absent) of ports of `rate` (every port if absent) are
/// dropped above `threshold` bytes of queue ahead of them, or by WRED between `min` and `max`
/// (probability rising to `pmax` at `max`, every packet above it).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WredCfg {
    pub colour: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmax: Option<f64>,
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer: Size(12_000_000),
            dt_alpha: 1.0,
            ecn: EcnCfg::default(),
            pfc: PfcCfg::default(),
            queues: 2,
            discipline: DisciplineKind::StrictPriority,
            drr_quantum: Size(1500),
            int: false,
            int_bytes: crate::transport::int::INT_HEADER_BYTES,
            wred: Vec::new(),
            shaped: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DisciplineKind {
    StrictPriority,
    Drr,
}

/// How switches pick among equal-cost paths, and what entropy a source puts in its packets.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingCfg {
    pub policy: RoutingKind,
    /// flowlet: a gap longer than this between two packets of a flow starts a new flowlet.
    /// The default is a few base RTTs of a two-tier 40-100 Gbps fabric (CONGA's 500 us was
    /// chosen for 10 Gbps); set it to the network at hand.
    pub flowlet_gap: Dur,
    /// flowlet: hashed entries per switch table (a power of two).
    pub flowlet_entries: u32,
    /// "per-flow" (the 5-tuple, RoCEv2) or "per-packet" (the NIC varies the UDP source port,
    /// so ECMP switches spray).
    pub entropy: EntropyKind,
}

impl Default for RoutingCfg {
    fn default() -> Self {
        RoutingCfg { policy: RoutingKind::Ecmp, flowlet_gap: Dur(Time::from_us(50)), flowlet_entries: 4096, entropy: EntropyKind::PerFlow }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoutingKind {
    Ecmp,
    SprayRoundRobin,
    SprayRandom,
    Flowlet,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntropyKind {
    PerFlow,
    PerPacket,
}

/// RED/ECN marking on egress queues. Defaults: Kmin 5 KB and Pmax 1 % as in the DCQCN paper;
/// Kmax 200 KB as commonly quoted from it (one DCQCN ns-3 validation uses 100 KB). The HPCC
/// ns-3 configs scale Kmin/Kmax with link speed (100/400 KB per 25 Gbps, Pmax 0.2).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnCfg {
    pub enabled: bool,
    pub kmin: Size,
    pub kmax: Size,
    pub pmax: f64,
    /// Profiles for egress ports of a given link rate, overriding kmin/kmax/pmax there (as the
    /// HPCC ns-3 configs' `KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_link: Vec<EcnLinkCfg>,
}

impl Default for EcnCfg {
    fn default() -> Self {
        EcnCfg { enabled: true, kmin: Size(5_000), kmax: Size(200_000), pmax: 0.01, per_link: Vec::new() }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnLinkCfg {
    pub rate: Bw,
    pub kmin: Size,
    pub kmax: Size,
    pub pmax: f64,
}

/// Priority flow control on the data classes, per ingress queue: fixed XOFF/XON thresholds,
/// or the dynamic threshold with reserve and headroom of the HPCC ns-3 switch MMU.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcCfg {
    pub enabled: bool,
    /// "fixed" (xoff/xon) or "dynamic" (reserve, headroom, shift, resume_offset).
    pub mode: PfcMode,
    pub xoff: Size,
    pub xon: Size,
    /// dynamic: bytes of every ingress (port, queue) not counted as shared. Default 4 KiB,
    /// HPCC ns-3 `SwitchMmu::reserve`.
    pub reserve: Size,
    /// dynamic: RESUME once the shared bytes are this far below the threshold. Default 3 KiB,
    /// HPCC ns-3 `SwitchMmu::resume_offset`.
    pub resume_offset: Size,
    /// Headroom per lossless ingress queue: "auto" (what each port's link needs: IEEE
    /// 802.1Qbb Annex N, `net::headroom`), "off", or a size for every port. Absent: "off" in
    /// mode "fixed" (the whole buffer shared, today's model), 3 x link rate x delay per port
    /// in mode "dynamic" (HPCC ns-3 third.cc).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<PfcHeadroom>,
    /// dynamic: the threshold is (free buffer) >> shift at ports of the host link rate, one
    /// less per doubling above it. Default 3 (1/8), HPCC ns-3 third.cc.
    pub shift: u32,
    /// A cycle of egress queues each paused without a break for this long is a deadlock: the
    /// run ends and reports it. Default 2 ms: longer than a default 12 MB buffer takes to
    /// drain at 50 Gbps (1.9 ms), so congestion that is draining is not mistaken for one;
    /// switch PFC watchdogs (SONiC: 200 ms) are sized for wall-clock time, not millisecond
    /// simulations.
    pub deadlock_timeout: Dur,
    /// Pause storms are judged per window of this length: a port paused for at least
    /// `storm_fraction` of one is reported. Default 1 ms.
    pub storm_window: Dur,
    /// Default 0.9: a port paused 90 % of a window sends at a tenth of its rate, persistent
    /// head-of-line blocking rather than a burst being absorbed.
    pub storm_fraction: f64,
}

/// `switch.pfc.headroom`: "auto", "off" or a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcHeadroom {
    Auto,
    Off,
    Bytes(Size),
}

impl Serialize for PfcHeadroom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PfcHeadroom::Auto => s.serialize_str("auto"),
            PfcHeadroom::Off => s.serialize_str("off"),
            PfcHeadroom::Bytes(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PfcHeadroom {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PfcHeadroom;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"auto\", \"off\" or a size such as \"40KB\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PfcHeadroom, E> {
                match v {
                    "auto" => Ok(PfcHeadroom::Auto),
                    "off" => Ok(PfcHeadroom::Off),
                    _ => crate::sim::units::parse_size(v)
                        .map(|b| PfcHeadroom::Bytes(Size(b)))
                        .ok_or_else(|| E::custom(format!("{v:?} is not \"auto\", \"off\" or a size (use e.g. \"40KB\")"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PfcHeadroom, E> {
                Err(E::custom(format!("{v} has no unit; expected \"auto\", \"off\" or a size such as \"40KB\"")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PfcHeadroom, E> {
                Err(E::custom(format!("{v} has no unit; expected \"auto\", \"off\" or a size such as \"40KB\"")))
            }
        }
        d.deserialize_any(V)
    }
}

impl Default for PfcCfg {
    fn default() -> Self {
        // Headroom for the bytes in flight after XOFF is the buffer above xoff; 256 KB per
        // ingress queue leaves room for 100 Gbps x 2 x 2 us of wire plus a few MTUs.
        PfcCfg {
            enabled: false,
            mode: PfcMode::Fixed,
            xoff: Size(256_000),
            xon: Size(224_000),
            reserve: Size(4 * 1024),
            resume_offset: Size(3 * 1024),
            headroom: None,
            shift: 3,
            deadlock_timeout: Dur(Time::from_ms(2)),
            storm_window: Dur(Time::from_ms(1)),
            storm_fraction: 0.9,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PfcMode {
    Fixed,
    Dynamic,
}

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
    /// Default: 25 ppm with `recovery = "stride"` (the paper's FPGA crystal error, 0.0025 %,
    /// §IV.B), 0 otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_drift_spread_ppm: Option<f64>,
    /// The receive pipeline's time per packet: packets arriving faster wait in the NIC
    /// (schemes may charge more per operation). Default 0: handled on arrival.
    pub rx_latency: Dur,
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
            qp_swap_time: zero,
            qp_swap_per_block: zero,
            ack_class: AckClass::Control,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryKind {
    /// Go-back-N as RoCEv2 NICs do it.
    Gbn,
    /// IRN-style selective repeat.
    Irn,
    /// MELO: selective repeat with a shared bits pool.
    Melo,
    /// Go-Back-ONE: selective repeat with RACK loss notification.
    Gbone,
    /// A TCP-like byte stream: cumulative ACKs, NewReno fast recovery, RFC 6298 timer.
    Tcp,
    /// STRIDE: handshake, an ACK per 64 KB segment, NACK + go-back-N, FIN teardown.
    Stride,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcKind {
    Dcqcn,
    Dctcp,
    Hpcc,
    Timely,
    None,
    /// Window controllers, for `recovery = "tcp"` (also over gbn and irn).
    Reno,
    DctcpWindow,
    Vegas,
    /// STRIDE's Algorithm 1: rate from the single-trip time, in shifts and additions.
    Stride,
}

impl CcKind {
    /// Congestion control by a window of bytes in flight (not a rate).
    pub fn is_window(self) -> bool {
        matches!(self, CcKind::Reno | CcKind::DctcpWindow | CcKind::Vegas)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportCfg {
    pub recovery: RecoveryKind,
    pub cc: CcKind,
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg { recovery: RecoveryKind::Gbn, cc: CcKind::Dcqcn }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryCfg {
    pub gbn: crate::transport::gbn::GbnParams,
    pub irn: crate::transport::irn::IrnParams,
    pub melo: crate::transport::melo::MeloParams,
    pub gbone: crate::transport::gbone::GboneParams,
    pub tcp: crate::transport::tcp::TcpParams,
    pub stride: crate::transport::stride::StrideParams,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcCfg {
    pub dcqcn: DcqcnParams,
    pub dctcp: crate::transport::dctcp::DctcpParams,
    pub hpcc: crate::transport::hpcc::HpccParams,
    pub timely: crate::transport::timely::TimelyParams,
    pub reno: crate::transport::reno::RenoParams,
    #[serde(rename = "dctcp-window")]
    pub dctcp_window: crate::transport::dctcp_window::DctcpWindowParams,
    pub vegas: crate::transport::vegas::VegasParams,
    pub stride: crate::transport::stride_cc::StrideCcParams,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossCfg {
    /// "switch:NAME" (all its egress links), "link:A->B" (one direction) or "everywhere".
    pub at: String,
    #[serde(default = "bernoulli")]
    pub model: LossModel,
    /// bernoulli: the probability that a packet is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// gilbert-elliott: probability per packet of moving from the good to the bad state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// gilbert-elliott: probability per packet of moving from bad back to good (mean burst
    /// length 1/r packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<f64>,
    /// gilbert-elliott: loss probability in the good state (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_good: Option<f64>,
    /// gilbert-elliott: loss probability in the bad state (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_bad: Option<f64>,
    /// Also drop control packets (ACK, NAK, CNP): shorthand for every kind.
    #[serde(default)]
    pub control: bool,
    /// The packet kinds the rule drops: any of "data", "ack", "nak" (NAK/NACK/RACK), "cnp".
    /// Default: ["data"], or every kind with control = true.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<PacketKindCfg>,
}

fn bernoulli() -> LossModel {
    LossModel::Bernoulli
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossModel {
    Bernoulli,
    GilbertElliott,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PacketKindCfg {
    Data,
    Ack,
    Nak,
    Cnp,
    /// SYN, SYN-ACK, FIN and FIN-ACK (STRIDE's connection set-up and tear-down).
    Conn,
}

/// One `[[background]]` source: packets of `size` wire bytes into egress queue `class` of the
/// switch port `link` ("A->B"), from `start` to `until`, at a rate that follows `profile`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundCfg {
    pub link: String,
    pub profile: BackgroundProfile,
    /// fixed: the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bw>,
    /// random: the range rates are drawn from; linear: the rate at start and at until.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Bw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<Bw>,
    /// random: how long each drawn rate lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    #[serde(default)]
    pub start: Dur,
    /// Default: the run's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Dur>,
    /// Wire bytes per packet, 64B..=9216B. Default 1500 B, a full Ethernet frame.
    #[serde(default = "ethernet_frame")]
    pub size: Size,
    /// Egress queue, 1..queues (default 1, the data class flows use by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
}

fn ethernet_frame() -> Size {
    Size(1500)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackgroundProfile {
    /// A fixed rate (`rate`).
    Fixed,
    /// A rate drawn uniformly in `low..=high` every `interval`.
    Random,
    /// A rate rising linearly from `low` at `start` to `high` at `until`.
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// Flows with no end between named pairs, all starting at time 0.
    LongFlows,
    /// An explicit list of flows.
    FlowList,
    /// Poisson arrivals at a target load, sizes from a CDF table.
    Poisson,
    /// Many senders start a flow to one receiver at the same time, in rounds.
    Incast,
    /// A flow file in the HPCC ns-3 format (`file`).
    HpccFlows,
}

/// Who sends to whom in a poisson workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pairing {
    /// Each host on the first half of the leaves sends to a fixed partner on the other half
    /// (host i -> host i + N/2 on a uniform leaf-spine).
    CrossLeafHalves,
    /// The explicit `pairs`.
    Pairs,
    /// Every host sends, each flow to a uniformly random other host.
    Random,
}

/// The `[workload]` section. Which fields apply depends on `kind` (see docs/SCENARIO.md);
/// validation rejects a field the kind does not use.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    pub kind: WorkloadKind,
    /// hpcc-flows: the flow file, relative to the scenario's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "host_pairs")]
    pub pairs: Vec<(String, String)>,
    /// flow-list: the flows; poisson: the total flow count.
    #[serde(default, skip_serializing_if = "Flows::is_empty_list")]
    pub flows: Flows,
    /// poisson: a built-in table name or a path (relative to the scenario's directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<crate::workload::cdf::Interpolation>,
    /// poisson: offered load as a fraction of each sender's host link rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<Pairing>,
    /// poisson: arrivals stop at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Dur>,
    /// poisson and incast: time of the first arrival window / the first round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// incast: the senders by name (or `fan_in`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub senders: Vec<String>,
    /// incast: this many senders, the first hosts other than the receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_in: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// incast: the size of every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// incast: time between the starts of consecutive rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
}

/// `workload.pairs`: a list of `[src, dst]`, each exactly two host names (serde's tuple would
/// silently drop a third).
fn host_pairs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    let lists: Vec<Vec<String>> = Vec::deserialize(d)?;
    lists
        .into_iter()
        .enumerate()
        .map(|(i, p)| match <[String; 2]>::try_from(p) {
            Ok([a, b]) => Ok((a, b)),
            Err(p) => Err(serde::de::Error::custom(format!("pair {i} has {} elements; a pair is two host names, [\"src\", \"dst\"]", p.len()))),
        })
        .collect()
}

/// `workload.flows`: the list of a flow-list workload, or the flow count of a poisson one.
#[derive(Clone, Debug)]
pub enum Flows {
    List(Vec<FlowCfg>),
    Count(u64),
}

impl Default for Flows {
    fn default() -> Self {
        Flows::List(Vec::new())
    }
}

impl Flows {
    /// The flows of a list (empty for a count).
    pub fn list(&self) -> &[FlowCfg] {
        match self {
            Flows::List(v) => v,
            Flows::Count(_) => &[],
        }
    }
    pub fn count(&self) -> Option<u64> {
        match self {
            Flows::List(_) => None,
            Flows::Count(n) => Some(*n),
        }
    }
    fn is_empty_list(&self) -> bool {
        matches!(self, Flows::List(v) if v.is_empty())
    }
}

impl Serialize for Flows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Flows::List(v) => v.serialize(s),
            Flows::Count(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Flows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flows;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of flows (flow-list) or a flow count (poisson)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Flows, E> {
                u64::try_from(v).map(Flows::Count).map_err(|_| E::custom(format!("{v} is not a flow count")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Flows, E> {
                Ok(Flows::Count(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flows, A::Error> {
                let mut v = Vec::new();
                while let Some(f) = seq.next_element::<FlowCfg>()? {
                    v.push(f);
                }
                Ok(Flows::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub src: String,
    pub dst: String,
    pub size: Size,
    #[serde(default)]
    pub start: Dur,
    /// The egress queue of its data packets at every switch, 1..queues (default 1); a way
    /// to put a flow into a queue of its own, e.g. the shaped queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// The colour (drop precedence) of its data packets, 0..=2 (default 0, green).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<u8>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputCfg {
    /// Interval of the receiver throughput time series.
    pub sample_interval: Dur,
    /// Also write the flows in the HPCC ns-3 simulator's `fct.txt` format: `true` for
    /// `fct.txt` in the output folder, or a path relative to the scenario's directory (the
    /// output folder, same file name, when that path's directory does not exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_txt: Option<FctTxtCfg>,
    /// Egress ports to sample every `sample_interval`, each written "A->B" (node A's port
    /// toward node B): the bytes queued and the peak since the previous sample. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// Flows (by id, their order in the workload) whose sender's congestion control state is
    /// sampled every `sample_interval`: pacing rate, window, bytes in flight. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc_flows: Vec<u32>,
    /// Hosts whose NIC's shared on-chip structures are sampled every `sample_interval`: in use,
    /// the peak since the previous sample and the capacity of each (MELO's receive and send
    /// bits pools in blocks, the QP cache in contexts when it is bounded). Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
    /// Write what some hosts send and receive as RoCEv2 frames into a pcap file (see
    /// `wire::frame` for the layout). Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapCfg>,
}

impl Default for OutputCfg {
    fn default() -> Self {
        OutputCfg { sample_interval: Dur(crate::sim::units::Time::from_us(100)), fct_txt: None, queues: Vec::new(), cc_flows: Vec::new(), pools: Vec::new(), pcap: None }
    }
}

/// `[output] pcap`: the hosts whose packets are written, how many at most, and the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    /// Host names; each one's sent and received packets are written.
    pub hosts: Vec<String>,
    /// Records kept (the first ones); later packets are not written. Default 100000, at most
    /// 10^7: the file is built in memory.
    #[serde(default = "default_pcap_packets")]
    pub max_packets: u64,
    /// The file, relative to the output folder. Default "trace.pcap".
    #[serde(default = "default_pcap_file")]
    pub file: String,
}

/// Most records a pcap may hold (the file is built in memory: about 10 GB of 1 KB frames).
pub const MAX_PCAP_PACKETS: u64 = 10_000_000;

fn default_pcap_packets() -> u64 {
    100_000
}

fn default_pcap_file() -> String {
    "trace.pcap".into()
}

/// `[output] fct_txt`: on/off, or where the file goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FctTxtCfg {
    On(bool),
    Path(String),
}

impl FctTxtCfg {
    /// The configured path (relative to the scenario's directory), if the file is wanted.
    pub fn path(&self) -> Option<&str> {
        match self {
            FctTxtCfg::On(true) => Some("fct.txt"),
            FctTxtCfg::On(false) => None,
            FctTxtCfg::Path(p) => Some(p),
        }
    }
}

impl Scenario {
    /// Parses TOML text; the error names the field (dotted path) that is wrong. A UTF-8 byte
    /// order mark at the start is skipped.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let text = crate::sim::input::strip_bom(text);
        let de = toml::Deserializer::new(text);
        let parsed: Result<Scenario, _> = serde_path_to_error::deserialize(de);
        let scenario = parsed.map_err(|e| {
            let path = e.path().to_string();
            let msg = e.inner().message().trim().replace('\n', " ");
            let msg = if msg.is_empty() { "invalid TOML".to_string() } else { msg };
            let mut field = if path == "." { String::new() } else { path };
            // serde names a missing field only in the message: make it the field.
            if let Some(missing) = msg.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
                field = if field.is_empty() { missing.to_string() } else { format!("{field}.{missing}") };
                return ScenarioError::new(field, "is required");
            }
            // Errors of the TOML layer itself (a number too large for any integer) carry no
            // path, only where they are in the text: name the key written there.
            if field.is_empty() {
                if let Some(key) = e.inner().span().and_then(|span| key_at(text, span.start)) {
                    field = key;
                }
            }
            ScenarioError::new(field, msg)
        })?;
        Ok(scenario)
    }

    /// The scenario with every default written out, as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serialises")
    }
}

/// The dotted key whose value is at byte `offset` of a TOML text: the last table header before
/// it (`[a.b]`, or `[[a]]` with its index) and the key its line starts with. Best effort, for
/// error messages only.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split_once('=').map(|(k, _)| k.trim().trim_matches('"'))?;
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let mut table = String::new();
    let mut arrays: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for l in before[..line_start].lines() {
        let l = l.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|x| x.split("]]").next()) {
            let name = name.trim().to_string();
            let i = arrays.entry(name.clone()).and_modify(|i| *i += 1).or_insert(0);
            table = format!("{name}[{i}]");
        } else if let Some(name) = l.strip_prefix('[').and_then(|x| x.split(']').next()) {
            table = name.trim().to_string();
        }
    }
    Some(if table.is_empty() { key.to_string() } else { format!("{table}.{key}") })
}
