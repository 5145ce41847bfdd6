//! DCTCP as a TCP window controller (RFC 8257; Alizadeh et al., "Data Center TCP",
//! SIGCOMM 2010), `cc = "dctcp-window"`. Not the rate-based RDMA DCTCP of the HPCC ns-3 model,
//! which is `cc = "dctcp"` ([`crate::transport::cc::dctcp`]).
//!
//! The sender counts acknowledged bytes and the bytes of ACKs carrying ECN-Echo; once per
//! window of data (when the cumulative ACK passes DCTCP.WindowEnd, the `snd_nxt` recorded at the
//! previous update) it sets F = marked / acknowledged and alpha = (1 - g) alpha + g F (RFC 8257
//! §3.3). An ECN echo cuts cwnd to cwnd x (1 - alpha / 2), at most once per window (the same
//! once-per-window guard as a loss, [`crate::transport::cc::reno::Window::reduce`]); otherwise the window grows
//! as Reno's, and a loss halves it as Reno's (RFC 8257 §3.4: loss is handled as by conventional
//! TCP). The receiver echoes per segment (see [`crate::transport::loss::tcp`]).

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::feedback::{AckSample, Flight};
use crate::transport::cc::reno::{initial_window, Window};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpWindowParams {
    /// EWMA gain (RFC 8257 §4.2 and the DCTCP paper: 1/16).
    pub g: f64,
    /// Alpha before the first update (Linux `dctcp_alpha_on_init` = 1024/1024 = 1: the first
    /// marks halve the window).
    pub initial_alpha: f64,
    /// Start in slow start (RFC 5681), as Linux DCTCP does.
    pub slow_start: bool,
    /// Initial window in segments (RFC 6928: 10); 0: one BDP of the run's longest base path.
    pub initial_window: u32,
}

impl Default for DctcpWindowParams {
    fn default() -> Self {
        DctcpWindowParams { g: 1.0 / 16.0, initial_alpha: 1.0, slow_start: true, initial_window: 10 }
    }
}

impl Controller for DctcpWindowParams {
    const NAME: &'static str = "dctcp-window";
    const IS_WINDOW: bool = true;
    type Cc = DctcpWindow;

    /// Fields by their names within `[cc.dctcp-window]`.
    fn check(&self) -> Checked {
        check::fraction("g", self.g)?;
        check::range_f64("initial_alpha", self.initial_alpha, 0.0, 1.0)?;
        check::range_u32("initial_window", self.initial_window, 0, 1 << 20)
    }

    fn build(&self, s: &CcSetup) -> DctcpWindow {
        DctcpWindow::new(self, s.mss, s.path.bdp_bytes)
    }
}

#[derive(Clone, Debug)]
pub struct DctcpWindow {
    pub w: Window,
    g: f64,
    alpha: f64,
    /// DCTCP.WindowEnd: the update is due when the cumulative ACK passes it.
    window_end: Option<u64>,
    bytes_acked: u64,
    bytes_marked: u64,
    pub ecn_cuts: u64,
}

impl DctcpWindow {
    pub fn new(p: &DctcpWindowParams, mss: u64, bdp_bytes: u64) -> Self {
        DctcpWindow {
            w: Window::new(mss, initial_window(p.initial_window, mss, bdp_bytes), p.slow_start),
            g: p.g,
            alpha: p.initial_alpha,
            window_end: None,
            bytes_acked: 0,
            bytes_marked: 0,
            ecn_cuts: 0,
        }
    }

