//! The columns of every table a run outputs, declared once: name, type, unit, meaning, and how
//! each value comes from the run. The Python bindings fill their arrays from these lists and
//! hand the same lists to Python (`retx._native.schema()`), which types its tables from them.
//!
//! Integer columns are `I64` (polars `Int64`), as the tables have always been: counts and byte
//! sizes stay far below 2^63, and differences of them stay signed.
//!
//! ```
//! use retx::stats::columns::{Data, FLOWS};
//! let out = retx::run_toml(r#"
//!     name = "doc"
//!     duration = "200us"
//!     [topology]
//!     kind = "single-switch"
//!     [workload]
//!     kind = "flow-list"
//!     flows = [{ src = "h0", dst = "h1", size = "100KB" }]
//! "#).unwrap();
//! let table = FLOWS.fill(&(), &out.flows);
//! assert_eq!(table[0].0.name, "flow_id");
//! assert!(matches!(&table[3].1, Data::I64(v) if v == &[100_000]));
//! ```

use crate::hw::memory::Footprint;
use crate::stats::links::{LinkNames, LinkRecord, LinkSample, TierSample};
use crate::stats::{FlowRecord, Sample};

/// A column's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    I64,
    U64,
    F64,
    Bool,
    Str,
}

impl Dtype {
    /// The name the Python side maps to a polars type: "i64", "u64", "f64", "bool", "str".
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I64 => "i64",
            Dtype::U64 => "u64",
            Dtype::F64 => "f64",
            Dtype::Bool => "bool",
            Dtype::Str => "str",
        }
    }
}

/// How a column's value comes from a row of type `R` and the table's context `C` (what rows
/// refer to, e.g. host names by index; `()` when nothing). The variant is the column's type,
/// so a declaration cannot disagree with the values it produces.
pub enum Get<C: ?Sized, R> {
    I64(fn(&C, &R) -> i64),
    U64(fn(&C, &R) -> u64),
    F64(fn(&C, &R) -> f64),
    Bool(fn(&C, &R) -> bool),
    Str(for<'a> fn(&'a C, &'a R) -> &'a str),
}

/// One column of a table.
pub struct Column<C: ?Sized, R> {
    pub name: &'static str,
    /// "" for a dimensionless value.
    pub unit: &'static str,
    pub description: &'static str,
    pub get: Get<C, R>,
}

impl<C: ?Sized, R> Column<C, R> {
    pub fn dtype(&self) -> Dtype {
        match self.get {
            Get::I64(_) => Dtype::I64,
            Get::U64(_) => Dtype::U64,
            Get::F64(_) => Dtype::F64,
            Get::Bool(_) => Dtype::Bool,
            Get::Str(_) => Dtype::Str,
        }
    }

    pub fn spec(&self) -> ColumnSpec {
        ColumnSpec { name: self.name, dtype: self.dtype(), unit: self.unit, description: self.description }
    }
}

/// A column without its accessor: what the schema says about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub dtype: Dtype,
    pub unit: &'static str,
    pub description: &'static str,
}

/// A filled column; strings borrow from the rows or the context.
#[derive(Clone, Debug, PartialEq)]
pub enum Data<'a> {
    I64(Vec<i64>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<&'a str>),
}

