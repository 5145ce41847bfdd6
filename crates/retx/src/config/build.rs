//! Builds a simulation from a validated scenario: the only place that knows both the scenario
//! schema and the parts of the world. Every scheme's section maps to its parameters here.

use super::{DisciplineKind, EntropyKind, PathsKind, RoutingKind, Scenario, ScenarioError};
use crate::hw::memory::{MemoryReport, Sizing};
use crate::net::ecn::RedProfile;
use crate::net::port::{Discipline, ShapedRate, ShaperSpec};
use crate::net::routing::{Paths, Policy};
use crate::net::pfc_watch::WatchParams;
use crate::net::switch::{ColourRule, RateProfile, SwitchParams};
use crate::nic::{ClockPlan, HostClock};
use crate::observe::pcap::PcapWriter;
use crate::observe::{Observer, Quiet};
use super::template::{int_enabled, transport};
use crate::world::{Parts, SourceEntropy};
use crate::world::{Aborted, ParallelReport, RunOutput, Simulation};
use crate::sim::units::Time;

/// `[nic] clock_drift_spread_ppm`, defaulting for STRIDE to what its paper measured between two
/// FPGAs (§IV.B: "Δt < 1 nanoseconds for every 1 millisecond interval", Δt = STT(t + 1) −
/// STT(t)), i.e. any two hosts' clocks under 1 ppm apart: +-0.5 ppm each. The 0.0025 % crystal
/// tolerance the paper also cites would let two free-running clocks part by 50 ppm, which the
/// paper's cards, "programmed to achieve the same cycle", did not show. Perfect clocks otherwise.
pub fn clock_drift_spread_ppm(s: &Scenario) -> f64 {
    s.nic.clock_drift_spread_ppm.unwrap_or(s.transport.recovery.clock_spread_ppm())
}

/// The switches' configuration from `[switch]`.
pub fn switch(s: &Scenario) -> SwitchParams {
    let sw = &s.switch;
    let red = |kmin: u64, kmax: u64, pmax: f64| RedProfile { kmin, kmax, pmax };
    SwitchParams {
        buffer: sw.buffer.0,
        dt_alpha: sw.dt_alpha,
        pfc: super::lossless::pfc(s),
        ecn: sw.ecn.enabled.then(|| red(sw.ecn.kmin.0, sw.ecn.kmax.0, sw.ecn.pmax)),
        ecn_by_rate: if sw.ecn.enabled {
            sw.ecn.per_link.iter().map(|e| RateProfile { rate: e.rate.0, red: red(e.kmin.0, e.kmax.0, e.pmax) }).collect()
        } else {
            Vec::new()
        },
        colour: sw
            .wred
            .iter()
            .map(|w| {
                // Validation ensured threshold xor min/max/pmax.
                let drop = match w.threshold {
                    Some(t) => red(t.0, t.0, 1.0),
                    None => red(w.min.map_or(0, |x| x.0), w.max.map_or(0, |x| x.0), w.pmax.unwrap_or(1.0)),
                };
                ColourRule { colour: w.colour, queue: w.class, rate: w.rate.map(|r| r.0), drop, of_port: w.scope == super::switch::WredScope::Port }
            })
            .collect(),
        trim: sw.trim.as_ref().map(|t| crate::net::admission::Trim { queue: t.queue as usize, header: t.header.0 as u32, port: t.port(), return_to_sender: t.return_to_sender }),
        port_buffer: sw.port_buffer.map(|b| b.0),
        ecn_drops_not_ect: sw.ecn.enabled && sw.ecn.drop_not_ect,
        ecn_to_hosts: sw.ecn.to_hosts,
    }
}

/// Validates a scenario and builds the simulation it describes.
pub fn build(s: Scenario) -> Result<Simulation, ScenarioError> {
    build_with_observer(s, Quiet)
}

/// Validates a scenario and builds its simulation with the engine's events going to `obs`
/// (see [`crate::observe`]); [`build`] is this with the observer that records nothing.
pub fn build_with_observer<O: Observer>(s: Scenario, obs: O) -> Result<Simulation<O>, ScenarioError> {
    let (s, parts) = parts(s)?;
    Ok(assemble(&s, parts, obs))
}

/// The simulation of `parts` (built from `s`), with its on-chip memory table attached.
fn assemble<O: Observer>(s: &Scenario, parts: Parts, obs: O) -> Simulation<O> {
    let scheme = parts.transport.memory_scheme();
    let mut sim = Simulation::with_observer(parts, obs);
    sim.set_memory_report(memory_report(s, scheme, &sim));
    sim
}

