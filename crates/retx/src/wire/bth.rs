//! The InfiniBand Base Transport Header (IBTA Vol. 1, 9.2), 12 bytes, first in a RoCEv2
//! UDP payload:
//!
//! ```text
//! byte 0      OpCode
//! byte 1      SE(7) MigReq(6) PadCnt(5:4) TVer(3:0)
//! bytes 2-3   P_Key
//! byte 4      FECN(7) BECN(6) reserved(5:0)    (RoCEv2 carries congestion bits here)
//! bytes 5-7   DestQP
//! byte 8      AckReq(7) reserved(6:0)
//! bytes 9-11  PSN (24 bits)
//! ```

use super::{be, Error, Field, Result};
use crate::transport::common::psn::Psn;

pub const HEADER_LEN: usize = 12;
/// The default partition key (full membership).
pub const DEFAULT_PKEY: u16 = 0xffff;

/// OpCodes this crate emits (IBTA Vol. 1, Table 38; RoCEv2 Annex A17 for the CNP).
pub mod opcode {
    pub const RC_RDMA_WRITE_FIRST: u8 = 0x06;
    pub const RC_RDMA_WRITE_MIDDLE: u8 = 0x07;
    pub const RC_RDMA_WRITE_LAST: u8 = 0x08;
    pub const RC_RDMA_WRITE_ONLY: u8 = 0x0a;
    pub const RC_ACKNOWLEDGE: u8 = 0x11;
    /// RoCEv2 Congestion Notification Packet.
    pub const CNP: u8 = 0x81;
    /// The first manufacturer-specific opcode (0xC0..=0xFF): [`super::super::frame`] uses
    /// four of them for connection set-up and tear-down.
    pub const VENDOR_BASE: u8 = 0xc0;
}

mod field {
    use super::Field;
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const PKEY: Field = 2..4;
    pub const CONGESTION: usize = 4;
    pub const DEST_QP: Field = 5..8;
    pub const ACK_REQ: usize = 8;
    pub const PSN: Field = 9..12;
}

