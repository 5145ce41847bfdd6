//! Ultra Ethernet's transport (UET, UEC specification 1.0) as the consortium's own simulator
//! models it: uet-htsim (github ultraethernet/uet-htsim at 40ccb05, `htsim/sim/uec.cpp`,
//! `uec.h`, `uec_mp.cpp`, `buffer_reps.cpp`, `uecpacket.h`, `datacenter/main_uec.cpp`; learnt
//! from, not copied). Where its code and the specification differ, the code is followed and
//! the specification's value is a setting.
//!
//! - Packet delivery (PDS): RUD, reliable unordered delivery ([`sender`], [`receiver`]):
//!   packets sprayed over the connection's entropy values, a cumulative ACK with a 64-bit
//!   SACK bitmap once per 16 KB or at once on ECN, a NACK for every trimmed header, one fixed
//!   retransmission timeout for the oldest send; no handshake. ROD (ordered, one path,
//!   go-back on an out-of-order NACK) is a simple variant here; uet-htsim has RUD only. UUD
//!   (unreliable: every packet sent once, nothing back, the receiver judging when a message
//!   is over: [`uud`]) is UEC 1.0's fourth mode, also not in uet-htsim.
//! - Congestion control: NSCC at the sender ([`nscc`]), RCCC's receiver credits paced per
//!   host at 0.99 of the link ([`pacer`]), or both (`cc`: uet-htsim's `-sender_cc_only`,
//!   `-receiver_cc_only`, `-sender_cc -receiver_cc`).
//! - Load balancing: the sender chooses every packet's entropy value ([`lb`]: oblivious,
//!   bitmap, REPS, REPS-legacy, mixed), which switches hash with the connection's
//!   (`Scheme::chooses_entropy`).
//!
//! Pair it with uet-htsim's switches: `[switch] trim` with per-port `data_queue` (its
//! `CompositeQueue`, one BDP), ECN marked at dequeue between 20 % and 80 % of a BDP,
//! `[routing] policy = "ecmp"`, headers and control of 64 B (`retx reproduce uet-htsim-crosscheck`
//! builds them from uet-htsim's own settings).

pub mod lb;
pub mod nscc;
pub mod oversub;
pub mod pacer;
pub mod params;
pub mod receiver;
pub mod sender;
pub mod uud;

pub use self::params::{Delivery, SenderConfig, UetCc, UetParams, HEADER_BYTES, PULL_SHIFT};

use self::lb::{LbKind, Multipath};
use self::nscc::{Nscc, NsccConfig, NsccInputs};
use self::pacer::{UetAgent, UetCounts};
use self::receiver::{ReceiverConfig, UetReceiver};
use self::sender::UetSender;
use crate::sim::check::{self, Checked, FieldError};
use crate::sim::units::{Rate, Time};
use crate::transport::common::scheme::{RunFacts, Scheme, Setup};

impl UetParams {
    fn nscc_on(&self) -> bool {
        matches!(self.cc, UetCc::Nscc | UetCc::Both)
    }

    fn rccc_on(&self) -> bool {
        matches!(self.cc, UetCc::Rccc | UetCc::Both)
    }

    /// The run's network RTT: set, or what the network gives.
    fn network_rtt(&self, f: &Setup<'_>) -> Time {
        self.network_rtt.map_or(f.net.network_rtt, |d| d.0)
    }

    /// The oversubscribed-fabric control, when on: set, or on where RCCC runs alone and the
    /// network is oversubscribed (`main_uec.cpp:688-691`).
    fn oversub_cfg(&self, f: &Setup<'_>, network_rtt: Time) -> Option<oversub::OversubCfg> {
        let ratio = f.net.oversubscription();
        let on = self.oversubscribed_cc.unwrap_or(self.cc == UetCc::Rccc && ratio > 1.0);
        on.then(|| oversub::OversubCfg { base_rtt: network_rtt, min_rate: oversub::OversubCfg::min_rate_for(ratio), seed: f.spec.key })
    }

    /// uet-htsim's fixed timeout (`main_uec.cpp:694-696`).
    pub fn rto_for(&self, line: Rate, switch_queue: Option<u64>) -> Time {
        match (self.rto, switch_queue) {
            (Some(d), _) => d.0,
            (None, Some(q)) => Time::from_us(15) + Time(6 * line.serialization(q).0),
            (None, None) => Time::from_us(100),
        }
    }
}

impl Scheme for UetParams {
    const NAME: &'static str = "uet";
    const TAKES_WINDOW_CC: bool = false;
    const OWN_CC: bool = true;
    type Sender = Box<UetSender>;
    type Receiver = UetReceiver;
    /// The host's pull pacer and counters.
    type Agent = UetAgent;

