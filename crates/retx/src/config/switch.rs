//! The `[switch]` section: shared buffer, queues and their discipline, ECN, PFC and its
//! watchdog, colour drop rules, the shaped queue, INT; and their checks.

use super::{Bw, Dur, Scenario, ScenarioError, Size};
use crate::net::topology::{NodeKind, Topology};
use crate::sim::check::{fraction, range_f64, range_u32, timer, Checked};
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};
use std::fmt;

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
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
    /// Trim data packets the buffer would drop to their header, into a header queue (NDP's
    /// switches). Default none: drop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<TrimCfg>,
    /// A static buffer per egress port beside the shared `buffer`: a packet (data or control)
    /// that would take the port's queues past it is dropped. The Homa and Aeolus simulations'
    /// switches (200 KB a port, the critique of Aeolus's Homa runs notes). Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_buffer: Option<Size>,
    /// Egress ports whose link runs slower than its rate, their queue limits and ECN
    /// thresholds scaled alike (uet-htsim's `-failed`: a link at 25 %). Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<DegradedCfg>,
}

/// One `[[switch.degraded]]` port: switch `from`'s egress toward `to` runs at `factor` of its
/// link's rate, its per-port trimming limits (`trim.data_queue`, `trim.header_queue`) and ECN
/// thresholds scaled by the same factor (htsim `FatTreeTopology::alloc_queue` with
/// `reduced_speed`). Only that direction: give the other port too for both.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DegradedCfg {
    pub from: String,
    pub to: String,
    pub factor: f64,
}

/// `[switch] trim`: a data packet the buffer (or its colour rule) would refuse keeps `header`
/// bytes and goes to egress queue `queue`, served at that priority at every later hop. With
/// `data_queue`, every switch port also limits its queues as htsim's NDP switch does
/// (`CompositeQueue`, sim/compositequeue.cpp): data that does not fit its data queue is
/// trimmed, and a packet that does not fit the header queue is dropped (htsim can "return to
/// sender" instead: `return_to_sender`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrimCfg {
    /// Default 0: the control queue, served first (NDP's header queue has strict priority).
    #[serde(default)]
    pub queue: u32,
    /// Default 64 B: NDP's header (htsim `ACKSIZE`).
    #[serde(default = "trimmed_header")]
    pub header: Size,
    /// Bytes each data queue of a port holds (htsim's `_maxsize`; `main_ndp`: 15 packets x
    /// MTU). Default none: trim only what the shared buffer refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_queue: Option<Size>,
    /// Bytes the header queue of a port holds, control packets included. Default 2 x
    /// data_queue (htsim). Only with data_queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_queue: Option<Size>,
    /// What a full data queue trims: "htsim" (default: a coin flip between the arrival and
    /// the last packet queued) or "arrival". Only with data_queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<TrimVictim>,
    /// A trimmed header with no room in the header queue goes back to its sender instead of
    /// being dropped (htsim's `_return_to_sender`; its NDP sender then resends it on a later
    /// PULL). Default false: dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub return_to_sender: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrimVictim {
    Htsim,
    Arrival,
}

fn trimmed_header() -> Size {
    Size(64)
}

impl TrimCfg {
    fn check(&self, sw: &SwitchCfg) -> Checked {
        range_u32("switch.trim.queue", self.queue, 0, sw.queues - 1)?;
        if !(1..=9216).contains(&self.header.0) {
            return Err(err("switch.trim.header", format!("{} B is out of range (allowed 1B..=9216B)", self.header.0)));
        }
        let Some(data) = self.data_queue else {
            return match (self.header_queue, self.victim) {
                (Some(_), _) => Err(err("switch.trim.header_queue", "needs switch.trim.data_queue (per-port limits)")),
                (_, Some(_)) => Err(err("switch.trim.victim", "needs switch.trim.data_queue (per-port limits)")),
                _ => Ok(()),
            };
        };
        if data.0 == 0 {
            return Err(err("switch.trim.data_queue", "must be greater than 0"));
        }
        if sw.queues < 2 {
            return Err(err("switch.trim.data_queue", "needs switch.queues >= 2 (data queues apart from the header queue)"));
        }
        if sw.pfc.enabled {
            return Err(err("switch.trim.data_queue", "per-port trimming is lossy (htsim's CompositeQueue): it needs switch.pfc.enabled = false"));
        }
        match self.header_queue {
            Some(h) if h < self.header => Err(err("switch.trim.header_queue", format!("{} B is smaller than one header (switch.trim.header = {} B)", h.0, self.header.0))),
            _ => Ok(()),
        }
    }

