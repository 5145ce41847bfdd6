//! The machinery every scheme shares: the segment and its scheme extensions, PSNs, the
//! endpoint contract with its send and receive shells, the NIC agent, the recovery and
//! congestion traits every scheme implements, the [`scheme::Scheme`] and
//! [`scheme::Controller`] traits the registry reads, and the buffers several schemes use.
//! Nothing here names a scheme.

pub mod agent;
pub mod cnp;
pub mod congestion;
pub mod endpoint;
pub mod ext;
pub mod feedback;
pub mod flow;
pub mod int;
pub mod notifications;
pub mod poll;
pub mod psn;
pub mod rate_window;
pub mod receiver;
pub mod recovery;
pub mod reorder;
pub mod rx_ctx;
pub mod scheme;
pub mod segment;
pub mod sender;
pub mod tag_ring;
pub mod window;
