//! The `[workload]` section: turns it into the flows a run starts, with the generators of
//! [`crate::workload`].

use super::{Pairing, ScenarioError, WorkloadCfg, WorkloadKind};
use crate::net::topology::{NodeKind, Topology};
use crate::sim::units::Time;
use crate::transport::FlowSpec;
use crate::workload::cdf::FlowSizeCdf;
use crate::workload::poisson::{self, Arrivals, Source};
use crate::workload::FlowDef;
use std::path::Path;

/// The flows of a validated workload section, sorted by start time (stable). `seed` is the
/// scenario's root seed; a `cdf` path is relative to `base_dir`. Errors only if the workload
/// was not validated (or its CDF file changed since).
pub fn flows(cfg: &WorkloadCfg, topo: &Topology, seed: u64, base_dir: &Path) -> Result<Vec<FlowDef>, ScenarioError> {
    let node = |name: &str| topo.find(name).expect("validated host name");
    let mut out: Vec<FlowDef> = match cfg.kind {
        WorkloadKind::LongFlows => cfg
            .pairs
            .iter()
            .map(|(a, b)| FlowDef::new(node(a), node(b), FlowSpec::ENDLESS, Time::ZERO))
            .collect(),
        WorkloadKind::FlowList => cfg
            .flows
            .list()
            .iter()
            .map(|f| FlowDef { class: f.class.unwrap_or(1), colour: f.colour.unwrap_or(0), ..FlowDef::new(node(&f.src), node(&f.dst), f.size.0, f.start.0) })
            .collect(),
        WorkloadKind::Poisson => {
            let cdf = poisson_cdf(cfg, base_dir)?;
            let sources = poisson_sources(cfg, topo)?;
            let a = Arrivals {
                cdf: &cdf,
                load: cfg.load.expect("validated load"),
                start: cfg.start.map_or(Time::ZERO, |d| d.0),
                until: cfg.until.map(|d| d.0),
                max_flows: cfg.flows.count(),
                seed,
            };
            poisson::generate(topo, &sources, &a)
        }
        WorkloadKind::HpccFlows => hpcc_flows(cfg, base_dir)?
            .into_iter()
            .map(|f| FlowDef::new(f.src, f.dst, f.size, f.start))
            .collect(),
        WorkloadKind::Incast => {
            let dst = node(cfg.receiver.as_deref().expect("validated receiver"));
            let senders = incast_senders(cfg, topo)?;
            let size = cfg.size.expect("validated size").0;
            let (start, interval) = (cfg.start.map_or(Time::ZERO, |d| d.0), cfg.interval.map_or(Time::ZERO, |d| d.0));
            (0..cfg.rounds.unwrap_or(1) as u64)
                .flat_map(|r| {
                    let t = start + Time(interval.0 * r);
                    senders.iter().map(move |&src| FlowDef::new(src, dst, size, t))
                })
                .collect()
        }
    };
    out.sort_by_key(|f| f.start);
    Ok(out)
}

/// The flows of an hpcc-flows workload, read from its file (node ids as in the topology).
pub fn hpcc_flows(cfg: &WorkloadCfg, base_dir: &Path) -> Result<Vec<crate::net::hpcc::HpccFlow>, ScenarioError> {
    let file = cfg.file.as_deref().ok_or_else(|| ScenarioError::new("workload.file", "hpcc-flows needs file = \"flows.txt\""))?;
    let path = base_dir.join(file);
    let text = crate::sim::input::read_text(&path, crate::sim::input::MAX_FLOW_FILE).map_err(|e| ScenarioError::new("workload.file", e))?;
    crate::net::hpcc::parse_flows(&text).map_err(|e| ScenarioError::new("workload.file", format!("{}: {e}", path.display())))
}

/// The flow-size table of a poisson workload, with its interpolation (default linear).
pub fn poisson_cdf(cfg: &WorkloadCfg, base_dir: &Path) -> Result<FlowSizeCdf, ScenarioError> {
    let spec = cfg.cdf.as_deref().ok_or_else(|| {
        ScenarioError::new("workload.cdf", "poisson needs a flow-size table: a built-in name such as \"websearch_hpcc\" or a path")
    })?;
    FlowSizeCdf::load(spec, base_dir, cfg.interpolation.unwrap_or_default()).map_err(|e| ScenarioError::new("workload.cdf", e))
}

/// The senders of a poisson workload and where each sends (host names already checked).
pub fn poisson_sources(cfg: &WorkloadCfg, topo: &Topology) -> Result<Vec<Source>, ScenarioError> {
    let node = |name: &str| topo.find(name).expect("validated host name");
    Ok(match cfg.pairing.unwrap_or(Pairing::Random) {
        Pairing::Pairs => poisson::sources_from_pairs(&cfg.pairs.iter().map(|(a, b)| (node(a), node(b))).collect::<Vec<_>>()),
        Pairing::Random => poisson::sources_random(topo),
        Pairing::CrossLeafHalves => poisson::sources_cross_leaf_halves(topo).map_err(|e| ScenarioError::new("workload.pairing", e))?,
    })
}

