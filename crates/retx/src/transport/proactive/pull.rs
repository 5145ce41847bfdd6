//! A test-only receiver-driven transport, written only against the seams (issue 27) to prove
//! that a scheme of the NDP / Homa / ExpressPass family needs no engine change: the sender
//! sends an initial window at line rate, then one packet per grant; the receiver asks its
//! host's pacer (the NIC agent, [`PullPacer`]) for one grant per packet it receives, and NACKs
//! a packet a switch trimmed to its header so that the next grant resends it. Its data rides
//! whatever priority the flow's marking chose. Compiled only under `cfg(test)`: users never see
//! it; LEFT, Aeolus and NDP are the real schemes of this family.

use crate::transport::common::agent::{AgentTransmit, HostAgent, NicCall};
use crate::transport::common::scheme::{Scheme, Setup};
use crate::transport::common::psn::{Psn, PsnReader};
use crate::transport::common::recovery::{ReceiveRecovery, SendRecovery};
use crate::transport::common::rx_ctx::RxCtx;
use crate::transport::common::segment::{SegKind, Segment};
use crate::transport::common::flow::PRIORITY_CONTROL;
use crate::sim::units::{Rate, Time};
use std::collections::VecDeque;

/// Bytes of a grant on the wire: a header (htsim's NDP PULL is 64 B).
pub const GRANT_BYTES: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullParams {
    /// Packets the sender sends before its first grant (htsim's NDP default is 15).
    pub initial_window: u32,
    /// The pacer's gap between grants: one data packet's time on the host link (here 1,048 B
    /// at 10 Gbps), so grants arrive as fast as the link drains data.
    pub grant_gap: Time,
    /// Resend the oldest unacknowledged packet after this long without progress (a lost
    /// grant or NACK).
    pub rto: Time,
    /// Receive-pipeline latency of handling a data packet: its ACK waits this long, the
    /// packets behind it do not (`NicAgent::delay`; default 0).
    pub rx_latency: Time,
}

impl Default for PullParams {
    fn default() -> Self {
        PullParams { initial_window: 8, grant_gap: Rate::gbps(10).serialization(1_048), rto: Time::from_us(500), rx_latency: Time::ZERO }
    }
}

impl Scheme for PullParams {
    const NAME: &'static str = "pull";
    type Sender = PullSender;
    type Receiver = PullReceiver;
    type Agent = PullPacer;

    fn endpoints(&self, f: &Setup<'_>) -> (PullSender, PullReceiver) {
        (PullSender::new(self, f.npkts()), PullReceiver::new(self, f.npkts()))
    }

    fn agent(&self, _link: Rate, _mtu: u32) -> Option<PullPacer> {
        Some(PullPacer::new(self))
    }
}

/// The host-wide grant pacer: queue pairs waiting for a grant, served one per `gap`.
#[derive(Clone, Debug)]
pub struct PullPacer {
    gap: Time,
    next: Time,
    waiting: VecDeque<u32>,
    pub grants_sent: u64,
}

impl PullPacer {
    pub fn new(p: &PullParams) -> Self {
        PullPacer { gap: p.grant_gap, next: Time::ZERO, waiting: VecDeque::new(), grants_sent: 0 }
    }
}

impl HostAgent for PullPacer {
    fn wants_wire(&self) -> bool {
        !self.waiting.is_empty()
    }
    fn poll_transmit(&mut self, now: Time) -> AgentTransmit {
        let Some(&qp) = self.waiting.front() else { return AgentTransmit::Idle };
        if now < self.next {
            return AgentTransmit::WaitUntil(self.next);
        }
        self.waiting.pop_front();
        self.next = now + self.gap;
        self.grants_sent += 1;
        let mut seg = Segment::control(SegKind::Grant, Psn::new(0), now);
        (seg.priority, seg.wire_bytes) = (PRIORITY_CONTROL as u8, GRANT_BYTES);
        AgentTransmit::Send { qp, seg }
    }
}

/// Asks the caller's host pacer for one grant on the caller's behalf.
fn request_grant(nic: &mut NicCall<'_>) {
    let qp = nic.caller();
    if let Some(p) = nic.agent::<PullPacer>() {
        p.waiting.push_back(qp);
    }
}

