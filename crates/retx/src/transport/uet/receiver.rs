//! UET's receiver (uet-htsim `UecSink`, uec.cpp:2441-3021; learnt from, not copied): RUD's
//! cumulative ACK with a 64-bit SACK bitmap, one ACK per 16 KB received or at once on ECN, an
//! ACK request, the flow's first packet, a duplicate or a hole closing after a request; a NACK
//! at once for every trimmed header; the RCCC credit asked for handed to the host's pull pacer.
//!
//! The application gets every byte once and in order: packets arriving out of order wait in a
//! reorder buffer (RUD's "unordered" is the network's order, not the application's here, so
//! retx's delivery check holds). ROD (`delivery = "rod"`, a simple variant uet-htsim lacks)
//! accepts only the next expected packet: one arriving early is dropped and NACKed once per
//! hole, and the sender goes back to the hole.

use super::oversub::{Arrival, OversubCfg};
use super::pacer::UetAgent;
use super::params::{Delivery, HEADER_BYTES};
use super::uud::{Take, UudState};
use crate::transport::common::agent::NicCall;
use crate::transport::common::ext::{UetInfo, UetKind, UET_AR, UET_GO_BACK, UET_LAST_HOP, UET_RTS_ACK};
use crate::transport::common::flow::PRIORITY_CONTROL;
use crate::transport::common::recovery::ReceiveRecovery;
use crate::transport::common::reorder::ReorderBuffer;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{Ecn, Ext, PathInfo, SegKind, Segment};
use crate::sim::units::Time;

/// What the receiver is built with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverConfig {
    /// An ACK once this many bytes arrived since the last (`_bytes_unacked_threshold`).
    pub sack_threshold: u32,
    /// RCCC: credit requests go to the host's pull pacer.
    pub rccc: bool,
    /// Slow pulls stop at this many quanta beyond the target (the sender's maximum window).
    pub max_slow: u32,
    pub delivery: Delivery,
    /// The host's oversubscribed-fabric control, when on (its pacer is told on first use).
    pub oversub: Option<OversubCfg>,
    /// UUD: a packet not heard of this long after the last is lost.
    pub rto: Time,
}

#[derive(Clone, Debug)]
pub struct UetReceiver {
    cfg: ReceiverConfig,
    /// What arrived above the cumulative ACK (`_epsn_rx_bitmap`); the cumulative ACK is the
    /// application's next packet.
    reorder: ReorderBuffer,
    /// Bytes accepted since the last ACK (`_accepted_bytes`: 16 bits in uet-htsim).
    accepted: u16,
    /// Payload bytes received (`_received_bytes`) and bytes with headers (`_recvd_bytes`).
    received: u64,
    recvd: u64,
    ack_request: bool,
    /// ROD: the hole last NACKed.
    naked: Option<u64>,
    /// UUD's receive state (boxed: RUD's receivers do not carry it).
    uud: Option<Box<UudState>>,
}

impl UetReceiver {
    pub fn new(cfg: ReceiverConfig, npkts: u64) -> Self {
        let (reorder, uud) = match cfg.delivery {
            Delivery::Uud => (ReorderBuffer::new(0), Some(Box::new(UudState::new(npkts, cfg.rto)))),
            _ => (ReorderBuffer::new(npkts), None),
        };
        UetReceiver { cfg, reorder, accepted: 0, received: 0, recvd: 0, ack_request: false, naked: None, uud }
    }

    /// `sackBitmapBase` (uec.cpp:2953).
    fn sack_base(psn: u64, expected: u64) -> u64 {
        psn.saturating_sub(63).max(expected + 1)
    }

    /// Whether packet `i` arrived ahead of the cumulative ACK.
    fn holds(&self, i: u64, expected: u64) -> bool {
        i > expected && self.reorder.holds_ahead(expected, i)
    }

