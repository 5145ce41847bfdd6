//! Congestion controllers: rate-based (DCQCN, DCTCP, HPCC, TIMELY; HPCC and TIMELY may also
//! keep a window) and window-based for the TCP baseline (Reno, DCTCP's window, Vegas).
//! STRIDE's controller lives with STRIDE (`loss/stride/cc.rs`).

pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_window;
pub mod hpcc;
pub mod none;
pub mod reno;
pub mod timely;
#[cfg(test)]
pub mod tutorial_aimd;
pub mod vegas;
