//! The RoCEv2 Invariant CRC (IBTA Vol. 1 Annex A17, RoCEv2): the CRC-32 of Ethernet (reflected
//! polynomial 0xEDB88320, initial value and final XOR all ones) over
//!
//! 1. eight 0xFF bytes standing for the masked Local Route Header of native InfiniBand,
//! 2. the IPv4 header with Type of Service, TTL and Header Checksum set to all ones,
//! 3. the UDP header with its checksum set to all ones,
//! 4. the BTH with its byte 4 (FECN, BECN and the reserved bits, "resv8a") set to all ones,
//! 5. everything after the BTH up to the ICRC (extension headers, payload, pad),
//!
//! written after the payload least significant byte first (as Ethernet writes its FCS).
//!
//! Checked against a CNP captured on a Mellanox ConnectX-4 Lx (the frame in scapy's
//! `test/contrib/roce.uts`) and against scapy's own ICRC of a SEND with payload and pad; the
//! masking rules follow the annex as the Linux soft-RoCE driver (`rxe_icrc.c`) implements it.
//! IPv6 (traffic class, flow label, hop limit masked) is not handled: frames here are IPv4.

use super::{ipv4, udp, Error, Result};

/// The CRC-32 lookup table, built at compile time.
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

fn update(crc: u32, byte: u8) -> u32 {
    TABLE[((crc ^ byte as u32) & 0xff) as usize] ^ (crc >> 8)
}

/// The ICRC of an IPv4 RoCEv2 packet: `packet` runs from the first byte of the IPv4 header to
/// the last byte before the ICRC. Returns [`Error::Truncated`] if it is shorter than its IPv4
/// header (as its IHL says), a UDP header and a BTH.
pub fn compute(packet: &[u8]) -> Result<u32> {
    let ihl = match packet.first() {
        Some(b) => ((b & 0x0f) as usize) * 4,
        None => return Err(Error::Truncated),
    };
    if ihl < ipv4::HEADER_LEN {
        return Err(Error::Malformed);
    }
    let udp_checksum = ihl + 6;
    let bth_resv8a = ihl + udp::HEADER_LEN + 4;
    if packet.len() < ihl + udp::HEADER_LEN + super::bth::HEADER_LEN {
        return Err(Error::Truncated);
    }
    let mut crc = !0u32;
    for _ in 0..8 {
        crc = update(crc, 0xff);
    }
    for (i, &b) in packet.iter().enumerate() {
        let masked = matches!(i, 1 | 8 | 10 | 11) || i == udp_checksum || i == udp_checksum + 1 || i == bth_resv8a;
        crc = update(crc, if masked { 0xff } else { b });
    }
    Ok(!crc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CNP captured on a ConnectX-4 Lx (scapy, test/contrib/roce.uts), from the IPv4 header:
    /// IPv4, UDP 0 -> 4791, BTH (opcode 0x81, BECN), 16 reserved bytes, ICRC 82 fd 00 2a.
    const CNP: [u8; 60] = [
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, // IPv4
        0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // UDP
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, // BTH
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
        0x82, 0xfd, 0x00, 0x2a, // ICRC
    ];

    #[test]
    fn matches_a_captured_connectx_cnp() {
        let icrc = compute(&CNP[..56]).unwrap();
        assert_eq!(icrc.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
    }

    /// A UC SEND Only with 18 B of payload and 2 B of pad, TOS 1 and a non-zero UDP checksum
    /// (scapy's test/contrib/roce.uts builds it and expects ICRC 0x78f353f3 as read off the
    /// wire, the IPv4 checksum 0xb4d5 and the UDP checksum 0xaca2).
    const UC_SEND: &str = "45010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401be885e500000";

    #[test]
    fn matches_scapys_send_with_payload_and_pad() {
        let bytes: Vec<u8> = (0..UC_SEND.len()).step_by(2).map(|i| u8::from_str_radix(&UC_SEND[i..i + 2], 16).unwrap()).collect();
        assert_eq!(bytes.len(), 60);
        assert!(ipv4::Packet::new_unchecked(&bytes[..]).verify_checksum());
        assert_eq!(compute(&bytes).unwrap().to_le_bytes(), [0x78, 0xf3, 0x53, 0xf3]);
    }

    #[test]
    fn masked_fields_do_not_change_it_and_others_do() {
        let base = compute(&CNP[..56]).unwrap();
        for i in [1, 8, 10, 11, 26, 27, 32] {
            let mut p = CNP;
            p[i] ^= 0x5a;
            assert_eq!(compute(&p[..56]).unwrap(), base, "byte {i} is masked");
        }
        for i in [2, 4, 9, 12, 20, 28, 33, 41, 55] {
            let mut p = CNP;
            p[i] ^= 0x5a;
            assert_ne!(compute(&p[..56]).unwrap(), base, "byte {i} is covered");
        }
    }

    #[test]
    fn the_seed_is_the_masked_lrh() {
        // Linux rxe starts from 0xdebb20e3: the CRC register after eight 0xFF bytes.
        let mut crc = !0u32;
        for _ in 0..8 {
            crc = update(crc, 0xff);
        }
        assert_eq!(crc, 0xdebb_20e3);
    }

    #[test]
    fn short_input_is_an_error() {
        assert_eq!(compute(&CNP[..39]), Err(Error::Truncated));
        assert_eq!(compute(&[]), Err(Error::Truncated));
        assert_eq!(compute(&[0x44; 60]), Err(Error::Malformed));
    }
}
