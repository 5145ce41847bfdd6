//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM 2017) as htsim models it (Broadcom/csg-htsim `sim/ndp.cpp`,
//! `sim/datacenter/main_ndp.cpp`; learnt from, not copied).
//!
//! - Sender: sends its initial window (htsim's `-cwnd`, 15 packets) at line rate, then one
//!   packet per PULL. PULL numbers are cumulative: a PULL numbered n lets the sender send until
//!   it has sent n packets on pulls, so a lost PULL is made up by the next. A NACKed packet
//!   goes into a retransmission queue, lowest first, resent ahead of new data on the next PULL.
//! - Receiver: answers every data packet with an ACK and every trimmed header with a NACK, at
//!   once, both carrying the packet's own PSN, the cumulative ACK and the flow's PULL number,
//!   which grows by one per packet received. The PULL itself goes through the host's pacer.
//! - Pacer ([`NdpPacer`], one per host, the NIC agent): PULLs leave at most one per
//!   (MTU + header) time at 0.99 of the host link (`NdpPullPacer(.., 0.99)`), round robin over
//!   the flows that have PULLs waiting (htsim's `FairPullQueue`). When none wait and a PULL's
//!   time has come, the ACK or NACK carries the pull itself (htsim's pull bit) and no PULL
//!   packet is sent. A flow's waiting PULLs are dropped once it has received everything.
//! - Timeout: htsim's NdpSrc computes an RTO (initial 20 ms; from the RTT estimate, floored at
//!   the minimum RTO, which `main_ndp` sets to 50 ms, times a random factor in [0.75, 1.25])
//!   but its timer hook returns before firing (`rtx_timer_hook`: "if we're using RTS, we
//!   shouldn't need to also use"), so a packet whose header is dropped is never recovered in
//!   htsim. Here the timer fires, after that RTO without feedback, resending every
//!   unacknowledged packet: every flow completes whatever is lost.
//! - Return to sender (`[switch] trim`, `return_to_sender = true`): a header a full header queue
//!   sends back is queued for resending on a later PULL, or resent at once when no PULL can
//!   come for it (htsim `processRTS`).
//! - Aeolus (`aeolus = true`; Hu et al., SIGCOMM 2020, §3.3, the seed `002`: "Aeolus preserves
//!   the superior performance of NDP without requiring switch modifications"): NDP on switches
//!   that do not trim. The initial window is unscheduled and coloured `aeolus_colour`, so a
//!   switch's colour rule drops it selectively above its threshold; what the PULLs bring is
//!   scheduled and never coloured. A 64 B probe, uncoloured, follows the window's last packet;
//!   a SACK (the ACK of a later window packet) or the probe's ACK finds a window packet lost,
//!   and it is resent on the next PULL, in Aeolus's order: found lost, then new, then sent but
//!   unacknowledged. NDP's PULL clock counts arrivals (a trimmed header pulls for its lost
//!   payload); a dropped packet never arrives, so the receiver, at the probe, pulls once for
//!   each window packet missing, as Homa's receiver grants them on top of the message
//!   ([`crate::transport::proactive::homa`]). The authors' htsim prototype of 2018
//!   (baiwei0427/NDP @ 394d593, `sim/aeolusqueue.cpp`) trimmed first-RTT packets above 6,000 B
//!   instead of dropping them: that is NDP with a lower trimming threshold for them, not the
//!   switch without modifications the paper evaluates, and is not modelled here.

use crate::transport::common::scheme::{NetworkScale, Scheme, Setup};
use crate::transport::common::window::Window;
use crate::transport::common::agent::{AgentTransmit, HostAgent, NicCall};
use crate::transport::common::ext::PullInfo;
use crate::transport::common::psn::{Psn, PsnReader};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::reorder::ReorderBuffer;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::transport::common::flow::PRIORITY_CONTROL;
use crate::transport::common::notifications::Notifications;
use crate::transport::common::psn::PsnSpace;
use crate::transport::proactive::aeolus::{Probe, Unscheduled, UnscheduledPackets, PROBE_BYTES};
use crate::sim::check::{self, Checked};
use crate::sim::rng::mix64;
use crate::sim::units::{BdpOr, Dur, Rate, Time};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// NDP's header on the wire: a data packet weighs its payload plus this, an ACK, NACK, PULL or
/// trimmed header this much (htsim `NdpPacket::ACKSIZE`).
pub const HEADER_BYTES: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NdpParams {
    /// Packets sent before the first PULL (htsim `main_ndp` `-cwnd`, default 15), or "bdp":
    /// one BDP of the run's network, the NDP paper's rule (§3: senders "start sending a full
    /// window of packets" in the first RTT).
    pub initial_window: BdpOr<u32>,
    /// The pacer's PULL rate as a share of the host link (htsim `main_ndp`: 0.99).
    pub pull_rate: f64,
    /// The RTO before the first RTT sample (htsim `NdpSrc::_rto`: 20 ms).
    pub rto_initial: Dur,
    /// The RTO's floor, randomised by [0.75, 1.25] at every ACK (htsim `DEFAULT_RTO_MIN` is
    /// 5 ms; `main_ndp` sets 50 ms "to avoid spurious retransmits").
    pub rto_min: Dur,
    /// Aeolus: colour the initial window, probe its tail, recover its losses on PULLs (for
    /// switches that drop instead of trimming).
    pub aeolus: bool,
    /// The colour of the initial window's packets under Aeolus (2: red).
    pub aeolus_colour: u8,
}

impl Default for NdpParams {
    fn default() -> Self {
        NdpParams {
            initial_window: BdpOr::Value(15),
            pull_rate: 0.99,
            rto_initial: Dur(Time::from_ms(20)),
            rto_min: Dur(Time::from_ms(50)),
            aeolus: false,
            aeolus_colour: 2,
        }
    }
}

impl Scheme for NdpParams {
    const NAME: &'static str = "ndp";
    type Sender = NdpSender;
    type Receiver = NdpReceiver;
    /// The host-wide PULL pacer.
    type Agent = NdpPacer;

