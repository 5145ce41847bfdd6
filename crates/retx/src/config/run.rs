//! The `[run]` section: how a run uses the machine. Nothing here changes what is simulated: a
//! run gives the same bytes whatever these say.

use crate::sim::check::{range_u32, Checked};
use serde::{Deserialize, Serialize};

/// The most threads a run may ask for.
pub const MAX_THREADS: u32 = 1024;
/// The environment variable that sets the threads of every run of a process, over what its
/// scenario says (`retx run|sweep|reproduce --threads N` set it, so a sweep's workers inherit
/// it as they do the memory budget).
pub const THREADS_ENV: &str = "RETX_THREADS";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunCfg {
    /// Threads the run may use: the network is split into this many partitions (pods,
    /// leaves, dragonfly groups) run side by side, with output identical to one thread's.
    /// Default 1 (the serial engine). A network or scenario that cannot be split runs
    /// serially and says why (`RunOutput` has no trace of it: the output is the same).
    pub threads: u32,
    /// The fewest hosts a partition may have: a network with fewer per thread runs on fewer
    /// threads (serially below two). Partitions meet at a barrier every lookahead of simulated
    /// time; a few hosts' events per window cost less than the meeting (a 4-host dumbbell at
    /// 2 threads ran 5x slower). Default 8.
    pub min_hosts_per_thread: u32,
    /// How the network is cut into blocks that the partitions share out
    /// ([`crate::world::partition`]): `auto` (a dragonfly's groups, else pods or leaves, else
    /// each switch with its hosts) or `switches` (each switch with its hosts, always: more,
    /// smaller blocks, more links cut). Either gives the serial run's bytes.
    pub partition: PartitionMode,
}

pub use crate::world::partition::PartitionMode;

/// The fewest hosts per partition by default.
pub const MIN_HOSTS_PER_THREAD: u32 = 8;

impl Default for RunCfg {
    fn default() -> Self {
        RunCfg { threads: 1, min_hosts_per_thread: MIN_HOSTS_PER_THREAD, partition: PartitionMode::Auto }
    }
}

impl RunCfg {
    pub fn is_default(&self) -> bool {
        *self == RunCfg::default()
    }

    pub fn check(&self) -> Checked {
        range_u32("threads", self.threads, 1, MAX_THREADS)?;
        range_u32("min_hosts_per_thread", self.min_hosts_per_thread, 1, 1 << 20)
    }
}

/// The threads a run uses: [`THREADS_ENV`] when set, else `[run] threads`.
pub fn threads(s: &super::Scenario) -> Result<u32, super::ScenarioError> {
    match std::env::var(THREADS_ENV) {
        Err(_) => Ok(s.run.threads),
        Ok(v) => v.trim().parse::<u32>().ok().filter(|n| (1..=MAX_THREADS).contains(n)).ok_or_else(|| {
            super::ScenarioError::new(THREADS_ENV, format!("{v:?} is not a thread count (allowed 1..={MAX_THREADS})"))
        }),
    }
}
