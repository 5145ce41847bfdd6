//! STRIDE's reliability and connection management (Fu et al., "STRIDE: Single-Trip-time based
//! Reliable Data Transport Protocol for the Reconfigurable Cloud", §IV.A and "STRIDE
//! Reliability"); its rate control is [`crate::transport::loss::stride::cc`].
//!
//! - **Connection.** A three-way handshake opens it (SYN, SYN+ACK, ACK) and a FIN closes it
//!   once every byte is acknowledged (FIN, FIN+ACK, ACK), "similar to the ones of TCP". Data
//!   waits for the SYN+ACK, and the sender's flow completes when the FIN+ACK arrives, so both
//!   exchanges are part of the flow completion time. A lost SYN or FIN (or its answer) is sent
//!   again after the retransmission timeout; the receiver answers every copy. The handshake's
//!   third packet and the final ACK are not retransmitted (as in TCP): the receiver also
//!   takes the first data packet as the end of the handshake.
//! - **Acknowledgements.** The receiver acknowledges cumulatively once per data segment of
//!   `segment` bytes (64 KB, the paper's §VI.A choice: "STRIDE ACKs every 64 kb interval if
//!   there is no packet dropped"), on the last packet, and re-acknowledges duplicates.
//! - **Loss.** A packet beyond the expected one is answered by one NACK naming the missing
//!   packet; the sender resends it and everything after it (go-back-N, [`crate::transport::loss::gbn`], whose
//!   receiver rate-limits NACKs per missing packet). A timer resends what is not acknowledged
//!   when the sender has heard nothing for `rto` and sent nothing for `rto` plus its pacing
//!   gap. Run from the last ACK alone, as go-back-N's is, it would fire while a slow sender is
//!   still sending the segment whose ACK it waits for (with a 1 ms `rto` and 64 KiB segments,
//!   at every rate below 524 Mb/s) and go back N with nothing lost; stretched by a segment's
//!   send time instead, a lost tail would cost 53 ms at the 10 Mb/s rate floor. While packets
//!   still flow a loss is the NACK's to report.
//! - **STT.** Every data packet carries its hardware TX timestamp (the sender's clock) and every
//!   ACK and NACK the single-trip time the receiver measured for the packet that triggered it,
//!   `rx_ts - tx_ts` on the two hosts' clocks (offsets and drift included). In the model the
//!   response carries the receiver's timestamp and echoes the sender's ([`Segment::reply`]),
//!   and the sender's sample is their difference: the same number.
//! - **Sender memory.** Outgoing data waits in DRAM in one 64 KB slot per data segment (the
//!   paper: "STRIDE allocates 64KB per packet in DDR SDRAM at the sender", packets at the
//!   segment granularity the ACKs use), released when the segment is acknowledged; packet
//!   states are counters, not per-packet state. [`StrideDram`] counts the slots a NIC holds.
//!
//! Wire format (Fig. 2 is not legible in the seed; this is the layout chosen). STRIDE's header
//! follows UDP, 20 bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | sequence number (packet index of data; of the next packet on a FIN) |
//! | 4..8 | acknowledgement number (cumulative; on a NACK, the missing packet) |
//! | 8 | flags: SYN 0x1, ACK 0x2, NACK 0x4, FIN 0x8 (4 bits reserved) |
//! | 9..12 | reserved |
//! | 12..20 | STT field: TX timestamp on data, measured STT on ACK/NACK (ns, 64 bits) |
//!
//! So every packet carries Ethernet 14 + IPv4 20 + UDP 8 + STRIDE 20 = 62 bytes besides its
//! payload ([`HEADER_BYTES`]); control packets are 62 bytes (above the 60-byte minimum frame).

pub mod cc;

use crate::transport::common::agent::HostAgent;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::psn::PsnSpace;
use crate::sim::check::{self, Checked};
use crate::transport::loss::gbn::{GbnParams, GbnReceiver, GbnSender, NakPolicy};
use crate::transport::common::psn::PsnReader;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{SegKind, Segment};
use crate::transport::common::agent::NicCall;
use crate::sim::units::{Dur, Rate, Size, Time};
use serde::{Deserialize, Serialize};