    /// Fields by their names within `[recovery.ndp]`.
    fn check(&self) -> Checked {
        if let BdpOr::Value(w) = self.initial_window {
            check::range_u32("initial_window", w, 1, 1 << 20)?;
        }
        check::range_f64("pull_rate", self.pull_rate, 0.01, 1.0)?;
        check::timer("rto_initial", self.rto_initial.0)?;
        check::timer("rto_min", self.rto_min.0)?;
        check::range_u32("aeolus_colour", self.aeolus_colour as u32, 1, 2)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (NdpSender, NdpReceiver) {
        let window = self.initial_window.or(f.bdp_packets.clamp(1, 1 << 20));
        let mut tx = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(window), ..*self }, f.npkts(), f.spec.key);
        if self.aeolus {
            tx = tx.with_aeolus(self.aeolus_colour, f.spec.marking.data_priority);
        }
        (tx, NdpReceiver::new(f.npkts()))
    }

    fn agent(&self, link: Rate, mtu: u32) -> Option<NdpPacer> {
        Some(NdpPacer::new(self, link, mtu))
    }

    /// An initial window far from the network's BDP: below it a flow's first RTT leaves the
    /// link idle, far above it every new flow's window overflows the switches.
    fn network_warnings(&self, net: &NetworkScale) -> Vec<String> {
        let BdpOr::Value(w) = self.initial_window else { return Vec::new() };
        let bdp = net.bdp_packets.max(1);
        let Some(ratio) = NetworkScale::far_from_bdp(w as u64, bdp as u64) else { return Vec::new() };
        vec![format!("initial_window: {w} packets is {ratio:.2}x this network's BDP ({bdp} packets of {} B); set it near the BDP, or \"bdp\"", net.mtu)]
    }

    fn data_header(&self) -> u32 {
        HEADER_BYTES
    }

    fn response_bytes(&self, int_header: u32) -> u32 {
        HEADER_BYTES + int_header
    }
}

