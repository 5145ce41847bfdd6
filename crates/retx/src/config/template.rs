//! The transport template of a scenario: how every connection's endpoints are built, from
//! `[transport]`, `[recovery.*]`, `[cc.*]` and the NIC settings they depend on. The world
//! builder and the PFC headroom check (which needs the largest frame) both read it.

use super::{CcKind, RecoveryKind, Scenario};
use crate::transport::{CcParams, RecoveryParams, SwapCost, Template};

/// How every connection's endpoints are built, from `[transport]`, `[recovery.*]`, `[cc.*]`.
pub fn transport(s: &Scenario) -> Template {
    let r = &s.recovery;
    let recovery = match s.transport.recovery {
        RecoveryKind::Gbn => RecoveryParams::Gbn(r.gbn),
        RecoveryKind::Irn => RecoveryParams::Irn(r.irn),
        RecoveryKind::Melo => RecoveryParams::Melo(r.melo),
        RecoveryKind::Gbone => RecoveryParams::Gbone(r.gbone),
        RecoveryKind::Tcp => RecoveryParams::Tcp(r.tcp),
        RecoveryKind::Stride => RecoveryParams::Stride(r.stride),
        RecoveryKind::Ndp => RecoveryParams::Ndp(r.ndp),
        RecoveryKind::Homa => RecoveryParams::Homa(homa(s)),
        RecoveryKind::Xpass => RecoveryParams::Xpass(r.xpass),
        RecoveryKind::Left => RecoveryParams::Left(r.left),
        #[cfg(test)]
        RecoveryKind::Pull => RecoveryParams::Pull(Default::default()),
        #[cfg(test)]
        RecoveryKind::Tutorial => RecoveryParams::Tutorial(Default::default()),
    };
    let cc = match s.transport.cc {
        CcKind::None => CcParams::None,
        CcKind::Dcqcn => CcParams::Dcqcn(s.cc.dcqcn),
        CcKind::Dctcp => CcParams::Dctcp(s.cc.dctcp),
        CcKind::Hpcc => CcParams::Hpcc(s.cc.hpcc),
        CcKind::Timely => CcParams::Timely(s.cc.timely),
        CcKind::Reno => CcParams::Reno(s.cc.reno),
        CcKind::DctcpWindow => CcParams::DctcpWindow(s.cc.dctcp_window),
        CcKind::Vegas => CcParams::Vegas(s.cc.vegas),
        CcKind::Stride => CcParams::Stride(s.cc.stride),
        #[cfg(test)]
        CcKind::TutorialAimd => CcParams::TutorialAimd(Default::default()),
    };
    let qp_swap = SwapCost { per_context: s.nic.qp_swap_time.0, per_block: s.nic.qp_swap_per_block.0 };
    // The INT header's room on data packets and responses: INT's records, or with TIMELY the
    // 8 B send timestamp of ns-3's IntHeader in TS mode.
    let int_header = if int_enabled(s) {
        s.switch.int_bytes
    } else if s.transport.cc == CcKind::Timely {
        crate::transport::timely::TS_HEADER_BYTES
    } else {
        0
    };
    // ns-3 ACK_HIGH_PRIO 0: responses queue with their flow's data at switches.
    let responses_at_data_priority = s.nic.ack_class == super::AckClass::Data;
    let colour_as_ecn = s.nic.colour_codepoint == super::nic::ColourCodepoint::Ecn;
    Template { recovery, cc, ack_interval: s.nic.ack_interval, qp_swap, int_header, responses_at_data_priority, colour_as_ecn }
}

/// Homa's parameters, with cutoffs from the workload's flow sizes if asked (validation made
/// sure the workload has a table): 100,000 sizes at evenly spaced quantiles stand for it.
fn homa(s: &Scenario) -> crate::transport::homa::HomaParams {
    let p = &s.recovery.homa;
    match p.workload_cutoffs.then(|| super::workload::poisson_cdf(&s.workload, &s.base_dir)) {
        Some(Ok(cdf)) => {
            const N: u32 = 100_000;
            let sizes: Vec<u64> = (0..N).map(|i| cdf.quantile((i as f64 + 0.5) / N as f64)).collect();
            p.with_cutoffs_for(&sizes)
        }
        _ => p.clone(),
    }
}

/// Switches stamp INT when asked to, and always for HPCC, which reads it.
pub(super) fn int_enabled(s: &Scenario) -> bool {
    s.switch.int || s.transport.cc == CcKind::Hpcc
}
