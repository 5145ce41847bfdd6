//! The transport template of a scenario: how every connection's endpoints are built, from
//! `[transport]`, `[recovery.*]`, `[cc.*]` and the NIC settings they depend on. The world
//! builder and the PFC headroom check (which needs the largest frame) both read it.

use super::{CcKind, Scenario};
use crate::transport::{SwapCost, Template};

/// How every connection's endpoints are built, from `[transport]`, `[recovery.*]`, `[cc.*]`.
pub fn transport(s: &Scenario) -> Template {
    let recovery = s.recovery.params(s.transport.recovery);
    // A scheme that derives parameters from the workload's flow sizes (Homa's cutoffs) gets
    // 100,000 sizes at evenly spaced quantiles of its table (validation made sure it has one).
    let recovery = match recovery.wants_sizes().then(|| super::workload::poisson_cdf(s.workload.sized(), &s.base_dir)) {
        Some(Ok(cdf)) => {
            const N: u32 = 100_000;
            let sizes: Vec<u64> = (0..N).map(|i| cdf.quantile((i as f64 + 0.5) / N as f64)).collect();
            recovery.with_sizes(&sizes)
        }
        _ => recovery,
    };
    let cc = s.cc.params(s.transport.cc);
    let qp_swap = SwapCost { per_context: s.nic.qp_swap_time.0, per_block: s.nic.qp_swap_per_block.0 };
    // The INT header's room on data packets and responses: INT's records, or with TIMELY the
    // 8 B send timestamp of ns-3's IntHeader in TS mode.
    let int_header = if int_enabled(s) {
        s.switch.int_bytes
    } else if s.transport.cc == CcKind::Timely {
        crate::transport::cc::timely::TS_HEADER_BYTES
    } else {
        0
    };
    // ns-3 ACK_HIGH_PRIO 0: responses queue with their flow's data at switches.
    let responses_at_data_priority = s.nic.ack_class == super::AckClass::Data;
    let colour_as_ecn = s.nic.colour_codepoint == super::nic::ColourCodepoint::Ecn;
    Template { recovery, cc, ack_interval: s.nic.ack_interval, qp_swap, int_header, responses_at_data_priority, colour_as_ecn }
}

/// Switches stamp INT when asked to, and always for HPCC, which reads it.
pub(super) fn int_enabled(s: &Scenario) -> bool {
    s.switch.int || s.transport.cc == CcKind::Hpcc
}
