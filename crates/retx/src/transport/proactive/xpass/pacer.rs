//! ExpressPass's host-wide credit pacer and the per-flow credit feedback controller it runs.

use crate::transport::common::agent::{AgentTransmit, HostAgent, NicCall};
use crate::transport::common::ext::{XpassInfo, XpassKind};
use crate::transport::common::psn::Psn;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::sim::rng::mix64;
use crate::sim::units::{Rate, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::params::{XpassParams, W_STEP, FULL_START_PACKETS};

// ---------------------------------------------------------------------------------------
// The credit feedback controller.

/// One flow's credit rate control at its receiver (ns-2 `credit_feedback_control`): once per
/// RTT, credit loss above the target cuts the rate to what was delivered x (1 + target) and
/// halves `w`; otherwise `w` grows by 0.05 after a clean period and the rate moves `w` of the
/// way to the maximum. Rates in bytes per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CreditControl {
    pub rate: f64,
    pub max_rate: f64,
    pub w: f64,
    can_increase_w: bool,
    last_update: Time,
    /// Credits the receiver learnt the fate of since the last update, and how many of them
    /// were lost (sequence numbers skipped by the data that echoes them).
    pub total: u64,
    pub dropped: u64,
    credit_bytes: f64,
    w_max: f64,
    w_min: f64,
    target_loss_factor: f64,
}

impl CreditControl {
    /// A flow starting at `now` at `share` of `max_rate`.
    pub fn new(p: &XpassParams, max_rate: f64, share: f64, now: Time) -> Self {
        CreditControl {
            rate: share * max_rate,
            max_rate,
            w: p.w_init,
            can_increase_w: false,
            last_update: now,
            total: 0,
            dropped: 0,
            credit_bytes: p.credit_bytes.0 as f64,
            w_max: p.w_max,
            w_min: p.w_min,
            target_loss_factor: p.target_loss_factor,
        }
    }

    /// The data packet spending credit `seq` arrived, the next expected being `*next`.
    pub fn on_data(&mut self, seq: u32, next: &mut u32) {
        if seq < *next {
            return; // reordered: ns-2 exits here; retx's spraying may reorder, so it is ignored
        }
        let distance = (seq - *next) as u64;
        self.total += distance + 1;
        self.dropped += distance;
        *next = seq + 1;
    }

    /// The target loss at the current rate.
    pub fn target_loss(&self) -> f64 {
        (1.0 - self.rate / self.max_rate) * self.target_loss_factor
    }

    /// Before sending a credit at `now` (ns-2 calls the control from `send_credit`): updates
    /// the rate if an RTT has passed since the last update and some credit's fate is known.
    /// Returns whether it updated.
    pub fn feedback(&mut self, now: Time, rtt: Option<Time>) -> bool {
        let Some(rtt) = rtt.filter(|r| r.0 > 0) else { return false };
        if now < self.last_update + rtt || self.total == 0 {
            return false;
        }
        let secs = |t: Time| t.0 as f64 * 1e-12;
        let old = self.rate;
        let loss = self.dropped as f64 / self.total as f64;
        let target = self.target_loss();
        let min_rate = self.credit_bytes / secs(rtt);
        if loss > target {
            // Congestion: what got through in the last period, plus the target's margin.
            self.rate = if loss >= 1.0 {
                min_rate
            } else {
                self.credit_bytes * (self.total - self.dropped) as f64 / secs(now - self.last_update) * (1.0 + target)
            };
            self.rate = self.rate.min(old);
            self.w = (self.w / 2.0).max(self.w_min);
            self.can_increase_w = false;
        } else {
            if self.can_increase_w {
                self.w = (self.w + W_STEP).min(self.w_max);
            } else {
                self.can_increase_w = true;
            }
            if self.rate < self.max_rate {
                self.rate = self.w * self.max_rate + (1.0 - self.w) * self.rate;
            }
        }
        self.rate = self.rate.min(self.max_rate).max(min_rate);
        (self.total, self.dropped, self.last_update) = (0, 0, now);
        true
    }
}

// ---------------------------------------------------------------------------------------
// The host's credit pacer.

/// One flow's crediting at its receiver's host.
#[derive(Clone, Copy, Debug)]
struct Crediting {
    active: bool,
    /// Bumped at every start, so the pacer's stale deadlines are recognised.
    generation: u32,
    next_due: Time,
    control: CreditControl,
    /// The next credit's sequence number, and the next the data is expected to echo.
    c_seqno: u32,
    c_recv_next: u32,
    /// The RTT estimate, from the credit send times the data echoes (ns-2 `update_rtt`).
    rtt: Option<Time>,
    rng: u64,
}

