//! The random-fault property plumbing shared by `delivery_props.rs` and
//! `delivery_props_hw.rs`: a case (message, PSNs, faults both ways, ACK coalescing), its
//! strategy, and the delivery check every scheme must pass.

use super::{spec, Faults, Pair};
use proptest::prelude::*;
use retx::sim::units::Time;
use retx::transport::common::psn::PSN_MASK;

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

/// Packets per message: a single packet in 1 case of 20, else mostly multi-packet messages of
/// up to 40 or up to 1200 packets (about evenly).
pub fn npkts() -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(1u64), 9 => 2..=40u64, 10 => 2..=1_200u64]
}

/// Where the message starts in PSN space, resolved against its packet count by [`case`].
#[derive(Clone, Copy, Debug)]
pub enum Start {
    /// Any PSN (crosses the wrap only if it lands within the message below 2^24).
    Anywhere(u32),
    /// Within the message's length below 2^24, so that its PSNs wrap to 0 mid-message: the
    /// start is 2^24 - 1 - (r mod (npkts - 1)), i.e. between 1 and npkts - 1 packets before
    /// the wrap. A single-packet message, which cannot cross, starts at the last PSN.
    Crossing(u64),
    /// Within 3_000 PSNs below the wrap, whatever the message length.
    NearWrap(u32),
}

impl Start {
    pub fn resolve(self, npkts: u64) -> u32 {
        match self {
            Start::Anywhere(p) | Start::NearWrap(p) => p,
            Start::Crossing(r) => {
                let before_wrap = if npkts >= 2 { 1 + r % (npkts - 1) } else { 1 };
                ((1u64 << 24) - before_wrap) as u32
            }
        }
    }
}

pub fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        4 => (0..=PSN_MASK).prop_map(Start::Anywhere),
        5 => any::<u64>().prop_map(Start::Crossing),
        1 => ((PSN_MASK - 3_000)..=PSN_MASK).prop_map(Start::NearWrap),
    ]
}

/// A random case. About half the messages cross the 24-bit PSN wrap and about 95 % have more
/// than one packet (`props_generator.rs` checks both shares); the last packet is a random
/// fraction of the MTU.
pub fn case() -> impl Strategy<Value = Case> {
    (npkts(), 256..=4096u32, any::<u64>(), start(), faults(), faults(), any::<u64>(), 1..=4u32).prop_map(
        |(npkts, mtu, tail, start, data, ctrl, seed, ack_interval)| Case {
            size: (npkts - 1) * mtu as u64 + 1 + tail % mtu as u64,
            mtu,
            initial_psn: start.resolve(npkts),
            data,
            ctrl,
            seed,
            ack_interval,
        },
    )
}

impl Case {
    pub fn npkts(&self) -> u64 {
        self.size.div_ceil(self.mtu as u64)
    }

    /// Some packet of the message has its PSN wrap past 2^24 - 1 to 0.
    pub fn crosses_wrap(&self) -> bool {
        self.initial_psn as u64 + self.npkts() > 1 << 24
    }
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
