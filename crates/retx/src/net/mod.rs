//! The network model: packets, ports (queues, wires, loss), switches, routing, paths,
//! topologies and background traffic sources.

pub mod admission;
pub mod background;
pub mod ecn;
pub mod headroom;
pub mod hpcc;
pub mod int;
pub mod loss;
pub mod packet;
pub mod path;
pub mod pfc_watch;
pub mod port;
pub mod routing;
pub mod switch;
pub mod topology;