/// Bytes on the wire beyond the payload: Ethernet 14 + IPv4 20 + UDP 8 + STRIDE 20.
pub const HEADER_BYTES: u32 = 62;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StrideParams {
    /// The receiver acknowledges once per this many payload bytes (the paper's 64 KB data
    /// segment, §VI.A and Fig. 5); also the size of a DRAM slot at the sender.
    pub segment: Size,
    /// Retransmission timer for data, SYN and FIN; the data timer runs from the last ACK or
    /// NACK and from the pacing gap after the last packet sent, whichever ends later. The
    /// paper gives no value; 1 ms is the minimum RTO of the TCP baseline it is compared with
    /// (`[recovery.tcp] min_rto`), so the two recover from a lost tail on one footing.
    pub rto: Dur,
    /// NACK generation interval per missing packet (go-back-N's per-PSN rule: a NACK for a new
    /// missing packet goes at once, the same one again only after this). The paper gives none;
    /// 500 us is retx's go-back-N default (the HPCC ns-3 model's).
    pub nack_interval: Dur,
}

impl Default for StrideParams {
    fn default() -> Self {
        StrideParams { segment: Size(64 * 1024), rto: Dur(Time::from_ms(1)), nack_interval: Dur(Time::from_us(500)) }
    }
}

impl Scheme for StrideParams {
    const NAME: &'static str = "stride";
    /// The paper measured its cards' clocks under 1 ppm apart: two hosts at most 1 ppm (1 ns
    /// per ms) apart, each within +-0.5 ppm (`[nic] clock_drift_spread_ppm` overrides it).
    const CLOCK_SPREAD_PPM: f64 = 0.5;
    type Sender = StrideSender;
    type Receiver = StrideReceiver;
    /// The DRAM slots its senders hold.
    type Agent = StrideDram;

    /// Fields by their names within `[recovery.stride]`.
    fn check(&self) -> Checked {
        let seg = self.segment.0;
        if !(64..=1 << 30).contains(&seg) {
            return Err(check::FieldError::new("segment", format!("{seg} B is out of range (allowed 64B..=1GiB)")));
        }
        check::timer("rto", self.rto.0)?;
        check::positive_time("nack_interval", self.nack_interval.0)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (StrideSender, StrideReceiver) {
        (StrideSender::new(self, f.npkts(), f.spec.mtu), StrideReceiver::new(self, f.spec.mtu))
    }

    fn agent(&self, _link: Rate, _mtu: u32) -> Option<StrideDram> {
        Some(StrideDram::default())
    }

    fn data_header(&self) -> u32 {
        HEADER_BYTES
    }

    fn response_bytes(&self, int_header: u32) -> u32 {
        HEADER_BYTES + int_header
    }

    /// The run's figures over every NIC: the most slots one NIC held at once (0 without
    /// STRIDE, then nothing is reported).
    fn report<'a>(drams: &mut dyn Iterator<Item = &'a StrideDram>) -> Vec<(&'static str, f64)> {
        let peak = drams.map(|d| d.peak_slots).max().unwrap_or(0);
        if peak == 0 {
            return Vec::new();
        }
        vec![("stride_dram_peak_slots", peak as f64)]
    }
}

impl StrideParams {
    fn gbn(&self) -> GbnParams {
        GbnParams { nak_interval: self.nack_interval, nak_policy: NakPolicy::PerPsn, rto: self.rto }
    }

    /// Data packets per segment for packets of `mtu` payload bytes (at least 1).
    pub fn segment_packets(&self, mtu: u32) -> u32 {
        (self.segment.0.div_ceil(mtu.max(1) as u64)).clamp(1, u32::MAX as u64) as u32
    }
}

/// Where the sender's side of the connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxPhase {
    /// SYN sent (or due), waiting for SYN+ACK.
    Connecting,
    Established,
    /// Every byte acknowledged; FIN sent (or due), waiting for FIN+ACK.
    Closing,
    Closed,
}

/// DRAM slots the senders of one NIC hold: one per data segment with a packet sent and not
/// yet acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrideDram {
    pub slots: u64,
    pub peak_slots: u64,
}

impl StrideDram {
    fn change(&mut self, from: u64, to: u64) {
        self.slots = (self.slots + to).saturating_sub(from);
        self.peak_slots = self.peak_slots.max(self.slots);
    }
}

