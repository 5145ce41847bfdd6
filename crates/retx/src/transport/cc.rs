//! Congestion control behind one narrow interface: the sender tells its controller what
//! happened (`on_sent`, `on_ack` with a sample, `on_loss`, `on_cnp`, and its own timers), and
//! the controller answers a sending rate and/or a window of bytes in flight. Controllers are
//! an enum (static dispatch, as smoltcp's `AnyController`); adding one is its own file, one
//! line here and its config section.

use super::dcqcn::{CnpMode, DcqcnRp};
use super::dctcp::Dctcp;
use super::hpcc::Hpcc;
use super::timely::Timely;
use crate::sim::units::{Rate, Time};

/// What an acknowledgement (ACK, NAK, NACK, RACK) tells the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Cumulatively acknowledged packet index (all below it arrived), never below snd_una.
    pub cum: u64,
    /// Payload bytes this acknowledgement newly covered.
    pub acked_bytes: u64,
    /// The sender's next new packet index when the acknowledgement arrived.
    pub snd_nxt: u64,
    /// ECN echo: the packet that triggered it was marked.
    pub ece: bool,
    /// Round trip measured from the echoed timestamp (the sender's own clock both ways).
    pub rtt: Option<Time>,
    /// Forward one-way delay: the responder's receive timestamp minus the sender's send
    /// timestamp, each read on its own host's clock (so offsets and drift are included, as in
    /// hardware).
    pub one_way: Option<i64>,
    /// INT hop records echoed by the receiver (empty unless the switches stamp INT).
    pub int: super::int::IntHops,
}

/// Congestion control, statically dispatched.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Always line rate, no window.
    None,
    Dcqcn(DcqcnRp),
    Dctcp(Dctcp),
    Hpcc(Hpcc),
    Timely(Timely),
}

impl Cc {
    /// The pacing rate (None: the line rate).
    pub fn rate(&self) -> Option<Rate> {
        match self {
            Cc::None => None,
            Cc::Dcqcn(rp) => Some(rp.rate()),
            Cc::Dctcp(d) => Some(d.rate()),
            Cc::Hpcc(h) => Some(h.rate()),
            Cc::Timely(t) => Some(t.rate()),
        }
    }

    /// The most payload bytes in flight (None: no window).
    pub fn window(&self) -> Option<u64> {
        match self {
            Cc::Hpcc(h) => h.window(),
            Cc::Timely(t) => t.window(),
            _ => None,
        }
    }

    /// A rate change re-times the packet already paced at the old rate (the HPCC ns-3 model's
    /// `ChangeRate`, which only HPCC calls): the next send moves by the difference of the last
    /// packet's serialisation at the two rates.
    pub fn retimes_pacing(&self) -> bool {
        matches!(self, Cc::Hpcc(_))
    }

    /// `bytes` (on the wire, headers included) were sent.
    pub fn on_sent(&mut self, _now: Time, bytes: u64) {
        if let Cc::Dcqcn(rp) = self {
            rp.on_sent(bytes);
        }
    }

    /// An acknowledgement arrived; returns whether the controller took its ECN echo as a
    /// congestion notification (DCQCN with `cnp = "per-mark"`), for the flow's CNP count.
    pub fn on_ack(&mut self, now: Time, s: &AckSample) -> bool {
        match self {
            Cc::Dctcp(d) => d.on_ack(s.cum, s.ece, s.snd_nxt),
            Cc::Hpcc(h) => h.on_ack(s.cum, s.snd_nxt, &s.int),
            Cc::Timely(t) => t.on_ack(s),
            Cc::Dcqcn(rp) if s.ece && rp.params().cnp == CnpMode::PerMark => {
                rp.on_cnp(now);
                return true;
            }
            _ => {}
        }
        false
    }

    /// The loss recovery scheme learned of a loss (a NAK, NACK or RACK).
    pub fn on_loss(&mut self, _now: Time) {}

    /// A congestion notification packet arrived.
    pub fn on_cnp(&mut self, now: Time) {
        if let Cc::Dcqcn(rp) = self {
            rp.on_cnp(now);
        }
    }

    /// The retransmission timer fired.
    pub fn on_timeout(&mut self, _now: Time) {}

    /// The controller's own next deadline (DCQCN's alpha and rate-increase timers).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Cc::None | Cc::Dctcp(_) | Cc::Hpcc(_) | Cc::Timely(_) => None,
            Cc::Dcqcn(rp) => rp.poll_timeout(),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if let Cc::Dcqcn(rp) = self {
            rp.handle_timeout(now);
        }
    }
}