/// The host-wide credit pacer: each active flow's credits leave at its own controlled rate,
/// jittered, earliest first.
#[derive(Clone, Debug)]
pub struct XpassPacer {
    p: XpassParams,
    max_rate: f64,
    /// Per queue pair of this NIC (by its number).
    flows: Vec<Option<Crediting>>,
    /// (due, queue pair, generation) of every active flow's next credit (and stale ones).
    due: BinaryHeap<Reverse<(Time, u32, u32)>>,
    active: u32,
    /// The host's credit queue (queue pair, credit), and its token bucket: bytes of tokens at
    /// `tokens_at`, at most `credit_burst` credits' worth, refilled at the maximum rate.
    queue: VecDeque<(u32, Segment)>,
    tokens: f64,
    tokens_at: Time,
    /// Credits this host's receivers sent; credits its senders received, and of those the
    /// ones that found nothing to send.
    pub credits_sent: u64,
    /// Credits the host's credit queue dropped (it was full).
    pub credits_dropped: u64,
    pub credits_received: u64,
    pub credits_wasted: u64,
    /// Credits this host's receivers found lost (sequence numbers the data skipped: credits
    /// dropped on the way, and wasted ones, as ns-2 counts them).
    pub credits_lost: u64,
    /// Rate updates that cut the rate, and all rate updates.
    pub decreases: u64,
    pub updates: u64,
}

impl XpassPacer {
    pub fn new(p: &XpassParams, link: Rate) -> Self {
        XpassPacer {
            p: *p,
            max_rate: p.max_rate(link),
            flows: Vec::new(),
            due: BinaryHeap::new(),
            active: 0,
            queue: VecDeque::new(),
            tokens: (p.credit_burst as u64 * p.credit_bytes.0) as f64,
            tokens_at: Time::ZERO,
            credits_sent: 0,
            credits_dropped: 0,
            credits_received: 0,
            credits_wasted: 0,
            credits_lost: 0,
            decreases: 0,
            updates: 0,
        }
    }

    /// The maximum credit rate, bytes per second.
    pub fn max_rate(&self) -> f64 {
        self.max_rate
    }

    /// The credit rate of queue pair `qp`'s flow now (bytes per second), if it is crediting.
    pub fn rate(&self, qp: u32) -> Option<f64> {
        self.flows.get(qp as usize).copied().flatten().filter(|f| f.active).map(|f| f.control.rate)
    }

    /// Queue pair `qp` asked for credits for `count` packets at `now` (flow `key` seeds its
    /// jitter). Already crediting: nothing changes.
    pub fn start(&mut self, now: Time, qp: u32, count: u32, key: u64) {
        let i = qp as usize;
        if i >= self.flows.len() {
            self.flows.resize(i + 1, None);
        }
        let share = self.p.initial_rate * (count.clamp(1, FULL_START_PACKETS) as f64 / FULL_START_PACKETS as f64);
        let control = CreditControl::new(&self.p, self.max_rate, share, now);
        let f = self.flows[i].get_or_insert(Crediting {
            active: false,
            generation: 0,
            next_due: now,
            control,
            c_seqno: 1,
            c_recv_next: 1,
            rtt: None,
            rng: mix64(key ^ 0x5850_4153_5321),
        });
        if f.active {
            return;
        }
        // ns-2 `recv_credit_request` from a closed sender: w and the rate start afresh.
        (f.active, f.generation, f.next_due, f.control) = (true, f.generation.wrapping_add(1), now, control);
        self.active += 1;
        self.due.push(Reverse((now, qp, f.generation)));
    }

    /// Queue pair `qp`'s flow needs no more credits (credit stop, or everything arrived).
    pub fn stop(&mut self, qp: u32) {
        if let Some(Some(f)) = self.flows.get_mut(qp as usize) {
            if f.active {
                f.active = false;
                self.active -= 1;
            }
        }
    }

    /// Queue pair `qp` received the data packet spending credit `seq`, sent at `sent` (the
    /// credit's time, echoed): credit loss and the RTT (EWMA 0.8 / 0.2, ns-2 `update_rtt`).
    pub fn on_data(&mut self, now: Time, qp: u32, seq: u32, sent: Time) {
        let Some(Some(f)) = self.flows.get_mut(qp as usize) else { return };
        if seq == 0 {
            return;
        }
        let before = f.control.dropped;
        f.control.on_data(seq, &mut f.c_recv_next);
        self.credits_lost += f.control.dropped - before;
        if sent > Time::ZERO && now >= sent {
            let sample = now - sent;
            f.rtt = Some(match f.rtt {
                Some(r) => Time((0.8 * r.0 as f64 + 0.2 * sample.0 as f64) as u64),
                None => sample,
            });
        }
    }