/// The PULL number the receiver names in a response or PULL, if it is NDP's.
fn pull_info(seg: &Segment) -> Option<PullInfo> {
    match seg.ext {
        Ext::Pull(p) => Some(p),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// The host's pull pacer.

/// A flow's PULLs waiting at the pacer: the oldest one's number and how many (a flow's waiting
/// PULLs are numbered consecutively: none is piggybacked while any waits).
#[derive(Clone, Copy, Debug, Default)]
struct Waiting {
    first: u32,
    count: u32,
}

/// The host-wide PULL pacer (htsim `NdpPullPacer` with a `FairPullQueue`).
#[derive(Clone, Debug)]
pub struct NdpPacer {
    /// One PULL's worth of the link: (MTU + header) at `pull_rate` of the host link.
    gap: Time,
    /// When the last PULL (or pull bit) went out.
    last_pull: Time,
    /// Per queue pair of this NIC (by its number): its waiting PULLs.
    waiting: Vec<Waiting>,
    /// Queue pairs with PULLs waiting, in round-robin order (each once).
    turn: VecDeque<u32>,
    /// PULL packets the pacer sent, and pulls carried by ACKs and NACKs.
    pub pulls_sent: u64,
    pub pulls_piggybacked: u64,
}

impl NdpPacer {
    /// The pacer of a host whose link runs at `link`, for `mtu`-byte payloads.
    pub fn new(p: &NdpParams, link: Rate, mtu: u32) -> Self {
        let per_packet = link.serialization((mtu + HEADER_BYTES) as u64);
        let gap = Time((per_packet.0 as f64 / p.pull_rate).round() as u64);
        NdpPacer { gap, last_pull: Time::ZERO, waiting: Vec::new(), turn: VecDeque::new(), pulls_sent: 0, pulls_piggybacked: 0 }
    }

    /// The spacing of PULLs.
    pub fn gap(&self) -> Time {
        self.gap
    }

    fn any_waiting(&self) -> bool {
        !self.turn.is_empty()
    }

    /// Queue pair `qp` received a packet and numbered its pull `pull_no`: true if the response
    /// may carry the pull itself (nothing waits and a PULL is due: htsim `sendPacket`), else
    /// the PULL waits its turn.
    fn request(&mut self, now: Time, qp: u32, pull_no: u32) -> bool {
        if !self.any_waiting() && now >= self.last_pull + self.gap {
            self.last_pull = now;
            self.pulls_piggybacked += 1;
            return true;
        }
        let i = qp as usize;
        if i >= self.waiting.len() {
            self.waiting.resize(i + 1, Waiting::default());
        }
        let w = &mut self.waiting[i];
        if w.count == 0 {
            w.first = pull_no;
            self.turn.push_back(qp);
        }
        w.count += 1;
        false
    }

    /// Queue pair `qp` has received everything: its waiting PULLs go (htsim `release_pulls`).
    fn release(&mut self, qp: u32) {
        if let Some(w) = self.waiting.get_mut(qp as usize) {
            w.count = 0;
        }
    }
}

impl HostAgent for NdpPacer {
    fn wants_wire(&self) -> bool {
        self.any_waiting()
    }

    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        // Released flows leave their turn here.
        while let Some(&qp) = self.turn.front() {
            if self.waiting[qp as usize].count > 0 {
                break;
            }
            self.turn.pop_front();
        }
        let Some(&qp) = self.turn.front() else { return AgentTransmit::Idle };
        let due = self.last_pull + self.gap;
        if now < due {
            return AgentTransmit::WaitUntil(due);
        }
        self.turn.pop_front();
        let w = &mut self.waiting[qp as usize];
        let pull_no = w.first;
        (w.first, w.count) = (w.first.wrapping_add(1), w.count - 1);
        if w.count > 0 {
            self.turn.push_back(qp);
        }
        // The pacer keeps its own time: a PULL the host link sent late (behind a data packet
        // of the host's own) does not push the next one back. htsim's pacer hands its PULL to
        // the host queue at the due time, where it may wait the same way.
        self.last_pull = due;
        self.pulls_sent += 1;
        let mut seg = Segment::control(SegKind::Grant, Psn::new(0), now);
        seg.ext = Ext::Pull(PullInfo { ackno: Psn::new(0), pull_no, pull: true, probe: false });
        (seg.priority, seg.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        AgentTransmit::Send { qp, seg }
    }
}

fn pacer<'a>(nic: &'a mut NicCall<'_>) -> Option<&'a mut NdpPacer> {
    nic.agent::<NdpPacer>()
}

// ---------------------------------------------------------------------------------------
// Sender.

#[derive(Clone, Debug)]
pub struct NdpSender {
    npkts: u64,
    /// Cumulative ACK: every packet below it arrived.
    snd_una: u64,
    /// Next new packet.
    snd_nxt: u64,
    /// Packets ACKed individually, over [snd_una, snd_nxt).
    acked: Window,
    /// Packets of the initial window not yet sent.
    first_window: u32,
    /// Packets sent on pulls, and the highest PULL number heard (htsim `_last_pull`,
    /// `_max_pull`).
    last_pull: u64,
    max_pull: u64,
    /// NACKed packets, lowest first (htsim `_rtx_queue`).
    resend: BinaryHeap<Reverse<u64>>,
    /// Resends the timeout owes without a pull.
    rto_owed: u32,
    rto: Time,
    rto_min: Time,
    /// The smoothed RTT and its mean deviation; zero before the first sample (unboxed
    /// `Option` would cost the sender, every queue pair's, 8 bytes).
    srtt: (Time, Time),
    last_progress: Time,
    /// Draws the RTO's random factor (seeded by the flow).
    rng: u64,
    /// The packet `next` chose went in the first window, before any PULL.
    sent_unscheduled: bool,
    /// Aeolus's state (boxed: most NDP runs are without it, and the sender stays small).
    aeolus: Option<Box<AeolusTx>>,
}

/// An NDP sender's Aeolus state: its initial window's packets, the probe, the losses found.
#[derive(Clone, Debug)]
struct AeolusTx {
    colour: u8,
    /// The data priority the window goes at (the flow's).
    priority: u8,
    /// The initial window's packets: unsent, sent, lost, resent.
    states: UnscheduledPackets,
    probe: Probe,
    /// Window packets below this have been looked at by a SACK or the probe's ACK.
    detected: u64,
    /// Window packets below this have been offered for resending unacknowledged (the last
    /// class of Aeolus's order).
    offered: u64,
    sack_losses: u64,
    probe_losses: u64,
}

impl NdpSender {
    pub fn new(p: &NdpParams, npkts: u64, key: u64) -> Self {
        let capacity = npkts.clamp(1, u32::MAX as u64) as u32;
        NdpSender {
            npkts,
            snd_una: 0,
            snd_nxt: 0,
            acked: Window::new(capacity, npkts),
            first_window: p.initial_window.or(1).min(npkts.min(u32::MAX as u64) as u32),
            last_pull: 0,
            max_pull: 0,
            resend: BinaryHeap::new(),
            rto_owed: 0,
            rto: p.rto_initial.0,
            rto_min: p.rto_min.0,
            srtt: (Time::ZERO, Time::ZERO),
            last_progress: Time::ZERO,
            rng: mix64(key ^ 0x4e44_5021),
            sent_unscheduled: false,
            aeolus: None,
        }
    }

    /// The same sender under Aeolus: its initial window goes coloured `colour`, at `priority`.
    pub fn with_aeolus(mut self, colour: u8, priority: u8) -> Self {
        let states = UnscheduledPackets::new(self.first_window as u64);
        self.aeolus = Some(Box::new(AeolusTx { colour, priority, states, probe: Probe::NotYet, detected: 0, offered: 0, sack_losses: 0, probe_losses: 0 }));
        self
    }


    /// Aeolus: window packets in `from..end` sent once and unacknowledged are lost; they join
    /// the resend queue. How many.
    fn detect(&mut self, end: u64) -> u64 {
        let (una, acked, resend) = (self.snd_una, &self.acked, &mut self.resend);
        let Some(a) = self.aeolus.as_deref_mut() else { return 0 };
        if end <= a.detected {
            return 0;
        }
        let found = a.states.detect_range(a.detected, end, |i| i < una || acked.get(i), |i| resend.push(Reverse(i)));
        a.detected = end;
        found
    }

    /// Aeolus's last class: a window packet sent once and still unacknowledged, resent when
    /// nothing was found lost and nothing new is left.
    fn unacknowledged_window_packet(&mut self) -> Option<u64> {
        let (una, acked) = (self.snd_una, &self.acked);
        let a = self.aeolus.as_deref_mut()?;
        while a.offered < a.states.len() {
            let i = a.offered;
            a.offered += 1;
            if a.states.get(i) == Some(Unscheduled::Sent) && !(i < una || acked.get(i)) {
                a.states.set(i, Unscheduled::Resent);
                return Some(i);
            }
        }
        None
    }

    /// The next NACKed (or timed-out) packet still unacknowledged.
    fn pop_resend(&mut self) -> Option<u64> {
        while let Some(Reverse(i)) = self.resend.pop() {
            if i >= self.snd_una && !self.acked.get(i) {
                return Some(i);
            }
        }
        None
    }

    fn new_packet(&mut self) -> Option<(u64, bool)> {
        (self.snd_nxt < self.npkts).then(|| {
            let i = self.snd_nxt;
            // The ring only holds flags: no side table follows its growth.
            let _ = self.acked.cover(self.snd_una, i);
            self.snd_nxt += 1;
            (i, false)
        })
    }

    /// htsim's RTO at an ACK: from the RTT estimate, and where that is below the floor, the
    /// floor times a random factor in [0.75, 1.25].
    fn update_rto(&mut self, sample: Option<Time>) {
        if let Some(m) = sample.filter(|m| m.0 > 0) {
            let (rtt, mdev) = match self.srtt {
                (Time::ZERO, _) => (m, Time(m.0 / 2)),
                (rtt, mdev) => {
                    let abs = rtt.0.abs_diff(m.0);
                    (Time(7 * rtt.0 / 8 + m.0 / 8), Time(3 * mdev.0 / 4 + abs / 4))
                }
            };
            self.srtt = (rtt.max(Time(1)), mdev);
            self.rto = Time(rtt.0 + 4 * mdev.0);
        }
        if self.rto < self.rto_min {
            self.rng = mix64(self.rng);
            let factor = 0.75 + 0.5 * (self.rng >> 11) as f64 / (1u64 << 53) as f64;
            self.rto = Time((self.rto_min.0 as f64 * factor) as u64);
        }
    }

    fn advance(&mut self, cum: u64) {
        if cum > self.snd_una && cum <= self.snd_nxt {
            for i in self.snd_una..cum {
                self.acked.clear(i);
            }
            self.snd_una = cum;
        }
    }

    /// Pulls up to PULL number `pull_no` (htsim `pull_packets`): what is owed is sent as the
    /// engine polls.
    fn pull(&mut self, pull_no: u32) {
        self.max_pull = self.max_pull.max(pull_no as u64);
    }

    fn owes(&self) -> bool {
        self.last_pull < self.max_pull
    }
}

impl SendRecovery for NdpSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        let window_unacked = self.aeolus.as_deref().is_some_and(|a| a.offered < a.states.len());
        let something = !self.resend.is_empty() || self.snd_nxt < self.npkts || window_unacked;
        (self.first_window > 0 && self.snd_nxt < self.npkts) || (something && (self.rto_owed > 0 || self.owes()))
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    fn next(&mut self, now: Time, _rate: Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.snd_nxt == 0 {
            self.last_progress = now;
        }
        self.sent_unscheduled = false;
        if self.first_window > 0 {
            if let Some(p) = self.new_packet() {
                self.first_window -= 1;
                self.sent_unscheduled = true;
                if let Some(a) = self.aeolus.as_deref_mut() {
                    a.states.set(p.0, Unscheduled::Sent);
                    if self.first_window == 0 {
                        a.probe = Probe::Due;
                    }
                }
                return Some(p);
            }
            self.first_window = 0;
        }
        if self.rto_owed > 0 {
            self.rto_owed -= 1;
            if let Some(i) = self.pop_resend() {
                return Some((i, true));
            }
            self.rto_owed = 0;
        }
        if !self.owes() {
            return None;
        }
        // Aeolus's order on a PULL: found lost (the resend queue), new, then sent but
        // unacknowledged.
        let sent = match self.pop_resend() {
            Some(i) => Some((i, true)),
            None => self.new_packet().or_else(|| self.unacknowledged_window_packet().map(|i| (i, true))),
        };
        // Nothing to send keeps the pull owed (htsim: `send_packet` returned 0): a later
        // NACK's retransmission uses it.
        if sent.is_some() {
            self.last_pull += 1;
        }
        sent
    }
    fn unscheduled(&self) -> bool {
        self.sent_unscheduled
    }
    /// Aeolus colours the initial window only; everything else is the flow's marking.
    fn mark(&self, _index: u64, _retransmit: bool) -> Option<(u8, u8)> {
        let a = self.aeolus.as_deref()?;
        self.sent_unscheduled.then_some((a.priority, a.colour))
    }
    fn notifications(&self) -> Notifications {
        let Some(a) = self.aeolus.as_deref() else { return Notifications::default() };
        Notifications { aeolus_sack_losses: a.sack_losses, aeolus_probe_losses: a.probe_losses, ..Notifications::default() }
    }
    /// Aeolus's probe: header only, right after the window's last packet, at the flow's data
    /// priority, never coloured; it names that packet.
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        let a = self.aeolus.as_deref_mut().filter(|a| a.probe == Probe::Due)?;
        a.probe = Probe::Sent;
        let last = psn.wire(a.states.len().saturating_sub(1));
        let mut seg = Segment::data(last, 0, 0, now);
        seg.ext = Ext::Pull(PullInfo { ackno: last, probe: true, ..Default::default() });
        (seg.priority, seg.colour, seg.wire_bytes) = (a.priority, 0, PROBE_BYTES);
        Some(seg)
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        let Some(info) = pull_info(seg) else { return false };
        if info.probe && seg.kind == SegKind::Ack && self.aeolus.is_some() {
            // The probe's ACK: every window packet still unacknowledged is lost.
            self.last_progress = now;
            if let Some(cum) = at.index(seg.psn) {
                self.advance(cum.min(self.snd_nxt));
            }
            let end = self.aeolus.as_deref().map_or(0, |a| a.states.len());
            let found = self.detect(end);
            if let Some(a) = self.aeolus.as_deref_mut() {
                a.probe_losses += found;
            }
            if info.pull {
                self.pull(info.pull_no);
            }
            return false;
        }
        match seg.kind {
            SegKind::Grant => {
                self.last_progress = now;
                self.pull(info.pull_no);
                false
            }
            SegKind::Ack => {
                self.last_progress = now;
                if let Some(cum) = at.index(seg.psn) {
                    self.advance(cum.min(self.snd_nxt));
                }
                let sacked = at.index(info.ackno).filter(|&i| i < self.snd_nxt);
                if let Some(i) = sacked.filter(|&i| i >= self.snd_una) {
                    self.acked.set(i);
                }
                // Aeolus: a gap below a window packet SACKed (the window leaves in order).
                if let Some(i) = sacked.filter(|&i| self.aeolus.as_deref().is_some_and(|a| i < a.states.len())) {
                    let found = self.detect(i);
                    if let Some(a) = self.aeolus.as_deref_mut() {
                        a.sack_losses += found;
                    }
                }
                self.update_rto((seg.echo_ts > Time::ZERO && now >= seg.echo_ts).then(|| now - seg.echo_ts));
                if info.pull {
                    self.pull(info.pull_no);
                }
                false
            }
            SegKind::Nak => {
                self.last_progress = now;
                if let Some(cum) = at.index(seg.psn) {
                    self.advance(cum.min(self.snd_nxt));
                }
                let lost = at.index(info.ackno).filter(|&i| i >= self.snd_una && i < self.snd_nxt && !self.acked.get(i));
                if let Some(i) = lost {
                    self.resend.push(Reverse(i));
                    if let Some(a) = self.aeolus.as_deref_mut() {
                        // Queued already: no detection queues it again.
                        if a.states.get(i) == Some(Unscheduled::Sent) {
                            a.states.set(i, Unscheduled::Lost);
                        }
                    }
                }
                // htsim `processNack`: a NACK pulls if it carries the pull bit, or if pulls
                // are owed already (its number then counts the PULL still at the pacer).
                if info.pull || self.owes() {
                    self.pull(info.pull_no);
                }
                lost.is_some()
            }
            _ => false,
        }
    }
    /// htsim's `processRTS`: the packet joins the retransmission queue and goes on a later
    /// PULL ("swallow"), except when no PULL can come for it, i.e. every other packet sent is
    /// acknowledged or queued for resending already (htsim: `_pull_window == 0` and the
    /// first window spent): then at once. (htsim also resends at once on a path it judges
    /// bad; retx's paths are the switches' choice, so that rule has no counterpart.)
    fn on_returned(&mut self, now: Time, index: u64) {
        if index < self.snd_una || self.acked.get(index) {
            return;
        }
        self.last_progress = now;
        self.resend.push(Reverse(index));
        let unacked = (self.snd_una..self.snd_nxt).filter(|&i| !self.acked.get(i)).count();
        if self.first_window == 0 && unacked <= self.resend.len() {
            self.rto_owed += 1;
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        (!self.is_done() && self.snd_nxt > self.snd_una).then(|| self.last_progress + self.rto)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        if self.poll_timeout().is_none_or(|t| now < t) {
            return false;
        }
        // Every unacknowledged packet is presumed lost and resent without waiting for pulls.
        self.resend.clear();
        for i in self.snd_una..self.snd_nxt {
            if !self.acked.get(i) {
                self.resend.push(Reverse(i));
            }
        }
        self.rto_owed = self.resend.len().min(u32::MAX as usize) as u32;
        self.last_progress = now;
        true
    }
    fn release(&mut self) {
        self.acked.release();
        self.resend = BinaryHeap::new();
        if let Some(a) = self.aeolus.as_deref_mut() {
            a.states.release();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Receiver.

#[derive(Clone, Debug)]
pub struct NdpReceiver {
    pub reorder: ReorderBuffer,
    /// The flow's PULL number: one per packet or header received (htsim `_pull_no`).
    pull_no: u32,
    /// Aeolus: the probe has arrived (its pulls for the missing are given once).
    probed: bool,
}

impl NdpReceiver {
    pub fn new(npkts: u64) -> Self {
        NdpReceiver { reorder: ReorderBuffer::new(npkts), pull_no: 0, probed: false }
    }

    /// Aeolus's probe, naming the initial window's last packet `last`: an ACK that says so,
    /// and, the first time, one pull for each window packet that has not arrived (a dropped
    /// packet pulls nothing, where a trimmed one's header would have).
    fn answer_probe(&mut self, now: Time, last: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let missing = if self.probed {
            0
        } else {
            self.probed = true;
            (0..=last).filter(|&i| i >= rx.expected() && !self.reorder.holds(i)).count()
        };
        let qp = nic.caller();
        let mut carried = None;
        if let Some(p) = pacer(nic) {
            if rx.is_complete() {
                p.release(qp);
            } else {
                for _ in 0..missing {
                    self.pull_no = self.pull_no.wrapping_add(1);
                    if p.request(now, qp, self.pull_no) {
                        carried = Some(self.pull_no);
                    }
                }
            }
        }
        let mut r = Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg);
        r.ext = Ext::Pull(PullInfo { ackno: seg.psn, pull_no: carried.unwrap_or(self.pull_no), pull: carried.is_some(), probe: true });
        (r.priority, r.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        rx.send(r);
    }

    /// Answers a packet (or header) with `kind` naming it, and numbers its pull: carried by
    /// the answer if the pacer allows, else queued at the pacer. None once everything has
    /// arrived: the flow's waiting PULLs go.
    fn answer(&mut self, kind: SegKind, now: Time, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        self.pull_no = self.pull_no.wrapping_add(1);
        let qp = nic.caller();
        let pull = match pacer(nic) {
            Some(p) if rx.is_complete() => {
                p.release(qp);
                false
            }
            Some(p) => p.request(now, qp, self.pull_no),
            None => false,
        };
        let mut r = Segment::reply(kind, rx.wire(rx.expected()), now, seg);
        r.ext = Ext::Pull(PullInfo { ackno: seg.psn, pull_no: self.pull_no, pull, probe: false });
        (r.priority, r.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        rx.send(r);
    }
}

impl ReceiveRecovery for NdpReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        if pull_info(seg).is_some_and(|p| p.probe) {
            return self.answer_probe(now, index, seg, rx, nic);
        }
        self.reorder.accept(now, index, seg, rx);
        self.answer(SegKind::Ack, now, seg, rx, nic);
    }

    fn on_trimmed(&mut self, now: Time, _index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        rx.naks_sent += 1;
        self.answer(SegKind::Nak, now, seg, rx, nic);
    }

    fn reorder_stats(&self) -> (u64, u64, u64) {
        self.reorder.stats()
    }

    fn release(&mut self) {
        self.reorder.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::NicAgent;
    use crate::transport::common::psn::PsnSpace;
    use crate::transport::{CcParams, FlowSpec, RecoveryParams, Template};

    fn template() -> Template {
        Template::of(RecoveryParams::Ndp(NdpParams::default()), CcParams::None(Default::default()))
    }

    fn nic() -> NicAgent {
        NicAgent::on_link(&template(), Rate::gbps(100), 4_000)
    }

    fn the_pacer(nic: &mut NicAgent) -> &mut NdpPacer {
        match &mut nic.scheme {
            crate::transport::SchemeAgent::Ndp(p) => p,
            _ => panic!("no NDP pacer"),
        }
    }

    fn ns(v: u64) -> Time {
        Time::from_ns(v)
    }

    #[test]
    fn the_pacer_spaces_pulls_by_a_packet_and_header_at_099_of_the_link() {
        let mut nic = nic();
        // (4,000 + 64) B at 100 Gbps is 325.12 ns; at 0.99 of it, 328.404 ns.
        assert_eq!(the_pacer(&mut nic).gap(), Time(328_404));
        let p = NdpPacer::new(&NdpParams { pull_rate: 0.5, ..Default::default() }, Rate::gbps(10), 1_000);
        assert_eq!(p.gap(), Time(1_064 * 800 * 2));
    }

    #[test]
    fn the_pacer_piggybacks_when_idle_and_due_else_queues_round_robin() {
        let mut nic = nic();
        let p = the_pacer(&mut nic);
        let gap = p.gap();
        // Idle and due: the response carries the pull.
        assert!(p.request(ns(1_000), 1, 1));
        // Within the gap: queued, numbered as asked; a second flow's too.
        assert!(!p.request(ns(1_100), 1, 2));
        assert!(!p.request(ns(1_150), 1, 3));
        assert!(!p.request(ns(1_200), 2, 7));
        // Something waits: even a due pull queues behind it.
        assert!(!p.request(ns(5_000), 3, 1));
        assert!(p.wants_wire());
        let mut sent = Vec::new();
        let mut now = ns(1_000);
        loop {
            match p.poll_transmit(now) {
                AgentTransmit::Send { qp, seg } => {
                    let info = pull_info(&seg).unwrap();
                    assert!(info.pull && seg.kind == SegKind::Grant && seg.wire_bytes == HEADER_BYTES);
                    sent.push((now, qp, info.pull_no));
                }
                AgentTransmit::WaitUntil(t) => {
                    assert!(t > now);
                    now = t;
                }
                AgentTransmit::Idle => break,
            }
        }
        let t0 = ns(1_000);
        assert_eq!(sent, vec![(t0 + gap, 1, 2), (t0 + gap + gap, 2, 7), (t0 + gap + gap + gap, 3, 1), (t0 + gap + gap + gap + gap, 1, 3)]);
        assert_eq!((p.pulls_sent, p.pulls_piggybacked), (4, 1));
        assert!(!p.wants_wire());
    }

    #[test]
    fn a_pull_the_link_sent_late_does_not_delay_the_next() {
        let mut nic = nic();
        let p = the_pacer(&mut nic);
        let gap = p.gap();
        assert!(p.request(ns(1_000), 1, 1));
        assert!(!p.request(ns(1_001), 1, 2));
        assert!(!p.request(ns(1_002), 1, 3));
        // The first waiting PULL was due at 1,000 ns + gap; the link offered itself 200 ns late.
        let late = ns(1_000) + gap + ns(200);
        assert!(matches!(p.poll_transmit(late), AgentTransmit::Send { .. }));
        assert_eq!(p.poll_transmit(late), AgentTransmit::WaitUntil(ns(1_000) + gap + gap));
    }

    #[test]
    fn a_released_flow_loses_its_waiting_pulls() {
        let mut nic = nic();
        let p = the_pacer(&mut nic);
        assert!(p.request(ns(1_000), 4, 1));
        assert!(!p.request(ns(1_001), 4, 2));
        assert!(!p.request(ns(1_002), 5, 1));
        p.release(4);
        let AgentTransmit::Send { qp, .. } = p.poll_transmit(ns(10_000)) else { panic!() };
        assert_eq!(qp, 5);
        assert_eq!(p.poll_transmit(ns(20_000)), AgentTransmit::Idle);
    }

    fn reader(una: u64) -> PsnReader {
        PsnReader { space: PsnSpace::new(100), reference: una }
    }

    fn feedback(kind: SegKind, cum: u64, ackno: u64, pull_no: u32, pull: bool) -> Segment {
        let s = PsnSpace::new(100);
        let mut seg = Segment::control(kind, s.wire(cum), ns(1));
        seg.ext = Ext::Pull(PullInfo { ackno: s.wire(ackno), pull_no, pull, probe: false });
        seg
    }

    fn drain(tx: &mut NdpSender, nic: &mut NicAgent) -> Vec<(u64, bool)> {
        let mut out = Vec::new();
        while tx.has_data() {
            match tx.next(ns(2), Rate::gbps(100), &mut nic.call(0)) {
                Some(p) => out.push(p),
                None => break,
            }
        }
        out
    }

    #[test]
    fn a_returned_packet_waits_for_a_pull_unless_no_pull_can_come() {
        let mut nic = nic();
        let mut tx = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(4), ..Default::default() }, 8, 1);
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        // Packet 0 is ACKed; 1, 2 and 3 are in flight.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 1, 0, 1, false), reader(0), &mut nic.call(0));
        // Returns of what is acknowledged, below snd_una or ACKed ahead of it, change nothing.
        tx.on_returned(ns(4), 0);
        tx.on_feedback(ns(4), &feedback(SegKind::Ack, 1, 3, 2, false), reader(1), &mut nic.call(0));
        tx.on_returned(ns(4), 3);
        assert!(tx.resend.is_empty() && tx.rto_owed == 0);
        // 1 comes back while 2 is still in flight, its PULL still to come: swallowed, queued.
        tx.on_returned(ns(5), 1);
        assert_eq!((tx.resend.len(), tx.rto_owed), (1, 0));
        assert!(drain(&mut tx, &mut nic).is_empty(), "it waits for a PULL");
        // 2 comes back too: nothing left in flight, no PULL can come, so it goes at once.
        tx.on_returned(ns(6), 2);
        assert_eq!(tx.rto_owed, 1);
        assert_eq!(drain(&mut tx, &mut nic), vec![(1, true)], "one resend now, the lowest first");
        // The next PULL takes the other.
        tx.on_feedback(ns(7), &feedback(SegKind::Grant, 1, 0, 1, false), reader(1), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(2, true)]);
    }

    #[test]
    fn a_returned_packet_of_the_initial_window_waits_while_the_window_is_unsent() {
        let mut nic = nic();
        let mut tx = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(4), ..Default::default() }, 8, 1);
        assert_eq!(tx.next(ns(1), Rate::gbps(100), &mut nic.call(0)), Some((0, false)));
        // Packet 0 back before the window is out: the window's own packets will bring PULLs.
        tx.on_returned(ns(2), 0);
        assert_eq!((tx.resend.len(), tx.rto_owed), (1, 0));
    }

    #[test]
    fn the_sender_sends_its_window_then_one_packet_per_pull_nacked_packets_first() {
        let mut nic = nic();
        let mut tx = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(4), ..Default::default() }, 8, 1);
        assert_eq!(drain(&mut tx, &mut nic), (0..4).map(|i| (i, false)).collect::<Vec<_>>());
        // An ACK without the pull bit pulls nothing; with it, one packet per pull number.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 1, 0, 1, false), reader(0), &mut nic.call(0));
        assert!(drain(&mut tx, &mut nic).is_empty());
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 2, 1, 2, true), reader(1), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(4, false), (5, false)], "pull numbers are cumulative");
        // Packet 2 was trimmed: the NACK (pull bit set) resends it before new data.
        assert!(tx.on_feedback(ns(4), &feedback(SegKind::Nak, 2, 2, 3, true), reader(2), &mut nic.call(0)));
        assert_eq!(drain(&mut tx, &mut nic), vec![(2, true)]);
        // A NACK without the pull bit queues the packet; it waits for the next pull.
        assert!(tx.on_feedback(ns(4), &feedback(SegKind::Nak, 2, 3, 4, false), reader(2), &mut nic.call(0)));
        assert!(drain(&mut tx, &mut nic).is_empty());
        tx.on_feedback(ns(5), &feedback(SegKind::Grant, 0, 0, 4, true), reader(2), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(3, true)]);
        assert_eq!((tx.snd_una(), tx.snd_nxt(), tx.is_done()), (2, 6, false));
    }

    #[test]
    fn a_nack_pulls_without_its_bit_only_when_pulls_are_owed() {
        let mut nic = nic();
        let mut tx = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(2), ..Default::default() }, 2, 1);
        assert_eq!(drain(&mut tx, &mut nic).len(), 2);
        // Pulls 1 and 2 arrive with nothing left to send: both stay owed.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 0, 1, 2, true), reader(0), &mut nic.call(0));
        assert!(drain(&mut tx, &mut nic).is_empty());
        // The NACK of packet 0 (no pull bit) is resent on an owed pull at once.
        assert!(tx.on_feedback(ns(4), &feedback(SegKind::Nak, 0, 0, 3, false), reader(0), &mut nic.call(0)));
        assert_eq!(drain(&mut tx, &mut nic), vec![(0, true)]);
        tx.on_feedback(ns(5), &feedback(SegKind::Ack, 2, 0, 4, false), reader(0), &mut nic.call(0));
        assert!(tx.is_done());
    }

    #[test]
    fn the_timeout_resends_every_unacknowledged_packet_without_pulls() {
        let mut nic = nic();
        let p = NdpParams { initial_window: BdpOr::Value(4), rto_initial: Dur(Time::from_us(100)), ..Default::default() };
        let mut tx = NdpSender::new(&p, 4, 1);
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        // Packet 2 is ACKed on its own; 0, 1 and 3 are lost with their headers.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 0, 2, 1, false), reader(0), &mut nic.call(0));
        // The ACK drew an RTO of 50 ms x [0.75, 1.25] (the sample is below the floor).
        let due = tx.poll_timeout().unwrap();
        assert!(due >= ns(3) + Time::from_us(37_500) && due <= ns(3) + Time::from_us(62_500), "{due:?}");
        assert!(!tx.handle_timeout(due - Time(1), &mut nic.call(0)));
        assert!(tx.handle_timeout(due, &mut nic.call(0)));
        assert_eq!(drain(&mut tx, &mut nic), vec![(0, true), (1, true), (3, true)]);
    }

    fn aeolus_sender(window: u32, npkts: u64) -> NdpSender {
        NdpSender::new(&NdpParams { initial_window: BdpOr::Value(window), ..Default::default() }, npkts, 1).with_aeolus(2, 1)
    }

    fn probe_ack(cum: u64, last: u64, pull_no: u32, pull: bool) -> Segment {
        let mut seg = feedback(SegKind::Ack, cum, last, pull_no, pull);
        if let Ext::Pull(p) = &mut seg.ext {
            p.probe = true;
        }
        seg
    }

    #[test]
    fn aeolus_colours_the_window_only_and_probes_after_its_last_packet() {
        let mut nic = nic();
        let mut tx = aeolus_sender(3, 6);
        let space = PsnSpace::new(100);
        assert_eq!(tx.poll_connection(ns(1), space), None, "no probe before the window is out");
        let mut marks = Vec::new();
        for _ in 0..3 {
            let (i, _) = tx.next(ns(1), Rate::gbps(100), &mut nic.call(0)).unwrap();
            marks.push((i, tx.mark(i, false), tx.unscheduled()));
        }
        assert_eq!(marks, vec![(0, Some((1, 2)), true), (1, Some((1, 2)), true), (2, Some((1, 2)), true)]);
        let probe = tx.poll_connection(ns(2), space).unwrap();
        let info = pull_info(&probe).unwrap();
        assert_eq!((probe.kind, probe.psn, probe.payload, probe.wire_bytes, probe.colour, probe.priority), (SegKind::Data, space.wire(2), 0, 64, 0, 1));
        assert!(info.probe && info.ackno == space.wire(2));
        assert_eq!(tx.poll_connection(ns(2), space), None, "one probe");
        // A pulled packet is scheduled: the flow's marking, not the window's colour.
        tx.on_feedback(ns(3), &feedback(SegKind::Grant, 0, 0, 1, true), reader(0), &mut nic.call(0));
        assert_eq!(tx.next(ns(3), Rate::gbps(100), &mut nic.call(0)), Some((3, false)));
        assert_eq!((tx.mark(3, false), tx.unscheduled()), (None, false));
        // Without Aeolus: no colour, no probe.
        let mut plain = NdpSender::new(&NdpParams { initial_window: BdpOr::Value(1), ..Default::default() }, 2, 1);
        assert_eq!(plain.next(ns(1), Rate::gbps(100), &mut nic.call(0)), Some((0, false)));
        assert_eq!((plain.mark(0, false), plain.poll_connection(ns(1), space)), (None, None));
    }

    #[test]
    fn aeolus_finds_window_losses_by_sack_and_probe_and_resends_them_first_on_pulls() {
        let mut nic = nic();
        let mut tx = aeolus_sender(5, 8);
        assert_eq!(drain(&mut tx, &mut nic).len(), 5);
        // 2 is SACKed: 0 and 1 (sent before it) are lost; 3 and 4 are not yet known.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 0, 2, 1, false), reader(0), &mut nic.call(0));
        assert_eq!(tx.notifications().aeolus_sack_losses, 2);
        // A repeated SACK finds nothing again.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 0, 2, 1, false), reader(0), &mut nic.call(0));
        assert_eq!(tx.notifications().aeolus_sack_losses, 2);
        // The probe's ACK: 3 and 4 never arrived; the ACK pulls twice (its number 2, bit set).
        tx.on_feedback(ns(4), &probe_ack(0, 4, 3, true), reader(0), &mut nic.call(0));
        let n = tx.notifications();
        assert_eq!((n.aeolus_sack_losses, n.aeolus_probe_losses), (2, 2));
        assert!(!tx.acked.get(4), "the probe's ACK acknowledges no packet");
        // Pulls 1..3: lost ones first, lowest first; then a fourth pull takes new data.
        assert_eq!(drain(&mut tx, &mut nic), vec![(0, true), (1, true), (3, true)]);
        tx.on_feedback(ns(5), &feedback(SegKind::Grant, 0, 0, 5, true), reader(0), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(4, true), (5, false)]);
    }

    #[test]
    fn aeolus_resends_unacknowledged_window_packets_last_and_once() {
        let mut nic = nic();
        let mut tx = aeolus_sender(3, 4);
        assert_eq!(drain(&mut tx, &mut nic).len(), 3);
        // 0 is ACKed; two pulls: new data first (3), then 1, sent but unacknowledged.
        tx.on_feedback(ns(3), &feedback(SegKind::Ack, 1, 0, 2, true), reader(0), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(3, false), (1, true)]);
        // More pulls: 2 goes once; nothing after it.
        tx.on_feedback(ns(4), &feedback(SegKind::Grant, 0, 0, 5, true), reader(1), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(2, true)]);
        // The probe's ACK then finds 1 and 2 resent already: nothing more.
        tx.on_feedback(ns(5), &probe_ack(1, 2, 5, false), reader(1), &mut nic.call(0));
        assert_eq!(tx.notifications().aeolus_probe_losses, 0);
        assert!(drain(&mut tx, &mut nic).is_empty());
    }

    #[test]
    fn the_receiver_answers_the_probe_with_a_pull_per_missing_window_packet_once() {
        use crate::transport::common::poll::{Transmit, Want};
        use crate::transport::{Receiver, RxRecovery};
        let s = spec(6);
        let space = PsnSpace::new(100);
        let mut nic = nic();
        let mut rx = Receiver::new(s, RxRecovery::Ndp(NdpReceiver::new(6)), None);
        let mut got = Vec::new();
        let mut feed = |rx: &mut Receiver, nic: &mut NicAgent, i: u64, probe: bool, at: u64| {
            let payload = if probe { 0 } else { 1_000 };
            let mut seg = Segment::data(space.wire(i), payload, crate::transport::common::segment::payload_tag(9, i), ns(at));
            if probe {
                seg.ext = Ext::Pull(PullInfo { ackno: space.wire(i), probe: true, ..Default::default() });
            }
            rx.handle_packet(ns(at), &seg, &mut nic.call(0));
            while let Transmit::Send(a) = rx.poll_transmit(ns(at), &mut nic.call(0), Want::Responses) {
                let info = pull_info(&a).unwrap();
                got.push((space.unwrap(info.ackno, 0).unwrap(), info.pull_no, info.pull, info.probe));
            }
        };
        // A 4-packet window of which 1 and 3 arrive; then the probe naming 3.
        feed(&mut rx, &mut nic, 1, false, 1_000);
        feed(&mut rx, &mut nic, 3, false, 1_001);
        feed(&mut rx, &mut nic, 3, true, 1_002);
        // 0 and 2 are missing: two pulls, numbers 3 and 4, both queued at the pacer.
        // A second probe (a duplicate) pulls nothing more.
        feed(&mut rx, &mut nic, 3, true, 1_003);
        assert_eq!(got, vec![(1, 1, true, false), (3, 2, false, false), (3, 4, false, true), (3, 4, false, true)]);
        assert_eq!(rx.ctx.delivered_bytes, 0, "the probe delivers nothing");
        let p = the_pacer(&mut nic);
        let mut pulls = Vec::new();
        let mut now = ns(1_003);
        loop {
            match p.poll_transmit(now) {
                AgentTransmit::Send { seg, .. } => pulls.push(pull_info(&seg).unwrap().pull_no),
                AgentTransmit::WaitUntil(t) => now = t,
                AgentTransmit::Idle => break,
            }
        }
        assert_eq!(pulls, vec![2, 3, 4], "the window's own pull, then one per missing packet");
    }

    fn spec(npkts: u64) -> FlowSpec {
        FlowSpec { size: npkts * 1_000, mtu: 1_000, initial_psn: 100, key: 9, marking: Default::default() }
    }

    #[test]
    fn the_receiver_acks_each_packet_nacks_each_header_and_numbers_pulls() {
        use crate::transport::common::poll::{Transmit, Want};
        use crate::transport::{Receiver, RxRecovery};
        let s = spec(3);
        let space = PsnSpace::new(100);
        let mut nic = nic();
        let mut rx = Receiver::new(s, RxRecovery::Ndp(NdpReceiver::new(3)), None);
        let mut got = Vec::new();
        let mut feed = |rx: &mut Receiver, nic: &mut NicAgent, i: u64, trimmed: bool, at: u64| {
            let mut seg = Segment::data(space.wire(i), 1_000, crate::transport::common::segment::payload_tag(9, i), ns(at));
            seg.trimmed = trimmed;
            rx.handle_packet(ns(at), &seg, &mut nic.call(0));
            while let Transmit::Send(a) = rx.poll_transmit(ns(at), &mut nic.call(0), Want::Responses) {
                let info = pull_info(&a).unwrap();
                got.push((a.kind, space.unwrap(a.psn, 0).unwrap(), space.unwrap(info.ackno, 0).unwrap(), info.pull_no, info.pull, a.wire_bytes));
            }
        };
        feed(&mut rx, &mut nic, 1, false, 1_000); // out of order: held; idle pacer: pull carried
        feed(&mut rx, &mut nic, 0, true, 1_100); // trimmed: NACK, its pull queued (within the gap)
        feed(&mut rx, &mut nic, 0, false, 2_000); // fills the hole: 0 and 1 delivered
        feed(&mut rx, &mut nic, 2, false, 2_050); // the last: complete, the flow's PULLs go
        use SegKind::{Ack, Nak};
        assert_eq!(got, vec![(Ack, 0, 1, 1, true, 64), (Nak, 0, 0, 2, false, 64), (Ack, 2, 0, 3, false, 64), (Ack, 3, 2, 4, false, 64)]);
        assert_eq!(rx.ctx.delivered_bytes, 3_000);
        assert_eq!(rx.ctx.bad_deliveries, 0);
        assert_eq!(rx.ctx.naks_sent, 1);
        assert_eq!(rx.reorder_stats(), (1_000, 1_000, 0));
        // Pulls 2 and 3 waited at the pacer; the last packet completed the flow, which
        // released them unsent.
        assert_eq!(the_pacer(&mut nic).poll_transmit(ns(10_000)), AgentTransmit::Idle);
    }
}
