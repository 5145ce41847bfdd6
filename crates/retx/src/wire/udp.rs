//! UDP (RFC 768). RoCEv2 runs over destination port 4791 and may leave the checksum 0 (the
//! ICRC covers the packet); [`Repr::emit`] always writes 0 and [`Repr::parse`] does not check
//! a non-zero one.

use super::{be, Error, Field, Result};

pub const HEADER_LEN: usize = 8;
/// The RoCEv2 destination port (IANA).
pub const ROCEV2_PORT: u16 = 4791;

mod field {
    use super::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// A view of a UDP datagram.
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

    /// The header fits, and the length field is at least a header and within the buffer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let field_len = self.len() as usize;
        if field_len < HEADER_LEN {
            Err(Error::Malformed)
        } else if field_len > len {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn src_port(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::SRC_PORT])
    }
    pub fn dst_port(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::DST_PORT])
    }
    /// The length field: header and payload.
    #[allow(clippy::len_without_is_empty)] // a header field, not a container's size
    pub fn len(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::LENGTH])
    }
    pub fn checksum(&self) -> u16 {
        be::u16(&self.buffer.as_ref()[field::CHECKSUM])
    }
    /// The payload as the length field bounds it (needs [`Packet::check_len`]).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_src_port(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::SRC_PORT], v);
    }
    pub fn set_dst_port(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::DST_PORT], v);
    }
    pub fn set_len(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::LENGTH], v);
    }
    pub fn set_checksum(&mut self, v: u16) {
        be::set_u16(&mut self.buffer.as_mut()[field::CHECKSUM], v);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.len() as usize;
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// A UDP header; `payload_len` is what follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr { src_port: packet.src_port(), dst_port: packet.dst_port(), payload_len: packet.len() as usize - HEADER_LEN })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the header (checksum 0); the payload is the caller's. `payload_len` must fit the
    /// 16-bit length field with the header (at most 65527).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len((HEADER_LEN + self.payload_len) as u16);
        packet.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The UDP header of the captured ConnectX-4 Lx CNP: source port 0, 4791, length 40.
    const CNP_UDP: [u8; 8] = [0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00];

    #[test]
    fn reads_a_captured_header() {
        let mut buf = [0u8; 40];
        buf[..8].copy_from_slice(&CNP_UDP);
        let r = Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(r, Repr { src_port: 0, dst_port: ROCEV2_PORT, payload_len: 32 });
        let mut out = [0xaau8; 40];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out[..8], CNP_UDP);
    }

    #[test]
    fn length_field_is_checked() {
        let mut buf = CNP_UDP;
        assert_eq!(Packet::new_checked(&buf[..]).unwrap_err(), Error::Truncated); // says 40, has 8
        buf[5] = 7;
        assert_eq!(Packet::new_checked(&buf[..]).unwrap_err(), Error::Malformed);
        assert_eq!(Packet::new_checked(&buf[..7]).unwrap_err(), Error::Truncated);
    }
}
