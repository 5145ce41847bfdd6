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
//! # Why a fine calendar of linked lists
//! A packet network schedules almost every event a few microseconds ahead (serialization, wire
//! delay), about a dozen per simulated nanosecond in a 320-host fabric. A heap pays O(log n)
//! cache-missing comparisons per pop; coarse buckets that are sorted when the clock reaches
//! them (the previous design: 8 ns buckets, ~100 events each) spent a sixth of the run
//! sorting. Here a bucket is 256 ps wide, so it holds a few events at most, kept in key order
//! as a singly linked list through a slab of entries, with its tail known: a push mostly
//! joins at the tail or the head, else walks a list of one or two; a pop takes a head. A
//! two-level bitmap finds the next non-empty bucket. Entries are reused through a free list
//! (most recently freed first, so still in cache); nothing allocates once the slab has reached
//! the run's working size. Timers beyond the calendar's span (8.4 us) wait in the heap and
//! move into the calendar when the span reaches them.

use super::queue_trace::{record, Op};
use super::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of a bucket's width in picoseconds (256 ps).
const BUCKET_BITS: u32 = 8;
/// Bits of the origin-local sequence in a key; the origin takes the bits above.
const SEQ_BITS: u32 = 40;
/// The most origins a queue can key (2^24).
pub const MAX_ORIGINS: usize = 1 << (64 - SEQ_BITS);

/// Buckets in the calendar: 2^15 x 256 ps = 8.4 us ahead of the current bucket.
const BUCKETS: usize = 1 << 15;
const MASK: u64 = BUCKETS as u64 - 1;
/// Words of the occupancy bitmap (one bit per bucket) and of its summary (one bit per word).
const WORDS: usize = BUCKETS / 64;
const SUMMARY: usize = WORDS / 64;
/// The end of a list.
const NIL: u32 = u32::MAX;

/// The smallest key an event of `origin` can have at a time: every key below it at that time
/// belongs to a lower origin.
pub const fn first_key(origin: u32) -> u64 {
    (origin as u64) << SEQ_BITS
}

pub struct EventQueue<E> {
    /// Every bucket before `cur` is empty; calendar entries lie in `cur .. cur + BUCKETS`.
    cur: u64,
    /// Per slot (`bucket & MASK`): the first entry of its list, in key order. Fixed-size
    /// arrays indexed by a masked slot, so the compiler sees every index is in bounds.
    heads: Box<[u32; BUCKETS]>,
    /// Per slot: the last entry of its list (meaningful while the list is not empty). Pushes
    /// into one bucket come mostly in key order (a synchronous fabric sends many packets at
    /// the same picosecond, from origins handled in key order), so most join at the tail
    /// without walking the list.
    tails: Box<[u32; BUCKETS]>,
    /// One bit per slot: non-empty; and one bit per word of it: non-zero.
    occupied: Box<[u64; WORDS]>,
    summary: [u64; SUMMARY],
    slab: Vec<Node<E>>,
    /// Free slab entries, linked through `next`.
    free: u32,
    in_wheel: usize,
    /// Entries beyond the calendar's span (and the rare one pushed behind `cur` after a peek
    /// moved it on).
    far: BinaryHeap<Entry<E>>,
    /// Per origin: the sequence number its next push takes.
    next_seq: Vec<u64>,
    last_popped: Time,
}

struct Node<E> {
    time: Time,
    /// Origin (high bits) and its sequence number (low [`SEQ_BITS`]).
    seq: u64,
    next: u32,
    event: Option<E>,
}

