//! Loss recovery schemes of sender-driven transports: go-back-N as RoCEv2 NICs do it, IRN,
//! MELO, Go-Back-ONE, LEFT, STRIDE (with its rate controller) and TCP's NewReno.

pub mod gbn;
pub mod gbone;
pub mod irn;
pub mod left;
pub mod melo;
pub mod stride;
pub mod tcp;
#[cfg(test)]
pub mod tutorial;
