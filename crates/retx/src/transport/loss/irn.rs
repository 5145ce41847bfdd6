//! IRN-style selective repeat (Mittal et al., "Revisiting Network Support for RDMA",
//! SIGCOMM 2018).
//!
//! Receiver: keeps out-of-order packets in a reorder buffer tracked by a per-QP bitmap of
//! `bitmap_packets` entries; every out-of-order arrival is answered with a NACK carrying the
//! cumulative ACK and the PSN that triggered it. Sender: a packet is lost once a later one is
//! SACKed; in recovery it retransmits those (each once per recovery episode) before new data;
//! recovery ends when the cumulative ACK passes the highest PSN sent when it began. In-flight
//! packets are capped at the bitmap size (IRN's BDP-FC). A timeout (RTO_low with few packets in
//! flight, else RTO_high) retransmits every un-SACKed packet.

use crate::transport::common::agent::NoAgent;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::window::Window;
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::sim::check::{self, Checked};
use crate::transport::common::psn::PsnReader;
use crate::transport::common::agent::NicCall;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ext, SegKind, Segment};
use crate::sim::units::Dur;
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrnParams {
    /// Bitmap (and in-flight cap) in packets; 0 means one BDP of the topology's longest path.
    pub bitmap_packets: u32,
    /// IRN paper: RTO_low = 100 us when at most `rto_low_packets` are in flight.
    pub rto_low: Dur,
    /// IRN paper: RTO_high = 320 us otherwise.
    pub rto_high: Dur,
    /// IRN paper: N = 3.
    pub rto_low_packets: u32,
    /// Retransmit the oldest missing packet again as soon as a packet sent after its last
    /// retransmission is SACKed (the lost-retransmission rule of TCP SACK/RACK). IRN itself
    /// waits for a timeout; with the in-flight cap at one BDP that idles the sender for
    /// RTO_high at every lost retransmission (about 20 % of goodput at 1 % loss). Set false
    /// for the paper's rule.
    pub detect_lost_retransmissions: bool,
}

impl Default for IrnParams {
    fn default() -> Self {
        IrnParams {
            bitmap_packets: 0,
            rto_low: Dur(Time::from_us(100)),
            rto_high: Dur(Time::from_us(320)),
            rto_low_packets: 3,
            detect_lost_retransmissions: true,
        }
    }
}

impl Scheme for IrnParams {
    const NAME: &'static str = "irn";
    type Sender = IrnSender;
    type Receiver = BitmapReceiver;
    type Agent = NoAgent;

    /// Fields by their names within `[recovery.irn]`.
    fn check(&self) -> Checked {
        check::range_u32("bitmap_packets", self.bitmap_packets, 0, 1 << 20)?;
        check::timer("rto_low", self.rto_low.0)?;
        check::timer("rto_high", self.rto_high.0)?;
        if self.rto_low.0 > self.rto_high.0 {
            return Err(check::FieldError::new("rto_low", format!("{} must not exceed rto_high ({})", self.rto_low.0, self.rto_high.0)));
        }
        Ok(())
    }

    /// The bitmap bounds both the receiver's cache and the sender's packets in flight.
    fn endpoints(&self, f: &Setup<'_>) -> (IrnSender, BitmapReceiver) {
        let window = f.or_bdp(self.bitmap_packets);
        (IrnSender::new(self, window, f.npkts()), BitmapReceiver::irn(window, f.ack_interval, f.npkts()))
    }
}

/// A receiver that caches out-of-order packets in a per-QP bitmap and answers each with a
/// loss notification carrying the cumulative ACK and the PSN that triggered it. IRN's NACK
/// and Go-Back-ONE's RACK carry exactly these two PSNs; only the packet kind differs.
#[derive(Clone, Debug)]
pub struct BitmapReceiver {
    cached: Window,
    /// Payload digests of cached packets (stands in for the reorder buffer's data).
    tags: Vec<u32>,
    notify: SegKind,
    ack_interval: u32,
    unacked: u32,
    /// Packets dropped because they lay beyond the bitmap.
    pub beyond_bitmap: u64,
    pub stored_bytes: u64,
    pub copied_bytes: u64,
    /// Notifications (NACKs or RACKs) sent.
    pub notifications: u64,
    /// High-water mark of cached out-of-order packets.
    pub max_buffered: u64,
    buffered: u64,
}