#[derive(Clone, Debug)]
pub struct PullSender {
    npkts: u64,
    snd_una: u64,
    snd_nxt: u64,
    credit: u32,
    resend: VecDeque<u64>,
    rto: Time,
    last_progress: Time,
}

impl PullSender {
    pub fn new(p: &PullParams, npkts: u64) -> Self {
        PullSender { npkts, snd_una: 0, snd_nxt: 0, credit: p.initial_window, resend: VecDeque::new(), rto: p.rto, last_progress: Time::ZERO }
    }
}

impl SendRecovery for PullSender {
    fn snd_una(&self) -> u64 {
        self.snd_una
    }
    fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    fn has_data(&self) -> bool {
        self.credit > 0 && (!self.resend.is_empty() || self.snd_nxt < self.npkts)
    }
    fn is_done(&self) -> bool {
        self.snd_una >= self.npkts
    }
    fn next(&mut self, now: Time, _rate: Rate, _nic: &mut NicCall<'_>) -> Option<(u64, bool)> {
        if self.credit == 0 {
            return None;
        }
        if self.snd_nxt == 0 {
            self.last_progress = now;
        }
        while let Some(i) = self.resend.pop_front() {
            if i >= self.snd_una {
                self.credit -= 1;
                return Some((i, true));
            }
        }
        (self.snd_nxt < self.npkts).then(|| {
            self.credit -= 1;
            self.snd_nxt += 1;
            (self.snd_nxt - 1, false)
        })
    }
    fn on_feedback(&mut self, now: Time, seg: &Segment, at: PsnReader, _nic: &mut NicCall<'_>) -> bool {
        match seg.kind {
            SegKind::Grant => self.credit += 1,
            SegKind::Ack => {
                let cum = at.index(seg.psn).unwrap_or(0).min(self.npkts);
                if cum > self.snd_una {
                    (self.snd_una, self.last_progress) = (cum, now);
                }
            }
            // A trimmed packet: resend it with the next grant.
            SegKind::Nak => {
                if let Some(i) = at.index(seg.psn).filter(|&i| i >= self.snd_una && i < self.snd_nxt) {
                    self.resend.push_back(i);
                    return true;
                }
            }
            _ => {}
        }
        false
    }
    fn poll_timeout(&self) -> Option<Time> {
        (!self.is_done() && self.snd_nxt > self.snd_una).then(|| self.last_progress + self.rto)
    }
    fn handle_timeout(&mut self, now: Time, _nic: &mut NicCall<'_>) -> bool {
        if self.poll_timeout().is_none_or(|t| now < t) {
            return false;
        }
        // No progress: resend the oldest packet with a credit of its own (its grant chain
        // broke).
        self.resend.push_front(self.snd_una);
        self.credit += 1;
        self.last_progress = now;
        true
    }
}

#[derive(Clone, Debug)]
pub struct PullReceiver {
    /// Packets received out of order: (tag, payload bytes), waiting for the hole below.
    held: Vec<Option<(u32, u32)>>,
    latency: Time,
}

impl PullReceiver {
    pub fn new(p: &PullParams, npkts: u64) -> Self {
        PullReceiver { held: vec![None; npkts as usize], latency: p.rx_latency }
    }
}

