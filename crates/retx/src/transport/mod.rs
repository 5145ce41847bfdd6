//! Transports as sans-IO state machines: no clock, no queue, no RNG inside. Every input
//! carries `now`; outputs are pulled (`poll_transmit`, `poll_timeout`). The simulator, unit
//! tests and a future real-UDP harness drive the same code.

pub mod dcqcn;
pub mod dctcp;
pub mod gbn;
pub mod gbone;
pub mod irn;
pub mod melo;
pub mod psn;
pub mod receiver;
pub mod segment;
pub mod sender;

use crate::config::{CcKind, RecoveryKind, Scenario};
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

/// NIC-wide state that every queue pair of a host shares.
#[derive(Clone, Debug)]
pub struct NicShared {
    pub melo: melo::MeloPools,
}

impl NicShared {
    pub fn new(s: &Scenario) -> Self {
        NicShared { melo: melo::MeloPools::new(&s.recovery.melo) }
    }
}

/// Builds the two ends of a flow from the scenario's transport settings.
pub fn endpoints(s: &Scenario, spec: FlowSpec, line: Rate, bdp_packets: u32) -> (sender::Sender, receiver::Receiver) {
    let n = spec.npkts();
    let or_bdp = |v: u32| if v == 0 { bdp_packets } else { v };
    let window = or_bdp(s.recovery.irn.bitmap_packets);
    let (tx, rx) = match s.transport.recovery {
        RecoveryKind::Gbn => (
            sender::TxRecovery::Gbn(gbn::GbnSender::new(&s.recovery.gbn, n)),
            receiver::RxRecovery::Gbn(gbn::GbnReceiver::new(&s.recovery.gbn, s.nic.ack_interval)),
        ),
        RecoveryKind::Irn => (
            sender::TxRecovery::Irn(irn::IrnSender::new(&s.recovery.irn, window, n)),
            receiver::RxRecovery::Bitmap(irn::BitmapReceiver::irn(window, s.nic.ack_interval)),
        ),
        RecoveryKind::Melo => (
            sender::TxRecovery::Melo(melo::MeloSender::new(&s.recovery.melo, n)),
            receiver::RxRecovery::Melo(melo::MeloReceiver::new(&s.recovery.melo, s.nic.ack_interval)),
        ),
        RecoveryKind::Gbone => (
            sender::TxRecovery::Gbone(gbone::GboneSender::new(&s.recovery.gbone, n)),
            receiver::RxRecovery::Bitmap(irn::BitmapReceiver::gbone(or_bdp(s.recovery.gbone.max_ooo_psn), s.nic.ack_interval)),
        ),
    };
    let (cc, np) = match s.transport.cc {
        CcKind::None => (sender::Cc::None, None),
        CcKind::Dctcp => (sender::Cc::Dctcp(dctcp::Dctcp::new(s.cc.dctcp, line)), None),
        CcKind::Dcqcn => (
            sender::Cc::Dcqcn(dcqcn::DcqcnRp::new(s.cc.dcqcn, line)),
            Some(dcqcn::DcqcnNp::new(s.cc.dcqcn.cnp_interval.0)),
        ),
    };
    (sender::Sender::new(spec, tx, cc, line, DATA_HEADER_BYTES), receiver::Receiver::new(spec, rx, np))
}
