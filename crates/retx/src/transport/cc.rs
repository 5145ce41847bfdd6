//! Congestion control behind one narrow interface: the sender tells its controller what
//! happened (`on_sent`, `on_ack` with a sample, `on_loss`, `on_cnp`, and its own timers), and
//! the controller answers a sending rate and/or a window of bytes in flight. Controllers are
//! an enum (static dispatch, as smoltcp's `AnyController`); adding one is its own file, one
//! line here and its config section.

use super::dcqcn::{CnpMode, DcqcnRp};
use super::dctcp::Dctcp;
use super::hpcc::Hpcc;
use super::stride_cc::StrideCc;
use super::timely::Timely;
use super::dctcp_window::DctcpWindow;
use super::reno::Reno;
use super::vegas::Vegas;
use super::feedback::{AckSample, Flight};
use crate::sim::units::{Rate, Time};

/// Congestion control, statically dispatched.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Always line rate, no window.
    None,
    Dcqcn(DcqcnRp),
    Dctcp(Dctcp),
    Hpcc(Hpcc),
    Timely(Timely),
    /// Window-based, for `recovery = "tcp"` (and the RDMA schemes).
    Reno(Reno),
    DctcpWindow(DctcpWindow),
    Vegas(Vegas),
    /// STRIDE's Algorithm 1 on the single-trip time.
    Stride(StrideCc),
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
            Cc::Stride(s) => Some(s.rate()),
            Cc::Reno(_) | Cc::DctcpWindow(_) | Cc::Vegas(_) => None,
        }
    }

    /// The most payload bytes in flight (None: no window).
    pub fn window(&self) -> Option<u64> {
        match self {
            Cc::Hpcc(h) => h.window(),
            Cc::Timely(t) => t.window(),
            Cc::Dcqcn(rp) => rp.window(),
            Cc::Dctcp(d) => d.window(),
            Cc::Reno(r) => Some(r.window()),
            Cc::DctcpWindow(d) => Some(d.window()),
            Cc::Vegas(v) => Some(v.window()),
            Cc::None | Cc::Stride(_) => None,
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
            Cc::Reno(r) => r.on_ack(s),
            Cc::DctcpWindow(d) => d.on_ack(s),
            Cc::Vegas(v) => v.on_ack(s),
            // Every ACK and NACK carries the STT of the packet that triggered it.
            Cc::Stride(c) => {
                if let Some(stt) = s.one_way {
                    c.on_stt(stt);
                }
            }
            Cc::Dcqcn(rp) if s.ece && rp.params().cnp == CnpMode::PerMark => {
                rp.on_cnp(now);
                return true;
            }
            _ => {}
        }
        false
    }

    /// The loss recovery scheme learned of a loss (a NAK, NACK, RACK, or TCP's third duplicate
    /// ACK); `f` is what was in flight before it acted.
    pub fn on_loss(&mut self, _now: Time, f: &Flight) {
        match self {
            Cc::Reno(r) => r.on_loss(f),
            Cc::DctcpWindow(d) => d.on_loss(f),
            Cc::Vegas(v) => v.on_loss(f),
            _ => {}
        }
    }

    /// A congestion notification packet arrived.
    pub fn on_cnp(&mut self, now: Time) {
        if let Cc::Dcqcn(rp) = self {
            rp.on_cnp(now);
        }
    }

    /// The retransmission timer fired; `f` is what was in flight before the scheme went back.
    pub fn on_timeout(&mut self, _now: Time, f: &Flight) {
        match self {
            Cc::Reno(r) => r.on_timeout(f),
            Cc::DctcpWindow(d) => d.on_timeout(f),
            Cc::Vegas(v) => v.on_timeout(f),
            _ => {}
        }
    }

    /// The controller's own next deadline (DCQCN's alpha and rate-increase timers).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Cc::None | Cc::Dctcp(_) | Cc::Hpcc(_) | Cc::Timely(_) | Cc::Reno(_) | Cc::DctcpWindow(_) | Cc::Vegas(_) | Cc::Stride(_) => None,
            Cc::Dcqcn(rp) => rp.poll_timeout(),
        }
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if let Cc::Dcqcn(rp) = self {
            rp.handle_timeout(now);
        }
    }
}
