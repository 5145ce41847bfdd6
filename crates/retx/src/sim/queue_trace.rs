//! What an event queue was asked to do in a run, and its replay through a fresh queue: the cost
//! of the queue alone on a run's own stream of events, apart from everything else a hop does
//! (`retx-bench queue`, docs/BENCHMARKS.md).
//!
//! Recording is compiled in only with the `queue-trace` feature: without it [`record`] is
//! empty and the queue's hot path is unchanged (fabric bench, 5 A/B pairs: 1.000 of the CPU
//! time). Replaying is always compiled (and tested). `peek_time` is not recorded: it pops
//! nothing, and the run loop does not call it.

use super::queue::EventQueue;
use super::units::Time;
use std::cell::RefCell;

/// One call on the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Push { time: Time, origin: u32 },
    PushUnique { time: Time, origin: u32 },
    PopUntil { until: Time },
}

thread_local! {
    static TRACE: RefCell<Option<Vec<Op>>> = const { RefCell::new(None) };
}

/// Starts recording the calls of every queue on this thread.
pub fn start() {
    TRACE.with(|t| *t.borrow_mut() = Some(Vec::new()));
}

/// Stops recording and returns what was recorded (nothing without the feature).
pub fn take() -> Vec<Op> {
    TRACE.with(|t| t.borrow_mut().take().unwrap_or_default())
}

/// Whether this build records at all.
pub const ENABLED: bool = cfg!(feature = "queue-trace");

#[inline(always)]
pub(crate) fn record(op: Op) {
    #[cfg(feature = "queue-trace")]
    TRACE.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push(op)
        }
    });
    #[cfg(not(feature = "queue-trace"))]
    let _ = op;
}

/// What a replay popped: how many events, and a digest of their order (to check that two
/// replays, or two queue designs, agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    pub pops: u64,
    pub digest: u64,
}

/// Replays `ops` through a fresh queue keyed for `origins`. The events carry 12 bytes, the
/// size of the run's own events, so the queue's entries are as large as in the run.
pub fn replay(ops: &[Op], origins: usize) -> Replayed {
    let mut q: EventQueue<[u32; 3]> = EventQueue::new(origins);
    let mut out = Replayed { pops: 0, digest: 0 };
    for (i, &op) in ops.iter().enumerate() {
        match op {
            Op::Push { time, origin } => q.push(time, origin, [i as u32, origin, 0]),
            Op::PushUnique { time, origin } => q.push_unique(time, origin, [i as u32, origin, 0]),
            Op::PopUntil { until } => {
                if let Some((t, e)) = q.pop_until(until) {
                    out.pops += 1;
                    out.digest = (out.digest ^ t.0 ^ u64::from(e[0])).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
    }
    out
}

/// The origins a trace names (one more than the largest).
pub fn origins(ops: &[Op]) -> usize {
    let origin = |op: &Op| match *op {
        Op::Push { origin, .. } | Op::PushUnique { origin, .. } => origin as usize + 1,
        Op::PopUntil { .. } => 0,
    };
    ops.iter().map(origin).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replay pops what a sort by (time, origin, push order) says, and only what is due.
    #[test]
    fn a_replay_pops_in_key_order_and_only_what_is_due() {
        let push = |ns: u64, origin: u32| Op::Push { time: Time::from_ns(ns), origin };
        let pop = |ns: u64| Op::PopUntil { until: Time::from_ns(ns) };
        let ops = [push(5, 1), push(5, 0), Op::PushUnique { time: Time::from_ns(3), origin: 2 }, push(20_000, 0), pop(4), pop(5), pop(5), pop(5), pop(100)];
        assert_eq!(origins(&ops), 3);
        let got = replay(&ops, 3);
        // Expected order: op 2 (3 ns), op 1 (5 ns, origin 0), op 0 (5 ns, origin 1); the 20 us
        // event is never due; the fourth pop at 5 ns finds nothing.
        let mut digest = 0u64;
        for (ns, i) in [(3u64, 2u64), (5, 1), (5, 0)] {
            digest = (digest ^ Time::from_ns(ns).0 ^ i).wrapping_mul(0x100_0000_01b3);
        }
        assert_eq!(got, Replayed { pops: 3, digest });
    }

    #[test]
    fn records_every_call_with_the_feature_and_nothing_without() {
        start();
        let mut q: EventQueue<u32> = EventQueue::new(1);
        q.push(Time::from_ns(1), 0, 7);
        assert_eq!(q.pop(), Some((Time::from_ns(1), 7)));
        let ops = take();
        if ENABLED {
            assert_eq!(ops, [Op::Push { time: Time::from_ns(1), origin: 0 }, Op::PopUntil { until: Time(u64::MAX) }]);
        } else {
            assert!(ops.is_empty());
        }
    }
}
