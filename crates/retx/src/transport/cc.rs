//! Congestion control behind one narrow interface, the [`CongestionControl`] trait: the sender
//! tells its controller what happened (`on_sent`, `on_ack` with a sample, `on_loss`, `on_cnp`,
//! and its own timers), and the controller answers a sending rate and/or a window of bytes in
//! flight. Controllers are stored in an enum and dispatched statically (smoltcp's
//! `AnyController`); adding one is its own file with its `impl CongestionControl`, one variant
//! and one arm of `dispatch!` here, and its config section.

use super::dcqcn::DcqcnRp;
use super::dctcp::Dctcp;
use super::hpcc::Hpcc;
use super::stride_cc::StrideCc;
use super::timely::Timely;
use super::dctcp_window::DctcpWindow;
use super::reno::Reno;
use super::vegas::Vegas;
use super::feedback::{AckSample, Flight};
use crate::sim::units::{Rate, Time};

/// What a congestion controller is told and what it answers: one signature per event, every
/// method with a default that does nothing (quinn's `Controller`, smoltcp's `Controller`), so a
/// controller implements only what it reacts to, in its own file.
pub trait CongestionControl {
    /// The pacing rate (None: the line rate).
    fn rate(&self) -> Option<Rate> {
        None
    }
    /// The most payload bytes in flight (None: no window).
    fn window(&self) -> Option<u64> {
        None
    }
    /// A rate change re-times the packet already paced at the old rate (the HPCC ns-3 model's
    /// `ChangeRate`, which only HPCC calls): the next send moves by the difference of the last
    /// packet's serialisation at the two rates.
    fn retimes_pacing(&self) -> bool {
        false
    }
    /// `bytes` (on the wire, headers included) were sent.
    fn on_sent(&mut self, _now: Time, _bytes: u64) {}
    /// An acknowledgement arrived; returns whether the controller took its ECN echo as a
    /// congestion notification (DCQCN with `cnp = "per-mark"`), for the flow's CNP count.
    fn on_ack(&mut self, _now: Time, _sample: &AckSample) -> bool {
        false
    }
    /// The loss recovery scheme learned of a loss (a NAK, NACK, RACK, or TCP's third
    /// duplicate ACK); `flight` is what was in flight before it acted.
    fn on_loss(&mut self, _now: Time, _flight: &Flight) {}
    /// A congestion notification packet arrived.
    fn on_cnp(&mut self, _now: Time) {}
    /// The retransmission timer fired; `flight` is what was in flight before the scheme went
    /// back.
    fn on_timeout(&mut self, _now: Time, _flight: &Flight) {}
    /// The controller's own next deadline (DCQCN's alpha and rate-increase timers).
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time) {}
}

/// No congestion control: always the line rate, no window.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {}

/// Congestion control, statically dispatched: enum storage, and the trait implemented on it by
/// one `match` per method that hands the call to the variant's own implementation.
#[derive(Clone, Debug)]
pub enum Cc {
    /// Always line rate, no window.
    None(NoCc),
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

/// Hands a call to whichever controller a [`Cc`] holds.
macro_rules! dispatch {
    ($cc:expr, $c:ident => $e:expr) => {
        match $cc {
            Cc::None($c) => $e,
            Cc::Dcqcn($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::Hpcc($c) => $e,
            Cc::Timely($c) => $e,
            Cc::Reno($c) => $e,
            Cc::DctcpWindow($c) => $e,
            Cc::Vegas($c) => $e,
            Cc::Stride($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn rate(&self) -> Option<Rate> {
        dispatch!(self, c => CongestionControl::rate(c))
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, c => CongestionControl::window(c))
    }
    #[inline]
    fn retimes_pacing(&self) -> bool {
        dispatch!(self, c => c.retimes_pacing())
    }
    #[inline]
    fn on_sent(&mut self, now: Time, bytes: u64) {
        dispatch!(self, c => CongestionControl::on_sent(c, now, bytes))
    }
    #[inline]
    fn on_ack(&mut self, now: Time, sample: &AckSample) -> bool {
        dispatch!(self, c => CongestionControl::on_ack(c, now, sample))
    }
    #[inline]
    fn on_loss(&mut self, now: Time, flight: &Flight) {
        dispatch!(self, c => CongestionControl::on_loss(c, now, flight))
    }
    #[inline]
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, c => CongestionControl::on_cnp(c, now))
    }
    #[inline]
    fn on_timeout(&mut self, now: Time, flight: &Flight) {
        dispatch!(self, c => CongestionControl::on_timeout(c, now, flight))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        dispatch!(self, c => CongestionControl::poll_timeout(c))
    }
    #[inline]
    fn handle_timeout(&mut self, now: Time) {
        dispatch!(self, c => CongestionControl::handle_timeout(c, now))
    }
}
