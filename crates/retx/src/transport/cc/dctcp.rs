//! DCTCP for RDMA NICs as the HPCC ns-3 model implements it (`RdmaHw::HandleAckDctcp`,
//! `CC_MODE 8`): rate-based. Alpha is updated once per window of data (when the ACK passes the
//! `snd_nxt` recorded at the last update) from the fraction of ECN-echoing ACKs; an echo cuts
//! the rate by alpha/2 at most once per window (CWR state); each new window without a cut adds
//! `rate_ai`.

use crate::transport::common::scheme::{CcSetup, Controller};
use crate::sim::check::{self, Checked};
use crate::transport::common::rate_window::RateWindow;
use crate::transport::common::flow::BasePath;
use crate::sim::units::Bw;
use crate::sim::units::Rate;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// EWMA gain (DCTCP paper and RFC 8257: 1/16; HPCC run.py `dctcp`: 0.0625).
    pub g: f64,
    /// Additive increase per window (HPCC run.py: 615 Mbps, "1 MTU per RTT" at 13 us).
    pub rate_ai: Bw,
    /// Rate floor (HPCC attribute default `MinRate` 100 Mbps).
    pub min_rate: Bw,
    /// A window of payload bytes in flight beside the rate (ns-3 `HAS_WIN`, `VAR_WIN`;
    /// `run.py --cc dctcp`: none).
    pub window: RateWindow,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, rate_ai: Bw(Rate::mbps(615)), min_rate: Bw(Rate::mbps(100)), window: RateWindow::None }
    }
}

impl Controller for DctcpParams {
    const NAME: &'static str = "dctcp";
    type Cc = Dctcp;

    /// Fields by their names within `[cc.dctcp]`.
    fn check(&self) -> Checked {
        check::range_f64("g", self.g, 0.0, 1.0)?;
        check::positive_rate("rate_ai", self.rate_ai.0)?;
        check::positive_rate("min_rate", self.min_rate.0)
    }

    fn build(&self, s: &CcSetup) -> Dctcp {
        Dctcp::new(*self, s.line).with_path(s.path)
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    line: f64,
    /// The run's reference path, for the optional window (`with_path`; none by default).
    path: BasePath,
    rate: f64,
    alpha: f64,
    /// snd_nxt when alpha was last updated (None before the first ACK).
    last_update_seq: Option<u64>,
    ecn_count: u64,
    batch: u64,
    /// Congestion window reduced: no further cut until the ACK passes `high_seq`.
    cwr: bool,
    high_seq: u64,
    pub cuts: u64,
}

impl Dctcp {
    pub fn new(p: DctcpParams, line: Rate) -> Self {
        Dctcp {
            p,
            line: line.0 as f64,
            path: BasePath::default(),
            rate: line.0 as f64,
            alpha: 1.0,
            last_update_seq: None,
            ecn_count: 0,
            batch: 1,
            cwr: false,
            high_seq: 0,
            cuts: 0,
        }
    }

    /// Sizes the optional window from the run's reference path (ns-3 `maxBdp`, `GLOBAL_T 1`).
    pub fn with_path(mut self, path: BasePath) -> Self {
        self.path = path;
        self
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate as u64)
    }

