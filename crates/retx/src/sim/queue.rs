//! The event queue of one simulation.

use super::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A priority queue of events keyed by `(time, insertion sequence)`.
///
/// # Ordering contract
/// - Events pop in non-decreasing time order.
/// - Events with equal time pop in the order they were pushed (FIFO), so a run never depends
///   on heap internals and the same inputs always give the same order.
/// - Nothing is ever removed early: a component that no longer wants an event it scheduled
///   remembers what it expects (e.g. the deadline it armed) and ignores stale events when they
///   pop ("lazy cancellation"). This keeps push/pop O(log n) with no search.
/// - Pushing an event in the past of the last popped time is a bug and panics in debug builds.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    last_popped: Time,
}

struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0, last_popped: Time::ZERO }
    }

    pub fn push(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.last_popped, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.last_popped = e.time;
        Some((e.time, e.event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Time(30), "c");
        q.push(Time(10), "a1");
        q.push(Time(20), "b");
        q.push(Time(10), "a2");
        q.push(Time(10), "a3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["a1", "a2", "a3", "b", "c"]);
    }

    #[test]
    fn matches_a_sort_by_time_then_sequence_on_random_input() {
        let mut rng = crate::sim::rng::stream(5, crate::sim::rng::Stream::Workload, 0);
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        let mut now = 0;
        for i in 0..20_000u64 {
            // Interleave pushes and pops, with many equal times, never pushing into the past.
            let t = now + rng.next_u64() % 50;
            q.push(Time(t), i);
            expected.push((t, i));
            if rng.next_u64().is_multiple_of(3) {
                expected.sort();
                let (t0, i0) = expected.remove(0);
                assert_eq!(q.pop(), Some((Time(t0), i0)));
                now = t0;
            }
        }
        expected.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.0, i)).collect();
        assert_eq!(rest, expected);
    }
}
