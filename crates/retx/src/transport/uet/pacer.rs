//! UET's NIC-wide state: the receiver credit controller's pull pacer (RCCC, uet-htsim
//! `UecPullPacer`, uec.cpp:3040-3170, one per host, `main_uec.cpp:753-755`) and what the host's
//! UET connections count together.
//!
//! The pacer sends PULLs (cumulative credit, in 256 B quanta) at `pull_rate` (0.99) of the
//! link: after a PULL granting `q` quanta the next leaves `max(q, 4)` quanta's time later.
//! Receivers with credit still to grant (their sender's pull target above what was pulled)
//! take turns round robin, `credit_per_pull` (16 KB) each; when none has any, receivers that
//! went idle get slow pulls, unasked credit, up to their sender's maximum window (`maxwnd`,
//! 1.5 BDP) beyond their target. A receiver's pull state lives here, by its queue pair, so the
//! pacer grants without calling into it; the receiver updates it through `NicCall::agent`.

use super::oversub::{Arrival, OversubCc, OversubCfg};
use super::params::PULL_SHIFT;
use crate::transport::common::agent::{AgentTransmit, HostAgent};
use crate::transport::common::ext::{UetInfo, UetKind, UET_SLOW_PULL};
use crate::transport::common::flow::PRIORITY_CONTROL;
use crate::transport::common::psn::Psn;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

/// A receiver's cumulative credit starts here (`INIT_PULL`, uec.cpp:213), in quanta.
pub const INIT_PULL: u32 = 100_000_000;

/// A receiving queue pair's pull state (uet-htsim `UecSink`'s `_latest_pull`,
/// `_highest_pull_target`, `_in_pull`, `_in_slow_pull`, `_entropy`).
#[derive(Clone, Copy, Debug)]
struct PullState {
    latest: u32,
    target: u32,
    in_pull: bool,
    in_slow_pull: bool,
    /// The PULLs' EV counter (7 bits, `TGT_EV_SIZE`).
    entropy: u16,
    /// Unasked credit stops at this, in quanta (`quantize_floor(configured maxwnd)`).
    max_slow: u32,
}

impl Default for PullState {
    fn default() -> Self {
        PullState { latest: INIT_PULL, target: INIT_PULL, in_pull: false, in_slow_pull: false, entropy: 0, max_slow: 0 }
    }
}

impl PullState {
    fn backlog(&self) -> u32 {
        self.target.saturating_sub(self.latest)
    }

    fn slow_credit(&self) -> u32 {
        self.latest.saturating_sub(self.target)
    }

    fn next_entropy(&mut self) -> u16 {
        let mask = (1u16 << 7) - 1;
        let ev = (self.entropy & mask).wrapping_add(1) & mask;
        self.entropy = (self.entropy & !mask) | ev;
        ev
    }
}

/// What a host's UET connections count (summed over a run: `Scheme::report`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UetCounts {
    pub pulls_sent: u64,
    pub slow_pulls: u64,
    pub rts_sent: u64,
    pub acks_received: u64,
    pub nacks_received: u64,
    pub pulls_received: u64,
}

/// A host's UET state: the pull pacer and counters.
#[derive(Clone, Debug)]
pub struct UetAgent {
    /// Time per quantum of credit (`_time_per_quanta`: 256 B at `pull_rate` of the link), ps.
    per_quantum: u64,
    /// What the pacer spaces pulls by (`_actual_time_per_quanta`): `per_quantum` over the
    /// oversubscribed-fabric control's rate, when it runs.
    actual_per_quantum: u64,
    /// The host's oversubscribed-fabric control, set up by its first receiver that uses it
    /// (boxed: every host's agent of every scheme would carry its size otherwise).
    oversub: Option<Box<OversubCc>>,
    /// Quanta one PULL grants (`_credit_per_pull`).
    credit_per_pull: u32,
    pulls: Vec<PullState>,
    active: VecDeque<u32>,
    idle: VecDeque<u32>,
    /// The pacer's next event (`doNextEvent`) and whether one is pending (`_active`).
    next_at: Time,
    running: bool,
    /// Senders of this host that may send now (`UecNIC::activeSources`, approximated).
    senders: Vec<bool>,
    active_senders: u32,
    pub counts: UetCounts,
}

impl UetAgent {
    /// The pacer of a host whose link runs at `link`: PULLs at `pull_rate` of it, each
    /// granting `credit_per_pull` bytes (rounded down to quanta).
    pub fn new(link: Rate, pull_rate: f64, credit_per_pull: u64) -> Self {
        let per_quantum = ((8.0 * (1u64 << PULL_SHIFT) as f64 * 1e12 / link.bps() as f64) / pull_rate) as u64;
        UetAgent {
            per_quantum,
            actual_per_quantum: per_quantum,
            oversub: None,
            credit_per_pull: (credit_per_pull >> PULL_SHIFT) as u32,
            pulls: Vec::new(),
            active: VecDeque::new(),
            idle: VecDeque::new(),
            next_at: Time::ZERO,
            running: false,
            senders: Vec::new(),
            active_senders: 0,
            counts: UetCounts::default(),
        }
    }

