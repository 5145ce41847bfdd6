//! Go-back-N loss recovery as RoCEv2 NICs implement it.
//!
//! Receiver: accepts only the expected PSN; anything beyond it is discarded and answered with
//! a NAK (sequence error) carrying the expected PSN, rate-limited by the NAK generation
//! interval; duplicates are re-acknowledged so that a lost ACK never stalls the sender.
//! Sender: a NAK rewinds `snd_nxt` to the NAKed PSN; a retransmission timeout rewinds to
//! `snd_una` when nothing else arrives (lost tail, lost NAK, lost retransmission).

use crate::transport::common::agent::NoAgent;
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::sim::check::{self, Checked};
use crate::transport::common::psn::PsnReader;
use crate::transport::common::agent::NicCall;
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{SegKind, Segment};
use crate::sim::units::Dur;
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

/// When the receiver may send another NAK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NakPolicy {
    /// At most one NAK per NAK interval, whatever PSN it names (the DCQCN-era NIC model:
    /// a NAK whose retransmission is lost, or a second loss inside the interval, waits for
    /// the interval to pass).
    Strict,
    /// A NAK for a new expected PSN goes out at once; the same PSN is NAKed again only after
    /// the interval (the HPCC ns-3 model's `RdmaHw::ReceiverCheckSeq`:
    /// `Now() >= m_nackTimer || m_lastNACK != expected`). The default.
    PerPsn,
    /// One NAK per gap, re-armed only when the expected PSN arrives (IB spec: "the responder
    /// cannot have more than one NAK outstanding"; Linux soft-RoCE `check_psn`). A lost NAK or
    /// a lost retransmission then costs a retransmission timeout.
    OncePerGap,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GbnParams {
    /// NAK generation interval. 500 us is the value of the DCQCN and HPCC ns-3 models
    /// (HPCC: `RdmaHw::NACKGenerationInterval`, default 500 us).
    pub nak_interval: Dur,
    pub nak_policy: NakPolicy,
    /// Retransmission timeout (IB "local ACK timeout", 4.096 us x 2^exponent). The HPCC ns-3
    /// model has none; its ConWeave derivative uses `L2Timeout` = 4 ms, so the default is the
    /// nearest IB value, exponent 10: 4.194304 ms. (perftest's exponent 14 would be 67 ms.)
    pub rto: Dur,
}

impl Default for GbnParams {
    fn default() -> Self {
        GbnParams {
            nak_interval: Dur(Time::from_us(500)),
            nak_policy: NakPolicy::PerPsn,
            rto: Dur(Time::from_ns(4_194_304)),
        }
    }
}

impl Scheme for GbnParams {
    const NAME: &'static str = "gbn";
    const MEMORY_ROW: &'static str = "go-back-N";
    type Sender = GbnSender;
    type Receiver = GbnReceiver;
    type Agent = NoAgent;

    /// Fields by their names within `[recovery.gbn]`.
    fn check(&self) -> Checked {
        check::positive_time("nak_interval", self.nak_interval.0)?;
        check::timer("rto", self.rto.0)
    }

    fn endpoints(&self, f: &Setup<'_>) -> (GbnSender, GbnReceiver) {
        (GbnSender::new(self, f.npkts()), GbnReceiver::new(self, f.ack_interval))
    }
}

/// Sender side of go-back-N. MELO and Go-Back-ONE build their senders on it: both send new
/// data in order, acknowledge cumulatively and go back to snd_una on a timeout.
#[derive(Clone, Debug)]
pub struct GbnSender {
    rto: Time,
    /// Oldest unacknowledged packet index.
    pub snd_una: u64,
    /// Next packet index to send.
    pub snd_nxt: u64,
    /// One past the highest index ever sent: below it, a send is a retransmission.
    high: u64,
    npkts: u64,
    rto_deadline: Option<Time>,
}

impl GbnSender {
    pub fn new(p: &GbnParams, npkts: u64) -> Self {
        GbnSender { rto: p.rto.0, snd_una: 0, snd_nxt: 0, high: 0, npkts, rto_deadline: None }
    }

    /// Takes the next packet to send: (index, is_retransmission).
    pub fn next(&mut self, now: Time) -> Option<(u64, bool)> {
        if self.snd_nxt >= self.npkts {
            return None;
        }
        let i = self.snd_nxt;
        self.snd_nxt += 1;
        let retx = i < self.high;
        self.high = self.high.max(self.snd_nxt);
        self.arm(now);
        Some((i, retx))
    }

