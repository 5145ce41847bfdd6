//! Scenario files: TOML in, a validated [`Scenario`] out, with errors that name the field.
//!
//! Parsing is strict (unknown keys are errors) and every value with a unit goes through
//! [`crate::sim::units`], so "40Gbs" is caught with a hint of the units allowed. Cross-field checks (known
//! host names, ranges) happen in [`validate`] after the topology is known.

pub mod background;
pub mod budget;
pub mod build;
pub mod collective;
pub mod fct_txt;
pub mod hpcc_config;
pub mod jobs;
pub mod loss;
pub mod lossless;
pub mod nic;
pub mod output;
pub mod relations;
pub mod routing;
pub mod run;
pub mod switch;
pub mod template;
pub mod topology;
pub mod transport;
pub mod validate;
pub mod workload;

pub use background::{BackgroundCfg, BackgroundProfile};
pub use build::{build, build_with_observer, pcap_writer};
pub use loss::{LossCfg, LossModel, PacketKindCfg};
pub use nic::{AckClass, NicCfg};
pub use output::{FctTxtCfg, OutputCfg, PcapCfg, MAX_PCAP_PACKETS};
pub use routing::{EntropyKind, PathsKind, RoutingCfg, RoutingKind};
pub use switch::{DegradedCfg, DisciplineKind, EcnCfg, EcnLinkCfg, PfcCfg, PfcHeadroom, PfcMode, ShapedCfg, SwitchCfg, TrimCfg, TrimVictim, WredCfg, EXPRESSPASS_CREDIT_SHARE};
pub use topology::{TopologyCfg, TopologyKind};
pub use transport::{CcCfg, CcKind, RecoveryCfg, RecoveryKind, TransportCfg};
pub use validate::validate;

/// What a valid scenario cannot do as it seems to ask, one line each naming the field: PFC
/// that cannot be lossless (`lossless`), settings with no effect in the run (`relations`).
pub fn warnings(s: &Scenario, topo: &crate::net::topology::Topology) -> Vec<String> {
    let mut out = lossless::warnings(s, topo);
    out.extend(relations::warnings(s));
    out
}
pub use workload::{FlowCfg, Flows, Pairing, WorkloadCfg, WorkloadKind};
pub use crate::sim::units::{Bw, Dur, Size};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A scenario error: the dotted path of the offending field and what is wrong with it, on one
/// line. The same type as every section's check returns ([`crate::sim::check`]).
pub type ScenarioError = crate::sim::check::FieldError;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration: Dur,
    #[serde(default = "yes")]
    pub stop_when_done: bool,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub nic: NicCfg,
    #[serde(default)]
    pub transport: TransportCfg,
    #[serde(default)]
    pub recovery: RecoveryCfg,
    #[serde(default)]
    pub cc: CcCfg,
    #[serde(default)]
    pub routing: RoutingCfg,
    #[serde(default)]
    pub loss: Vec<LossCfg>,
    /// Unresponsive background traffic into switch egress queues (a traffic generator's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundCfg>,
    /// One `[workload]` table, or several jobs as `[[workload]]` tables (see [`jobs`]).
    pub workload: jobs::Workloads,
    #[serde(default)]
    pub output: OutputCfg,
    /// How the run uses the machine (threads): never what it simulates.
    #[serde(default, skip_serializing_if = "run::RunCfg::is_default")]
    pub run: run::RunCfg,
    /// Directory that relative paths in the scenario (e.g. `workload.cdf`) resolve against:
    /// the scenario file's directory. Not part of the file; empty means the current directory.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

fn default_seed() -> u64 {
    1
}
fn yes() -> bool {
    true
}


/// Refuses TOML nested deeper than the parser takes (tables and arrays about 80 levels deep)
/// before any reader recurses into it: a few hundred levels overflow a recursive reader's
/// stack (Python's `tomllib` raises `RecursionError`).
pub fn check_nesting(text: &str) -> Result<(), ScenarioError> {
    match crate::sim::input::strip_bom(text).parse::<toml::Table>() {
        Err(e) if e.message().contains("recursion limit") => {
            let key = e.span().and_then(|span| key_at(text, span.start)).unwrap_or_default();
            Err(ScenarioError::new(key, "is nested too deeply (tables and arrays at most about 80 levels deep)"))
        }
        _ => Ok(()),
    }
}

impl Scenario {
    /// Parses TOML text; the error names the field (dotted path) that is wrong. A UTF-8 byte
    /// order mark at the start is skipped.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let text = crate::sim::input::strip_bom(text);
        let de = toml::Deserializer::new(text);
        let parsed: Result<Scenario, _> = serde_path_to_error::deserialize(de);
        let scenario = parsed.map_err(|e| {
            let path = e.path().to_string();
            let msg = e.inner().message().trim().replace('\n', " ");
            let msg = if msg.is_empty() { "invalid TOML".to_string() } else { msg };
            let mut field = if path == "." { String::new() } else { path };
            // serde names a missing field only in the message: make it the field.
            if let Some(missing) = msg.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
                field = if field.is_empty() { missing.to_string() } else { format!("{field}.{missing}") };
                return ScenarioError::new(field, "is required");
            }
            // Errors of the TOML layer itself (a number too large for any integer) carry no
            // path, only where they are in the text: name the key written there.
            if field.is_empty() {
                if let Some(key) = e.inner().span().and_then(|span| key_at(text, span.start)) {
                    field = key;
                }
            }
            ScenarioError::new(field, crate::sim::check::with_suggestion(&msg))
        })?;
        Ok(scenario)
    }

    /// The scenario with every default written out, as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serialises")
    }
}

/// The dotted key whose value is at byte `offset` of a TOML text: the last table header before
/// it (`[a.b]`, or `[[a]]` with its index) and the key its line starts with. Best effort, for
/// error messages only.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split_once('=').map(|(k, _)| k.trim().trim_matches('"'))?;
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let mut table = String::new();
    let mut arrays: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for l in before[..line_start].lines() {
        let l = l.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|x| x.split("]]").next()) {
            let name = name.trim().to_string();
            let i = arrays.entry(name.clone()).and_modify(|i| *i += 1).or_insert(0);
            table = format!("{name}[{i}]");
        } else if let Some(name) = l.strip_prefix('[').and_then(|x| x.split(']').next()) {
            table = name.trim().to_string();
        }
    }
    Some(if table.is_empty() { key.to_string() } else { format!("{table}.{key}") })
}
