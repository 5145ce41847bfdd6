//! The random-fault property plumbing shared by `delivery_props.rs` and
//! `delivery_props_hw.rs`: a case (message, PSNs, faults both ways, ACK coalescing), its
//! strategy, and the delivery check every scheme must pass.

use super::{spec, Faults, Pair};
use proptest::prelude::*;
use retx::sim::units::Time;
use retx::transport::psn::PSN_MASK;

#[derive(Clone, Debug)]
pub struct Case {
    pub size: u64,
    pub mtu: u32,
    pub initial_psn: u32,
    pub data: Faults,
    pub ctrl: Faults,
    pub seed: u64,
    pub ack_interval: u32,
}

impl Case {
    /// The corner of the input space at once: 1172 packets of 256 bytes starting 5 PSNs below
    /// the wrap, 29 % loss, 9 % duplication and 2 us of jitter both ways (about 9 packets of
    /// reordering at this size).
    pub fn worst_corner() -> Case {
        let f = Faults { loss: 0.29, dup: 0.09, jitter: Time(2_000_000) };
        Case { size: 300_000, mtu: 256, initial_psn: PSN_MASK - 5, data: f, ctrl: f, seed: 3, ack_interval: 2 }
    }
}

pub fn faults() -> impl Strategy<Value = Faults> {
    (0.0..0.3f64, 0.0..0.1f64, prop_oneof![Just(0u64), 0..3_000_000u64])
        .prop_map(|(loss, dup, jitter)| Faults { loss, dup, jitter: Time(jitter) })
}

pub fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![1..3_000u64, 1..300_000u64],
        256..=4096u32,
        // Near the 24-bit wrap half of the time.
        prop_oneof![0..=PSN_MASK, (PSN_MASK - 3_000)..=PSN_MASK],
        faults(),
        faults(),
        any::<u64>(),
        1..=4u32,
    )
        .prop_map(|(size, mtu, initial_psn, data, ctrl, seed, ack_interval)| Case {
            size,
            mtu,
            initial_psn,
            data,
            ctrl,
            seed,
            ack_interval,
        })
}

/// Runs `c` and checks delivery: the whole message exactly once, in order, with the payload
/// that was sent, and the flow finished (no stall, within the time limit). Returns the
/// finished pair for scheme-specific checks. Short timers in `sections` keep lossy runs to a
/// few thousand round trips of simulated time.
pub fn check(sections: &str, c: &Case) -> Result<Pair, TestCaseError> {
    let sections = format!("[nic]\nack_interval = {}\n{sections}", c.ack_interval);
    let mut p = Pair::new(&sections, spec(c.size, c.mtu, c.initial_psn));
    p.faults(c.data, c.ctrl, c.seed);
    p.limit = Time::from_ms(10_000);
    let r = p.try_run();
    prop_assert!(r.is_ok(), "{r:?} after {} data / {} control packets", p.data.len(), p.ctrl.len());
    let n = c.size.div_ceil(c.mtu as u64);
    let log = p.delivered();
    prop_assert_eq!(log.len() as u64, n);
    prop_assert!(log.iter().copied().eq(0..n), "delivery log out of order");
    prop_assert_eq!(p.receiver.ctx.delivered_bytes, c.size);
    prop_assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    prop_assert!(p.sender.is_done());
    Ok(p)
}
