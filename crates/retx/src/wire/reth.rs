//! The RDMA Extended Transport Header (IBTA Vol. 1, 9.3.3), 16 bytes after the BTH of an RDMA
//! WRITE First or Only packet: where in the responder's memory the message goes.
//!
//! ```text
//! 0..8    virtual address
//! 8..12   R_Key
//! 12..16  DMA length (bytes of the whole message)
//! ```

use super::{Error, Field, Result};

pub const HEADER_LEN: usize = 16;

mod field {
    use super::Field;
    pub const VA: Field = 0..8;
    pub const RKEY: Field = 8..12;
    pub const DMA_LEN: Field = 12..16;
}

/// A view of a RETH.
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

    pub fn virtual_address(&self) -> u64 {
        u64::from_be_bytes(self.buffer.as_ref()[field::VA].try_into().unwrap())
    }
    pub fn rkey(&self) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[field::RKEY].try_into().unwrap())
    }
    pub fn dma_len(&self) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[field::DMA_LEN].try_into().unwrap())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    pub fn set_virtual_address(&mut self, v: u64) {
        self.buffer.as_mut()[field::VA].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_rkey(&mut self, v: u32) {
        self.buffer.as_mut()[field::RKEY].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_dma_len(&mut self, v: u32) {
        self.buffer.as_mut()[field::DMA_LEN].copy_from_slice(&v.to_be_bytes());
    }
}

/// A RETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub virtual_address: u64,
    pub rkey: u32,
    /// Bytes of the whole message the WRITE carries.
    pub dma_len: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(header: &Header<T>) -> Result<Repr> {
        header.check_len()?;
        Ok(Repr { virtual_address: header.virtual_address(), rkey: header.rkey(), dma_len: header.dma_len() })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut Header<T>) {
        header.set_virtual_address(self.virtual_address);
        header.set_rkey(self.rkey);
        header.set_dma_len(self.dma_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_big_endian_fields() {
        let bytes = [0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x78, 0x9a, 0x00, 0x00, 0x12, 0x34, 0x00, 0x10, 0x00, 0x00];
        let r = Repr::parse(&Header::new_checked(&bytes[..]).unwrap()).unwrap();
        assert_eq!(r, Repr { virtual_address: 0x7f12_3456_789a, rkey: 0x1234, dma_len: 1 << 20 });
        let mut out = [0u8; HEADER_LEN];
        r.emit(&mut Header::new_unchecked(&mut out[..]));
        assert_eq!(out, bytes);
        assert_eq!(Header::new_checked(&bytes[..15]).unwrap_err(), Error::Truncated);
    }
}
