//! Real byte formats of what the simulator moves as typed structs: RoCEv2 frames (Ethernet II,
//! IPv4, UDP to port 4791, the InfiniBand BTH, RETH, AETH and ICRC), for pcap export and fuzzing.
//! Nothing on the simulation's hot path uses this module; [`crate::observe`]'s pcap writer does.
//!
//! The contract is smoltcp's (`src/wire/mod.rs` there): every header has
//!
//! * a zero-copy view over bytes (`Header<T: AsRef<[u8]>>`): `new_unchecked` wraps any buffer,
//!   `check_len` returns [`Error::Truncated`] unless every fixed field is in range, and
//!   `new_checked` is the two together. Once `new_checked` succeeded no getter panics; with
//!   `T: AsMut<[u8]>` the setters write the fields in place;
//! * a validated representation (`Repr`): `parse` checks the view's fields (lengths,
//!   checksums, reserved values) and returns an [`Error`] for anything it would not emit;
//!   `buffer_len` is the bytes `emit` writes, and `emit` writes into a view at least that long.
//!
//! Parsing never panics on any input (a property test feeds arbitrary bytes to every parser)
//! and `emit` then `parse` gives back the same `Repr` for every valid one.
//!
//! [`frame`] maps a simulated [`crate::net::packet::Packet`] to a whole frame, and reads one
//! back; its module doc has the table of opcodes and layouts.

pub mod aeth;
pub mod bth;
pub mod ethernet;
pub mod ext;
pub mod frame;
pub mod icrc;
pub mod ipv4;
pub mod reth;
pub mod udp;

use std::fmt;

/// Why bytes did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Shorter than a header or than a length field says.
    Truncated,
    /// A field holds a value the format forbids (a reserved code, a bad length).
    Malformed,
    /// A checksum or the ICRC does not match.
    Checksum,
    /// Valid, but not something this codec handles (an IP fragment, another EtherType).
    Unsupported,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Truncated => "truncated",
            Error::Malformed => "malformed",
            Error::Checksum => "checksum mismatch",
            Error::Unsupported => "unsupported",
        })
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;

/// A byte range within a header.
pub(crate) type Field = core::ops::Range<usize>;

/// Big-endian (network order) field access on slices whose length the caller checked.
pub(crate) mod be {
    pub fn u16(b: &[u8]) -> u16 {
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn u24(b: &[u8]) -> u32 {
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
    pub fn set_u16(b: &mut [u8], v: u16) {
        b[..2].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_u24(b: &mut [u8], v: u32) {
        b[..3].copy_from_slice(&v.to_be_bytes()[1..]);
    }
}
