//! Pcap export: an [`Observer`] that writes, for chosen hosts, every transport packet each one
//! sends (when it starts serialising on the host's link, lost on that link or not) and receives
//! (when it arrives off the link) as a RoCEv2 frame ([`crate::wire::frame`]) into a classic
//! libpcap file held in memory: link type Ethernet, nanosecond timestamps (magic 0xa1b23c4d;
//! the simulation's picoseconds are cut to nanoseconds), at most `max_packets` records. A
//! packet between two captured hosts is written twice, as each sees it. PFC frames and
//! background traffic are not written.
//!
//! Frames are emitted straight into the file buffer, so a packet costs no allocation beyond
//! that buffer's growth; per flow the writer keeps its initial PSN and length (for the opcodes
//! and the MSN), filled once as flows start.

use super::Observer;
use crate::net::packet::{Frame, Packet};
use crate::net::topology::{NodeKind, Topology};
use crate::sim::units::Time;
use crate::transport::common::psn::{Psn, PSN_MASK};
use crate::transport::common::segment::SegKind;
use crate::transport::FlowSpec;
use crate::wire::frame::{Context, Repr};

/// libpcap's nanosecond-resolution magic number.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The snapshot length the file header announces; every frame fits whole.
pub const SNAPLEN: u32 = 65_535;
pub const FILE_HEADER_LEN: usize = 24;
pub const RECORD_HEADER_LEN: usize = 16;

const NOT_A_HOST: u32 = u32::MAX;

/// What the writer knows of a flow: its first PSN and how many packets its message has.
#[derive(Clone, Copy, Debug)]
struct FlowView {
    initial: Psn,
    packets: u64,
    /// The RETH's DMA length: the flow's bytes, saturated at 2^32 - 1.
    bytes: u32,
}

/// The pcap writer.
#[derive(Clone, Debug)]
pub struct PcapWriter {
    /// Per node: its index among the hosts (`NOT_A_HOST` at switches).
    host_index: Vec<u32>,
    /// Per node: whether its traffic is written.
    captured: Vec<bool>,
    /// Per port: whether it is a captured host's own port (its sends are written there).
    captured_port: Vec<bool>,
    flows: Vec<FlowView>,
    max_packets: u64,
    packets: u64,
    /// Packets not written because `max_packets` were.
    skipped: u64,
    file: Vec<u8>,
}

impl PcapWriter {
    /// A writer for the host nodes `hosts` of `topo` (node ids), keeping at most
    /// `max_packets` records.
    pub fn new(topo: &Topology, hosts: &[usize], max_packets: u64) -> PcapWriter {
        let mut host_index = vec![NOT_A_HOST; topo.nodes.len()];
        for (i, h) in topo.hosts().enumerate() {
            host_index[h] = i as u32;
        }
        let mut captured = vec![false; topo.nodes.len()];
        for &h in hosts {
            debug_assert_eq!(topo.nodes[h].kind, NodeKind::Host);
            captured[h] = true;
        }
        let captured_port = (0..topo.port_count()).map(|p| topo.port_node(p).is_some_and(|n| captured[n])).collect();
        let mut file = Vec::with_capacity(FILE_HEADER_LEN);
        file.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        file.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        file.extend_from_slice(&4u16.to_le_bytes());
        file.extend_from_slice(&0i32.to_le_bytes()); // GMT offset
        file.extend_from_slice(&0u32.to_le_bytes()); // timestamp accuracy
        file.extend_from_slice(&SNAPLEN.to_le_bytes());
        file.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        PcapWriter { host_index, captured, captured_port, flows: Vec::new(), max_packets, packets: 0, skipped: 0, file }
    }

    /// The pcap file so far.
    pub fn bytes(&self) -> &[u8] {
        &self.file
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.file
    }

    /// Records written.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Packets not written because the file was full.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The AETH MSN of a response naming `psn` (the next PSN expected): 1 once it
    /// acknowledges the message's last packet.
    fn msn(flow: &FlowView, kind: SegKind, psn: Psn) -> u32 {
        let index = (psn.value().wrapping_sub(flow.initial.value()) & PSN_MASK) as u64;
        let acknowledges_all = matches!(kind, SegKind::Ack | SegKind::Nak | SegKind::Sack | SegKind::Rack | SegKind::MeloNack) && index >= flow.packets;
        acknowledges_all as u32
    }

    fn record(&mut self, now: Time, pkt: &Packet) {
        if pkt.frame != Frame::Transport {
            return;
        }
        if self.packets >= self.max_packets {
            self.skipped += 1;
            return;
        }
        let flow = self.flows.get(pkt.flow as usize).copied().unwrap_or(FlowView { initial: Psn::new(0), packets: u64::MAX, bytes: u32::MAX });
        let ctx = Context {
            src_host: self.host_index.get(pkt.src as usize).copied().unwrap_or(NOT_A_HOST),
            dst_host: self.host_index.get(pkt.dst as usize).copied().unwrap_or(NOT_A_HOST),
            initial_psn: flow.initial,
            msn: Self::msn(&flow, pkt.seg.kind, pkt.seg.psn),
            message_len: flow.bytes,
        };
        let repr = Repr::from_packet(pkt, &ctx);
        let len = repr.buffer_len();
        let ns = now.ps() / 1000;
        let start = self.file.len();
        self.file.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        self.file.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.file.extend_from_slice(&(len as u32).to_le_bytes());
        self.file.extend_from_slice(&(len as u32).to_le_bytes());
        let at = self.file.len();
        self.file.resize(at + len, 0);
        match repr.emit(&mut self.file[at..]) {
            Ok(_) => self.packets += 1,
            Err(_) => {
                // A payload too large for IPv4 (not a packet the simulation makes): not written.
                self.file.truncate(start);
                self.skipped += 1;
            }
        }
    }
}

impl Observer for PcapWriter {
    fn wire(&mut self, now: Time, port: usize, pkt: &Packet) {
        if self.captured_port.get(port).copied().unwrap_or(false) {
            self.record(now, pkt);
        }
    }

    fn receive(&mut self, now: Time, host: usize, pkt: &Packet) {
        if self.captured.get(host).copied().unwrap_or(false) {
            self.record(now, pkt);
        }
    }

    fn flow_start(&mut self, _now: Time, flow: u32, spec: &FlowSpec) {
        let f = flow as usize;
        if self.flows.len() <= f {
            self.flows.resize(f + 1, FlowView { initial: Psn::new(0), packets: u64::MAX, bytes: u32::MAX });
        }
        let bytes = u32::try_from(spec.size).unwrap_or(u32::MAX);
        self.flows[f] = FlowView { initial: Psn::new(spec.initial_psn), packets: spec.npkts(), bytes };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::units::Rate;

    #[test]
    fn the_file_header_is_libpcap_nanosecond_ethernet() {
        let topo = Topology::single_switch(2, Rate::gbps(100), Time::from_us(1));
        let w = PcapWriter::new(&topo, &[1], 10); // node 1 is h0 (node 0 is the switch)
        assert_eq!(w.bytes(), &[0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0]);
    }
}
