//! Ethernet II: destination and source MAC, EtherType. No 802.1Q tag and no FCS (a pcap of
//! LINKTYPE_ETHERNET carries frames without it).

use super::{be, Error, Field, Result};

/// A MAC address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Address(pub [u8; 6]);

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const HEADER_LEN: usize = field::PAYLOAD.start;

mod field {
    use super::Field;
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: core::ops::RangeFrom<usize> = 14..;
}

/// A view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN { Err(Error::Truncated) } else { Ok(()) }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        Address(a)
    }

    pub fn src_addr(&self) -> Address {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        Address(a)
    }

    pub fn ethertype(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::ETHERTYPE])
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_dst_addr(&mut self, a: Address) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&a.0);
    }

    pub fn set_src_addr(&mut self, a: Address) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&a.0);
    }

    pub fn set_ethertype(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::ETHERTYPE], v);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// An Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    pub ethertype: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<Repr> {
        frame.check_len()?;
        Ok(Repr { src_addr: frame.src_addr(), dst_addr: frame.dst_addr(), ethertype: frame.ethertype() })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut Frame<T>) {
        frame.set_src_addr(self.src_addr);
        frame.set_dst_addr(self.dst_addr);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The Ethernet header of a CNP captured on a ConnectX-4 Lx (scapy's test/contrib/roce.uts).
    const CNP_ETH: [u8; 14] = [0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00];

    #[test]
    fn reads_a_captured_header() {
        let f = Frame::new_checked(&CNP_ETH[..]).unwrap();
        let r = Repr::parse(&f).unwrap();
        assert_eq!(r.dst_addr, Address([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]));
        assert_eq!(r.src_addr, Address([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]));
        assert_eq!(r.ethertype, ETHERTYPE_IPV4);
        let mut out = [0u8; 14];
        r.emit(&mut Frame::new_unchecked(&mut out[..]));
        assert_eq!(out, CNP_ETH);
    }

    #[test]
    fn short_input_is_an_error() {
        assert_eq!(Frame::new_checked(&CNP_ETH[..13]).unwrap_err(), Error::Truncated);
    }
}
