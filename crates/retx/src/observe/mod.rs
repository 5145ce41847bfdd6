//! One observation hook, called by the engine at enqueue, dequeue, wire, drop and delivery.
//! The default observer does nothing and compiles away (the simulation is generic over it), so
//! runs that record nothing pay nothing; time series, traces and pcap export ([`pcap`]) are
//! observers.

pub mod pcap;

use crate::net::packet::Packet;
use crate::sim::units::Time;
use crate::transport::FlowSpec;

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
    /// A transport packet arrived at host node `host` off its link (before the NIC's receive
    /// pipeline, which may hold it or drop it).
    fn receive(&mut self, _now: Time, _host: usize, _pkt: &Packet) {}
    /// Flow `flow` started: both its endpoints exist, the requester is about to send.
    fn flow_start(&mut self, _now: Time, _flow: u32, _spec: &FlowSpec) {}
}

/// An observer lent to a simulation: the caller keeps it, and reads it after the run.
impl<O: Observer + ?Sized> Observer for &mut O {
    fn enqueue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
        (**self).enqueue(now, port, queue, pkt, queued)
    }
    fn dequeue(&mut self, now: Time, port: usize, queue: usize, pkt: &Packet, queued: u64) {
        (**self).dequeue(now, port, queue, pkt, queued)
    }
    fn wire(&mut self, now: Time, port: usize, pkt: &Packet) {
        (**self).wire(now, port, pkt)
    }
    fn drop(&mut self, now: Time, port: usize, pkt: &Packet, cause: DropCause) {
        (**self).drop(now, port, pkt, cause)
    }
    fn deliver(&mut self, now: Time, host: usize, flow: u32, bytes: u64) {
        (**self).deliver(now, host, flow, bytes)
    }
    fn receive(&mut self, now: Time, host: usize, pkt: &Packet) {
        (**self).receive(now, host, pkt)
    }
    fn flow_start(&mut self, now: Time, flow: u32, spec: &FlowSpec) {
        (**self).flow_start(now, flow, spec)
    }
}

/// The observer that records nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}
