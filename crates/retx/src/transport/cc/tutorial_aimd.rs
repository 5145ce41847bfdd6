//! The congestion controller of docs/ADDING_A_SCHEME.md: a window of payload bytes in flight,
//! one MSS larger for every window of bytes acknowledged (additive increase), halved when the
//! recovery scheme reports a loss (multiplicative decrease) and one MSS after a timeout.
//! Compiled only under `cfg(test)`, as the tutorial's loss recovery scheme is.

use crate::transport::common::congestion::CongestionControl;
use crate::transport::common::feedback::{AckSample, Flight};
use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::units::Time;

/// What `[cc.tutorial-aimd]` would hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AimdParams {
    /// The first window, in packets.
    pub initial_window: u32,
}

impl Default for AimdParams {
    fn default() -> Self {
        AimdParams { initial_window: 4 }
    }
}

/// The parameters build the controller: `cc = "tutorial-aimd"`, a window, not a rate.
impl Controller for AimdParams {
    const NAME: &'static str = "tutorial-aimd";
    const IS_WINDOW: bool = true;
    type Cc = Aimd;
    fn build(&self, s: &CcSetup) -> Aimd {
        Aimd::new(self, s.mss)
    }
}

#[derive(Clone, Debug)]
pub struct Aimd {
    mss: u64,
    cwnd: u64,
    /// Bytes acknowledged towards the next increase.
    acked: u64,
}

impl Aimd {
    pub fn new(p: &AimdParams, mss: u64) -> Self {
        Aimd { mss, cwnd: p.initial_window.max(1) as u64 * mss, acked: 0 }
    }
}

impl CongestionControl for Aimd {
    fn window(&self) -> Option<u64> {
        Some(self.cwnd)
    }
    fn on_ack(&mut self, _now: Time, sample: &AckSample) -> bool {
        self.acked += sample.acked_bytes;
        if self.acked >= self.cwnd {
            self.acked -= self.cwnd;
            self.cwnd += self.mss;
        }
        false // not a congestion notification (only DCQCN's per-mark CNPs are)
    }
    fn on_loss(&mut self, _now: Time, _flight: &Flight) {
        self.cwnd = (self.cwnd / 2).max(self.mss);
        self.acked = 0;
    }
    fn on_timeout(&mut self, _now: Time, _flight: &Flight) {
        self.cwnd = self.mss;
        self.acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::reno::tests::ack;

    #[test]
    fn one_mss_per_window_acknowledged_half_on_a_loss_one_mss_on_a_timeout() {
        let mut cc = Aimd::new(&AimdParams::default(), 1_000);
        let (now, flight) = (Time::ZERO, Flight { bytes: 0, snd_una: 0, snd_nxt: 0 });
        for i in 1..=4 {
            cc.on_ack(now, &ack(i, 1_000, 8));
        }
        assert_eq!(cc.window(), Some(5_000));
        cc.on_loss(now, &flight);
        assert_eq!(cc.window(), Some(2_500));
        cc.on_timeout(now, &flight);
        assert_eq!(cc.window(), Some(1_000));
    }
}
