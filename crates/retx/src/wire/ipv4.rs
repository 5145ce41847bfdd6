//! IPv4 (RFC 791) with its header checksum (RFC 1071). Options are skipped on parse and never
//! emitted; fragments are [`Error::Unsupported`] (RoCEv2 sets Don't Fragment).

use super::{be, Error, Field, Result};

/// An IPv4 address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Address(pub [u8; 4]);

pub const HEADER_LEN: usize = 20;
pub const PROTOCOL_UDP: u8 = 17;

mod field {
    use super::Field;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// The ones' complement sum of 16-bit words (RFC 1071), not yet complemented.
fn sum16(data: &[u8]) -> u16 {
    let mut acc: u32 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [b] = words.remainder() {
        acc += (*b as u32) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// A view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// The fixed header fits; the header length is at least 20 and no more than the total
    /// length, which is within the buffer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let (hl, total) = (self.header_len() as usize, self.total_len() as usize);
        if hl < HEADER_LEN || total < hl {
            Err(Error::Malformed)
        } else if total > len {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }
    /// Header bytes (IHL x 4).
    pub fn header_len(&self) -> u8 {
        (self.b()[field::VER_IHL] & 0x0f) * 4
    }
    pub fn dscp(&self) -> u8 {
        self.b()[field::DSCP_ECN] >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.b()[field::DSCP_ECN] & 0x03
    }
    pub fn total_len(&self) -> u16 {
        be::u16(&self.b()[field::LENGTH])
    }
    pub fn ident(&self) -> u16 {
        be::u16(&self.b()[field::IDENT])
    }
    pub fn dont_frag(&self) -> bool {
        self.b()[field::FLG_OFF.start] & 0x40 != 0
    }
    pub fn more_frags(&self) -> bool {
        self.b()[field::FLG_OFF.start] & 0x20 != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (be::u16(&self.b()[field::FLG_OFF]) & 0x1fff) * 8
    }
    pub fn hop_limit(&self) -> u8 {
        self.b()[field::TTL]
    }
    pub fn next_header(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        be::u16(&self.b()[field::CHECKSUM])
    }
    pub fn src_addr(&self) -> Address {
        let mut a = [0; 4];
        a.copy_from_slice(&self.b()[field::SRC_ADDR]);
        Address(a)
    }
    pub fn dst_addr(&self) -> Address {
        let mut a = [0; 4];
        a.copy_from_slice(&self.b()[field::DST_ADDR]);
        Address(a)
    }
    /// Whether the header checksum is right (needs [`Packet::check_len`]).
    pub fn verify_checksum(&self) -> bool {
        sum16(&self.b()[..self.header_len() as usize]) == 0xffff
    }
    /// The payload as the total length bounds it (needs [`Packet::check_len`]).
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len() as usize..self.total_len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    pub fn set_version_and_header_len(&mut self, version: u8, header_len: u8) {
        self.m()[field::VER_IHL] = (version << 4) | ((header_len / 4) & 0x0f);
    }
    pub fn set_dscp_ecn(&mut self, dscp: u8, ecn: u8) {
        self.m()[field::DSCP_ECN] = (dscp << 2) | (ecn & 0x03);
    }
    pub fn set_total_len(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::LENGTH], v);
    }
    pub fn set_ident(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::IDENT], v);
    }
    /// Flags (Don't Fragment only) and a zero fragment offset.
    pub fn set_dont_frag(&mut self, df: bool) {
        be::set_u16(&mut self.m()[field::FLG_OFF], if df { 0x4000 } else { 0 });
    }
    pub fn set_hop_limit(&mut self, v: u8) {
        self.m()[field::TTL] = v;
    }
    pub fn set_next_header(&mut self, v: u8) {
        self.m()[field::PROTOCOL] = v;
    }
    pub fn set_checksum(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::CHECKSUM], v);
    }
    pub fn set_src_addr(&mut self, a: Address) {
        self.m()[field::SRC_ADDR].copy_from_slice(&a.0);
    }
    pub fn set_dst_addr(&mut self, a: Address) {
        self.m()[field::DST_ADDR].copy_from_slice(&a.0);
    }
    /// Computes and writes the header checksum over the header as its length field says.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = self.header_len() as usize;
        let sum = !sum16(&self.buffer.as_ref()[..hl]);
        self.set_checksum(sum);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hl, total) = (self.header_len() as usize, self.total_len() as usize);
        &mut self.m()[hl..total]
    }
}

/// An IPv4 header without options, not fragmented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    pub next_header: u8,
    pub payload_len: usize,
    pub hop_limit: u8,
    /// Differentiated services code point (6 bits) and ECN codepoint (2 bits).
    pub dscp: u8,
    pub ecn: u8,
    pub ident: u16,
    pub dont_frag: bool,
}

impl Repr {
    /// Checks version, lengths and the header checksum; a fragment is unsupported.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != 4 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum() {
            return Err(Error::Checksum);
        }
        if packet.more_frags() || packet.frag_offset() != 0 {
            return Err(Error::Unsupported);
        }
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: packet.total_len() as usize - packet.header_len() as usize,
            hop_limit: packet.hop_limit(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
        })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the header with its checksum. `dscp` < 64, `ecn` < 4 and `payload_len` at most
    /// 65515 (the caller's; [`super::frame`] keeps them).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_version_and_header_len(4, HEADER_LEN as u8);
        packet.set_dscp_ecn(self.dscp, self.ecn);
        packet.set_total_len((HEADER_LEN + self.payload_len) as u16);
        packet.set_ident(self.ident);
        packet.set_dont_frag(self.dont_frag);
        packet.set_hop_limit(self.hop_limit);
        packet.set_next_header(self.next_header);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The IPv4 header of a CNP captured on a ConnectX-4 Lx (scapy's test/contrib/roce.uts):
    // DSCP 48, ECN 2, total length 60, id 0x718c, DF, TTL 64, UDP, checksum 0x9161,
    // 10.0.17.1 -> 10.0.18.1.
    const CNP_IP: [u8; 20] = [
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
    ];

    #[test]
    fn reads_a_captured_header_and_checks_its_checksum() {
        let mut buf = [0u8; 60];
        buf[..20].copy_from_slice(&CNP_IP);
        let r = Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            Repr {
                src_addr: Address([10, 0, 17, 1]),
                dst_addr: Address([10, 0, 18, 1]),
                next_header: PROTOCOL_UDP,
                payload_len: 40,
                hop_limit: 64,
                dscp: 48,
                ecn: 2,
                ident: 0x718c,
                dont_frag: true,
            }
        );
        let mut out = [0u8; 60];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out[..20], CNP_IP);
        buf[10] ^= 1;
        assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap_err(), Error::Checksum);
    }

    #[test]
    fn bad_lengths_are_errors() {
        assert_eq!(Packet::new_checked(&CNP_IP[..19]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&CNP_IP[..]).unwrap_err(), Error::Truncated); // says 60
        let mut b = CNP_IP;
        b[0] = 0x44; // IHL 16 B
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Malformed);
    }
}