/// Validates a scenario and runs it on the threads `[run] threads` allows, split into that
/// many partitions (output identical to the serial run's); serially when the network or the
/// scenario cannot be split, the report saying why.
pub fn run(s: Scenario, progress: &mut dyn FnMut(Time, Time) -> bool) -> Result<(Result<RunOutput, Aborted>, ParallelReport), ScenarioError> {
    let threads = super::run::threads(&s)? as usize;
    let (s, parts) = parts(s)?;
    let split = if threads < 2 {
        Err(None)
    } else {
        match crate::world::obstacle(&parts) {
            Some(why) => Err(Some(why)),
            None => crate::world::partition::plan(&parts.topology, threads, s.run.min_hosts_per_thread as usize, s.run.partition).map_err(Some),
        }
    };
    match split {
        Ok(plan) => {
            let scheme = parts.transport.memory_scheme();
            Ok(Simulation::run_parallel(parts, &plan, &|sim| memory_report(&s, scheme, sim), progress))
        }
        Err(why) => Ok((assemble(&s, parts, Quiet).run(progress), ParallelReport { threads: 1, serial_because: why, ..Default::default() })),
    }
}

/// The on-chip memory table for a NIC sized like the run's hosts: the first host's link, the
/// longest base RTT, one connection per flow, MELO's pool as configured; `scheme` its row.
fn memory_report<O: Observer>(s: &Scenario, scheme: &'static str, sim: &Simulation<O>) -> MemoryReport {
    let melo = &s.recovery.melo;
    let sizing = Sizing {
        bandwidth: sim.first_host_rate(),
        rtt: sim.longest_base_rtt(),
        mtu: s.nic.mtu,
        connections: sim.flow_count().max(1) as u32,
        pool_bits: melo.pool_bits,
        block_bits: melo.block_bits,
    };
    MemoryReport::new(sizing, scheme)
}

