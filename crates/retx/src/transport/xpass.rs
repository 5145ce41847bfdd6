//! ExpressPass (Cho, Jang and Han, "Credit-Scheduled Delay-Bounded Congestion Control for
//! Datacenters", SIGCOMM 2017) as its authors' ns-2 code models it (kaist-ina/ns2-xpass
//! `xpass/xpass.cc`, `xpass/xpass.h`, `queue/xpass-drop-tail.cc`, `tcl/lib/ns-default.tcl`
//! and the large-scale script `scripts/large-scale-fattree.tcl`; learnt from, not copied), with
//! Aeolus (Hu et al., SIGCOMM 2020, §3.3; the project's seed `002`; its unscheduled-packet
//! state is shared with Homa in [`super::aeolus`]) as an option. This file
//! holds the parameters, what the packets carry, the credit feedback controller and the
//! host-wide credit pacer; the two ends of a flow are in [`super::xpass_ends`].
//!
//! - Start: the sender sends a credit request (84 B, ns-2 `construct_credit_request`, naming
//!   how many packets it has); without Aeolus nothing else before the first credit.
//! - Receiver ([`XpassPacer`], one per host, the NIC agent): paces each flow's credits (84 B,
//!   [`SegKind::Grant`]) at the flow's credit rate, each gap `credit_bytes / rate` times a
//!   uniform factor in [1 - jitter, 1 + jitter] (ns-2 `send_credit`), drawn from a stream seeded
//!   by the flow's key (so by the run's seed). The rate starts at `initial_rate` of the maximum,
//!   `link x credit_bytes / (credit_bytes + max_data)` (ns-2 `max_credit_rate_`), scaled down
//!   for a request of fewer than 40 packets (ns-2 `recv_credit_request`), and follows the
//!   feedback controller ([`CreditControl`], ns-2 `credit_feedback_control`) once per RTT.
//! - Sender: one data packet (its payload plus 78 B, at most `max_data`) per credit received;
//!   the data packet echoes the credit's sequence number and send time, from which the
//!   receiver measures credit loss and the RTT (ns-2 `recv_data`, `update_rtt`). A credit that
//!   finds nothing to send is wasted. When nothing is left to send (or, ns-2's early credit stop,
//!   when the last RTT's credits cover what is left) it sends a credit stop
//!   (ns-2 `send_credit_stop`); the receiver's pacer stops the flow's credits then, or when
//!   everything has arrived.
//! - Switches: `[switch] shaped = { queue = <credit_priority>, buffer = 8 }` rate-limits
//!   credits per port and drops those beyond its small queue: credit loss is how congestion is
//!   signalled (ns-2 `XPassDropTail`).

