//! In-band network telemetry as a transport reads it (HPCC, Li et al., SIGCOMM 2019): every
//! switch on the path appends one hop record to a data packet as it leaves the egress queue,
//! the receiver echoes the records in its ACK, and the sender's congestion control reads them.

use crate::sim::units::{Rate, Time};

/// The most hop records a packet carries (HPCC ns-3 `IntHeader::maxHop`).
pub const MAX_HOPS: usize = 5;

/// Wire bytes of the INT header: `MAX_HOPS` records of 8 B and a 2 B hop count (HPCC ns-3
/// `IntHeader::GetStaticSize` in NORMAL mode; the HPCC paper's 42 B for 5 hops).
pub const INT_HEADER_BYTES: u32 = 42;

/// One switch's record: what HPCC's INT header carries per hop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes left in the egress queue when the packet departed.
    pub qlen: u64,
    /// Bytes the egress port has sent, cumulatively (rates come from differences).
    pub tx_bytes: u64,
    /// When the packet departed.
    pub ts: Time,
    /// The egress link's rate.
    pub rate: Rate,
}

/// The records of one packet, first hop first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHops {
    hops: [IntHop; MAX_HOPS],
    n: u8,
}

impl IntHops {
    /// Appends a hop; a packet past `MAX_HOPS` switches keeps the first ones (as HPCC does).
    pub fn push(&mut self, hop: IntHop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
        }
    }

    pub fn as_slice(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn clear(&mut self) {
        self.n = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_max_hops_records_in_order() {
        let mut h = IntHops::default();
        for i in 0..7 {
            h.push(IntHop { qlen: i, ..Default::default() });
        }
        assert_eq!(h.as_slice().iter().map(|x| x.qlen).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        h.clear();
        assert!(h.is_empty());
    }
}
