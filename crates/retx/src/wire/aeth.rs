//! The ACK Extended Transport Header (IBTA Vol. 1, 9.3.5), 4 bytes after the BTH of an RC
//! Acknowledge: a syndrome byte and a 24-bit Message Sequence Number.
//!
//! ```text
//! syndrome  bit 7 reserved (0)
//!           bits 6:5  00 ACK (4:0 credit count), 01 RNR NAK (4:0 timer), 11 NAK (4:0 code);
//!                     10 is reserved
//! ```

use super::{be, Error, Field, Result};

pub const HEADER_LEN: usize = 4;
/// The credit count that means "no credit information" (end-to-end flow control off).
pub const CREDITS_INVALID: u8 = 0x1f;

mod field {
    use super::Field;
    pub const SYNDROME: usize = 0;
    pub const MSN: Field = 1..4;
}

/// The NAK codes (IBTA Vol. 1, Table 45); codes 5..=31 are reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NakCode {
    PsnSequenceError,
    InvalidRequest,
    RemoteAccessError,
    RemoteOperationalError,
    InvalidRdRequest,
}

impl NakCode {
    pub fn code(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
        }
    }

    pub fn from_code(c: u8) -> Option<NakCode> {
        Some(match c {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            _ => return None,
        })
    }
}

/// What the syndrome says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// Positive acknowledgement with a credit count (0..=31; [`CREDITS_INVALID`] for none).
    Ack { credits: u8 },
    /// Receiver not ready, with the 5-bit RNR timer code.
    Rnr { timer: u8 },
    Nak(NakCode),
}

impl Syndrome {
    pub fn byte(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1f,
            Syndrome::Rnr { timer } => 0x20 | (timer & 0x1f),
            Syndrome::Nak(code) => 0x60 | code.code(),
        }
    }

    pub fn from_byte(b: u8) -> Result<Syndrome> {
        if b & 0x80 != 0 {
            return Err(Error::Malformed);
        }
        let low = b & 0x1f;
        match (b >> 5) & 0x03 {
            0b00 => Ok(Syndrome::Ack { credits: low }),
            0b01 => Ok(Syndrome::Rnr { timer: low }),
            0b11 => NakCode::from_code(low).map(Syndrome::Nak).ok_or(Error::Malformed),
            _ => Err(Error::Malformed),
        }
    }
}

/// A view of an AETH.
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

    pub fn syndrome(&self) -> u8 {
        self.buffer.as_ref()[field::SYNDROME]
    }
    pub fn msn(&self) -> u32 {
        be::u24(&self.buffer.as_ref()[field::MSN])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    pub fn set_syndrome(&mut self, v: u8) {
        self.buffer.as_mut()[field::SYNDROME] = v;
    }
    /// The low 24 bits of `v`.
    pub fn set_msn(&mut self, v: u32) {
        be::set_u24(&mut self.buffer.as_mut()[field::MSN], v);
    }
}

/// An AETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(header: &Header<T>) -> Result<Repr> {
        header.check_len()?;
        Ok(Repr { syndrome: Syndrome::from_byte(header.syndrome())?, msn: header.msn() })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut Header<T>) {
        header.set_syndrome(self.syndrome.byte());
        header.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndromes_encode_as_the_spec_tables() {
        // IBTA Vol. 1, Table 44/45: ACK 0b000ccccc, RNR 0b001ttttt, NAK 0b011nnnnn.
        assert_eq!(Syndrome::Ack { credits: CREDITS_INVALID }.byte(), 0x1f);
        assert_eq!(Syndrome::Rnr { timer: 14 }.byte(), 0x2e);
        assert_eq!(Syndrome::Nak(NakCode::PsnSequenceError).byte(), 0x60);
        assert_eq!(Syndrome::Nak(NakCode::RemoteAccessError).byte(), 0x62);
        assert_eq!(Syndrome::from_byte(0x40), Err(Error::Malformed)); // reserved type 10
        assert_eq!(Syndrome::from_byte(0x65), Err(Error::Malformed)); // reserved NAK code
        assert_eq!(Syndrome::from_byte(0x9f), Err(Error::Malformed)); // reserved bit 7
    }

    #[test]
    fn reads_and_writes_a_nak() {
        let bytes = [0x60, 0x00, 0x00, 0x07];
        let r = Repr::parse(&Header::new_checked(&bytes[..]).unwrap()).unwrap();
        assert_eq!(r, Repr { syndrome: Syndrome::Nak(NakCode::PsnSequenceError), msn: 7 });
        let mut out = [0u8; 4];
        r.emit(&mut Header::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
        assert_eq!(Header::new_checked(&bytes[..3]).unwrap_err(), Error::Truncated);
    }
}
