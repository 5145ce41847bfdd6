//! Load balancing by entropy value: which EV each packet of a UET connection carries, and
//! what ACKs, NACKs and timeouts teach about the EVs (uet-htsim `uec_mp.cpp`,
//! `buffer_reps.cpp` at 40ccb05; learnt from, not copied). Switches hash (connection, EV), so
//! the EV is the packet's path.
//!
//! - oblivious: a random permutation of the `paths` EVs per round, upper bits random per
//!   connection (`UecMpOblivious`, uec_mp.cpp:7-44);
//! - bitmap: the same walk, skipping EVs with a penalty (ECN +1, NACK +4, timeout +15, at most
//!   15), the first skipped one's penalty decremented (`UecMpBitmap`, uec_mp.cpp:47-135). As in
//!   uet-htsim a timeout penalises EV 0 (`UNKNOWN_EV`): the sender keeps no EV per packet;
//! - REPS: recycle the EVs of ACKs without ECN from an 8-entry buffer, each once, random EVs
//!   when none is fresh; a timeout freezes the buffer (cycle through it) for 10 ms, then 16
//!   random EVs explore (`UecMpReps`, uec_mp.cpp:137-196, `buffer_reps.cpp`);
//! - REPS-legacy: the first window walks the EVs in turn, later an unbounded FIFO of good EVs,
//!   random when empty (`UecMpRepsLegacy`, uec_mp.cpp:199-261);
//! - mixed (uet-htsim's default): a good EV from the REPS-legacy FIFO if there is one, else
//!   the bitmap's (`UecMpMixed`, uec_mp.cpp:264-288).
//!
//! Random draws come from a per-connection generator seeded by the flow (uet-htsim draws from
//! one global `mt19937`, so the EVs themselves cannot match, only how they are chosen).

use crate::sim::rng::mix64;
use crate::sim::units::Time;
use crate::transport::common::segment::PathInfo;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[recovery.uet] load_balancing`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LbKind {
    Oblivious,
    Bitmap,
    Reps,
    RepsLegacy,
    /// REPS-legacy recycling over the bitmap (uet-htsim's default, `main_uec.cpp:88-89`).
    #[default]
    Mixed,
}

impl LbKind {
    /// As a configuration writes it.
    pub fn name(self) -> &'static str {
        match self {
            LbKind::Oblivious => "oblivious",
            LbKind::Bitmap => "bitmap",
            LbKind::Reps => "reps",
            LbKind::RepsLegacy => "reps-legacy",
            LbKind::Mixed => "mixed",
        }
    }
}

/// What a response said about the path an EV names (`UecMultipath::PathFeedback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// An ACK without ECN (or a last-hop NACK without it).
    Good,
    /// An ACK (or last-hop NACK) with ECN.
    Ecn,
    /// A NACK of a packet trimmed before the last hop.
    Nack,
    /// A retransmission timeout (its EV unknown: uet-htsim passes EV 0).
    Timeout,
}

/// The most penalty an EV carries in the bitmap scheme (`_max_penalty`).
const MAX_PENALTY: u8 = 15;
/// REPS's buffer of recycled EVs (`repsBufferSize`).
const REPS_BUFFER: usize = 8;
/// REPS stays frozen this long after a timeout (`exit_freeze_after`, 10 ms).
const REPS_FREEZE: Time = Time(10_000_000_000);
/// Random EVs REPS explores with after leaving the frozen mode.
const REPS_EXPLORE: u16 = 16;

/// A connection's random draws (htsim's `rand()`: 31 bits).
#[derive(Clone, Debug)]
struct Draws(u64);

impl Draws {
    fn rand(&mut self) -> u32 {
        self.0 = mix64(self.0.wrapping_add(0x9E37_79B9_7F4A_7C15));
        (self.0 >> 33) as u32
    }
}

/// The oblivious walk the bitmap scheme shares: a random permutation of the EVs per round.
#[derive(Clone, Debug)]
struct Walk {
    index: u16,
    xor: u16,
    upper: u16,
}

