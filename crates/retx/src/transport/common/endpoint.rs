//! The transport contract: both ends of a connection are endpoints with the same four calls,
//! no clock and no I/O (quinn-proto's shape). Time comes in with every input, packets go out
//! when pulled:
//!
//! - `handle_packet(now, &seg, &mut NicAgent)`: a packet addressed to this endpoint arrived;
//! - `handle_timeout(now, &mut NicAgent)`: its deadline passed (or NIC-wide state woke it);
//! - `poll_transmit(now, &mut NicAgent, want) -> Send(seg) | WaitUntil(t) | Idle`;
//! - `poll_timeout() -> Option<Time>`: when to call `handle_timeout` next.
//!
//! `now` is the endpoint's host clock. The engine hands a packet to the endpoint it is
//! addressed to (connection and direction), never by its kind, so a receiver may speak first.
//! After every input the engine collects the endpoint's responses (`Want::Responses`: ACKs,
//! NAKs, CNPs, never held back) into the NIC's priority queue; when the NIC scheduler offers
//! the wire it asks for anything (`Want::Any`), which the endpoint gates by pacing, window and
//! credits.
//!
//! State shared by the queue pairs of a NIC lives in [`NicAgent`], which has a timer of its own
//! with the same shape: `NicAgent::poll_timeout() -> Option<Time>` and
//! `NicAgent::handle_timeout(now, &mut wake)`, on the host clock, one pending event per NIC.
//! During every endpoint call `NicAgent::qp` holds the calling queue pair's number; NIC-wide
//! state that queues work for a queue pair (a gather FIFO holding its packets) notes it, and
//! when a NIC-wide timeout completes that work it pushes the number to `wake`. The engine then
//! calls that endpoint's `handle_timeout` and collects its output as after any input. So
//! `handle_timeout` means "your deadline passed, or NIC-wide state has news for you": an
//! endpoint checks its own deadlines against `now` (an early call changes nothing) and reads
//! the news from `NicAgent`.
//!
//! A scheme with an on-chip QP-context cache declares what moving a context costs
//! ([`super::flow::SwapCost`], from `Template::qp_swap`); `swap_out`/`swap_in` charge it to the
//! NIC's receive pipeline, and the engine delays the packet that missed by it (and, waiting in
//! order, the packets behind it).

use super::agent::NicCall;
use super::congestion::CongestionControl;
use super::poll::{Transmit, Want};
use super::receiver::Receiver;
use super::recovery::{ReceiveRecovery, SendRecovery};
use super::sender::Sender;
use crate::sim::units::Time;

/// What one end of a connection counts for its flow's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndRecord {
    /// What it sent: packets, bytes, retransmissions, notifications received, timeouts.
    pub sent: super::sender::SenderStats,
    pub delivered_bytes: u64,
    pub bad_deliveries: u64,
    pub reorder_stored_bytes: u64,
    pub reorder_copied_bytes: u64,
    pub rx_dropped: u64,
}

impl EndRecord {
    /// Both ends' counts together.
    pub fn merge(self, o: EndRecord) -> EndRecord {
        let (a, b) = (self.sent, o.sent);
        EndRecord {
            sent: super::sender::SenderStats {
                sent_pkts: a.sent_pkts + b.sent_pkts,
                sent_bytes: a.sent_bytes + b.sent_bytes,
                retx_pkts: a.retx_pkts + b.retx_pkts,
                retx_bytes: a.retx_bytes + b.retx_bytes,
                notifications: a.notifications.merge(b.notifications),
                timeouts: a.timeouts + b.timeouts,
                cnps: a.cnps + b.cnps,
            },
            delivered_bytes: self.delivered_bytes + o.delivered_bytes,
            bad_deliveries: self.bad_deliveries + o.bad_deliveries,
            reorder_stored_bytes: self.reorder_stored_bytes + o.reorder_stored_bytes,
            reorder_copied_bytes: self.reorder_copied_bytes + o.reorder_copied_bytes,
            rx_dropped: self.rx_dropped + o.rx_dropped,
        }
    }
}

