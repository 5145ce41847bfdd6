//! What the sender tells its congestion controller: the sample an acknowledgement carries,
//! and what was in flight when a loss or timeout was detected. Controllers read these; the
//! sender fills them in.

use super::int::IntHops;
use crate::sim::units::Time;

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
    pub int: IntHops,
}

/// What the sender had in flight when it detected a loss or its timer expired, read before
/// the recovery scheme acted on it (a NAK or a timeout rewinds snd_nxt): window controllers
/// size their cut from it (RFC 5681's FlightSize) and hold it until the cumulative ACK passes
/// `snd_nxt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flight {
    /// Payload bytes sent and not cumulatively acknowledged.
    pub bytes: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}