impl Walk {
    fn new(paths: u16, r: &mut Draws) -> Walk {
        let upper = (r.rand() % PathInfo::MAX_EV as u32) as u16; // EVs are 15 bits on the wire here
        let xor = (r.rand() % paths as u32) as u16;
        Walk { index: 0, xor, upper }
    }

    fn current(&self, mask: u16) -> u16 {
        (self.index ^ self.xor) & mask
    }

    fn advance(&mut self, paths: u16, r: &mut Draws) {
        self.index += 1;
        if self.index == paths {
            self.index = 0;
            self.xor = (r.rand() & (paths as u32 - 1)) as u16;
        }
    }

    fn with_upper(&self, ev: u16, mask: u16) -> u16 {
        ev | (self.upper ^ (self.upper & mask))
    }
}

/// REPS's circular buffer of EVs (`CircularBufferREPS`).
#[derive(Clone, Debug, Default)]
struct RepsBuffer {
    values: [u16; REPS_BUFFER],
    valid: [bool; REPS_BUFFER],
    head: usize,
    count: usize,
    fresh: usize,
    head_frozen: usize,
    frozen: bool,
    exit_at: Time,
    explore: u16,
}

impl RepsBuffer {
    fn add(&mut self, ev: u16) {
        if !self.valid[self.head] {
            self.fresh += 1;
        }
        self.values[self.head] = ev;
        self.valid[self.head] = true;
        self.head = (self.head + 1) % REPS_BUFFER;
        self.fresh = self.fresh.min(REPS_BUFFER);
        self.count = (self.count + 1).min(REPS_BUFFER);
    }

    fn remove_earliest_fresh(&mut self) -> u16 {
        let at = (self.head + REPS_BUFFER - self.fresh) % REPS_BUFFER;
        self.valid[at] = false;
        self.fresh -= 1;
        self.values[at]
    }

    fn remove_frozen(&mut self) -> u16 {
        let at = self.head_frozen;
        if self.valid[at] {
            self.fresh -= 1;
        }
        self.valid[at] = false;
        self.head_frozen = (self.head_frozen + 1) % self.count;
        self.values[at]
    }

    fn reset(&mut self) {
        let explore = self.explore;
        *self = RepsBuffer { explore, ..RepsBuffer::default() };
    }
}

/// One connection's EV choice.
#[derive(Clone, Debug)]
pub struct Multipath {
    kind: LbKind,
    paths: u16,
    draws: Draws,
    walk: Walk,
    /// Bitmap: each EV's penalty (`_ev_skip_bitmap`).
    penalty: Vec<u8>,
    /// REPS-legacy (and mixed): good EVs to recycle, and the walk of the first window.
    recycle: VecDeque<u16>,
    legacy_current: u16,
    reps: RepsBuffer,
}

impl Multipath {
    /// `paths` EVs (a power of two for oblivious, bitmap and mixed), draws seeded by `seed`.
    pub fn new(kind: LbKind, paths: u16, seed: u64) -> Multipath {
        let mut draws = Draws(mix64(seed ^ 0x5545_5445_5631));
        let paths = paths.max(1);
        let walk = match kind {
            LbKind::Oblivious | LbKind::Bitmap | LbKind::Mixed => Walk::new(paths, &mut draws),
            _ => Walk { index: 0, xor: 0, upper: 0 },
        };
        let penalty = if matches!(kind, LbKind::Bitmap | LbKind::Mixed) { vec![0; paths as usize] } else { Vec::new() };
        Multipath { kind, paths, draws, walk, penalty, recycle: VecDeque::new(), legacy_current: 0, reps: RepsBuffer::default() }
    }

    fn mask(&self) -> u16 {
        self.paths - 1
    }

    /// What a response said about EV `ev` at `now` (`processEv`).
    pub fn feedback(&mut self, now: Time, ev: u16, fb: Feedback) {
        match self.kind {
            LbKind::Oblivious => {}
            LbKind::Bitmap => self.bitmap_feedback(ev, fb),
            LbKind::RepsLegacy => self.legacy_feedback(ev, fb),
            LbKind::Mixed => {
                self.bitmap_feedback(ev, fb);
                self.legacy_feedback(ev, fb);
            }
            LbKind::Reps => self.reps_feedback(now, ev, fb),
        }
    }