    /// The most payload bytes in flight (None: no window): one BDP of the reference path, or
    /// with `window = "variable"` that BDP x the current rate / line rate, at least 1 byte
    /// (ns-3 `GetWin`, as TIMELY's).
    pub fn window(&self) -> Option<u64> {
        self.p.window.bytes(self.path.bdp_bytes, self.rate as u64, self.line as u64)
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// An ACK (or NAK/NACK/RACK) with cumulative `ack` packets and ECN echo `ece`;
    /// `snd_nxt` is the sender's next new packet.
    pub fn on_ack(&mut self, ack: u64, ece: bool, snd_nxt: u64) {
        self.ecn_count += ece as u64;
        let mut new_batch = false;
        match self.last_update_seq {
            None => {
                new_batch = true;
                self.last_update_seq = Some(snd_nxt);
                self.batch = snd_nxt + 1;
            }
            Some(last) if ack > last => {
                new_batch = true;
                let frac = (self.ecn_count as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac;
                self.last_update_seq = Some(snd_nxt);
                self.ecn_count = 0;
                self.batch = snd_nxt.saturating_sub(ack) + 1;
            }
            _ => {}
        }
        if self.cwr && ack > self.high_seq {
            self.cwr = false;
        }
        if ece && !self.cwr {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.p.min_rate.0 .0 as f64);
            self.cwr = true;
            self.high_seq = snd_nxt;
            self.cuts += 1;
        }
        if !self.cwr && new_batch {
            self.rate = (self.rate + self.p.rate_ai.0 .0 as f64).min(self.line);
        }
    }
}

impl crate::transport::common::congestion::CongestionControl for Dctcp {
    fn rate(&self) -> Option<Rate> {
        Some(Dctcp::rate(self))
    }
    fn window(&self) -> Option<u64> {
        Dctcp::window(self)
    }
    fn on_ack(&mut self, _now: crate::sim::units::Time, s: &crate::transport::common::feedback::AckSample) -> bool {
        Dctcp::on_ack(self, s.cum, s.ece, s.snd_nxt);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cut_per_window_then_additive_increase() {
        let mut d = Dctcp::new(DctcpParams::default(), Rate::gbps(100));
        d.on_ack(1, true, 10); // first ACK opens a window; alpha = 1: cut to half
        assert_eq!(d.rate(), Rate::gbps(50));
        d.on_ack(2, true, 11); // still inside the window (ack <= high_seq = 10): no second cut
        assert_eq!(d.rate(), Rate::gbps(50));
        // ACK 11 passes last_update_seq (10): alpha = 15/16 + 1/16 * min(1, 2/11); CWR ends;
        // no echo: +615 Mbps.
        d.on_ack(11, false, 20);
        let frac: f64 = 2.0 / 11.0;
        assert!((d.alpha() - (15.0 / 16.0 + frac / 16.0)).abs() < 1e-12);
        assert_eq!(d.rate(), Rate(50_615_000_000));
        // The next window is the 10 packets from 11 to snd_nxt 20. One of its ACKs echoes a
        // mark; an ACK of exactly 20 does not pass the mark yet; 21 does: F = 1/10.
        let alpha1 = d.alpha();
        d.on_ack(15, true, 22);
        d.on_ack(20, false, 24);
        assert_eq!(d.alpha(), alpha1);
        d.on_ack(21, false, 25);
        assert!((d.alpha() - (15.0 / 16.0 * alpha1 + 0.1 / 16.0)).abs() < 1e-12, "{}", d.alpha());
    }

    #[test]
    fn a_cut_takes_alpha_over_two_and_cwr_lasts_through_high_seq() {
        let mut d = Dctcp::new(DctcpParams::default(), Rate::gbps(100));
        d.on_ack(1, true, 10); // alpha = 1: half; CWR until an ACK passes snd_nxt 10
        assert_eq!((d.rate(), d.cuts), (Rate::gbps(50), 1));
        // An ACK of exactly high_seq is still inside the reduced window: no second cut.
        d.on_ack(10, true, 12);
        assert_eq!((d.rate(), d.cuts), (Rate::gbps(50), 1));
        // Twenty windows without a mark: alpha decays by 15/16 each (to ~0.3).
        let mut last = 12;
        for _ in 0..20 {
            d.on_ack(last + 1, false, last + 10);
            last += 10;
        }
        assert!(d.alpha() < 0.35 && d.alpha() > 0.25, "{}", d.alpha());
        // A mark inside the window cuts by alpha / 2, not by half.
        let (rate, alpha) = (d.rate, d.alpha());
        d.on_ack(last - 5, true, last + 1);
        assert_eq!(d.rate, rate * (1.0 - alpha / 2.0));
        assert!(d.rate > 0.8 * rate && d.rate < 0.9 * rate);
        assert_eq!(d.cuts, 2);
    }

    #[test]
    fn the_window_is_none_fixed_or_scaled_by_the_rate() {
        let path = BasePath { rtt: crate::sim::units::Time::from_us(10), bdp_bytes: 125_000 };
        let with = |window| {
            let mut d = Dctcp::new(DctcpParams { window, ..DctcpParams::default() }, Rate::gbps(100)).with_path(path);
            let before = d.window();
            d.on_ack(1, true, 10); // alpha = 1: the rate halves
            (before, d.window())
        };
        assert_eq!(with(RateWindow::None), (None, None));
        assert_eq!(with(RateWindow::Fixed), (Some(125_000), Some(125_000)));
        assert_eq!(with(RateWindow::Variable), (Some(125_000), Some(62_500)));
        // No reference path: no window; the default is none.
        let d = Dctcp::new(DctcpParams { window: RateWindow::Variable, ..DctcpParams::default() }, Rate::gbps(100));
        assert_eq!(d.window(), None);
        assert_eq!(DctcpParams::default().window, RateWindow::None);
        let p: DctcpParams = toml::from_str("window = \"variable\"").unwrap();
        assert_eq!(p.window, RateWindow::Variable);
        assert!(toml::from_str::<DctcpParams>("window = \"dynamic\"").is_err());
    }
}
