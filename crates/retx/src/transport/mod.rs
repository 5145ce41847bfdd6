//! Transports as sans-IO state machines: no clock, no queue, no RNG inside. Every input
//! carries `now`; outputs are pulled (`poll_transmit`, `poll_timeout`). The simulator, unit
//! tests and a future real-UDP harness drive the same code.

pub mod aeolus;
pub mod agent;
pub mod cc;
pub mod congestion;
pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_window;
pub mod endpoint;
pub mod feedback;
pub mod homa;
pub mod hpcc;
pub mod int;
pub mod gbn;
pub mod gbone;
pub mod ndp;
#[cfg(test)]
pub mod pull;
#[cfg(test)]
pub mod tutorial;
#[cfg(test)]
pub mod tutorial_aimd;
pub mod irn;
pub mod left;
pub mod left_nic;
pub mod melo;
pub mod notifications;
pub mod poll;
pub mod psn;
pub mod rate_window;
pub mod receiver;
pub mod recovery;
pub mod reorder;
pub mod reno;
pub mod rx_ctx;
pub mod segment;
pub mod sender;
pub mod stride;
pub mod stride_cc;
pub mod tag_ring;
pub mod timely;
pub mod tcp;
pub mod vegas;
pub mod xpass;
pub mod xpass_ends;

pub use agent::{NicAgent, NicCall};
use crate::sim::units::{Rate, Time};
/// Data packet bytes on the wire beyond the payload: Ethernet 14 + IPv4 20 + UDP 8 + 6 of
/// sequence/priority header, as in the HPCC ns-3 model (`CustomHeader`), so FCTs compare with it.
pub const DATA_HEADER_BYTES: u32 = 48;
/// ACK/NAK/CNP size on the wire: the 60-byte minimum frame of the HPCC ns-3 model.
pub const CONTROL_BYTES: u32 = 60;
/// A response's headers without padding: Ethernet 14 + IPv4 20 + the 12 B ACK header of the
/// HPCC ns-3 model (`qbbHeader`: ports, flags, priority group, sequence). With INT records
/// appended it outgrows the 60 B minimum.
pub const RESPONSE_HEADER_BYTES: u32 = 46;

/// Priorities a packet carries (its traffic class; at a switch it takes the egress queue of that
/// number, the port's last if it has fewer): control (ACK/NAK/CNP by default) is strict high
/// priority and never paused, like the high-priority queue of the HPCC ns-3 model; data
/// priorities follow, PFC-protected. Names mean one thing each: a packet has a `priority`, a
/// port has `queue`s, a NIC scheduler has `band`s.
pub const PRIORITY_CONTROL: usize = 0;
pub const PRIORITY_DATA: usize = 1;

/// What a flow is, as both ends agree on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Message bytes; [`FlowSpec::ENDLESS`] for a long-running flow.
    pub size: u64,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// The QP's starting PSN.
    pub initial_psn: u32,
    /// Seeds the payload digests.
    pub key: u64,
    /// How its packets are marked and sized on the wire.
    pub marking: Marking,
}

/// How a flow's packets are marked and sized on the wire, as its ends stamp them on every
/// packet they send. The run fills it from the scenario (a flow's class and colour, the INT
/// header, ns-3's ACK priority); a scheme that cares may choose otherwise in its own file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marking {
    /// Priority of data packets: their egress queue at every switch, their PFC class.
    pub data_priority: u8,
    /// Priority of responses (ACK, NAK, CNP): the control queue, or with ns-3's
    /// `ACK_HIGH_PRIO 0` the flow's data priority.
    pub response_priority: u8,
    /// Drop precedence of data packets (0 green, 1 yellow, 2 red).
    pub colour: u8,
    /// Wire bytes of a data packet beyond its payload (also what a connection packet the
    /// sender opens with weighs).
    pub data_header: u32,
    /// Wire bytes of a response.
    pub response_bytes: u32,
    /// The colour travels as the ECN codepoint, not as a colour a switch reads (Aeolus §4.1,
    /// for switches with RED/ECN but no WRED): a coloured data packet leaves Not-ECT, an
    /// uncoloured one ECT(0).
    pub colour_as_ecn: bool,
}

