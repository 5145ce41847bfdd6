//! RED/ECN marking on an egress queue: the probability rises linearly from 0 at `kmin` to
//! `pmax` at `kmax`, and every packet is marked above `kmax` (the DCQCN paper's Fig. 4 and HPCC
//! ns-3's `SwitchNode::ShouldSendCN`, evaluated at dequeue on the bytes left behind).

use crate::sim::rng::Rng;

/// One marking profile, in bytes of egress queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedProfile {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl RedProfile {
    /// The probability of marking a packet that leaves `queued` bytes behind it.
    pub fn probability(&self, queued: u64) -> f64 {
        if queued > self.kmax {
            1.0
        } else if queued > self.kmin {
            self.pmax * (queued - self.kmin) as f64 / (self.kmax - self.kmin).max(1) as f64
        } else {
            0.0
        }
    }

    /// Draws the marking decision; the random stream is touched only between the thresholds,
    /// so that a queue that never enters the ramp consumes no randomness.
    pub fn should_mark(&self, queued: u64, rng: &mut Rng) -> bool {
        if queued > self.kmax {
            true
        } else if queued > self.kmin {
            rng.uniform() < self.probability(queued)
        } else {
            false
        }
    }
}
