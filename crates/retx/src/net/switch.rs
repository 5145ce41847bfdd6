//! An output-queued shared-buffer switch: admission into the shared buffer (dynamic threshold,
//! PFC per ingress queue: fixed XOFF/XON with or without reserved headroom, or HPCC ns-3's
//! dynamic threshold with reserve and headroom), and the bookkeeping when a packet leaves an egress queue (buffer, RED/ECN marking
//! with the egress port's profile, PFC resume).
//!
//! The switch owns no ports: the network hands it the ports a packet touches, so that ports,
//! wires and loss stay elements of their own ([`super::port`]).

use super::ecn::RedProfile;
use super::headroom::Headroom;
use super::packet::Frame;
use super::port::Port;
pub use super::port::{PortTrim, Victim};
use crate::sim::rng::Rng;
use crate::transport::common::segment::Ecn;
use crate::sim::units::{Rate, Time};

/// PFC thresholds on the bytes an ingress queue holds in the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcThresholds {
    pub xoff: u64,
    pub xon: u64,
}

/// How an ingress queue decides to PAUSE and RESUME its peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pfc {
    /// Fixed XOFF/XON on the bytes the ingress queue holds, the whole buffer shared: lossless
    /// only while the buffer outlasts every queue's XOFF plus what arrives after its PAUSE.
    Fixed(PfcThresholds),
    /// Fixed XOFF/XON with headroom reserved per lossless ingress queue (a real switch's
    /// lossless configuration): the buffer less every port's headroom is shared; a packet
    /// that would take its queue past XOFF, or the shared part past full, goes to its queue's
    /// headroom and PAUSEs the upstream port, and while paused every arrival goes there. With
    /// headroom at least what arrives after a PAUSE ([`super::headroom::needed`]) no data
    /// packet is dropped. Packets charged to no ingress queue (control, background) use the
    /// shared part only.
    FixedHeadroom(PfcThresholds, Headroom),
    /// HPCC ns-3's `SwitchMmu` (switch-mmu.cc): each ingress (port, queue) has `reserve` bytes
    /// of its own, then shares the buffer up to a dynamic threshold, (buffer - every port's
    /// headroom and reserve - shared bytes in use) >> shift; past it, bytes go to the port's
    /// headroom and the queue pauses its peer. A packet is dropped only when both its headroom
    /// and the threshold are exceeded.
    Dynamic(DynamicPfc),
}

/// The dynamic PFC model's parameters (per switch; headroom and shift resolve per port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynamicPfc {
    /// Bytes of every ingress (port, queue) that do not count as shared.
    pub reserve: u64,
    /// RESUME once the shared bytes are this far below the threshold.
    pub resume_offset: u64,
    /// Headroom of every port (HPCC ns-3's third.cc: 3 x the link's rate x delay).
    pub headroom: Headroom,
    /// The threshold's shift at ports of the host link rate (3: 1/8 of the free buffer).
    pub shift: u32,
}

impl DynamicPfc {
    /// A port's headroom.
    pub fn headroom_for(&self, rate: Rate, delay: Time) -> u64 {
        self.headroom.for_link(rate, delay)
    }

    /// A port's shift: one less per doubling of its rate over the host link rate, down to 0,
    /// so faster ports get a larger share (HPCC ns-3 third.cc, "proportional to link bw").
    pub fn shift_for(&self, rate: Rate, host_rate: Rate) -> u32 {
        let (mut shift, mut rate) = (self.shift, rate.bps());
        while rate > host_rate.bps() && shift > 0 {
            shift -= 1;
            rate /= 2;
        }
        shift
    }
}

/// A RED/ECN profile that applies to egress ports of one link rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateProfile {
    pub rate: Rate,
    pub red: RedProfile,
}

/// A drop profile for packets of one colour (drop precedence): WRED, dropping with a
/// probability that rises from 0 at `min` to `pmax` at `max` bytes of egress queue and every
/// packet above `max`; with `min == max` a hard threshold (Aeolus's selective dropping of
/// unscheduled packets sets both WRED thresholds to one value, SIGCOMM '20 §4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColourRule {
    pub colour: u8,
    /// Only this egress queue (None: every queue).
    pub queue: Option<u8>,
    /// Only egress ports of this rate (None: every port).
    pub rate: Option<Rate>,
    pub drop: RedProfile,
    /// Judge the port's bytes (all its queues) rather than the egress queue's: with strict
    /// priorities, unscheduled packets spread over several queues, and a per-queue threshold
    /// lets each fill to it (see docs/SCENARIO.md, `scope`).
    pub of_port: bool,
}