use super::agent::{AgentTransmit, HostAgent, NicCall, SchemeAgent};
use super::psn::Psn;
use super::segment::{Ext, SegKind, Segment};
use crate::sim::check::{self, Checked, FieldError};
use crate::sim::rng::mix64;
use crate::sim::units::{Dur, Rate, Size, Time};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A data packet's bytes beyond its payload (ns-2 `xpass_hdr_size_` 78: with the 1,538 B
/// `max_ethernet_size_`, 1,460 B payloads).
pub const DATA_HEADER_BYTES: u32 = 78;
/// A credit request's and a credit stop's bytes (ns-2 `min_ethernet_size_` 84: "size of
/// control packet such as credit").
pub const REQUEST_BYTES: u32 = 84;
/// An ACK's and Aeolus's probe's bytes: the minimum Ethernet frame (the seed: "of minimal
/// Ethernet packet size, e.g., 64 bytes"; ns-2 ExpressPass has no ACK, see `xpass_ends`).
pub const ACK_BYTES: u32 = 64;
/// How much `w` grows after a clean period, and the packet count below which a request's
/// initial rate shrinks (both fixed in ns-2 `xpass.cc`: `w_ + 0.05`, `sendbuffer_ >= 40`).
pub const W_STEP: f64 = 0.05;
pub const FULL_START_PACKETS: u32 = 40;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpassParams {
    /// Credit bytes on the wire (ns-2 `min_credit_size_` = `max_credit_size_` = 84 in
    /// `ns-default.tcl`; the large-scale script varies them 76..92, average 84).
    pub credit_bytes: Size,
    /// The largest data frame a credit pays for (ns-2 `max_ethernet_size_` 1,538): the maximum
    /// credit rate is `link x credit_bytes / (credit_bytes + max_data)`, and every data packet
    /// (payload + 78 B) must fit in it.
    pub max_data: Size,
    /// Each credit gap is drawn uniformly within this fraction either side of the nominal
    /// (ns-2 `min_jitter_` -0.1, `max_jitter_` 0.1).
    pub jitter: f64,
    /// The aggressiveness factor's start (ns-2 `w_init_`: 0.5 in `ns-default.tcl`, 0.0625 in
    /// the large-scale script, whose value is the default here).
    pub w_init: f64,
    /// Its ceiling and floor (ns-2 `credit_feedback_control`: `min(w_ + 0.05, 0.5)`;
    /// `min_w_` 0.01).
    pub w_max: f64,
    pub w_min: f64,
    /// The target loss is `(1 - rate / max_rate) x target_loss_factor` (ns-2
    /// `target_loss_scaling_` 0.125).
    pub target_loss_factor: f64,
    /// The credit rate a flow starts at, as a share of the maximum (ns-2 `alpha_` 0.5, in
    /// `ns-default.tcl` and the large-scale script).
    pub initial_rate: f64,
    /// The egress queue credits take (their priority): the switches' shaped queue, `[switch]
    /// shaped.queue` (ns-2 has a separate credit queue per port; retx's 2 is the first queue
    /// after control and the default data priority 1).
    pub credit_priority: u8,
    /// The host NIC's own credit queue, in credits: credits the pacer makes due beyond it are
    /// dropped (ns-2 puts an `XPassDropTail` on every link, hosts' too; the large-scale script's
    /// `creditBuffer` is 84 x 8 B). retx's `[switch] shaped` queue exists on switch ports
    /// only, so the pacer models its host's.
    pub credit_queue: u32,
    /// That queue's token bucket, in credits: it sends at most the maximum credit rate, with
    /// this burst (the large-scale script's `maxCreditBurst` 84 x 2 B).
    pub credit_burst: u32,
    /// The credit request timer: a sender that has had no credit this long after its request
    /// sends the request again (neither a timeout counted nor a packet resent). ns-2's
    /// `retransmit_timeout_` as its sender uses it (`xpass.cc` `advance_bytes` arms
    /// `sender_retransmit_timer_` with it; `handle_sender_retransmit` in
    /// `XPASS_RECV_CREDIT_REQUEST_SENT` re-sends the request and re-arms it; the first credit
    /// cancels it, `recv_credit`): 100 ms in `ns-default.tcl`, 100 us in the large-scale
    /// script, which is the default here.
    pub request_timeout: Dur,
    /// The data-loss timeout: when the oldest outstanding packet has waited this long (snd_una
    /// has not moved), it, every packet out this long and the holes below the highest packet
    /// SACKed are resent, and a timeout is counted (`xpass_ends`). ns-2 has no such timer: its
    /// receiver NACKs the first gap when a later packet arrives (`process_ack`) and repeats the
    /// NACK every `retransmit_timeout_` while the gap lasts (`handle_receiver_retransmit`), so
    /// it resends on evidence of loss, where this timer resends on silence: it must outlast the
    /// longest a packet that is not lost can wait for its ACK and, under Aeolus, the wait of a
    /// loss already found for the credit that resends it. Default 1 ms: the large-scale script's
    /// switch ports hold 250 x 1,538 B of data, 308 us at 10 Gbps each; on its network
    /// (`examples/xpass-clos192.toml`, 20 ms of arrivals of each of the four workloads, with
    /// and without Aeolus) packets not lost waited up to 0.4 ms for their ACK, and a 100 us
    /// timer fired over 600 times on that example with Aeolus and a 6,000 B selective drop,
    /// 1 ms none. (The Aeolus paper gives no timeout for its simulators; retx's
    /// `recovery.stride.rto` and `recovery.tcp.min_rto` are 1 ms, `recovery.homa.rto` 10 ms.)
    pub rto: Dur,
    /// Data takes the reverse of its credits' path (default true). ExpressPass needs it: a
    /// credit that got through promises room for its data packet only on the links it crossed
    /// (the design assumes symmetric paths). ns-2 gets it from symmetric ECMP hashing, the large-scale
    /// script's `Classifier/MultiPath set symmetric_ true` (`classifier/classifier-mpath.cc`
    /// `MultiPathForwarder::classify` hashes the flow id, the node's tier and the two
    /// addresses in sorted order, so both directions pick the same index at each tier). retx's
    /// ECMP salts each switch, so instead each connection's data-direction entropy is chosen
    /// such that ECMP routes the data on the reverse of its credits' path
    /// ([`crate::transport::Template::symmetric_paths`]); only under `[routing] policy =
    /// "ecmp"`, per-flow entropy and minimal paths (elsewhere paths are not the hashes' alone).
    pub symmetric_paths: bool,
    /// Aeolus: send the first `unscheduled_bytes` unscheduled at line rate, coloured, with
    /// per-packet SACKs, a tail probe and retransmission on credits.
    pub aeolus: bool,
    /// The colour of unscheduled packets under Aeolus (2: red).
    pub aeolus_colour: u8,
    /// Bytes sent unscheduled under Aeolus; 0 (default): one BDP of the run's longest path
    /// (Aeolus: "up to one BDP" in the first RTT).
    pub unscheduled_bytes: Size,
}

