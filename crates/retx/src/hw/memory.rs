//! On-chip memory of each loss recovery scheme: what a connection costs, what is shared, and
//! the total for a number of connections (MELO §3.2.3–3.2.4).
//!
//! Field sizes follow the MELO paper where it gives them (PSN 3 B, hole 4 B = 2 B start +
//! 2 B length, block pointers 1 B for a 128-block pool); bitmaps are one bit per packet of the
//! window they must cover.

use crate::sim::units::{Rate, Time};

/// Per-connection state in a Mellanox CX-3 Pro QPC (`mlx4_qp_context`), the paper's yardstick.
pub const QPC_BYTES: f64 = 248.0;

/// The network a NIC is sized for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizing {
    pub bandwidth: Rate,
    pub rtt: Time,
    /// Payload bytes per packet.
    pub mtu: u32,
    pub connections: u32,
    /// MELO: bits per pool and per block.
    pub pool_bits: u32,
    pub block_bits: u32,
}

/// The largest bandwidth-delay product [`Sizing::check`] accepts: 2^53 bytes (8 PiB), the
/// largest count every figure derived from it (bits, slots, totals in f64) holds exactly.
pub const MAX_BDP_BYTES: u64 = 1 << 53;

impl Sizing {
    /// Bytes in one bandwidth-delay product, computed in u128; `None` when it does not fit in
    /// a u64 (it was truncated before issue 41).
    pub fn checked_bdp_bytes(&self) -> Option<u64> {
        u64::try_from(self.bandwidth.0 as u128 * self.rtt.0 as u128 / 8 / 1_000_000_000_000).ok()
    }

    /// Bytes in one bandwidth-delay product, saturating at u64::MAX (a run's sizing is within
    /// the scenario's limits, far below; the `memory` command refuses through [`Sizing::check`]).
    pub fn bdp_bytes(&self) -> u64 {
        self.checked_bdp_bytes().unwrap_or(u64::MAX)
    }

    /// Whether every figure of the table can be computed exactly: the first rule broken, as
    /// (argument, message), else `Ok`. One rule per refusal, naming the argument.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.bandwidth.0 == 0 {
            return Err(("bandwidth", "must be above 0bps".into()));
        }
        if self.rtt.0 == 0 {
            return Err(("rtt", "must be above 0ps".into()));
        }
        if self.mtu == 0 {
            return Err(("mtu", "must be at least 1".into()));
        }
        if self.connections == 0 {
            return Err(("connections", "must be at least 1".into()));
        }
        if !(1..=64).contains(&self.block_bits) {
            return Err(("block_bits", format!("{} must be from 1 to 64", self.block_bits)));
        }
        if self.pool_bits < self.block_bits {
            return Err(("pool_bits", format!("{} must be at least block_bits ({})", self.pool_bits, self.block_bits)));
        }
        match self.checked_bdp_bytes() {
            Some(b) if b <= MAX_BDP_BYTES => Ok(()),
            _ => Err((
                "rtt",
                format!(
                    "bandwidth x rtt is {} B, above the {MAX_BDP_BYTES} B (8 PiB) the table computes exactly",
                    self.bandwidth.0 as u128 * self.rtt.0 as u128 / 8 / 1_000_000_000_000
                ),
            )),
        }
    }

    /// Packets in one bandwidth-delay product.
    pub fn bdp_packets(&self) -> u64 {
        self.bdp_bytes().div_ceil(self.mtu as u64)
    }
}

/// The memory table of a run: what the NIC was sized for, every scheme's row, and the row of
/// the scheme the run used.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryReport {
    pub sizing: Sizing,
    pub rows: Vec<Footprint>,
    pub onchip: Footprint,
}

impl MemoryReport {
    /// The table for `sizing`, with `scheme`'s row picked out.
    pub fn new(sizing: Sizing, scheme: &'static str) -> MemoryReport {
        let rows = footprints(&sizing);
        let onchip = match rows.iter().find(|r| r.scheme == scheme) {
            Some(r) => r.clone(),
            None => host_stack(scheme, sizing.connections),
        };
        MemoryReport { sizing, rows, onchip }
    }
}

