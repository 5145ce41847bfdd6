//! The event queue of one simulation: a calendar of fine time buckets for the near future
//! and a binary heap for the far future.
//!
//! # Ordering contract
//! - Events pop in non-decreasing time order.
//! - Events with equal time pop by their *origin* (the element that scheduled them: a node, a
//!   wire, or the run itself), then in the order that origin pushed them. The key is
//!   (time, origin, origin-local sequence), as in nexosim: it never depends on the queue's
//!   internals, and it never depends on how elements interleave with one another, only on
//!   what each one did. A run split into partitions that each own some origins therefore
//!   orders its events exactly as the serial run does.
//! - An origin that never has two events at one time (a wire: its arrivals are strictly
//!   increasing) may push with [`EventQueue::push_unique`], which takes no sequence number, so
//!   that whoever pushes for it (the sender, or the receiver draining the wire) gives the same
//!   key.
//! - Nothing is ever removed early: a component that no longer wants an event it scheduled
//!   remembers what it expects (e.g. the deadline it armed) and ignores stale events when they
//!   pop ("lazy cancellation").
//! - Pushing an event in the past of the last popped time is a bug and panics in debug builds.
//!
//! # Why a calendar
//! A packet network schedules almost every event a few microseconds ahead (serialization, wire
//! delay), thousands of them per simulated microsecond. A heap pays O(log n) cache-missing
//! comparisons per pop; here an event within the calendar's span goes into the bucket of its
//! time (2^13 ps wide) in O(1), a bucket is sorted once when the clock reaches it (tens of
//! entries), and a bitmap finds the next non-empty bucket. Timers far ahead (retransmission,
//! rate increase) wait in the heap and join their bucket's sort when it comes up.

use super::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of a bucket's width in picoseconds (8.192 ns).
const BUCKET_BITS: u32 = 13;
/// Bits of the origin-local sequence in a key; the origin takes the bits above.
const SEQ_BITS: u32 = 40;
/// The most origins a queue can key (2^24).
pub const MAX_ORIGINS: usize = 1 << (64 - SEQ_BITS);

/// Buckets in the calendar: it covers 2^10 x 8.192 ns = 8.4 us ahead of the current bucket.
const BUCKETS: usize = 1 << 10;
const MASK: u64 = BUCKETS as u64 - 1;

pub struct EventQueue<E> {
    /// Entries of the bucket being drained, sorted so that the next one is last.
    current: Vec<Entry<E>>,
    /// The absolute number of the bucket being drained.
    cur: u64,
    /// Entries of buckets cur+1 .. cur+BUCKETS, in slot `bucket & MASK` (unsorted).
    wheel: Vec<Vec<Entry<E>>>,
    /// One bit per wheel slot: non-empty.
    occupied: Vec<u64>,
    in_wheel: usize,
    /// Entries beyond the calendar's span.
    far: BinaryHeap<Entry<E>>,
    /// Per origin: the sequence number its next push takes.
    next_seq: Vec<u64>,
    last_popped: Time,
}

