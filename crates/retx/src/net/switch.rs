//! An output-queued shared-buffer switch: admission into the shared buffer (dynamic threshold,
//! PFC XOFF/XON per ingress queue), and the bookkeeping when a packet leaves an egress queue
//! (buffer, RED/ECN marking with the egress port's profile, PFC resume).
//!
//! The switch owns no ports: the network hands it the ports a packet touches, so that ports,
//! wires and loss stay elements of their own ([`super::port`]).

use super::ecn::RedProfile;
use super::packet::Frame;
use super::port::Port;
use crate::sim::rng::Rng;
use crate::sim::units::Rate;

/// PFC thresholds on the bytes an ingress queue holds in the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcThresholds {
    pub xoff: u64,
    pub xon: u64,
}

/// A RED/ECN profile that applies to egress ports of one link rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateProfile {
    pub rate: Rate,
    pub red: RedProfile,
}

/// What every switch of a run shares: its configuration.
#[derive(Clone, Debug)]
pub struct SwitchParams {
    /// Shared packet buffer, bytes.
    pub buffer: u64,
    /// Egress dynamic threshold: a data queue may grow to alpha x the free shared buffer
    /// (applied when PFC is off, as in the HPCC ns-3 model).
    pub dt_alpha: f64,
    pub pfc: Option<PfcThresholds>,
    /// The RED/ECN profile of ports whose rate has no entry in `ecn_by_rate` (None: no marking).
    pub ecn: Option<RedProfile>,
    /// Profiles by egress link rate (HPCC ns-3's `KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`).
    pub ecn_by_rate: Vec<RateProfile>,
}

impl SwitchParams {
    /// The marking profile of an egress port of this rate.
    pub fn red_for(&self, rate: Rate) -> Option<RedProfile> {
        match self.ecn_by_rate.iter().find(|p| p.rate == rate) {
            Some(p) => Some(p.red),
            None => self.ecn,
        }
    }
}

/// Why a switch refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The shared buffer is full.
    BufferFull,
    /// The egress queue is over its dynamic threshold.
    OverThreshold,
}

/// What leaving an egress queue did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Departure {
    /// The packet gets ECN congestion-experienced.
    pub mark: bool,
    /// The ingress port must now send RESUME to its peer.
    pub resume: bool,
}

/// The state of one switch.
pub struct Switch {
    pub buffer_used: u64,
    ecn_rng: Rng,
}

impl Switch {
    pub fn new(ecn_rng: Rng) -> Switch {
        Switch { buffer_used: 0, ecn_rng }
    }

    /// Admits a packet of `bytes` into an egress queue that holds `queued` bytes, or says why
    /// not; `data`: a data packet (control packets are exempt from the dynamic threshold,
    /// whatever queue they share). On success the bytes are charged to the buffer.
    pub fn admit(&mut self, p: &SwitchParams, queued: u64, data: bool, bytes: u64) -> Result<(), Refusal> {
        let used = self.buffer_used;
        if used + bytes > p.buffer {
            return Err(Refusal::BufferFull);
        }
        if data && p.pfc.is_none() && (queued + bytes) as f64 > p.dt_alpha * (p.buffer - used) as f64 {
            return Err(Refusal::OverThreshold);
        }
        self.buffer_used += bytes;
        Ok(())
    }

    /// Charges a data packet to its ingress queue; true if that crossed XOFF and the ingress
    /// port must send PAUSE.
    pub fn charge_ingress(&mut self, p: &SwitchParams, ingress: &mut Port, q: usize, bytes: u64) -> bool {
        let Some(pfc) = p.pfc else { return false };
        ingress.ingress_bytes[q] += bytes;
        if ingress.pause_sent >> q & 1 == 0 && ingress.ingress_bytes[q] >= pfc.xoff {
            ingress.pause_sent |= 1 << q;
            ingress.pauses_sent += 1;
            ingress.request_pfc(Frame::Pause(q as u8));
            return true;
        }
        false
    }