    /// The per-port limits, if any (validated).
    pub fn port(&self) -> Option<crate::net::admission::PortTrim> {
        use crate::net::admission::{PortTrim, Victim};
        let data = self.data_queue?.0;
        let victim = match self.victim.unwrap_or(TrimVictim::Htsim) {
            TrimVictim::Htsim => Victim::Htsim,
            TrimVictim::Arrival => Victim::Arrival,
        };
        Some(PortTrim { data_queue: data, header_queue: self.header_queue.map_or(data.saturating_mul(2), |h| h.0), victim })
    }
}

/// `[switch] shaped`: egress queue `queue` of every switch port is served ahead of the other
/// data queues at most at `share` of the link rate (or at `rate`), and holds at most `buffer`
/// packets.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapedCfg {
    pub queue: u32,
    /// A fraction of each port's link rate. Default (with no `rate`) 84 / (84 + 1538 + 64): the
    /// share of ExpressPass's credits, an 84 B credit per 1538 B data frame (SIGCOMM '17) and
    /// the 64 B ACK retx's ExpressPass answers it with (see `XpassParams::max_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Or an absolute rate, the same on every port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Bw>,
    /// Packets the queue holds; an arrival beyond is dropped. Default 8, a credit queue of a
    /// few credits as in ExpressPass.
    #[serde(default = "eight")]
    pub buffer: u32,
    /// Packets the shaper lets go back to back after an idle spell (its token bucket's depth).
    /// Default 1: no burst. ExpressPass's large-scale ns-2 script gives 2 (`maxCreditBurst`
    /// 84 x 2 B of tokens).
    #[serde(default = "one")]
    pub burst: u32,
}

fn one() -> u32 {
    1
}

fn eight() -> u32 {
    8
}

/// ExpressPass's credit share of a link: 84 B credits per 84 + 1538 B (SIGCOMM '17, §3), plus
/// the 64 B ACK that retx's ExpressPass sends per data packet and ns-2's does not (its credits
/// must pay for it, or credited data overflow a link busy both ways: issue 43).
pub const EXPRESSPASS_CREDIT_SHARE: f64 = 84.0 / (84.0 + 1538.0 + 64.0);

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
    /// Whose bytes the thresholds count: the egress queue's (default, as WRED on most ASICs)
    /// or the port's, all its queues.
    #[serde(default, skip_serializing_if = "WredScope::is_queue")]
    pub scope: WredScope,
}

/// `[[switch.wred]] scope`: the bytes a colour rule's thresholds count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WredScope {
    /// The egress queue the packet joins.
    #[default]
    Queue,
    /// Every queue of the egress port.
    Port,
}

