//! A Homa-like receiver-driven message transport (Montazeri et al., SIGCOMM 2018), with
//! Aeolus's selective-drop loss recovery as an option (Hu et al., SIGCOMM 2020, §3.3; the
//! project's seed `002`). Parameters and behaviour from two sources, learnt from, not copied:
//! the authors' OMNeT++ simulator (PlatformLab/HomaSimulation `homaTransportConfig.ini`:
//! rttBytes 10,000 B, 8 priority levels split unscheduled / scheduled, an overcommitment
//! degree, SRPT grants; it assumes infinite buffers and has no loss recovery, to which the
//! Aeolus authors added a timeout-based one) and the Aeolus testbed's DPDK Homa (6 unscheduled
//! and 2 scheduled priorities, unscheduled cutoffs 2/4/6/8/10 KB, RTT_BYTES 20,000, a 10 ms
//! retransmission timeout). The defaults are the testbed's, since its 7-to-1 incast is what
//! retx reproduces.
//!
//! - Sender ([`HomaSender`]): sends the first `rtt_bytes` of its message unscheduled at line
//!   rate, at the unscheduled priority its message size selects from `cutoffs` (smaller
//!   messages higher), then one packet per transmission the receiver granted. A grant is
//!   cumulative (the sender may have made this many transmissions in all, so a lost grant is
//!   made up by the next) and names the priority of the scheduled packets.
//! - Receiver: answers every data packet with a 64 B ACK carrying the cumulative index and the
//!   packet's own PSN (a per-packet SACK), and tells its host's scheduler what has arrived.
//! - Scheduler ([`HomaScheduler`], one per host, the NIC agent): grants by SRPT (fewest packets
//!   left first, then first come) to at most `overcommitment` messages at once, keeping each
//!   granted message `rtt_bytes` ahead of what has arrived; the message ranked `r` gets the
//!   `r`-th scheduled priority (the last one shared by every rank beyond).
//! - Loss recovery without Aeolus: a sender-side timeout (`rto`, the testbed's 10 ms) without
//!   any ACK or grant resends every packet not yet acknowledged, ungranted. Homa's RESEND comes
//!   from the receiver and names the missing ranges; the per-packet ACKs tell the sender the
//!   same ranges, and a sender-side timer also recovers a message whose every packet was lost
//!   (of which the receiver knows nothing).
//! - Aeolus (`aeolus = true`): unscheduled first transmissions are coloured `aeolus_colour`
//!   (pair with a `[[switch.wred]]` rule of that colour and a hard `threshold`, so switches drop
//!   only them); scheduled packets, retransmissions, ACKs, grants and the probe are never
//!   coloured. A 64 B probe follows the last unscheduled packet at once, carrying its PSN, on
//!   the same priority (so it cannot overtake it on a path); its ACK tells the sender every
//!   unscheduled packet still unacknowledged is lost, and tells the receiver how many
//!   transmissions were lost, which it grants on top. A SACK of an unscheduled packet also
//!   marks the unscheduled packets before it lost. Each granted transmission goes, in order:
//!   a loss-detected unscheduled packet, an unsent scheduled packet, an unscheduled packet
//!   sent but unacknowledged (each resent once this way).
//!
//! Simplified, where the sources are silent or the model has no counterpart: grants are in
//! packets, not bytes; grants are not paced (one per data packet received at most, so the
//! host link paces them); the sender's NIC serves its messages by the host's scheduler, not by
//! SRPT; Homa's per-packet ACKs do not exist (its messages complete at the receiver), here they
//! are 64 B control packets; priorities are not adapted to the workload (no "CBF graduated"
//! cutoffs: give explicit ones).