impl BitmapReceiver {
    /// IRN's receiver of a flow of `npkts` packets.
    pub fn irn(bitmap_packets: u32, ack_interval: u32, npkts: u64) -> Self {
        Self::new(bitmap_packets, ack_interval, SegKind::Sack, npkts)
    }

    pub fn new(bitmap_packets: u32, ack_interval: u32, notify: SegKind, npkts: u64) -> Self {
        let cached = Window::new(bitmap_packets, npkts);
        let slots = cached.slots();
        BitmapReceiver {
            // A sender capped at one bitmap in flight (IRN) would stall until its timeout if
            // ACKs were coalesced over more packets than that.
            ack_interval: ack_interval.clamp(1, cached.capacity() as u32),
            cached,
            tags: vec![0; slots],
            notify,
            unacked: 0,
            beyond_bitmap: 0,
            stored_bytes: 0,
            copied_bytes: 0,
            notifications: 0,
            max_buffered: 0,
            buffered: 0,
        }
    }

    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx) {
        let expected = rx.expected();
        if index == expected {
            rx.deliver(now, index, seg.tag, seg.payload);
            let mut drained = false;
            // Deliver what the hole was holding back.
            while self.cached.get(rx.expected()) {
                let i = rx.expected();
                self.cached.clear(i);
                self.buffered -= 1;
                let bytes = rx.spec().payload(i);
                rx.deliver(now, i, self.tags[self.cached.slot(i)], bytes);
                self.copied_bytes += bytes as u64;
                drained = true;
            }
            self.unacked += 1;
            if drained || self.unacked >= self.ack_interval || seg.last || rx.is_complete() {
                self.unacked = 0;
                rx.send(Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg));
            }
        } else if index > expected {
            // Past the message's last packet nothing can be cached (the ring holds no slot
            // for it): treated as beyond the bitmap.
            if index - expected >= self.cached.capacity() || index >= rx.spec().npkts() {
                // Not cached, so not reported either: a notification naming it would tell
                // the sender it arrived.
                self.beyond_bitmap += 1;
                return;
            }
            // Covered before it is read: a smaller ring would alias another cached index.
            if let Some(r) = self.cached.cover(expected, index) {
                r.apply(&mut self.tags);
            }
            if !self.cached.get(index) {
                self.cached.set(index);
                self.tags[self.cached.slot(index)] = seg.tag;
                self.stored_bytes += seg.payload as u64;
                self.buffered += 1;
                self.max_buffered = self.max_buffered.max(self.buffered);
            }
            let mut note = Segment::reply(self.notify, rx.wire(expected), now, seg);
            note.ext = if self.notify == SegKind::Rack { Ext::Rack(seg.psn) } else { Ext::Sack(seg.psn) };
            self.notifications += 1;
            rx.naks_sent += 1;
            rx.send(note);
        } else {
            rx.send(Segment::reply(SegKind::Ack, rx.wire(expected), now, seg));
        }
    }
}


/// Sender side of IRN.
#[derive(Clone, Debug)]
pub struct IrnSender {
    p: IrnParams,
    pub snd_una: u64,
    pub snd_nxt: u64,
    npkts: u64,
    sacked: Window,
    /// Highest SACKed index + 1: un-SACKed packets below it are lost.
    sack_high: u64,
    in_recovery: bool,
    /// Recovery ends when the cumulative ACK reaches this.
    recovery_end: u64,
    /// Next candidate for retransmission in this recovery episode.
    retx_ptr: u64,
    /// Per window slot: `snd_nxt` when the packet was last retransmitted (0: never).
    retx_mark: Vec<u64>,
    /// The oldest missing packet, found lost again.
    resend_head: bool,
    rto_deadline: Option<Time>,
}

impl IrnSender {
    pub fn new(p: &IrnParams, window: u32, npkts: u64) -> Self {
        let sacked = Window::new(window, npkts);
        IrnSender {
            p: *p,
            snd_una: 0,
            snd_nxt: 0,
            npkts,
            retx_mark: vec![0; sacked.slots()],
            resend_head: false,
            sacked,
            sack_high: 0,
            in_recovery: false,
            recovery_end: 0,
            retx_ptr: 0,
            rto_deadline: None,
        }
    }