/// An end's congestion control as the run's outputs read it.
#[derive(Clone, Copy, Debug)]
pub struct CcView<'a, C> {
    pub cc: &'a C,
    /// The pacing rate now (the line rate without a rate limit).
    pub rate: crate::sim::units::Rate,
    /// Payload bytes sent and not yet acknowledged.
    pub in_flight: u64,
    pub done: bool,
}

/// Which side of its connection an end is: it sends the message or receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The side that sends the message (the RDMA requester).
    Requester,
    /// The side that receives it (the responder).
    Responder,
}

/// One end of a connection: the send side's shell around the scheme's sender and controller,
/// or the receive side's around its receiver (the run's are the registry's enums:
/// `transport::Endpoint`).
// Not boxed although the requester is much larger: endpoints live in the NIC's QP tables and
// every packet reaches one, so a box would add a pointer chase per packet. One struct holding
// both halves (quinn's `Connection` with its `Side`) would make every end as large as both.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Endpoint<R, X, C> {
    /// The side that sends the message (the RDMA requester).
    Requester(Sender<R, C>),
    /// The side that receives it (the responder).
    Responder(Receiver<X>),
}

impl<R: SendRecovery, X: ReceiveRecovery, C: CongestionControl> Endpoint<R, X, C> {
    /// Which side of its connection this end is.
    pub fn side(&self) -> Side {
        match self {
            Endpoint::Requester(_) => Side::Requester,
            Endpoint::Responder(_) => Side::Responder,
        }
    }

    pub fn handle_packet(&mut self, now: Time, seg: &super::segment::Segment, nic: &mut NicCall<'_>) {
        match self {
            Endpoint::Requester(s) => s.handle_packet(now, seg, nic),
            Endpoint::Responder(r) => r.handle_packet(now, seg, nic),
        }
    }

