//! Go-Back-ONE (Wang, "Research on transmission reliability of RoCEv2 protocol in WAN"):
//! selective retransmission for RoCEv2 built on the HPCC ns-3 go-back-N.
//!
//! Receiver: caches out-of-order packets in a bitmap of `max_ooo_psn` entries instead of
//! discarding them, and answers each with a RACK (IP protocol 0xFD, ACK being 0xFC) carrying
//! the PSN just received and the PSN expected. Sender (its Algorithm 1): on a RACK whose PSN is
//! above `m_crtRACK`, the PSNs between the previous and the new RACKed PSN are missing and go
//! into `retransQueue`, which is sent before new data (Algorithm 2). ACKs acknowledge
//! cumulatively, rounded down to a chunk when `back_to_zero` is set (HPCC's
//! `L2_BACK_TO_ZERO`: `goback_seq = seq / m_chunk * m_chunk`). A timeout rewinds to snd_una.

use crate::transport::common::agent::NoAgent;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::recovery::SendRecovery;
use crate::sim::check::{self, Checked};
use crate::transport::loss::gbn::{GbnParams, GbnSender};
use crate::transport::loss::irn::BitmapReceiver;
use crate::transport::common::psn::PsnReader;
use crate::transport::common::agent::NicCall;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::sim::units::Dur;
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GboneParams {
    /// Receiver bitmap entries (`max_ooo_psn`); 0 means one BDP of the topology's longest
    /// path. The paper sets an upper limit but gives no value.
    pub max_ooo_psn: u32,
    /// Retransmission timeout (the paper's `ReScheduleTimeoutTimer`; value not given: the
    /// go-back-N default).
    pub rto: Dur,
    /// Round cumulative ACKs down to a chunk (HPCC `L2_BACK_TO_ZERO`, default off there).
    pub back_to_zero: bool,
    /// Chunk in packets (HPCC `L2_CHUNK_SIZE` 4000 B at 1000 B payload = 4 packets).
    pub chunk_packets: u32,
}

impl Default for GboneParams {
    fn default() -> Self {
        GboneParams { max_ooo_psn: 0, rto: Dur(Time::from_ns(4_194_304)), back_to_zero: false, chunk_packets: 4 }
    }
}

impl Scheme for GboneParams {
    const NAME: &'static str = "gbone";
    const TAKES_WINDOW_CC: bool = false;
    type Sender = GboneSender;
    type Receiver = BitmapReceiver;
    type Agent = NoAgent;

    /// Fields by their names within `[recovery.gbone]`.
    fn check(&self) -> Checked {
        check::range_u32("chunk_packets", self.chunk_packets, 1, 1 << 20)?;
        check::range_u32("max_ooo_psn", self.max_ooo_psn, 0, 1 << 24)?;
        check::timer("rto", self.rto.0)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (GboneSender, BitmapReceiver) {
        (GboneSender::new(self, f.npkts()), BitmapReceiver::gbone(f.or_bdp(self.max_ooo_psn), f.ack_interval, f.npkts()))
    }
}

/// Go-Back-ONE's receiver: the bitmap receiver with RACKs as notifications.
pub type GboneReceiver = BitmapReceiver;

impl BitmapReceiver {
    /// Go-Back-ONE's receiver: a bitmap of `max_ooo_psn` entries, RACKs as notifications.
    pub fn gbone(max_ooo_psn: u32, ack_interval: u32, npkts: u64) -> Self {
        Self::new(max_ooo_psn, ack_interval, SegKind::Rack, npkts)
    }
}

/// Sender side of Go-Back-ONE: go-back-N's sender (which it extends) plus the RACK state and
/// the retransmission queue.
#[derive(Clone, Debug)]
pub struct GboneSender {
    base: GbnSender,
    back_to_zero: bool,
    chunk: u64,
    /// m_lastRACK and m_crtRACK, as packet indices; -1 means "before packet 0".
    last_rack: i64,
    crt_rack: i64,
    retrans_queue: VecDeque<u64>,
}

impl GboneSender {
    pub fn new(p: &GboneParams, npkts: u64) -> Self {
        let gbn = GbnParams { rto: p.rto, ..GbnParams::default() };
        GboneSender {
            base: GbnSender::new(&gbn, npkts),
            back_to_zero: p.back_to_zero,
            chunk: p.chunk_packets.max(1) as u64,
            last_rack: -1,
            crt_rack: -1,
            retrans_queue: VecDeque::new(),
        }
    }

