//! One observation hook, called by the engine at enqueue, dequeue, wire, drop and delivery.
//! The default observer does nothing and compiles away (the simulation is generic over it), so
//! runs that record nothing pay nothing; time series, traces and pcap export are observers.

use crate::net::packet::Packet;
use crate::sim::units::Time;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// A loss model of the port's wire.
    Loss,
    /// The switch's shared buffer or the queue's threshold.
    Buffer,
    /// No route to the destination.
    Unroutable,
}

/// Receives the engine's events. Every method has a default that does nothing.
pub trait Observer {
    /// A packet joined egress queue `queue` of `port`, which now holds `queued` bytes.
    fn enqueue(&mut self, _now: Time, _port: usize, _queue: usize, _pkt: &Packet, _queued: u64) {}
    /// A packet left egress queue `queue` of `port`, leaving `queued` bytes.
    fn dequeue(&mut self, _now: Time, _port: usize, _queue: usize, _pkt: &Packet, _queued: u64) {}
    /// A packet started serialising on `port` (every hop counts).
    fn wire(&mut self, _now: Time, _port: usize, _pkt: &Packet) {}
    /// A packet was dropped at `port` (its egress or ingress port).
    fn drop(&mut self, _now: Time, _port: usize, _pkt: &Packet, _cause: DropCause) {}
    /// `bytes` of flow `flow` were delivered in order to the application at `host`.
    fn deliver(&mut self, _now: Time, _host: usize, _flow: u32, _bytes: u64) {}
}

/// The observer that records nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}
