//! The network model: packets, ports (links), switches, routing and topologies.

pub mod ecn;
pub mod hpcc;
pub mod packet;
pub mod port;
pub mod routing;
pub mod topology;
