//! Loss recovery behind two traits, one per side of a connection: what the send side and the
//! receive side of a scheme are asked, one signature per event, with defaults for what most
//! schemes do not need. A scheme's quirks live behind these methods in its own file (TCP's
//! window inflation, STRIDE's connection packets, MELO's pools and its QP-cache swaps, IRN's
//! retransmissions past a closed window), so the sender and receiver shells never name a
//! scheme. The shells store the schemes in enums (`TxRecovery`, `RxRecovery`) that implement
//! these traits by one `match` each: dispatch stays static.

use super::psn::{PsnReader, PsnSpace};
use super::rx_ctx::RxCtx;
use super::segment::Segment;
use super::agent::NicCall;
use crate::sim::units::{Rate, Time};

/// The send side of a loss recovery scheme: which packet goes next, and what the receiver's
/// notifications and the retransmission timer do to that.
pub trait SendRecovery {
    /// Oldest unacknowledged packet index.
    fn snd_una(&self) -> u64;
    /// Next new packet index.
    fn snd_nxt(&self) -> u64;
    /// Has something to send (new data or a retransmission).
    fn has_data(&self) -> bool;
    /// Every packet of the message is acknowledged.
    fn is_done(&self) -> bool;
    /// The next packet to send while the window (if any) is open: (index, is a
    /// retransmission). `rate` is the pacing rate; `nic` the state the NIC's queue pairs share
    /// (MELO's send pool, STRIDE's DRAM slots).
    fn next(&mut self, now: Time, rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)>;
    /// The next packet that may go while the window is closed: none by default. (A
    /// retransmission of a hole below snd_nxt does not widen snd_nxt - snd_una, so TCP and IRN
    /// still send it: RFC 5681 fast retransmit.)
    fn next_past_closed_window(&mut self, _now: Time) -> Option<(u64, bool)> {
        None
    }
    /// Segments the window is inflated by (TCP's duplicate ACKs during fast recovery).
    fn window_inflation(&self) -> i64 {
        0
    }
    /// The priority and colour of data packet `index`, just chosen by `next` (or
    /// `next_past_closed_window`): None (the default) stamps the flow's [`super::flow::Marking`] on
    /// every data packet. A scheme that chooses per packet says so here (Homa: unscheduled
    /// packets at the priority their message size selects, scheduled ones at the priority their
    /// grant named; Aeolus colours only the unscheduled ones, so switches drop only them).
    fn mark(&self, _index: u64, _retransmit: bool) -> Option<(u8, u8)> {
        None
    }
    /// What data packet `index`, just chosen by `next`, carries beyond the common header (its
    /// `Ext`, the time it echoes): nothing by default. ExpressPass's data names the credit it
    /// spends and echoes that credit's send time.
    #[inline]
    fn stamp(&self, _seg: &mut Segment) {}
    /// Loss notifications the scheme counts itself, beyond those the shell counts from
    /// [`SendRecovery::on_feedback`]'s answer (Aeolus's losses found by SACK and probe, which
    /// change no congestion control): read with the flow's record.
    fn notifications(&self) -> crate::transport::common::notifications::Notifications {
        Default::default()
    }
    /// Whether the packet [`SendRecovery::next`] just chose goes unscheduled: before any
    /// grant, credit or PULL allowed it (Homa's and NDP's first RTT, Aeolus's first BDP).
    fn unscheduled(&self) -> bool {
        false
    }
    /// A notification from the receiver (ACK, NAK, NACK, RACK, or a connection packet);
    /// returns whether it reported a loss.
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool;
    /// Data packet `index` came back from a trimming switch whose header queue was full
    /// (`[switch] trim`, `return_to_sender`): it was lost. By default nothing happens, and the
    /// scheme's own loss detection finds it as if it had been dropped.
    fn on_returned(&mut self, _now: Time, _index: u64) {}
    /// The retransmission timer's deadline.
    fn poll_timeout(&self) -> Option<Time>;
    /// The retransmission timer's deadline passed (or an early call): whether it fired.
    fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) -> bool;
    /// A packet that opens or closes the connection, sent whatever is asked and unpaced
    /// (STRIDE's SYN and FIN, the ACK of its handshake): none by default.
    fn poll_connection(&mut self, _now: Time, _psn: PsnSpace) -> Option<Segment> {
        None
    }
    /// The message is acknowledged: per-packet state may go (what counters read stays).
    fn release(&mut self) {}
}