    pub fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) {
        match self {
            Endpoint::Requester(s) => s.handle_timeout(now, nic),
            Endpoint::Responder(r) => r.handle_timeout(now, nic),
        }
    }

    // Inlined into the engine's two calls (after every input, `Want::Responses`; when the NIC
    // offers the wire, `Want::Any`): the receive side's poll is then inlined there with `want`
    // known, and the send side's stays one function called directly, with no frame between.
    #[inline(always)]
    pub fn poll_transmit(&mut self, now: Time, nic: &mut NicCall<'_>, want: Want) -> Transmit {
        match self {
            Endpoint::Requester(s) => s.poll_transmit(now, nic, want),
            Endpoint::Responder(r) => r.poll_transmit(now, nic, want),
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Endpoint::Requester(s) => s.poll_timeout(),
            Endpoint::Responder(r) => r.poll_timeout(),
        }
    }

    /// Whether the end may have something to send when the NIC offers it the wire, so that
    /// the NIC scheduler should poll it after an input (a sender until it is done; a receive
    /// side that paces grants or credits, when it has some to give).
    pub fn wants_wire(&self) -> bool {
        match self {
            Endpoint::Requester(_) => true,
            Endpoint::Responder(r) => r.wants_wire(),
        }
    }

    /// Whether the end's context competes for the NIC's on-chip QP cache (the receive state
    /// a scheme keeps there: MELO's bitmaps). The cache's swaps are charged as the scheme says.
    pub fn in_qp_cache(&self) -> bool {
        matches!(self, Endpoint::Responder(_))
    }

    /// When this end judged its flow complete (on its host's clock), if it has: the end whose
    /// view is the flow's completion time (the sender, once every byte is acknowledged; the
    /// receiver of an unreliable delivery, once it judged the message over).
    pub fn completed_at(&self) -> Option<Time> {
        match self {
            Endpoint::Requester(s) => s.done_at,
            Endpoint::Responder(r) if r.ctx.completes_flow => r.ctx.done_at,
            Endpoint::Responder(_) => None,
        }
    }

    /// This end has received its flow's whole message (the receiving side, once every byte is
    /// delivered in order): what the workload's triggers on receipt wait for.
    pub fn received_all(&self) -> bool {
        matches!(self, Endpoint::Responder(r) if r.is_done())
    }

    /// Payload bytes delivered in order to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        match self {
            Endpoint::Requester(_) => 0,
            Endpoint::Responder(r) => r.ctx.delivered_bytes,
        }
    }

    /// This end has nothing more to do: the whole message is acknowledged (sending side) or
    /// delivered (receiving side).
    pub fn is_done(&self) -> bool {
        match self {
            Endpoint::Requester(s) => s.is_done(),
            Endpoint::Responder(r) => r.is_done(),
        }
    }

    /// What this end counts for its flow's record; a flow's record merges both ends'.
    pub fn record(&self) -> EndRecord {
        match self {
            Endpoint::Requester(s) => {
                let notifications = s.stats.notifications.merge(s.recovery().notifications());
                EndRecord { sent: super::sender::SenderStats { notifications, ..s.stats }, ..EndRecord::default() }
            }
            Endpoint::Responder(r) => {
                let (stored, copied, dropped) = r.reorder_stats();
                EndRecord {
                    delivered_bytes: r.ctx.delivered_bytes,
                    bad_deliveries: r.ctx.bad_deliveries,
                    reorder_stored_bytes: stored,
                    reorder_copied_bytes: copied,
                    rx_dropped: dropped,
                    ..EndRecord::default()
                }
            }
        }
    }

    /// The congestion control state this end runs, if it runs one: for the `[output]
    /// cc_flows` series and the schemes' run report.
    pub fn cc_view(&self) -> Option<CcView<'_, C>> {
        match self {
            Endpoint::Requester(s) => Some(CcView { cc: s.cc(), rate: s.rate(), in_flight: (s.snd_nxt() - s.snd_una()) * s.spec().mtu as u64, done: s.is_done() }),
            Endpoint::Responder(_) => None,
        }
    }

    /// The connection is over at this end: per-packet state (bitmaps, reorder tags,
    /// retransmission queues) is freed; what its flow record reads stays.
    pub fn release(&mut self) {
        match self {
            Endpoint::Requester(s) => s.release(),
            Endpoint::Responder(r) => r.release(),
        }
    }

    pub fn as_sender(&self) -> Option<&Sender<R, C>> {
        match self {
            Endpoint::Requester(s) => Some(s),
            Endpoint::Responder(_) => None,
        }
    }

    pub fn as_receiver(&self) -> Option<&Receiver<X>> {
        match self {
            Endpoint::Requester(_) => None,
            Endpoint::Responder(r) => Some(r),
        }
    }

    /// Leaves the NIC's on-chip context cache (see [`Receiver::swap_out`]), charging the
    /// receive pipeline what the scheme declared a swap costs ([`NicAgent::swap_cost`]).
    pub fn swap_out(&mut self, nic: &mut NicCall<'_>) {
        let blocks = match self {
            Endpoint::Responder(r) => r.swap_out(nic),
            Endpoint::Requester(_) => 0,
        };
        let cost = nic.swap_cost.of(blocks);
        nic.charge(cost);
    }

    /// Rejoins it, charged likewise. False if the scheme cannot bring its state back on chip
    /// (MELO: no free blocks); the failed attempt still costs one context's fixed time.
    pub fn swap_in(&mut self, nic: &mut NicCall<'_>) -> bool {
        let moved = match self {
            Endpoint::Responder(r) => r.swap_in(nic),
            Endpoint::Requester(_) => Some(0),
        };
        let cost = nic.swap_cost.of(moved.unwrap_or(0));
        nic.charge(cost);
        moved.is_some()
    }
}
