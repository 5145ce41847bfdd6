//! Proactive, receiver-driven transports: NDP (PULLs), Homa (grants) and ExpressPass
//! (credits), with Aeolus's selective-drop recovery of their first-RTT packets.

pub mod aeolus;
pub mod homa;
pub mod ndp;
#[cfg(test)]
pub mod pull;
pub mod xpass;