/// The NIC's DRAM slots, which every STRIDE endpoint's NIC has.
fn dram<'a>(nic: &'a mut NicCall<'_>) -> &'a mut StrideDram {
    nic.agent::<StrideDram>().expect("a STRIDE endpoint on a NIC without STRIDE's DRAM")
}

/// The slots are NIC-wide state with no pacing or timer of their own.
impl HostAgent for StrideDram {}

/// STRIDE's packet-state counters (the paper keeps counters of packets per state instead of
/// per-packet state) and its connection exchanges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrideTxStats {
    pub syns: u64,
    pub fins: u64,
    /// Most DRAM slots this connection held at once.
    pub peak_slots: u64,
}

/// The sending side: connection state around a go-back-N sender.
#[derive(Clone, Debug)]
pub struct StrideSender {
    gbn: GbnSender,
    phase: TxPhase,
    /// A connection packet to send at once (SYN, FIN, or the ACK answering SYN+ACK / FIN+ACK).
    control: Option<SegKind>,
    /// When the SYN or FIN is sent again if unanswered.
    ctl_deadline: Option<Time>,
    rto: Time,
    npkts: u64,
    seg_pkts: u64,
    /// Bytes a full packet puts on the wire.
    pkt_wire: u64,
    /// When the pacer lets the packet after the last one sent go: the data timer runs `rto`
    /// from there at the earliest.
    paced_until: Time,
    /// DRAM slots held now.
    slots: u64,
    pub stats: StrideTxStats,
}

impl StrideSender {
    pub fn new(p: &StrideParams, npkts: u64, mtu: u32) -> Self {
        StrideSender {
            gbn: GbnSender::new(&p.gbn(), npkts),
            phase: TxPhase::Connecting,
            control: Some(SegKind::Syn),
            ctl_deadline: None,
            rto: p.rto.0,
            npkts,
            seg_pkts: p.segment_packets(mtu) as u64,
            pkt_wire: mtu as u64 + HEADER_BYTES as u64,
            paced_until: Time::ZERO,
            slots: 0,
            stats: StrideTxStats::default(),
        }
    }

    pub fn phase(&self) -> TxPhase {
        self.phase
    }

    /// The connection packet due now, if any, stamped with `now`; `wire` turns a packet index
    /// into its sequence number. A SYN or FIN arms the timer that sends it again.
    pub fn poll_control(&mut self, now: Time, wire: impl Fn(u64) -> crate::transport::common::psn::Psn) -> Option<Segment> {
        let kind = self.control.take()?;
        let psn = match kind {
            SegKind::Syn => wire(0),
            _ => wire(self.npkts),
        };
        match kind {
            SegKind::Syn => self.stats.syns += 1,
            SegKind::Fin => self.stats.fins += 1,
            _ => {}
        }
        if matches!(kind, SegKind::Syn | SegKind::Fin) {
            self.ctl_deadline = Some(now + self.rto);
        }
        Some(Segment::control(kind, psn, now))
    }

    /// Takes the next data packet, sent now at pacing rate `rate`: (index, is_retransmission);
    /// none before the handshake.
    pub fn next(&mut self, now: Time, rate: Rate, dram: &mut StrideDram) -> Option<(u64, bool)> {
        if self.phase != TxPhase::Established {
            return None;
        }
        let next = self.gbn.next(now);
        if next.is_some() {
            self.paced_until = now + rate.serialization(self.pkt_wire);
        }
        self.update_slots(dram);
        next
    }

    /// DRAM slots held now: every segment from the one holding snd_una up to the one holding
    /// the highest packet sent.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    fn update_slots(&mut self, dram: &mut StrideDram) {
        let held = self.gbn.high().div_ceil(self.seg_pkts).saturating_sub(self.gbn.snd_una() / self.seg_pkts);
        dram.change(self.slots, held);
        self.slots = held;
        self.stats.peak_slots = self.stats.peak_slots.max(held);
    }

    /// Returns true if the data timer fired (a SYN or FIN sent again is not a data timeout).
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        match self.phase {
            TxPhase::Established => now >= self.paced_until + self.rto && self.gbn.handle_timeout(now),
            TxPhase::Connecting | TxPhase::Closing => {
                if self.ctl_deadline.is_some_and(|t| now >= t) {
                    self.ctl_deadline = None;
                    self.control = Some(if self.phase == TxPhase::Connecting { SegKind::Syn } else { SegKind::Fin });
                }
                false
            }
            TxPhase::Closed => false,
        }
    }

}

