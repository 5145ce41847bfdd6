//! PFC headroom: the buffer a switch reserves per lossless ingress queue for the bytes that
//! still arrive after it decides to PAUSE its upstream port.
//!
//! IEEE 802.1Qbb Annex N sizes it as the round trip of the cable at the link rate plus the
//! frames that cannot be interrupted at each end (the frame this port is sending when the
//! PAUSE is queued, the frame the upstream port is sending when it arrives), the PFC frame
//! itself and the interfaces' response times. In retx a PAUSE acts the instant it arrives
//! (no PHY/MAC response delay), and admission is per packet: the packet that crosses the
//! threshold is itself held in headroom, and an interval of the wire's bytes may end part way
//! through a frame. So [`needed`] is Annex N with zero response time plus those two frames:
//! `2 x rate x delay + 4 x max frame + PFC frame`, which the engine's tests show is enough.

use crate::sim::units::{Rate, Time};

/// A PAUSE/RESUME frame on the wire (the 64 B Ethernet minimum).
pub const PFC_FRAME_BYTES: u64 = 64;

/// How much headroom every port reserves per lossless ingress queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Headroom {
    /// The same size at every port.
    Bytes(u64),
    /// What each port's link needs ([`needed`]), with `max_frame` the largest frame that can
    /// be on a link (a full data packet, a response, a background frame).
    Auto { max_frame: u64 },
    /// HPCC ns-3 third.cc: `rate * delay / 8 / 1e9 * 3`, delay in whole ns, integer
    /// arithmetic as there (dynamic PFC's default, so results compare with ns-3).
    Ns3,
}

impl Headroom {
    /// The headroom of a port on a link of `rate` and one-way `delay`.
    pub fn for_link(&self, rate: Rate, delay: Time) -> u64 {
        match *self {
            Headroom::Bytes(b) => b,
            Headroom::Auto { max_frame } => needed(rate, delay, max_frame),
            Headroom::Ns3 => (rate.bps() as u128 * (delay.0 / 1000) as u128 / 8 / 1_000_000_000) as u64 * 3,
        }
    }
}

/// Bytes that can still arrive on a link of `rate` and one-way `delay` after its receiving
/// queue decides to PAUSE, frames at most `max_frame` bytes (see the module comment): the
/// cable's round trip at the link rate, rounded up, plus four frames and the PFC frame.
pub fn needed(rate: Rate, delay: Time, max_frame: u64) -> u64 {
    let cable = (rate.bps() as u128 * delay.0 as u128).div_ceil(8 * 1_000_000_000_000) as u64;
    2 * cable + 4 * max_frame + PFC_FRAME_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_headroom_is_the_cable_round_trip_plus_four_frames_and_a_pause() {
        // 100 Gbps x 1 us = 12 500 B each way; 1 048 B frames: 25 000 + 4 192 + 64.
        assert_eq!(needed(Rate::gbps(100), Time::from_us(1), 1_048), 29_256);
        // Rounded up: 10 Gbps x 1 ns = 1.25 B -> 2 B each way.
        assert_eq!(needed(Rate::gbps(10), Time::from_ns(1), 1_000), 4 + 4_000 + 64);
        let auto = Headroom::Auto { max_frame: 1_048 };
        assert_eq!(auto.for_link(Rate::gbps(100), Time::from_us(1)), 29_256);
        assert_eq!(Headroom::Bytes(5_000).for_link(Rate::gbps(100), Time::from_us(1)), 5_000);
        // ns-3: 100 Gbps x 1000 ns / 8 x 3; delay in whole ns (1 999 ps is 1 ns).
        assert_eq!(Headroom::Ns3.for_link(Rate::gbps(100), Time::from_us(1)), 37_500);
        assert_eq!(Headroom::Ns3.for_link(Rate::gbps(8), Time(1_999)), 3);
    }
}
