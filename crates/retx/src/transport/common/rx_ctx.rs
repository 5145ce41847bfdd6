//! What every receiver shares, whatever its loss recovery: the PSN space, the responses
//! waiting to be sent, and the application-side delivery check.

use super::psn::{Psn, PsnSpace};
use super::segment::{payload_tag, Segment};
use super::flow::FlowSpec;
use crate::sim::units::Time;
use std::collections::VecDeque;

/// What every receiver shares: the PSN space, the control packets waiting to be sent and the
/// application-side delivery check.
#[derive(Clone, Debug)]
pub struct RxCtx {
    psn: PsnSpace,
    spec: FlowSpec,
    /// Responses waiting to be polled (the receiver drains them).
    pub(super) out: VecDeque<Segment>,
    /// Next packet index the application expects (everything below was delivered once).
    delivered: u64,
    pub delivered_bytes: u64,
    /// Deliveries that were out of order, repeated, or carried the wrong payload: must stay 0.
    pub bad_deliveries: u64,
    pub naks_sent: u64,
    pub done_at: Option<Time>,
    /// This end's `done_at` is the flow's completion (an unreliable delivery, where the sender
    /// never hears how its message ended); otherwise the sender's is.
    pub completes_flow: bool,
    /// Optional log of delivered packet indices, for tests.
    pub log: Option<Vec<u64>>,
}

impl RxCtx {
    pub(super) fn new(spec: FlowSpec) -> Self {
        RxCtx {
            psn: PsnSpace::new(spec.initial_psn),
            spec,
            out: VecDeque::with_capacity(4),
            delivered: 0,
            delivered_bytes: 0,
            bad_deliveries: 0,
            naks_sent: 0,
            done_at: None,
            completes_flow: false,
            log: None,
        }
    }

    /// The next in-order packet index (RCV.NXT / ePSN as an absolute index).
    pub fn expected(&self) -> u64 {
        self.delivered
    }

    /// The packet index a PSN names, read against RCV.NXT; None for a PSN from before the
    /// QP's first packet.
    pub fn index_of(&self, psn: Psn) -> Option<u64> {
        self.psn.unwrap(psn, self.delivered)
    }

    pub fn spec(&self) -> &FlowSpec {
        &self.spec
    }

    /// Every packet of the message has been delivered.
    pub fn is_complete(&self) -> bool {
        self.delivered >= self.spec.npkts()
    }

    pub fn wire(&self, index: u64) -> Psn {
        self.psn.wire(index)
    }

    pub fn send(&mut self, seg: Segment) {
        self.out.push_back(seg);
    }

    /// Hands packet `index` to the application in whatever order it came (an unreliable
    /// unordered delivery: the receiver hands each packet over at most once), checking it
    /// carries the payload that was sent for it. RCV.NXT becomes the highest index + 1, the
    /// reference PSNs are read against.
    pub fn deliver_unordered(&mut self, index: u64, tag: u32, bytes: u32) {
        if tag != payload_tag(self.spec.key, index) || bytes != self.spec.payload(index) {
            self.bad_deliveries += 1;
        }
        self.delivered = self.delivered.max(index + 1);
        self.delivered_bytes += bytes as u64;
        if let Some(log) = self.log.as_mut() {
            log.push(index);
        }
    }

    /// The receiver judged the message over at `now`, whatever was delivered (an unreliable
    /// delivery).
    pub fn close(&mut self, now: Time) {
        self.done_at.get_or_insert(now);
    }

    /// Hands packet `index` to the application, checking it is the next one and carries the
    /// payload that was sent for it.
    pub fn deliver(&mut self, now: Time, index: u64, tag: u32, bytes: u32) {
        if index != self.delivered || tag != payload_tag(self.spec.key, index) || bytes != self.spec.payload(index) {
            self.bad_deliveries += 1;
        }
        self.delivered = index + 1;
        self.delivered_bytes += bytes as u64;
        if let Some(log) = self.log.as_mut() {
            log.push(index);
        }
        if self.delivered >= self.spec.npkts() && self.done_at.is_none() {
            self.done_at = Some(now);
        }
    }
}
