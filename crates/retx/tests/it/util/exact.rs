//! Exact-time arithmetic for the scripted exchanges (smoltcp-style), over the default link
//! ([`LINE`](super::LINE) = 40 Gbps, [`DELAY`](super::DELAY) = 1 us) with a 1000-byte MTU:
//! - a data packet is 1048 bytes on the wire: SER = 1048 * 8 / 40e9 s = 209_600 ps;
//! - a control packet is 60 bytes: CSER = 12_000 ps;
//! - data packet k sent at s arrives at s + SER + D; a control packet sent at c arrives at
//!   c + CSER + D, with D = 1_000_000 ps;
//! - so the control packet answering the arrival of a data packet sent at s reaches the
//!   sender at s + 2_221_600.
//!
//! With no loss the sender paces at line rate, so packet k first leaves at k * SER.

use super::Pair;
use retx::sim::units::Time;
use retx::transport::common::segment::SegKind;

pub const SER: u64 = 209_600;
pub const CSER: u64 = 12_000;
pub const D: u64 = 1_000_000;
pub const MTU: u32 = 1000;

pub fn t(ps: u64) -> Time {
    Time(ps)
}

/// Arrival at the receiver of a data packet sent at `sent`.
pub fn data_arrival(sent: u64) -> u64 {
    sent + SER + D
}

/// Arrival at the sender of a control packet sent (alone) at `sent`.
pub fn ctrl_arrival(sent: u64) -> u64 {
    sent + CSER + D
}

/// Sender-side arrival of the control packet answering a data packet sent at `sent`.
pub fn answered(sent: u64) -> u64 {
    ctrl_arrival(data_arrival(sent))
}

/// (sent time, index, retransmit) of every data packet.
pub fn sends(p: &Pair) -> Vec<(u64, u64, bool)> {
    p.data.iter().map(|w| (w.sent.0, w.index, w.seg.retransmit)).collect()
}

/// (sent time, kind, cumulative index) of every control packet.
pub fn ctrls(p: &Pair) -> Vec<(u64, SegKind, u64)> {
    p.ctrl.iter().map(|w| (w.sent.0, w.seg.kind, w.index)).collect()
}

/// The receiver delivered packets 0..n, each once, in order, with the payload that was sent.
pub fn assert_delivered_once_in_order(p: &Pair, n: u64) {
    assert_eq!(p.delivered(), (0..n).collect::<Vec<_>>().as_slice());
    assert_eq!(p.receiver.ctx.bad_deliveries, 0);
    assert_eq!(p.receiver.ctx.delivered_bytes, n * MTU as u64);
}

/// (sent time, index, retransmit) of the data packets `indices` leaving back to back at line
/// rate, one every SER from `start`: the shape `sends` takes while the pacer is busy.
pub fn back_to_back(
    start: u64,
    indices: impl IntoIterator<Item = u64>,
    retransmit: bool,
) -> impl Iterator<Item = (u64, u64, bool)> {
    indices.into_iter().enumerate().map(move |(j, k)| (start + j as u64 * SER, k, retransmit))
}
