//! retx's notification extension header (no IBTA format): what a scheme's loss notification
//! carries beyond an AETH NAK. It follows the AETH of an RC Acknowledge and precedes the ICRC;
//! see the table in [`super::frame`].
//!
//! ```text
//! byte 0      kind: 1 SACK (IRN), 2 RACK (Go-Back-ONE), 3 HOLES (MELO)
//! byte 1      entries n (SACK, RACK: 1; HOLES: 1..=3)
//! bytes 2-3   reserved (0)
//! then n entries of 8 bytes:
//!   byte 0      reserved (0)
//!   bytes 1-3   PSN (24 bits)
//!   bytes 4-5   length in packets (SACK, RACK: 1)
//!   bytes 6-7   reserved (0)
//! ```

use super::{be, Error, Result};
use crate::transport::common::psn::Psn;

pub const FIXED_LEN: usize = 4;
pub const ENTRY_LEN: usize = 8;
pub const MAX_ENTRIES: usize = 3;

/// What the extension reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// IRN NACK: the PSN received out of order.
    Sack,
    /// Go-Back-ONE RACK: the PSN received out of order.
    Rack,
    /// MELO NACK: runs of missing PSNs, the most recent first.
    Holes,
}

impl Kind {
    pub fn code(self) -> u8 {
        match self {
            Kind::Sack => 1,
            Kind::Rack => 2,
            Kind::Holes => 3,
        }
    }
}

/// One reported run: `len` packets from `psn`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub psn: Psn,
    pub len: u16,
}

/// A view of the extension header.
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

    /// The fixed part fits, and the entries its count announces.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < FIXED_LEN || len < FIXED_LEN + ENTRY_LEN * self.count() as usize {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn kind(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    pub fn count(&self) -> u8 {
        self.buffer.as_ref()[1]
    }
    /// Header bytes as the count says.
    pub fn header_len(&self) -> usize {
        FIXED_LEN + ENTRY_LEN * self.count() as usize
    }
    /// Entry `i` (needs [`Header::check_len`] and `i < count`).
    pub fn entry(&self, i: usize) -> Entry {
        let e = &self.buffer.as_ref()[FIXED_LEN + i * ENTRY_LEN..][..ENTRY_LEN];
        Entry { psn: Psn::new(be::u24(&e[1..4])), len: be::u16(&e[4..6]) }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    pub fn set_kind(&mut self, v: u8) {
        self.buffer.as_mut()[0] = v;
    }
    /// The count, and the reserved bytes cleared.
    pub fn set_count(&mut self, v: u8) {
        let b = self.buffer.as_mut();
        b[1] = v;
        b[2] = 0;
        b[3] = 0;
    }
    pub fn set_entry(&mut self, i: usize, e: Entry) {
        let b = &mut self.buffer.as_mut()[FIXED_LEN + i * ENTRY_LEN..][..ENTRY_LEN];
        b[0] = 0;
        be::set_u24(&mut b[1..4], e.psn.value());
        be::set_u16(&mut b[4..6], e.len);
        b[6] = 0;
        b[7] = 0;
    }
}

/// The extension: a kind and 1..=3 entries (held inline: it is `Copy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub kind: Kind,
    pub entries: [Entry; MAX_ENTRIES],
    pub n: u8,
}

impl Repr {
    /// One PSN (a SACK or a RACK).
    pub fn single(kind: Kind, psn: Psn) -> Repr {
        let mut entries = [Entry::default(); MAX_ENTRIES];
        entries[0] = Entry { psn, len: 1 };
        Repr { kind, entries, n: 1 }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries[..self.n as usize]
    }

    /// SACK and RACK have one entry of length 1; HOLES 1..=3 entries.
    pub fn parse<T: AsRef<[u8]>>(header: &Header<T>) -> Result<Repr> {
        header.check_len()?;
        let n = header.count();
        let kind = match header.kind() {
            1 => Kind::Sack,
            2 => Kind::Rack,
            3 => Kind::Holes,
            _ => return Err(Error::Malformed),
        };
        let ok = match kind {
            Kind::Sack | Kind::Rack => n == 1 && header.entry(0).len == 1,
            Kind::Holes => (1..=MAX_ENTRIES as u8).contains(&n),
        };
        if !ok {
            return Err(Error::Malformed);
        }
        let mut entries = [Entry::default(); MAX_ENTRIES];
        for (i, e) in entries.iter_mut().enumerate().take(n as usize) {
            *e = header.entry(i);
        }
        Ok(Repr { kind, entries, n })
    }

    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + ENTRY_LEN * self.n as usize
    }

    /// `n` in 1..=3 (a larger one is cut to 3).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut Header<T>) {
        let n = self.n.min(MAX_ENTRIES as u8);
        header.set_kind(self.kind.code());
        header.set_count(n);
        for i in 0..n as usize {
            header.set_entry(i, self.entries[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_round_trip_in_the_documented_layout() {
        let mut r = Repr::single(Kind::Holes, Psn::new(0x123456));
        r.entries[0].len = 3;
        r.entries[1] = Entry { psn: Psn::new(7), len: 1 };
        r.n = 2;
        let mut out = [0u8; 20];
        r.emit(&mut Header::new_unchecked(&mut out[..]));
        assert_eq!(out, [3, 2, 0, 0, 0, 0x12, 0x34, 0x56, 0, 3, 0, 0, 0, 0, 0, 7, 0, 1, 0, 0]);
        assert_eq!(Repr::parse(&Header::new_checked(&out[..]).unwrap()).unwrap(), r);
        assert_eq!(Header::new_checked(&out[..19]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn a_sack_has_one_entry() {
        let mut out = [0u8; 12];
        Repr::single(Kind::Sack, Psn::new(9)).emit(&mut Header::new_unchecked(&mut out[..]));
        out[1] = 0;
        assert_eq!(Repr::parse(&Header::new_checked(&out[..]).unwrap()).unwrap_err(), Error::Malformed);
    }
}