    /// Fields by their names within `[recovery.uet]`.
    fn check(&self) -> Checked {
        check::range_u32("paths", self.paths, 1, 1 << 15)?;
        if !self.paths.is_power_of_two() && matches!(self.load_balancing, LbKind::Oblivious | LbKind::Bitmap | LbKind::Mixed) {
            return Err(FieldError::new("paths", format!("{} is not a power of two (load_balancing \"{}\" masks EVs by paths - 1)", self.paths, self.load_balancing.name())));
        }
        check::range_u32("initial_window", self.initial_window, 0, 1 << 20)?;
        if let Some(d) = self.rto {
            check::timer("rto", d.0)?;
        }
        if !(64..=65_535).contains(&self.sack_threshold.0) {
            return Err(FieldError::new("sack_threshold", format!("{} B is out of range (allowed 64B..=65535B: the receiver counts in 16 bits)", self.sack_threshold.0)));
        }
        if self.target_delay.0 > Time::from_ms(10) {
            return Err(FieldError::new("target_delay", format!("{} is out of range (allowed 0, the default, ..=10ms)", self.target_delay.0)));
        }
        check::range_u32("qa_gate", self.qa_gate, 0, 30)?;
        check::range_u32("window_penalty", self.window_penalty, 0, 255)?;
        check::range_f64("pull_rate", self.pull_rate, 0.01, 1.0)?;
        if !(256..=1 << 20).contains(&self.credit_per_pull.0) {
            return Err(FieldError::new("credit_per_pull", format!("{} B is out of range (allowed 256B..=1MB)", self.credit_per_pull.0)));
        }
        if self.reference_rate.0 .0 == 0 {
            return Err(FieldError::new("reference_rate", "must be greater than 0"));
        }
        check::timer("reference_rtt", self.reference_rtt.0)?;
        if let Some(d) = self.network_rtt {
            check::timer("network_rtt", d.0)?;
        }
        if self.oversubscribed_cc == Some(true) && !self.rccc_on() {
            return Err(FieldError::new("oversubscribed_cc", "slows the receivers' pull pacers, which run with RCCC only: set cc = \"rccc\" or \"both\""));
        }
        if self.delivery == Delivery::Rod && self.paths != 1 {
            return Err(FieldError::new("delivery", "\"rod\" delivers in order over one path: set paths = 1"));
        }
        if self.delivery == Delivery::Uud && self.cc != UetCc::None {
            return Err(FieldError::new("cc", format!("\"{}\" needs ACKs or PULLs, which \"uud\" delivery never sends: set cc = \"none\"", self.cc.name())));
        }
        if self.delivery == Delivery::Uud && self.load_balancing != LbKind::Oblivious && self.paths > 1 {
            return Err(FieldError::new("load_balancing", format!("\"{}\" steers by ACKs, NACKs and timeouts, which \"uud\" delivery never has: set load_balancing = \"oblivious\" (or paths = 1)", self.load_balancing.name())));
        }
        if self.load_balancing == LbKind::Reps && !self.trimming {
            return Err(FieldError::new("load_balancing", "\"reps\" freezes on timeouts only with trimming (uet-htsim exits without it): set trimming = true"));
        }
        Ok(())
    }

    /// Settings given away from their defaults that the run as configured never reads: NSCC's
    /// without NSCC, RCCC's without RCCC, the ACK threshold without ACKs (UUD).
    fn inert_settings(&self) -> Vec<String> {
        let d = UetParams::default();
        let cc = self.cc.name();
        let mut out = Vec::new();
        let mut inert = |field: &str, set: bool, why: String| {
            if set {
                out.push(format!("{field}: ignored: {why}"));
            }
        };
        let no_nscc = format!("cc = \"{cc}\" runs no NSCC window");
        if !self.nscc_on() {
            inert("initial_window", self.initial_window != d.initial_window, no_nscc.clone());
            inert("target_delay", self.target_delay != d.target_delay, no_nscc.clone());
            inert("qa_gate", self.qa_gate != d.qa_gate, no_nscc.clone());
            inert("quick_adapt", self.quick_adapt != d.quick_adapt, no_nscc.clone());
            inert("window_penalty", self.window_penalty != d.window_penalty, no_nscc.clone());
            inert("reference_rate", self.reference_rate != d.reference_rate, no_nscc.clone());
            inert("reference_rtt", self.reference_rtt != d.reference_rtt, no_nscc);
        }
        if !self.rccc_on() {
            let no_rccc = format!("cc = \"{cc}\" runs no receiver credit");
            inert("pull_rate", self.pull_rate != d.pull_rate, no_rccc.clone());
            inert("credit_per_pull", self.credit_per_pull != d.credit_per_pull, no_rccc);
        }
        if !self.quick_adapt {
            inert("qa_gate", self.qa_gate != d.qa_gate, "quick_adapt = false".into());
        }
        if self.paths == 1 {
            inert("load_balancing", self.load_balancing != d.load_balancing, "paths = 1 gives every packet the one entropy value".into());
        }
        if self.delivery == Delivery::Uud {
            let no_acks = "\"uud\" delivery sends no ACK or NACK".to_string();
            inert("sack_threshold", self.sack_threshold != d.sack_threshold, no_acks.clone());
            inert("base_rtt_from_nacks", self.base_rtt_from_nacks != d.base_rtt_from_nacks, no_acks);
        }
        out
    }