impl Default for Marking {
    /// Data at the first data priority, green, with the HPCC ns-3 model's headers; responses
    /// at the control priority, 60 B.
    fn default() -> Self {
        Marking {
            data_priority: PRIORITY_DATA as u8,
            response_priority: PRIORITY_CONTROL as u8,
            colour: 0,
            data_header: DATA_HEADER_BYTES,
            response_bytes: CONTROL_BYTES,
            colour_as_ecn: false,
        }
    }
}

impl FlowSpec {
    pub const ENDLESS: u64 = u64::MAX;
    /// The largest finite flow, 10^15 B (1 PB, 80,000 s at 100 Gbps): far below
    /// [`FlowSpec::ENDLESS`] and i64::MAX, so sizes, packet counts and byte columns never
    /// overflow. Every input is checked against it.
    pub const MAX_SIZE: u64 = 1_000_000_000_000_000;

    pub fn npkts(&self) -> u64 {
        if self.size == Self::ENDLESS { u64::MAX } else { self.size.div_ceil(self.mtu as u64) }
    }

    /// Payload of packet `index`: a full MTU except possibly the last.
    pub fn payload(&self, index: u64) -> u32 {
        if self.size == Self::ENDLESS {
            return self.mtu;
        }
        let start = index * self.mtu as u64;
        (self.size - start).min(self.mtu as u64) as u32
    }
}

/// One shared structure's occupancy at a sample (`[output] pools`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOccupancy {
    pub pool: &'static str,
    /// What `used`, `peak` and `capacity` count: "blocks", "contexts".
    pub unit: &'static str,
    pub used: u64,
    /// The most in use at once since the previous sample.
    pub peak: u64,
    pub capacity: u64,
}

/// Figures the congestion controllers report over every connection of a run: today STRIDE's
/// rate calculator's operation counts.
pub fn cc_report<'a>(controllers: impl Iterator<Item = &'a cc::Cc>) -> Vec<(&'static str, f64)> {
    let mut ops = stride_cc::OpCount::default();
    let mut steadiness = Vec::new();
    for c in controllers {
        if let cc::Cc::Stride(c) = c {
            ops.add(c.ops());
            steadiness.push(c.steadiness);
        }
    }
    let mut report = ops.report();
    report.extend(stride_cc::SttSteadiness::report(steadiness.iter()));
    report
}

/// What moving one connection context between the on-chip QP cache and off-chip memory costs
/// the NIC's receive pipeline, as a scheme declares it: a fixed time per context moved plus a
/// time per bitmap block it carries (LEFT moves a block in 5 ns). Default 0: swaps are free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwapCost {
    pub per_context: Time,
    pub per_block: Time,
}

impl SwapCost {
    /// The cost of moving one context that carries `blocks` bitmap blocks.
    pub fn of(&self, blocks: u32) -> Time {
        Time(self.per_context.0 + self.per_block.0 * blocks as u64)
    }
}

/// Loss recovery and its parameters: one line per scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum RecoveryParams {
    Gbn(gbn::GbnParams),
    Irn(irn::IrnParams),
    Melo(melo::MeloParams),
    Gbone(gbone::GboneParams),
    Tcp(tcp::TcpParams),
    Stride(stride::StrideParams),
    Ndp(ndp::NdpParams),
    Homa(homa::HomaParams),
    Xpass(xpass::XpassParams),
    Left(left::LeftParams),
    #[cfg(test)]
    Pull(pull::PullParams),
    #[cfg(test)]
    Tutorial(tutorial::TutorialParams),
}