    /// A packet of `bytes` left egress queue `q` of a port of rate `out_rate`, leaving `left`
    /// bytes behind it, having entered through port `ingress`; `data`: a data packet. Only
    /// data is marked, and only data in a data queue (1..) is charged to PFC ingress queues:
    /// with a single egress queue, data shares queue 0 with control and is still marked.
    #[allow(clippy::too_many_arguments)]
    pub fn depart(&mut self, p: &SwitchParams, out_rate: Rate, left: u64, ingress: &mut Port, q: usize, data: bool, bytes: u64) -> Departure {
        self.buffer_used -= bytes;
        let mut d = Departure::default();
        if !data {
            return d;
        }
        // RED/ECN on the egress queue after this packet left (HPCC ns-3 `ShouldSendCN` at
        // dequeue).
        if let Some(red) = p.red_for(out_rate) {
            d.mark = red.should_mark(left, &mut self.ecn_rng);
        }
        if let (Some(pfc), true) = (p.pfc, q != 0) {
            ingress.ingress_bytes[q] -= bytes;
            if ingress.pause_sent >> q & 1 == 1 && ingress.ingress_bytes[q] <= pfc.xon {
                ingress.pause_sent &= !(1 << q);
                ingress.request_pfc(Frame::Resume(q as u8));
                d.resume = true;
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn switch() -> Switch {
        Switch::new(stream(1, Stream::SwitchEcn, 0))
    }

    fn params(buffer: u64, dt_alpha: f64, pfc: Option<PfcThresholds>) -> SwitchParams {
        SwitchParams { buffer, dt_alpha, pfc, ecn: None, ecn_by_rate: Vec::new() }
    }

    #[test]
    fn the_shared_buffer_admits_up_to_exactly_full_and_refuses_one_byte_more() {
        // PFC on: no dynamic threshold, only the buffer limit.
        let p = params(10_000, 1.0, Some(PfcThresholds { xoff: 5_000, xon: 2_000 }));
        let mut s = switch();
        assert_eq!(s.admit(&p, 0, true, 9_000), Ok(()));
        // 9_000 + 1_500 > 10_000: refused, nothing charged.
        assert_eq!(s.admit(&p, 0, true, 1_500), Err(Refusal::BufferFull));
        assert_eq!(s.buffer_used, 9_000);
        // 9_000 + 1_000 = 10_000: fits exactly.
        assert_eq!(s.admit(&p, 0, false, 1_000), Ok(()));
        assert_eq!(s.buffer_used, 10_000);
        assert_eq!(s.admit(&p, 0, false, 1), Err(Refusal::BufferFull));
    }

    #[test]
    fn the_dynamic_threshold_admits_a_queue_up_to_exactly_alpha_times_the_free_buffer() {
        // PFC off, alpha 1, empty buffer: a queue may hold up to the 10_000 free bytes.
        let p = params(10_000, 1.0, None);
        let mut s = switch();
        assert_eq!(s.admit(&p, 9_000, true, 1_000), Ok(()));
        // Now 9_000 bytes are free: a queue of 8_500 may not take 1_000 more (9_500 > 9_000),
        // but control packets are exempt.
        assert_eq!(s.admit(&p, 8_500, true, 1_000), Err(Refusal::OverThreshold));
        assert_eq!(s.admit(&p, 8_500, false, 1_000), Ok(()));
        assert_eq!(s.buffer_used, 2_000);
    }

    #[test]
    fn pfc_pauses_at_xoff_once_and_resumes_at_xon() {
        use crate::net::loss::PortLoss;
        use crate::net::port::{Discipline, Port};
        use crate::sim::units::Time;
        let pfc = PfcThresholds { xoff: 3_000, xon: 1_000 };
        let p = params(100_000, 1.0, Some(pfc));
        let mut s = switch();
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        let mut ingress = Port::new(0, Rate::gbps(10), Time::ZERO, 2, Discipline::StrictPriority, loss);
        assert!(!s.charge_ingress(&p, &mut ingress, 1, 2_000));
        assert!(s.charge_ingress(&p, &mut ingress, 1, 1_000), "3_000 bytes reach XOFF");
        assert!(!s.charge_ingress(&p, &mut ingress, 1, 1_000), "one PAUSE per crossing");
        assert_eq!((ingress.ingress_bytes[1], ingress.pause_sent, ingress.pauses_sent), (4_000, 0b10, 1));
        assert_eq!(ingress.pfc_pending.iter().copied().collect::<Vec<_>>(), vec![Frame::Pause(1)]);
        s.buffer_used = 4_000;
        let d = s.depart(&p, Rate::gbps(10), 0, &mut ingress, 1, true, 2_000);
        assert_eq!(d, Departure { mark: false, resume: false }, "2_000 left, above XON");
        let d = s.depart(&p, Rate::gbps(10), 0, &mut ingress, 1, true, 1_000);
        assert_eq!(d, Departure { mark: false, resume: true }, "1_000 left: at XON");
        assert_eq!((ingress.ingress_bytes[1], ingress.pause_sent, s.buffer_used), (1_000, 0, 1_000));
        // The pending PAUSE and the RESUME cancel out.
        assert!(ingress.pfc_pending.is_empty());
    }
}