    fn check_run(&self, run: &RunFacts) -> Checked {
        // uet-htsim counts window bytes in 32 bits (`_bytes_to_ignore`, `uint32_t`), as NSCC
        // here does: a first window must fit.
        let window = self.initial_window as u64 * (run.mtu as u64 + HEADER_BYTES as u64);
        if window > u32::MAX as u64 {
            return Err(FieldError::new("initial_window", format!("{} packets of {} B are {window} B, above the 32-bit byte counts NSCC keeps (as uet-htsim): at most {}", self.initial_window, run.mtu + HEADER_BYTES, u32::MAX as u64 / (run.mtu as u64 + HEADER_BYTES as u64))));
        }
        // uet-htsim's `_accepted_bytes` is 16 bits: a packet must fit.
        if run.mtu + HEADER_BYTES > 65_535 {
            return Err(FieldError::new("sack_threshold", format!("nic.mtu = {} B: a packet and its header must fit the receiver's 16-bit byte count", run.mtu)));
        }
        Ok(())
    }

    fn endpoints(&self, f: &Setup<'_>) -> (Box<UetSender>, UetReceiver) {
        let mss = f.spec.mtu;
        let mtu = mss + HEADER_BYTES;
        let network_rtt = self.network_rtt(f);
        let inputs = NsccInputs {
            mtu,
            mss,
            network_rtt,
            line: f.line,
            target: self.target_delay.0,
            qa_gate: Some(self.qa_gate as u8),
            trimming: self.trimming,
            reference_rate: self.reference_rate.0,
            reference_rtt: self.reference_rtt.0,
            quick_adapt: self.quick_adapt,
        };
        let cwnd = self.initial_window as i64 * mtu as i64;
        let nscc = Nscc::new(NsccConfig::new(&inputs), network_rtt, cwnd);
        let configured_maxwnd = nscc.maxwnd;
        let rto = self.rto_for(f.line, f.net.switch_queue);
        let cfg = SenderConfig {
            nscc: self.nscc_on(),
            rccc: self.rccc_on(),
            mtu,
            mss,
            rto,
            rts_gap: if self.nscc_on() { network_rtt } else { Time::ZERO },
            configured_maxwnd,
            base_rtt_from_nacks: self.base_rtt_from_nacks,
            window_penalty: self.window_penalty as u8,
            delivery: self.delivery,
        };
        let paths = if self.delivery == Delivery::Rod { 1 } else { self.paths as u16 };
        let mp = Multipath::new(self.load_balancing, paths, f.spec.key);
        let tx = UetSender::new(cfg, nscc, mp, f.spec.size, mss);
        let rx_cfg = ReceiverConfig {
            sack_threshold: self.sack_threshold.0 as u32,
            rccc: self.rccc_on(),
            max_slow: (configured_maxwnd >> PULL_SHIFT) as u32,
            delivery: self.delivery,
            oversub: self.oversub_cfg(f, network_rtt),
            rto,
        };
        (Box::new(tx), UetReceiver::new(rx_cfg, f.npkts()))
    }

    fn agent(&self, link: Rate, _mtu: u32) -> Option<UetAgent> {
        Some(UetAgent::new(link, self.pull_rate, self.credit_per_pull.0))
    }

    fn data_header(&self) -> u32 {
        HEADER_BYTES
    }

    fn response_bytes(&self, int_header: u32) -> u32 {
        HEADER_BYTES + int_header
    }

    fn chooses_entropy(&self) -> bool {
        true
    }

    fn sizes_by_network(&self) -> bool {
        true
    }

    fn receiver_completes(&self) -> bool {
        self.delivery == Delivery::Uud
    }

    fn report<'a>(agents: &mut dyn Iterator<Item = &'a UetAgent>) -> Vec<(&'static str, f64)> {
        let mut c = UetCounts::default();
        for a in agents {
            let x = a.counts;
            c.pulls_sent += x.pulls_sent;
            c.slow_pulls += x.slow_pulls;
            c.rts_sent += x.rts_sent;
            c.acks_received += x.acks_received;
            c.nacks_received += x.nacks_received;
            c.pulls_received += x.pulls_received;
        }
        vec![
            ("uet_acks_received", c.acks_received as f64),
            ("uet_nacks_received", c.nacks_received as f64),
            ("uet_pulls_received", c.pulls_received as f64),
            ("uet_pulls_sent", c.pulls_sent as f64),
            ("uet_slow_pulls", c.slow_pulls as f64),
            ("uet_rts_sent", c.rts_sent as f64),
        ]
    }
}
