//! The `[transport]` section: which loss recovery and congestion control every connection
//! runs. The `[recovery.*]` and `[cc.*]` sections are the registry's
//! (`transport/schemes.rs`): one per scheme, each its parameters' type, which checks itself in
//! the scheme's own file; this file checks what crosses sections.

use crate::sim::check::{Checked, FieldError};
pub use crate::transport::schemes::{CcCfg, CcKind, RecoveryCfg, RecoveryKind};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportCfg {
    pub recovery: RecoveryKind,
    pub cc: CcKind,
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg { recovery: RecoveryKind::Gbn, cc: CcKind::Dcqcn }
    }
}

impl TransportCfg {
    /// Which recovery schemes a window controller runs over.
    pub fn check(&self) -> Checked {
        if self.recovery.own_cc() && self.cc != CcKind::None {
            return Err(FieldError::new("transport.cc", format!("recovery {:?} runs its own congestion control (its [recovery.{}] section); set cc = \"none\"", self.recovery.name(), self.recovery.name())));
        }
        if self.cc.is_window() && !self.recovery.takes_window_cc() {
            return Err(FieldError::new("transport.cc", "a window controller (reno, dctcp-window, vegas) runs over recovery \"tcp\", \"gbn\" or \"irn\""));
        }
        Ok(())
    }
}