impl WredScope {
    fn is_queue(&self) -> bool {
        *self == WredScope::Queue
    }
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
            int_bytes: crate::transport::common::int::INT_HEADER_BYTES,
            wred: Vec::new(),
            shaped: None,
            trim: None,
            port_buffer: None,
            degraded: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DisciplineKind {
    StrictPriority,
    Drr,
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
    /// RFC 3168's RED: where the profile would mark an ECN-capable packet, a Not-ECT data
    /// packet is dropped, at enqueue on the queue ahead of it. With kmin = kmax this is
    /// Aeolus's selective drop on switches with RED/ECN but no WRED (§4.1; hosts send
    /// unscheduled packets Not-ECT, `[nic] colour_codepoint = "ecn"`). Default false:
    /// Not-ECT packets pass unmarked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drop_not_ect: bool,
    /// Ports toward hosts (a ToR's downlinks) mark too. Default true; uet-htsim turns them off
    /// when receivers pull credit (`-receiver_cc_only`, `-sender_cc -receiver_cc`:
    /// `set_ecn_parameters(true, !receiver_driven, ..)`).
    #[serde(skip_serializing_if = "is_true")]
    pub to_hosts: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Default for EcnCfg {
    fn default() -> Self {
        EcnCfg { enabled: true, kmin: Size(5_000), kmax: Size(200_000), pmax: 0.01, per_link: Vec::new(), drop_not_ect: false, to_hosts: true }
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
                    _ => match crate::sim::units::parse_size(v) {
                        None => Err(E::custom(format!("{v:?} is not \"auto\", \"off\" or a size (use e.g. \"40KB\")"))),
                        Some(b) if b > crate::sim::units::MAX_SIZE => Err(E::custom(format!("{v:?} is beyond the engine's range"))),
                        Some(b) => Ok(PfcHeadroom::Bytes(Size(b))),
                    },
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

impl SwitchCfg {
    /// The whole section, once the network is known (dynamic PFC sets aside headroom per
    /// port): fields by their full names (`switch.buffer`).
    pub fn check(s: &Scenario, topo: &Topology) -> Checked {
        let sw = &s.switch;
        if sw.buffer.0 < 10_000 {
            return Err(err("switch.buffer", format!("{} B is too small (at least 10KB)", sw.buffer.0)));
        }
        range_f64("switch.dt_alpha", sw.dt_alpha, 1.0 / 1024.0, 1024.0)?;
        if let Some(b) = sw.port_buffer {
            // At least one full packet (MTU + 100 B of headers), or no data ever gets through.
            let least = s.nic.mtu as u64 + 100;
            if b.0 < least || b.0 > sw.buffer.0 {
                return Err(err("switch.port_buffer", format!("{} B is out of range (allowed one packet, {least} B, ..=switch.buffer, {} B)", b.0, sw.buffer.0)));
            }
        }
        sw.ecn.check()?;
        if sw.pfc.xon > sw.pfc.xoff {
            return Err(err("switch.pfc.xon", "must not exceed switch.pfc.xoff"));
        }
        if sw.pfc.mode == PfcMode::Dynamic {
            pfc_dynamic(s, topo)?;
        }
        sw.pfc.check_watchdog()?;
        range_u32("switch.int_bytes", sw.int_bytes, 0, 1024)?;
        range_u32("switch.queues", sw.queues, 1, crate::net::port::MAX_QUEUES as u32)?;
        if sw.queues == 1 && sw.pfc.enabled {
            return Err(err("switch.queues", "PFC needs at least 2 queues (queue 0, control, is never paused; with 1 queue data shares it)"));
        }
        if sw.drr_quantum.0 < 64 || sw.drr_quantum.0 > 1 << 20 {
            return Err(err("switch.drr_quantum", format!("{} B is out of range (allowed 64B..=1MiB)", sw.drr_quantum.0)));
        }
        if let Some(x) = &sw.shaped {
            x.check(sw.queues)?;
        }
        for (i, w) in sw.wred.iter().enumerate() {
            wred_rule(w, i, sw.queues)?;
        }
        if let Some(t) = &sw.trim {
            t.check(sw)?;
        }
        // Each port once: a second entry for a port would silently replace the first.
        let mut seen = std::collections::HashMap::with_capacity(sw.degraded.len());
        for (i, d) in sw.degraded.iter().enumerate() {
            let port = degraded_port(topo, d, i)?;
            if let Some(j) = seen.insert(port, i) {
                return Err(err(format!("switch.degraded[{i}].to"), format!("{:?} -> {:?} is already degraded by switch.degraded[{j}]: give each port once", d.from, d.to)));
            }
        }
        Ok(())
    }
}

/// A `[[switch.degraded]]` entry's ports, checked: (the switch, the node it sends to), node
/// ids of `topo`.
pub fn degraded_port(topo: &Topology, d: &DegradedCfg, i: usize) -> Result<(usize, usize), ScenarioError> {
    let field = |f: &str| format!("switch.degraded[{i}].{f}");
    let node = |name: &str, f: &str| topo.find(name).ok_or_else(|| err(field(f), format!("{name:?} is not a node of the topology")));
    let (a, b) = (node(&d.from, "from")?, node(&d.to, "to")?);
    if topo.nodes[a].kind != NodeKind::Switch {
        return Err(err(field("from"), format!("{:?} is a host: a degraded port is a switch's", d.from)));
    }
    // Through the node's own links, not a walk over every link per entry (quadratic in a
    // list of degraded ports on a large network).
    let Some(link) = topo.link_between(a, b) else {
        return Err(err(field("to"), format!("{:?} has no link to {:?}", d.from, d.to)));
    };
    if !(d.factor > 0.0 && d.factor <= 1.0) {
        return Err(err(field("factor"), format!("{} is out of range (allowed (0, 1]: the share of the link's rate)", crate::sim::check::shown_f64(d.factor))));
    }
    // The port runs at factor x the link's rate: no slower than any link may.
    let floor = crate::net::topology::MIN_LINK_RATE;
    if (link.rate.0 as f64 * d.factor) < floor.0 as f64 {
        return Err(err(
            field("factor"),
            format!("{} runs the {} link at {:.0} bps, below the slowest a link may run ({floor}; allowed at least {:e})", crate::sim::check::shown_f64(d.factor), link.rate, link.rate.0 as f64 * d.factor, floor.0 as f64 / link.rate.0 as f64),
        ));
    }
    Ok((a, b))
}

impl EcnCfg {
    fn check(&self) -> Checked {
        range_f64("switch.ecn.pmax", self.pmax, 0.0, 1.0)?;
        if self.kmin > self.kmax {
            return Err(err("switch.ecn.kmin", "must not exceed switch.ecn.kmax"));
        }
        for (i, e) in self.per_link.iter().enumerate() {
            range_f64(&format!("switch.ecn.per_link[{i}].pmax"), e.pmax, 0.0, 1.0)?;
            if e.kmin > e.kmax {
                return Err(err(format!("switch.ecn.per_link[{i}].kmin"), "must not exceed kmax"));
            }
        }
        Ok(())
    }
}

impl PfcCfg {
    /// The PFC watchdog's settings: a deadlock timeout above 0, a storm window of at least a
    /// timer's shortest period (the watchdog ticks once per window while a port is paused),
    /// a storm fraction in (0, 1].
    fn check_watchdog(&self) -> Checked {
        if self.deadlock_timeout.0 == Time::ZERO {
            return Err(err("switch.pfc.deadlock_timeout", "must be greater than 0"));
        }
        timer("switch.pfc.storm_window", self.storm_window.0)?;
        fraction("switch.pfc.storm_fraction", self.storm_fraction)
    }
}

impl ShapedCfg {
    fn check(&self, queues: u32) -> Checked {
        if queues < 2 {
            return Err(err("switch.shaped.queue", "a shaped queue needs switch.queues >= 2 (queue 0 is control)"));
        }
        range_u32("switch.shaped.queue", self.queue, 1, queues - 1)?;
        range_u32("switch.shaped.buffer", self.buffer, 1, 1 << 16)?;
        range_u32("switch.shaped.burst", self.burst, 1, 1 << 16)?;
        match (self.share, self.rate) {
            (Some(_), Some(_)) => Err(err("switch.shaped.rate", "give share (a fraction of the link rate) or rate, not both")),
            (Some(f), None) if !(f > 0.0 && f <= 1.0) => Err(err("switch.shaped.share", format!("{f} is out of range (allowed above 0, up to 1)"))),
            (None, Some(r)) if r.0.bps() == 0 => Err(err("switch.shaped.rate", "must be greater than 0")),
            _ => Ok(()),
        }
    }
}

/// Checks one `[[switch.wred]]` rule: a colour, an optional data queue, and either a
/// threshold or a WRED ramp.
fn wred_rule(w: &WredCfg, i: usize, queues: u32) -> Result<(), ScenarioError> {
    let field = |name: &str| format!("switch.wred[{i}].{name}");
    range_u32(&field("colour"), w.colour as u32, 0, 2)?;
    if let Some(c) = w.class {
        if queues < 2 {
            return Err(err(field("class"), "with switch.queues = 1 there is no data queue to name; leave class out"));
        }
        range_u32(&field("class"), c as u32, 1, queues - 1)?;
    }
    match (w.threshold, w.min, w.max, w.pmax) {
        (Some(_), None, None, None) => {}
        (Some(_), ..) => return Err(err(field("threshold"), "give threshold, or min, max and pmax (WRED), not both")),
        (None, Some(min), Some(max), Some(pmax)) => {
            range_f64(&field("pmax"), pmax, 0.0, 1.0)?;
            if min > max {
                return Err(err(field("min"), "must not exceed max"));
            }
        }
        (None, min, max, _) => {
            let missing = if min.is_none() { "min" } else if max.is_none() { "max" } else { "pmax" };
            return Err(err(field(missing), "a rule needs threshold = \"8KB\", or min, max and pmax (WRED)"));
        }
    }
    Ok(())
}

/// Checks `[switch] pfc` in mode "dynamic": its ranges, and that every switch keeps some shared
/// buffer after its ports' headroom and reserves.
fn pfc_dynamic(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let p = &sw.pfc;
    if !p.enabled {
        return Err(err("switch.pfc.mode", "\"dynamic\" needs enabled = true (allowed modes: \"fixed\", \"dynamic\")"));
    }
    range_u32("switch.pfc.shift", p.shift, 0, 16)?;
    if p.resume_offset.0 > sw.buffer.0 {
        return Err(err("switch.pfc.resume_offset", "must not exceed switch.buffer"));
    }
    let headroom = super::lossless::headroom(s).unwrap_or(crate::net::headroom::Headroom::Ns3);
    let d = crate::net::switch::DynamicPfc { reserve: p.reserve.0, resume_offset: p.resume_offset.0, headroom, shift: p.shift };
    for (n, node) in topo.nodes.iter().enumerate() {
        if node.kind != NodeKind::Switch {
            continue;
        }
        // Checked: a headroom or reserve near the largest size must not wrap into a small sum.
        let set_aside = topo
            .links_of(n)
            .iter()
            .map(|&i| &topo.links[i])
            .try_fold(0u64, |sum, l| d.headroom_for(l.rate, l.delay).checked_add(d.reserve).and_then(|x| sum.checked_add(x)))
            .unwrap_or(u64::MAX);
        if set_aside >= sw.buffer.0 {
            let field = if p.headroom.is_some() { "switch.pfc.headroom" } else { "switch.pfc.reserve" };
            return Err(err(field, format!("switch {:?} sets aside {set_aside} B of headroom and reserve for its ports, not less than switch.buffer ({} B)", node.name, sw.buffer.0)));
        }
    }
    Ok(())
}