/// Congestion control and its parameters: one line per scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum CcParams {
    /// Always line rate.
    None,
    Dcqcn(dcqcn::DcqcnParams),
    Dctcp(dctcp::DctcpParams),
    Hpcc(hpcc::HpccParams),
    Timely(timely::TimelyParams),
    Reno(reno::RenoParams),
    DctcpWindow(dctcp_window::DctcpWindowParams),
    Vegas(vegas::VegasParams),
    Stride(stride_cc::StrideCcParams),
    #[cfg(test)]
    TutorialAimd(tutorial_aimd::AimdParams),
}

/// The run's reference path, as the HPCC ns-3 model gives every QP with `GLOBAL_T 1`: the
/// longest host-to-host base RTT (twice the propagation delay plus one MTU payload's
/// serialization per hop, `third.cc` maxRtt) and its bandwidth-delay product at that path's
/// bottleneck rate (maxBdp). Window-based controllers size their window from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BasePath {
    pub rtt: Time,
    pub bdp_bytes: u64,
}

impl BasePath {
    /// `rtt` at `rate`: bytes = rtt x rate / 8, truncated as ns-3 does in whole ns and bps.
    pub fn new(rtt: Time, rate: Rate) -> Self {
        BasePath { rtt, bdp_bytes: (rtt.0 as u128 * rate.0 as u128 / 8 / 1_000_000_000_000) as u64 }
    }
}

/// How both ends of every connection of a run are built.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub recovery: RecoveryParams,
    pub cc: CcParams,
    /// Receiver ACK coalescing: one ACK per this many in-order data packets.
    pub ack_interval: u32,
    /// What a QP-cache swap costs the receive pipeline (default free).
    pub qp_swap: SwapCost,
    /// Bytes of INT header every data packet and response carries (0: INT off).
    pub int_header: u32,
    /// Responses take their flow's data priority instead of the control priority (ns-3's
    /// `ACK_HIGH_PRIO 0`: buffered, paused and counted like data at switches).
    pub responses_at_data_priority: bool,
    /// Hosts carry a data packet's colour in its ECN field (`[nic] colour_codepoint = "ecn"`).
    pub colour_as_ecn: bool,
}

impl Template {
    /// Data packet bytes on the wire beyond the payload.
    pub fn data_header(&self) -> u32 {
        match self.recovery {
            RecoveryParams::Stride(_) => stride::HEADER_BYTES + self.int_header,
            RecoveryParams::Ndp(_) => ndp::HEADER_BYTES + self.int_header,
            RecoveryParams::Xpass(_) => xpass::DATA_HEADER_BYTES + self.int_header,
            _ => DATA_HEADER_BYTES + self.int_header,
        }
    }

    /// A response's (ACK, NAK, CNP) bytes on the wire.
    pub fn response_bytes(&self) -> u32 {
        match self.recovery {
            RecoveryParams::Stride(_) => stride::HEADER_BYTES + self.int_header,
            RecoveryParams::Ndp(_) => ndp::HEADER_BYTES + self.int_header,
            RecoveryParams::Xpass(_) => xpass::ACK_BYTES + self.int_header,
            _ => CONTROL_BYTES.max(RESPONSE_HEADER_BYTES + self.int_header),
        }
    }