/// A boxed send side is one: a scheme whose state is large (ExpressPass's) is stored boxed in
/// `TxRecovery`, so the enum, and every other scheme's sender, does not grow with it.
impl<T: SendRecovery + ?Sized> SendRecovery for Box<T> {
    #[inline]
    fn snd_una(&self) -> u64 {
        (**self).snd_una()
    }
    #[inline]
    fn snd_nxt(&self) -> u64 {
        (**self).snd_nxt()
    }
    #[inline]
    fn has_data(&self) -> bool {
        (**self).has_data()
    }
    #[inline]
    fn is_done(&self) -> bool {
        (**self).is_done()
    }
    #[inline]
    fn next(&mut self, now: Time, rate: Rate, nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        (**self).next(now, rate, nic)
    }
    #[inline]
    fn next_past_closed_window(&mut self, now: Time) -> Option<(u64, bool)> {
        (**self).next_past_closed_window(now)
    }
    #[inline]
    fn window_inflation(&self) -> i64 {
        (**self).window_inflation()
    }
    #[inline]
    fn mark(&self, index: u64, retransmit: bool) -> Option<(u8, u8)> {
        (**self).mark(index, retransmit)
    }
    #[inline]
    fn stamp(&self, seg: &mut Segment) {
        (**self).stamp(seg)
    }
    #[inline]
    fn unscheduled(&self) -> bool {
        (**self).unscheduled()
    }
    fn notifications(&self) -> crate::transport::common::notifications::Notifications {
        (**self).notifications()
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, nic: &mut NicCall<'_>) -> bool {
        (**self).on_feedback(now, seg, at, nic)
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        (**self).poll_timeout()
    }
    #[inline]
    fn handle_timeout(&mut self, now: Time, nic: &mut NicCall<'_>) -> bool {
        (**self).handle_timeout(now, nic)
    }
    #[inline]
    fn poll_connection(&mut self, now: Time, psn: PsnSpace) -> Option<Segment> {
        (**self).poll_connection(now, psn)
    }
    #[inline]
    fn release(&mut self) {
        (**self).release()
    }
}

/// The receive side of a loss recovery scheme: what a data packet does to the receive state
/// and which responses it triggers (queued in the [`RxCtx`]).
pub trait ReceiveRecovery {
    /// A data packet at message index `index`.
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>);
    /// A data packet a switch trimmed to its header: its payload is lost. Ignored by default,
    /// as a drop would be (a scheme built for trimming NACKs it at once).
    fn on_trimmed(&mut self, _now: Time, _index: u64, _seg: &Segment, _rx: &mut RxCtx, _nic: &mut NicCall<'_>) {}
    /// A packet that is not data (STRIDE's SYN and FIN): ignored by default.
    fn on_connection(&mut self, _now: Time, _seg: &Segment, _rx: &mut RxCtx) {}
    /// Whether the scheme sets the congestion echo of its responses itself (TCP: RFC 8257's
    /// state machine); otherwise each response carries the mark of the packet that
    /// triggered it.
    fn echoes_congestion(&self) -> bool {
        false
    }
    /// Reorder-buffer traffic and receiver-side drops: (bytes stored out of order, bytes
    /// copied out when a hole filled, packets dropped for lack of state).
    fn reorder_stats(&self) -> (u64, u64, u64) {
        (0, 0, 0)
    }
    /// Leaves the NIC's on-chip QP cache: the bitmap blocks moved (none by default).
    fn swap_out(&mut self, _nic: &mut NicCall<'_>) -> u32 {
        0
    }
    /// Rejoins it: the blocks moved, or None if the state cannot come back on chip.
    fn swap_in(&mut self, _nic: &mut NicCall<'_>) -> Option<u32> {
        Some(0)
    }
    /// Whether the receive side sends on its own when offered the wire (grants, credits):
    /// not by default.
    fn wants_wire(&self) -> bool {
        false
    }
    /// What it sends on its own, paced by it, when the NIC offers the wire.
    fn poll_transmit(&mut self, _now: Time, _rx: &mut RxCtx, _nic: &mut NicCall<'_>) -> super::poll::Transmit {
        super::poll::Transmit::Idle
    }
    /// The receiver's own deadline (a delayed ACK, a grant timer): none by default.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time, _rx: &mut RxCtx, _nic: &mut NicCall<'_>) {}
    /// The whole message is delivered: reorder state may go.
    fn release(&mut self) {}
    /// Whether this side judges when the flow is over (an unreliable delivery, whose sender
    /// hears nothing back): asked once, when the end is built. Not by default.
    fn completes_flow(&self) -> bool {
        false
    }
}