/// A view of a BTH.
#[derive(Debug, Clone)]
pub struct Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Header<T> {
    pub const fn new_unchecked(buffer: T) -> Header<T> {
        Header { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Header<T>> {
        let h = Self::new_unchecked(buffer);
        h.check_len()?;
        Ok(h)
    }

    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN { Err(Error::Truncated) } else { Ok(()) }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    pub fn solicited(&self) -> bool {
        self.b()[field::FLAGS] & 0x80 != 0
    }
    pub fn migreq(&self) -> bool {
        self.b()[field::FLAGS] & 0x40 != 0
    }
    pub fn pad(&self) -> u8 {
        (self.b()[field::FLAGS] >> 4) & 0x03
    }
    pub fn tver(&self) -> u8 {
        self.b()[field::FLAGS] & 0x0f
    }
    pub fn pkey(&self) -> u16 {
        be::u16(&self.b()[field::PKEY])
    }
    pub fn fecn(&self) -> bool {
        self.b()[field::CONGESTION] & 0x80 != 0
    }
    pub fn becn(&self) -> bool {
        self.b()[field::CONGESTION] & 0x40 != 0
    }
    pub fn dest_qp(&self) -> u32 {
        be::u24(&self.b()[field::DEST_QP])
    }
    pub fn ack_req(&self) -> bool {
        self.b()[field::ACK_REQ] & 0x80 != 0
    }
    pub fn psn(&self) -> Psn {
        Psn::new(be::u24(&self.b()[field::PSN]))
    }
    /// What follows the header.
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    fn set_bit(&mut self, byte: usize, mask: u8, on: bool) {
        let b = &mut self.m()[byte];
        *b = if on { *b | mask } else { *b & !mask };
    }
    pub fn set_opcode(&mut self, v: u8) {
        self.m()[field::OPCODE] = v;
    }
    pub fn set_solicited(&mut self, v: bool) {
        self.set_bit(field::FLAGS, 0x80, v);
    }
    pub fn set_migreq(&mut self, v: bool) {
        self.set_bit(field::FLAGS, 0x40, v);
    }
    pub fn set_pad(&mut self, v: u8) {
        let b = &mut self.m()[field::FLAGS];
        *b = (*b & !0x30) | ((v & 0x03) << 4);
    }
    pub fn set_tver(&mut self, v: u8) {
        let b = &mut self.m()[field::FLAGS];
        *b = (*b & !0x0f) | (v & 0x0f);
    }
    pub fn set_pkey(&mut self, v: u16) {
        be::set_u16(&mut self.m()[field::PKEY], v);
    }
    /// FECN and BECN; the reserved bits of the byte are cleared.
    pub fn set_congestion(&mut self, fecn: bool, becn: bool) {
        self.m()[field::CONGESTION] = (fecn as u8) << 7 | (becn as u8) << 6;
    }
    /// The low 24 bits of `v`.
    pub fn set_dest_qp(&mut self, v: u32) {
        be::set_u24(&mut self.m()[field::DEST_QP], v);
    }
    /// AckReq; the reserved bits of the byte are cleared.
    pub fn set_ack_req(&mut self, v: bool) {
        self.m()[field::ACK_REQ] = (v as u8) << 7;
    }
    pub fn set_psn(&mut self, v: Psn) {
        be::set_u24(&mut self.m()[field::PSN], v.value());
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.m()[HEADER_LEN..]
    }
}

/// A BTH of transport header version 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub opcode: u8,
    pub solicited: bool,
    pub migreq: bool,
    /// Pad bytes (0..=3) after the payload that make it a multiple of 4.
    pub pad: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// Destination queue pair (24 bits).
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: Psn,
}

impl Repr {
    /// Any version other than 0 is unsupported (receivers drop it, IBTA 9.2.6); reserved
    /// bits are ignored.
    pub fn parse<T: AsRef<[u8]>>(header: &Header<T>) -> Result<Repr> {
        header.check_len()?;
        if header.tver() != 0 {
            return Err(Error::Unsupported);
        }
        Ok(Repr {
            opcode: header.opcode(),
            solicited: header.solicited(),
            migreq: header.migreq(),
            pad: header.pad(),
            pkey: header.pkey(),
            fecn: header.fecn(),
            becn: header.becn(),
            dest_qp: header.dest_qp(),
            ack_req: header.ack_req(),
            psn: header.psn(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// `pad` < 4 and `dest_qp` < 2^24 (higher bits are cut off).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut Header<T>) {
        header.set_opcode(self.opcode);
        header.m()[field::FLAGS] = 0;
        header.set_solicited(self.solicited);
        header.set_migreq(self.migreq);
        header.set_pad(self.pad);
        header.set_tver(0);
        header.set_pkey(self.pkey);
        header.set_congestion(self.fecn, self.becn);
        header.set_dest_qp(self.dest_qp);
        header.set_ack_req(self.ack_req);
        header.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The BTH of a CNP captured on a ConnectX-4 Lx (scapy's test/contrib/roce.uts): opcode
    // 0x81, P_Key 0xffff, BECN, DestQP 0x000118, PSN 0.
    const CNP_BTH: [u8; 12] = [0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00];

    #[test]
    fn reads_a_captured_header() {
        let r = Repr::parse(&Header::new_checked(&CNP_BTH[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            Repr { opcode: opcode::CNP, solicited: false, migreq: false, pad: 0, pkey: 0xffff, fecn: false, becn: true, dest_qp: 0x118, ack_req: false, psn: Psn::new(0) }
        );
        let mut out = [0xffu8; 12];
        r.emit(&mut Header::new_unchecked(&mut out[..]));
        assert_eq!(out, CNP_BTH);
    }

    #[test]
    fn every_field_lands_in_its_bits() {
        let r = Repr { opcode: 0x0a, solicited: true, migreq: true, pad: 2, pkey: 0x8001, fecn: true, becn: false, dest_qp: 0xabcdef, ack_req: true, psn: Psn::new(0xcf1810) };
        let mut out = [0u8; 12];
        r.emit(&mut Header::new_unchecked(&mut out[..]));
        assert_eq!(out, [0x0a, 0xe0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x80, 0xcf, 0x18, 0x10]);
        assert_eq!(Repr::parse(&Header::new_checked(&out[..]).unwrap()).unwrap(), r);
    }

    #[test]
    fn short_or_other_version_is_an_error() {
        assert_eq!(Header::new_checked(&CNP_BTH[..11]).unwrap_err(), Error::Truncated);
        let mut b = CNP_BTH;
        b[1] = 0x01;
        assert_eq!(Repr::parse(&Header::new_checked(&b[..]).unwrap()).unwrap_err(), Error::Unsupported);
    }
}
