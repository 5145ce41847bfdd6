//! The requester side of a queue pair: loss recovery, congestion control and pacing.

use super::dcqcn::DcqcnRp;
use super::gbn::GbnSender;
use super::irn::IrnSender;
use super::psn::PsnSpace;
use super::segment::{payload_tag, SegKind, Segment};
use super::FlowSpec;
use crate::sim::units::{Rate, Time};

/// Sender loss recovery, statically dispatched.
#[derive(Clone, Debug)]
pub enum TxRecovery {
    Gbn(GbnSender),
    Irn(IrnSender),
}

/// Congestion control, statically dispatched.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Always line rate.
    None,
    Dcqcn(DcqcnRp),
}

/// What the sender wants to do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transmit {
    Send(Segment),
    /// Has data but the rate limiter holds it until then.
    WaitUntil(Time),
    /// Nothing to send until a packet or timer arrives.
    Idle,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retx_pkts: u64,
    pub retx_bytes: u64,
    /// NAKs (go-back-N) or NACKs (selective) received.
    pub naks: u64,
    pub timeouts: u64,
    pub cnps: u64,
}

/// The send side of one flow. Sans-IO: time comes in with every call, packets go out through
/// [`Sender::poll_transmit`], and [`Sender::poll_timeout`] says when to call back.
#[derive(Clone, Debug)]
pub struct Sender {
    spec: FlowSpec,
    psn: PsnSpace,
    recovery: TxRecovery,
    cc: Cc,
    line: Rate,
    /// Header bytes added to each data packet on the wire (counted by the rate limiter).
    header: u32,
    next_send: Time,
    pub stats: SenderStats,
    pub done_at: Option<Time>,
}

impl Sender {
    pub fn new(spec: FlowSpec, recovery: TxRecovery, cc: Cc, line: Rate, header: u32) -> Self {
        Sender {
            psn: PsnSpace::new(spec.initial_psn),
            spec,
            recovery,
            cc,
            line,
            header,
            next_send: Time::ZERO,
            stats: SenderStats::default(),
            done_at: None,
        }
    }

    pub fn rate(&self) -> Rate {
        match &self.cc {
            Cc::None => self.line,
            Cc::Dcqcn(rp) => rp.rate(),
        }
    }

    fn snd_una(&self) -> u64 {
        match &self.recovery {
            TxRecovery::Gbn(r) => r.snd_una,
            TxRecovery::Irn(r) => r.snd_una,
        }
    }

    fn has_data(&self) -> bool {
        match &self.recovery {
            TxRecovery::Gbn(r) => r.has_data(),
            TxRecovery::Irn(r) => r.has_data(),
        }
    }

    pub fn is_done(&self) -> bool {
        self.done_at.is_some()
    }

    pub fn poll_transmit(&mut self, now: Time) -> Transmit {
        if self.is_done() || !self.has_data() {
            return Transmit::Idle;
        }
        if now < self.next_send {
            return Transmit::WaitUntil(self.next_send);
        }
        let next = match &mut self.recovery {
            TxRecovery::Gbn(r) => r.next(now),
            TxRecovery::Irn(r) => r.next(now),
        };
        let Some((index, retransmit)) = next else { return Transmit::Idle };
        let payload = self.spec.payload(index);
        let seg = Segment {
            kind: SegKind::Data,
            psn: self.psn.wire(index),
            aux: Default::default(),
            payload,
            last: index + 1 == self.spec.npkts(),
            retransmit,
            ecn: false,
            tag: payload_tag(self.spec.key, index),
            ts: now,
        };
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += payload as u64;
        if retransmit {
            self.stats.retx_pkts += 1;
            self.stats.retx_bytes += payload as u64;
        }
        let wire = (payload + self.header) as u64;
        self.next_send = now + self.rate().serialization(wire);
        if let Cc::Dcqcn(rp) = &mut self.cc {
            rp.on_sent(wire);
        }
        Transmit::Send(seg)
    }

    /// Handles a control packet (ACK, NAK, NACK, CNP) from the receiver.
    pub fn handle_segment(&mut self, now: Time, seg: &Segment) {
        let una = self.snd_una();
        let unwrap = |psn| self.psn.unwrap(psn, una);
        match seg.kind {
            SegKind::Ack => {
                if let Some(cum) = unwrap(seg.psn) {
                    match &mut self.recovery {
                        TxRecovery::Gbn(r) => r.on_ack(now, cum),
                        TxRecovery::Irn(r) => r.on_ack(now, cum),
                    }
                }
            }
            SegKind::Nak | SegKind::Sack => {
                self.stats.naks += 1;
                let sacked = if seg.kind == SegKind::Sack { unwrap(seg.aux) } else { None };
                if let Some(cum) = unwrap(seg.psn) {
                    match &mut self.recovery {
                        TxRecovery::Gbn(r) => {
                            r.on_nak(now, cum);
                        }
                        TxRecovery::Irn(r) => r.on_sack(now, cum, sacked),
                    }
                }
            }
            SegKind::Cnp => {
                self.stats.cnps += 1;
                if let Cc::Dcqcn(rp) = &mut self.cc {
                    rp.on_cnp(now);
                }
            }
            SegKind::Data => {}
        }
        let finished = match &self.recovery {
            TxRecovery::Gbn(r) => r.is_done(),
            TxRecovery::Irn(r) => r.is_done(),
        };
        if finished && self.done_at.is_none() {
            self.done_at = Some(now);
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        if self.is_done() {
            return None;
        }
        let rto = match &self.recovery {
            TxRecovery::Gbn(r) => r.poll_timeout(),
            TxRecovery::Irn(r) => r.poll_timeout(),
        };
        let cc = match &self.cc {
            Cc::None => None,
            Cc::Dcqcn(rp) => rp.poll_timeout(),
        };
        match (rto, cc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        let fired = match &mut self.recovery {
            TxRecovery::Gbn(r) => r.handle_timeout(now),
            TxRecovery::Irn(r) => r.handle_timeout(now),
        };
        if fired {
            self.stats.timeouts += 1;
        }
        if let Cc::Dcqcn(rp) = &mut self.cc {
            rp.handle_timeout(now);
        }
    }

    pub fn spec(&self) -> &FlowSpec {
        &self.spec
    }
}