/// Trimming instead of dropping (`[switch] trim`): a data packet the buffer or its colour rule
/// would refuse keeps `header` bytes and goes to egress queue `queue` (NDP's header queue,
/// served at its priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trim {
    pub queue: usize,
    pub header: u32,
    /// Per-port queue limits as htsim's NDP switch (`CompositeQueue`); None: trim only what the
    /// shared buffer (or a colour rule) refuses.
    pub port: Option<PortTrim>,
    /// A trimmed header that finds no room in the header queue goes back to its sender
    /// instead of being dropped (htsim's `_return_to_sender`), once.
    pub return_to_sender: bool,
}

/// What every switch of a run shares: its configuration.
#[derive(Clone, Debug)]
pub struct SwitchParams {
    /// Shared packet buffer, bytes.
    pub buffer: u64,
    /// Egress dynamic threshold: a data queue may grow to alpha x the free shared buffer
    /// (applied when PFC is off, as in the HPCC ns-3 model).
    pub dt_alpha: f64,
    pub pfc: Option<Pfc>,
    /// The RED/ECN profile of ports whose rate has no entry in `ecn_by_rate` (None: no marking).
    pub ecn: Option<RedProfile>,
    /// Profiles by egress link rate (HPCC ns-3's `KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`).
    pub ecn_by_rate: Vec<RateProfile>,
    /// Colour drop profiles, the first that matches a packet applies (none: no colour drops).
    pub colour: Vec<ColourRule>,
    /// Trim data packets the buffer would refuse to a header instead of dropping them.
    pub trim: Option<Trim>,
    /// A static buffer per egress port, bytes, beside the shared one: a packet that would take
    /// the port's queues past it is refused (None: the shared buffer alone).
    pub port_buffer: Option<u64>,
    /// RED drops a Not-ECT data packet at enqueue where it would mark an ECN-capable one.
    pub ecn_drops_not_ect: bool,
    /// Ports toward hosts mark ECN too.
    pub ecn_to_hosts: bool,
}

impl SwitchParams {
    /// The marking profile of an egress port of this rate.
    pub fn red_for(&self, rate: Rate) -> Option<RedProfile> {
        match self.ecn_by_rate.iter().find(|p| p.rate == rate) {
            Some(p) => Some(p.red),
            None => self.ecn,
        }
    }

    /// The drop rule of a packet of `colour` entering egress queue `q` of a port of `rate`: the
    /// first rule that matches all three.
    pub fn colour_rule_for(&self, colour: u8, q: usize, rate: Rate) -> Option<&ColourRule> {
        self.colour
            .iter()
            .find(|r| r.colour == colour && r.queue.is_none_or(|c| c as usize == q) && r.rate.is_none_or(|x| x == rate))
    }
}

/// Why a switch refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The shared buffer is full.
    BufferFull,
    /// The egress queue is over its dynamic threshold.
    OverThreshold,
    /// Dynamic PFC: the ingress queue is over its threshold and its port's headroom is full.
    HeadroomFull,
    /// The packet's colour profile dropped it (a colour threshold, or WRED).
    Colour,
    /// Per-port trimming ([`PortTrim`]): the header queue is full.
    HeaderQueueFull,
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
    /// Dynamic PFC: bytes set aside, every port's headroom and reserve (ns-3's `total_hdrm +
    /// total_rsrv`), and the shared bytes in use (`shared_used_bytes`).
    pub pfc_reserved: u64,
    pub shared_used: u64,
    /// Fixed PFC with headroom: bytes held in headroom over every port (the rest of
    /// `buffer_used` is in the shared part).
    pub hdrm_used: u64,
    ecn_rng: Rng,
    /// WRED's draws, apart from ECN's so that colour rules leave marking as it was.
    wred_rng: Rng,
    /// Per-port trimming's coin ([`Victim::Htsim`]), drawn only when a data queue is full.
    pub(super) trim_rng: Rng,
}

impl Switch {
    pub fn new(ecn_rng: Rng, wred_rng: Rng, trim_rng: Rng) -> Switch {
        Switch { buffer_used: 0, pfc_reserved: 0, shared_used: 0, hdrm_used: 0, ecn_rng, wred_rng, trim_rng }
    }

    /// Colour admission: a data packet of `colour` arriving at egress queue `q` (holding
    /// `queued` bytes) of a port of `rate` (holding `held` bytes in all its queues) is dropped
    /// by its colour's profile (on the bytes ahead of it, at enqueue, as WRED does), or passes.
    /// Randomness is drawn only on the ramp.
    pub fn admit_colour(&mut self, p: &SwitchParams, colour: u8, q: usize, rate: Rate, queued: u64, held: u64) -> Result<(), Refusal> {
        match p.colour_rule_for(colour, q, rate) {
            Some(r) if r.drop.should_mark(if r.of_port { held } else { queued }, &mut self.wred_rng) => Err(Refusal::Colour),
            _ => Ok(()),
        }
    }

