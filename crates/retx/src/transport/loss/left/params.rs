//! LEFT's parameters (`[recovery.left]`): the slides' numbers, and where they are silent the
//! choice made and why.


use crate::sim::units::{Dur, Time};
use serde::{Deserialize, Serialize};

/// Which of the slides' designs runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftVariant {
    /// The scheduler, the FIFOs and the dual-state pool.
    Left,
    /// LEFT without the scheduler: every out-of-order packet goes through the FIFOs.
    LeftMinus,
    /// MELO's pool with the register cache, no FIFOs: every miss swaps at once.
    MeloPlus,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeftParams {
    pub variant: LeftVariant,
    /// Bits in the NIC's shared pool (slides: 2 Kb).
    pub pool_bits: u32,
    /// Bits per pool block. The slides do not say; MELO's 1 byte, which LEFT cites for its pool.
    pub block_bits: u32,
    /// Loop registers of the bitmap cache (slides: 3 in the simulation, 2 on the FPGA).
    pub registers: u32,
    /// Bits per loop register. The slides do not say; one BDP of their network, 200 Gbps x
    /// 32 us in 1 KB packets = 800 packets (their "~100 B" bitmap).
    pub register_bits: u32,
    /// One pool cycle: a block moved between pool and register, an Nxt_ptr followed, a block
    /// or register updated (slides: "switching a bitmap block takes 5 ns").
    pub cycle: Dur,
    /// Gather FIFOs (slides: 8).
    pub fifos: u32,
    /// Packets that close a FIFO. The slides do not say; 8 packets = one block of 8 bits.
    pub gather_packets: u32,
    /// Time after its first packet that closes a FIFO. The slides do not say; 2 us, about 48
    /// packet times at 200 Gbps, far below the base RTT of their dragonfly.
    pub gather_timeout: Dur,
    /// A packet whose distance above RCV.NXT is below this takes the fast path even when its
    /// connection is not cached. The slides do not say; 32 packets = 4 blocks, so an in-pool
    /// update walks at most 3 links: 5 cycles = 25 ns, within the 42 ns a 1 KB packet takes
    /// at 200 Gbps.
    pub disorder_threshold: u32,
    /// A connection whose disorder degree (packets; see [`crate::transport::loss::left::nic`])
    /// is below this takes the fast path for every packet, however far a single one lands
    /// (slides, "Packet Scheduler": "no disorder, low disorder connection packets do not need
    /// to be gathered"). The slides give no number; 0 (the default) turns the test off, so
    /// only the per-packet `disorder_threshold` decides, as before the degree was kept.
    pub connection_threshold: u32,
    /// RCV.NXT stuck this long with packets recorded above it: the holes are NACKed. The
    /// slides do not say; 100 us (IRN's RTO_low) exceeds the reordering of paths that differ
    /// by 32 us (their widest) with room to spare. Must exceed `gather_timeout`.
    pub hole_timeout: Dur,
    /// Holes a NACK carries (MELO's format: at most 3).
    pub nack_holes: u32,
    /// Sender timeout, resending from the front (a lost tail no NACK reports). IRN's
    /// RTO_high, 320 us; must exceed `hole_timeout`.
    pub rto: Dur,
    /// Packets in flight at most; 0 means one BDP of the topology's longest path.
    pub window: u32,
    /// Not a setting: the first this many operations on every NIC's pool are recorded
    /// ([`crate::hw::left_pool::DualPool::record_ops`]), for co-simulating the RTL; 0 (the
    /// default, and what a scenario file always gives) records nothing.
    #[serde(skip)]
    pub record_pool_ops: usize,
    /// Not a setting either: the first this many calls on every NIC's scheduler and gather
    /// FIFOs are recorded ([`crate::hw::left_gather_trace`], for co-simulating
    /// `rtl/left_gather.v`); 0, the default, records nothing.
    #[serde(skip)]
    pub record_gather_ops: usize,
}

impl Default for LeftParams {
    fn default() -> Self {
        LeftParams {
            variant: LeftVariant::Left,
            pool_bits: 2048,
            block_bits: 8,
            registers: 3,
            register_bits: 800,
            cycle: Dur(Time::from_ns(5)),
            fifos: 8,
            gather_packets: 8,
            gather_timeout: Dur(Time::from_us(2)),
            disorder_threshold: 32,
            connection_threshold: 0,
            hole_timeout: Dur(Time::from_us(100)),
            nack_holes: 3,
            rto: Dur(Time::from_us(320)),
            window: 0,
            record_pool_ops: 0,
            record_gather_ops: 0,
        }
    }
}
