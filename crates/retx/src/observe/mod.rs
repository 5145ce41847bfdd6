//! One observation hook, called by the engine at enqueue, dequeue, wire, drop and delivery.
//! The default observer does nothing and compiles away (the simulation is generic over it), so
//! runs that record nothing pay nothing; time series, traces and pcap export ([`pcap`]) are
//! observers.

pub mod hw_trace;
pub mod pcap;

use crate::net::packet::Packet;
use crate::sim::units::Time;
use crate::transport::Endpoint;
use crate::transport::{FlowSpec, NicAgent};
pub use hw_trace::StepBefore;

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
    /// Whether the engine should call [`Observer::endpoint_step`]. Only a tracer of hardware
    /// operations says yes; for every other observer this is a constant false, and the
    /// engine's snapshot before each packet compiles away with the call.
    fn wants_steps(&self) -> bool {
        false
    }
    /// An endpoint of flow `flow` at host `host` took a packet: `before` is its snapshot from
    /// just before, `ep` and `nic` its state (and its NIC's) just after.
    fn endpoint_step(&mut self, _host: usize, _flow: u32, _before: &StepBefore, _ep: &Endpoint, _nic: &NicAgent) {}
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
    fn wants_steps(&self) -> bool {
        (**self).wants_steps()
    }
    fn endpoint_step(&mut self, host: usize, flow: u32, before: &StepBefore, ep: &Endpoint, nic: &NicAgent) {
        (**self).endpoint_step(host, flow, before, ep, nic)
    }
}

/// The observer that records nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}