/// Validates a scenario and resolves what its simulation is built from.
fn parts(mut s: Scenario) -> Result<(Scenario, Parts), ScenarioError> {
    let topology = super::validate(&mut s)?;
    let super::workload::Workload { mut flows, dependencies, collectives } = super::jobs::flows(&s.workload, &topology, s.seed, &s.base_dir)?;
    if s.nic.whole_packets {
        // htsim sends whole packets: a flow takes as many full packets as its bytes need.
        let mtu = s.nic.mtu as u64;
        for f in flows.iter_mut().filter(|f| f.size != crate::transport::FlowSpec::ENDLESS) {
            f.size = f.size.div_ceil(mtu) * mtu;
        }
    }
    let loss = s.loss.iter().enumerate().map(|(i, l)| super::validate::loss_rule(&topology, l, i)).collect::<Result<Vec<_>, _>>()?;
    let routing = match s.routing.policy {
        RoutingKind::Ecmp => Policy::Ecmp,
        RoutingKind::SprayRoundRobin => Policy::SprayRoundRobin,
        RoutingKind::SprayRandom => Policy::SprayRandom,
        RoutingKind::Flowlet => Policy::Flowlet { gap: s.routing.flowlet_gap.0, entries: s.routing.flowlet_entries },
        RoutingKind::SprayPermutation => Policy::SprayPermutation { entries: s.routing.flowlet_entries },
    };
    let template = transport(&s);
    let degraded = s
        .switch
        .degraded
        .iter()
        .enumerate()
        .map(|(i, d)| super::switch::degraded_port(&topology, d, i).map(|(a, b)| (a, b, d.factor)))
        .collect::<Result<Vec<_>, _>>()?;
    let watched_queues = super::validate::watched_queues(&topology, &s.output.queues)?;
    let watched_flows = super::validate::watched_flows(&s.output.cc_flows, flows.len())?;
    let watched_pools = super::validate::watched_pools(&topology, &s.output.pools)?;
    let links = super::output::selected_links(&topology, &s.output)?.map(|selected| crate::world::LinkPlan {
        selected,
        tiers: topology.port_tiers(),
        series: s.output.link_series.unwrap_or(super::output::DEFAULT_LINK_SERIES) as usize,
    });
    let background = s
        .background
        .iter()
        .enumerate()
        .map(|(i, b)| super::validate::background(&topology, b, i, s.duration.0, s.switch.queues))
        .collect::<Result<Vec<_>, _>>()?;
    let parts = Parts {
        topology,
        seed: s.seed,
        duration: s.duration.0,
        stop_when_done: s.stop_when_done,
        sample_interval: s.output.interval(s.duration.0),
        watched_queues,
        watched_flows,
        watched_pools,
        links,
        switch: switch(&s),
        degraded,
        queues: s.switch.queues as usize,
        discipline: match s.switch.discipline {
            DisciplineKind::StrictPriority => Discipline::StrictPriority,
            DisciplineKind::Drr => Discipline::Drr { quantum: s.switch.drr_quantum.0 as u32 },
        },
        shaped: s.switch.shaped.as_ref().map(|x| ShaperSpec {
            queue: x.queue as usize,
            rate: match x.rate {
                Some(r) => ShapedRate::Fixed(r.0),
                None => ShapedRate::Share(x.share.unwrap_or(super::EXPRESSPASS_CREDIT_SHARE)),
            },
            buffer: x.buffer,
            burst: x.burst,
        }),
        routing,
        paths: match s.routing.paths {
            PathsKind::Minimal => Paths::Minimal,
            PathsKind::Valiant => Paths::Valiant,
            PathsKind::Ugal => Paths::Ugal,
        },
        entropy: match s.routing.entropy {
            _ if template.chooses_entropy() => SourceEntropy::Chosen,
            EntropyKind::PerFlow => SourceEntropy::PerFlow,
            EntropyKind::PerPacket => SourceEntropy::PerPacket,
        },
        loss,
        transport: template,
        mtu: s.nic.mtu,
        flows,
        jobs: s.workload.names(),
        dependencies,
        collectives,
        int: int_enabled(&s),
        rx_latency: s.nic.rx_latency.0,
        rx_queue: s.nic.rx_queue,
        background,
        pfc_watch: WatchParams {
            deadlock_timeout: s.switch.pfc.deadlock_timeout.0,
            storm_window: s.switch.pfc.storm_window.0,
            storm_fraction: s.switch.pfc.storm_fraction,
        },
        clock: ClockPlan {
            base: HostClock { offset_ps: s.nic.clock_offset.0 .0 as i64, drift_ppb: (s.nic.clock_drift_ppm * 1000.0).round() as i64 },
            offset_spread_ps: s.nic.clock_offset_spread.0 .0,
            drift_spread_ppb: (clock_drift_spread_ppm(&s) * 1000.0).round() as u64,
        },
    };
    Ok((s, parts))
}

/// The pcap writer `[output] pcap` asks for (None without it), for the scenario's validated
/// topology: build the run with `build_with_observer(s, &mut writer)` and read the file from
/// the writer afterwards.
pub fn pcap_writer(s: &Scenario, topology: &crate::net::topology::Topology) -> Result<Option<PcapWriter>, ScenarioError> {
    let Some(p) = &s.output.pcap else { return Ok(None) };
    let hosts = super::validate::pcap_hosts(topology, p)?;
    Ok(Some(PcapWriter::new(topology, &hosts, p.max_packets)))
}

impl Simulation {
    /// Validates a scenario and builds its simulation (the same as [`build`]).
    pub fn new(s: Scenario) -> Result<Simulation, ScenarioError> {
        build(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(recovery: &str, nic: &str) -> Scenario {
        let text = format!(
            "name = \"clocks\"\nduration = \"1ms\"\n[topology]\nkind = \"single-switch\"\nhosts = 2\n[transport]\nrecovery = \"{recovery}\"\n[nic]\n{nic}\n[workload]\nkind = \"flow-list\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
        );
        Scenario::from_toml(&text).unwrap()
    }

    #[test]
    fn stride_clocks_default_to_under_1_ppm_apart_as_the_paper_measured() {
        // Two hosts at opposite ends of the spread are 2 x spread apart: under 1 ppm is under
        // 1 ns of STT change per ms (§IV.B).
        let spread = clock_drift_spread_ppm(&scenario("stride", ""));
        assert!(spread > 0.0 && 2.0 * spread <= 1.0, "{spread}");
        // What a scenario sets wins; other schemes keep perfect clocks.
        assert_eq!(clock_drift_spread_ppm(&scenario("stride", "clock_drift_spread_ppm = 25.0")), 25.0);
        assert_eq!(clock_drift_spread_ppm(&scenario("gbn", "")), 0.0);
    }
}
