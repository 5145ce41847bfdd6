//! retx: a fast, deterministic packet-level simulator of loss recovery and congestion control
//! for hardware transports (RoCEv2 NICs, FPGA transports).
//!
//! Layers, lowest first; each depends only on those before it: [`sim`] (time, units, events,
//! randomness), [`hw`] (hardware structures bit-exactly), [`transport`] (sans-IO endpoints:
//! loss recovery and congestion control), [`net`] (packets, ports, loss models, switches,
//! routing, topologies), [`wire`] (real RoCEv2 frame bytes, for pcap export), [`nic`] (QP
//! scheduler, QP cache, host clock), [`observe`] (the engine's observation hook, and the pcap
//! writer), [`stats`], [`world`] (the event loop gluing them), [`workload`], and
//! [`config`] on top (scenario files: parse, validate, build the world).
//!
//! ```
//! let toml = r#"
//!     name = "doc"
//!     duration = "200us"
//!     [topology]
//!     kind = "single-switch"
//!     [workload]
//!     kind = "flow-list"
//!     flows = [{ src = "h0", dst = "h1", size = "100KB" }]
//! "#;
//! let out = retx::run_toml(toml).unwrap();
//! assert!(out.flows[0].finish.is_some());
//! ```

pub mod config;
pub mod hw;
pub mod net;
pub mod nic;
pub mod observe;
pub mod sim;
pub mod stats;
pub mod transport;
pub mod wire;
pub mod workload;
pub mod world;

pub use config::{Scenario, ScenarioError};
pub use world::{Aborted, RunOutput, Simulation};

/// Parses, validates and runs a scenario given as TOML text.
pub fn run_toml(text: &str) -> Result<RunOutput, ScenarioError> {
    let scenario = Scenario::from_toml(text)?;
    let sim = config::build(scenario)?;
    Ok(sim.run(&mut |_, _| true).expect("no abort without a callback"))
}

/// [`run_toml`], also returning the pcap file `[output] pcap` asks for (None without it).
pub fn run_toml_pcap(text: &str) -> Result<(RunOutput, Option<Vec<u8>>), ScenarioError> {
    let mut scenario = Scenario::from_toml(text)?;
    let topology = config::validate(&mut scenario)?;
    let Some(mut writer) = config::pcap_writer(&scenario, &topology)? else { return run_toml(text).map(|out| (out, None)) };
    let sim = config::build_with_observer(scenario, &mut writer)?;
    let out = sim.run(&mut |_, _| true).expect("no abort without a callback");
    Ok((out, Some(writer.into_bytes())))
}

/// The scenario with every default filled in, as TOML: what a run actually used.
pub fn resolve_toml(text: &str) -> Result<String, ScenarioError> {
    let mut scenario = Scenario::from_toml(text)?;
    config::validate(&mut scenario)?;
    Ok(scenario.to_toml())
}