impl Data<'_> {
    pub fn len(&self) -> usize {
        match self {
            Data::I64(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table of rows `R` (with context `C`): its columns in output order.
pub struct Table<C: ?Sized + 'static, R: 'static> {
    pub name: &'static str,
    pub columns: &'static [Column<C, R>],
}

impl<C: ?Sized, R> Table<C, R> {
    pub fn specs(&self) -> Vec<ColumnSpec> {
        self.columns.iter().map(Column::spec).collect()
    }

    /// Every column, in order, filled from `rows`.
    pub fn fill<'a>(&self, context: &'a C, rows: &'a [R]) -> Vec<(&'static Column<C, R>, Data<'a>)> {
        self.columns
            .iter()
            .map(|c| {
                let data = match c.get {
                    Get::I64(f) => Data::I64(rows.iter().map(|r| f(context, r)).collect()),
                    Get::U64(f) => Data::U64(rows.iter().map(|r| f(context, r)).collect()),
                    Get::F64(f) => Data::F64(rows.iter().map(|r| f(context, r)).collect()),
                    Get::Bool(f) => Data::Bool(rows.iter().map(|r| f(context, r)).collect()),
                    Get::Str(f) => Data::Str(rows.iter().map(|r| f(context, r)).collect()),
                };
                (c, data)
            })
            .collect()
    }
}

/// Every table's name and columns, in a fixed order: flows, timeseries, memory.
pub fn schema() -> Vec<(&'static str, Vec<ColumnSpec>)> {
    vec![
        (FLOWS.name, FLOWS.specs()),
        (TIMESERIES.name, TIMESERIES.specs()),
        (QUEUES.name, QUEUES.specs()),
        (CC.name, CC.specs()),
        (POOLS.name, POOLS.specs()),
        (MEMORY.name, MEMORY.specs()),
        (COLLECTIVES.name, COLLECTIVES.specs()),
        (COLLECTIVE_STEPS.name, COLLECTIVE_STEPS.specs()),
        (LINKS.name, LINKS.specs()),
        (TIER_SAMPLES.name, TIER_SAMPLES.specs()),
        (LINK_SAMPLES.name, LINK_SAMPLES.specs()),
    ]
}

fn nan_or(t: Option<f64>) -> f64 {
    t.unwrap_or(f64::NAN)
}

const fn col<C: ?Sized, R>(name: &'static str, unit: &'static str, description: &'static str, get: Get<C, R>) -> Column<C, R> {
    Column { name, unit, description, get }
}

/// One row per flow (`RunOutput::flows`), in flow id order; no context.
pub static FLOWS: Table<(), FlowRecord> = Table { name: "flows", columns: FLOW_COLUMNS };

static FLOW_COLUMNS: &[Column<(), FlowRecord>] = &[
    col("flow_id", "", "the flow's index in the workload", Get::I64(|_, r| r.flow_id as i64)),
    col("src", "", "sending host", Get::Str(|_, r| r.src.as_str())),
    col("dst", "", "receiving host", Get::Str(|_, r| r.dst.as_str())),
    col("size_bytes", "B", "payload bytes to send; 0 for an endless flow", Get::I64(|_, r| r.size_bytes as i64)),
    col("start_us", "us", "when the flow started", Get::F64(|_, r| r.start.as_us_f64())),
    col(
        "finish_us",
        "us",
        "when the sender saw every byte acknowledged; NaN if it did not finish",
        Get::F64(|_, r| nan_or(r.finish.map(|t| t.as_us_f64()))),
    ),
    col(
        "received_us",
        "us",
        "when the receiver had delivered every byte in order (htsim's recv done); NaN if it did not",
        Get::F64(|_, r| nan_or(r.received.map(|t| t.as_us_f64()))),
    ),
    col(
        "fct_us",
        "us",
        "flow completion time, finish - start; NaN if unfinished",
        Get::F64(|_, r| nan_or(r.fct().map(|t| t.as_us_f64()))),
    ),
    col(
        "ideal_fct_us",
        "us",
        "completion time alone on an empty network over the best path; NaN for an endless flow",
        Get::F64(|_, r| if r.size_bytes == 0 { f64::NAN } else { r.ideal_fct.as_us_f64() }),
    ),
    col("slowdown", "", "fct / ideal fct; NaN if unfinished", Get::F64(|_, r| nan_or(r.slowdown()))),
    col(
        "goodput_gbps",
        "Gbps",
        "bytes delivered in order to the application over the flow's active time",
        Get::F64(|_, r| r.goodput_bps / 1e9),
    ),
    col("delivered_bytes", "B", "payload bytes delivered in order (under UET's UUD: as they arrived, at most once)", Get::I64(|_, r| r.delivered_bytes as i64)),
    col("sent_bytes", "B", "payload bytes sent, retransmissions included", Get::I64(|_, r| r.sent_bytes as i64)),
    col("retx_bytes", "B", "payload bytes retransmitted", Get::I64(|_, r| r.retx_bytes as i64)),
    // One column per kind of loss notification: each says whose it is, and a test
    // (`notification_columns_name_their_schemes`) checks that only those schemes count there.
    col(
        "notifications",
        "",
        "loss notifications of every kind the sender received and acted on: naks + nacks + sacks + racks + fast_retransmits + aeolus_sack_losses + aeolus_probe_losses + resends",
        Get::I64(|_, r| r.notifications.total() as i64),
    ),
    col(
        "naks",
        "",
        "NAKs the sender received: go-back-N and STRIDE (PSN sequence error, one per gap), NDP (one per trimmed packet)",
        Get::I64(|_, r| r.notifications.naks as i64),
    ),
    col(
        "nacks",
        "",
        "NACKs (cumulative ACK and up to three holes) the sender received; MELO only",
        Get::I64(|_, r| r.notifications.nacks as i64),
    ),
    col(
        "sacks",
        "",
        "NACKs each SACKing one out-of-order packet the sender received; IRN only",
        Get::I64(|_, r| r.notifications.sacks as i64),
    ),
    col(
        "racks",
        "",
        "RACKs each naming one out-of-order packet the sender received; Go-Back-ONE only",
        Get::I64(|_, r| r.notifications.racks as i64),
    ),
    col(
        "fast_retransmits",
        "",
        "fast retransmits on a third duplicate ACK; TCP only",
        Get::I64(|_, r| r.notifications.fast_retransmits as i64),
    ),
    col(
        "aeolus_sack_losses",
        "",
        "unscheduled packets an ACK's SACK showed lost (a later one acknowledged); Homa, ExpressPass and NDP with aeolus = true",
        Get::I64(|_, r| r.notifications.aeolus_sack_losses as i64),
    ),
    col(
        "aeolus_probe_losses",
        "",
        "unscheduled packets the Aeolus probe's ACK showed lost (unacknowledged when it was answered); Homa, ExpressPass and NDP with aeolus = true",
        Get::I64(|_, r| r.notifications.aeolus_probe_losses as i64),
    ),
    col(
        "resends",
        "",
        "RESENDs the sender received: the Aeolus testbed's homa, with testbed = true (the receiver's timeout on a granted message whose grant stopped moving)",
        Get::I64(|_, r| r.notifications.resends as i64),
    ),
    col("timeouts", "", "retransmission timeouts at the sender", Get::I64(|_, r| r.timeouts as i64)),
    col("cnps", "", "congestion notification packets the sender received", Get::I64(|_, r| r.cnps as i64)),
    col(
        "reorder_stored_bytes",
        "B",
        "bytes the receiver's reorder buffer stored out of order",
        Get::I64(|_, r| r.reorder_stored_bytes as i64),
    ),
    col(
        "reorder_copied_bytes",
        "B",
        "bytes later copied out of the reorder buffer",
        Get::I64(|_, r| r.reorder_copied_bytes as i64),
    ),
    col(
        "rx_dropped",
        "",
        "data packets the receiver dropped for lack of state (bitmap full, MELO middle block)",
        Get::I64(|_, r| r.rx_dropped as i64),
    ),
    col(
        "drops",
        "",
        "its packets (data and control, both ways) the network dropped: buffer, loss model, no route",
        Get::I64(|_, r| r.drops as i64),
    ),
    col(
        "drops_scheduled",
        "",
        "of its drops, data a grant, credit or PULL allowed (every data packet of a sender-driven scheme)",
        Get::I64(|_, r| r.drops_by_kind.scheduled_data as i64),
    ),
    col(
        "drops_unscheduled",
        "",
        "of its drops, data sent before any grant, credit or PULL (homa, ndp, xpass with aeolus: the first RTT)",
        Get::I64(|_, r| r.drops_by_kind.unscheduled_data as i64),
    ),
    col(
        "drops_grants",
        "",
        "of its drops, the receiver's grants, credits and PULLs (homa, xpass, ndp)",
        Get::I64(|_, r| r.drops_by_kind.grants as i64),
    ),
    col(
        "drops_control",
        "",
        "of its drops, every other control packet: ACK, NAK, NACK, CNP, request, probe, connection packets",
        Get::I64(|_, r| r.drops_by_kind.control as i64),
    ),
    col(
        "rx_fct_us",
        "us",
        "the receiver's view: from its NIC's handling of the flow's first packet to the last byte delivered in order (the Aeolus testbed's message completion time); NaN if either did not happen",
        Get::F64(|_, r| nan_or(r.first_arrival.zip(r.received).map(|(a, b)| (b - a).as_us_f64()))),
    ),
    col("completed", "", "whether the flow finished before the run ended", Get::Bool(|_, r| r.finish.is_some())),
    col("job", "", "the job (workload) it belongs to: its name, job0 by default", Get::Str(|_, r| r.job.as_str())),
];

/// One row per sampled receiving host and sample time (`RunOutput::samples`); the context is
/// the host names (`RunOutput::host_names`) that `Sample::host` indexes.
pub static TIMESERIES: Table<[String], Sample> = Table { name: "timeseries", columns: TIMESERIES_COLUMNS };

static TIMESERIES_COLUMNS: &[Column<[String], Sample>] = &[
    col("time_us", "us", "end of the sampling interval", Get::F64(|_, s| s.time.as_us_f64())),
    col("host", "", "receiving host", Get::Str(|names, s| names[s.host as usize].as_str())),
    col("rx_gbps", "Gbps", "goodput delivered in order over the interval", Get::F64(|_, s| s.bps / 1e9)),
    col("rx_wire_gbps", "Gbps", "data arriving off the wire over the interval", Get::F64(|_, s| s.wire_bps / 1e9)),
];

/// One row per sample of a watched port (`RunOutput::queue_samples`); the context is the
/// ports' names.
pub static QUEUES: Table<[String], super::QueueSample> = Table { name: "queues", columns: QUEUE_COLUMNS };

static QUEUE_COLUMNS: &[Column<[String], super::QueueSample>] = &[
    col("time_us", "us", "sample time", Get::F64(|_, s| s.time.as_us_f64())),
    col("port", "", "the watched egress port, \"A->B\": node A's port toward node B", Get::Str(|names, s| names[s.link as usize].as_str())),
    col("queue_bytes", "B", "bytes in the port's queues at the sample time", Get::I64(|_, s| s.bytes as i64)),
    col("peak_bytes", "B", "the most bytes its queues held since the previous sample", Get::I64(|_, s| s.peak as i64)),
    col("tx_gbps", "Gbps", "bytes the port sent over the interval (headers included), as a rate", Get::F64(|_, s| s.tx_bps / 1e9)),
    col("ecn_marks", "packets", "packets the port marked CE over the interval", Get::I64(|_, s| s.ecn_marks as i64)),
    col("pfc_pauses_sent", "frames", "PFC pause frames the port sent to its peer over the interval", Get::I64(|_, s| s.pauses_sent as i64)),
    col("pfc_paused_classes", "bitmask", "classes the peer held paused at the sample time (bit c: class c)", Get::I64(|_, s| s.paused as i64)),
];

/// One row per sample of a watched flow's sender (`RunOutput::cc_samples`); no context.
pub static CC: Table<(), super::CcSample> = Table { name: "cc", columns: CC_COLUMNS };

static CC_COLUMNS: &[Column<(), super::CcSample>] = &[
    col("time_us", "us", "sample time", Get::F64(|_, s| s.time.as_us_f64())),
    col("flow_id", "", "the flow (its row in the flows table)", Get::I64(|_, s| s.flow as i64)),
    col("rate_gbps", "Gbps", "the sender's pacing rate (line rate when congestion control sets none)", Get::F64(|_, s| s.rate_bps / 1e9)),
    col("window_bytes", "B", "congestion window; NaN when the controller keeps none", Get::F64(|_, s| s.window.map_or(f64::NAN, |w| w as f64))),
    col("in_flight_bytes", "B", "payload bytes sent and not yet acknowledged", Get::I64(|_, s| s.in_flight as i64)),
    col("done", "", "every byte acknowledged", Get::Bool(|_, s| s.done)),
];

/// One row per structure of a watched host's NIC per sample (`RunOutput::pool_samples`); the
/// context is the host names.
pub static POOLS: Table<[String], super::PoolSample> = Table { name: "pools", columns: POOL_COLUMNS };

static POOL_COLUMNS: &[Column<[String], super::PoolSample>] = &[
    col("time_us", "us", "sample time", Get::F64(|_, s| s.time.as_us_f64())),
    col("host", "", "the watched host", Get::Str(|names, s| names[s.host as usize].as_str())),
    col("pool", "", "the NIC structure: melo_rx, melo_tx (MELO's bits pools), qp_cache", Get::Str(|_, s| s.occupancy.pool)),
    col("unit", "", "what used, peak and capacity count: blocks (of the pool's block size) or contexts", Get::Str(|_, s| s.occupancy.unit)),
    col("used", "units", "in use at the sample time", Get::I64(|_, s| s.occupancy.used as i64)),
    col("peak", "units", "the most in use at once since the previous sample (the QP cache: at the sample time)", Get::I64(|_, s| s.occupancy.peak as i64)),
    col("capacity", "units", "how many the structure holds", Get::I64(|_, s| s.occupancy.capacity as i64)),
];

/// One row per iteration of each group's collective (`RunOutput::collectives`); no context.
pub static COLLECTIVES: Table<(), super::IterationRecord> = Table { name: "collectives", columns: COLLECTIVE_COLUMNS };

static COLLECTIVE_COLUMNS: &[Column<(), super::IterationRecord>] = &[
    col("group", "", "the group of ranks (workload.collective.groups), numbered across the run's jobs", Get::I64(|_, r| r.group as i64)),
    col("iteration", "", "the iteration, from 0", Get::I64(|_, r| r.iteration as i64)),
    col("op", "", "all-reduce, all-gather, reduce-scatter or all-to-all", Get::Str(|_, r| r.op)),
    col("algorithm", "", "ring, halving-doubling, direct, rounds or htsim-ring", Get::Str(|_, r| r.algorithm)),
    col("ranks", "", "ranks in the group", Get::I64(|_, r| r.ranks as i64)),
    col("size_bytes", "B", "each rank's buffer (NCCL's size)", Get::I64(|_, r| r.size as i64)),
    col("steps", "", "steps of the algorithm", Get::I64(|_, r| r.steps as i64)),
    col("start_us", "us", "when its first flow started", Get::F64(|_, r| r.start.as_us_f64())),
    col("cct_us", "us", "collective completion time: its last flow received - its start; NaN if not all were", Get::F64(|_, r| nan_or(r.cct().map(|t| t.as_us_f64())))),
    col("ideal_cct_us", "us", "the sum of its steps' ideals (each step alone on an empty network)", Get::F64(|_, r| r.ideal.as_us_f64())),
    col("slowdown", "", "cct / ideal cct; NaN if unfinished", Get::F64(|_, r| nan_or(r.slowdown()))),
    col("algbw_gbps", "Gbps", "NCCL's algorithm bandwidth: size / cct; NaN if unfinished", Get::F64(|_, r| nan_or(r.algbw_bps().map(|b| b / 1e9)))),
    col("busbw_gbps", "Gbps", "NCCL's bus bandwidth: algbw x 2(n-1)/n (all-reduce) or (n-1)/n; NaN if unfinished", Get::F64(|_, r| nan_or(r.busbw_bps().map(|b| b / 1e9)))),
    col("slowest_step", "", "the step that took longest", Get::I64(|_, r| r.slowest_step as i64)),
    col("job", "", "the job (workload) it belongs to", Get::Str(|_, r| r.job.as_str())),
];

/// One row per step of each iteration of each group's collective (`RunOutput::collective_steps`).
pub static COLLECTIVE_STEPS: Table<(), super::StepRecord> = Table { name: "collective_steps", columns: COLLECTIVE_STEP_COLUMNS };

static COLLECTIVE_STEP_COLUMNS: &[Column<(), super::StepRecord>] = &[
    col("group", "", "the group of ranks", Get::I64(|_, r| r.group as i64)),
    col("iteration", "", "the iteration, from 0", Get::I64(|_, r| r.iteration as i64)),
    col("step", "", "the step, from 0", Get::I64(|_, r| r.step as i64)),
    col("flows", "", "its flows", Get::I64(|_, r| r.flows as i64)),
    col("bytes", "B", "bytes its flows carry", Get::I64(|_, r| r.bytes as i64)),
    col("start_us", "us", "when its first flow started", Get::F64(|_, r| r.start.as_us_f64())),
    col("end_us", "us", "when its last flow was received; NaN if one was not", Get::F64(|_, r| nan_or(r.end.map(|t| t.as_us_f64())))),
    col("duration_us", "us", "end - start; NaN if unfinished", Get::F64(|_, r| nan_or(r.end.map(|e| (e - r.start).as_us_f64())))),
    col("ideal_us", "us", "alone on an empty network: the longest of its ranks' sends", Get::F64(|_, r| r.ideal.as_us_f64())),
    col("slowest_flow", "", "the flow received last (its row in the flows table)", Get::I64(|_, r| r.slowest_flow as i64)),
    col("job", "", "the job (workload) it belongs to", Get::Str(|_, r| r.job.as_str())),
];

/// One row per selected port over the run (`LinkReport::links`, `[output] links`); the
/// context names the ports and tiers.
pub static LINKS: Table<LinkNames, LinkRecord> = Table { name: "links", columns: LINK_COLUMNS };

static LINK_COLUMNS: &[Column<LinkNames, LinkRecord>] = &[
    col("link", "", "the link direction, \"A->B\": node A's egress port toward node B", Get::Str(|n, r| n.links[r.link as usize].name.as_str())),
    col("node", "", "the node whose egress port it is (A)", Get::Str(|n, r| n.links[r.link as usize].node.as_str())),
    col("peer", "", "the node it sends to (B)", Get::Str(|n, r| n.links[r.link as usize].peer.as_str())),
    col("tier", "", "its tier: host-up, host-down, and between switches the ends' roles (leaf-spine, tor-agg, agg-core, ...), local or global (a dragonfly), or levelN-levelM (hops from the hosts)", Get::Str(|n, r| n.tiers[n.links[r.link as usize].tier as usize].as_str())),
    col("rate_gbps", "Gbps", "the link's rate", Get::F64(|n, r| n.links[r.link as usize].rate.bps() as f64 / 1e9)),
    col("tx_bytes", "B", "bytes the port sent over the run (headers, control and PFC frames included; packets lost on its wire too)", Get::I64(|_, r| r.tx_bytes as i64)),
    col("tx_packets", "packets", "packets the port sent over the run", Get::I64(|_, r| r.tx_packets as i64)),
    col("utilisation", "", "tx bytes over what the link carries from the first sample interval's start to the run's end (0..1)", Get::F64(|_, r| r.utilisation)),
    col("drops", "packets", "packets dropped at the port: its egress queue's buffer or colour rules, a loss model on its wire; a packet no switch could route counts at the link it arrived over. Background packets included", Get::I64(|_, r| (r.counts.drops.total() + r.counts.drops_background) as i64)),
    col("drops_scheduled", "packets", "of its drops, data a grant, credit or PULL allowed (all data of a sender-driven scheme)", Get::I64(|_, r| r.counts.drops.scheduled_data as i64)),
    col("drops_unscheduled", "packets", "of its drops, data sent before any grant, credit or PULL", Get::I64(|_, r| r.counts.drops.unscheduled_data as i64)),
    col("drops_grants", "packets", "of its drops, grants, credits and PULLs", Get::I64(|_, r| r.counts.drops.grants as i64)),
    col("drops_control", "packets", "of its drops, every other control packet (ACK, NAK, CNP, ...)", Get::I64(|_, r| r.counts.drops.control as i64)),
    col("drops_background", "packets", "of its drops, background traffic ([[background]])", Get::I64(|_, r| r.counts.drops_background as i64)),
    col("trims", "packets", "data packets trimmed to their header at the port's egress queue ([switch] trim)", Get::I64(|_, r| r.counts.trims as i64)),
    col("ecn_marks", "packets", "packets the port marked CE", Get::I64(|_, r| r.ecn_marks as i64)),
    col("pfc_pauses_sent", "frames", "PFC pause frames the port sent to its peer", Get::I64(|_, r| r.pauses_sent as i64)),
    col("pfc_paused_us", "us", "time the peer held some of the port's data classes paused", Get::F64(|_, r| r.counts.paused.as_us_f64())),
    col("max_queue_bytes", "B", "the most bytes the port's egress queues held at once", Get::I64(|_, r| r.max_queue as i64)),
];

/// One row per tier and sample interval (`LinkReport::tier_samples`): the tier's selected
/// ports together; the context names the tiers.
pub static TIER_SAMPLES: Table<LinkNames, TierSample> = Table { name: "tier_samples", columns: TIER_SAMPLE_COLUMNS };

static TIER_SAMPLE_COLUMNS: &[Column<LinkNames, TierSample>] = &[
    col("time_us", "us", "end of the sampling interval", Get::F64(|_, s| s.time.as_us_f64())),
    col("tier", "", "the tier (see links.parquet)", Get::Str(|n, s| n.tiers[s.tier as usize].as_str())),
    col("links", "", "its selected ports", Get::I64(|_, s| s.links as i64)),
    col("tx_bytes", "B", "bytes they sent over the interval", Get::I64(|_, s| s.tx_bytes as i64)),
    col("utilisation", "", "tx bytes over what they could carry in the interval (0..1)", Get::F64(|_, s| s.utilisation)),
    col("max_utilisation", "", "the busiest port's share of its own link over the interval", Get::F64(|_, s| s.max_utilisation)),
    col("drops", "packets", "packets dropped at them over the interval", Get::I64(|_, s| s.drops as i64)),
    col("trims", "packets", "data packets trimmed at them over the interval", Get::I64(|_, s| s.trims as i64)),
    col("ecn_marks", "packets", "packets they marked CE over the interval", Get::I64(|_, s| s.ecn_marks as i64)),
    col("pfc_paused_us", "us", "time their data classes were held paused over the interval, summed over the ports", Get::F64(|_, s| s.paused.as_us_f64())),
    col("max_queue_bytes", "B", "the most bytes any of them queued in the interval", Get::I64(|_, s| s.max_queue as i64)),
];

/// Per sample interval, one row per port among the `[output] link_series` selected ports that
/// sent the most bytes in it (`LinkReport::link_samples`); the context names the ports.
pub static LINK_SAMPLES: Table<LinkNames, LinkSample> = Table { name: "link_samples", columns: LINK_SAMPLE_COLUMNS };

static LINK_SAMPLE_COLUMNS: &[Column<LinkNames, LinkSample>] = &[
    col("time_us", "us", "end of the sampling interval", Get::F64(|_, s| s.time.as_us_f64())),
    col("link", "", "the link direction, \"A->B\" (see links.parquet)", Get::Str(|n, s| n.links[s.link as usize].name.as_str())),
    col("tier", "", "its tier", Get::Str(|n, s| n.tiers[n.links[s.link as usize].tier as usize].as_str())),
    col("tx_bytes", "B", "bytes the port sent over the interval", Get::I64(|_, s| s.tx_bytes as i64)),
    col("utilisation", "", "tx bytes over what the link carries in the interval (0..1)", Get::F64(|_, s| s.utilisation)),
    col("drops", "packets", "packets dropped at the port over the interval", Get::I64(|_, s| s.drops as i64)),
    col("trims", "packets", "data packets trimmed at the port over the interval", Get::I64(|_, s| s.trims as i64)),
    col("ecn_marks", "packets", "packets the port marked CE over the interval", Get::I64(|_, s| s.ecn_marks as i64)),
    col("pfc_paused_us", "us", "time its data classes were held paused over the interval", Get::F64(|_, s| s.paused.as_us_f64())),
    col("peak_bytes", "B", "the most bytes its queues held in the interval", Get::I64(|_, s| s.peak as i64)),
    col("queue_bytes", "B", "bytes in its queues at the sample time", Get::I64(|_, s| s.queue_bytes as i64)),
];

/// One row per loss recovery scheme: its on-chip memory for a NIC of a given sizing
/// (`hw::memory::footprints`); no context.
pub static MEMORY: Table<(), Footprint> = Table { name: "memory", columns: MEMORY_COLUMNS };

static MEMORY_COLUMNS: &[Column<(), Footprint>] = &[
    col("scheme", "", "loss recovery scheme", Get::Str(|_, r| r.scheme)),
    col(
        "per_connection_bytes",
        "B",
        "loss-recovery bytes each connection adds to its context",
        Get::F64(|_, r| r.per_connection),
    ),
    col("shared_bytes", "B", "bytes shared by all connections of a NIC (sender + receiver)", Get::F64(|_, r| r.shared)),
    col(
        "off_chip_per_connection_bytes",
        "B",
        "device DRAM each connection needs at line rate (STRIDE's send slots); 0 where data stays in host memory",
        Get::F64(|_, r| r.off_chip_per_connection),
    ),
    col("average_bytes", "B", "per connection + shared / connections", Get::F64(|_, r| r.average)),
    col("pct_of_qpc", "%", "average bytes as a share of a 248 B CX-3 Pro QPC", Get::F64(|_, r| r.pct_of_qpc)),
    col("total_bytes", "B", "per connection x connections + shared", Get::F64(|_, r| r.total)),
    col("breakdown", "", "what the bytes are", Get::Str(|_, r| r.breakdown.as_str())),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_table() {
        for (table, specs) in schema() {
            let mut names: Vec<_> = specs.iter().map(|s| s.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), specs.len(), "{table} repeats a column name");
        }
    }

    /// Each kind of loss notification has its own column, and its description names the
    /// schemes that send it: a lossy run of every scheme counts in exactly the columns that
    /// name it, so no column's meaning depends on the scheme without saying so.
    #[test]
    fn notification_columns_name_their_schemes() {
        const KINDS: [&str; 8] = ["naks", "nacks", "sacks", "racks", "fast_retransmits", "aeolus_sack_losses", "aeolus_probe_losses", "resends"];
        // Scheme (config name), the words its column descriptions use for it.
        let schemes = [
            ("gbn", "go-back-N and"),
            ("stride", "STRIDE"),
            ("melo", "MELO"),
            ("irn", "IRN"),
            ("gbone", "Go-Back-ONE"),
            ("tcp", "TCP"),
            ("ndp", "NDP (one per trimmed"),
            ("homa", "Homa"),
            ("xpass", "ExpressPass"),
            ("homa-testbed", "testbed = true"),
        ];
        // Aeolus's losses: two 100 KB first RTTs at once into a 6,000 B selective drop (a
        // tail the probe finds lost) under the random loss (holes a SACK finds).
        let incast = r#", { src = "h2", dst = "h1", size = "300KB" }"#;
        let aeolus = "[[switch.wred]]\ncolour = 2\nthreshold = \"6000B\"";
        for (recovery, word) in schemes {
            // NDP learns of loss from trimmed packets only: two senders into a small buffer
            // that trims (and its timer, at 1 ms instead of htsim's 50, recovers the rest).
            let (hosts, second, switch) = match recovery {
                "ndp" => (3, r#", { src = "h2", dst = "h1", size = "300KB" }"#, "[switch]\nbuffer = \"20KB\"\npfc = { enabled = false }\ntrim = { queue = 0 }\n[recovery.ndp]\nrto_initial = \"1ms\"\nrto_min = \"1ms\"".to_string()),
                "homa" => (3, incast, format!("[switch]\nqueues = 8\npfc = {{ enabled = false }}\n[recovery.homa]\naeolus = true\nrtt_bytes = \"100KB\"\n{aeolus}")),
                "homa-testbed" => (3, incast, "[switch]\nqueues = 8\npfc = { enabled = false }\n[recovery.homa]\ntestbed = true\nrtt_bytes = \"100KB\"".to_string()),
                "xpass" => (3, incast, format!("[switch]\nqueues = 3\npfc = {{ enabled = false }}\nshaped = {{ queue = 2, buffer = 8, burst = 2 }}\n[recovery.xpass]\naeolus = true\nunscheduled_bytes = \"100KB\"\n{aeolus}")),
                _ => (2, "", String::new()),
            };
            let out = crate::run_toml(&format!(
                r#"
                name = "notifications"
                duration = "50ms"
                [topology]
                kind = "single-switch"
                hosts = {hosts}
                {switch}
                [transport]
                recovery = "{scheme}"
                cc = "{cc}"
                [[loss]]
                at = "everywhere"
                rate = {rate}
                [workload]
                kind = "flow-list"
                flows = [{{ src = "h0", dst = "h1", size = "300KB" }}{second}]
                "#,
                scheme = recovery.trim_end_matches("-testbed"),
                cc = if recovery == "stride" { "stride" } else { "none" },
                // Enough random loss that some first-RTT packet is lost between two that arrive.
                rate = if matches!(recovery, "homa" | "homa-testbed" | "xpass") { 0.05 } else { 0.02 },
            ))
            .unwrap();
            let flows = FLOWS.fill(&(), &out.flows);
            let count = |name: &str| match &flows.iter().find(|(s, _)| s.name == name).unwrap().1 {
                Data::I64(v) => v.iter().sum::<i64>(),
                _ => unreachable!(),
            };
            assert!(out.flows.iter().all(|f| f.finish.is_some()), "{recovery}: unfinished");
            let mut total = 0;
            for kind in KINDS {
                let named = FLOW_COLUMNS.iter().find(|c| c.name == kind).unwrap().description.contains(word);
                let n = count(kind);
                assert_eq!(n > 0, named, "{recovery}: {kind} = {n}, yet its description {} it", if named { "names" } else { "does not name" });
                total += n;
            }
            assert_eq!(count("notifications"), total, "{recovery}");
        }
    }

    #[test]
    fn every_column_has_as_many_values_as_rows() {
        let out = crate::run_toml(
            r#"
            name = "columns"
            duration = "300us"
            [topology]
            kind = "single-switch"
            [workload]
            kind = "flow-list"
            flows = [{ src = "h0", dst = "h1", size = "100KB" }, { src = "h1", dst = "h0", size = "10MB" }]
            "#,
        )
        .unwrap();
        let flows = FLOWS.fill(&(), &out.flows);
        assert_eq!(flows.len(), FLOW_COLUMNS.len());
        assert!(flows.iter().all(|(_, d)| d.len() == 2));
        let completed = &flows.iter().find(|(c, _)| c.name == "completed").unwrap().1;
        assert!(matches!(completed, Data::Bool(v) if v == &[true, false]));
        assert!(matches!(&flows.last().unwrap().1, Data::Str(v) if v == &["job0", "job0"]), "the job, by its default name");
        let ts = TIMESERIES.fill(&out.host_names, &out.samples);
        assert!(!ts[0].1.is_empty());
        assert!(ts.iter().all(|(_, d)| d.len() == out.samples.len()));
        let memory = &out.memory.as_ref().unwrap().rows;
        let table = MEMORY.fill(&(), memory);
        assert!(table.iter().all(|(_, d)| d.len() == memory.len()));
        assert!(matches!(&table[0].1, Data::Str(v) if v.contains(&"melo")));
    }
}