/// Where the receiver's side of the connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxPhase {
    Listen,
    /// SYN answered, waiting for the handshake's ACK (or the first data packet).
    SynReceived,
    Established,
    /// FIN answered, waiting for the final ACK.
    LastAck,
    Closed,
}

/// The receiving side: connection state around a go-back-N receiver that acknowledges once
/// per segment.
#[derive(Clone, Debug)]
pub struct StrideReceiver {
    gbn: GbnReceiver,
    phase: RxPhase,
}

impl StrideReceiver {
    pub fn new(p: &StrideParams, mtu: u32) -> Self {
        StrideReceiver { gbn: GbnReceiver::new(&p.gbn(), p.segment_packets(mtu)), phase: RxPhase::Listen }
    }

    pub fn phase(&self) -> RxPhase {
        self.phase
    }

    /// A connection packet or the handshake's / teardown's ACK.
    pub fn on_control(&mut self, now: Time, seg: &Segment, rx: &mut RxCtx) {
        match seg.kind {
            SegKind::Syn => {
                rx.send(Segment::reply(SegKind::SynAck, seg.psn, now, seg));
                if self.phase == RxPhase::Listen {
                    self.phase = RxPhase::SynReceived;
                }
            }
            SegKind::Fin => {
                rx.send(Segment::reply(SegKind::FinAck, seg.psn, now, seg));
                if self.phase != RxPhase::Closed {
                    self.phase = RxPhase::LastAck;
                }
            }
            SegKind::Ack => match self.phase {
                RxPhase::SynReceived => self.phase = RxPhase::Established,
                RxPhase::LastAck => self.phase = RxPhase::Closed,
                _ => {}
            },
            _ => {}
        }
    }

    /// A data packet whose absolute index is `index`. Before any SYN there is no connection to
    /// deliver to: the packet is dropped.
    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx) {
        match self.phase {
            RxPhase::Listen => return,
            RxPhase::SynReceived => self.phase = RxPhase::Established,
            _ => {}
        }
        self.gbn.on_data(now, index, seg, rx);
    }
}

impl SendRecovery for StrideSender {
    fn snd_una(&self) -> u64 {
        self.gbn.snd_una()
    }
    fn snd_nxt(&self) -> u64 {
        self.gbn.snd_nxt()
    }
    fn has_data(&self) -> bool {
        self.control.is_some() || (self.phase == TxPhase::Established && self.gbn.has_data())
    }
    /// The connection is closed: every byte acknowledged and the FIN answered.
    fn is_done(&self) -> bool {
        self.phase == TxPhase::Closed
    }
    /// A packet from the receiver; returns whether it reported a loss (a NACK).
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
        match (seg.kind, self.phase) {
            (SegKind::SynAck, TxPhase::Connecting) => {
                self.phase = TxPhase::Established;
                self.control = Some(SegKind::Ack);
                self.ctl_deadline = None;
                false
            }
            (SegKind::FinAck, TxPhase::Closing) => {
                self.phase = TxPhase::Closed;
                self.control = Some(SegKind::Ack);
                self.ctl_deadline = None;
                false
            }
            (SegKind::Ack | SegKind::Nak, TxPhase::Established) => {
                let loss = self.gbn.on_feedback(now, seg, at, nic);
                self.update_slots(dram(nic));
                if self.gbn.is_done() {
                    self.phase = TxPhase::Closing;
                    self.control = Some(SegKind::Fin);
                }
                loss
            }
            _ => false, // a late or repeated answer
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        match self.phase {
            TxPhase::Established => self.gbn.poll_timeout().map(|t| t.max(self.paced_until + self.rto)),
            TxPhase::Connecting | TxPhase::Closing => self.ctl_deadline,
            TxPhase::Closed => None,
        }
    }
    fn next(&mut self, now: Time, rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        StrideSender::next(self, now, rate, dram(nic))
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        StrideSender::handle_timeout(self, now)
    }
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        self.poll_control(now, |i| psn.wire(i))
    }
}

impl ReceiveRecovery for StrideReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        StrideReceiver::on_data(self, now, index, seg, rx);
    }
    fn on_connection(&mut self, now: Time, seg: &Segment, rx: &mut RxCtx) {
        self.on_control(now, seg, rx);
    }
}
