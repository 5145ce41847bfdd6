//! A scenario's checks in order: each section checks itself beside its definition (`check` in
//! `switch.rs`, `nic.rs`, `output.rs`, ..., and each scheme's parameters in its own file under
//! `transport/`); this file runs them once, in the order a reader meets the sections, with the
//! network built in between for the checks that name its hosts, switches and links.

use super::{Scenario, ScenarioError};
use super::{jobs, topology, workload};
use crate::net::topology::Topology;
use crate::sim::units::{Time, MAX_TIME};
use crate::transport::common::scheme::RunFacts;

pub use super::background::background;
pub use super::loss::{loss_rule, loss_target};
pub use super::output::{pcap_hosts, watched_flows, watched_pools, watched_queues, MAX_SAMPLES};

/// The longest run: 10^6 s of simulated time, the longest time a scenario may name.
pub const MAX_DURATION: Time = MAX_TIME;
/// The longest scenario name (it names the output folder).
pub const MAX_NAME: usize = 128;

/// A scenario name names its output folder, so it is one plain folder name: letters, digits
/// and `. _ - + = ,` (labels such as "hpcc+win"), starting with a letter, digit or `_` (so
/// never `..`, hidden, absolute or with a separator).
pub fn check_name(name: &str) -> Result<(), ScenarioError> {
    let ok_first = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let ok_rest = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '=' | ','));
    if name.is_empty() {
        return Err(ScenarioError::new("name", "must not be empty"));
    }
    if !(ok_first && ok_rest) || name.len() > MAX_NAME {
        return Err(ScenarioError::new(
            "name",
            format!("{name:?} is not a plain name (it names the output folder: up to {MAX_NAME} letters, digits and . _ - + = , starting with a letter, digit or _)"),
        ));
    }
    Ok(())
}

/// Fills defaults that depend on other fields, checks every range and name, and builds the
/// topology.
pub fn validate(s: &mut Scenario) -> Result<Topology, ScenarioError> {
    check_name(&s.name)?;
    if s.duration.0 == Time::ZERO {
        return Err(ScenarioError::new("duration", "must be greater than 0"));
    }
    s.output.check_sampling(s.duration.0)?;
    super::output::check_link_series(&mut s.output, s.duration.0)?;
    s.output.files()?;
    topology::resolve(&mut s.topology)?;
    let topo = topology::build(&s.topology, &s.base_dir)?;

    super::SwitchCfg::check(s, &topo)?;
    s.nic.check().map_err(|e| e.within("nic"))?;
    s.run.check().map_err(|e| e.within("run"))?;
    if s.nic.rx_queue > 0 && s.switch.queues < 2 {
        return Err(ScenarioError::new("nic.rx_queue", "pauses the data classes of the NIC's switch port: needs switch.queues >= 2 (with one queue data shares it with control)"));
    }
    s.recovery.check()?;
    s.cc.check()?;
    s.transport.check()?;
    // What the chosen scheme must agree with elsewhere (its payloads fit its frames, its
    // switch queues exist, the workload it derives parameters from has sizes).
    let params = s.recovery.params(s.transport.recovery);
    let run = RunFacts { mtu: s.nic.mtu, shaped_queue: s.switch.shaped.as_ref().map(|x| x.queue), has_size_table: s.workload.iter().any(|w| w.cdf.is_some()) };
    params.check_run(&run)?;
    if params.wants_sizes() {
        let i = s.workload.iter().position(|w| w.cdf.is_some()).unwrap_or(0);
        workload::poisson_cdf(&s.workload[i], &s.base_dir).map_err(|e| s.workload.at(i, e))?;
    }
    s.routing.check().map_err(|e| e.within("routing"))?;
    s.routing.check_paths(&topo).map_err(|e| e.within("routing"))?;
    for (i, l) in s.loss.iter().enumerate() {
        loss_rule(&topo, l, i)?;
    }
    for (i, b) in s.background.iter().enumerate() {
        background(&topo, b, i, s.duration.0, s.switch.queues)?;
    }
    jobs::check(&mut s.workload, &topo, s.duration.0, s.seed, &s.base_dir, s.switch.queues)?;
    let flows = jobs::known_flow_count(&s.workload, &s.base_dir)?;
    s.output.check(&topo, flows)?;
    // What relates the sections (trimming against the packets sent, options that need others).
    super::relations::check(s)?;
    // Every configuration-sized allocation, in total, against the memory budget.
    let expected = match flows {
        Some(n) => n as u64,
        None => jobs::flow_estimate(&s.workload, &topo, &s.base_dir)?,
    };
    super::budget::check(&super::budget::estimate(s, &topo, expected), super::budget::budget()?)?;
    Ok(topo)
}