/// The run's row for a scheme that keeps no loss-recovery state on the NIC (a TCP stack: its
/// reorder queue and sequence variables live in host memory). Not one of the table's rows,
/// which compare the on-chip schemes.
fn host_stack(scheme: &'static str, n: u32) -> Footprint {
    row(scheme, 0.0, 0.0, n, "a host stack: reorder queue and sequence state in host memory, nothing on chip".into())
}

/// One row of the memory table.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    pub scheme: &'static str,
    /// Loss-recovery bytes each connection adds to its context.
    pub per_connection: f64,
    /// Bytes shared by all connections of a NIC (sender + receiver sides).
    pub shared: f64,
    /// Off-chip (DRAM) bytes each connection needs at line rate, where the scheme keeps its
    /// send buffer on the device (STRIDE); 0 for NICs that read data from host memory.
    pub off_chip_per_connection: f64,
    /// per_connection + shared / connections.
    pub average: f64,
    /// average / 248 B QPC, in percent.
    pub pct_of_qpc: f64,
    pub total: f64,
    pub breakdown: String,
}

fn row(scheme: &'static str, per: f64, shared: f64, n: u32, breakdown: String) -> Footprint {
    let avg = per + shared / n.max(1) as f64;
    Footprint { scheme, per_connection: per, shared, off_chip_per_connection: 0.0, average: avg, pct_of_qpc: avg / QPC_BYTES * 100.0, total: per * n as f64 + shared, breakdown }
}

/// Bits needed to address `n` things.
fn addr_bits(n: u64) -> u32 {
    64 - (n.max(2) - 1).leading_zeros()
}

pub fn footprints(z: &Sizing) -> Vec<Footprint> {
    let n = z.connections;
    let bdp = z.bdp_packets();
    let blocks = (z.pool_bits / z.block_bits).max(1) as u64;
    let ptr_bits = addr_bits(blocks); // 7 bits for 128 blocks; the paper stores 1 B
    let ptr_bytes = ptr_bits.div_ceil(8) as f64;
    // MELO, per connection: three holes of 2 B start + 2 B length, RCV.NXT and RCV.HIGH (3 B
    // PSNs), start_ptr and end_ptr. Shared, on each side: the pool, one next_ptr per block and
    // the available array (one entry per block), so 3 x pool_bits when blocks are 1 B and
    // pointers 8 bits, as in §3.2.3; both sides: 6 Kb.
    let melo_per = 3.0 * 4.0 + 2.0 * 3.0 + 2.0 * ptr_bytes;
    let side_bits = z.pool_bits as f64 + 2.0 * blocks as f64 * (ptr_bytes * 8.0);
    let melo_shared = 2.0 * side_bits / 8.0;
    // A naive per-connection bitmap of one BDP at the receiver and one at the sender (IRN).
    let bitmap_bytes = bdp as f64 / 8.0;
    vec![
        row("go-back-N", 0.0, 0.0, n, "ePSN and snd_una/snd_nxt exist in every QPC: no extra state".into()),
        row(
            "irn",
            2.0 * bitmap_bytes + 3.0,
            0.0,
            n,
            format!("receiver + sender bitmaps of one BDP ({bdp} packets = {:.0} B each) + 3 B recovery PSN", bitmap_bytes),
        ),
        row(
            "melo",
            melo_per,
            melo_shared,
            n,
            format!(
                "12 B holes + 6 B RCV.NXT/RCV.HIGH + {:.0} B start/end_ptr; pools {} b + next_ptr + available per side x 2 = {:.0} B",
                2.0 * ptr_bytes,
                z.pool_bits,
                melo_shared
            ),
        ),
        row(
            "gbone",
            bitmap_bytes + 6.0,
            0.0,
            n,
            format!("receiver bitmap of max_ooo_psn = one BDP ({bdp} bits) + m_lastRACK/m_crtRACK (3 B each); retransQueue not counted (sender DRAM)"),
        ),
        left_row(z),
        stride_row(z),
    ]
}

