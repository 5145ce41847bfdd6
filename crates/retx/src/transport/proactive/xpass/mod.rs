//! ExpressPass (Cho, Jang and Han, "Credit-Scheduled Delay-Bounded Congestion Control for
//! Datacenters", SIGCOMM 2017) as its authors' ns-2 code models it (kaist-ina/ns2-xpass
//! `xpass/xpass.cc`, `xpass/xpass.h`, `queue/xpass-drop-tail.cc`, `tcl/lib/ns-default.tcl`
//! and the large-scale script `scripts/large-scale-fattree.tcl`; learnt from, not copied), with
//! Aeolus (Hu et al., SIGCOMM 2020, §3.3; the project's seed `002`; its unscheduled-packet
//! state is shared with Homa in [`crate::transport::proactive::aeolus`]) as an option. This file
//! holds the parameters, what the packets carry, the credit feedback controller and the
//! host-wide credit pacer; the two ends of a flow are in [`crate::transport::proactive::xpass::ends`].
//!
//! - Start: the sender sends a credit request (84 B, ns-2 `construct_credit_request`, naming
//!   how many packets it has); without Aeolus nothing else before the first credit.
//! - Receiver ([`XpassPacer`], one per host, the NIC agent): paces each flow's credits (84 B,
//!   [`SegKind::Grant`]) at the flow's credit rate, each gap `credit_bytes / rate` times a
//!   uniform factor in [1 - jitter, 1 + jitter] (ns-2 `send_credit`), drawn from a stream seeded
//!   by the flow's key (so by the run's seed). The rate starts at `initial_rate` of the maximum,
//!   `link x credit_bytes / (credit_bytes + max_data)` (ns-2 `max_credit_rate_`), scaled down
//!   for a request of fewer than 40 packets (ns-2 `recv_credit_request`), and follows the
//!   feedback controller ([`CreditControl`], ns-2 `credit_feedback_control`) once per RTT.
//! - Sender: one data packet (its payload plus 78 B, at most `max_data`) per credit received;
//!   the data packet echoes the credit's sequence number and send time, from which the
//!   receiver measures credit loss and the RTT (ns-2 `recv_data`, `update_rtt`). A credit that
//!   finds nothing to send is wasted. When nothing is left to send (or, ns-2's early credit stop,
//!   when the last RTT's credits cover what is left) it sends a credit stop
//!   (ns-2 `send_credit_stop`); the receiver's pacer stops the flow's credits then, or when
//!   everything has arrived.
//! - Switches: `[switch] shaped = { queue = <credit_priority>, buffer = 8 }` rate-limits
//!   credits per port and drops those beyond its small queue: credit loss is how congestion is
//!   signalled (ns-2 `XPassDropTail`).


pub mod ends;
pub mod pacer;
pub mod params;

use crate::sim::check::{self, Checked, FieldError};
use crate::sim::units::Rate;
use crate::transport::common::scheme::{RunFacts, Scheme, Setup};
use ends::{XpassReceiver, XpassSender};
use pacer::XpassPacer;
use params::{XpassParams, ACK_BYTES, DATA_HEADER_BYTES};

/// ExpressPass as the registry sees it. Its sender and pacer, the largest of their kind, are
/// stored boxed, so every other scheme's senders and NIC agents keep their size.
impl Scheme for XpassParams {
    const NAME: &'static str = "xpass";
    type Sender = Box<XpassSender>;
    type Receiver = XpassReceiver;
    /// The host-wide credit pacer.
    type Agent = Box<XpassPacer>;

