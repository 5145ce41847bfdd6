//! One end of a full-duplex link: its egress queues, transmitter, the wire towards the peer,
//! loss injection on that wire, and PFC state.

use super::packet::Frame;
use crate::sim::rng::Rng;
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

pub struct Port {
    pub node: usize,
    /// The port at the other end of the link and its node.
    pub peer: usize,
    pub peer_node: usize,
    pub rate: Rate,
    pub delay: Time,
    /// Egress queues per class (switches; at hosts only the control class is queued, data is
    /// pulled from queue pairs).
    pub queues: [VecDeque<u32>; 2],
    pub queued_bytes: [u64; 2],
    /// The transmitter is serialising a packet until then.
    pub busy_until: Time,
    /// A "transmitter free" event is pending (scheduled only when something waits for it).
    pub wake_pending: bool,
    /// The data class is paused by a PFC PAUSE from the peer.
    pub paused: bool,
    /// A PFC frame waiting for the transmitter (sent ahead of any queued packet).
    pub pfc_pending: Option<Frame>,
    /// Packets on the wire: (arrival time at the peer, packet id), in order.
    pub pipe: VecDeque<(Time, u32)>,
    /// Bernoulli loss thresholds (see `rng::threshold`) for data and control packets.
    pub loss_data: u64,
    pub loss_control: u64,
    pub loss_rng: Rng,
    /// Bytes buffered in this switch that arrived through this port (PFC ingress queue).
    pub ingress_bytes: u64,
    /// We have sent PAUSE to the peer and not yet RESUME.
    pub pause_sent: bool,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub pauses_sent: u64,
}

impl Port {
    pub fn new(node: usize, rate: Rate, delay: Time, loss_rng: Rng) -> Port {
        Port {
            node,
            peer: usize::MAX,
            peer_node: usize::MAX,
            rate,
            delay,
            queues: [VecDeque::new(), VecDeque::new()],
            queued_bytes: [0, 0],
            busy_until: Time::ZERO,
            wake_pending: false,
            paused: false,
            pfc_pending: None,
            pipe: VecDeque::new(),
            loss_data: 0,
            loss_control: 0,
            loss_rng,
            ingress_bytes: 0,
            pause_sent: false,
            tx_bytes: 0,
            tx_packets: 0,
            pauses_sent: 0,
        }
    }

    /// Queues a PAUSE or RESUME for the peer; a pending opposite frame cancels out instead.
    pub fn request_pfc(&mut self, frame: Frame) {
        self.pfc_pending = match (self.pfc_pending, frame) {
            (Some(Frame::Pause), Frame::Resume) | (Some(Frame::Resume), Frame::Pause) => None,
            _ => Some(frame),
        };
    }
}