use crate::transport::common::notifications::Notifications;
use crate::transport::common::scheme::{NetworkScale, RunFacts, Scheme, Setup};
use crate::transport::proactive::aeolus::{Probe, Unscheduled, UnscheduledPackets};
use crate::transport::common::agent::{HostAgent, NicCall};
use crate::transport::common::ext::HomaInfo;
use crate::transport::common::psn::{Psn, PsnReader, PsnSpace};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::reorder::ReorderBuffer;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::transport::common::flow::{FlowSpec, PRIORITY_CONTROL};
use crate::sim::check::{self, Checked, FieldError};
use crate::sim::units::{BdpOr, Dur, Rate, Size, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// `testbed`: the sender's timer once the receiver has answered, in `rto`s (flowgen.c:1283,
/// `100*TIMEOUT`: a sender closes a message this long after running out of data).
const TESTBED_CLOSE_RTOS: u64 = 100;

/// Bytes of an ACK, a grant and Aeolus's probe on the wire: the minimum Ethernet frame (the
/// seed: "of minimal Ethernet packet size, e.g., 64 bytes").
pub const HEADER_BYTES: u32 = 64;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HomaParams {
    /// Bytes of a message sent unscheduled, and how far ahead of what has arrived a granted
    /// message is kept (testbed RTT_BYTES 20,000; HomaSimulation rttBytes 10,000), or "bdp":
    /// one BDP of the run's network, the Homa paper's rule ("RTTbytes ... the number of bytes
    /// that can be transmitted in one round-trip time", §3.2).
    pub rtt_bytes: BdpOr<Size>,
    /// Priority levels for unscheduled packets (testbed: 6), the highest ones.
    pub unscheduled_priorities: u8,
    /// Priority levels for scheduled packets (testbed: 2), below the unscheduled ones.
    pub scheduled_priorities: u8,
    /// Message sizes splitting the unscheduled levels, increasing, one fewer than them: a
    /// message of at most `cutoffs[0]` bytes takes the highest (testbed: 2, 4, 6, 8, 10 KB).
    pub cutoffs: Vec<Size>,
    /// Derive the cutoffs from the workload's flow-size table instead (the Homa paper's rule,
    /// HomaSimulation's "CBF graduated"-style: each unscheduled level carries an equal share of
    /// the unscheduled bytes, smallest messages highest): needs a `[workload]` with a `cdf`.
    pub workload_cutoffs: bool,
    /// Messages granted at once per receiver (Homa's overcommitment degree; here one per
    /// scheduled level, as the Homa paper sets it).
    pub overcommitment: u32,
    /// Resend what is unacknowledged after this long without an ACK or grant (testbed: 10 ms).
    pub rto: Dur,
    /// Aeolus: colour unscheduled packets, probe the tail, recover losses on grants.
    pub aeolus: bool,
    /// The colour of unscheduled packets under Aeolus (2: red).
    pub aeolus_colour: u8,
    /// Recover as the Aeolus testbed's DPDK Homa does (gaoxiongzeng/dpdk-18.05
    /// `app/test-pmd/flowgen.c`, the code behind the paper's incast numbers), instead of by the
    /// sender's timer: a 64 B grant request opens each message, so the receiver knows a message
    /// whose data were all lost (flowgen.c:781-858); a grant follows what has arrived
    /// (`data_recv_next + RTT_BYTES`) and goes only when that moves, so a message with nothing
    /// received is not granted (flowgen.c:1410-1426, 1220-1222); only the `overcommitment`
    /// messages SRPT ranks first are watched, and one whose grant has not moved for `rto` gets
    /// a RESEND of up to `rtt_bytes` of what is missing (flowgen.c:1427-1442); the sender's own
    /// timer, once it has heard from the receiver, is only the close fallback of 100 `rto`
    /// (flowgen.c:1283). The testbed resends by rolling its send pointer back and counts bytes,
    /// duplicates included (flowgen.c:1118-1138, 1322-1337); here the RESEND names what is
    /// unacknowledged, so every byte still arrives once.
    pub testbed: bool,
    /// One switch queue for all data, as the Aeolus paper's §4.1 arranges it ("selectively
    /// drops unscheduled packets while preserving scheduled packets in a single switch
    /// queue"): unscheduled and scheduled packets at the highest data priority, so the
    /// selective-drop threshold counts both, instead of the testbed's levels (unscheduled
    /// above scheduled, where a scheduled packet never waits behind an unscheduled one).
    pub single_queue: bool,
}

impl Default for HomaParams {
    fn default() -> Self {
        HomaParams {
            rtt_bytes: BdpOr::Value(Size(20_000)),
            unscheduled_priorities: 6,
            scheduled_priorities: 2,
            cutoffs: [2_000, 4_000, 6_000, 8_000, 10_000].into_iter().map(Size).collect(),
            workload_cutoffs: false,
            overcommitment: 2,
            rto: Dur(Time::from_ms(10)),
            aeolus: false,
            aeolus_colour: 2,
            testbed: false,
            single_queue: false,
        }
    }
}

impl Scheme for HomaParams {
    const NAME: &'static str = "homa";
    type Sender = HomaSender;
    type Receiver = HomaReceiver;
    /// The receiver-side SRPT grant scheduler.
    type Agent = HomaScheduler;

    /// Fields by their names within `[recovery.homa]`.
    fn check(&self) -> Checked {
        if let BdpOr::Value(bytes) = self.rtt_bytes {
            check::range_u64("rtt_bytes", bytes.0, 1, 1 << 30)?;
        }
        check::range_u32("unscheduled_priorities", self.unscheduled_priorities as u32, 1, 7)?;
        check::range_u32("scheduled_priorities", self.scheduled_priorities as u32, 1, 8 - self.unscheduled_priorities as u32)?;
        if self.workload_cutoffs {
            // Set from the workload once it is known (`with_cutoffs_for`).
        } else if self.cutoffs.len() + 1 != self.unscheduled_priorities as usize {
            return Err(FieldError::new("cutoffs", format!("{} cutoffs for {} unscheduled priorities: give one fewer than them", self.cutoffs.len(), self.unscheduled_priorities)));
        }
        if self.cutoffs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(FieldError::new("cutoffs", "must increase"));
        }
        check::range_u32("overcommitment", self.overcommitment, 1, 1 << 16)?;
        check::timer("rto", self.rto.0)?;
        check::range_u32("aeolus_colour", self.aeolus_colour as u32, 1, 2)
    }

    fn check_run(&self, run: &RunFacts) -> Checked {
        if self.workload_cutoffs && !run.has_size_table {
            return Err(FieldError::new("workload_cutoffs", "needs a [workload] with a flow-size table (cdf = ...)"));
        }
        if self.workload_cutoffs && self.rtt_bytes == BdpOr::Bdp {
            return Err(FieldError::new("workload_cutoffs", "needs rtt_bytes in bytes, not \"bdp\" (the cutoffs are derived before the network is built)"));
        }
        Ok(())
    }

    fn endpoints(&self, f: &Setup<'_>) -> (HomaSender, HomaReceiver) {
        if self.rtt_bytes == BdpOr::Bdp {
            // One BDP of the run's longest path, in whole packets.
            let bytes = f.bdp_packets.max(1) as u64 * f.spec.mtu as u64;
            let p = HomaParams { rtt_bytes: BdpOr::Value(Size(bytes)), ..self.clone() };
            return (HomaSender::new(&p, f.spec), HomaReceiver::new(&p, f.spec));
        }
        (HomaSender::new(self, f.spec), HomaReceiver::new(self, f.spec))
    }

    /// Cutoffs given while `workload_cutoffs` derives them.
    fn inert_settings(&self) -> Vec<String> {
        if self.workload_cutoffs && self.cutoffs != HomaParams::default().cutoffs {
            return vec!["cutoffs: ignored: workload_cutoffs = true derives them from the workload's flow sizes".into()];
        }
        Vec::new()
    }

    /// `rtt_bytes` far from the network's BDP (a receiver granting less than a BDP ahead idles
    /// its link between grants; far more than one queues), and fewer switch queues than its
    /// unscheduled levels plus one for scheduled packets (the levels above the last queue
    /// share it, so small messages lose their priority over large ones).
    fn network_warnings(&self, net: &NetworkScale) -> Vec<String> {
        let mut out = Vec::new();
        let bdp = net.bdp_bytes().max(1);
        if let BdpOr::Value(bytes) = self.rtt_bytes {
            if let Some(ratio) = NetworkScale::far_from_bdp(bytes.0, bdp) {
                out.push(format!(
                    "rtt_bytes: {} B is {ratio:.2}x this network's BDP ({bdp} B: {} packets of {} B); grants keep a message that far ahead, so the receiver's link {}; set it near the BDP, or \"bdp\"",
                    bytes.0, net.bdp_packets, net.mtu, if ratio < 1.0 { "idles between grants" } else { "queues what it granted" }
                ));
            }
        }
        let needed = if self.single_queue { 2 } else { self.unscheduled_priorities as u32 + 2 };
        if net.switch_queues > 0 && net.switch_queues < needed {
            out.push(format!(
                "unscheduled_priorities: {} unscheduled levels and scheduled packets below them need switch.queues >= {needed} (queue 0 is control), the switches have {}: the levels above the last queue share it (or set single_queue = true)",
                self.unscheduled_priorities, net.switch_queues
            ));
        }
        out
    }

    fn agent(&self, _link: Rate, _mtu: u32) -> Option<HomaScheduler> {
        Some(HomaScheduler::new(self))
    }

    fn wants_sizes(&self) -> bool {
        self.workload_cutoffs
    }

    fn with_sizes(&self, sizes: &[u64]) -> Self {
        self.with_cutoffs_for(sizes)
    }
}

impl HomaParams {
    /// These parameters with cutoffs from `sizes`, message sizes drawn evenly over the
    /// workload's distribution (its quantiles, ascending): each of the unscheduled levels
    /// carries an equal share of the unscheduled bytes, min(size, rtt_bytes) summed, the
    /// smallest messages at the highest level (the Homa paper, §3.4). A cutoff is the largest
    /// size of its share; cutoffs that would repeat (a point mass spanning shares) are made to
    /// increase by a byte.
    pub fn with_cutoffs_for(&self, sizes: &[u64]) -> HomaParams {
        let levels = self.unscheduled_priorities as u64;
        // `check_run` refuses "bdp" with workload cutoffs.
        let rtt = self.rtt_bytes.or(Size(u64::MAX)).0;
        let unscheduled = |s: u64| s.min(rtt) as u128;
        let total: u128 = sizes.iter().map(|&s| unscheduled(s)).sum();
        let mut cutoffs = Vec::with_capacity(levels as usize - 1);
        let (mut sum, mut i) = (0u128, 0usize);
        for j in 1..levels {
            // The first size at which the running sum reaches j / levels of the total.
            while i < sizes.len() && sum * (levels as u128) < total * (j as u128) {
                sum += unscheduled(sizes[i]);
                i += 1;
            }
            let at = sizes.get(i.saturating_sub(1)).copied().unwrap_or(1).max(1);
            let floor = cutoffs.last().map_or(0, |c: &Size| c.0 + 1);
            cutoffs.push(Size(at.max(floor)));
        }
        HomaParams { cutoffs, workload_cutoffs: false, ..self.clone() }
    }

