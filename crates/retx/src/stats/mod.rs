//! What a run reports: one record per flow, a receiver throughput time series, and totals.

pub mod collectives;
pub mod columns;
pub mod links;

use crate::sim::units::Time;
pub use crate::transport::common::notifications::Notifications;
pub use collectives::{IterationRecord, StepRecord};

/// One row of the flow table.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub src: String,
    pub dst: String,
    /// 0 for an endless flow.
    pub size_bytes: u64,
    pub start: Time,
    /// When the sender saw every byte acknowledged.
    pub finish: Option<Time>,
    /// When the receiver had delivered every byte in order (before `finish`: the last ACK is
    /// still on its way).
    pub received: Option<Time>,
    pub ideal_fct: Time,
    pub delivered_bytes: u64,
    pub sent_bytes: u64,
    pub retx_bytes: u64,
    pub notifications: Notifications,
    pub timeouts: u64,
    pub cnps: u64,
    /// Receiver reorder buffer: bytes stored out of order and bytes later copied out.
    pub reorder_stored_bytes: u64,
    pub reorder_copied_bytes: u64,
    /// Data packets the receiver dropped for lack of state (bitmap full, MELO middle block).
    pub rx_dropped: u64,
    /// Its packets (data and control, both ways) the network dropped: buffer overflow, a
    /// loss model, no route.
    pub drops: u64,
    /// The same drops by kind.
    pub drops_by_kind: DropKinds,
    /// When the receiving end first heard of the flow (its first packet's handling by the
    /// receiver's NIC): the start of the Aeolus testbed's message completion time.
    pub first_arrival: Option<Time>,
    /// Bytes per second delivered in order to the application over the flow's active time.
    pub goodput_bps: f64,
    /// The job (workload) it belongs to: its name.
    pub job: String,
}

impl FlowRecord {
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f.0 as f64 / self.ideal_fct.0.max(1) as f64)
    }
}

/// One sample at a receiving host: in-order goodput, and the data arriving off the wire.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub time: Time,
    pub host: u32,
    pub bps: f64,
    pub wire_bps: f64,
}

/// One sample of a watched egress port (`[output] queues`): the bytes its queues held at the
/// sample time, and the most they held since the previous sample.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSample {
    pub time: Time,
    /// Index into `RunOutput::queue_names`.
    pub link: u32,
    pub bytes: u64,
    pub peak: u64,
    /// Bytes the port sent over the interval, as a rate.
    pub tx_bps: f64,
    /// Packets it marked CE and PFC pauses it sent upstream over the interval.
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    /// The classes paused by the peer at the sample time (bit c: class c).
    pub paused: u8,
}

/// One sample of a watched host's NIC structure (`[output] pools`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolSample {
    pub time: Time,
    /// The host's node id (`RunOutput::host_names` indexes it).
    pub host: u32,
    pub occupancy: crate::transport::PoolOccupancy,
}

/// One sample of a flow's sender (`[output] cc_flows`): what congestion control allows.
#[derive(Clone, Debug, PartialEq)]
pub struct CcSample {
    pub time: Time,
    pub flow: u32,
    /// Pacing rate (the line rate when congestion control sets none).
    pub rate_bps: f64,
    /// Congestion window in bytes, if the controller keeps one.
    pub window: Option<u64>,
    /// Payload bytes sent and not yet acknowledged.
    pub in_flight: u64,
    /// The sender has finished (every byte acknowledged).
    pub done: bool,
}

/// Dropped transport packets by kind: data a grant, credit or PULL allowed (or any data of a
/// sender-driven scheme), data sent unscheduled (a proactive transport's first RTT), the grants
/// themselves (PULLs, credits, grants), and every other control packet (ACK, NAK, CNP, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropKinds {
    pub scheduled_data: u64,
    pub unscheduled_data: u64,
    pub grants: u64,
    pub control: u64,
}

impl DropKinds {
    /// Adds another count (a parallel run's partitions' counts of one flow).
    pub fn add(&mut self, o: &DropKinds) {
        let DropKinds { scheduled_data, unscheduled_data, grants, control } = *o;
        self.scheduled_data += scheduled_data;
        self.unscheduled_data += unscheduled_data;
        self.grants += grants;
        self.control += control;
    }

    /// Counts a dropped transport segment.
    #[inline]
    pub fn count(&mut self, seg: &crate::transport::common::segment::Segment) {
        use crate::transport::common::segment::SegKind;
        match seg.kind {
            SegKind::Data if seg.unscheduled => self.unscheduled_data += 1,
            SegKind::Data => self.scheduled_data += 1,
            SegKind::Grant => self.grants += 1,
            _ => self.control += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.scheduled_data + self.unscheduled_data + self.grants + self.control
    }
}

/// Totals of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    pub events: u64,
    /// Packets put on a wire (every hop counts).
    pub packet_hops: u64,
    pub packets_created: u64,
    pub packets_consumed: u64,
    pub drops_loss: u64,
    pub drops_buffer: u64,
    pub drops_unroutable: u64,
    /// Every transport packet the network dropped (loss, buffer, no route), by kind.
    pub drops_by_kind: DropKinds,
    /// PFC PAUSE frames sent: by switches, and by NICs whose receive queue filled
    /// (`[nic] rx_queue`).
    pub pfc_pauses: u64,
    pub ecn_marks: u64,
    /// Data packets a switch trimmed to their header instead of dropping (`[switch] trim`).
    pub packets_trimmed: u64,
    /// Trimmed headers a switch sent back to their sender (`[switch] trim`,
    /// `return_to_sender`).
    pub packets_returned: u64,
    /// Connections swapped out of a NIC's on-chip QP cache.
    pub qp_swaps: u64,
    /// Deliveries that were out of order, duplicated or wrong: must be 0.
    pub bad_deliveries: u64,
    /// INT hop records that reached a sender in an ACK (0 without INT).
    pub int_hops_echoed: u64,
    /// Background traffic (`[[background]]`): packets its sources sent into their egress
    /// queues, those the switch dropped there (counted in `drops_buffer` too, and in no flow's
    /// drops), and those that reached the far end of the link.
    pub background_sent: u64,
    pub background_dropped: u64,
    pub background_delivered: u64,
}

impl Counters {
    /// Adds another partition's counts (every counter is a sum; naming each field makes a new
    /// one decide how it merges).
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            events,
            packet_hops,
            packets_created,
            packets_consumed,
            drops_loss,
            drops_buffer,
            drops_unroutable,
            drops_by_kind,
            pfc_pauses,
            ecn_marks,
            packets_trimmed,
            packets_returned,
            qp_swaps,
            bad_deliveries,
            int_hops_echoed,
            background_sent,
            background_dropped,
            background_delivered,
        } = o;
        self.events += events;
        self.packet_hops += packet_hops;
        self.packets_created += packets_created;
        self.packets_consumed += packets_consumed;
        self.drops_loss += drops_loss;
        self.drops_buffer += drops_buffer;
        self.drops_unroutable += drops_unroutable;
        self.drops_by_kind.add(drops_by_kind);
        self.pfc_pauses += pfc_pauses;
        self.ecn_marks += ecn_marks;
        self.packets_trimmed += packets_trimmed;
        self.packets_returned += packets_returned;
        self.qp_swaps += qp_swaps;
        self.bad_deliveries += bad_deliveries;
        self.int_hops_echoed += int_hops_echoed;
        self.background_sent += background_sent;
        self.background_dropped += background_dropped;
        self.background_delivered += background_delivered;
    }
}