    /// An ACK (`sack`, uec.cpp:3001): cumulative ACK, the bitmap of the 64 PSNs from `base`
    /// (`buildSackBitmap`), the PSN that triggered it and its EV.
    fn ack(&self, now: Time, seg: &Segment, index: u64, base: u64, rx: &RxCtx, flags: u8) -> Segment {
        let expected = rx.expected();
        let mut bits = 0u64;
        for k in 0..64 {
            if self.holds(base + k, expected) {
                bits |= 1 << k;
            }
        }
        let mut a = Segment::reply(SegKind::Ack, rx.wire(expected), now, seg);
        a.retransmit = seg.retransmit; // `_rtx_echo`
        a.path = PathInfo::with_ev(seg.path.ev());
        a.ext = Ext::Uet(UetInfo {
            kind: UetKind::Ack,
            flags,
            ooo: self.reorder.held().min(u16::MAX as u64) as u16,
            number: rx.wire(base).value(),
            psn: rx.wire(index),
            sack: [bits as u32, (bits >> 32) as u32],
            recvd: self.recvd as u32,
        });
        (a.priority, a.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        a
    }

    fn nack(&self, now: Time, seg: &Segment, index: u64, rx: &RxCtx, flags: u8) -> Segment {
        let mut n = Segment::reply(SegKind::Nak, rx.wire(index), now, seg);
        n.path = PathInfo::with_ev(seg.path.ev());
        n.ece = seg.ecn == Ecn::Ce;
        n.ext = Ext::Uet(UetInfo { kind: UetKind::Nack, flags, psn: rx.wire(index), recvd: self.recvd as u32, ..UetInfo::default() });
        (n.priority, n.wire_bytes) = (PRIORITY_CONTROL as u8, HEADER_BYTES);
        n
    }

    /// `handlePullTarget` (uec.cpp:2547).
    fn pull_target(&self, now: Time, target: u32, nic: &mut NicCall<'_>) {
        if !self.cfg.rccc {
            return;
        }
        let qp = nic.caller();
        if let Some(a) = nic.agent::<UetAgent>() {
            a.pull_target(now, qp, target, self.cfg.max_slow);
        }
    }

    /// What arrived, for the host's oversubscribed-fabric control (`UecSink::receivePacket`
    /// counts every packet, `processData` the ECN marks, `processTrimmed` the trims).
    fn count_arrival(&self, now: Time, arrival: Arrival, nic: &mut NicCall<'_>) {
        let Some(cfg) = self.cfg.oversub else { return };
        if let Some(a) = nic.agent::<UetAgent>() {
            a.oversub_arrival(now, cfg, arrival);
        }
    }

    fn want_pull(&self, now: Time, nic: &mut NicCall<'_>) {
        if !self.cfg.rccc {
            return;
        }
        let qp = nic.caller();
        if let Some(a) = nic.agent::<UetAgent>() {
            a.want_pull(now, qp, self.cfg.max_slow);
        }
    }

    /// `processRts` (uec.cpp:2795): credit asked for, answered at once.
    fn rts(&mut self, now: Time, index: u64, seg: &Segment, info: &UetInfo, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        self.pull_target(now, info.number, nic);
        self.want_pull(now, nic);
        let expected = rx.expected();
        let base = if index < expected || self.holds(index, expected) { Self::sack_base(index, expected) } else { index };
        let a = self.ack(now, seg, index, base, rx, UET_RTS_ACK);
        rx.send(a);
    }
}

fn uet_info(seg: &Segment) -> UetInfo {
    match seg.ext {
        Ext::Uet(u) => u,
        _ => UetInfo::default(),
    }
}

impl ReceiveRecovery for UetReceiver {
    /// `processData` (uec.cpp:2571).
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        if let Some(u) = self.uud.as_mut() {
            if u.on_data(now, index) == Take::Deliver {
                rx.deliver_unordered(index, seg.tag, seg.payload);
            }
            if u.is_over() {
                rx.close(now);
            }
            return;
        }
        let info = uet_info(seg);
        if info.kind == UetKind::Rts {
            self.count_arrival(now, Arrival::Other, nic);
            return self.rts(now, index, seg, &info, rx, nic);
        }
        self.count_arrival(now, Arrival::Data { ecn: seg.ecn == Ecn::Ce }, nic);
        let wire = seg.payload + HEADER_BYTES;
        self.accepted = self.accepted.wrapping_add(wire as u16);
        self.pull_target(now, info.number, nic);
        let ecn = seg.ecn == Ecn::Ce;
        let ar = info.flags & UET_AR != 0;
        let expected = rx.expected();
        if index < expected || self.holds(index, expected) {
            // A duplicate: ACKed at once.
            let base = if ecn { index } else { Self::sack_base(index, expected) };
            let a = self.ack(now, seg, index, base, rx, 0);
            rx.send(a);
            self.accepted = 0;
            return;
        }
        if self.cfg.delivery == Delivery::Rod && index != expected {
            // ROD: only the next packet is taken; the hole is NACKed once, the sender goes back.
            if self.naked != Some(expected) {
                self.naked = Some(expected);
                rx.naks_sent += 1;
                let n = self.nack(now, seg, expected, rx, UET_GO_BACK);
                rx.send(n);
            }
            return;
        }
        let mut force = self.received == 0;
        self.received += seg.payload as u64;
        self.recvd += wire as u64;
        if ar {
            force = true;
            self.ack_request = true;
        }
        self.reorder.accept(now, index, seg, rx);
        if index == expected && self.reorder.held() == 0 && self.ack_request {
            force = true;
            self.ack_request = false;
        }
        if ecn || self.accepted as u32 >= self.cfg.sack_threshold || force {
            let base = if ecn || ar { index } else { Self::sack_base(index, rx.expected()) };
            let a = self.ack(now, seg, index, base, rx, 0);
            rx.send(a);
            self.accepted = 0;
        }
    }

    /// `processTrimmed` (uec.cpp:2741): a NACK at once (an ACK if the packet is already here).
    fn on_trimmed(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        if let Some(u) = self.uud.as_mut() {
            // UUD: no NACK; the packet is lost.
            u.on_trimmed(now, index);
            if u.is_over() {
                rx.close(now);
            }
            return;
        }
        self.count_arrival(now, Arrival::Trimmed { last_hop: seg.path.trimmed_last_hop() }, nic);
        let info = uet_info(seg);
        let expected = rx.expected();
        if index < expected || self.holds(index, expected) {
            let a = self.ack(now, seg, index, Self::sack_base(index, expected), rx, 0);
            rx.send(a);
            return;
        }
        self.pull_target(now, info.number, nic);
        rx.naks_sent += 1;
        let n = self.nack(now, seg, index, rx, if seg.path.trimmed_last_hop() { UET_LAST_HOP } else { 0 });
        rx.send(n);
        self.want_pull(now, nic);
    }

    fn reorder_stats(&self) -> (u64, u64, u64) {
        match &self.uud {
            Some(u) => (0, 0, u.dropped),
            None => self.reorder.stats(),
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.uud.as_ref().and_then(|u| u.deadline())
    }

    /// UUD: the first wake-up notes when the flow began; a later one past the deadline
    /// judges the message over.
    fn handle_timeout(&mut self, now: Time, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        if let Some(u) = self.uud.as_mut() {
            if u.on_wake(now) {
                rx.close(now);
            }
        }
    }

    fn release(&mut self) {
        self.reorder.release();
        if let Some(u) = self.uud.as_mut() {
            u.release();
        }
    }

    fn completes_flow(&self) -> bool {
        self.uud.is_some()
    }
}
