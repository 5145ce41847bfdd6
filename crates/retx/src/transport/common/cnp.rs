//! The receiver's congestion notification point (RoCEv2 Annex A17): CNPs for marked data.

use crate::sim::units::Time;

/// Receiver-side CNP pacing of one QP: RoCEv2's congestion notification point, at most one CNP
/// per interval for ECN-marked data (DCQCN's NP).
#[derive(Clone, Debug, Default)]
pub struct CnpPacer {
    interval: Time,
    last_cnp: Option<Time>,
}

impl CnpPacer {
    pub fn new(interval: Time) -> Self {
        CnpPacer { interval, last_cnp: None }
    }

    /// A data packet arrived; returns true if a CNP must be sent for it.
    pub fn on_data(&mut self, now: Time, ecn: bool) -> bool {
        if !ecn {
            return false;
        }
        if let Some(t) = self.last_cnp {
            if now < t + self.interval {
                return false;
            }
        }
        self.last_cnp = Some(now);
        true
    }
}
