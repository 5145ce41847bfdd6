//! Transports as sans-IO state machines: no clock, no queue, no RNG inside. Every input
//! carries `now`; outputs are pulled (`poll_transmit`, `poll_timeout`). The simulator, unit
//! tests and a future real-UDP harness drive the same code.
//!
//! Folders, lowest first (no file imports one that imports it back: `tests/layers.rs`):
//! - `common/`: the machinery every scheme shares, naming none of them;
//! - `loss/`, `cc/`, `proactive/`: loss recovery schemes, congestion controllers and
//!   receiver-driven transports, each scheme's files together;
//! - `registry.rs` (the macros) and `schemes.rs` (the list): the one place that names every
//!   scheme, generating the enums a run stores them in;
//! - `template.rs`, `nic_agent.rs`: how a run builds its endpoints and NIC agents.

pub mod cc;
pub mod common;
pub mod loss;
pub mod nic_agent;
pub mod proactive;
pub mod registry;
pub mod schemes;
pub mod template;
pub mod uet;

pub use common::agent::NicCall;
pub use common::scheme::NetFacts;
pub use common::flow::{BasePath, FlowSpec, Marking, PoolOccupancy, SwapCost, CONTROL_BYTES, DATA_HEADER_BYTES, PRIORITY_CONTROL, PRIORITY_DATA, RESPONSE_HEADER_BYTES};
pub use common::{agent, endpoint, psn, segment};
pub use nic_agent::NicAgent;
pub use schemes::{Cc, CcCfg, CcKind, CcParams, RecoveryCfg, RecoveryKind, RecoveryParams, RxRecovery, SchemeAgent, TxRecovery};
pub use template::{Endpoint, Receiver, Sender, Template};

/// Figures the congestion controllers report over every connection of a run (STRIDE's rate
/// calculator's operation counts).
pub fn cc_report<'a>(controllers: impl Iterator<Item = &'a Cc> + Clone) -> Vec<(&'static str, f64)> {
    Cc::report(controllers)
}