    /// Packets of `rtt_bytes` at `mtu` payload bytes each.
    /// ("bdp" is resolved to bytes before any end is built: [`Scheme::endpoints`].)
    pub fn rtt_packets(&self, mtu: u32) -> u64 {
        self.rtt_bytes.or(Size(1)).0.div_ceil(mtu as u64).max(1)
    }

    /// The priority of a `size`-byte message's unscheduled packets: 1 (the highest data
    /// priority) up to the cutoffs' first, one lower past each.
    pub fn unscheduled_priority(&self, size: u64) -> u8 {
        if self.single_queue {
            return 1;
        }
        1 + self.cutoffs.iter().take_while(|c| size > c.0).count() as u8
    }

    /// The priority of the scheduled packets of the message ranked `rank` (0: fewest bytes
    /// left) among those granted.
    pub fn scheduled_priority(&self, rank: usize) -> u8 {
        if self.single_queue {
            return 1;
        }
        1 + self.unscheduled_priorities + rank.min(self.scheduled_priorities as usize - 1) as u8
    }
}

/// A count of transmissions as a grant carries it.
fn on_wire(granted: u64) -> u32 {
    granted.min(u32::MAX as u64) as u32
}

fn info(seg: &Segment) -> Option<HomaInfo> {
    match seg.ext {
        Ext::Homa(i) => Some(i),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// The host's grant scheduler.

#[derive(Clone, Copy, Debug)]
struct Incoming {
    qp: u32,
    npkts: u64,
    rtt_pkts: u64,
    /// Distinct packets arrived.
    received: u64,
    /// Transmissions granted so far (the unscheduled ones implicitly).
    granted: u64,
    /// Transmissions known lost (Aeolus: unscheduled packets missing at the probe), granted on
    /// top of the message.
    wasted: u64,
    /// First heard of: SRPT's tie-break.
    order: u64,
    /// `testbed`: what the last grant followed (packets arrived + `rtt_pkts`; `rtt_pkts`
    /// before any), when it last moved (or the message was first heard of), the priority it
    /// named, and whether a RESEND is owed.
    offset: u64,
    changed: Time,
    priority: u8,
    resend_due: bool,
}

impl Incoming {
    /// What a message needs granted in all.
    fn need(&self) -> u64 {
        self.npkts.saturating_add(self.wasted)
    }
}

/// A grant to send: to queue pair `qp`, up to `granted` transmissions, at `priority`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantOut {
    pub qp: u32,
    pub granted: u64,
    pub priority: u8,
}

/// The receiver-side SRPT grant scheduler of one host (HomaSimulation's `ReceiveScheduler`).
#[derive(Clone, Debug)]
pub struct HomaScheduler {
    p: HomaParams,
    /// Messages arriving at this host, not yet complete.
    msgs: Vec<Incoming>,
    heard: u64,
    pub grants_sent: u64,
    /// `testbed`: RESENDs sent (receiver timeouts).
    pub resends_sent: u64,
    /// Scratch of [`HomaScheduler::schedule`] and the grants of the last update, kept so that
    /// no packet allocates.
    ranked: Vec<usize>,
    out: Vec<GrantOut>,
}

impl HomaScheduler {
    pub fn new(p: &HomaParams) -> Self {
        HomaScheduler { p: p.clone(), msgs: Vec::new(), heard: 0, grants_sent: 0, resends_sent: 0, ranked: Vec::new(), out: Vec::new() }
    }

    /// Queue pair `qp`'s message (`npkts` packets, `unscheduled` of them sent ungranted,
    /// `rtt_pkts` per RTT) has `received` distinct packets and `wasted` known lost
    /// transmissions, at `now`: the grants that follow, by SRPT over every message of the host
    /// ([`HomaScheduler::grants`] until the next update).
    pub fn update(&mut self, now: Time, qp: u32, npkts: u64, unscheduled: u64, rtt_pkts: u64, received: u64, wasted: u64) -> &[GrantOut] {
        let i = match self.msgs.iter().position(|m| m.qp == qp) {
            Some(i) => i,
            None if received >= npkts => return self.schedule(now),
            None => {
                self.heard += 1;
                let priority = self.p.scheduled_priority(usize::MAX);
                self.msgs.push(Incoming { qp, npkts, rtt_pkts, received: 0, granted: unscheduled, wasted: 0, order: self.heard, offset: rtt_pkts, changed: now, priority, resend_due: false });
                self.msgs.len() - 1
            }
        };
        let m = &mut self.msgs[i];
        (m.received, m.wasted) = (received.max(m.received), wasted.max(m.wasted));
        if m.received >= m.npkts {
            self.msgs.swap_remove(i);
        }
        self.schedule(now)
    }

    /// `testbed`: a RESEND owed to queue pair `qp`'s message, taken: the grant it repeats and
    /// that grant's priority.
    pub fn take_resend(&mut self, qp: u32) -> Option<(u64, u8)> {
        let m = self.msgs.iter_mut().find(|m| m.qp == qp && m.resend_due)?;
        m.resend_due = false;
        self.resends_sent += 1;
        Some((m.granted, m.priority))
    }

    /// The messages a `testbed` receiver watches: the first `overcommitment` by SRPT.
    fn watched(&self) -> impl Iterator<Item = usize> + '_ {
        self.ranked.iter().copied().take(if self.p.testbed { self.p.overcommitment as usize } else { 0 })
    }

    /// What queue pair `qp`'s message has been granted so far (0: none, or complete).
    pub fn granted(&self, qp: u32) -> u64 {
        self.msgs.iter().find(|m| m.qp == qp).map_or(0, |m| m.granted)
    }

    /// The grants of the last [`HomaScheduler::update`].
    pub fn grants(&self) -> &[GrantOut] {
        &self.out
    }

    /// Grants to the `overcommitment` messages with the fewest packets left among those not
    /// fully granted, each up to `rtt_pkts` ahead of what has arrived. `testbed`: among every
    /// incomplete message (a fully granted one that lost packets keeps its rank, and the slot),
    /// and only when what has arrived moved the grant.
    fn schedule(&mut self, now: Time) -> &[GrantOut] {
        let (msgs, testbed) = (&self.msgs, self.p.testbed);
        self.ranked.clear();
        self.ranked.extend((0..msgs.len()).filter(|&i| testbed || msgs[i].granted < msgs[i].need()));
        self.ranked.sort_unstable_by_key(|&i| (msgs[i].npkts - msgs[i].received, msgs[i].order));
        self.out.clear();
        for (rank, &i) in self.ranked.iter().take(self.p.overcommitment as usize).enumerate() {
            let m = &mut self.msgs[i];
            if testbed {
                let offset = m.received.saturating_add(m.rtt_pkts);
                if offset <= m.offset {
                    continue;
                }
                (m.offset, m.changed) = (offset, now);
            }
            let target = m.received.saturating_add(m.rtt_pkts).min(m.npkts).saturating_add(m.wasted);
            if target > m.granted {
                (m.granted, m.priority) = (target, self.p.scheduled_priority(rank));
                self.out.push(GrantOut { qp: m.qp, granted: target, priority: self.p.scheduled_priority(rank) });
            }
        }
        self.grants_sent += self.out.len() as u64;
        &self.out
    }
}

