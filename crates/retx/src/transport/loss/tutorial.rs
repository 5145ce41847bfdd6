//! The loss recovery scheme of docs/ADDING_A_SCHEME.md: go-back-N with a fixed timeout, as
//! small as the two traits allow. The receiver takes only the packet it expects, acknowledges
//! every packet it takes (and every duplicate) cumulatively, and NAKs the first packet past a
//! hole, once per hole; the sender goes back to the packet a NAK names, or to its oldest
//! unacknowledged packet when its timer expires. Compiled only under `cfg(test)`, so users
//! never see it; the tutorial's last section says how to make it a real scheme.

use crate::transport::common::psn::PsnReader;
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{SegKind, Segment};
use crate::transport::common::agent::{NicCall, NoAgent};
use crate::transport::common::scheme::{Scheme, Setup};
use crate::sim::units::{Rate, Time};

/// What `[recovery.tutorial]` would hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TutorialParams {
    /// Go back to the oldest unacknowledged packet after this long without progress.
    pub rto: Time,
}

impl Default for TutorialParams {
    fn default() -> Self {
        TutorialParams { rto: Time::from_us(100) }
    }
}

/// The parameters are the scheme's factory: its name, its two ends' types, and how a flow's
/// ends are built. Every other method of `Scheme` keeps its default (the run's header sizes,
/// no NIC-wide agent, no QP cache).
impl Scheme for TutorialParams {
    const NAME: &'static str = "tutorial";
    type Sender = TutorialSender;
    type Receiver = TutorialReceiver;
    type Agent = NoAgent;

    fn endpoints(&self, f: &Setup<'_>) -> (TutorialSender, TutorialReceiver) {
        (TutorialSender::new(self, f.npkts()), TutorialReceiver::default())
    }
}

/// The send side: packets below `snd_una` are acknowledged, `snd_nxt` goes next.
#[derive(Clone, Debug)]
pub struct TutorialSender {
    npkts: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// One past the highest packet ever sent: below it, a send is a retransmission.
    high: u64,
    rto: Time,
    deadline: Option<Time>,
}

impl TutorialSender {
    pub fn new(p: &TutorialParams, npkts: u64) -> Self {
        TutorialSender { npkts, snd_una: 0, snd_nxt: 0, high: 0, rto: p.rto, deadline: None }
    }

    /// The timer runs while something sent is unacknowledged, from the last progress.
    fn restart_timer(&mut self, now: Time) {
        self.deadline = (self.snd_una < self.high).then(|| now + self.rto);
    }
}

impl SendRecovery for TutorialSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        self.snd_nxt < self.npkts
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    fn next(&mut self, now: Time, _rate: Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.snd_nxt >= self.npkts {
            return None;
        }
        let (index, retransmit) = (self.snd_nxt, self.snd_nxt < self.high);
        self.snd_nxt += 1;
        self.high = self.high.max(self.snd_nxt);
        if self.deadline.is_none() {
            self.restart_timer(now);
        }
        Some((index, retransmit))
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        // An ACK and a NAK both name the receiver's next expected packet.
        let Some(expected) = at.index(seg.psn).filter(|&i| i >= self.snd_una && i <= self.high) else { return false };
        match seg.kind {
            SegKind::Ack if expected > self.snd_una => {
                self.snd_una = expected;
                self.snd_nxt = self.snd_nxt.max(expected);
                self.restart_timer(now);
                false
            }
            SegKind::Nak => {
                // Go back: everything from the hole is sent again.
                (self.snd_una, self.snd_nxt) = (expected, expected);
                self.restart_timer(now);
                true
            }
            _ => false,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        if self.deadline.is_none_or(|t| now < t) {
            return false;
        }
        self.snd_nxt = self.snd_una;
        self.restart_timer(now);
        true
    }
}

/// The receive side: in order only, nothing buffered.
#[derive(Clone, Debug, Default)]
pub struct TutorialReceiver {
    /// The expected packet the last NAK named: one NAK per hole.
    naked: Option<u64>,
}

impl ReceiveRecovery for TutorialReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, _nic: &mut NicCall<'_>) {
        let expected = rx.expected();
        if index == expected {
            // The delivery check: a packet out of order, repeated or with another payload
            // than the one sent for it counts in `bad_deliveries`.
            rx.deliver(now, index, seg.tag, seg.payload);
        } else if index > expected {
            if self.naked != Some(expected) {
                self.naked = Some(expected);
                rx.naks_sent += 1;
                rx.send(Segment::reply(SegKind::Nak, rx.wire(expected), now, seg));
            }
            return;
        }
        // In order, or a duplicate (the sender went back past a lost ACK): acknowledge.
        rx.send(Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg));
    }
}

#[cfg(test)]
mod tests {
    /// Two 1 MB flows into one host through a switch whose ports lose 1 % of data packets and
    /// ACKs and 20 % of NAKs; senders' windows sampled every 10 us.
    const LOSSY: &str = r#"
name = "tutorial"
duration = "100ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
link_delay = "1us"
[nic]
mtu = 1000
[transport]
recovery = "tutorial"
cc = "tutorial-aimd"
[[loss]]
at = "everywhere"
rate = 0.01
kinds = ["data", "ack"]
[[loss]]
at = "everywhere"
rate = 0.2
kinds = ["nak"]
[workload]
kind = "flow-list"
flows = [{ src = "h1", dst = "h0", size = "1MB" }, { src = "h2", dst = "h0", size = "1MB" }]
[output]
sample_interval = "10us"
cc_flows = [0, 1]
"#;

    #[test]
    fn the_tutorial_scheme_delivers_every_byte_once_in_order_through_loss() {
        let out = crate::run_toml(LOSSY).unwrap();
        let c = &out.counters;
        assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
        assert_eq!(c.bad_deliveries, 0, "nothing delivered out of order, twice or corrupted");
        for f in &out.flows {
            assert_eq!(f.delivered_bytes, 1_000_000, "every byte of flow {}", f.flow_id);
            // Some went back on the timer (a lost NAK, a lost tail), not only on NAKs.
            assert!(f.retx_bytes > 0 && f.timeouts > 0, "{f:?}");
        }
        assert!(c.drops_loss > 0);
        // The controller moved the window: up by additive increase, down on a loss.
        let initial = 4 * 1_000;
        for flow in 0..2 {
            let w: Vec<u64> = out.cc_samples.iter().filter(|s| s.flow == flow).filter_map(|s| s.window).collect();
            assert!(w.iter().any(|&b| b > initial), "flow {flow} never grew: {w:?}");
            assert!(w.windows(2).any(|p| p[1] < p[0]), "flow {flow} never cut: {w:?}");
        }
    }
}