    pub fn retrans_queue(&self) -> impl Iterator<Item = &u64> {
        self.retrans_queue.iter()
    }

    /// Algorithm 2 (GetNxtPacket): the retransmission queue first, then new data.
    pub fn next(&mut self, now: Time) -> Option<(u64, bool)> {
        while let Some(i) = self.retrans_queue.pop_front() {
            if i >= self.base.snd_una() {
                self.base.arm(now);
                return Some((i, true));
            }
            // acknowledged meanwhile
        }
        self.base.next(now)
    }

    /// Algorithm 1, ACK branch (0xFC).
    pub fn on_ack(&mut self, now: Time, cum: u64) {
        // An ACK that covers the whole message is never rounded down: the last chunk may be
        // partial, and rounding it would leave the flow unfinished forever.
        let cum = if self.back_to_zero && !self.base.is_done_at(cum) { cum / self.chunk * self.chunk } else { cum };
        self.base.on_ack(now, cum);
    }

    /// Algorithm 1, RACK branch (0xFD): `received` is the PSN the receiver got out of order.
    ///
    /// The paper initialises m_lastRACK to snd_una and queues from m_lastRACK + one MTU; with
    /// snd_una the first missing packet that would skip it, so the floor here is snd_una - 1,
    /// the last packet known received, which is what the loop's start assumes.
    pub fn on_rack(&mut self, received: u64) {
        let floor = self.base.snd_una() as i64 - 1;
        self.last_rack = self.last_rack.max(floor);
        self.crt_rack = self.crt_rack.max(floor);
        let r = received as i64;
        if r > self.crt_rack {
            self.last_rack = self.crt_rack;
            self.crt_rack = r;
            if self.crt_rack > self.last_rack + 1 {
                for q in (self.last_rack + 1)..self.crt_rack {
                    self.retrans_queue.push_back(q as u64);
                }
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Time) -> bool {
        let fired = self.base.handle_timeout(now);
        if fired {
            self.retrans_queue.clear();
            self.last_rack = -1;
            self.crt_rack = -1;
        }
        fired
    }

}

impl SendRecovery for GboneSender {
    fn snd_una(&self) -> u64 {
        self.base.snd_una()
    }
    fn snd_nxt(&self) -> u64 {
        self.base.snd_nxt()
    }
    fn has_data(&self) -> bool {
        !self.retrans_queue.is_empty() || self.base.has_data()
    }
    fn is_done(&self) -> bool {
        self.base.is_done()
    }
    /// A response from the receiver: ACK (0xFC) or RACK (0xFD). Returns whether it was a
    /// loss notification.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        match (seg.kind, seg.ext) {
            (SegKind::Ack, _) => {
                if let Some(cum) = at.index(seg.psn) {
                    self.on_ack(now, cum);
                }
                false
            }
            (SegKind::Rack, Ext::Rack(received)) => {
                if let Some(received) = at.index(received) {
                    self.on_rack(received);
                }
                true
            }
            _ => false,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.base.poll_timeout()
    }
    fn next(&mut self, now: Time, _rate: crate::sim::units::Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        GboneSender::next(self, now)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        GboneSender::handle_timeout(self, now)
    }
    /// Everything is acknowledged: the retransmission queue's storage goes.
    fn release(&mut self) {
        self.retrans_queue = VecDeque::new();
    }
}
