//! What a run reports of its collectives: one record per step and per iteration of each group
//! (`workload::collective::summarise` fills them from the flow records).

use crate::sim::units::Time;

/// One step of one iteration of one group's collective.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRecord {
    /// The job (workload) it belongs to.
    pub job: String,
    /// The collective's group, numbered across the run's jobs.
    pub group: u32,
    pub iteration: u32,
    pub step: u32,
    pub flows: u32,
    pub bytes: u64,
    /// When its first flow started.
    pub start: Time,
    /// When its last flow was received; None if one was not.
    pub end: Option<Time>,
    /// Alone on an empty network, until the receiver has every byte: the longest of its ranks'
    /// sends (each rank's bytes of the step over its path).
    pub ideal: Time,
    /// The flow received last (the step's straggler).
    pub slowest_flow: u32,
}

/// One iteration of one group's collective.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationRecord {
    /// The job (workload) it belongs to.
    pub job: String,
    /// The collective's group, numbered across the run's jobs.
    pub group: u32,
    pub iteration: u32,
    pub op: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    /// Each rank's buffer (NCCL's size).
    pub size: u64,
    pub steps: u32,
    pub start: Time,
    /// When its last flow was received; None if one was not.
    pub end: Option<Time>,
    /// The sum of its steps' ideals: no overlap between steps, no contention.
    pub ideal: Time,
    /// NCCL's bus bandwidth factor of the op on `ranks`.
    pub bus_factor: f64,
    /// The step that took longest.
    pub slowest_step: u32,
}

impl IterationRecord {
    /// The collective completion time.
    pub fn cct(&self) -> Option<Time> {
        self.end.map(|e| e - self.start)
    }
    pub fn slowdown(&self) -> Option<f64> {
        self.cct().map(|c| c.0 as f64 / self.ideal.0.max(1) as f64)
    }
    /// NCCL's algorithm bandwidth, size / time, in bits per second.
    pub fn algbw_bps(&self) -> Option<f64> {
        self.cct().map(|c| self.size as f64 * 8.0 / c.as_secs_f64().max(1e-18))
    }
    pub fn busbw_bps(&self) -> Option<f64> {
        self.algbw_bps().map(|a| a * self.bus_factor)
    }
}