impl Default for XpassParams {
    fn default() -> Self {
        XpassParams {
            credit_bytes: Size(84),
            max_data: Size(1_538),
            jitter: 0.1,
            w_init: 0.0625,
            w_max: 0.5,
            w_min: 0.01,
            target_loss_factor: 0.125,
            initial_rate: 0.5,
            credit_priority: 2,
            credit_queue: 8,
            credit_burst: 2,
            request_timeout: Dur(Time::from_us(100)),
            rto: Dur(Time::from_ms(1)),
            symmetric_paths: true,
            aeolus: false,
            aeolus_colour: 2,
            unscheduled_bytes: Size(0),
        }
    }
}

impl XpassParams {
    /// Fields by their names within `[recovery.xpass]`.
    pub fn check(&self) -> Checked {
        check::range_u64("credit_bytes", self.credit_bytes.0, 64, 1_538)?;
        check::range_u64("max_data", self.max_data.0, DATA_HEADER_BYTES as u64 + 1, 65_536)?;
        check::range_f64("jitter", self.jitter, 0.0, 0.9)?;
        check::range_f64("w_min", self.w_min, 1e-6, 1.0)?;
        check::range_f64("w_max", self.w_max, self.w_min, 1.0)?;
        check::range_f64("w_init", self.w_init, self.w_min, self.w_max)?;
        check::range_f64("target_loss_factor", self.target_loss_factor, 0.0, 1.0)?;
        check::fraction("initial_rate", self.initial_rate)?;
        check::range_u32("credit_priority", self.credit_priority as u32, 1, 7)?;
        check::range_u32("credit_queue", self.credit_queue, 1, 1 << 16)?;
        check::range_u32("credit_burst", self.credit_burst, 1, 1 << 16)?;
        check::timer("request_timeout", self.request_timeout.0)?;
        check::timer("rto", self.rto.0)?;
        check::range_u32("aeolus_colour", self.aeolus_colour as u32, 1, 2)?;
        check::range_u64("unscheduled_bytes", self.unscheduled_bytes.0, 0, 1 << 30)
    }

    /// A flow's `mtu`-byte payloads fit in one credit's data frame.
    pub fn check_mtu(&self, mtu: u32) -> Checked {
        if mtu as u64 + DATA_HEADER_BYTES as u64 > self.max_data.0 {
            return Err(FieldError::new("max_data", format!("{} B payloads + {DATA_HEADER_BYTES} B header exceed it ({} B): lower [nic] mtu or raise max_data", mtu, self.max_data.0)));
        }
        Ok(())
    }

    /// The maximum credit rate on a `link`, in bytes per second: a credit per data frame.
    pub fn max_rate(&self, link: Rate) -> f64 {
        link.bps() as f64 / 8.0 * self.credit_bytes.0 as f64 / (self.credit_bytes.0 + self.max_data.0) as f64
    }
}

/// What an ExpressPass packet is, beyond its [`SegKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XpassKind {
    /// Sender to receiver: start crediting (`count`: packets the sender has).
    #[default]
    Request,
    /// Sender to receiver: nothing left to send, stop crediting.
    Stop,
    /// Receiver to sender (a `Grant`): one data packet's worth.
    Credit,
    /// A data packet (`seq`: the credit it spends, 0 for Aeolus's unscheduled packets).
    Data,
    /// Receiver to sender: the ACK of one packet (`ackno`).
    Ack,
    /// Aeolus's probe after the last unscheduled packet (`ackno` names it), and its ACK.
    Probe,
    ProbeAck,
}

/// What ExpressPass packets carry beyond the common header (4-byte fields: `Ext` stays 28 B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XpassInfo {
    pub kind: XpassKind,
    /// Credit: its sequence number (from 1); data: the credit's it spends (ns-2 `credit_seq`).
    pub seq: u32,
    /// Request: the packets the sender has left (ns-2 `sendbuffer_`).
    pub count: u32,
    /// ACK: the PSN of the packet it answers; probe: the last unscheduled packet's.
    pub ackno: Psn,
}

pub fn info(seg: &Segment) -> Option<XpassInfo> {
    match seg.ext {
        Ext::Xpass(i) => Some(i),
        _ => None,
    }
}

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
    match &mut nic.scheme {
        SchemeAgent::Xpass(p) => Some(&mut **p),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    /// ExpressPass's sender and pacer are the largest of their kind: stored boxed, they leave
    /// `TxRecovery` (every queue pair's sender) and `SchemeAgent` (every NIC) the size the
    /// other schemes give them (unboxed they grew each by about 90 and 130 bytes, and the
    /// MELO web search example ran a few percent slower).
    #[test]
    fn boxing_keeps_every_other_schemes_sender_and_agent_their_size() {
        use crate::transport::{agent::SchemeAgent, homa::HomaScheduler, irn::IrnSender, sender::TxRecovery};
        use std::mem::size_of;
        assert!(size_of::<super::super::xpass_ends::XpassSender>() > size_of::<IrnSender>());
        assert!(size_of::<TxRecovery>() <= size_of::<IrnSender>() + 8, "{}", size_of::<TxRecovery>());
        assert!(size_of::<SchemeAgent>() <= size_of::<HomaScheduler>() + 8, "{}", size_of::<SchemeAgent>());
    }
}
