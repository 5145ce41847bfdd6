//! The responder side of a queue pair: loss recovery, CNP generation and in-order delivery.

use super::cnp::CnpPacer;
use super::poll::{Transmit, Want};
use super::recovery::ReceiveRecovery;
use super::rx_ctx::RxCtx;
use super::segment::{Ecn, SegKind, Segment};
use super::agent::NicCall;
use super::flow::FlowSpec;
use crate::sim::units::Time;

/// The receive side of one flow.
#[derive(Clone, Debug)]
pub struct Receiver<X> {
    pub ctx: RxCtx,
    recovery: X,
    np: Option<CnpPacer>,
    pub cnps_sent: u64,
}

impl<X: ReceiveRecovery> Receiver<X> {
    pub fn new(spec: FlowSpec, recovery: X, np: Option<CnpPacer>) -> Self {
        let mut ctx = RxCtx::new(spec);
        ctx.completes_flow = recovery.completes_flow();
        Receiver { ctx, recovery, np, cnps_sent: 0 }
    }

    pub fn recovery(&self) -> &X {
        &self.recovery
    }

    /// Leaves / rejoins the NIC's on-chip QP cache, returning the bitmap blocks moved (the
    /// scheme's [`ReceiveRecovery::swap_out`]; None: the state cannot come back on chip).
    pub fn swap_out(&mut self, shared: &mut NicCall<'_>) -> u32 {
        self.recovery.swap_out(shared)
    }

    pub fn swap_in(&mut self, shared: &mut NicCall<'_>) -> Option<u32> {
        self.recovery.swap_in(shared)
    }

    /// Reorder-buffer traffic and receiver-side drops: (bytes stored out of order, bytes
    /// copied out to the application when a hole filled, packets dropped for lack of state).
    pub fn reorder_stats(&self) -> (u64, u64, u64) {
        self.recovery.reorder_stats()
    }

    /// Handles a packet from the network: data goes to the loss recovery (which queues the
    /// responses), anything else to its connection handling (STRIDE's SYN and FIN). `shared`
    /// is the NIC state all queue pairs share (MELO's receive pool).
    pub fn handle_packet(&mut self, now: Time, seg: &Segment, shared: &mut NicCall<'_>) {
        if seg.kind != SegKind::Data {
            self.recovery.on_connection(now, seg, &mut self.ctx);
            return;
        }
        let marked = seg.ecn == Ecn::Ce;
        if let Some(np) = self.np.as_mut() {
            if np.on_data(now, marked) {
                self.cnps_sent += 1;
                self.ctx.send(Segment::reply(SegKind::Cnp, seg.psn, now, seg));
            }
        }
        // A PSN from before the QP's first packet is garbage: drop it.
        let Some(index) = self.ctx.index_of(seg.psn) else { return };
        if seg.trimmed {
            return self.recovery.on_trimmed(now, index, seg, &mut self.ctx, shared);
        }
        let queued = self.ctx.out.len();
        self.recovery.on_data(now, index, seg, &mut self.ctx, shared);
        if self.recovery.echoes_congestion() {
            return; // the scheme sets the echo itself (TCP: RFC 8257's state machine)
        }
        // Echo congestion on what this packet triggered (DCTCP's ECE; HPCC sets the CNP flag
        // of the ACK/NACK the same way).
        for c in self.ctx.out.iter_mut().skip(queued) {
            if c.kind != SegKind::Cnp {
                c.ece = marked;
            }
        }
    }

    /// The next response to send (ACK, NAK, NACK, RACK, CNP), whatever is asked: responses
    /// are never held back. Offered the wire (`Want::Any`), what the scheme's receive side
    /// sends on its own, paced (grants, credits): nothing for today's schemes.
    ///
    /// What the scheme left unsized goes as the flow's responses do (its priority and size:
    /// [`super::flow::Marking`]).
    pub fn poll_transmit(&mut self, now: Time, nic: &mut NicCall<'_>, want: Want) -> Transmit {
        let sent = match self.ctx.out.pop_front() {
            Some(seg) => Transmit::Send(seg),
            None if want == Want::Any => self.recovery.poll_transmit(now, &mut self.ctx, nic),
            None => Transmit::Idle,
        };
        match sent {
            Transmit::Send(mut seg) if seg.wire_bytes == 0 => {
                let m = &self.ctx.spec().marking;
                (seg.priority, seg.wire_bytes) = (m.response_priority, m.response_bytes);
                Transmit::Send(seg)
            }
            other => other,
        }
    }

    /// The receive side's own deadline: its scheme's (a delayed ACK, a grant timer).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.recovery.poll_timeout()
    }

    /// The receive side's deadline passed, or its NIC's agent woke it with news (a gather
    /// FIFO of LEFT closed): the scheme checks its own deadlines against `now`, as the send
    /// side does.
    pub fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) {
        self.recovery.handle_timeout(now, &mut self.ctx, nic);
    }

    pub fn is_done(&self) -> bool {
        self.ctx.done_at.is_some()
    }

    /// Whether the receive side may have something to send when offered the wire (a scheme
    /// whose receiver paces grants or credits).
    pub fn wants_wire(&self) -> bool {
        !self.ctx.out.is_empty() || self.recovery.wants_wire()
    }

    /// Frees the reorder state once the whole message is delivered (a late duplicate is only
    /// acknowledged); the counters stay for the flow's record.
    pub fn release(&mut self) {
        self.recovery.release();
    }
}
