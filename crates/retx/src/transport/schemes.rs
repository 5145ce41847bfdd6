//! The registry: every loss recovery scheme and congestion controller retx runs, one line each.
//! From these lists a macro (`registry.rs`) generates the scenario's kinds and sections, the
//! run's parameters, the enums a run stores its senders, receivers, NIC agents and controllers
//! in, and every dispatch over them. A scheme is its own files (its parameters' type implements
//! [`super::common::scheme::Scheme`] or [`super::common::scheme::Controller`]), one line here,
//! and its config section, which is that type.
//!
//! The field is the scheme's name with `_` for `-`; a name with `-` renames its section.

use super::registry::{cc_registry, recovery_registry};
use super::{cc, loss, proactive, uet};

recovery_registry! {
    /// Go-back-N as RoCEv2 NICs do it.
    gbn: Gbn(loss::gbn::GbnParams),
    /// IRN-style selective repeat.
    irn: Irn(loss::irn::IrnParams),
    /// MELO: selective repeat with a shared bits pool.
    melo: Melo(loss::melo::MeloParams),
    /// Go-Back-ONE: selective repeat with RACK loss notification.
    gbone: Gbone(loss::gbone::GboneParams),
    /// A TCP-like byte stream: cumulative ACKs, NewReno fast recovery, RFC 6298 timer.
    tcp: Tcp(loss::tcp::TcpParams),
    /// STRIDE: handshake, an ACK per 64 KB segment, NACK + go-back-N, FIN teardown.
    stride: Stride(loss::stride::StrideParams),
    /// NDP as htsim models it: initial window at line rate, then one packet per PULL from the
    /// receiver's host pacer; NACKs for trimmed packets (pair with `[switch] trim`).
    ndp: Ndp(proactive::ndp::NdpParams),
    /// A Homa-like receiver-driven message transport (unscheduled first RTT, SRPT grants,
    /// priorities from size cutoffs, a timeout), with Aeolus's selective-drop loss recovery as
    /// an option (`[recovery.homa] aeolus = true`).
    homa: Homa(proactive::homa::HomaParams),
    /// ExpressPass as its authors' ns-2 code models it: credits paced by the receiver's host
    /// at a feedback-controlled rate, one data packet per credit, credit stop; Aeolus as an
    /// option (`[recovery.xpass] aeolus = true`).
    xpass: Xpass(proactive::xpass::params::XpassParams),
    /// LEFT: a receiver that records reordering in a dual-state bitmap pool through gather
    /// FIFOs and a scheduler, and judges loss by a hole timer, not by order.
    left: Left(loss::left::params::LeftParams),
    /// Ultra Ethernet's transport as uet-htsim models it: RUD (or ROD) packet delivery, NSCC
    /// at the sender, RCCC's receiver credits, or both; the sender chooses every packet's
    /// entropy value (oblivious, bitmap, REPS, mixed). Pair it with `[switch] trim`.
    uet: Uet(uet::UetParams),
    #[cfg(test)]
    /// The test-only receiver-driven scheme (`proactive/pull.rs`).
    pull: Pull(proactive::pull::PullParams),
    #[cfg(test)]
    /// The tutorial's go-back-N with a fixed timeout (`loss/tutorial.rs`).
    tutorial: Tutorial(loss::tutorial::TutorialParams),
}

cc_registry! {
    dcqcn: Dcqcn(cc::dcqcn::DcqcnParams),
    dctcp: Dctcp(cc::dctcp::DctcpParams),
    hpcc: Hpcc(cc::hpcc::HpccParams),
    timely: Timely(cc::timely::TimelyParams),
    /// Always line rate, no window.
    #[serde(skip)]
    none: None(cc::none::NoCcParams),
    /// Window controllers, for `recovery = "tcp"` (also over gbn and irn).
    reno: Reno(cc::reno::RenoParams),
    #[serde(rename = "dctcp-window")]
    dctcp_window: DctcpWindow(cc::dctcp_window::DctcpWindowParams),
    vegas: Vegas(cc::vegas::VegasParams),
    /// STRIDE's Algorithm 1: rate from the single-trip time, in shifts and additions.
    stride: Stride(loss::stride::cc::StrideCcParams),
    #[cfg(test)]
    /// The tutorial's AIMD window (`cc/tutorial_aimd.rs`).
    tutorial_aimd: TutorialAimd(cc::tutorial_aimd::AimdParams),
}
