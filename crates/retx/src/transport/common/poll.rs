//! What the engine asks an endpoint for when it polls it, and what the endpoint answers.

use super::segment::Segment;
use crate::sim::units::Time;

/// What the engine asks an endpoint for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Only responses the last input triggered (they go out at once, at high priority).
    Responses,
    /// Anything: the NIC scheduler offers the wire.
    Any,
}

/// What an endpoint wants to do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transmit {
    Send(Segment),
    /// Has data but the rate limiter (or a timer) holds it until then.
    WaitUntil(Time),
    /// Nothing to send until a packet or timer arrives.
    Idle,
}