/// LEFT (APNet'24; the slides: "27KB memory overhead, only 1.7% of the baseline (IRN)", "an
/// average of only 7B additional storage overhead per connection"). The slides give no
/// breakdown; retx's, for the structures `hw::left_pool` and `transport::left_nic` model:
/// per connection, start_ptr and end_ptr into the pool (1 B each for up to 256 blocks),
/// RCV.HIGH (3 B PSN) and the hole timer's start (2 B, in microseconds) = 7 B; shared, on the
/// receive side only (the sender keeps a resend queue, not a bitmap), the pool, one Nxt_ptr per
/// block, the available-block bitmap, 3 loop registers of one BDP each with their owner (2 B)
/// and base (3 B PSN), and 8 gather FIFOs of 8 PSNs (3 B) with their connection (2 B), opening
/// time (2 B) and count (1 B).
fn left_row(z: &Sizing) -> Footprint {
    const REGISTERS: f64 = 3.0;
    const FIFOS: f64 = 8.0;
    const FIFO_PACKETS: f64 = 8.0;
    let blocks = (z.pool_bits / z.block_bits).max(1) as u64;
    let ptr_bytes = addr_bits(blocks).div_ceil(8) as f64;
    let per = 2.0 * ptr_bytes + 3.0 + 2.0;
    let pool = z.pool_bits as f64 / 8.0 + blocks as f64 * ptr_bytes + blocks as f64 / 8.0;
    let registers = REGISTERS * (z.bdp_packets() as f64 / 8.0 + 2.0 + 3.0);
    let fifos = FIFOS * (FIFO_PACKETS * 3.0 + 2.0 + 2.0 + 1.0);
    row(
        "left",
        per,
        pool + registers + fifos,
        z.connections,
        format!(
            "{:.0} B start/end_ptr + 3 B RCV.HIGH + 2 B hole timer; pool {} b + Nxt_ptr + available bitmap = {pool:.0} B, 3 loop registers of one BDP ({} bits) = {registers:.0} B, 8 gather FIFOs of 8 = {fifos:.0} B",
            2.0 * ptr_bytes,
            z.pool_bits,
            z.bdp_packets()
        ),
    )
}