    /// One past the highest index ever sent.
    pub fn high(&self) -> u64 {
        self.high
    }

    /// Starts the timer if it is not running (for a retransmission sent outside `next`).
    pub fn arm(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// A cumulative ACK; returns true if it moved snd_una (and restarted the timer).
    pub fn on_ack(&mut self, now: Time, cum: u64) -> bool {
        if cum > self.snd_una && cum <= self.high {
            self.snd_una = cum;
            self.snd_nxt = self.snd_nxt.max(cum);
            self.restart_rto(now);
            return true;
        }
        false
    }

    /// Returns true if the NAK rewound the sender.
    pub fn on_nak(&mut self, now: Time, expected: u64) -> bool {
        if expected < self.snd_una || expected > self.high {
            return false; // stale: already acknowledged past it
        }
        self.snd_una = expected;
        self.snd_nxt = expected;
        self.restart_rto(now);
        true
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = (self.snd_una < self.high).then(|| now + self.rto);
    }

    /// Returns true if the timer fired (and rewound the sender).
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        match self.rto_deadline {
            Some(t) if now >= t => {
                self.snd_nxt = self.snd_una;
                self.rto_deadline = (self.snd_una < self.high).then(|| now + self.rto);
                true
            }
            _ => false,
        }
    }

    /// Whether a cumulative ACK of `cum` would cover the whole message.
    pub fn is_done_at(&self, cum: u64) -> bool {
        cum >= self.npkts
    }

    pub fn in_flight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }
}

/// Receiver side of go-back-N.
#[derive(Clone, Debug)]
pub struct GbnReceiver {
    policy: NakPolicy,
    interval: Time,
    ack_interval: u32,
    unacked: u32,
    /// No NAK before this time (strict) or no NAK for `last_nak` before it (per-PSN).
    nak_quiet_until: Time,
    last_nak: Option<u64>,
}

impl GbnReceiver {
    pub fn new(p: &GbnParams, ack_interval: u32) -> Self {
        GbnReceiver {
            policy: p.nak_policy,
            interval: p.nak_interval.0,
            ack_interval: ack_interval.max(1),
            unacked: 0,
            nak_quiet_until: Time::ZERO,
            last_nak: None,
        }
    }

    /// Handles a data packet whose absolute index is `index`.
    pub fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx) {
        let expected = rx.expected();
        if index == expected {
            rx.deliver(now, index, seg.tag, seg.payload);
            self.unacked += 1;
            if self.unacked >= self.ack_interval || seg.last {
                self.unacked = 0;
                rx.send(Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg));
            }
        } else if index > expected {
            let allowed = match self.policy {
                NakPolicy::Strict => now >= self.nak_quiet_until,
                NakPolicy::PerPsn => now >= self.nak_quiet_until || self.last_nak != Some(expected),
                NakPolicy::OncePerGap => self.last_nak != Some(expected),
            };
            if allowed {
                self.nak_quiet_until = now + self.interval;
                self.last_nak = Some(expected);
                rx.naks_sent += 1;
                rx.send(Segment::reply(SegKind::Nak, rx.wire(expected), now, seg));
            }
        } else {
            // A duplicate: the sender timed out or an ACK was lost. Re-acknowledge (IB spec
            // C9-105, as soft-RoCE does; the HPCC ns-3 model stays silent, which can leave a
            // sender whose last ACK was lost retransmitting forever).
            rx.send(Segment::reply(SegKind::Ack, rx.wire(expected), now, seg));
        }
    }
}

impl SendRecovery for GbnSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        self.snd_nxt < self.npkts
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    /// A response from the receiver: ACK or NAK (anything else is not go-back-N's). Returns
    /// whether it was a loss notification.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        let cum = at.index(seg.psn);
        match seg.kind {
            SegKind::Ack => {
                if let Some(cum) = cum {
                    self.on_ack(now, cum);
                }
                false
            }
            SegKind::Nak => {
                if let Some(cum) = cum {
                    self.on_nak(now, cum);
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
        GbnSender::next(self, now)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        GbnSender::handle_timeout(self, now)
    }
}

impl ReceiveRecovery for GbnReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        GbnReceiver::on_data(self, now, index, seg, rx);
    }
}