/// Grants go at once, as the data packets that trigger them arrive ([`super::NicAgent::send`]):
/// nothing paced. `testbed`: a timer on the watched messages, whose receivers it wakes to send
/// the RESEND.
impl HostAgent for HomaScheduler {
    fn poll_timeout(&self) -> Option<Time> {
        self.watched().map(|i| self.msgs[i].changed + self.p.rto.0).min()
    }

    fn handle_timeout(&mut self, now: Time, wake: &mut Vec<u32>) {
        let rto = self.p.rto.0;
        for k in 0..self.ranked.len().min(self.p.overcommitment as usize) {
            let m = &mut self.msgs[self.ranked[k]];
            if self.p.testbed && m.changed + rto <= now {
                (m.changed, m.resend_due) = (now, true);
                wake.push(m.qp);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Sender.

#[derive(Clone, Debug)]
pub struct HomaSender {
    npkts: u64,
    /// Packets sent unscheduled: the first `rtt_bytes`.
    unscheduled: u64,
    unscheduled_priority: u8,
    aeolus: Option<u8>,
    snd_una: u64,
    snd_nxt: u64,
    /// Packets SACKed above `snd_una`.
    sacked: BTreeSet<u64>,
    /// Transmissions granted in all (the unscheduled ones to start with), and made.
    granted: u64,
    used: u64,
    /// The last grant's priority (before one: the lowest scheduled).
    grant_priority: u8,
    /// Aeolus: each unscheduled packet's state.
    states: UnscheduledPackets,
    probe: Probe,
    /// Resends the timeout owes, ungranted.
    timeout_resend: BTreeSet<u64>,
    rto: Time,
    last_progress: Time,
    /// The priority and colour of the packet `next` chose, and whether it went unscheduled.
    marked: (u8, u8),
    marked_unscheduled: bool,
    /// `testbed`: the grant request is out; the receiver has answered.
    testbed: bool,
    requested: bool,
    heard: bool,
    /// Aeolus: unscheduled packets found lost, by what found them; `testbed`: RESENDs.
    sack_losses: u64,
    probe_losses: u64,
    resends: u64,
}

impl HomaSender {
    pub fn new(p: &HomaParams, spec: &FlowSpec) -> Self {
        let npkts = spec.npkts();
        let unscheduled = p.rtt_packets(spec.mtu).min(npkts);
        let states = UnscheduledPackets::new(if p.aeolus { unscheduled } else { 0 });
        HomaSender {
            npkts,
            unscheduled,
            unscheduled_priority: p.unscheduled_priority(spec.size),
            aeolus: p.aeolus.then_some(p.aeolus_colour),
            snd_una: 0,
            snd_nxt: 0,
            sacked: BTreeSet::new(),
            granted: unscheduled,
            used: 0,
            grant_priority: p.scheduled_priority(usize::MAX),
            states,
            probe: Probe::NotYet,
            timeout_resend: BTreeSet::new(),
            rto: p.rto.0,
            last_progress: Time::ZERO,
            marked: (0, 0),
            marked_unscheduled: false,
            testbed: p.testbed,
            requested: false,
            heard: false,
            sack_losses: 0,
            probe_losses: 0,
            resends: 0,
        }
    }

    fn acked(&self, i: u64) -> bool {
        i < self.snd_una || self.sacked.contains(&i)
    }

    /// The first unscheduled packet in `state` still unacknowledged.
    fn first(&self, state: Unscheduled) -> Option<u64> {
        let (una, sacked) = (self.snd_una, &self.sacked);
        self.states.first(state, |i| i < una || sacked.contains(&i))
    }

    /// Aeolus: unscheduled packets found lost, by SACK or probe.
    pub fn losses_detected(&self) -> u64 {
        self.sack_losses + self.probe_losses
    }

    /// Marks lost every unscheduled packet below `end` sent once and unacknowledged.
    fn detect(&mut self, end: u64) -> u64 {
        let (una, sacked) = (self.snd_una, &self.sacked);
        self.states.detect(end, |i| i < una || sacked.contains(&i))
    }

    fn scheduled(&mut self, i: u64, retransmit: bool) -> Option<(u64, bool)> {
        self.used += 1;
        self.marked = (self.grant_priority, 0);
        if retransmit {
            self.states.set(i, Unscheduled::Resent);
        }
        Some((i, retransmit))
    }
}

impl SendRecovery for HomaSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        let retransmittable = self.first(Unscheduled::Lost).is_some() || self.first(Unscheduled::Sent).is_some();
        !self.timeout_resend.is_empty() || (self.used < self.granted && (self.snd_nxt < self.npkts || retransmittable))
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    fn next(&mut self, now: Time, _rate: Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.used == 0 && self.snd_nxt == 0 {
            self.last_progress = now;
        }
        self.marked_unscheduled = false;
        // What the timeout owes goes first, ungranted (Homa's answer to a RESEND).
        while let Some(i) = self.timeout_resend.pop_first() {
            if !self.acked(i) {
                self.marked = (self.grant_priority, 0);
                return Some((i, true));
            }
        }
        if self.used >= self.granted {
            return None;
        }
        if self.snd_nxt < self.unscheduled {
            // The first RTT: unscheduled, at the size's priority, coloured under Aeolus.
            let i = self.snd_nxt;
            self.snd_nxt += 1;
            self.used += 1;
            self.marked = (self.unscheduled_priority, self.aeolus.unwrap_or(0));
            self.marked_unscheduled = true;
            self.states.set(i, Unscheduled::Sent);
            if self.aeolus.is_some() && self.snd_nxt == self.unscheduled {
                self.probe = Probe::Due;
            }
            return Some((i, false));
        }
        // On a grant, Aeolus's order: loss-detected unscheduled, unsent scheduled, sent but
        // unacknowledged unscheduled.
        if let Some(i) = self.first(Unscheduled::Lost) {
            return self.scheduled(i, true);
        }
        if self.snd_nxt < self.npkts {
            self.snd_nxt += 1;
            return self.scheduled(self.snd_nxt - 1, false);
        }
        if let Some(i) = self.first(Unscheduled::Sent) {
            return self.scheduled(i, true);
        }
        None
    }
    fn mark(&self, _index: u64, _retransmit: bool) -> Option<(u8, u8)> {
        Some(self.marked)
    }
    fn unscheduled(&self) -> bool {
        self.marked_unscheduled
    }
    fn notifications(&self) -> Notifications {
        Notifications { aeolus_sack_losses: self.sack_losses, aeolus_probe_losses: self.probe_losses, resends: self.resends, ..Notifications::default() }
    }
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        if self.testbed && !self.requested {
            // The testbed's grant request: header only, ahead of the first RTT, on its
            // priority (flowgen.c:1555-1566).
            self.requested = true;
            let first = psn.wire(0);
            let mut seg = Segment::data(first, 0, 0, now);
            seg.ext = Ext::Homa(HomaInfo { ackno: first, request: true, ..Default::default() });
            (seg.priority, seg.colour, seg.wire_bytes) = (self.unscheduled_priority, 0, HEADER_BYTES);
            return Some(seg);
        }
        if self.probe != Probe::Due {
            return None;
        }
        // Aeolus's probe: header only, right after the last unscheduled packet, on its
        // priority but never coloured.
        self.probe = Probe::Sent;
        let last = psn.wire(self.unscheduled - 1);
        let mut seg = Segment::data(last, 0, 0, now);
        seg.ext = Ext::Homa(HomaInfo { ackno: last, probe: true, ..Default::default() });
        (seg.priority, seg.colour, seg.wire_bytes) = (self.unscheduled_priority, 0, HEADER_BYTES);
        Some(seg)
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        let Some(info) = info(seg) else { return false };
        match seg.kind {
            SegKind::Grant => {
                (self.last_progress, self.heard) = (now, true);
                if info.granted as u64 > self.granted {
                    (self.granted, self.grant_priority) = (info.granted as u64, info.priority);
                }
                if info.resend && self.testbed {
                    // Up to the first RTT's worth of what is unacknowledged, ungranted (the
                    // testbed rolls its pointer back by min(RTT_BYTES, remaining)).
                    self.resends += 1;
                    let (una, nxt, cap) = (self.snd_una, self.snd_nxt, self.unscheduled.max(1));
                    let missing: Vec<u64> = (una..nxt).filter(|&i| !self.acked(i)).take(cap as usize).collect();
                    for &i in &missing {
                        self.timeout_resend.insert(i);
                        self.states.set(i, Unscheduled::Resent);
                    }
                    // The rest of the rollback's bytes go as new packets: a grant counts
                    // transmissions, which resends of packets that had arrived (their ACKs
                    // lost) used up, where the testbed's grant is an offset they do not move.
                    self.granted = self.granted.max(self.used + (cap - missing.len() as u64));
                }
            }
            SegKind::Ack => {
                (self.last_progress, self.heard) = (now, true);
                self.granted = self.granted.max(info.granted as u64);
                if info.request {
                    return false;
                }
                if let Some(cum) = at.index(seg.psn).filter(|&c| c > self.snd_una && c <= self.snd_nxt) {
                    self.snd_una = cum;
                    self.sacked = self.sacked.split_off(&cum);
                }
                let Some(i) = at.index(info.ackno).filter(|&i| i < self.snd_nxt) else { return false };
                if info.probe {
                    // Every unscheduled packet still unacknowledged is lost.
                    self.probe_losses += self.detect(self.unscheduled);
                    return false;
                }
                let first_ack = self.states.get(i) == Some(Unscheduled::Sent);
                if i >= self.snd_una {
                    self.sacked.insert(i);
                }
                if first_ack {
                    // A gap below an unscheduled packet SACKed (unscheduled packets leave in
                    // order).
                    self.sack_losses += self.detect(i);
                }
            }
            _ => {}
        }
        false
    }
    fn poll_timeout(&self) -> Option<Time> {
        // `testbed`: the receiver's timer recovers a message it has heard of.
        let rto = if self.testbed && self.heard { Time(self.rto.0.saturating_mul(TESTBED_CLOSE_RTOS)) } else { self.rto };
        (!self.is_done() && (self.used > 0 || self.snd_nxt > 0)).then(|| self.last_progress + rto)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        if self.poll_timeout().is_none_or(|t| now < t) {
            return false;
        }
        if self.testbed && !self.heard {
            // The grant request went unanswered: it goes again, and only it (flowgen.c:1529-1550);
            // the receiver, which then knows the message, recovers its data.
            self.requested = false;
            self.last_progress = now;
            return true;
        }
        if self.snd_una == self.snd_nxt && self.timeout_resend.is_empty() {
            // Everything sent arrived and no grant came for `rto` (lost, with the ACKs that
            // repeat it, or the message waits its turn): one packet goes ungranted, and the
            // ACK it draws repeats the receiver's grant (Homa's receiver would RESEND).
            self.granted = self.granted.max(self.used + 1);
            self.last_progress = now;
            return false;
        }
        for i in self.snd_una..self.snd_nxt {
            if !self.acked(i) {
                self.timeout_resend.insert(i);
                self.states.set(i, Unscheduled::Resent);
            }
        }
        self.last_progress = now;
        true
    }
    fn release(&mut self) {
        self.sacked = BTreeSet::new();
        self.states.release();
        self.timeout_resend = BTreeSet::new();
    }
}

// ---------------------------------------------------------------------------------------
// Receiver.

#[derive(Clone, Debug)]
pub struct HomaReceiver {
    npkts: u64,
    unscheduled: u64,
    rtt_pkts: u64,
    /// Packets received out of order.
    reorder: ReorderBuffer,
    /// Unscheduled packets missing when the probe arrived.
    wasted: u64,
    probed: bool,
}

impl HomaReceiver {
    pub fn new(p: &HomaParams, spec: &FlowSpec) -> Self {
        let npkts = spec.npkts();
        let rtt_pkts = p.rtt_packets(spec.mtu);
        HomaReceiver { npkts, unscheduled: rtt_pkts.min(npkts), rtt_pkts, reorder: ReorderBuffer::new(npkts), wasted: 0, probed: false }
    }

    fn has(&self, rx: &RxCtx, i: u64) -> bool {
        i < rx.expected() || self.reorder.holds(i)
    }

    /// Hands the host's scheduler the news and answers `seg` with an ACK naming it, which
    /// also carries the message's grant so far (a lost grant is made up by the next ACK).
    fn answer(&mut self, now: Time, seg: &Segment, probe: bool, request: bool, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let received = rx.expected() + self.reorder.held();
        let qp = nic.caller();
        let (grants, granted) = match nic.agent::<HomaScheduler>() {
            Some(s) => (s.update(now, qp, self.npkts, self.unscheduled, self.rtt_pkts, received, self.wasted).len(), s.granted(qp)),
            None => (0, 0),
        };
        let mut ack = Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg);
        ack.ext = Ext::Homa(HomaInfo { ackno: seg.psn, probe, request, granted: on_wire(granted), ..Default::default() });
        (ack.priority, ack.colour, ack.wire_bytes) = (PRIORITY_CONTROL as u8, 0, HEADER_BYTES);
        rx.send(ack);
        for k in 0..grants {
            let Some(s) = nic.agent::<HomaScheduler>() else { break };
            let g = s.grants()[k];
            let mut grant = Segment::control(SegKind::Grant, Psn::new(0), now);
            grant.ext = Ext::Homa(HomaInfo { granted: on_wire(g.granted), priority: g.priority, ..Default::default() });
            (grant.priority, grant.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
            nic.send(g.qp, grant);
        }
    }
}

impl ReceiveRecovery for HomaReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        if info(seg).is_some_and(|i| i.request) {
            // `testbed`: the message is known from here, whatever of its data arrive.
            return self.answer(now, seg, false, true, rx, nic);
        }
        if info(seg).is_some_and(|i| i.probe) {
            // Aeolus's probe: every unscheduled packet up to the one it names that has not
            // arrived was lost, and is granted on top of the message.
            if !self.probed {
                self.probed = true;
                let end = (index + 1).min(self.unscheduled);
                self.wasted = (0..end).filter(|&i| !self.has(rx, i)).count() as u64;
            }
            return self.answer(now, seg, true, false, rx, nic);
        }
        self.reorder.accept(now, index, seg, rx);
        self.answer(now, seg, false, false, rx, nic);
    }