    /// Fields by their names within `[recovery.xpass]`.
    fn check(&self) -> Checked {
        check::range_u64("credit_bytes", self.credit_bytes.0, 64, 1_538)?;
        check::range_u64("max_data", self.max_data.0, DATA_HEADER_BYTES as u64 + 1, 65_536)?;
        check::range_f64("jitter", self.jitter, 0.0, 0.9)?;
        check::range_f64("w_min", self.w_min, 1e-6, 1.0)?;
        check::range_f64("w_max", self.w_max, self.w_min, 1.0)?;
        check::range_f64("w_init", self.w_init, self.w_min, self.w_max)?;
        check::range_f64("target_loss_factor", self.target_loss_factor, 0.0, 1.0)?;
        check::fraction("initial_rate", self.initial_rate)?;
        check::range_u32("credit_priority", self.credit_priority as u32, 1, 7)?;
        check::range_u32("credit_queue", self.credit_queue, 1, 1 << 16)?;
        check::range_u32("credit_burst", self.credit_burst, 1, 1 << 16)?;
        check::timer("request_timeout", self.request_timeout.0)?;
        check::timer("rto", self.rto.0)?;
        check::range_u32("aeolus_colour", self.aeolus_colour as u32, 1, 2)?;
        check::range_u64("unscheduled_bytes", self.unscheduled_bytes.0, 0, 1 << 30)
    }

    /// A flow's `mtu`-byte payloads fit in one credit's data frame (one data packet per
    /// credit), and credits find the switches' credit queue by their priority.
    fn check_run(&self, run: &RunFacts) -> Checked {
        let mtu = run.mtu;
        if mtu as u64 + DATA_HEADER_BYTES as u64 > self.max_data.0 {
            return Err(FieldError::new("max_data", format!("{} B payloads + {DATA_HEADER_BYTES} B header exceed it ({} B): lower [nic] mtu or raise max_data", mtu, self.max_data.0)));
        }
        if let Some(q) = run.shaped_queue.filter(|&q| q != self.credit_priority as u32) {
            return Err(FieldError::new("credit_priority", format!("{} is not the switches' shaped (credit) queue, switch.shaped.queue = {q}: give them the same number", self.credit_priority)));
        }
        Ok(())
    }

    fn endpoints(&self, f: &Setup<'_>) -> (Box<XpassSender>, XpassReceiver) {
        (Box::new(XpassSender::new(self, f.spec, f.bdp_packets)), XpassReceiver::new(f.npkts()))
    }

    fn agent(&self, link: Rate, _mtu: u32) -> Option<Box<XpassPacer>> {
        Some(Box::new(XpassPacer::new(self, link)))
    }

    fn data_header(&self) -> u32 {
        DATA_HEADER_BYTES
    }

    fn response_bytes(&self, int_header: u32) -> u32 {
        ACK_BYTES + int_header
    }

    fn symmetric_paths(&self) -> bool {
        self.symmetric_paths
    }

    fn report<'a>(pacers: &mut dyn Iterator<Item = &'a Box<XpassPacer>>) -> Vec<(&'static str, f64)> {
        pacer::report(pacers.map(|p| &**p))
    }
}

#[cfg(test)]
mod tests {
    /// ExpressPass's sender and pacer are the largest of their kind: stored boxed, they leave
    /// `TxRecovery` (every queue pair's sender) and `SchemeAgent` (every NIC) the size the
    /// other schemes give them (unboxed they grew each by about 90 and 130 bytes, and the
    /// MELO web search example ran a few percent slower).
    #[test]
    fn boxing_keeps_every_other_schemes_sender_and_agent_their_size() {
        use crate::transport::{loss::irn::IrnSender, loss::melo::MeloPools, proactive::homa::HomaScheduler, SchemeAgent, TxRecovery};
        use std::mem::size_of;
        assert!(size_of::<super::ends::XpassSender>() > size_of::<IrnSender>());
        assert!(size_of::<TxRecovery>() <= size_of::<IrnSender>() + 8, "{}", size_of::<TxRecovery>());
        // The largest unboxed agents: MELO's two pools, Homa's scheduler.
        let largest = size_of::<MeloPools>().max(size_of::<HomaScheduler>());
        assert!(size_of::<SchemeAgent>() <= largest + 8, "{}", size_of::<SchemeAgent>());
    }
}

