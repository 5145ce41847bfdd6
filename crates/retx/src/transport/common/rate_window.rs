//! A window of bytes in flight beside a rate-based controller's rate: none, one BDP, or one
//! BDP scaled by the current rate (the HPCC ns-3 model's `HAS_WIN` / `VAR_WIN`).

use serde::{Deserialize, Serialize};

/// A window of payload bytes in flight kept beside a rate-based controller's rate (the HPCC
/// ns-3 model's `HAS_WIN` / `VAR_WIN`, `RdmaQueuePair::GetWin`): HPCC, TIMELY, DCQCN and DCTCP
/// (`[cc.hpcc]`, `[cc.timely]`, `[cc.dcqcn]`, `[cc.dctcp]` `window`; variable by default for
/// HPCC only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateWindow {
    /// Rate alone (ns-3 `HAS_WIN 0`; `run.py --cc dcqcn`, `timely`, `dctcp`).
    #[default]
    None,
    /// One BDP of the run's reference path (ns-3 `HAS_WIN 1`, `VAR_WIN 0`).
    Fixed,
    /// That BDP x rate / line rate, at least 1 byte (ns-3 `HAS_WIN 1`, `VAR_WIN 1`:
    /// `run.py --cc dcqcn_vwin`, `timely_vwin`; the HPCC paper's "+win" variants).
    Variable,
}

impl RateWindow {
    /// The window for a reference BDP of `bdp` bytes at `rate` of `line` (bits per second);
    /// None without a window or without a reference path (ns-3: `m_win = 0` means none). The
    /// variable window is computed in integers as ns-3's `GetWin`: `bdp x rate / line`,
    /// truncated, at least 1.
    pub fn bytes(self, bdp: u64, rate: u64, line: u64) -> Option<u64> {
        match self {
            RateWindow::None => None,
            _ if bdp == 0 => None,
            RateWindow::Fixed => Some(bdp),
            RateWindow::Variable => Some(((bdp as u128 * rate as u128 / line.max(1) as u128) as u64).max(1)),
        }
    }
}