    /// RFC 3168's RED on a data packet that is not ECN-capable ([`SwitchParams::ecn_drops_not_ect`]):
    /// dropped where the port's ECN profile would mark it, on the `queued` bytes ahead of it
    /// (counted as a colour drop: Aeolus's selective drop by codepoint). Its draws come from
    /// the WRED stream, so ECN marking of ECN-capable packets is left as it was.
    pub fn admit_not_ect(&mut self, p: &SwitchParams, ecn: Ecn, rate: Rate, queued: u64) -> Result<(), Refusal> {
        match p.red_for(rate) {
            Some(red) if p.ecn_drops_not_ect && ecn == Ecn::NotEct && red.should_mark(queued, &mut self.wred_rng) => Err(Refusal::Colour),
            _ => Ok(()),
        }
    }

    /// Admits a packet of `bytes` into an egress queue that holds `queued` bytes, or says why
    /// not; `data`: a data packet (control packets are exempt from the dynamic threshold,
    /// whatever queue they share); `ingress`: the port and queue it is charged to for PFC
    /// (None for control). On success the bytes are charged to the buffer.
    pub fn admit(&mut self, p: &SwitchParams, queued: u64, data: bool, bytes: u64, ingress: Option<(&Port, usize)>) -> Result<(), Refusal> {
        let used = self.buffer_used;
        if used + bytes > p.buffer {
            return Err(Refusal::BufferFull);
        }
        if data && p.pfc.is_none() && (queued + bytes) as f64 > p.dt_alpha * (p.buffer - used) as f64 {
            return Err(Refusal::OverThreshold);
        }
        match (p.pfc, ingress) {
            // ns-3 `CheckIngressAdmission`.
            (Some(Pfc::Dynamic(d)), Some((port, q))) if bytes + port.hdrm_bytes[q] > port.pfc_headroom && bytes + shared_of(&d, port, q) > self.pfc_threshold(p, port) => {
                return Err(Refusal::HeadroomFull);
            }
            (Some(Pfc::FixedHeadroom(t, _)), Some((port, q))) if self.to_headroom(p, t, port, q, bytes, used) && port.hdrm_bytes[q] + bytes > port.pfc_headroom => {
                return Err(Refusal::HeadroomFull);
            }
            // Not lossless: it may not eat into the headroom set aside.
            (Some(Pfc::FixedHeadroom(..)), None) if used - self.hdrm_used + bytes > self.shared_limit(p) => {
                return Err(Refusal::BufferFull);
            }
            _ => {}
        }
        self.buffer_used += bytes;
        Ok(())
    }

    /// Fixed PFC with headroom: the bytes of the buffer not set aside as headroom.
    fn shared_limit(&self, p: &SwitchParams) -> u64 {
        p.buffer.saturating_sub(self.pfc_reserved)
    }

    /// Fixed PFC with headroom: whether a packet of `bytes` for ingress queue `q` of `port`
    /// goes to headroom, with `used` bytes in the buffer before it: while the queue is paused,
    /// or when it would take the queue past XOFF or the shared part past full.
    fn to_headroom(&self, p: &SwitchParams, t: PfcThresholds, port: &Port, q: usize, bytes: u64, used: u64) -> bool {
        port.pause_sent >> q & 1 == 1 || port.ingress_bytes[q] + bytes > t.xoff || used - self.hdrm_used + bytes > self.shared_limit(p)
    }

    /// Dynamic PFC: the shared bytes an ingress queue may use now (ns-3 `GetPfcThreshold`).
    pub fn pfc_threshold(&self, p: &SwitchParams, port: &Port) -> u64 {
        p.buffer.saturating_sub(self.pfc_reserved + self.shared_used) >> port.pfc_shift
    }