    /// The scheme's name in the on-chip memory table ([`crate::hw::memory`]).
    pub fn memory_scheme(&self) -> &'static str {
        match self.recovery {
            RecoveryParams::Gbn(_) => "go-back-N",
            RecoveryParams::Irn(_) => "irn",
            RecoveryParams::Melo(_) => "melo",
            RecoveryParams::Gbone(_) => "gbone",
            RecoveryParams::Tcp(_) => "tcp",
            RecoveryParams::Stride(_) => "stride",
            RecoveryParams::Ndp(_) => "ndp",
            RecoveryParams::Homa(_) => "homa",
            RecoveryParams::Xpass(_) => "xpass",
            RecoveryParams::Left(_) => "left",
            #[cfg(test)]
            RecoveryParams::Pull(_) => "pull",
            #[cfg(test)]
            RecoveryParams::Tutorial(_) => "tutorial",
        }
    }

    /// The scheme's own NIC-wide agent (a pacer), if it has one, for a host whose link runs at
    /// `link` sending `mtu`-byte payloads: one arm per scheme that does.
    pub fn agent(&self, link: Rate, mtu: u32) -> agent::SchemeAgent {
        match &self.recovery {
            RecoveryParams::Ndp(p) => agent::SchemeAgent::Ndp(ndp::NdpPacer::new(p, link, mtu)),
            RecoveryParams::Homa(p) => agent::SchemeAgent::Homa(homa::HomaScheduler::new(p)),
            RecoveryParams::Xpass(p) => agent::SchemeAgent::Xpass(Box::new(xpass::XpassPacer::new(p, link))),
            RecoveryParams::Left(p) => agent::SchemeAgent::Left(Box::new(left_nic::LeftNic::new(p))),
            #[cfg(test)]
            RecoveryParams::Pull(p) => agent::SchemeAgent::Pull(pull::PullPacer::new(p)),
            _ => agent::SchemeAgent::default(),
        }
    }

    /// Whether each connection's two directions must take the same path, one the reverse of
    /// the other: ExpressPass's data on its credits' path (`[recovery.xpass]
    /// symmetric_paths`). The engine then picks the data direction's path entropy to match.
    pub fn symmetric_paths(&self) -> bool {
        matches!(&self.recovery, RecoveryParams::Xpass(p) if p.symmetric_paths)
    }

    /// Connection contexts the NIC keeps on chip (0: all of them). MELO models its cache
    /// (§3.2.5); the other schemes keep every context on chip.
    pub fn qp_cache(&self) -> u32 {
        match &self.recovery {
            RecoveryParams::Melo(p) => p.qp_cache,
            _ => 0,
        }
    }

    /// Builds the two ends of a flow; `bdp_packets` sizes bitmaps left at 0 (one BDP), `path`
    /// the windows of window-based congestion control.
    /// The scheme sizes its packets: the marking's header bytes are its own.
    pub fn endpoints(&self, spec: FlowSpec, line: Rate, bdp_packets: u32, path: BasePath) -> (sender::Sender, receiver::Receiver) {
        let m = spec.marking;
        let response_priority = if self.responses_at_data_priority { m.data_priority } else { m.response_priority };
        let marking = Marking { data_header: self.data_header(), response_bytes: self.response_bytes(), response_priority, colour_as_ecn: self.colour_as_ecn, ..m };
        let spec = FlowSpec { marking, ..spec };
        let n = spec.npkts();
        let or_bdp = |v: u32| if v == 0 { bdp_packets } else { v };
        let ack = self.ack_interval;
        let (tx, rx) = match &self.recovery {
            RecoveryParams::Gbn(p) => (sender::TxRecovery::Gbn(gbn::GbnSender::new(p, n)), receiver::RxRecovery::Gbn(gbn::GbnReceiver::new(p, ack))),
            RecoveryParams::Irn(p) => {
                let window = or_bdp(p.bitmap_packets);
                (sender::TxRecovery::Irn(irn::IrnSender::new(p, window, n)), receiver::RxRecovery::Bitmap(irn::BitmapReceiver::irn(window, ack, n)))
            }
            RecoveryParams::Melo(p) => (sender::TxRecovery::Melo(melo::MeloSender::new(p, n)), receiver::RxRecovery::Melo(melo::MeloReceiver::new(p, ack))),
            RecoveryParams::Gbone(p) => (
                sender::TxRecovery::Gbone(gbone::GboneSender::new(p, n)),
                receiver::RxRecovery::Bitmap(irn::BitmapReceiver::gbone(or_bdp(p.max_ooo_psn), ack, n)),
            ),
            RecoveryParams::Tcp(p) => (sender::TxRecovery::Tcp(tcp::TcpSender::new(p, n)), receiver::RxRecovery::Tcp(tcp::TcpReceiver::new(ack))),
            RecoveryParams::Stride(p) => (
                sender::TxRecovery::Stride(stride::StrideSender::new(p, n, spec.mtu)),
                receiver::RxRecovery::Stride(stride::StrideReceiver::new(p, spec.mtu)),
            ),
            RecoveryParams::Ndp(p) => (sender::TxRecovery::Ndp(ndp::NdpSender::new(p, n, spec.key)), receiver::RxRecovery::Ndp(ndp::NdpReceiver::new(n))),
            RecoveryParams::Homa(p) => (sender::TxRecovery::Homa(homa::HomaSender::new(p, &spec)), receiver::RxRecovery::Homa(homa::HomaReceiver::new(p, &spec))),
            RecoveryParams::Xpass(p) => (sender::TxRecovery::Xpass(Box::new(xpass_ends::XpassSender::new(p, &spec, bdp_packets))), receiver::RxRecovery::Xpass(xpass_ends::XpassReceiver::new(n))),
            RecoveryParams::Left(p) => {
                let window = or_bdp(p.window);
                (sender::TxRecovery::Left(left::LeftSender::new(p, window, n)), receiver::RxRecovery::Left(left::LeftReceiver::new(p, window, ack)))
            }
            #[cfg(test)]
            RecoveryParams::Pull(p) => (sender::TxRecovery::Pull(pull::PullSender::new(p, n)), receiver::RxRecovery::Pull(pull::PullReceiver::new(p, n))),
            #[cfg(test)]
            RecoveryParams::Tutorial(p) => (sender::TxRecovery::Tutorial(tutorial::TutorialSender::new(p, n)), receiver::RxRecovery::Tutorial(Default::default())),
        };
        let mss = spec.mtu as u64;
        let (cc, np) = match &self.cc {
            CcParams::None => (cc::Cc::None(cc::NoCc), None),
            CcParams::Dctcp(p) => (cc::Cc::Dctcp(dctcp::Dctcp::new(*p, line).with_path(path)), None),
            CcParams::Hpcc(p) => (cc::Cc::Hpcc(hpcc::Hpcc::new(*p, line, path)), None),
            CcParams::Timely(p) => (cc::Cc::Timely(timely::Timely::new(*p, line, path)), None),
            CcParams::Dcqcn(p) => {
                // With marks echoed on ACKs the receiver sends no CNP packets.
                let np = (p.cnp == dcqcn::CnpMode::Paced).then(|| dcqcn::DcqcnNp::new(p.cnp_interval.0));
                (cc::Cc::Dcqcn(dcqcn::DcqcnRp::new(*p, line).with_path(path)), np)
            }
            CcParams::Reno(p) => (cc::Cc::Reno(reno::Reno::new(p, mss, path.bdp_bytes)), None),
            CcParams::DctcpWindow(p) => (cc::Cc::DctcpWindow(dctcp_window::DctcpWindow::new(p, mss, path.bdp_bytes)), None),
            CcParams::Vegas(p) => (cc::Cc::Vegas(vegas::Vegas::new(p, mss, path.bdp_bytes)), None),
            CcParams::Stride(p) => (cc::Cc::Stride(stride_cc::StrideCc::new(*p, line)), None),
            #[cfg(test)]
            CcParams::TutorialAimd(p) => (cc::Cc::TutorialAimd(tutorial_aimd::Aimd::new(p, mss)), None),
        };
        (sender::Sender::new(spec, tx, cc, line), receiver::Receiver::new(spec, rx, np))
    }
}

#[cfg(test)]
pub mod probe {
    use crate::sim::units::Time;

    /// A NIC-wide timer for the engine's tests: due at `at` (host clock), it records the host
    /// time it fired at, disarms, and wakes the queue pairs in `wake`.
    #[derive(Clone, Debug, Default)]
    pub struct TimerProbe {
        pub at: Option<Time>,
        pub fired: Vec<Time>,
        pub wake: Vec<u32>,
    }

    impl TimerProbe {
        pub fn fire(&mut self, now: Time, wake: &mut Vec<u32>) {
            if self.at.is_some_and(|t| t <= now) {
                self.at = None;
                self.fired.push(now);
                wake.extend_from_slice(&self.wake);
            }
        }
    }
}