struct Entry<E> {
    time: Time,
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
            cur: 0,
            heads: Box::new([NIL; BUCKETS]),
            tails: Box::new([NIL; BUCKETS]),
            occupied: Box::new([0; WORDS]),
            summary: [0; SUMMARY],
            slab: Vec::with_capacity(1024),
            free: NIL,
            in_wheel: 0,
            far: BinaryHeap::new(),
            next_seq: vec![0; origins],
            last_popped: Time::ZERO,
        }
    }

    /// Schedules `event` at `time` on behalf of `origin`.
    #[inline]
    pub fn push(&mut self, time: Time, origin: u32, event: E) {
        record(Op::Push { time, origin });
        let n = &mut self.next_seq[origin as usize];
        let seq = *n;
        *n += 1;
        debug_assert!(seq < 1 << SEQ_BITS, "origin {origin} pushed 2^{SEQ_BITS} events");
        self.insert(time, (origin as u64) << SEQ_BITS | seq, event);
    }

    /// Schedules `event` at `time` for an origin that never has two events at one time: its
    /// key is (time, origin), whoever pushes it.
    #[inline]
    pub fn push_unique(&mut self, time: Time, origin: u32, event: E) {
        record(Op::PushUnique { time, origin });
        debug_assert!((origin as usize) < self.next_seq.len());
        self.insert(time, (origin as u64) << SEQ_BITS, event);
    }

    #[inline(always)]
    fn insert(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(time >= self.last_popped, "event scheduled in the past");
        let b = bucket(time);
        if b >= self.cur && b - self.cur < BUCKETS as u64 {
            self.link(time, seq, event);
        } else {
            self.far.push(Entry { time, seq, event });
        }
    }

    /// Puts an entry into its bucket's list, in key order.
    #[inline(always)]
    fn link(&mut self, time: Time, seq: u64, event: E) {
        let node = Node { time, seq, next: NIL, event: Some(event) };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.slab[i as usize].next;
            self.slab[i as usize] = node;
            i
        } else {
            self.slab.push(node);
            (self.slab.len() - 1) as u32
        };
        let slot = (bucket(time) & MASK) as usize;
        let key = (time, seq);
        let (head, tail) = (self.heads[slot], self.tails[slot]);
        if head == NIL {
            self.heads[slot] = i;
            self.tails[slot] = i;
            let w = slot >> 6;
            self.occupied[w] |= 1 << (slot & 63);
            self.summary[w >> 6] |= 1 << (w & 63);
        } else if key > self.key(tail) {
            self.slab[tail as usize].next = i;
            self.tails[slot] = i;
        } else if key < self.key(head) {
            self.slab[i as usize].next = head;
            self.heads[slot] = i;
        } else {
            // Somewhere in the middle (never at the end: the tail's key is greater).
            let mut at = head;
            loop {
                let next = self.slab[at as usize].next;
                if key < self.key(next) {
                    self.slab[i as usize].next = next;
                    self.slab[at as usize].next = i;
                    break;
                }
                at = next;
            }
        }
        self.in_wheel += 1;
    }

    fn key(&self, i: u32) -> (Time, u64) {
        let n = &self.slab[i as usize];
        (n.time, n.seq)
    }

    /// The first calendar bucket at or after `from` (an absolute bucket number in the span)
    /// that holds an entry, if any.
    fn next_occupied(&self, from: u64) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (from & MASK) as usize;
        let found = |slot: usize| from + ((slot as u64).wrapping_sub(start as u64) & MASK);
        let w0 = start >> 6;
        let bits = self.occupied[w0] & (!0u64 << (start & 63));
        if bits != 0 {
            return Some(found(w0 << 6 | bits.trailing_zeros() as usize));
        }
        // Words after w0 through the summary, then from the start, wrapping around once (the
        // low bits of w0 itself are buckets a whole span ahead).
        for pass in 0..2 {
            for s in 0..SUMMARY {
                let mut sbits = self.summary[s];
                if pass == 0 {
                    let first = w0 + 1;
                    if first >= (s + 1) * 64 {
                        continue;
                    }
                    if first > s * 64 {
                        sbits &= !0u64 << (first - s * 64);
                    }
                }
                if sbits != 0 {
                    let w = s * 64 + sbits.trailing_zeros() as usize;
                    return Some(found(w << 6 | self.occupied[w].trailing_zeros() as usize));
                }
            }
        }
        unreachable!("in_wheel > 0 but no bucket is occupied")
    }

    /// Moves `cur` to the first non-empty bucket (bringing far entries into the span it now
    /// covers) and returns that bucket's first entry. Inlined into every pop (as it was when
    /// the run loop's pop was the only caller: a call per event costs 4 % of the hop).
    #[inline(always)]
    fn first(&mut self) -> Option<u32> {
        let head = self.heads[(self.cur & MASK) as usize];
        if head != NIL {
            return Some(head);
        }
        let next = match (self.next_occupied(self.cur), self.far.peek().map(|e| bucket(e.time))) {
            (Some(w), Some(f)) => w.min(f.max(self.cur)),
            (Some(w), None) => w,
            (None, Some(f)) => f.max(self.cur),
            (None, None) => return None,
        };
        self.cur = next;
        while let Some(e) = self.far.peek() {
            let b = bucket(e.time);
            if b < self.cur || b - self.cur >= BUCKETS as u64 {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.link(e.time, e.seq, e.event);
        }
        let head = self.heads[(self.cur & MASK) as usize];
        (head != NIL).then_some(head)
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time(u64::MAX))
    }

    /// Pops the next event if it is due no later than `until` (one look for the run loop's
    /// "peek, compare, pop").
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, E)> {
        record(Op::PopUntil { until });
        self.pop_if(|time, _| time <= until).map(|(time, _, event)| (time, event))
    }

    /// Pops the next event if its key (time, then origin and sequence) is no later than
    /// `(until, key)`, returning its key too: a partition of a parallel run stops at the key
    /// of the serial run's last event ([`crate::world`]'s partitioned engine).
    #[inline]
    pub fn pop_through(&mut self, until: Time, key: u64) -> Option<(Time, u64, E)> {
        self.pop_if(|time, seq| (time, seq) <= (until, key))
    }

    #[inline(always)]
    fn pop_if(&mut self, due: impl Fn(Time, u64) -> bool) -> Option<(Time, u64, E)> {
        let first = self.first();
        let from_far = match (first, self.far.peek()) {
            (Some(i), Some(f)) => f.key() < self.key(i),
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => return None,
        };
        let (time, seq, event) = if from_far {
            let top = self.far.peek().expect("peeked");
            if !due(top.time, top.seq) {
                return None;
            }
            let e = self.far.pop().expect("peeked");
            (e.time, e.seq, e.event)
        } else {
            let i = first.expect("a calendar entry");
            let slot = (self.cur & MASK) as usize;
            let node = &mut self.slab[i as usize];
            if !due(node.time, node.seq) {
                return None;
            }
            let (time, seq, next, event) = (node.time, node.seq, node.next, node.event.take().expect("a live entry"));
            node.next = self.free;
            self.free = i;
            self.heads[slot] = next;
            if next == NIL {
                let w = slot >> 6;
                self.occupied[w] &= !(1 << (slot & 63));
                if self.occupied[w] == 0 {
                    self.summary[w >> 6] &= !(1 << (w & 63));
                }
            }
            self.in_wheel -= 1;
            (time, seq, event)
        };
        self.last_popped = time;
        Some((time, seq, event))
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        let first = self.first().map(|i| self.slab[i as usize].time);
        match (first, self.far.peek().map(|e| e.time)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn len(&self) -> usize {
        self.in_wheel + self.far.len()
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
        // bucket (an O(1) push), one beyond it in the heap until the span reaches it.
        let mut q = EventQueue::new(1);
        let width = 1u64 << BUCKET_BITS;
        q.push(Time(3 * width), 0, "near");
        q.push(Time((BUCKETS as u64 + 5) * width), 0, "far");
        assert_eq!((q.in_wheel, q.far.len()), (1, 1));
        assert_eq!(q.pop(), Some((Time(3 * width), "near")));
        assert_eq!(q.cur, 3, "the bucket being drained is the event's");
        q.push(Time(3 * width + 1), 0, "same bucket");
        q.push(Time(6 * width), 0, "later bucket");
        assert_eq!((q.in_wheel, q.far.len()), (2, 1));
        assert_eq!(q.pop(), Some((Time(3 * width + 1), "same bucket")));
        assert_eq!(q.pop(), Some((Time(6 * width), "later bucket")));
        // Moving on to bucket 6 brought bucket BUCKETS + 5 into the span.
        assert_eq!((q.in_wheel, q.far.len()), (1, 0));
        // Far along in time (past several wraps) near events still go to the calendar.
        let mut q = EventQueue::new(1);
        q.push(Time(5000 * width), 0, "late");
        assert_eq!(q.pop(), Some((Time(5000 * width), "late")));
        q.push(Time(5001 * width), 0, "next");
        q.push(Time(5000 * width + (BUCKETS as u64) * width), 0, "span");
        assert_eq!((q.in_wheel, q.far.len()), (1, 1));
    }

    #[test]
    fn a_push_behind_a_peek_still_pops_first() {
        // peek_time moves the calendar on to the next event; an event pushed after that, but
        // earlier (not in the past of the last pop), must still pop first.
        let mut q = EventQueue::new(1);
        let width = 1u64 << BUCKET_BITS;
        q.push(Time(10 * width), 0, "a");
        assert_eq!(q.pop(), Some((Time(10 * width), "a")));
        q.push(Time(900 * width), 0, "c");
        assert_eq!(q.peek_time(), Some(Time(900 * width)));
        q.push(Time(20 * width), 0, "b");
        q.push(Time(20 * width), 0, "b2");
        assert_eq!(q.peek_time(), Some(Time(20 * width)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["b", "b2", "c"]);
    }

    #[test]
    fn the_next_bucket_is_found_across_the_bitmap_and_its_wrap() {
        // One event per bitmap word and summary word, in every position relative to the
        // current bucket, including just behind it (a whole span ahead).
        let width = 1u64 << BUCKET_BITS;
        for start in [0u64, 63, 64, 4095, 4096, BUCKETS as u64 - 1, 3 * BUCKETS as u64 + 17] {
            let mut q = EventQueue::new(1);
            q.push(Time(start * width), 0, 0u64);
            q.pop();
            let mut times: Vec<u64> = [1u64, 2, 63, 64, 65, 4095, 4096, 4097, BUCKETS as u64 - 2, BUCKETS as u64 - 1]
                .iter()
                .map(|a| (start + a) * width + a % 7)
                .collect();
            for &t in &times {
                q.push(Time(t), 0, t);
            }
            times.sort();
            let popped: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
            assert_eq!(popped, times, "start {start}");
        }
    }

    #[test]
    fn one_bucket_takes_pushes_at_its_tail_its_head_and_between() {
        // A synchronous fabric fills one bucket with same-time events pushed mostly in key
        // order (they join at the tail), sometimes in reverse (at the head), rarely between.
        let mut q = EventQueue::new(8);
        assert!(q.is_empty());
        for origin in [2, 4, 6] {
            q.push(Time(100), origin, origin); // each beyond the tail
        }
        q.push(Time(100), 1, 1); // before the head
        q.push(Time(100), 5, 5); // between 4 and 6
        q.push(Time(100), 3, 3); // between 2 and 4
        q.push(Time(100), 7, 7); // beyond the tail again: the tail moved with the pushes
        q.push(Time(99), 0, 0); // an earlier time in the same bucket: the new head
        assert!(!q.is_empty() && q.len() == 8);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(q.is_empty());
        // The emptied bucket starts a new list: its old tail must not be followed.
        q.push(Time(101), 2, 20);
        q.push(Time(101), 1, 10);
        q.push(Time(101), 3, 30);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, [10, 20, 30]);
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