    /// The time one quantum of credit takes.
    pub fn per_quantum(&self) -> Time {
        Time(self.per_quantum)
    }

    fn state(&mut self, qp: u32, max_slow: u32) -> &mut PullState {
        let i = qp as usize;
        if i >= self.pulls.len() {
            self.pulls.resize(i + 1, PullState::default());
        }
        let s = &mut self.pulls[i];
        s.max_slow = max_slow;
        s
    }

    /// Queue pair `qp` (a receiver whose sender's maximum credit is `max_slow` quanta) was
    /// asked for credit up to `target` (`handlePullTarget`, uec.cpp:2547): a higher target
    /// puts it in line for pulls unless it is there.
    pub fn pull_target(&mut self, now: Time, qp: u32, target: u32, max_slow: u32) {
        let s = self.state(qp, max_slow);
        if target > s.target {
            s.target = target;
            if !s.in_pull {
                s.in_pull = true;
                self.request(now, qp);
            }
        }
    }

    /// Queue pair `qp` needs credit whatever its target (a trimmed packet or an RTS:
    /// `processTrimmed`, `processRts`).
    pub fn want_pull(&mut self, now: Time, qp: u32, max_slow: u32) {
        let s = self.state(qp, max_slow);
        if !s.in_pull {
            s.in_pull = true;
            self.request(now, qp);
        }
    }

    /// `requestPull` (uec.cpp:3158): into the active list, the pacer woken if it sleeps.
    fn request(&mut self, now: Time, qp: u32) {
        if !self.active.contains(&qp) {
            self.active.push_back(qp);
        }
        if !self.running || now > self.next_at {
            self.running = true;
            self.next_at = now;
        }
    }

    /// One grant to `qp` (`UecSink::pull`, uec.cpp:2912): a normal pull up to the target
    /// (`extra` 0), or a slow pull of `extra` quanta regardless of it. Returns the PULL
    /// number and the quanta granted.
    fn grant(&mut self, qp: u32, extra: u32) -> (u32, u32, u16) {
        let cpp = self.credit_per_pull;
        let s = &mut self.pulls[qp as usize];
        let granted = if extra == 0 {
            let prev = s.latest;
            s.latest = s.latest.wrapping_add(cpp);
            if s.latest > s.target {
                s.latest = s.target.max(prev);
            }
            s.latest.wrapping_sub(prev)
        } else {
            s.latest = s.latest.wrapping_add(extra);
            extra
        };
        (s.latest, granted, s.next_entropy())
    }

    /// A packet reached one of this host's receivers (`UecSink::receivePacket` and the ECN and
    /// trim counts, uec.cpp:2628-2632, 2750-2754, 2876-2877): the control's looks due by now
    /// first, then the count.
    pub fn oversub_arrival(&mut self, now: Time, cfg: OversubCfg, arrival: Arrival) {
        self.oversub.get_or_insert_with(|| Box::new(OversubCc::new(cfg)));
        self.oversub_catch_up(now);
        if let Some(c) = &mut self.oversub {
            c.count(arrival);
        }
    }

    /// The control's looks due by `now`; a new rate re-spaces the pulls after the next
    /// (`updatePullRate`, uec.cpp:3132: the time per quantum, truncated to picoseconds).
    fn oversub_catch_up(&mut self, now: Time) {
        if let Some(c) = &mut self.oversub {
            if c.catch_up(now) {
                self.actual_per_quantum = (self.per_quantum as f64 / c.rate().min(1.0)) as u64;
            }
        }
    }

    /// Sender queue pair `qp` may now send, or no longer.
    pub fn set_sending(&mut self, qp: u32, sending: bool) {
        let i = qp as usize;
        if i >= self.senders.len() {
            self.senders.resize(i + 1, false);
        }
        if self.senders[i] != sending {
            self.senders[i] = sending;
            if sending {
                self.active_senders += 1;
            } else {
                self.active_senders -= 1;
            }
        }
    }

    /// This host's senders that may send now.
    pub fn active_senders(&self) -> u32 {
        self.active_senders
    }
}

impl HostAgent for UetAgent {
    fn wants_wire(&self) -> bool {
        !self.active.is_empty() || !self.idle.is_empty()
    }

