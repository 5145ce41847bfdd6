//! ExpressPass's parameters (`[recovery.xpass]`), packet sizes and what its packets carry.

use crate::sim::units::{Dur, Rate, Size, Time};
use crate::transport::common::ext::XpassInfo;
use crate::transport::common::segment::{Ext, Segment};
use serde::{Deserialize, Serialize};


/// A data packet's bytes beyond its payload (ns-2 `xpass_hdr_size_` 78: with the 1,538 B
/// `max_ethernet_size_`, 1,460 B payloads).
pub const DATA_HEADER_BYTES: u32 = 78;
/// A credit request's and a credit stop's bytes (ns-2 `min_ethernet_size_` 84: "size of
/// control packet such as credit").
pub const REQUEST_BYTES: u32 = 84;
/// An ACK's and Aeolus's probe's bytes: the minimum Ethernet frame (the seed: "of minimal
/// Ethernet packet size, e.g., 64 bytes"; ns-2 ExpressPass has no ACK, see `xpass_ends`).
pub const ACK_BYTES: u32 = 64;
/// How much `w` grows after a clean period, and the packet count below which a request's
/// initial rate shrinks (both fixed in ns-2 `xpass.cc`: `w_ + 0.05`, `sendbuffer_ >= 40`).
pub const W_STEP: f64 = 0.05;
pub const FULL_START_PACKETS: u32 = 40;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpassParams {
    /// Credit bytes on the wire (ns-2 `min_credit_size_` = `max_credit_size_` = 84 in
    /// `ns-default.tcl`; the large-scale script varies them 76..92, average 84).
    pub credit_bytes: Size,
    /// The largest data frame a credit pays for (ns-2 `max_ethernet_size_` 1,538): the maximum
    /// credit rate is `link x credit_bytes / (credit_bytes + max_data)`, and every data packet
    /// (payload + 78 B) must fit in it.
    pub max_data: Size,
    /// Each credit gap is drawn uniformly within this fraction either side of the nominal
    /// (ns-2 `min_jitter_` -0.1, `max_jitter_` 0.1).
    pub jitter: f64,
    /// The aggressiveness factor's start (ns-2 `w_init_`: 0.5 in `ns-default.tcl`, 0.0625 in
    /// the large-scale script, whose value is the default here).
    pub w_init: f64,
    /// Its ceiling and floor (ns-2 `credit_feedback_control`: `min(w_ + 0.05, 0.5)`;
    /// `min_w_` 0.01).
    pub w_max: f64,
    pub w_min: f64,
    /// The target loss is `(1 - rate / max_rate) x target_loss_factor` (ns-2
    /// `target_loss_scaling_` 0.125).
    pub target_loss_factor: f64,
    /// The credit rate a flow starts at, as a share of the maximum (ns-2 `alpha_` 0.5, in
    /// `ns-default.tcl` and the large-scale script).
    pub initial_rate: f64,
    /// The egress queue credits take (their priority): the switches' shaped queue, `[switch]
    /// shaped.queue` (ns-2 has a separate credit queue per port; retx's 2 is the first queue
    /// after control and the default data priority 1).
    pub credit_priority: u8,
    /// The host NIC's own credit queue, in credits: credits the pacer makes due beyond it are
    /// dropped (ns-2 puts an `XPassDropTail` on every link, hosts' too; the large-scale script's
    /// `creditBuffer` is 84 x 8 B). retx's `[switch] shaped` queue exists on switch ports
    /// only, so the pacer models its host's.
    pub credit_queue: u32,
    /// That queue's token bucket, in credits: it sends at most the maximum credit rate, with
    /// this burst (the large-scale script's `maxCreditBurst` 84 x 2 B).
    pub credit_burst: u32,
    /// The credit request timer: a sender that has had no credit this long after its request
    /// sends the request again (neither a timeout counted nor a packet resent). ns-2's
    /// `retransmit_timeout_` as its sender uses it (`xpass.cc` `advance_bytes` arms
    /// `sender_retransmit_timer_` with it; `handle_sender_retransmit` in
    /// `XPASS_RECV_CREDIT_REQUEST_SENT` re-sends the request and re-arms it; the first credit
    /// cancels it, `recv_credit`): 100 ms in `ns-default.tcl`, 100 us in the large-scale
    /// script, which is the default here.
    pub request_timeout: Dur,
    /// The data-loss timeout: when the oldest outstanding packet has waited this long (snd_una
    /// has not moved), it, every packet out this long and the holes below the highest packet
    /// SACKed are resent, and a timeout is counted (`xpass_ends`). ns-2 has no such timer: its
    /// receiver NACKs the first gap when a later packet arrives (`process_ack`) and repeats the
    /// NACK every `retransmit_timeout_` while the gap lasts (`handle_receiver_retransmit`), so
    /// it resends on evidence of loss, where this timer resends on silence: it must outlast the
    /// longest a packet that is not lost can wait for its ACK and, under Aeolus, the wait of a
    /// loss already found for the credit that resends it. Default 1 ms: the large-scale script's
    /// switch ports hold 250 x 1,538 B of data, 308 us at 10 Gbps each; on its network
    /// (`examples/xpass-clos192.toml`, 20 ms of arrivals of each of the four workloads, with
    /// and without Aeolus) packets not lost waited up to 0.4 ms for their ACK, and a 100 us
    /// timer fired over 600 times on that example with Aeolus and a 6,000 B selective drop,
    /// 1 ms none. (The Aeolus paper gives no timeout for its simulators; retx's
    /// `recovery.stride.rto` and `recovery.tcp.min_rto` are 1 ms, `recovery.homa.rto` 10 ms.)
    pub rto: Dur,
    /// Data takes the reverse of its credits' path (default true). ExpressPass needs it: a
    /// credit that got through promises room for its data packet only on the links it crossed
    /// (the design assumes symmetric paths). ns-2 gets it from symmetric ECMP hashing, the large-scale
    /// script's `Classifier/MultiPath set symmetric_ true` (`classifier/classifier-mpath.cc`
    /// `MultiPathForwarder::classify` hashes the flow id, the node's tier and the two
    /// addresses in sorted order, so both directions pick the same index at each tier). retx's
    /// ECMP salts each switch, so instead each connection's data-direction entropy is chosen
    /// such that ECMP routes the data on the reverse of its credits' path
    /// ([`crate::transport::Template::symmetric_paths`]); only under `[routing] policy =
    /// "ecmp"`, per-flow entropy and minimal paths (elsewhere paths are not the hashes' alone).
    pub symmetric_paths: bool,
    /// Aeolus: send the first `unscheduled_bytes` unscheduled at line rate, coloured, with
    /// per-packet SACKs, a tail probe and retransmission on credits.
    pub aeolus: bool,
    /// The colour of unscheduled packets under Aeolus (2: red).
    pub aeolus_colour: u8,
    /// Bytes sent unscheduled under Aeolus; 0 (default): one BDP of the run's longest path
    /// (Aeolus: "up to one BDP" in the first RTT).
    pub unscheduled_bytes: Size,
}