    fn bitmap_feedback(&mut self, ev: u16, fb: Feedback) {
        let i = (ev & self.mask()) as usize;
        let add = match fb {
            Feedback::Good => 0,
            Feedback::Ecn => 1,
            Feedback::Nack => 4,
            Feedback::Timeout => MAX_PENALTY,
        };
        self.penalty[i] = self.penalty[i].saturating_add(add).min(MAX_PENALTY);
    }

    fn legacy_feedback(&mut self, ev: u16, fb: Feedback) {
        if fb == Feedback::Good {
            self.recycle.push_back(ev);
        }
    }

    fn reps_feedback(&mut self, now: Time, ev: u16, fb: Feedback) {
        let b = &mut self.reps;
        // Freezing needs trimming in uet-htsim (it exits otherwise); UET runs check that.
        if fb == Feedback::Timeout && !b.frozen && b.explore == 0 {
            b.frozen = true;
            b.exit_at = now + REPS_FREEZE;
        }
        if b.frozen && now > b.exit_at {
            b.frozen = false;
            b.reset();
            b.explore = REPS_EXPLORE;
        }
        if fb == Feedback::Good {
            b.add(ev);
        }
    }

    /// The EV for the packet about to go (`nextEntropy`): `seq` the sender's next new PSN,
    /// `cwnd_packets` its window in packets.
    pub fn next(&mut self, seq: u64, cwnd_packets: u64) -> u16 {
        match self.kind {
            LbKind::Oblivious => {
                let mask = self.mask();
                let ev = self.walk.current(mask);
                self.walk.advance(self.paths, &mut self.draws);
                self.walk.with_upper(ev, mask)
            }
            LbKind::Bitmap => self.bitmap_next(),
            LbKind::RepsLegacy => {
                if seq < cwnd_packets.min(self.paths as u64) {
                    self.legacy_current = (self.legacy_current + 1) % self.paths;
                } else {
                    self.legacy_current = match self.recycle.pop_front() {
                        Some(ev) => ev,
                        None => (self.draws.rand() % self.paths as u32) as u16,
                    };
                }
                self.legacy_current
            }
            LbKind::Mixed => match self.recycle.pop_front() {
                Some(ev) => ev,
                None => self.bitmap_next(),
            },
            LbKind::Reps => {
                let paths = self.paths as u32;
                let b = &mut self.reps;
                if b.explore > 0 {
                    b.explore -= 1;
                    return (self.draws.rand() % paths) as u16;
                }
                if b.frozen {
                    if b.count == 0 { (self.draws.rand() % paths) as u16 } else { b.remove_frozen() }
                } else if b.count == 0 || b.fresh == 0 {
                    (self.draws.rand() % paths) as u16
                } else {
                    b.remove_earliest_fresh()
                }
            }
        }
    }

    fn bitmap_next(&mut self) -> u16 {
        let mask = self.mask();
        let mut ev = self.walk.current(mask);
        let mut first = true;
        let mut tried = 0u32;
        while self.penalty[ev as usize] > 0 {
            if first {
                self.penalty[ev as usize] -= 1;
            }
            first = false;
            tried += 1;
            if tried > self.paths as u32 {
                break;
            }
            self.walk.advance(self.paths, &mut self.draws);
            ev = self.walk.current(mask);
        }
        self.walk.advance(self.paths, &mut self.draws);
        self.walk.with_upper(ev, mask)
    }