    pub fn window(&self) -> u64 {
        self.w.cwnd()
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn on_ack(&mut self, s: &AckSample) {
        self.bytes_acked += s.acked_bytes;
        if s.ece {
            self.bytes_marked += s.acked_bytes;
        }
        match self.window_end {
            None => self.window_end = Some(s.snd_nxt),
            Some(end) if s.cum > end => {
                if self.bytes_acked > 0 {
                    let f = self.bytes_marked as f64 / self.bytes_acked as f64;
                    self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                }
                self.window_end = Some(s.snd_nxt);
                self.bytes_acked = 0;
                self.bytes_marked = 0;
            }
            _ => {}
        }
        if s.ece {
            let target = (self.w.cwnd() as f64 * (1.0 - self.alpha / 2.0)) as u64;
            if self.w.reduce(target, s.cum, s.snd_nxt) {
                self.ecn_cuts += 1;
            }
        }
        self.w.on_ack(s);
    }

    pub fn on_loss(&mut self, f: &Flight) {
        self.w.on_loss(f);
    }

    pub fn on_timeout(&mut self, f: &Flight) {
        self.w.on_timeout(f);
    }
}

impl crate::transport::common::congestion::CongestionControl for DctcpWindow {
    fn window(&self) -> Option<u64> {
        Some(DctcpWindow::window(self))
    }
    fn on_ack(&mut self, _now: crate::sim::units::Time, s: &AckSample) -> bool {
        DctcpWindow::on_ack(self, s);
        false
    }
    fn on_loss(&mut self, _now: crate::sim::units::Time, f: &Flight) {
        DctcpWindow::on_loss(self, f);
    }
    fn on_timeout(&mut self, _now: crate::sim::units::Time, f: &Flight) {
        DctcpWindow::on_timeout(self, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::reno::tests::ack;

    const MSS: u64 = 1_000;

    fn marked(cum: u64, acked: u64, snd_nxt: u64) -> AckSample {
        AckSample { ece: true, ..ack(cum, acked, snd_nxt) }
    }

    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_once_per_window() {
        let p = DctcpWindowParams { initial_alpha: 0.5, slow_start: false, initial_window: 40, ..Default::default() };
        let mut d = DctcpWindow::new(&p, MSS, 0);
        d.on_ack(&ack(0, 0, 20)); // opens the first observation window: WindowEnd = 20
        // A window of 20 segments, 5 of them echoed (F = 1/4).
        for i in 1..=20 {
            let s = if i % 4 == 0 { marked(i, MSS, 20) } else { ack(i, MSS, 20) };
            d.on_ack(&s);
        }
        assert_eq!(d.alpha(), 0.5, "no update before the ACK passes WindowEnd");
        d.on_ack(&ack(21, MSS, 40)); // passes 20: alpha = 15/16 x 0.5 + 1/16 x 5/21
        let f = 5.0 / 21.0;
        assert!((d.alpha() - (15.0 / 16.0 * 0.5 + f / 16.0)).abs() < 1e-12, "{}", d.alpha());
        // The next window: nothing marked, F = 0.
        let a = d.alpha();
        for i in 22..=41 {
            d.on_ack(&ack(i, MSS, 60));
        }
        assert!((d.alpha() - 15.0 / 16.0 * a).abs() < 1e-12);
    }

    #[test]
    fn an_echo_cuts_by_alpha_over_two_once_per_window() {
        let p = DctcpWindowParams { initial_alpha: 0.5, slow_start: false, initial_window: 40, ..Default::default() };
        let mut d = DctcpWindow::new(&p, MSS, 0);
        d.on_ack(&marked(1, MSS, 40));
        assert_eq!(d.window(), 30 * MSS, "40 x (1 - 0.5 / 2)");
        assert_eq!(d.w.ssthresh(), 30 * MSS);
        for i in 2..40 {
            d.on_ack(&marked(i, MSS, 45));
        }
        assert_eq!((d.window(), d.ecn_cuts), (30 * MSS, 1), "no second cut inside the window, no growth");
        // Past snd_nxt of the cut (40): the episode ends; a new echo may cut again.
        d.on_ack(&ack(40, MSS, 45));
        d.on_ack(&marked(41, MSS, 70));
        assert_eq!(d.ecn_cuts, 2);
        assert_eq!(d.window(), (30.0 * MSS as f64 * (1.0 - d.alpha() / 2.0)) as u64);
    }

    #[test]
    fn a_loss_halves_the_flight() {
        let mut d = DctcpWindow::new(&DctcpWindowParams::default(), MSS, 0);
        d.on_loss(&Flight { bytes: 10 * MSS, snd_una: 0, snd_nxt: 10 });
        assert_eq!(d.window(), 5 * MSS);
    }

    #[test]
    fn a_timeout_is_renos() {
        // The retransmission timer: one MSS, slow start up to half the flight (RFC 8257 keeps
        // RFC 5681's timeout response).
        let p = DctcpWindowParams { slow_start: false, initial_window: 40, ..Default::default() };
        let mut d = DctcpWindow::new(&p, MSS, 0);
        d.on_timeout(&Flight { bytes: 40 * MSS, snd_una: 0, snd_nxt: 40 });
        assert_eq!(d.window(), MSS);
    }
}