struct Entry<E> {
    time: Time,
    /// Origin (high bits) and its sequence number (low [`SEQ_BITS`]).
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (Time, u64) {
        (self.time, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and the earliest (time, seq) must be on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

fn bucket(t: Time) -> u64 {
    t.0 >> BUCKET_BITS
}

impl<E> EventQueue<E> {
    /// A queue for events from origins `0..origins` (at most [`MAX_ORIGINS`]).
    pub fn new(origins: usize) -> Self {
        assert!(origins <= MAX_ORIGINS, "{origins} event origins; at most {MAX_ORIGINS}");
        EventQueue {
            current: Vec::with_capacity(64),
            cur: 0,
            wheel: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: vec![0; BUCKETS / 64],
            in_wheel: 0,
            far: BinaryHeap::new(),
            next_seq: vec![0; origins],
            last_popped: Time::ZERO,
        }
    }

    /// Schedules `event` at `time` on behalf of `origin`.
    #[inline]
    pub fn push(&mut self, time: Time, origin: u32, event: E) {
        let n = &mut self.next_seq[origin as usize];
        let seq = *n;
        *n += 1;
        debug_assert!(seq < 1 << SEQ_BITS, "origin {origin} pushed 2^{SEQ_BITS} events");
        self.insert(Entry { time, seq: (origin as u64) << SEQ_BITS | seq, event });
    }

    /// Schedules `event` at `time` for an origin that never has two events at one time: its
    /// key is (time, origin), whoever pushes it.
    #[inline]
    pub fn push_unique(&mut self, time: Time, origin: u32, event: E) {
        debug_assert!((origin as usize) < self.next_seq.len());
        self.insert(Entry { time, seq: (origin as u64) << SEQ_BITS, event });
    }

    fn insert(&mut self, e: Entry<E>) {
        debug_assert!(e.time >= self.last_popped, "event scheduled in the past");
        let b = bucket(e.time);
        if b <= self.cur {
            // The bucket being drained: keep it sorted, next last.
            let at = self.current.partition_point(|x| x.key() > e.key());
            self.current.insert(at, e);
        } else if b - self.cur < BUCKETS as u64 {
            let slot = (b & MASK) as usize;
            self.wheel[slot].push(e);
            self.occupied[slot >> 6] |= 1 << (slot & 63);
            self.in_wheel += 1;
        } else {
            self.far.push(e);
        }
    }

    /// Loads the next non-empty bucket into `current` if it is empty.
    fn refill(&mut self) {
        if !self.current.is_empty() {
            return;
        }
        let next_wheel = if self.in_wheel > 0 { Some(self.next_occupied()) } else { None };
        let next_far = self.far.peek().map(|e| bucket(e.time));
        let b = match (next_wheel, next_far) {
            (Some(w), Some(f)) => w.min(f),
            (Some(w), None) => w,
            (None, Some(f)) => f,
            (None, None) => return,
        };
        self.cur = b;
        let slot = (b & MASK) as usize;
        if next_wheel == Some(b) {
            std::mem::swap(&mut self.current, &mut self.wheel[slot]);
            self.occupied[slot >> 6] &= !(1 << (slot & 63));
            self.in_wheel -= self.current.len();
        }
        while self.far.peek().is_some_and(|e| bucket(e.time) == b) {
            let e = self.far.pop().expect("peeked");
            self.current.push(e);
        }
        self.current.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
    }

    /// The absolute number of the first occupied wheel bucket after `cur`.
    fn next_occupied(&self) -> u64 {
        let start = ((self.cur + 1) & MASK) as usize;
        let words = BUCKETS / 64;
        let (w0, bit0) = (start >> 6, start & 63);
        // The first word from its starting bit, then whole words, wrapping around once.
        for i in 0..=words {
            let w = (w0 + i) % words;
            let mut bits = self.occupied[w];
            if i == 0 {
                bits &= !0u64 << bit0;
            }
            if bits != 0 {
                let slot = (w << 6 | bits.trailing_zeros() as usize) as u64;
                let ahead = (slot.wrapping_sub(self.cur + 1)) & MASK;
                return self.cur + 1 + ahead;
            }
        }
        unreachable!("in_wheel > 0 but no bucket is occupied")
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.refill();
        let e = self.current.pop()?;
        self.last_popped = e.time;
        Some((e.time, e.event))
    }

    /// The event `n` places after the next one, if it is already known to come that soon
    /// (in the bucket being drained): a hint for prefetching its data, never for logic.
    pub fn peek_ahead(&self, n: usize) -> Option<&E> {
        let len = self.current.len();
        (n < len).then(|| &self.current[len - 1 - n].event)
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        self.refill();
        self.current.last().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.in_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order_within_an_origin() {
        let mut q = EventQueue::new(1);
        q.push(Time(30), 0, "c");
        q.push(Time(10), 0, "a1");
        q.push(Time(20), 0, "b");
        q.push(Time(10), 0, "a2");
        q.push(Time(10), 0, "a3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["a1", "a2", "a3", "b", "c"]);
    }

    #[test]
    fn equal_times_pop_by_origin_whatever_the_interleaving_of_pushes() {
        // Two origins push the same events in their own order; how their pushes interleave
        // (as in a serial run, or two partitions) must not change the order of pops.
        let a = [(10, "a0"), (10, "a1"), (5, "a2")];
        let b = [(10, "b0"), (5, "b1"), (10, "b2")];
        let run = |interleave: &[(u32, usize)]| {
            let mut q = EventQueue::new(4);
            q.push_unique(Time(5), 3, "wire3");
            for &(origin, i) in interleave {
                let (t, e) = if origin == 1 { a[i] } else { b[i] };
                q.push(Time(t), origin, e);
            }
            q.push_unique(Time(10), 0, "wire0");
            std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect::<Vec<_>>()
        };
        let serial = run(&[(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]);
        let mixed = run(&[(2, 0), (1, 0), (2, 1), (2, 2), (1, 1), (1, 2)]);
        // A wire's event sorts by its origin like any other, though it takes no sequence.
        assert_eq!(serial, ["a2", "b1", "wire3", "wire0", "a0", "a1", "b0", "b2"]);
        assert_eq!(mixed, serial);
    }

    #[test]
    fn near_events_go_to_the_calendar_and_far_ones_to_the_heap() {
        // The calendar is what makes the queue fast: an event within its span must land in a
        // bucket (an O(1) push), one beyond it in the heap, and the current bucket only holds
        // the instant being drained.
        let mut q = EventQueue::new(1);
        let width = 1u64 << BUCKET_BITS;
        q.push(Time(3 * width), 0, "near");
        q.push(Time((BUCKETS as u64 + 5) * width), 0, "far");
        assert_eq!((q.current.len(), q.in_wheel, q.far.len()), (0, 1, 1));
        assert_eq!(q.pop(), Some((Time(3 * width), "near")));
        assert_eq!(q.cur, 3, "the bucket being drained is the event's");
        q.push(Time(3 * width + 1), 0, "same bucket");
        q.push(Time(4 * width), 0, "next bucket");
        assert_eq!((q.current.len(), q.in_wheel, q.far.len()), (1, 1, 1));
        // Far along in time (past several wraps) near events still go to the calendar.
        let mut q = EventQueue::new(1);
        q.push(Time(5000 * width), 0, "late");
        assert_eq!(q.pop(), Some((Time(5000 * width), "late")));
        q.push(Time(5001 * width), 0, "next");
        q.push(Time(5000 * width + (BUCKETS as u64) * width), 0, "span");
        assert_eq!((q.in_wheel, q.far.len()), (1, 1));
    }

    #[test]
    fn peek_ahead_names_the_events_after_the_next_in_pop_order() {
        let mut q = EventQueue::new(1);
        for (t, e) in [(30, "d"), (10, "b"), (40, "e"), (5, "a"), (20, "c")] {
            q.push(Time(t), 0, e);
        }
        assert_eq!(q.peek_time(), Some(Time(5)));
        let ahead: Vec<_> = (0..6).map(|n| q.peek_ahead(n).copied()).collect();
        assert_eq!(ahead, [Some("a"), Some("b"), Some("c"), Some("d"), Some("e"), None]);
        q.pop();
        assert_eq!((q.peek_ahead(3), q.peek_ahead(4)), (Some(&"e"), None));
        assert!(!q.is_empty() && q.len() == 4);
    }

    /// Interleaves pushes and pops from several origins, many at equal times, near and far
    /// (beyond the calendar, across its wrap), never into the past; the queue must match a
    /// sort by (time, origin, origin's sequence).
    fn matches_a_sort(spread: u64, far_every: u64, seed: u64) {
        let mut rng = crate::sim::rng::stream(seed, crate::sim::rng::Stream::Workload, 0);
        let mut q = EventQueue::new(5);
        let mut expected = Vec::new();
        let mut now = 0;
        for i in 0..40_000u64 {
            let r = rng.next_u64();
            let ahead = if far_every > 0 && r.is_multiple_of(far_every) { rng.next_u64() % (spread * 10_000) } else { rng.next_u64() % spread };
            let t = now + ahead;
            // i grows, so within one origin it orders pushes as the origin's sequence does.
            let origin = (rng.next_u64() % 5) as u32;
            q.push(Time(t), origin, i);
            expected.push((t, origin, i));
            if rng.next_u64().is_multiple_of(2) {
                expected.sort();
                let (t0, _, i0) = expected.remove(0);
                assert_eq!(q.peek_time(), Some(Time(t0)));
                assert_eq!(q.pop(), Some((Time(t0), i0)));
                now = t0;
            }
            assert_eq!(q.len(), expected.len());
        }
        expected.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.0, i)).collect();
        assert_eq!(rest, expected.iter().map(|&(t, _, i)| (t, i)).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_sort_with_equal_times_in_one_bucket() {
        matches_a_sort(50, 0, 5);
    }

    #[test]
    fn matches_a_sort_across_buckets_the_wrap_and_the_far_heap() {
        // Spread over about one calendar span, with one event in 20 far beyond it.
        matches_a_sort((BUCKETS as u64) << BUCKET_BITS, 20, 6);
        matches_a_sort(3_000_000, 7, 7);
    }
}