    /// The gap to a flow's next credit: the credit's bytes at its rate, jittered.
    fn gap(p: &XpassParams, f: &mut Crediting) -> Time {
        let nominal = p.credit_bytes.0 as f64 * 1e12 / f.control.rate;
        f.rng = mix64(f.rng);
        let u = (f.rng >> 11) as f64 / (1u64 << 53) as f64;
        let factor = 1.0 + p.jitter * (2.0 * u - 1.0);
        Time((nominal * factor).round().max(1.0) as u64)
    }
}

impl XpassPacer {
    /// Makes every credit due by `now` (each flow's next scheduled), into the host's credit
    /// queue or, if it is full, dropped. Returns the earliest credit due later.
    fn make_due(&mut self, now: Time) -> Option<Time> {
        while let Some(&Reverse((due, qp, generation))) = self.due.peek() {
            let live = matches!(self.flows[qp as usize], Some(f) if f.active && f.generation == generation && f.next_due == due);
            if !live {
                self.due.pop();
                continue;
            }
            if now < due {
                return Some(due);
            }
            self.due.pop();
            let p = self.p;
            let f = self.flows[qp as usize].as_mut().expect("live");
            let old = f.control.rate;
            self.updates += f.control.feedback(now, f.rtt) as u64;
            if f.control.rate < old {
                self.decreases += 1;
            }
            let seq = f.c_seqno;
            f.c_seqno = f.c_seqno.checked_add(1).unwrap_or(1);
            // The pacer keeps each flow's own time (a credit the host sent late does not push
            // the next back) unless it fell a whole gap behind: then it restarts from now.
            let gap = Self::gap(&p, f);
            let base = if now > due + gap { now } else { due };
            f.next_due = base + gap;
            self.due.push(Reverse((f.next_due, qp, generation)));
            if self.queue.len() >= p.credit_queue as usize {
                self.credits_dropped += 1;
                continue;
            }
            let mut seg = Segment::control(SegKind::Grant, Psn::new(0), due);
            seg.ext = Ext::Xpass(XpassInfo { kind: XpassKind::Credit, seq, ..Default::default() });
            (seg.priority, seg.colour, seg.wire_bytes) = (p.credit_priority, 0, p.credit_bytes.0 as u32);
            self.queue.push_back((qp, seg));
        }
        None
    }

    /// Tokens at `now` (bytes), refilled at the maximum credit rate up to the burst.
    fn refill(&mut self, now: Time) {
        if now > self.tokens_at {
            let cap = (self.p.credit_burst as u64 * self.p.credit_bytes.0) as f64;
            self.tokens = (self.tokens + (now - self.tokens_at).0 as f64 * 1e-12 * self.max_rate).min(cap);
            self.tokens_at = now;
        }
    }
}

impl HostAgent for XpassPacer {
    fn wants_wire(&self) -> bool {
        self.active > 0 || !self.queue.is_empty()
    }

    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        let next_due = self.make_due(now);
        if self.queue.is_empty() {
            return next_due.map_or(AgentTransmit::Idle, AgentTransmit::WaitUntil);
        }
        self.refill(now);
        let bytes = self.p.credit_bytes.0 as f64;
        if self.tokens + 1e-9 < bytes {
            let wait = Time(((bytes - self.tokens) / self.max_rate * 1e12).ceil() as u64);
            let t = now + wait.max(Time(1));
            return AgentTransmit::WaitUntil(next_due.map_or(t, |d| d.min(t)));
        }
        self.tokens -= bytes;
        let (qp, mut seg) = self.queue.pop_front().expect("not empty");
        // Its send time is when it leaves (the RTT the data echoes starts here).
        seg.ts = now;
        self.credits_sent += 1;
        AgentTransmit::Send { qp, seg }
    }
}

/// The host's pacer, if the run's scheme is ExpressPass.
pub fn pacer<'a>(nic: &'a mut NicCall<'_>) -> Option<&'a mut XpassPacer> {
    nic.agent::<XpassPacer>()
}

/// Figures over every host's pacer: credits sent, received, wasted, found lost, and rate cuts.
pub fn report<'a>(pacers: impl Iterator<Item = &'a XpassPacer>) -> Vec<(&'static str, f64)> {
    let mut sums = [0u64; 7];
    let mut any = false;
    for p in pacers {
        any = true;
        for (s, v) in sums.iter_mut().zip([p.credits_sent, p.credits_dropped, p.credits_received, p.credits_wasted, p.credits_lost, p.decreases, p.updates]) {
            *s += v;
        }
    }
    if !any {
        return Vec::new();
    }
    let names = ["xpass_credits_sent", "xpass_credits_dropped_at_host", "xpass_credits_received", "xpass_credits_wasted", "xpass_credits_lost", "xpass_rate_decreases", "xpass_rate_updates"];
    names.into_iter().zip(sums).map(|(n, v)| (n, v as f64)).collect()
}
