//! The transport contract: both ends of a connection are endpoints with the same four calls,
//! no clock and no I/O (quinn-proto's shape). Time comes in with every input, packets go out
//! when pulled:
//!
//! - `handle_packet(now, &seg, &mut NicState)`: a packet addressed to this endpoint arrived;
//! - `handle_timeout(now, &mut NicState)`: its deadline passed (or NIC-wide state woke it);
//! - `poll_transmit(now, &mut NicState, want) -> Send(seg) | WaitUntil(t) | Idle`;
//! - `poll_timeout() -> Option<Time>`: when to call `handle_timeout` next.
//!
//! `now` is the endpoint's host clock. The engine hands a packet to the endpoint it is
//! addressed to (connection and direction), never by its kind, so a receiver may speak first.
//! After every input the engine collects the endpoint's responses (`Want::Responses`: ACKs,
//! NAKs, CNPs, never held back) into the NIC's priority queue; when the NIC scheduler offers
//! the wire it asks for anything (`Want::Any`), which the endpoint gates by pacing, window and
//! credits.
//!
//! State shared by the queue pairs of a NIC lives in [`NicState`], which has a timer of its own
//! with the same shape: `NicState::poll_timeout() -> Option<Time>` and
//! `NicState::handle_timeout(now, &mut wake)`, on the host clock, one pending event per NIC.
//! During every endpoint call `NicState::qp` holds the calling queue pair's number; NIC-wide
//! state that queues work for a queue pair (a gather FIFO holding its packets) notes it, and
//! when a NIC-wide timeout completes that work it pushes the number to `wake`. The engine then
//! calls that endpoint's `handle_timeout` and collects its output as after any input. So
//! `handle_timeout` means "your deadline passed, or NIC-wide state has news for you": an
//! endpoint checks its own deadlines against `now` (an early call changes nothing) and reads
//! the news from `NicState`.
//!
//! A scheme with an on-chip QP-context cache declares what moving a context costs
//! ([`super::SwapCost`], from `Template::qp_swap`); `swap_out`/`swap_in` charge it to the
//! NIC's receive pipeline, and the engine delays the packet that missed by it (and, waiting in
//! order, the packets behind it).

use super::receiver::Receiver;
use super::poll::{Transmit, Want};
use super::sender::Sender;
use super::NicState;
use crate::sim::units::Time;

/// One end of a connection.
// Not boxed although the requester is much larger: endpoints live in the NIC's QP tables and
// every packet reaches one, so a box would add a pointer chase per packet.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// The side that sends the message (the RDMA requester).
    Requester(Sender),
    /// The side that receives it (the responder).
    Responder(Receiver),
}

impl Endpoint {
    pub fn handle_packet(&mut self, now: Time, seg: &super::segment::Segment, nic: &mut NicState) {
        match self {
            Endpoint::Requester(s) => s.handle_packet(now, seg, nic),
            Endpoint::Responder(r) => r.handle_packet(now, seg, nic),
        }
    }

    pub fn handle_timeout(&mut self, now: Time, nic: &mut NicState) {
        match self {
            Endpoint::Requester(s) => s.handle_timeout(now, nic),
            Endpoint::Responder(r) => r.handle_timeout(now, nic),
        }
    }

    pub fn poll_transmit(&mut self, now: Time, nic: &mut NicState, want: Want) -> Transmit {
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

    /// Whether the endpoint sends data of its own through the NIC scheduler (a responder of
    /// today's schemes only answers; a receiver-driven one would send grants or credits).
    pub fn sends_data(&self) -> bool {
        matches!(self, Endpoint::Requester(_))
    }

    /// Payload bytes delivered in order to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        match self {
            Endpoint::Requester(_) => 0,
            Endpoint::Responder(r) => r.ctx.delivered_bytes,
        }
    }

    /// The whole message is acknowledged (requester) or delivered (responder).
    pub fn is_done(&self) -> bool {
        match self {
            Endpoint::Requester(s) => s.is_done(),
            Endpoint::Responder(r) => r.is_done(),
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

    pub fn as_sender(&self) -> Option<&Sender> {
        match self {
            Endpoint::Requester(s) => Some(s),
            Endpoint::Responder(_) => None,
        }
    }

    pub fn as_receiver(&self) -> Option<&Receiver> {
        match self {
            Endpoint::Requester(_) => None,
            Endpoint::Responder(r) => Some(r),
        }
    }

    /// Leaves the NIC's on-chip context cache (see [`Receiver::swap_out`]), charging the
    /// receive pipeline what the scheme declared a swap costs ([`NicState::swap_cost`]).
    pub fn swap_out(&mut self, nic: &mut NicState) {
        let blocks = match self {
            Endpoint::Responder(r) => r.swap_out(nic),
            Endpoint::Requester(_) => 0,
        };
        nic.charge(nic.swap_cost.of(blocks));
    }

    /// Rejoins it, charged likewise. False if the scheme cannot bring its state back on chip
    /// (MELO: no free blocks); the failed attempt still costs one context's fixed time.
    pub fn swap_in(&mut self, nic: &mut NicState) -> bool {
        let moved = match self {
            Endpoint::Responder(r) => r.swap_in(nic),
            Endpoint::Requester(_) => Some(0),
        };
        nic.charge(nic.swap_cost.of(moved.unwrap_or(0)));
        moved.is_some()
    }
}