    fn rto(&self) -> Time {
        if self.snd_nxt - self.snd_una <= self.p.rto_low_packets as u64 { self.p.rto_low.0 } else { self.p.rto_high.0 }
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rto());
    }

    /// The next lost packet to retransmit in this episode, if any.
    fn next_lost(&mut self) -> Option<u64> {
        if !self.in_recovery {
            return None;
        }
        self.retx_ptr = self.retx_ptr.max(self.snd_una);
        while self.retx_ptr < self.sack_high {
            let i = self.retx_ptr;
            self.retx_ptr += 1;
            if !self.sacked.get(i) {
                return Some(i);
            }
        }
        None
    }

    pub fn next(&mut self, now: Time) -> Option<(u64, bool)> {
        if let Some(r) = self.next_retransmission(now) {
            return Some(r);
        }
        if self.snd_nxt >= self.npkts || self.snd_nxt - self.snd_una >= self.sacked.capacity() {
            return None;
        }
        let i = self.snd_nxt;
        if let Some(r) = self.sacked.cover(self.snd_una, i) {
            r.apply(&mut self.retx_mark);
        }
        self.snd_nxt += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        Some((i, false))
    }

    /// Only a retransmission of a lost packet below snd_nxt, if one is due (what a sender whose
    /// congestion window is full may still send: it does not move snd_nxt).
    pub fn next_retransmission(&mut self, now: Time) -> Option<(u64, bool)> {
        let head = self.snd_una;
        let lost = if std::mem::take(&mut self.resend_head) && head < self.snd_nxt && !self.sacked.get(head) {
            Some(head)
        } else {
            self.next_lost()
        };
        let i = lost?;
        self.retx_mark[self.sacked.slot(i)] = self.snd_nxt;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        Some((i, true))
    }

    fn advance_una(&mut self, cum: u64) -> bool {
        if cum <= self.snd_una || cum > self.snd_nxt {
            return false;
        }
        for i in self.snd_una..cum {
            self.sacked.clear(i);
            self.retx_mark[self.sacked.slot(i)] = 0;
        }
        self.snd_una = cum;
        self.sack_high = self.sack_high.max(cum);
        if self.in_recovery && self.snd_una >= self.recovery_end {
            self.retx_ptr = self.retx_ptr.max(self.snd_una);
            while self.retx_ptr < self.sack_high && self.sacked.get(self.retx_ptr) {
                self.retx_ptr += 1;
            }
            if self.retx_ptr < self.sack_high {
                // Packets a later SACK showed lost are still owed their first resend in this
                // episode: ending it here would leave them to the timeout when no further
                // SACK comes (a loss near the tail), so the episode runs on to what is in
                // flight now.
                self.recovery_end = self.snd_nxt;
            } else {
                self.in_recovery = false;
            }
        }
        true
    }

    pub fn on_ack(&mut self, now: Time, cum: u64) {
        if self.advance_una(cum) {
            self.restart_rto(now);
        }
    }

    /// A NACK: cumulative ACK `cum` plus the SACKed out-of-order index `sacked`.
    pub fn on_sack(&mut self, now: Time, cum: u64, sacked: Option<u64>) {
        let progressed = self.advance_una(cum);
        if let Some(s) = sacked {
            if s >= self.snd_una && s < self.snd_nxt {
                self.sacked.set(s);
                self.sack_high = self.sack_high.max(s + 1);
                if !self.in_recovery {
                    self.in_recovery = true;
                    self.recovery_end = self.snd_nxt;
                    self.retx_ptr = self.snd_una;
                }
            }
        }
        if progressed {
            self.restart_rto(now);
        }
        if self.p.detect_lost_retransmissions {
            // A packet sent after the head's last retransmission got through: that
            // retransmission was lost (paths are FIFO).
            let mark = self.retx_mark.get(self.sacked.slot(self.snd_una)).copied().unwrap_or(0);
            if mark != 0 && self.sack_high > mark && !self.sacked.get(self.snd_una) {
                self.resend_head = true;
                self.retx_mark[self.sacked.slot(self.snd_una)] = 0;
            }
        }
    }

    /// On timeout every un-SACKed packet in flight is presumed lost.
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        match self.rto_deadline {
            Some(t) if now >= t && self.snd_una < self.snd_nxt => {
                self.in_recovery = true;
                self.recovery_end = self.snd_nxt;
                self.retx_ptr = self.snd_una;
                self.sack_high = self.snd_nxt;
                self.rto_deadline = Some(now + self.rto());
                true
            }
            Some(t) if now >= t => {
                self.rto_deadline = None;
                false
            }
            _ => false,
        }
    }

    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
}

