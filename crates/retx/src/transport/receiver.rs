//! The responder side of a queue pair: loss recovery, CNP generation and in-order delivery.

use super::dcqcn::DcqcnNp;
use super::gbn::GbnReceiver;
use super::irn::BitmapReceiver;
use super::melo::MeloReceiver;
use super::stride::StrideReceiver;
use super::tcp::TcpReceiver;
use super::poll::{Transmit, Want};
use super::rx_ctx::RxCtx;
use super::segment::{Ecn, SegKind, Segment};
use super::{FlowSpec, NicState};
use crate::sim::units::Time;

/// Receiver loss recovery, statically dispatched.
#[derive(Clone, Debug)]
pub enum RxRecovery {
    Gbn(GbnReceiver),
    /// IRN and Go-Back-ONE: one receiver, told apart by the notification it sends.
    Bitmap(BitmapReceiver),
    Melo(MeloReceiver),
    Tcp(TcpReceiver),
    Stride(StrideReceiver),
}

/// The receive side of one flow.
#[derive(Clone, Debug)]
pub struct Receiver {
    pub ctx: RxCtx,
    recovery: RxRecovery,
    np: Option<DcqcnNp>,
    pub cnps_sent: u64,
}

impl Receiver {
    pub fn new(spec: FlowSpec, recovery: RxRecovery, np: Option<DcqcnNp>) -> Self {
        Receiver { ctx: RxCtx::new(spec), recovery, np, cnps_sent: 0 }
    }

    pub fn recovery(&self) -> &RxRecovery {
        &self.recovery
    }

    /// For MELO receivers: leave / rejoin the NIC's on-chip QP cache (see
    /// [`MeloReceiver::swap_out`]), returning the bitmap blocks moved. Other schemes keep no
    /// bitmap in a shared pool: nothing to move.
    pub fn swap_out(&mut self, shared: &mut NicState) -> u32 {
        match &mut self.recovery {
            RxRecovery::Melo(r) => r.swap_out(&mut shared.melo.rx),
            _ => 0,
        }
    }

    /// None if the state cannot come back on chip.
    pub fn swap_in(&mut self, shared: &mut NicState) -> Option<u32> {
        match &mut self.recovery {
            RxRecovery::Melo(r) => r.swap_in(&mut shared.melo.rx),
            _ => Some(0),
        }
    }

    /// Reorder-buffer traffic and receiver-side drops: (bytes stored out of order, bytes
    /// copied out to the application when a hole filled, packets dropped for lack of state).
    pub fn reorder_stats(&self) -> (u64, u64, u64) {
        match &self.recovery {
            RxRecovery::Gbn(_) | RxRecovery::Stride(_) => (0, 0, 0),
            RxRecovery::Bitmap(r) => (r.stored_bytes, r.copied_bytes, r.beyond_bitmap),
            RxRecovery::Melo(r) => (r.stored_bytes, r.copied_bytes, r.dropped_middle + r.dropped_no_bits + r.swap_in_failures),
            RxRecovery::Tcp(r) => (r.stored_bytes, r.copied_bytes, 0),
        }
    }

    /// Handles a data packet from the network (anything else is not for a responder, but for
    /// STRIDE's connection packets). `shared`
    /// is the NIC state all queue pairs share (MELO's receive pool).
    pub fn handle_packet(&mut self, now: Time, seg: &Segment, shared: &mut NicState) {
        if seg.kind != SegKind::Data {
            if let RxRecovery::Stride(r) = &mut self.recovery {
                r.on_control(now, seg, &mut self.ctx);
            }
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
        let queued = self.ctx.out.len();
        match &mut self.recovery {
            RxRecovery::Gbn(r) => r.on_data(now, index, seg, &mut self.ctx),
            RxRecovery::Bitmap(r) => r.on_data(now, index, seg, &mut self.ctx),
            RxRecovery::Melo(r) => r.on_data(now, index, seg, &mut self.ctx, &mut shared.melo.rx),
            RxRecovery::Tcp(r) => r.on_data(now, index, seg, &mut self.ctx),
            RxRecovery::Stride(r) => r.on_data(now, index, seg, &mut self.ctx),
        }
        if matches!(self.recovery, RxRecovery::Tcp(_)) {
            return; // TCP's receiver sets the echo itself (RFC 8257's state machine)
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
    /// are never held back. A responder has no data of its own.
    pub fn poll_transmit(&mut self, _now: Time, _nic: &mut NicState, _want: Want) -> Transmit {
        match self.ctx.out.pop_front() {
            Some(seg) => Transmit::Send(seg),
            None => Transmit::Idle,
        }
    }

    /// A responder of today's schemes keeps no timer (a future delayed-ACK or grant timer
    /// would live here).
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }

    pub fn handle_timeout(&mut self, _now: Time, _nic: &mut NicState) {}

    pub fn is_done(&self) -> bool {
        self.ctx.done_at.is_some()
    }

    /// Frees the reorder state once the whole message is delivered (a late duplicate is only
    /// acknowledged); the counters stay for the flow's record.
    pub fn release(&mut self) {
        match &mut self.recovery {
            RxRecovery::Bitmap(r) => r.release(),
            RxRecovery::Melo(r) => r.release(),
            RxRecovery::Gbn(_) | RxRecovery::Tcp(_) | RxRecovery::Stride(_) => {}
        }
    }
}
