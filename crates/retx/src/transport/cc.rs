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
pub use super::congestion::CongestionControl;


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
    #[cfg(test)]
    TutorialAimd(super::tutorial_aimd::Aimd),
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
            #[cfg(test)]
            Cc::TutorialAimd($c) => $e,
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