impl SendRecovery for IrnSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Whether `next` may have something to send (cheap; may be a false positive when the
    /// remaining candidates below `sack_high` are all SACKed).
    fn has_data(&self) -> bool {
        let lost_pending = self.resend_head || (self.in_recovery && self.retx_ptr.max(self.snd_una) < self.sack_high);
        lost_pending || (self.snd_nxt < self.npkts && self.snd_nxt - self.snd_una < self.sacked.capacity())
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    /// A response from the receiver: ACK or NACK (a SACK). Returns whether it was a loss
    /// notification.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        let cum = at.index(seg.psn);
        match (seg.kind, seg.ext) {
            (SegKind::Ack, _) => {
                if let Some(cum) = cum {
                    self.on_ack(now, cum);
                }
                false
            }
            (SegKind::Sack, Ext::Sack(sacked)) => {
                if let Some(cum) = cum {
                    self.on_sack(now, cum, at.index(sacked));
                }
                true
            }
            _ => false,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.rto_deadline
    }
    fn next(&mut self, now: Time, _rate: crate::sim::units::Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        IrnSender::next(self, now)
    }
    fn next_past_closed_window(&mut self, now: Time) -> Option<(u64, bool)> {
        self.next_retransmission(now)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        IrnSender::handle_timeout(self, now)
    }
    /// Every packet is acknowledged: the SACK bitmap and retransmission marks go. Later
    /// feedback only reads them (as clear), since nothing is left in flight.
    fn release(&mut self) {
        self.sacked.release();
        self.retx_mark = Vec::new();
    }
}

impl ReceiveRecovery for BitmapReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        BitmapReceiver::on_data(self, now, index, seg, rx);
    }
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (self.stored_bytes, self.copied_bytes, self.beyond_bitmap)
    }
    /// The message is delivered: the bitmap and reorder tags go (nothing is cached past the
    /// last packet); the counters stay for the flow's record.
    fn release(&mut self) {
        self.cached.release();
        self.tags = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_no_more_slots_than_its_flow_has_packets() {
        assert_eq!(Window::new(2_400, 1).slots(), 1);
        assert_eq!(Window::new(2_400, 5).slots(), 8);
        assert_eq!(Window::new(2_400, 1_000_000).slots(), crate::transport::common::window::INITIAL_SLOTS as usize);
        assert_eq!(Window::new(3, 1_000_000).slots(), 4);
    }

    #[test]
    fn a_window_grows_to_cover_what_is_outstanding_keeping_its_flags_and_side_table() {
        // Capacity 2 400, starting at 64 slots; the window's base is 1 000 (wrapped in the
        // ring: 1 000 & 63 = 40).
        let mut w = Window::new(2_400, 1_000_000);
        let mut tags: Vec<u32> = vec![0; w.slots()];
        for i in [1_000, 1_001, 1_030, 1_063] {
            w.set(i);
            tags[w.slot(i)] = i as u32;
        }
        assert_eq!(w.cover(1_000, 1_063), None, "64 slots cover [1 000, 1 063]");
        // Index 1 064 needs 65 slots: the ring doubles to 128 and the flags move.
        let r = w.cover(1_000, 1_064).expect("grown");
        r.apply(&mut tags);
        assert_eq!((w.slots(), tags.len()), (128, 128));
        let set: Vec<u64> = (1_000..1_128).filter(|&i| w.get(i)).collect();
        assert_eq!(set, vec![1_000, 1_001, 1_030, 1_063]);
        for i in [1_000, 1_001, 1_030, 1_063] {
            assert_eq!(tags[w.slot(i)], i as u32);
        }
        // A jump to the whole capacity grows at once, to at most capacity rounded up.
        w.clear(1_000);
        assert!(w.cover(1_001, 1_001 + 2_399).is_some());
        assert_eq!(w.slots(), 4_096);
        assert_eq!((900..4_000).filter(|&i| w.get(i)).collect::<Vec<_>>(), vec![1_001, 1_030, 1_063]);
        w.release();
        assert_eq!((w.slots(), w.get(1_001), w.capacity()), (0, false, 2_400));
    }
}