/// The senders of an incast: `senders` by name, or the first `fan_in` hosts other than the
/// receiver, in host order.
pub fn incast_senders(cfg: &WorkloadCfg, topo: &Topology) -> Result<Vec<usize>, ScenarioError> {
    let node = |name: &str| topo.find(name).filter(|&n| topo.nodes[n].kind == NodeKind::Host);
    let receiver = cfg.receiver.as_deref().and_then(node).ok_or_else(|| ScenarioError::new("workload.receiver", "incast needs a receiver host"))?;
    if !cfg.senders.is_empty() {
        return Ok(cfg.senders.iter().map(|s| node(s).expect("validated host name")).collect());
    }
    let n = cfg.fan_in.ok_or_else(|| ScenarioError::new("workload.senders", "incast needs senders = [\"h1\", ...] or fan_in = N"))?;
    let others: Vec<usize> = topo.hosts().filter(|&h| h != receiver).collect();
    if n == 0 || n as usize > others.len() {
        return Err(ScenarioError::new("workload.fan_in", format!("{n} is out of range (allowed 1..={})", others.len())));
    }
    Ok(others[..n as usize].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{validate, Scenario};
    use crate::net::topology::Topology;
    use crate::sim::units::Time;

    fn scenario(topology: &str, workload: &str) -> Scenario {
        let text = format!("name = \"t\"\nduration = \"10ms\"\n[topology]\n{topology}\n[workload]\n{workload}\n");
        Scenario::from_toml(&text).unwrap()
    }

    /// Validates and generates; the error is the one-line message a user sees.
    fn generate(topology: &str, workload: &str) -> Result<(Scenario, Topology, Vec<FlowDef>), String> {
        let mut s = scenario(topology, workload);
        s.base_dir = env!("CARGO_MANIFEST_DIR").into();
        let topo = validate(&mut s).map_err(|e| e.to_string())?;
        let defs = flows(&s.workload, &topo, s.seed, &s.base_dir).map_err(|e| e.to_string())?;
        Ok((s, topo, defs))
    }

    const LEAF_SPINE: &str = "kind = \"leaf-spine\"\nleaves = 4\nhosts_per_leaf = 2";

    #[test]
    fn poisson_cross_leaf_halves_from_a_scenario() {
        let w = "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\npairing = \"cross-leaf-halves\"\nuntil = \"20ms\"\nstart = \"1ms\"";
        let (s, _, defs) = generate(LEAF_SPINE, w).unwrap();
        assert!(!defs.is_empty());
        assert!(defs.iter().all(|f| f.start >= Time::from_ms(1) && f.start < Time::from_ms(20)));
        let resolved = s.to_toml();
        assert!(resolved.contains("interpolation = \"linear\""), "{resolved}");
        // The resolved scenario parses back to the same flows.
        let mut again = Scenario::from_toml(&resolved).unwrap();
        let topo = validate(&mut again).unwrap();
        assert_eq!(flows(&again.workload, &topo, again.seed, Path::new(".")).unwrap(), defs);
    }

    #[test]
    fn cross_leaf_halves_partners_by_name() {
        let w = "kind = \"poisson\"\ncdf = \"homa_w1\"\ninterpolation = \"step\"\nload = 0.3\npairing = \"cross-leaf-halves\"\nflows = 2000";
        // h0..h3 (leaves 0, 1) send to h4..h7 (leaves 2, 3): host i -> host i + 4.
        let (_, topo, defs) = generate(LEAF_SPINE, w).unwrap();
        let name = |n: usize| topo.nodes[n].name[1..].parse::<u32>().unwrap();
        assert_eq!(defs.len(), 2000);
        assert!(defs.iter().all(|f| name(f.dst) == name(f.src) + 4 && name(f.src) < 4));
    }

    #[test]
    fn poisson_pairs_and_cdf_path() {
        let w = "kind = \"poisson\"\ncdf = \"workloads/fb_hadoop_hpcc.txt\"\nload = 0.3\npairs = [[\"h0\", \"h1\"]]\nflows = 500";
        let (s, _, defs) = generate("kind = \"single-switch\"", w).unwrap();
        assert_eq!(s.workload.pairing, Some(Pairing::Pairs), "pairs given: pairing defaults to pairs");
        assert_eq!(defs.len(), 500);
        assert!(defs.iter().all(|f| f.src == defs[0].src && f.dst == defs[1].dst && f.size >= 1));
        let resolved = s.to_toml();
        assert!(resolved.contains("flows = 500"), "{resolved}");
    }

    #[test]
    fn incast_from_a_scenario() {
        let w = "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 3\nsize = \"64KB\"\nrounds = 2\ninterval = \"100us\"";
        let (_, topo, defs) = generate("kind = \"single-switch\"\nhosts = 8", w).unwrap();
        let names: Vec<(String, String, u64, u64)> = defs
            .iter()
            .map(|f| (topo.nodes[f.src].name.clone(), topo.nodes[f.dst].name.clone(), f.size, f.start.0 / 1_000_000))
            .collect();
        let want: Vec<(String, String, u64, u64)> =
            [0, 100].iter().flat_map(|&t| ["h1", "h2", "h3"].map(|h| (h.to_string(), "h0".to_string(), 64_000, t))).collect();
        assert_eq!(names, want);
        let w = "kind = \"incast\"\nreceiver = \"h3\"\nsenders = [\"h0\", \"h2\"]\nsize = \"1KB\"";
        let (_, _, defs) = generate("kind = \"single-switch\"\nhosts = 4", w).unwrap();
        assert_eq!(defs.len(), 2);
    }

    #[test]
    fn workload_errors_name_the_field() {
        let ss = "kind = \"single-switch\"\nhosts = 4";
        let cases = [
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 1.5\nflows = 10", "workload.load: 1.5 is out of range (allowed 0..=1)"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.0\nflows = 10", "workload.load: must be greater than 0"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = 10", "workload.cdf: unknown workload \"websearch\" (built in: websearch_hpcc, "),
            (ss, "kind = \"poisson\"\ncdf = \"nope/x.txt\"\nload = 0.5\nflows = 10", "workload.cdf: cannot read "),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5", "workload.until: poisson needs until"),
            (ss, "kind = \"poisson\"\nload = 0.5\nflows = 3", "workload.cdf: poisson needs a flow-size table"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nflows = 3", "workload.load: poisson needs load"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairing = \"cross-leaf-halves\"", "workload.pairing: \"cross-leaf-halves\" needs a leaf-spine"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairing = \"random\"\npairs = [[\"h0\", \"h1\"]]", "workload.pairs: only used with pairing = \"pairs\""),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 3\npairs = [[\"h0\", \"h9\"]]", "workload.pairs[0]: unknown host \"h9\""),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = 0", "workload.flows: 0 is out of range"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nuntil = \"5000s\"", "workload.until: about "),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nuntil = \"1ms\"\nstart = \"2ms\"", "workload.until: must be later than workload.start"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\nload = 0.5\nflows = [{ src = \"h0\", dst = \"h1\", size = \"1KB\" }]", "workload.flows: poisson takes a flow count"),
            (ss, "kind = \"poisson\"\ncdf = \"websearch_hpcc\"\ninterpolation = \"cubic\"\nload = 0.5\nflows = 3", "workload.interpolation: unknown variant `cubic`"),
            (ss, "kind = \"long-flows\"\npairs = [[\"h0\", \"h1\"]]\nload = 0.5", "workload.load: is not used by kind = \"long-flows\""),
            (ss, "kind = \"flow-list\"\nflows = 3", "workload.flows: flow-list needs a list of flows, not a count"),
            (ss, "kind = \"incast\"\nsize = \"1KB\"\nfan_in = 2", "workload.receiver: incast needs a receiver"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"", "workload.senders: incast needs senders"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\nfan_in = 4", "workload.fan_in: 4 is out of range (allowed 1..=3)"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"1KB\"\nsenders = [\"h1\", \"h0\"]", "workload.senders[1]: the receiver cannot also send"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2", "workload.size: incast needs the size"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2\nsize = \"1KB\"\nrounds = 3", "workload.interval: more than one round needs"),
            (ss, "kind = \"incast\"\nreceiver = \"h0\"\nfan_in = 2\nsize = \"1KB\"\ncdf = \"homa_w1\"", "workload.cdf: is not used by kind = \"incast\""),
        ];
        for (topo, w, want) in cases {
            let text = format!("name = \"t\"\nduration = \"10ms\"\n[topology]\n{topo}\n[workload]\n{w}\n");
            let got = match Scenario::from_toml(&text) {
                Err(e) => e.to_string(),
                Ok(mut s) => validate(&mut s).err().map(|e| e.to_string()).unwrap_or_default(),
            };
            assert!(got.starts_with(want), "{w:?}\n  got:  {got}\n  want: {want}...");
        }
    }

    #[test]
    fn poisson_scenario_runs_to_completion() {
        let text = r#"
            name = "poisson"
            duration = "50ms"
            [topology]
            kind = "single-switch"
            hosts = 4
            [workload]
            kind = "poisson"
            cdf = "fb_hadoop_hpcc"
            load = 0.3
            pairing = "random"
            flows = 40
        "#;
        let out = crate::run_toml(text).unwrap();
        assert_eq!(out.flows.len(), 40);
        assert!(out.flows.iter().all(|f| f.finish.is_some()), "every flow completes");
    }
}
