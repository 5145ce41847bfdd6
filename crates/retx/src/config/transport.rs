//! The `[transport]`, `[recovery.*]` and `[cc.*]` sections: which loss recovery and congestion
//! control every connection runs, each scheme's parameters, and their checks. Each scheme's
//! parameters check themselves in the scheme's own file (`GbnParams::check`); this file places
//! their errors in the scenario and checks what crosses sections.

use crate::sim::check::{Checked, FieldError};
use crate::transport::dcqcn::DcqcnParams;
use serde::{Deserialize, Serialize};

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
    /// NDP as htsim models it: initial window at line rate, then one packet per PULL from the
    /// receiver's host pacer; NACKs for trimmed packets (pair with `[switch] trim`).
    Ndp,
    /// A Homa-like receiver-driven message transport (unscheduled first RTT, SRPT grants,
    /// priorities from size cutoffs, a timeout), with Aeolus's selective-drop loss recovery as
    /// an option (`[recovery.homa] aeolus = true`).
    Homa,
    /// ExpressPass as its authors' ns-2 code models it: credits paced by the receiver's host
    /// at a feedback-controlled rate, one data packet per credit, credit stop; Aeolus as an
    /// option (`[recovery.xpass] aeolus = true`).
    Xpass,
    /// LEFT: a receiver that records reordering in a dual-state bitmap pool through gather
    /// FIFOs and a scheduler, and judges loss by a hole timer, not by order.
    Left,
    /// The test-only receiver-driven scheme (`transport/pull.rs`).
    #[cfg(test)]
    Pull,
    /// The tutorial's go-back-N with a fixed timeout (`transport/tutorial.rs`).
    #[cfg(test)]
    Tutorial,
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
    /// The tutorial's AIMD window (`transport/tutorial_aimd.rs`).
    #[cfg(test)]
    TutorialAimd,
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
    pub ndp: crate::transport::ndp::NdpParams,
    pub homa: crate::transport::homa::HomaParams,
    pub xpass: crate::transport::xpass::XpassParams,
    pub left: crate::transport::left::LeftParams,
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

impl RecoveryCfg {
    /// Every scheme's section, chosen or not (a value set for a scheme not run is still read
    /// back by `retx validate`, so it must be one the scheme could run).
    pub fn check(&self) -> Checked {
        self.gbn.check().map_err(|e| e.within("recovery.gbn"))?;
        self.irn.check().map_err(|e| e.within("recovery.irn"))?;
        self.melo.check().map_err(|e| e.within("recovery.melo"))?;
        self.gbone.check().map_err(|e| e.within("recovery.gbone"))?;
        self.tcp.check().map_err(|e| e.within("recovery.tcp"))?;
        self.stride.check().map_err(|e| e.within("recovery.stride"))?;
        self.ndp.check().map_err(|e| e.within("recovery.ndp"))?;
        self.homa.check().map_err(|e| e.within("recovery.homa"))?;
        self.xpass.check().map_err(|e| e.within("recovery.xpass"))?;
        self.left.check().map_err(|e| e.within("recovery.left"))
    }
}

impl CcCfg {
    pub fn check(&self) -> Checked {
        self.dcqcn.check().map_err(|e| e.within("cc.dcqcn"))?;
        self.dctcp.check().map_err(|e| e.within("cc.dctcp"))?;
        self.hpcc.check().map_err(|e| e.within("cc.hpcc"))?;
        self.timely.check().map_err(|e| e.within("cc.timely"))?;
        self.reno.check().map_err(|e| e.within("cc.reno"))?;
        self.dctcp_window.check().map_err(|e| e.within("cc.dctcp-window"))?;
        self.vegas.check().map_err(|e| e.within("cc.vegas"))?;
        self.stride.check().map_err(|e| e.within("cc.stride"))
    }
}

impl TransportCfg {
    /// Which recovery schemes a window controller runs over.
    pub fn check(&self) -> Checked {
        if self.cc.is_window() && matches!(self.recovery, RecoveryKind::Melo | RecoveryKind::Gbone) {
            return Err(FieldError::new("transport.cc", "a window controller (reno, dctcp-window, vegas) runs over recovery \"tcp\", \"gbn\" or \"irn\""));
        }
        Ok(())
    }
}
