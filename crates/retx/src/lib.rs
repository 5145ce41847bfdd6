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
/// On the threads its `[run] threads` asks for (the output is the same on any number).
pub fn run_toml(text: &str) -> Result<RunOutput, ScenarioError> {
    let scenario = Scenario::from_toml(text)?;
    let (out, _) = config::build::run(scenario, &mut |_, _| true)?;
    Ok(out.expect("no abort without a callback"))
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

/// Runs a validated-on-build scenario while tracing the operations on one hardware structure
/// (see [`observe::hw_trace`]): the run's output and the trace text. The run stops once the
/// trace is complete, and then has no output (None).
pub fn run_hw_trace(scenario: Scenario, kind: observe::hw_trace::HwTraceKind, max_ops: usize, max_conns: u32) -> Result<(Option<RunOutput>, String), ScenarioError> {
    use observe::hw_trace::{HwTraceKind, HwTracer};
    // Swaps move a connection's blocks between ops, outside what the RTL models.
    if kind == HwTraceKind::MeloRx && scenario.recovery.melo.qp_cache != 0 {
        return Err(ScenarioError::new("recovery.melo.qp_cache", "tracing models every connection on chip; use 0"));
    }
    let mut scenario = scenario;
    if kind == HwTraceKind::LeftPool {
        // Every NIC's pool records its first `max_ops` operations; the tracer keeps one NIC's.
        scenario.recovery.left.record_pool_ops = max_ops;
    }
    if kind == HwTraceKind::LeftGather {
        scenario.recovery.left.record_gather_ops = max_ops;
    }
    let mut tracer = HwTracer::new(kind, max_ops, max_conns);
    let done = tracer.done_flag();
    let sim = config::build_with_observer(scenario, &mut tracer)?;
    // An early stop (Err(Aborted)) is the trace being complete, not a failure.
    let out = sim.run(&mut |_, _| !done.load(std::sync::atomic::Ordering::Relaxed)).ok();
    let text = tracer.finish().map_err(|(field, message)| ScenarioError::new(field, message))?;
    Ok((out, text))
}

/// The scenario with every default filled in, as TOML: what a run actually used.
pub fn resolve_toml(text: &str) -> Result<String, ScenarioError> {
    let mut scenario = Scenario::from_toml(text)?;
    config::validate(&mut scenario)?;
    Ok(scenario.to_toml())
}