    /// EVs waiting to be recycled (REPS-legacy, mixed).
    pub fn recycled(&self) -> usize {
        self.recycle.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oblivious_uses_every_ev_once_per_round_with_fixed_upper_bits() {
        let mut m = Multipath::new(LbKind::Oblivious, 64, 7);
        let upper = m.walk.upper & !63;
        for _ in 0..3 {
            let mut round: Vec<u16> = (0..64).map(|_| m.next(0, 10)).collect();
            assert!(round.iter().all(|&e| e & !63 == upper));
            round.sort_unstable();
            round.dedup();
            assert_eq!(round.len(), 64);
        }
        // Feedback changes nothing.
        m.feedback(Time::ZERO, 3, Feedback::Timeout);
    }

    #[test]
    fn the_bitmap_skips_penalised_evs_and_forgives_the_first_one_it_meets() {
        let mut m = Multipath::new(LbKind::Bitmap, 8, 3);
        let mask = 7;
        // The next candidate is penalised by a NACK (4): skipped, its penalty down by one;
        // the one after it is taken.
        let c0 = m.walk.current(mask);
        m.feedback(Time::ZERO, c0 | 0x100, Feedback::Nack);
        let ev = m.next(0, 10);
        assert_ne!(ev & mask, c0);
        assert_eq!(m.penalty[c0 as usize], 3);
        // Penalties saturate at 15; a timeout penalises EV 0 whatever timed out.
        m.feedback(Time::ZERO, 5, Feedback::Ecn);
        for _ in 0..10 {
            m.feedback(Time::ZERO, 5, Feedback::Nack);
        }
        assert_eq!(m.penalty[5], 15);
        m.feedback(Time::ZERO, 0, Feedback::Timeout);
        assert_eq!(m.penalty[0], 15);
        // Every EV penalised: the walk gives up after `paths` + 1 candidates.
        for p in m.penalty.iter_mut() {
            *p = 15;
        }
        let _ = m.next(0, 10);
    }

    #[test]
    fn mixed_recycles_good_evs_first_and_falls_back_to_the_bitmap() {
        let mut m = Multipath::new(LbKind::Mixed, 64, 11);
        m.feedback(Time::ZERO, 4242, Feedback::Good);
        m.feedback(Time::ZERO, 17, Feedback::Ecn);
        m.feedback(Time::ZERO, 4243, Feedback::Good);
        assert_eq!((m.next(0, 10), m.next(1, 10)), (4242, 4243));
        assert_eq!(m.recycled(), 0);
        // ECN on EV 17 penalised it in the bitmap.
        assert_eq!(m.penalty[17], 1);
        let ev = m.next(2, 10);
        assert!(ev & !63 == m.walk.upper & !63);
    }

    #[test]
    fn reps_legacy_walks_the_first_window_then_recycles() {
        let mut m = Multipath::new(LbKind::RepsLegacy, 16, 1);
        assert_eq!((0..4).map(|s| m.next(s, 4)).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
        m.feedback(Time::ZERO, 9, Feedback::Good);
        assert_eq!(m.next(4, 4), 9);
        assert!(m.next(5, 4) < 16, "random when nothing is left to recycle");
    }

    #[test]
    fn reps_recycles_fresh_evs_once_and_freezes_on_a_timeout() {
        let mut m = Multipath::new(LbKind::Reps, 64, 5);
        for ev in [10, 11, 12] {
            m.feedback(Time::ZERO, ev, Feedback::Good);
        }
        assert_eq!((m.next(0, 8), m.next(0, 8), m.next(0, 8)), (10, 11, 12));
        // Used up: random ones.
        assert!(m.next(0, 8) < 64);
        // A timeout freezes: the stored EVs are cycled through, used or not.
        m.feedback(Time::from_us(1), 0, Feedback::Timeout);
        assert!(m.reps.frozen);
        assert_eq!((m.next(0, 8), m.next(0, 8), m.next(0, 8), m.next(0, 8)), (10, 11, 12, 10));
        // 10 ms on, the next feedback thaws it: reset, then 16 random EVs explore.
        m.feedback(Time::from_us(1) + REPS_FREEZE + Time(1), 33, Feedback::Good);
        assert!(!m.reps.frozen);
        assert_eq!(m.reps.explore, 16);
        for _ in 0..16 {
            assert!(m.next(0, 8) < 64);
        }
        assert_eq!(m.next(0, 8), 33);
    }
}