    /// The pacer's event (`doNextEvent`, uec.cpp:3061), at its own times: a PULL the link
    /// sent late does not push the next one back.
    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        if self.active.is_empty() && self.idle.is_empty() {
            if now >= self.next_at {
                self.running = false;
            }
            return AgentTransmit::Idle;
        }
        if !self.running {
            self.running = true;
            self.next_at = now;
        }
        if now < self.next_at {
            return AgentTransmit::WaitUntil(self.next_at);
        }
        self.oversub_catch_up(now);
        let (qp, number, granted, ev, slow) = if let Some(qp) = self.active.pop_front() {
            let (number, granted, ev) = self.grant(qp, 0);
            let s = &mut self.pulls[qp as usize];
            if s.backlog() > 0 {
                self.active.push_back(qp);
            } else {
                s.in_pull = false;
                s.in_slow_pull = true;
                self.idle.push_back(qp);
            }
            (qp, number, granted, ev, false)
        } else {
            let qp = self.idle.pop_front().expect("an idle receiver");
            let s = &mut self.pulls[qp as usize];
            if !s.in_slow_pull {
                (s.in_pull, s.in_slow_pull) = (false, true);
            }
            let (number, granted, ev) = self.grant(qp, self.credit_per_pull);
            let s = &mut self.pulls[qp as usize];
            if s.backlog() == 0 && s.slow_credit() < s.max_slow {
                self.idle.push_back(qp);
            } else {
                (s.in_pull, s.in_slow_pull) = (false, false);
            }
            self.counts.slow_pulls += 1;
            (qp, number, granted, ev, true)
        };
        self.counts.pulls_sent += 1;
        let due = self.next_at;
        // At least 1 KB's time between pulls, even one granting nothing.
        self.next_at = due + Time(self.actual_per_quantum * granted.max(1024 >> PULL_SHIFT) as u64);
        let mut seg = Segment::control(SegKind::Grant, Psn::new(0), now);
        seg.ext = Ext::Uet(UetInfo { kind: UetKind::Pull, flags: if slow { UET_SLOW_PULL } else { 0 }, number, ..UetInfo::default() });
        (seg.priority, seg.wire_bytes, seg.path) = (PRIORITY_CONTROL as u8, super::params::HEADER_BYTES, crate::transport::common::segment::PathInfo::with_ev(ev));
        AgentTransmit::Send { qp, seg }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pull_of(t: &AgentTransmit) -> (u32, u32, bool) {
        let AgentTransmit::Send { qp, seg } = t else { panic!("{t:?}") };
        let Ext::Uet(u) = seg.ext else { panic!() };
        (*qp, u.number, u.flags & UET_SLOW_PULL != 0)
    }

    #[test]
    fn the_pacer_runs_at_099_of_the_link_16kb_a_pull() {
        // (8 x 256 x 1e12 / 1e11) / 0.99 = 20,686.87 ps per quantum, truncated (uec.cpp:3051).
        let p = UetAgent::new(Rate::gbps(100), 0.99, 16_384);
        assert_eq!(p.per_quantum(), Time(20_686));
        assert_eq!(p.credit_per_pull, 64);
    }

    #[test]
    fn pulls_go_round_robin_up_to_each_target_then_slow_pulls_up_to_maxwnd() {
        let mut p = UetAgent::new(Rate::gbps(100), 0.99, 16_384);
        let gap = Time(20_686 * 64);
        // Receiver 1 wants 100 quanta, receiver 2 wants 64; slow credit stops at 128 quanta.
        p.pull_target(Time::ZERO, 1, INIT_PULL + 100, 128);
        p.pull_target(Time::ZERO, 2, INIT_PULL + 64, 128);
        assert!(p.wants_wire());
        let t0 = Time::ZERO;
        assert_eq!(pull_of(&p.poll_transmit(t0)), (1, INIT_PULL + 64, false));
        assert_eq!(p.poll_transmit(t0), AgentTransmit::WaitUntil(gap));
        assert_eq!(pull_of(&p.poll_transmit(gap)), (2, INIT_PULL + 64, false));
        // Receiver 1's second pull grants the 36 quanta left: the next pull comes 36 quanta on.
        assert_eq!(pull_of(&p.poll_transmit(gap + gap)), (1, INIT_PULL + 100, false));
        let after36 = gap + gap + Time(20_686 * 36);
        assert_eq!(p.poll_transmit(after36 - Time(1)), AgentTransmit::WaitUntil(after36));
        // Both satisfied: slow pulls, 64 quanta each, in turn, until 128 quanta beyond each
        // target.
        let mut now = after36;
        loop {
            match p.poll_transmit(now) {
                AgentTransmit::Send { .. } => {}
                AgentTransmit::WaitUntil(t) => now = t,
                AgentTransmit::Idle => break,
            }
        }
        assert_eq!(p.counts.slow_pulls, 4);
        assert_eq!((p.pulls[1].slow_credit(), p.pulls[2].slow_credit()), (128, 128));
        assert!(!p.wants_wire());
        // A new target puts it back in line at once (the pacer fell idle).
        let later = now + Time::from_us(100);
        p.pull_target(later, 2, INIT_PULL + 64 + 128 + 10, 128);
        assert_eq!(pull_of(&p.poll_transmit(later)), (2, INIT_PULL + 64 + 128 + 10, false));
    }

    #[test]
    fn pull_evs_count_through_seven_bits() {
        let mut s = PullState::default();
        let evs: Vec<u16> = (0..130).map(|_| s.next_entropy()).collect();
        assert_eq!(&evs[..3], &[1, 2, 3]);
        assert_eq!(&evs[126..130], &[127, 0, 1, 2]);
    }
}