    /// `testbed`: the host's scheduler found this message's grant stalled: a RESEND, which
    /// repeats the grant.
    fn handle_timeout(&mut self, now: Time, _rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        let qp = nic.caller();
        let Some((granted, priority)) = nic.agent::<HomaScheduler>().and_then(|s| s.take_resend(qp)) else { return };
        let mut resend = Segment::control(SegKind::Grant, Psn::new(0), now);
        resend.ext = Ext::Homa(HomaInfo { granted: on_wire(granted), priority, resend: true, ..Default::default() });
        (resend.priority, resend.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        nic.send(qp, resend);
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
    use crate::transport::{CcParams, RecoveryParams, Template};

    fn params(aeolus: bool) -> HomaParams {
        HomaParams { rtt_bytes: BdpOr::Value(Size(4_000)), aeolus, ..Default::default() }
    }

    fn nic(p: &HomaParams) -> NicAgent {
        let t = Template::of(RecoveryParams::Homa(p.clone()), CcParams::None(Default::default()));
        NicAgent::on_link(&t, Rate::gbps(10), 1_000)
    }

    fn spec(size: u64) -> FlowSpec {
        FlowSpec { size, mtu: 1_000, initial_psn: 100, key: 9, marking: Default::default() }
    }

    fn ns(v: u64) -> Time {
        Time::from_ns(v)
    }

    const SPACE: u32 = 100;

    fn reader() -> PsnReader {
        PsnReader { space: PsnSpace::new(SPACE), reference: 0 }
    }

    fn ack(cum: u64, of: u64, probe: bool) -> Segment {
        let s = PsnSpace::new(SPACE);
        let mut seg = Segment::control(SegKind::Ack, s.wire(cum), ns(1));
        seg.ext = Ext::Homa(HomaInfo { ackno: s.wire(of), probe, ..Default::default() });
        seg
    }

    fn grant(granted: u64, priority: u8) -> Segment {
        let mut seg = Segment::control(SegKind::Grant, Psn::new(0), ns(1));
        seg.ext = Ext::Homa(HomaInfo { granted: on_wire(granted), priority, ..Default::default() });
        seg
    }

    /// Everything the sender sends now: (index, retransmission, priority, colour).
    fn drain(tx: &mut HomaSender, nic: &mut NicAgent) -> Vec<(u64, bool, u8, u8)> {
        let mut out = Vec::new();
        while tx.has_data() {
            let Some((i, r)) = tx.next(ns(2), Rate::gbps(10), &mut nic.call(0)) else { break };
            let (p, c) = tx.mark(i, r).unwrap();
            out.push((i, r, p, c));
        }
        out
    }

    #[test]
    fn workload_cutoffs_split_the_unscheduled_bytes_evenly() {
        // Sizes 1..=10_000 B once each, two unscheduled levels. All unscheduled (rtt_bytes
        // 10_000): half of the 50_005_000 B is reached at 7_071 (7_071 x 7_072 / 2 =
        // 25_003_056 B; 7_070 x 7_071 / 2 = 24_995_985 B is short). With rtt_bytes 5_000 a message counts at most 5_000 B: 12_502_500 B
        // below 5_000, then 1_250 more messages of 5_000 reach half of 37_502_500 B at 6_250.
        let sizes: Vec<u64> = (1..=10_000).collect();
        let two = |rtt: u64| HomaParams { rtt_bytes: BdpOr::Value(Size(rtt)), unscheduled_priorities: 2, scheduled_priorities: 2, workload_cutoffs: true, ..Default::default() };
        assert_eq!(two(10_000).with_cutoffs_for(&sizes).cutoffs, vec![Size(7_071)]);
        assert_eq!(two(5_000).with_cutoffs_for(&sizes).cutoffs, vec![Size(6_250)]);
        assert!(!two(5_000).with_cutoffs_for(&sizes).workload_cutoffs, "resolved: checked as explicit cutoffs");
        // One size only: the cutoffs still increase (a byte apart), as `check` requires.
        let three = HomaParams { unscheduled_priorities: 3, ..two(10_000) };
        let p = three.with_cutoffs_for(&[100; 1_000]);
        assert_eq!(p.cutoffs, vec![Size(100), Size(101)]);
        assert!(p.check().is_ok());
    }

    #[test]
    fn cutoffs_choose_the_unscheduled_priority_and_rank_the_scheduled_one() {
        let p = HomaParams::default();
        let got: Vec<u8> = [1, 2_000, 2_001, 4_000, 6_000, 8_000, 10_000, 10_001, 50_000].iter().map(|&s| p.unscheduled_priority(s)).collect();
        assert_eq!(got, vec![1, 1, 2, 2, 3, 4, 5, 6, 6]);
        assert_eq!((p.scheduled_priority(0), p.scheduled_priority(1), p.scheduled_priority(7)), (7, 8, 8));
        // §4.1's single queue: every data packet at the highest data priority.
        let one = HomaParams { single_queue: true, ..p.clone() };
        let all: Vec<u8> = [1, 2_001, 50_000].iter().map(|&s| one.unscheduled_priority(s)).chain([0, 1, 7].map(|r| one.scheduled_priority(r))).collect();
        assert_eq!(all, vec![1; 6]);
        assert_eq!((p.rtt_packets(1_460), p.rtt_packets(1_000), p.rtt_packets(30_000)), (14, 20, 1));
    }

    #[test]
    fn the_scheduler_grants_by_srpt_to_at_most_overcommitment_messages() {
        // rtt 4 packets, 2 messages granted at once.
        let mut s = HomaScheduler::new(&params(false));
        let g = |qp, granted, priority| GrantOut { qp, granted, priority };
        // qp 1: 20 packets, its first arrived: kept 4 ahead of it, at the first scheduled level.
        assert_eq!(s.update(Time::ZERO, 1, 20, 4, 4, 1, 0), vec![g(1, 5, 7)]);
        // qp 2, 10 packets: fewer left, so ranked first; qp 1 keeps its grant (nothing new).
        assert_eq!(s.update(Time::ZERO, 2, 10, 4, 4, 1, 0), vec![g(2, 5, 7)]);
        // qp 3, 6 packets, now the shortest: qp 1 falls out of the two granted.
        assert_eq!(s.update(Time::ZERO, 3, 6, 4, 4, 1, 0), vec![g(3, 5, 7)]);
        assert_eq!(s.update(Time::ZERO, 1, 20, 4, 4, 2, 0), vec![], "qp 1 is third: no grant");
        // qp 3 at 2 of 6: granted to its end (6).
        assert_eq!(s.update(Time::ZERO, 3, 6, 4, 4, 2, 0), vec![g(3, 6, 7)]);
        // Fully granted, qp 3 leaves the race: qp 2 is first, qp 1 second, at the second
        // scheduled level (its arrival is granted now).
        assert_eq!(s.update(Time::ZERO, 2, 10, 4, 4, 2, 0), vec![g(2, 6, 7), g(1, 6, 8)]);
        // Known lost transmissions are granted on top of the message.
        assert_eq!(s.update(Time::ZERO, 3, 6, 4, 4, 3, 2), vec![g(3, 8, 7)]);
        // A complete message leaves.
        assert_eq!(s.update(Time::ZERO, 3, 6, 4, 4, 6, 2), vec![]);
        assert_eq!(s.msgs.len(), 2);
        assert_eq!(s.grants_sent, 7);
    }

    #[test]
    fn aeolus_retransmits_lost_unscheduled_then_new_scheduled_then_unacknowledged_unscheduled() {
        let p = params(true);
        let mut nic = nic(&p);
        let mut tx = HomaSender::new(&p, &spec(8_000));
        // The first 4 packets unscheduled, at the 8 KB message's priority (4), coloured red.
        assert_eq!(drain(&mut tx, &mut nic), (0..4).map(|i| (i, false, 4, 2)).collect::<Vec<_>>());
        // Packet 1 SACKed: 0, sent before it, is lost.
        tx.on_feedback(ns(3), &ack(0, 1, false), reader(), &mut nic.call(0));
        assert_eq!(tx.losses_detected(), 1);
        // Each grant slot: the lost one first, then new (scheduled) data, uncoloured, at the
        // grant's priority.
        tx.on_feedback(ns(3), &grant(6, 7), reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(0, true, 7, 0), (4, false, 7, 0)]);
        tx.on_feedback(ns(3), &grant(9, 8), reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(5, false, 8, 0), (6, false, 8, 0), (7, false, 8, 0)]);
        // Nothing new left: unscheduled packets sent but unacknowledged, once each.
        tx.on_feedback(ns(3), &grant(12, 8), reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(2, true, 8, 0), (3, true, 8, 0)]);
        assert!(!tx.has_data());
    }

    #[test]
    fn the_probe_follows_the_last_unscheduled_packet_and_its_ack_finds_a_lost_tail() {
        let p = params(true);
        let mut nic = nic(&p);
        let mut tx = HomaSender::new(&p, &spec(4_000));
        let space = PsnSpace::new(SPACE);
        assert_eq!(tx.poll_connection(ns(1), space), None, "no probe before the last unscheduled packet");
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        let probe = tx.poll_connection(ns(2), space).unwrap();
        assert_eq!((probe.kind, probe.psn, probe.payload, probe.wire_bytes, probe.colour, probe.priority), (SegKind::Data, space.wire(3), 0, 64, 0, 2));
        assert!(info(&probe).unwrap().probe);
        assert_eq!(tx.poll_connection(ns(2), space), None, "one probe");
        // 0 and 1 arrive; 2 and 3 (the tail) were dropped: only the probe's ACK tells.
        tx.on_feedback(ns(3), &ack(1, 0, false), reader(), &mut nic.call(0));
        tx.on_feedback(ns(3), &ack(2, 1, false), reader(), &mut nic.call(0));
        assert_eq!(tx.losses_detected(), 0);
        tx.on_feedback(ns(4), &ack(2, 3, true), reader(), &mut nic.call(0));
        assert_eq!(tx.losses_detected(), 2);
        tx.on_feedback(ns(5), &grant(6, 7), reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(2, true, 7, 0), (3, true, 7, 0)]);
        // Without Aeolus: no probe, no colour.
        let p = params(false);
        let mut tx = HomaSender::new(&p, &spec(4_000));
        assert_eq!(drain(&mut tx, &mut nic), (0..4).map(|i| (i, false, 2, 0)).collect::<Vec<_>>());
        assert_eq!(tx.poll_connection(ns(2), space), None);
    }

    #[test]
    fn the_receiver_acks_each_packet_and_grants_the_probes_losses_on_top() {
        use crate::transport::common::poll::{Transmit, Want};
        use crate::transport::{Receiver, RxRecovery};
        let p = params(true);
        let mut nic = nic(&p);
        let s = spec(8_000);
        let space = PsnSpace::new(SPACE);
        let mut rx = Receiver::new(s, RxRecovery::Homa(HomaReceiver::new(&p, &s)), None);
        let feed = |rx: &mut Receiver, nic: &mut NicAgent, seg: Segment| {
            rx.handle_packet(ns(10), &seg, &mut nic.call(0));
            let mut acks = Vec::new();
            while let Transmit::Send(a) = rx.poll_transmit(ns(10), &mut nic.call(0), Want::Responses) {
                let i = info(&a).unwrap();
                acks.push((space.unwrap(a.psn, 0).unwrap(), space.unwrap(i.ackno, 0).unwrap(), i.probe, a.wire_bytes, a.priority));
            }
            let mut grants = Vec::new();
            while let Some((qp, g)) = nic.next_sent() {
                grants.push((qp, info(&g).unwrap().granted, info(&g).unwrap().priority));
            }
            (acks, grants)
        };
        let data = |i: u64| Segment::data(space.wire(i), 1_000, crate::transport::common::segment::payload_tag(9, i), ns(5));
        // 4 unscheduled; 0 and 1 arrive, each ACKed and each granting one more packet.
        assert_eq!(feed(&mut rx, &mut nic, data(0)), (vec![(1, 0, false, 64, 0)], vec![(0, 5, 7)]));
        assert_eq!(feed(&mut rx, &mut nic, data(1)), (vec![(2, 1, false, 64, 0)], vec![(0, 6, 7)]));
        // The probe names 3: 2 and 3 are lost, granted on top (2 + 4 + 2 lost = 8).
        let mut probe = Segment::data(space.wire(3), 0, 0, ns(5));
        probe.ext = Ext::Homa(HomaInfo { ackno: space.wire(3), probe: true, ..Default::default() });
        assert_eq!(feed(&mut rx, &mut nic, probe), (vec![(2, 3, true, 64, 0)], vec![(0, 8, 7)]));
        assert_eq!(rx.ctx.delivered_bytes, 2_000, "the probe delivers nothing");
        // Out of order, then the hole: delivered in order, once.
        assert_eq!(feed(&mut rx, &mut nic, data(3)).0, vec![(2, 3, false, 64, 0)]);
        feed(&mut rx, &mut nic, data(2));
        feed(&mut rx, &mut nic, data(2));
        assert_eq!(rx.ctx.delivered_bytes, 4_000);
        assert_eq!(rx.ctx.bad_deliveries, 0);
        assert_eq!(rx.reorder_stats(), (1_000, 1_000, 0));
    }

    #[test]
    fn without_aeolus_the_timeout_resends_what_is_unacknowledged_ungranted() {
        let p = params(false);
        let mut nic = nic(&p);
        let mut tx = HomaSender::new(&p, &spec(4_000));
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        // 1 and 3 SACKed; 0 and 2 lost. No loss detection without Aeolus.
        tx.on_feedback(ns(3), &ack(0, 1, false), reader(), &mut nic.call(0));
        tx.on_feedback(ns(4), &ack(0, 3, false), reader(), &mut nic.call(0));
        assert!(drain(&mut tx, &mut nic).is_empty());
        let due = tx.poll_timeout().unwrap();
        assert_eq!(due, ns(4) + Time::from_ms(10));
        assert!(!tx.handle_timeout(due - Time(1), &mut nic.call(0)));
        assert!(tx.handle_timeout(due, &mut nic.call(0)));
        assert_eq!(drain(&mut tx, &mut nic), vec![(0, true, 8, 0), (2, true, 8, 0)]);
        tx.on_feedback(ns(5), &ack(4, 2, false), reader(), &mut nic.call(0));
        assert!(tx.is_done());
    }

    #[test]
    fn a_sender_whose_grant_was_lost_sends_one_packet_after_the_timeout_and_its_ack_repeats_the_grant() {
        let p = params(false);
        let mut nic = nic(&p);
        let mut tx = HomaSender::new(&p, &spec(8_000));
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        // Everything sent arrived; the grants for 4..8 were lost.
        tx.on_feedback(ns(3), &ack(4, 3, false), reader(), &mut nic.call(0));
        assert!(drain(&mut tx, &mut nic).is_empty());
        let due = tx.poll_timeout().unwrap();
        assert_eq!(due, ns(3) + Time::from_ms(10));
        assert!(!tx.handle_timeout(due, &mut nic.call(0)), "nothing was lost: not a timeout");
        assert_eq!(drain(&mut tx, &mut nic), vec![(4, false, 8, 0)]);
        let mut repeat = ack(5, 4, false);
        repeat.ext = Ext::Homa(HomaInfo { ackno: PsnSpace::new(SPACE).wire(4), granted: 8, ..Default::default() });
        tx.on_feedback(ns(4), &repeat, reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(5, false, 8, 0), (6, false, 8, 0), (7, false, 8, 0)]);
    }

    /// The testbed's receiver: one grant slot (overcommitment 1) held by the message with
    /// the fewest packets left even when it is fully granted and missing a packet; no grant
    /// while nothing of a message has arrived; a RESEND `rto` after the slot's grant last
    /// moved, for the watched message only.
    #[test]
    fn the_testbed_receiver_serialises_its_timeouts_through_one_grant_slot() {
        let p = HomaParams { testbed: true, overcommitment: 1, scheduled_priorities: 1, unscheduled_priorities: 1, cutoffs: vec![], ..params(false) };
        let rto = p.rto.0;
        let mut s = HomaScheduler::new(&p);
        let g = |qp, granted| GrantOut { qp, granted, priority: 2 };
        // Message 1 (6 packets, 4 unscheduled) heard of by its request: nothing arrived, no grant.
        assert_eq!(s.update(ns(0), 1, 6, 4, 4, 0, 0), vec![]);
        // Message 2 (5 packets): 3 arrived, the grant moves to 3 + 4 (capped at 5).
        assert_eq!(s.update(ns(1), 2, 5, 4, 4, 3, 0), vec![g(2, 5)]);
        // Message 2 still holds the slot though fully granted: message 1's arrivals grant nothing.
        assert_eq!(s.update(ns(2), 1, 6, 4, 4, 2, 0), vec![]);
        assert_eq!(s.poll_timeout(), Some(ns(1) + rto), "only the watched message's timer");
        let mut wake = Vec::new();
        s.handle_timeout(ns(1) + rto - Time(1), &mut wake);
        assert!(wake.is_empty());
        s.handle_timeout(ns(1) + rto, &mut wake);
        assert_eq!(wake, vec![2]);
        assert_eq!(s.take_resend(1), None);
        assert_eq!(s.take_resend(2), Some((5, 2)));
        assert_eq!(s.take_resend(2), None, "taken once");
        assert_eq!(s.poll_timeout(), Some(ns(1) + rto + rto), "the RESEND restarts the timer");
        // Message 2 completes: the slot passes to message 1, whose grant follows its arrivals.
        assert_eq!(s.update(ns(3) + rto, 2, 5, 4, 4, 5, 0), vec![g(1, 6)]);
        assert_eq!(s.poll_timeout(), Some(ns(3) + rto + rto));
        assert_eq!(s.resends_sent, 1);
    }

    /// The testbed's sender: the grant request goes first; a RESEND sends up to the first
    /// RTT's worth of what is unacknowledged, ungranted; once answered, its own timer is the
    /// close fallback of 100 `rto`.
    #[test]
    fn the_testbed_sender_requests_first_and_answers_a_resend_with_what_is_missing() {
        let p = HomaParams { testbed: true, ..params(false) };
        let mut nic = nic(&p);
        let mut tx = HomaSender::new(&p, &spec(8_000));
        let space = PsnSpace::new(SPACE);
        let request = tx.poll_connection(ns(1), space).expect("the request");
        assert!(info(&request).is_some_and(|i| i.request) && request.payload == 0);
        assert_eq!(tx.poll_connection(ns(1), space), None, "one request");
        assert_eq!(drain(&mut tx, &mut nic).len(), 4);
        assert_eq!(tx.poll_timeout(), Some(ns(2) + Time::from_ms(10)), "unanswered: the request's timer");
        // Unanswered, the request goes again, and only it.
        assert!(tx.handle_timeout(ns(2) + Time::from_ms(10), &mut nic.call(0)));
        assert!(tx.poll_connection(ns(3), space).is_some_and(|r| info(&r).is_some_and(|i| i.request)));
        assert!(drain(&mut tx, &mut nic).is_empty());
        // Packets 0 and 2 SACKed, 1 and 3 lost; then a grant to 6 and the RESEND.
        tx.on_feedback(ns(3), &ack(1, 0, false), reader(), &mut nic.call(0));
        tx.on_feedback(ns(3), &ack(1, 2, false), reader(), &mut nic.call(0));
        assert_eq!(tx.poll_timeout(), Some(ns(3) + Time::from_ms(1_000)), "answered: the close fallback");
        tx.on_feedback(ns(4), &grant(6, 8), reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(4, false, 8, 0), (5, false, 8, 0)]);
        let mut resend = grant(6, 8);
        resend.ext = Ext::Homa(HomaInfo { granted: 6, priority: 8, resend: true, ..Default::default() });
        tx.on_feedback(ns(5), &resend, reader(), &mut nic.call(0));
        assert_eq!(drain(&mut tx, &mut nic), vec![(1, true, 8, 0), (3, true, 8, 0), (4, true, 8, 0), (5, true, 8, 0)]);
        assert_eq!(tx.notifications().resends, 1);
    }

    #[test]
    fn bad_settings_are_refused_naming_the_field() {
        let bad = |f: fn(&mut HomaParams)| {
            let mut p = HomaParams::default();
            f(&mut p);
            p.check().unwrap_err().field
        };
        assert!(HomaParams::default().check().is_ok());
        assert_eq!(bad(|p| p.rtt_bytes = BdpOr::Value(Size(0))), "rtt_bytes");
        // Workload cutoffs are derived before the network exists: "bdp" is refused with them.
        let run = RunFacts { mtu: 1_460, shaped_queue: None, has_size_table: true };
        let cutoffs = HomaParams { workload_cutoffs: true, ..Default::default() };
        assert!(cutoffs.check_run(&run).is_ok());
        let e = HomaParams { rtt_bytes: BdpOr::Bdp, ..cutoffs }.check_run(&run).unwrap_err();
        assert!(e.to_string().contains("workload_cutoffs") && e.to_string().contains("\"bdp\""), "{e}");
        assert_eq!(bad(|p| p.scheduled_priorities = 3), "scheduled_priorities");
        assert_eq!(bad(|p| p.cutoffs.pop().map(|_| ()).unwrap()), "cutoffs");
        assert_eq!(bad(|p| p.cutoffs.swap(0, 1)), "cutoffs");
        assert_eq!(bad(|p| p.overcommitment = 0), "overcommitment");
        assert_eq!(bad(|p| p.rto = Dur(Time::ZERO)), "rto");
        assert_eq!(bad(|p| p.aeolus_colour = 0), "aeolus_colour");
    }
}