impl Default for XpassParams {
    fn default() -> Self {
        XpassParams {
            credit_bytes: Size(84),
            max_data: Size(1_538),
            jitter: 0.1,
            w_init: 0.0625,
            w_max: 0.5,
            w_min: 0.01,
            target_loss_factor: 0.125,
            initial_rate: 0.5,
            credit_priority: 2,
            credit_queue: 8,
            credit_burst: 2,
            request_timeout: Dur(Time::from_us(100)),
            rto: Dur(Time::from_ms(1)),
            symmetric_paths: true,
            aeolus: false,
            aeolus_colour: 2,
            unscheduled_bytes: Size(0),
        }
    }
}

impl XpassParams {
    /// The maximum credit rate on a `link`, in bytes per second: a credit per data frame and
    /// the ACK that answers it. ns-2's ExpressPass acknowledges nothing (its receiver NACKs
    /// gaps), so its credit pays for the frame alone (84 / (84 + 1538)); retx's receiver
    /// answers every data packet with a 64 B ACK for its SACK recovery, which travels with the
    /// credits, so a credit pays for it too (84 / (84 + 1538 + 64)). Without it a link busy with
    /// credited data both ways carried 3.9 % more than its rate and dropped credited data (Data
    /// Mining: 9,120 scheduled drops, 1,391 timeouts; issue 43, `tests/it/xpass.rs`).
    pub fn max_rate(&self, link: Rate) -> f64 {
        link.bps() as f64 / 8.0 * self.credit_bytes.0 as f64 / (self.credit_bytes.0 + self.max_data.0 + ACK_BYTES as u64) as f64
    }
}

pub fn info(seg: &Segment) -> Option<XpassInfo> {
    match seg.ext {
        Ext::Xpass(i) => Some(i),
        _ => None,
    }
}