/// STRIDE (§IV "Sender memory"): on chip, counters of packets per state instead of per-packet
/// state (ready, in flight, acknowledged, to resend: 4 x 4 B), Algorithm 1's STT_old, ΔSTT and
/// STT_min (3 x 4 B, ns) and the rate (4 B); off chip, one 64 KB DRAM slot per data segment in
/// flight, a BDP's worth of segments at line rate (the paper's default segment; a run reports
/// the slots it actually held as `stride_dram_peak_slots`).
fn stride_row(z: &Sizing) -> Footprint {
    const SLOT: u64 = 64 * 1024;
    let slots = z.bdp_bytes().div_ceil(SLOT).max(1);
    // At most 2^64 / 2^16 slots: their bytes in u128, then f64 (exact below 2^53).
    let mut r = row(
        "stride",
        16.0 + 12.0 + 4.0,
        0.0,
        z.connections,
        format!("4 packet-state counters (16 B) + STT_old/dSTT/STT_min (12 B) + rate (4 B); DRAM: {slots} x 64 KB slots per connection (one BDP in segments)"),
    );
    r.off_chip_per_connection = (slots as u128 * SLOT as u128) as f64;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> Sizing {
        // MELO §3.2.3-3.2.4: 100 Gbps, 200 us, 1 KB MTU, 300 connections, 1 Kb pools of 1 B blocks.
        Sizing { bandwidth: Rate::gbps(100), rtt: Time::from_us(200), mtu: 1024, connections: 300, pool_bits: 1024, block_bits: 8 }
    }

    #[test]
    fn melo_costs_about_23_bytes_per_connection_at_300_connections() {
        let rows = footprints(&paper());
        let melo = rows.iter().find(|r| r.scheme == "melo").unwrap();
        assert_eq!(melo.per_connection, 20.0); // 12 + 6 + 2
        assert_eq!(melo.shared, 768.0); // 6 Kb
        assert!((melo.average - 22.56).abs() < 1e-9); // the paper rounds to 23 B
        assert!((melo.pct_of_qpc - 9.1).abs() < 0.05, "{}", melo.pct_of_qpc);
    }

    #[test]
    fn a_naive_bitmap_is_about_2_5_kb_per_connection() {
        let z = paper();
        assert_eq!(z.bdp_packets(), 2442); // 100 Gbps x 200 us / 1024 B
        let irn = footprints(&z).into_iter().find(|r| r.scheme == "irn").unwrap();
        // One side's bitmap is 2442 bits ~ 2.5 Kb (the paper's footnote), i.e. 1.23x a QPC.
        assert!(((irn.per_connection - 3.0) / 2.0 - 305.25).abs() < 1e-9);
    }

    #[test]
    fn left_adds_7_bytes_per_connection_and_about_a_kilobyte_shared() {
        // The slides' network: 200 Gbps x 32 us in 1 KB packets, a 2 Kb pool of 1-byte blocks.
        let z = Sizing { bandwidth: Rate::gbps(200), rtt: Time::from_us(32), mtu: 1000, connections: 3_000, pool_bits: 2048, block_bits: 8 };
        assert_eq!(z.bdp_packets(), 800);
        let left = footprints(&z).into_iter().find(|r| r.scheme == "left").unwrap();
        assert_eq!(left.per_connection, 7.0);
        // Pool 256 + Nxt_ptr 256 + available 32; registers 3 x (100 + 5); FIFOs 8 x 29.
        assert_eq!(left.shared, 544.0 + 315.0 + 232.0);
        assert_eq!(left.total, 7.0 * 3_000.0 + 1_091.0);
    }

    #[test]
    fn a_bdp_beyond_u64_is_refused_not_truncated() {
        // 1.8e19 bps x 1.8e19 ps / 8e12 is about 4e25 B: it wrapped to a small number through
        // `as u64` before.
        let z = Sizing { bandwidth: Rate(u64::MAX), rtt: Time(u64::MAX), ..paper() };
        assert_eq!(z.checked_bdp_bytes(), None);
        assert_eq!(z.bdp_bytes(), u64::MAX);
        let (field, message) = z.check().unwrap_err();
        assert_eq!(field, "rtt");
        assert!(message.contains("above the 9007199254740992 B"), "{message}");
        // Each figure still computes without overflow (stride's slots x 64 KiB in u128).
        let stride = footprints(&z).into_iter().find(|r| r.scheme == "stride").unwrap();
        assert!(stride.off_chip_per_connection >= 1.8e19);
        // One rule per refusal, naming its argument.
        assert_eq!(Sizing { block_bits: 65, ..paper() }.check().unwrap_err().0, "block_bits");
        assert_eq!(Sizing { pool_bits: 4, ..paper() }.check().unwrap_err().0, "pool_bits");
        assert_eq!(Sizing { connections: 0, ..paper() }.check().unwrap_err().0, "connections");
        assert_eq!(Sizing { mtu: 0, ..paper() }.check().unwrap_err().0, "mtu");
        assert!(paper().check().is_ok());
    }

    #[test]
    fn stride_keeps_32_bytes_on_chip_and_a_bdp_of_64kb_slots_in_dram() {
        // 100 Gbps x 200 us = 2.5 MB = 38.15 slots of 64 KiB: 39 slots.
        let stride = footprints(&paper()).into_iter().find(|r| r.scheme == "stride").unwrap();
        assert_eq!(stride.per_connection, 32.0);
        assert_eq!(stride.off_chip_per_connection, 39.0 * 65536.0);
        // STRIDE's 10 Gbps testbed, 20 us: 25 KB, one slot.
        let z = Sizing { bandwidth: Rate::gbps(10), rtt: Time::from_us(20), ..paper() };
        let stride = footprints(&z).into_iter().find(|r| r.scheme == "stride").unwrap();
        assert_eq!(stride.off_chip_per_connection, 65536.0);
        assert!(footprints(&z).iter().filter(|r| r.scheme != "stride").all(|r| r.off_chip_per_connection == 0.0));
    }
}