impl ReceiveRecovery for PullReceiver {
    fn on_data(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        nic.delay(self.latency);
        if index >= rx.expected() && (index as usize) < self.held.len() {
            self.held[index as usize] = Some((seg.tag, seg.payload));
            while let Some(&Some((tag, bytes))) = self.held.get(rx.expected() as usize) {
                self.held[rx.expected() as usize] = None;
                rx.deliver(now, rx.expected(), tag, bytes);
            }
        }
        rx.send(Segment::reply(SegKind::Ack, rx.wire(rx.expected()), now, seg));
        if !rx.is_complete() {
            request_grant(nic);
        }
    }
    fn on_trimmed(&mut self, now: Time, index: u64, seg: &Segment, rx: &mut RxCtx, nic: &mut NicCall<'_>) {
        rx.naks_sent += 1;
        rx.send(Segment::reply(SegKind::Nak, rx.wire(index), now, seg));
        request_grant(nic);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{build_with_observer, Scenario};
    use crate::net::packet::Packet;
    use crate::observe::{DropCause, Observer};
    use crate::sim::units::Time;
    use crate::transport::common::segment::SegKind;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// What the switches queued: (queue, kind, trimmed) of every packet, and drops.
    #[derive(Clone, Default)]
    struct Seen(Rc<RefCell<(Vec<(usize, SegKind, bool)>, u64)>>);

    impl Observer for Seen {
        fn enqueue(&mut self, _now: Time, _port: usize, queue: usize, pkt: &Packet, _queued: u64) {
            self.0.borrow_mut().0.push((queue, pkt.seg.kind, pkt.seg.trimmed));
        }
        fn drop(&mut self, _now: Time, _port: usize, _pkt: &Packet, _cause: DropCause) {
            self.0.borrow_mut().1 += 1;
        }
    }

    /// An 8-to-1 incast of 200 KB flows at 10 Gbps into a 100 KB switch buffer that trims; the
    /// data rides queue 2.
    fn incast(trim: bool) -> String {
        let flows: Vec<String> = (1..=8).map(|h| format!("{{ src = \"h{h}\", dst = \"h0\", size = \"200KB\", class = 2 }}")).collect();
        let trim = if trim { "trim = { queue = 0, header = \"64B\" }" } else { "" };
        format!(
            r#"
name = "pull"
duration = "50ms"
[topology]
kind = "single-switch"
hosts = 9
host_link = "10Gbps"
link_delay = "1us"
[nic]
mtu = 1000
[switch]
queues = 3
buffer = "100KB"
pfc = {{ enabled = false }}
{trim}
[transport]
recovery = "pull"
cc = "none"
[workload]
kind = "flow-list"
flows = [{}]
"#,
            flows.join(", ")
        )
    }

    #[test]
    fn a_receiver_driven_scheme_runs_through_the_engine_on_the_seams_alone() {
        let seen = Seen::default();
        let sim = build_with_observer(Scenario::from_toml(&incast(true)).unwrap(), seen.clone()).unwrap();
        let out = sim.run(&mut |_, _| true).unwrap();
        let c = &out.counters;
        assert!(out.unfinished().is_none(), "{:?}", out.unfinished());
        assert_eq!(c.bad_deliveries, 0);
        assert_eq!(out.flows.iter().map(|f| f.delivered_bytes).sum::<u64>(), 8 * 200_000, "every byte once, in order");
        // The initial windows (8 x 8 packets) overflow the buffer: trimmed, never dropped.
        assert!(c.packets_trimmed > 0, "{c:?}");
        let (queued, drops) = seen.0.borrow().clone();
        assert_eq!(drops, 0);
        // Each trimmed packet is NACKed and resent once, on a grant: no timeouts.
        let resent: u64 = out.flows.iter().map(|f| f.retx_bytes).sum::<u64>() / 1_000;
        assert_eq!(resent, c.packets_trimmed);
        assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 0);
        assert_eq!(out.flows.iter().map(|f| f.notifications.naks).sum::<u64>(), c.packets_trimmed);
        // Data rode the flows' priority; trimmed headers, grants, ACKs and NACKs the control queue.
        for &(queue, kind, trimmed) in &queued {
            let want = if kind == SegKind::Data && !trimmed { 2 } else { 0 };
            assert_eq!(queue, want, "{kind:?} trimmed={trimmed}");
        }
        let grants = queued.iter().filter(|q| q.1 == SegKind::Grant).count() as u64;
        let data = queued.iter().filter(|q| q.1 == SegKind::Data).count() as u64;
        // At most one grant per packet received, none after a flow's last.
        assert!(grants > 0 && grants <= data - 8, "{grants} grants sent by the host pacers for {data} data packets");
        assert!(queued.iter().any(|q| q.2), "trimmed headers crossed the switch");
    }

    #[test]
    fn without_trimming_the_same_scheme_recovers_by_its_timer() {
        let out = crate::run_toml(&incast(false)).unwrap();
        assert!(out.unfinished().is_none());
        assert_eq!(out.counters.bad_deliveries, 0);
        assert_eq!(out.counters.packets_trimmed, 0);
        assert!(out.counters.drops_buffer > 0);
        assert!(out.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0, "drops are found by the timer only");
    }
}