    /// Charges a data packet to its ingress queue; true if the ingress port must now send
    /// PAUSE (fixed: the queue reached XOFF; dynamic: it spilled into headroom or reached
    /// the threshold).
    pub fn charge_ingress(&mut self, p: &SwitchParams, ingress: &mut Port, q: usize, bytes: u64) -> bool {
        let pause = match p.pfc {
            None => return false,
            Some(Pfc::Fixed(pfc)) => {
                ingress.ingress_bytes[q] += bytes;
                ingress.ingress_bytes[q] >= pfc.xoff
            }
            Some(Pfc::FixedHeadroom(t, _)) => {
                // Admission charged the buffer already: decide on the state before it.
                if self.to_headroom(p, t, ingress, q, bytes, self.buffer_used - bytes) {
                    ingress.hdrm_bytes[q] += bytes;
                    self.hdrm_used += bytes;
                    true
                } else {
                    ingress.ingress_bytes[q] += bytes;
                    ingress.ingress_bytes[q] >= t.xoff
                }
            }
            Some(Pfc::Dynamic(d)) => {
                // ns-3 `UpdateIngressAdmission`, then `CheckShouldPause`.
                let new = ingress.ingress_bytes[q] + bytes;
                if new <= d.reserve {
                    ingress.ingress_bytes[q] += bytes;
                } else if new - d.reserve > self.pfc_threshold(p, ingress) {
                    ingress.hdrm_bytes[q] += bytes;
                } else {
                    ingress.ingress_bytes[q] += bytes;
                    self.shared_used += bytes.min(new - d.reserve);
                }
                ingress.hdrm_bytes[q] > 0 || shared_of(&d, ingress, q) >= self.pfc_threshold(p, ingress)
            }
        };
        if pause && ingress.pause_sent >> q & 1 == 0 {
            ingress.pause_sent |= 1 << q;
            ingress.pauses_sent += 1;
            ingress.request_pfc(Frame::Pause(q as u8));
            return true;
        }
        false
    }

    /// A packet of `bytes` left an egress queue of a port marking with `red` (its profile,
    /// [`crate::net::port::PortEcn`]), leaving `left`
    /// bytes behind it, having entered through port `ingress`; `data`: a data packet;
    /// `pfc_queue`: the ingress queue it was charged to on admission, if its egress queue is
    /// lossless ([`Port::is_lossless`]). Only data is marked, whatever its queue (with a single
    /// egress queue, data shares queue 0 with control and is still marked).
    #[allow(clippy::too_many_arguments)]
    pub fn depart(&mut self, p: &SwitchParams, red: Option<RedProfile>, left: u64, ingress: &mut Port, pfc_queue: Option<usize>, data: bool, bytes: u64) -> Departure {
        self.buffer_used -= bytes;
        let mut d = Departure::default();
        if !data {
            return d;
        }
        // RED/ECN on the egress queue after this packet left (HPCC ns-3 `ShouldSendCN` at
        // dequeue).
        if let Some(red) = red {
            d.mark = red.should_mark(left, &mut self.ecn_rng);
        }
        let Some(q) = pfc_queue else { return d };
        let resume = match p.pfc {
            None => return d,
            Some(Pfc::Fixed(pfc)) => {
                ingress.ingress_bytes[q] -= bytes;
                ingress.ingress_bytes[q] <= pfc.xon
            }
            Some(Pfc::FixedHeadroom(t, _)) => {
                // Headroom drains first; RESUME once it is empty and the queue is down to XON
                // (only this queue's own state: its departures are what re-check it).
                let from_hdrm = ingress.hdrm_bytes[q].min(bytes);
                ingress.hdrm_bytes[q] -= from_hdrm;
                self.hdrm_used -= from_hdrm;
                ingress.ingress_bytes[q] -= bytes - from_hdrm;
                ingress.hdrm_bytes[q] == 0 && ingress.ingress_bytes[q] <= t.xon
            }
            Some(Pfc::Dynamic(dy)) => {
                // ns-3 `RemoveFromIngressAdmission`, then `CheckShouldResume`.
                let from_hdrm = ingress.hdrm_bytes[q].min(bytes);
                let from_shared = (bytes - from_hdrm).min(shared_of(&dy, ingress, q));
                ingress.hdrm_bytes[q] -= from_hdrm;
                ingress.ingress_bytes[q] -= bytes - from_hdrm;
                self.shared_used -= from_shared;
                let shared = shared_of(&dy, ingress, q);
                ingress.hdrm_bytes[q] == 0 && (shared == 0 || shared + dy.resume_offset <= self.pfc_threshold(p, ingress))
            }
        };
        if resume && ingress.pause_sent >> q & 1 == 1 {
            ingress.pause_sent &= !(1 << q);
            ingress.request_pfc(Frame::Resume(q as u8));
            d.resume = true;
        }
        d
    }
}

