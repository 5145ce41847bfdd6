//! `[recovery.uet]` and what UET's ends are built with (the scheme's registry view is in
//! `mod.rs`; the ends import only this file of it).

use super::lb::LbKind;
use crate::sim::units::{Bw, Dur, Rate, Size, Time};
use serde::{Deserialize, Serialize};

/// UET's header on the wire: a data packet weighs its payload plus this, an ACK, NACK, PULL,
/// RTS or trimmed header this much (uet-htsim `UecSrc::_hdr_size`, `ACKSIZE`).
pub const HEADER_BYTES: u32 = 64;
/// Credit is counted in quanta of 2^8 = 256 B (`UEC_PULL_SHIFT`; the comment beside it says
/// 512, the code uses 256).
pub const PULL_SHIFT: u32 = 8;

/// `[recovery.uet] cc`: which congestion control runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UetCc {
    /// NSCC alone (uet-htsim `-sender_cc_only`, and its default with no flag).
    #[default]
    Nscc,
    /// RCCC alone (`-receiver_cc_only`): credit, no window.
    Rccc,
    /// Both (`-sender_cc -receiver_cc`): the window and credit both gate sending.
    Both,
    /// Neither: packets leave at the line rate (UUD's only choice: it has no ACKs to run a
    /// window on; with RUD a baseline without congestion control).
    None,
}

impl UetCc {
    /// As a configuration writes it.
    pub fn name(self) -> &'static str {
        match self {
            UetCc::Nscc => "nscc",
            UetCc::Rccc => "rccc",
            UetCc::Both => "both",
            UetCc::None => "none",
        }
    }
}

/// `[recovery.uet] delivery`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Reliable unordered delivery (uet-htsim's only mode).
    #[default]
    Rud,
    /// Reliable ordered delivery: one path, packets past a hole dropped, go back to it.
    Rod,
    /// Unreliable unordered delivery (UEC 1.0's UUD; not in uet-htsim): every packet sent once,
    /// no ACK, NACK or retransmission; the receiver hands each packet over as it arrives and
    /// judges the message over once every packet arrived or was heard lost (a trimmed header),
    /// or `rto` after the last it heard of the message (the packets it has not heard of are
    /// lost).
    Uud,
}

/// `[recovery.uet]`: UET as uet-htsim runs it. Defaults are uet-htsim's (`main_uec.cpp`,
/// `uec.cpp` at 40ccb05) with the values the 100 Gbps validation network gives them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UetParams {
    /// "nscc", "rccc", "both" or "none" (default "nscc", uet-htsim's default).
    pub cc: UetCc,
    /// "rud" (default), "rod" or "uud".
    pub delivery: Delivery,
    /// "oblivious", "bitmap", "reps", "reps-legacy" or "mixed" (default, `main_uec.cpp:88`).
    pub load_balancing: LbKind,
    /// Entropy values per connection (`-paths`, default 64; a power of two for oblivious,
    /// bitmap and mixed). 1: one path per connection, classic ECMP.
    pub paths: u32,
    /// The initial window in packets of MTU + header (`-cwnd`; 0, the default: 1.5 BDP of the
    /// network RTT, `initNscc`).
    pub initial_window: u32,
    /// The retransmission timeout, fixed, no backoff (`_min_rto`). Absent: uet-htsim's
    /// `15 us + 6 x (one switch data queue's drain time)` (`main_uec.cpp:694`; 100.656 us on
    /// its 3-tier network), or 100 us (`DEFAULT_UEC_RTO_MIN`) without per-port queues. Under
    /// UUD the receiver's: a packet not heard of this long after the last is lost (the time RUD
    /// would wait before sending it again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto: Option<Dur>,
    /// An ACK per this many bytes received (`-sack_threshold`, 16 KB).
    pub sack_threshold: Size,
    /// NSCC's target queueing delay (`-target_q_delay`; 0, the default: 0.75 x the network
    /// RTT with trimming, the RTT without).
    pub target_delay: Dur,
    /// QuickAdapt fires below maxwnd >> this (`-qa_gate`, 3).
    pub qa_gate: u32,
    /// QuickAdapt runs (uet-htsim: always; `_disable_quick_adapt` has no flag).
    pub quick_adapt: bool,
    /// The switches trim (the default target delay and REPS's freezing assume it).
    pub trimming: bool,
    /// A NACK's round trip (a trimmed header's, shorter than a packet's) may lower the base
    /// RTT (uet-htsim's default `update_base_rtt_on_nack = true`;
    /// `-disable_base_rtt_update_on_nack`).
    pub base_rtt_from_nacks: bool,
    /// The receive window penalty the receiver echoes, 0-255 scaled (uet-htsim always sends
    /// 255: no penalty; the specification's receiver window is this setting).
    pub window_penalty: u32,
    /// RCCC's pull pacer rate as a share of the link (`main_uec.cpp:754`: 0.99).
    pub pull_rate: f64,
    /// Credit one PULL grants (uet-htsim: 4 x 4096 B, fixed before its MSS is set).
    pub credit_per_pull: Size,
    /// NSCC's constants scale from this network (uet-htsim: 100 Gbps and 12 us).
    pub reference_rate: Bw,
    pub reference_rtt: Dur,
    /// The network RTT NSCC and the windows are set from. Absent: the longest unloaded round
    /// trip of a full packet out and an ACK back (`network_max_unloaded_rtt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_rtt: Option<Dur>,
    /// The receiver's congestion control for an oversubscribed fabric (uet-htsim
    /// `OversubscribedCC`, oversubscribed_cc.cpp): each host's pull pacer slows on trims short
    /// of the last hop and on ECN marks. Absent: on when RCCC runs alone on an oversubscribed
    /// network (a host-facing switch with more host than uplink bandwidth), as
    /// `main_uec.cpp:688-691` turns it on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscribed_cc: Option<bool>,
}

impl Default for UetParams {
    fn default() -> Self {
        UetParams {
            cc: UetCc::Nscc,
            delivery: Delivery::Rud,
            load_balancing: LbKind::Mixed,
            paths: 64,
            initial_window: 0,
            rto: None,
            sack_threshold: Size(16_384),
            target_delay: Dur(Time::ZERO),
            qa_gate: 3,
            quick_adapt: true,
            trimming: true,
            base_rtt_from_nacks: true,
            window_penalty: 255,
            pull_rate: 0.99,
            credit_per_pull: Size(16_384),
            reference_rate: Bw(Rate::gbps(100)),
            reference_rtt: Dur(Time::from_us(12)),
            network_rtt: None,
            oversubscribed_cc: None,
        }
    }
}

/// What a sender is built with (run-wide).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderConfig {
    pub nscc: bool,
    pub rccc: bool,
    /// Data packet bytes on the wire (MSS + header).
    pub mtu: u32,
    pub mss: u32,
    pub rto: Time,
    /// At most one RTS per this (the network RTT with NSCC; 0 under RCCC alone, as uet-htsim).
    pub rts_gap: Time,
    /// The most credit a sender holds, and its speculative credit (`_configured_maxwnd`).
    pub configured_maxwnd: i64,
    pub base_rtt_from_nacks: bool,
    pub window_penalty: u8,
    pub delivery: Delivery,
}

