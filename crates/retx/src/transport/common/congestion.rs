//! The congestion-control contract: what a controller is told and what it answers. Its own
//! file so that the controllers (which implement it) and the `Cc` enum (which stores them, in
//! `cc.rs`) both depend on it and not on each other (the registry, `transport/schemes.rs`, generates
//! the `Cc` enum).

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