/// Dynamic PFC: the bytes of an ingress queue beyond its reserve (ns-3 `GetSharedUsed`).
fn shared_of(d: &DynamicPfc, port: &Port, q: usize) -> u64 {
    port.ingress_bytes[q].saturating_sub(d.reserve)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn switch() -> Switch {
        Switch::new(stream(1, Stream::SwitchEcn, 0), stream(1, Stream::SwitchWred, 0), stream(1, Stream::SwitchTrim, 0))
    }

    fn params(buffer: u64, dt_alpha: f64, pfc: Option<PfcThresholds>) -> SwitchParams {
        SwitchParams { buffer, dt_alpha, pfc: pfc.map(Pfc::Fixed), ecn: None, ecn_by_rate: Vec::new(), colour: Vec::new(), trim: None, port_buffer: None, ecn_drops_not_ect: false, ecn_to_hosts: true }
    }

    #[test]
    fn the_shared_buffer_admits_up_to_exactly_full_and_refuses_one_byte_more() {
        // PFC on: no dynamic threshold, only the buffer limit.
        let p = params(10_000, 1.0, Some(PfcThresholds { xoff: 5_000, xon: 2_000 }));
        let mut s = switch();
        assert_eq!(s.admit(&p, 0, true, 9_000, None), Ok(()));
        // 9_000 + 1_500 > 10_000: refused, nothing charged.
        assert_eq!(s.admit(&p, 0, true, 1_500, None), Err(Refusal::BufferFull));
        assert_eq!(s.buffer_used, 9_000);
        // 9_000 + 1_000 = 10_000: fits exactly.
        assert_eq!(s.admit(&p, 0, false, 1_000, None), Ok(()));
        assert_eq!(s.buffer_used, 10_000);
        assert_eq!(s.admit(&p, 0, false, 1, None), Err(Refusal::BufferFull));
    }

    #[test]
    fn the_dynamic_threshold_admits_a_queue_up_to_exactly_alpha_times_the_free_buffer() {
        // PFC off, alpha 1, empty buffer: a queue may hold up to the 10_000 free bytes.
        let p = params(10_000, 1.0, None);
        let mut s = switch();
        assert_eq!(s.admit(&p, 9_000, true, 1_000, None), Ok(()));
        // Now 9_000 bytes are free: a queue of 8_500 may not take 1_000 more (9_500 > 9_000),
        // but control packets are exempt.
        assert_eq!(s.admit(&p, 8_500, true, 1_000, None), Err(Refusal::OverThreshold));
        assert_eq!(s.admit(&p, 8_500, false, 1_000, None), Ok(()));
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
        let d = s.depart(&p, p.red_for(Rate::gbps(10)), 0, &mut ingress, Some(1), true, 2_000);
        assert_eq!(d, Departure { mark: false, resume: false }, "2_000 left, above XON");
        let d = s.depart(&p, p.red_for(Rate::gbps(10)), 0, &mut ingress, Some(1), true, 1_000);
        assert_eq!(d, Departure { mark: false, resume: true }, "1_000 left: at XON");
        assert_eq!((ingress.ingress_bytes[1], ingress.pause_sent, s.buffer_used), (1_000, 0, 1_000));
        // The pending PAUSE and the RESUME cancel out.
        assert!(ingress.pfc_pending.is_empty());
    }

    fn dynamic(reserve: u64, resume_offset: u64) -> DynamicPfc {
        DynamicPfc { reserve, resume_offset, headroom: Headroom::Ns3, shift: 3 }
    }

    #[test]
    fn dynamic_pfc_headroom_and_shift_follow_hpcc_third_cc() {
        let d = dynamic(4096, 3072);
        // 100 Gbps x 1000 ns / 8 = 12_500 B, x 3; 40 Gbps x 2 us / 8 = 10_000 B, x 3.
        assert_eq!(d.headroom_for(Rate::gbps(100), Time::from_us(1)), 37_500);
        assert_eq!(d.headroom_for(Rate::gbps(40), Time::from_us(2)), 30_000);
        // Delay in whole ns, as ns-3's time step: 1_999 ps counts as 1 ns.
        assert_eq!(d.headroom_for(Rate::gbps(8), Time(1_999)), 3);
        assert_eq!(DynamicPfc { headroom: Headroom::Bytes(5_000), ..d }.headroom_for(Rate::gbps(100), Time::from_us(1)), 5_000);
        // Hosts at 25 Gbps: 25 keeps 3; 100 is two doublings (2 x 50 > 25, then 50 > 25): 1;
        // 400 would go to -1 and stops at 0; 30 Gbps is above 25 once: 2.
        let host = Rate::gbps(25);
        let shifts: Vec<u32> = [25, 30, 100, 400].iter().map(|&g| d.shift_for(Rate::gbps(g), host)).collect();
        assert_eq!(shifts, vec![3, 2, 1, 0]);
    }

    /// The HPCC ns-3 MMU by hand: buffer 100_000, 36_000 set aside (headroom + reserves),
    /// reserve 4_000, resume offset 3_000, shift 3, a port headroom of 3_000, 1_000 B packets.
    /// Threshold = (100_000 - 36_000 - shared) >> 3.
    #[test]
    fn dynamic_pfc_pauses_at_the_dynamic_threshold_uses_headroom_and_resumes_at_the_offset() {
        use crate::net::loss::PortLoss;
        use crate::net::port::{Discipline, Port};
        let p = SwitchParams { buffer: 100_000, dt_alpha: 1.0, pfc: Some(Pfc::Dynamic(dynamic(4_000, 3_000))), ecn: None, ecn_by_rate: Vec::new(), colour: Vec::new(), trim: None, port_buffer: None, ecn_drops_not_ect: false, ecn_to_hosts: true };
        let mut s = switch();
        s.pfc_reserved = 36_000;
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        let mut port = Port::new(0, Rate::gbps(10), Time::ZERO, 2, Discipline::StrictPriority, loss);
        port.pfc_headroom = 3_000;
        port.pfc_shift = 3;
        assert_eq!(s.pfc_threshold(&p, &port), 8_000);
        let arrive = |s: &mut Switch, port: &mut Port| {
            s.admit(&p, 0, true, 1_000, Some((port, 1)))?;
            Ok::<bool, Refusal>(s.charge_ingress(&p, port, 1, 1_000))
        };
        // 4 packets fill the reserve (nothing shared); 7 more are shared: after the 7th the
        // threshold is (64_000 - 7_000) >> 3 = 7_125 > 7_000, no pause.
        for i in 0..11 {
            assert_eq!(arrive(&mut s, &mut port), Ok(false), "packet {i}");
        }
        assert_eq!((port.ingress_bytes[1], s.shared_used, s.pfc_threshold(&p, &port)), (11_000, 7_000, 7_125));
        // The 12th would bring the shared bytes to 8_000 > 7_125: it goes to headroom, PAUSE.
        assert_eq!(arrive(&mut s, &mut port), Ok(true));
        assert_eq!((port.ingress_bytes[1], port.hdrm_bytes[1], s.shared_used, port.pause_sent), (11_000, 1_000, 7_000, 0b10));
        // Two more fit the 3_000 B headroom (one PAUSE only); the next is dropped.
        assert_eq!(arrive(&mut s, &mut port), Ok(false));
        assert_eq!(arrive(&mut s, &mut port), Ok(false));
        assert_eq!(arrive(&mut s, &mut port), Err(Refusal::HeadroomFull));
        assert_eq!((port.hdrm_bytes[1], s.buffer_used, port.pauses_sent), (3_000, 14_000, 1));
        // Departures drain headroom first (no RESUME while it holds bytes), then the shared
        // bytes: shared 6_000 (threshold 7_250), 5_000 (7_375): 5_000 + 3_000 > 7_375; at
        // 4_000 the threshold is 7_500 >= 4_000 + 3_000: RESUME, on the 6th departure.
        let resumes: Vec<bool> = (0..6).map(|_| s.depart(&p, p.red_for(Rate::gbps(10)), 0, &mut port, Some(1), true, 1_000).resume).collect();
        assert_eq!(resumes, vec![false, false, false, false, false, true]);
        assert_eq!((port.ingress_bytes[1], port.hdrm_bytes[1], s.shared_used, s.pfc_threshold(&p, &port)), (8_000, 0, 4_000, 7_500));
        // Back below the reserve nothing is shared.
        for _ in 0..8 {
            s.depart(&p, p.red_for(Rate::gbps(10)), 0, &mut port, Some(1), true, 1_000);
        }
        assert_eq!((port.ingress_bytes[1], s.shared_used, s.buffer_used, port.pause_sent), (0, 0, 0, 0));
    }

    #[test]
    fn dynamic_pfc_admits_into_the_threshold_even_with_full_headroom() {
        // ns-3 drops only when both the headroom and the threshold are exceeded.
        use crate::net::loss::PortLoss;
        use crate::net::port::{Discipline, Port};
        let p = SwitchParams { buffer: 100_000, dt_alpha: 1.0, pfc: Some(Pfc::Dynamic(dynamic(0, 0))), ecn: None, ecn_by_rate: Vec::new(), colour: Vec::new(), trim: None, port_buffer: None, ecn_drops_not_ect: false, ecn_to_hosts: true };
        let mut s = switch();
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        let mut port = Port::new(0, Rate::gbps(10), Time::ZERO, 2, Discipline::StrictPriority, loss);
        port.pfc_shift = 1;
        port.pfc_headroom = 0;
        // No headroom, threshold 100_000 >> 1 = 50_000: a 50_000 B packet fits exactly; then
        // the threshold is (100_000 - 50_000) >> 1 = 25_000 and one more byte is over both.
        assert_eq!(s.admit(&p, 0, true, 50_000, Some((&port, 1))), Ok(()));
        assert!(s.charge_ingress(&p, &mut port, 1, 50_000), "shared 50_000 >= threshold 25_000: PAUSE");
        assert_eq!(s.admit(&p, 0, true, 1, Some((&port, 1))), Err(Refusal::HeadroomFull));
        // Control (no ingress queue) is not held to it.
        assert_eq!(s.admit(&p, 0, false, 1, None), Ok(()));
    }

    /// Fixed PFC with headroom by hand: buffer 100_000, 10_000 set aside as headroom, XOFF
    /// 3_000, XON 1_000, a port headroom of 5_000, 1_000 B packets.
    #[test]
    fn fixed_pfc_with_headroom_pauses_at_xoff_fills_headroom_and_resumes_at_xon() {
        use crate::net::loss::PortLoss;
        use crate::net::port::{Discipline, Port};
        let t = PfcThresholds { xoff: 3_000, xon: 1_000 };
        let p = SwitchParams { pfc: Some(Pfc::FixedHeadroom(t, Headroom::Bytes(5_000))), ..params(100_000, 1.0, None) };
        let mut s = switch();
        s.pfc_reserved = 10_000;
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        let mut port = Port::new(0, Rate::gbps(10), Time::ZERO, 2, Discipline::StrictPriority, loss);
        port.pfc_headroom = 5_000;
        let arrive = |s: &mut Switch, port: &mut Port| {
            s.admit(&p, 0, true, 1_000, Some((port, 1)))?;
            Ok::<bool, Refusal>(s.charge_ingress(&p, port, 1, 1_000))
        };
        // Two packets in the shared part; the third reaches XOFF: PAUSE.
        assert_eq!((arrive(&mut s, &mut port), arrive(&mut s, &mut port), arrive(&mut s, &mut port)), (Ok(false), Ok(false), Ok(true)));
        assert_eq!((port.ingress_bytes[1], port.hdrm_bytes[1]), (3_000, 0));
        // Paused: the next five land in headroom (no second PAUSE); the sixth overflows it.
        for _ in 0..5 {
            assert_eq!(arrive(&mut s, &mut port), Ok(false));
        }
        assert_eq!((port.hdrm_bytes[1], s.hdrm_used, s.buffer_used), (5_000, 5_000, 8_000));
        assert_eq!(arrive(&mut s, &mut port), Err(Refusal::HeadroomFull));
        // Headroom drains first, then the shared part; RESUME when down to XON, on the 7th.
        let resumes: Vec<bool> = (0..7).map(|_| s.depart(&p, p.red_for(Rate::gbps(10)), 0, &mut port, Some(1), true, 1_000).resume).collect();
        assert_eq!(resumes, vec![false, false, false, false, false, false, true]);
        assert_eq!((port.ingress_bytes[1], port.hdrm_bytes[1], s.hdrm_used, port.pause_sent), (1_000, 0, 0, 0));
    }

    #[test]
    fn fixed_pfc_with_headroom_pauses_when_the_shared_part_is_full_and_keeps_control_out_of_headroom() {
        use crate::net::loss::PortLoss;
        use crate::net::port::{Discipline, Port};
        let t = PfcThresholds { xoff: 50_000, xon: 40_000 };
        let p = SwitchParams { pfc: Some(Pfc::FixedHeadroom(t, Headroom::Bytes(5_000))), ..params(100_000, 1.0, None) };
        let mut s = switch();
        s.pfc_reserved = 97_500; // 2_500 B shared
        let loss = PortLoss::new(stream(1, Stream::LinkLoss, 0), stream(1, Stream::BurstLoss, 0));
        let mut port = Port::new(0, Rate::gbps(10), Time::ZERO, 2, Discipline::StrictPriority, loss);
        port.pfc_headroom = 5_000;
        for _ in 0..2 {
            s.admit(&p, 0, true, 1_000, Some((&port, 1))).unwrap();
            assert!(!s.charge_ingress(&p, &mut port, 1, 1_000));
        }
        // 500 B of shared part left: control cannot have 1_000 of it (not from headroom)...
        assert_eq!(s.admit(&p, 0, false, 1_000, None), Err(Refusal::BufferFull));
        assert_eq!(s.admit(&p, 0, false, 500, None), Ok(()));
        // ... and a data packet far below XOFF goes to headroom and PAUSEs.
        s.admit(&p, 0, true, 1_000, Some((&port, 1))).unwrap();
        assert!(s.charge_ingress(&p, &mut port, 1, 1_000));
        assert_eq!((port.ingress_bytes[1], port.hdrm_bytes[1], s.buffer_used), (2_000, 1_000, 3_500));
    }

    fn red(min: u64, max: u64, pmax: f64) -> RedProfile {
        RedProfile { kmin: min, kmax: max, pmax }
    }

    #[test]
    fn a_colour_threshold_drops_that_colour_only_above_it() {
        // Aeolus-style: red (2) packets dropped once the queue ahead holds more than 8_000 B.
        let mut p = params(1_000_000, 1.0, None);
        p.colour = vec![ColourRule { colour: 2, queue: None, rate: None, drop: red(8_000, 8_000, 1.0), of_port: false }];
        let mut s = switch();
        let r = Rate::gbps(10);
        assert_eq!(s.admit_colour(&p, 2, 1, r, 8_000, 8_000), Ok(()), "at the threshold: admitted");
        assert_eq!(s.admit_colour(&p, 2, 1, r, 8_001, 8_001), Err(Refusal::Colour));
        assert_eq!(s.admit_colour(&p, 0, 1, r, 8_001, 8_001), Ok(()), "green has no rule");
        assert_eq!(s.admit_colour(&p, 1, 1, r, 900_000, 900_000), Ok(()), "nor has yellow");
        // Per queue, the port's other queues do not count; per port, they do.
        assert_eq!(s.admit_colour(&p, 2, 1, r, 1_000, 50_000), Ok(()), "the queue holds 1_000 B");
        p.colour[0].of_port = true;
        assert_eq!(s.admit_colour(&p, 2, 1, r, 1_000, 8_001), Err(Refusal::Colour), "the port holds 8_001 B");
        assert_eq!(s.admit_colour(&p, 2, 1, r, 8_001, 8_000), Ok(()), "the port holds 8_000 B");
        p.colour[0].of_port = false;
        // Nothing random on a hard threshold.
        let mut fresh = switch();
        assert_eq!(s.wred_rng.next_u64(), fresh.wred_rng.next_u64());
    }

    #[test]
    fn colour_rules_select_by_class_and_rate_first_match_first() {
        let mut p = params(1_000_000, 1.0, None);
        p.colour = vec![
            ColourRule { colour: 1, queue: Some(2), rate: None, drop: red(1_000, 1_000, 1.0), of_port: false },
            ColourRule { colour: 1, queue: None, rate: Some(Rate::gbps(100)), drop: red(5_000, 5_000, 1.0), of_port: false },
            ColourRule { colour: 1, queue: None, rate: None, drop: red(20_000, 20_000, 1.0), of_port: false },
        ];
        let (g10, g100) = (Rate::gbps(10), Rate::gbps(100));
        assert_eq!(p.colour_rule_for(1, 2, g100).map(|r| r.drop.kmax), Some(1_000), "queue 2 first");
        assert_eq!(p.colour_rule_for(1, 1, g100).map(|r| r.drop.kmax), Some(5_000), "100 Gbps ports");
        assert_eq!(p.colour_rule_for(1, 1, g10).map(|r| r.drop.kmax), Some(20_000), "everything else");
        assert_eq!(p.colour_rule_for(0, 1, g10), None);
        let mut s = switch();
        assert_eq!(s.admit_colour(&p, 1, 1, g100, 5_001, 5_001), Err(Refusal::Colour));
        assert_eq!(s.admit_colour(&p, 1, 1, g10, 5_001, 5_001), Ok(()));
    }

    /// WRED from 10_000 to 30_000 B with pmax 0.2: at 20_000 B ahead a yellow packet is
    /// dropped with probability 0.1. Over 10_000 packets the drops are 1_000 within 4
    /// binomial standard deviations (sqrt(10_000 x 0.1 x 0.9) = 30, so 880..=1_120); at or
    /// below min none is dropped and above max all are.
    #[test]
    fn wred_drops_at_its_ramp_probability() {
        let mut p = params(1_000_000, 1.0, None);
        p.colour = vec![ColourRule { colour: 1, queue: None, rate: None, drop: red(10_000, 30_000, 0.2), of_port: false }];
        let mut s = switch();
        let r = Rate::gbps(10);
        let drops = |s: &mut Switch, queued: u64| (0..10_000).filter(|_| s.admit_colour(&p, 1, 1, r, queued, queued).is_err()).count();
        let mid = drops(&mut s, 20_000);
        assert!((880..=1_120).contains(&mid), "{mid} drops of 10_000 at p = 0.1");
        assert_eq!(drops(&mut s, 10_000), 0);
        assert_eq!(drops(&mut s, 30_001), 10_000);
        // At exactly max the ramp gives pmax: 2_000 +- 4 x 40.
        let at_max = drops(&mut s, 30_000);
        assert!((1_840..=2_160).contains(&at_max), "{at_max} drops of 10_000 at p = 0.2");
    }
}
