//! The requester side of a queue pair: loss recovery, congestion control and pacing.

use super::dcqcn::DcqcnRp;
use super::dctcp::Dctcp;
use super::gbn::GbnSender;
use super::gbone::GboneSender;
use super::irn::IrnSender;
use super::melo::MeloSender;
use super::psn::PsnSpace;
use super::segment::{payload_tag, SegKind, Segment};
use super::{FlowSpec, NicState};
use crate::sim::units::{Rate, Time};

/// Sender loss recovery, statically dispatched.
#[derive(Clone, Debug)]
pub enum TxRecovery {
    Gbn(GbnSender),
    Irn(IrnSender),
    Melo(MeloSender),
    Gbone(GboneSender),
}

/// Dispatches a call to whichever loss recovery a sender has.
macro_rules! each {
    ($r:expr, $x:ident => $e:expr) => {
        match $r {
            TxRecovery::Gbn($x) => $e,
            TxRecovery::Irn($x) => $e,
            TxRecovery::Melo($x) => $e,
            TxRecovery::Gbone($x) => $e,
        }
    };
}

/// Congestion control, statically dispatched.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Always line rate.
    None,
    Dcqcn(DcqcnRp),
    Dctcp(Dctcp),
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
            Cc::Dctcp(d) => d.rate(),
        }
    }

    pub fn snd_una(&self) -> u64 {
        each!(&self.recovery, r => r.snd_una())
    }

    pub fn snd_nxt(&self) -> u64 {
        each!(&self.recovery, r => r.snd_nxt())
    }

    fn has_data(&self) -> bool {
        each!(&self.recovery, r => r.has_data())
    }

    pub fn recovery(&self) -> &TxRecovery {
        &self.recovery
    }

    pub fn is_done(&self) -> bool {
        self.done_at.is_some()
    }

    pub fn poll_transmit(&mut self, now: Time, shared: &mut NicState) -> Transmit {
        if self.is_done() || !self.has_data() {
            return Transmit::Idle;
        }
        if now < self.next_send {
            return Transmit::WaitUntil(self.next_send);
        }
        let next = match &mut self.recovery {
            TxRecovery::Gbn(r) => r.next(now),
            TxRecovery::Irn(r) => r.next(now),
            TxRecovery::Melo(r) => r.next_with(now, &mut shared.melo.tx),
            TxRecovery::Gbone(r) => r.next(now),
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
            holes: Default::default(),
            nholes: 0,
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

    /// Handles a control packet (ACK, NAK, NACK, RACK, CNP) from the receiver. `shared` is
    /// the NIC state all queue pairs share (MELO's send pool).
    pub fn handle_segment(&mut self, now: Time, seg: &Segment, shared: &mut NicState) {
        let una = self.snd_una();
        let unwrap = |psn| self.psn.unwrap(psn, una);
        let cum = unwrap(seg.psn);
        match (seg.kind, &mut self.recovery) {
            (SegKind::Ack, rec) => {
                if let Some(cum) = cum {
                    match rec {
                        TxRecovery::Gbn(r) => {
                            r.on_ack(now, cum);
                        }
                        TxRecovery::Irn(r) => r.on_ack(now, cum),
                        TxRecovery::Melo(r) => r.on_ack(now, cum, &mut shared.melo.tx),
                        TxRecovery::Gbone(r) => r.on_ack(now, cum),
                    }
                }
            }
            (SegKind::Nak, TxRecovery::Gbn(r)) => {
                self.stats.naks += 1;
                if let Some(cum) = cum {
                    r.on_nak(now, cum);
                }
            }
            (SegKind::Sack, TxRecovery::Irn(r)) => {
                self.stats.naks += 1;
                if let Some(cum) = cum {
                    r.on_sack(now, cum, unwrap(seg.aux));
                }
            }
            (SegKind::MeloNack, TxRecovery::Melo(r)) => {
                self.stats.naks += 1;
                if let Some(cum) = cum {
                    let mut holes = [(0u64, 0u64); 3];
                    let mut n = 0;
                    for h in &seg.holes[..seg.nholes as usize] {
                        if let Some(start) = unwrap(h.start) {
                            holes[n] = (start, h.len as u64);
                            n += 1;
                        }
                    }
                    r.on_nack(now, cum, &holes[..n], &mut shared.melo.tx);
                }
            }
            (SegKind::Rack, TxRecovery::Gbone(r)) => {
                self.stats.naks += 1;
                if let Some(received) = unwrap(seg.aux) {
                    r.on_rack(received);
                }
            }
            (SegKind::Cnp, _) => {
                self.stats.cnps += 1;
                if let Cc::Dcqcn(rp) = &mut self.cc {
                    rp.on_cnp(now);
                }
            }
            _ => {} // data, or a notification another scheme would send: ignore
        }
        if seg.kind != SegKind::Cnp && seg.kind != SegKind::Data {
            let (una, nxt) = (self.snd_una(), self.snd_nxt());
            if let Cc::Dctcp(d) = &mut self.cc {
                d.on_ack(cum.unwrap_or(una).max(una), seg.ecn, nxt);
            }
        }
        let finished = each!(&self.recovery, r => r.is_done());
        if finished && self.done_at.is_none() {
            self.done_at = Some(now);
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        if self.is_done() {
            return None;
        }
        let rto = each!(&self.recovery, r => r.poll_timeout());
        let cc = match &self.cc {
            Cc::None | Cc::Dctcp(_) => None,
            Cc::Dcqcn(rp) => rp.poll_timeout(),
        };
        match (rto, cc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Time, shared: &mut NicState) {
        let fired = match &mut self.recovery {
            TxRecovery::Gbn(r) => r.handle_timeout(now),
            TxRecovery::Irn(r) => r.handle_timeout(now),
            TxRecovery::Melo(r) => r.handle_timeout(now, &mut shared.melo.tx),
            TxRecovery::Gbone(r) => r.handle_timeout(now),
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
