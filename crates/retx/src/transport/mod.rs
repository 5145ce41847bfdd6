//! Transports as sans-IO state machines: no clock, no queue, no RNG inside. Every input
//! carries `now`; outputs are pulled (`poll_transmit`, `poll_timeout`). The simulator, unit
//! tests and a future real-UDP harness drive the same code.

pub mod cc;
pub mod dcqcn;
pub mod dctcp;
pub mod endpoint;
pub mod int;
pub mod gbn;
pub mod gbone;
pub mod irn;
pub mod melo;
pub mod psn;
pub mod receiver;
pub mod segment;
pub mod sender;

use crate::sim::units::Rate;
/// Data packet bytes on the wire beyond the payload: Ethernet 14 + IPv4 20 + UDP 8 + 6 of
/// sequence/priority header, as in the HPCC ns-3 model (`CustomHeader`), so FCTs compare with it.
pub const DATA_HEADER_BYTES: u32 = 48;
/// ACK/NAK/CNP size on the wire: the 60-byte minimum frame of the HPCC ns-3 model.
pub const CONTROL_BYTES: u32 = 60;

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
}

impl FlowSpec {
    pub const ENDLESS: u64 = u64::MAX;

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

/// NIC-wide state that every queue pair of a host shares: one field per scheme that keeps
/// any (MELO's bits pools).
#[derive(Clone, Debug)]
pub struct NicState {
    pub melo: melo::MeloPools,
    /// The INT records of the packet being handled, as the NIC's parser extracted them
    /// (empty without INT): congestion control reads them from the ACK sample.
    pub int_in: int::IntHops,
    /// Receive-pipeline time the scheme charged while handling the current packet (a bitmap
    /// swap, an off-chip access); the NIC adds it to its per-packet time.
    pub charged: crate::sim::units::Time,
}

impl NicState {
    pub fn new(t: &Template) -> Self {
        let melo = match &t.recovery {
            RecoveryParams::Melo(p) => *p,
            _ => melo::MeloParams::default(),
        };
        NicState { melo: melo::MeloPools::new(&melo), int_in: int::IntHops::default(), charged: crate::sim::units::Time::ZERO }
    }

    /// Charges receive-pipeline time for an operation of the packet being handled.
    pub fn charge(&mut self, t: crate::sim::units::Time) {
        self.charged += t;
    }

    /// Figures the schemes report about their NIC-wide state over every NIC of a run:
    /// (name, value), e.g. the peak share of MELO's pools.
    pub fn report<'a>(nics: impl Iterator<Item = &'a NicState>) -> Vec<(&'static str, f64)> {
        melo::MeloPools::report(nics.map(|n| &n.melo))
    }
}

/// Loss recovery and its parameters: one line per scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum RecoveryParams {
    Gbn(gbn::GbnParams),
    Irn(irn::IrnParams),
    Melo(melo::MeloParams),
    Gbone(gbone::GboneParams),
}

/// Congestion control and its parameters: one line per scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum CcParams {
    /// Always line rate.
    None,
    Dcqcn(dcqcn::DcqcnParams),
    Dctcp(dctcp::DctcpParams),
}

/// How both ends of every connection of a run are built.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub recovery: RecoveryParams,
    pub cc: CcParams,
    /// Receiver ACK coalescing: one ACK per this many in-order data packets.
    pub ack_interval: u32,
}

impl Template {
    /// The scheme's name in the on-chip memory table ([`crate::hw::memory`]).
    pub fn memory_scheme(&self) -> &'static str {
        match self.recovery {
            RecoveryParams::Gbn(_) => "go-back-N",
            RecoveryParams::Irn(_) => "irn",
            RecoveryParams::Melo(_) => "melo",
            RecoveryParams::Gbone(_) => "gbone",
        }
    }

    /// Connection contexts the NIC keeps on chip (0: all of them). MELO models its cache
    /// (§3.2.5); the other schemes keep every context on chip.
    pub fn qp_cache(&self) -> u32 {
        match &self.recovery {
            RecoveryParams::Melo(p) => p.qp_cache,
            _ => 0,
        }
    }

    /// Builds the two ends of a flow; `bdp_packets` sizes bitmaps left at 0 (one BDP).
    pub fn endpoints(&self, spec: FlowSpec, line: Rate, bdp_packets: u32) -> (sender::Sender, receiver::Receiver) {
        let n = spec.npkts();
        let or_bdp = |v: u32| if v == 0 { bdp_packets } else { v };
        let ack = self.ack_interval;
        let (tx, rx) = match &self.recovery {
            RecoveryParams::Gbn(p) => (sender::TxRecovery::Gbn(gbn::GbnSender::new(p, n)), receiver::RxRecovery::Gbn(gbn::GbnReceiver::new(p, ack))),
            RecoveryParams::Irn(p) => {
                let window = or_bdp(p.bitmap_packets);
                (sender::TxRecovery::Irn(irn::IrnSender::new(p, window, n)), receiver::RxRecovery::Bitmap(irn::BitmapReceiver::irn(window, ack)))
            }
            RecoveryParams::Melo(p) => (sender::TxRecovery::Melo(melo::MeloSender::new(p, n)), receiver::RxRecovery::Melo(melo::MeloReceiver::new(p, ack))),
            RecoveryParams::Gbone(p) => (
                sender::TxRecovery::Gbone(gbone::GboneSender::new(p, n)),
                receiver::RxRecovery::Bitmap(irn::BitmapReceiver::gbone(or_bdp(p.max_ooo_psn), ack)),
            ),
        };
        let (cc, np) = match &self.cc {
            CcParams::None => (cc::Cc::None, None),
            CcParams::Dctcp(p) => (cc::Cc::Dctcp(dctcp::Dctcp::new(*p, line)), None),
            CcParams::Dcqcn(p) => (cc::Cc::Dcqcn(dcqcn::DcqcnRp::new(*p, line)), Some(dcqcn::DcqcnNp::new(p.cnp_interval.0))),
        };
        (sender::Sender::new(spec, tx, cc, line, DATA_HEADER_BYTES), receiver::Receiver::new(spec, rx, np))
    }
}
