//! The `[output]` section: what a run writes besides its tables, and the one policy for every
//! file a scenario names: it lies inside the output folder.
//!
//! A scenario file is something researchers share, so nothing in it may write outside the
//! output folder or over the run's own results: a path it names (`fct_txt`, `pcap.file`) is
//! relative, stays below the folder (no `..`, no absolute path, no leading `.`), has components
//! a file system takes (at most 255 bytes, no control character), and is not one of the files
//! the run writes itself ([`RUN_OUTPUTS`]). All of this is checked before the run starts, so a
//! bad name costs no simulation time and leaves no half-written folder.

use super::{Dur, ScenarioError};
use crate::net::topology::Topology;
use crate::sim::units::Time;
use serde::{Deserialize, Serialize};

fn err(field: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, msg)
}

/// The most sample intervals in a run's duration: every sampled series (receivers, watched
/// queues and flows) gets a row per interval.
pub const MAX_SAMPLES: u64 = 1_000_000;

/// `sample_interval` when a scenario leaves it out and its duration is long: a run of 10 ms or
/// more is sampled every 100 us, as it always was.
pub const LONG_RUN_SAMPLE_INTERVAL: Time = Time::from_us(100);

/// Samples a run shorter than that gets at least, over its duration.
pub const MIN_DEFAULT_SAMPLES: u64 = 100;

/// The sampling interval of a run whose scenario sets none: its duration / MIN_DEFAULT_SAMPLES
/// rounded down to a 1-2-5 step (1 ns at least), at most LONG_RUN_SAMPLE_INTERVAL, and at least
/// the interval that keeps within MAX_SAMPLES. So a 175 us incast gets 1 us samples (175 of
/// them), a 1 ms run 10 us, a run of 10 ms or more 100 us.
pub fn default_sample_interval(duration: Time) -> Time {
    let share = duration.0 / MIN_DEFAULT_SAMPLES;
    let mut best = Time::from_ns(1).0;
    let mut decade = best;
    while decade <= share {
        for factor in [1, 2, 5] {
            let step = decade.saturating_mul(factor);
            if step <= share {
                best = step;
            }
        }
        match decade.checked_mul(10) {
            Some(next) => decade = next,
            None => break,
        }
    }
    let floor = duration.0.div_ceil(MAX_SAMPLES);
    Time(best.min(LONG_RUN_SAMPLE_INTERVAL.0).max(floor).max(1))
}

/// The files a run, a sweep point, a report or a reproduction writes into its output folder
/// under fixed names (`python/retx`; `tests/python/test_output_policy.py` checks that every
/// file a run writes is here or named by the scenario). A scenario may not name one of them.
pub const RUN_OUTPUTS: &[&str] = &[
    "flows.parquet",
    "timeseries.parquet",
    "queues.parquet",
    "cc.parquet",
    "pools.parquet",
    "memory.parquet",
    "collectives.parquet",
    "collective_steps.parquet",
    "links.parquet",
    "link_samples.parquet",
    "tier_samples.parquet",
    "summary.json",
    "scenario.toml",
    "throughput.png",
    "fct_cdf.png",
    "slowdown_by_size.png",
    "queues.png",
    "cc.png",
    "pools.png",
    "collective_timeline.png",
    "tier_utilisation.png",
    "link_heatmap.png",
    "report.html",
    "point.json",
    "provenance.json",
    "table.parquet",
    "table.csv",
    "plot.png",
];

/// The longest component of an output path (what Linux and macOS file systems take).
pub const MAX_NAME_BYTES: usize = 255;
/// The longest output path, and the most folders in it.
pub const MAX_PATH_BYTES: usize = 1024;
pub const MAX_PATH_DEPTH: usize = 8;

/// Checks a path a scenario names for a file the run writes (`field` names it) and returns its
/// components: relative to the output folder, below it, each component a plain name.
pub fn output_path(field: &str, path: &str) -> Result<Vec<String>, ScenarioError> {
    let refuse = |why: &str| Err(err(field, format!("{path:?} {why}")));
    if path.is_empty() {
        return refuse("is empty (name a file, e.g. \"trace.pcap\")");
    }
    if path.chars().any(char::is_control) {
        return refuse("holds a control character (a NUL, a newline): not a file name");
    }
    if path.starts_with('/') || path.starts_with('~') || path.as_bytes().get(1) == Some(&b':') {
        return refuse("is absolute: name a file inside the output folder (a relative path such as \"mix/fct.txt\")");
    }
    if path.contains('\\') {
        return refuse("holds a '\\': separate folders with '/'");
    }
    if path.len() > MAX_PATH_BYTES {
        return refuse(&format!("is {} bytes long (at most {MAX_PATH_BYTES})", path.len()));
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() > MAX_PATH_DEPTH {
        return refuse(&format!("has {} components (at most {MAX_PATH_DEPTH})", parts.len()));
    }
    for part in &parts {
        if part.is_empty() || *part == "." || *part == ".." {
            return refuse("leaves the output folder or has an empty component: name a file inside it (no '..', no '//', no trailing '/')");
        }
        if part.starts_with('.') {
            return refuse("has a component starting with '.' (hidden files are not written)");
        }
        if part.len() > MAX_NAME_BYTES {
            return refuse(&format!("has a component of {} bytes (at most {MAX_NAME_BYTES})", part.len()));
        }
        if part.trim() != *part {
            return refuse("has a component that starts or ends with a space");
        }
        if is_reserved_device(part) {
            return refuse("names a device (CON, NUL, COM1, ...), not a file");
        }
    }
    if RUN_OUTPUTS.contains(&parts[0]) {
        return refuse(&format!("is one of the run's own outputs ({}); choose another name", parts[0]));
    }
    Ok(parts.into_iter().map(str::to_string).collect())
}

/// Windows device names, which no file may take on a shared drive.
fn is_reserved_device(part: &str) -> bool {
    let stem = part.split('.').next().unwrap_or("").to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (stem.len() == 4 && (stem.starts_with("COM") || stem.starts_with("LPT")) && stem.as_bytes()[3].is_ascii_digit())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputCfg {
    /// Interval of the receiver throughput time series (and of every other sampled series).
    /// Left out: [`default_sample_interval`] of the duration, which validation writes in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Dur>,
    /// Also write the flows in the HPCC ns-3 simulator's `fct.txt` format: `true` for
    /// `fct.txt` in the output folder, or a path relative to the output folder (an ns-3
    /// config's `mix/fct.txt` goes to `<out>/mix/fct.txt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_txt: Option<FctTxtCfg>,
    /// Egress ports to sample every `sample_interval`, each written "A->B" (node A's port
    /// toward node B): the bytes queued and the peak since the previous sample. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// Flows (by id, their order in the workload) whose sender's congestion control state is
    /// sampled every `sample_interval`: pacing rate, window, bytes in flight. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc_flows: Vec<u32>,
    /// Hosts whose NIC's shared on-chip structures are sampled every `sample_interval`: in use,
    /// the peak since the previous sample and the capacity of each (MELO's receive and send
    /// bits pools in blocks, the QP cache in contexts when it is bounded). Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
    /// Write what some hosts send and receive as RoCEv2 frames into a pcap file (see
    /// `wire::frame` for the layout). Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapCfg>,
    /// Fabric statistics (`links.parquet`, `tier_samples.parquet`, `link_samples.parquet`,
    /// per-switch totals in summary.json): "all", "none" (the default) or a list of
    /// selectors, each "tier:NAME" (every port of a tier, [`Topology::port_tiers`]) or
    /// "A->B" (node A's port toward node B).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<LinksCfg>,
    /// With `links`: per sample interval, a row in `link_samples.parquet` for each of the
    /// `link_series` selected ports that sent the most bytes in it (0: none). Default
    /// [`DEFAULT_LINK_SERIES`] (fewer when the run has so many samples that the rows would pass
    /// [`MAX_LINK_SERIES_ROWS`]), written in by validation when `links` selects some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_series: Option<u32>,
}

/// `[output] links`: "all", "none", or selectors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LinksCfg {
    Word(String),
    List(Vec<String>),
}

/// A word or a list of strings, and anything else refused saying what is allowed (serde's
/// untagged enums say only that no variant matched).
impl<'de> Deserialize<'de> for LinksCfg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = LinksCfg;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"all\", \"none\" or a list of selectors (\"tier:NAME\", \"A->B\")")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LinksCfg, E> {
                Ok(LinksCfg::Word(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<LinksCfg, A::Error> {
                let mut list = Vec::new();
                while let Some(x) = seq.next_element::<String>()? {
                    list.push(x);
                }
                Ok(LinksCfg::List(list))
            }
        }
        d.deserialize_any(V)
    }
}

/// Busiest ports per interval in `link_samples.parquet` when `link_series` is left out.
pub const DEFAULT_LINK_SERIES: u32 = 16;
/// Most rows `link_samples.parquet` may get: `link_series` x samples (about 64 B a row in
/// memory, so at most some 640 MB).
pub const MAX_LINK_SERIES_ROWS: u64 = 10_000_000;

impl Default for OutputCfg {
    fn default() -> Self {
        OutputCfg { sample_interval: None, fct_txt: None, queues: Vec::new(), cc_flows: Vec::new(), pools: Vec::new(), pcap: None, links: None, link_series: None }
    }
}

/// `[output] pcap`: the hosts whose packets are written, how many at most, and the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    /// Host names; each one's sent and received packets are written.
    pub hosts: Vec<String>,
    /// Records kept (the first ones); later packets are not written. Default 100000, at most
    /// 10^7: the file is built in memory.
    #[serde(default = "default_pcap_packets")]
    pub max_packets: u64,
    /// The file, relative to the output folder. Default "trace.pcap".
    #[serde(default = "default_pcap_file")]
    pub file: String,
}

/// Most records a pcap may hold (the file is built in memory: about 10 GB of 1 KB frames).
pub const MAX_PCAP_PACKETS: u64 = 10_000_000;

fn default_pcap_packets() -> u64 {
    100_000
}

fn default_pcap_file() -> String {
    "trace.pcap".into()
}

/// `[output] fct_txt`: on/off, or where the file goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FctTxtCfg {
    On(bool),
    Path(String),
}

impl FctTxtCfg {
    /// The configured path (relative to the output folder), if the file is wanted.
    pub fn path(&self) -> Option<&str> {
        match self {
            FctTxtCfg::On(true) => Some("fct.txt"),
            FctTxtCfg::On(false) => None,
            FctTxtCfg::Path(p) => Some(p),
        }
    }
}

impl OutputCfg {
    /// The sampling interval: as set, else the default for `duration`.
    pub fn interval(&self, duration: Time) -> Time {
        self.sample_interval.map_or_else(|| default_sample_interval(duration), |d| d.0)
    }

    /// Writes the default `sample_interval` in when the scenario left it out, then checks it
    /// against the run's duration (fields by their full names).
    pub fn check_sampling(&mut self, duration: Time) -> Result<(), ScenarioError> {
        let interval = self.interval(duration);
        self.sample_interval = Some(Dur(interval));
        if interval == Time::ZERO {
            return Err(err("output.sample_interval", "must be greater than 0"));
        }
        let samples = duration.0 / interval.0;
        if samples > MAX_SAMPLES {
            let floor = Time(duration.0.div_ceil(MAX_SAMPLES));
            return Err(err(
                "output.sample_interval",
                format!("{interval} gives {samples} samples in duration = {duration} (at most {MAX_SAMPLES}: allowed {floor} or more)"),
            ));
        }
        Ok(())
    }

    /// The files this section names (`fct_txt`, `pcap.file`), each checked by
    /// [`output_path`] and none inside another: (field, path).
    pub fn files(&self) -> Result<Vec<(&'static str, String)>, ScenarioError> {
        let mut named: Vec<(&'static str, Vec<String>)> = Vec::new();
        if let Some(path) = self.fct_txt.as_ref().and_then(FctTxtCfg::path) {
            named.push(("output.fct_txt", output_path("output.fct_txt", path)?));
        }
        if let Some(p) = &self.pcap {
            named.push(("output.pcap.file", output_path("output.pcap.file", &p.file)?));
        }
        for (i, (field, path)) in named.iter().enumerate() {
            for (other, before) in &named[..i] {
                let (short, long) = if path.len() <= before.len() { (path, before) } else { (before, path) };
                if long.starts_with(short) {
                    return Err(err(*field, format!("{:?} collides with {other} ({:?}): two outputs cannot share a name", path.join("/"), before.join("/"))));
                }
            }
        }
        Ok(named.into_iter().map(|(f, p)| (f, p.join("/"))).collect())
    }

    /// The section against the network and the workload's flow count (when known): the files
    /// it names, the pcap's hosts, the watched ports, hosts and flows.
    pub fn check(&self, topo: &Topology, flows: Option<usize>) -> Result<(), ScenarioError> {
        self.files()?;
        if let Some(p) = &self.pcap {
            pcap_hosts(topo, p)?;
        }
        watched_pools(topo, &self.pools)?;
        watched_queues(topo, &self.queues)?;
        selected_links(topo, self)?;
        if let Some(n) = flows {
            watched_flows(&self.cc_flows, n)?;
        }
        Ok(())
    }
}

/// Resolves `[output] queues`: each "A->B" names the egress port of node A toward node B.
pub fn watched_queues(topo: &Topology, queues: &[String]) -> Result<Vec<(usize, usize)>, ScenarioError> {
    queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let field = format!("output.queues[{i}]");
            if q.trim() == "all" {
                return Err(err(field, "\"all\": name ports here (\"A->B\"); for every link's statistics use output.links = \"all\""));
            }
            super::topology::port(topo, q, &field)
        })
        .collect()
}

/// Writes `link_series`'s default in when `links` selects something, and checks it against
/// the run's samples (after [`OutputCfg::check_sampling`]).
pub fn check_link_series(o: &mut OutputCfg, duration: Time) -> Result<(), ScenarioError> {
    let wanted = match &o.links {
        None => false,
        Some(LinksCfg::Word(w)) => w != "none",
        Some(LinksCfg::List(l)) => !l.is_empty(),
    };
    let samples = duration.0.div_ceil(o.interval(duration).0.max(1)).max(1);
    let Some(n) = o.link_series else {
        if wanted {
            // As many as keep within the rows allowed (16 unless a run has over 625,000 samples).
            o.link_series = Some(DEFAULT_LINK_SERIES.min((MAX_LINK_SERIES_ROWS / samples) as u32));
        }
        return Ok(());
    };
    if !wanted {
        return Err(err("output.link_series", "needs output.links (e.g. links = \"all\"): it picks from the selected links"));
    }
    let rows = samples.saturating_mul(n as u64);
    if rows > MAX_LINK_SERIES_ROWS {
        return Err(err(
            "output.link_series",
            format!("{n} links x {samples} samples = {rows} rows (at most {MAX_LINK_SERIES_ROWS}): ask for fewer links or a longer sample_interval"),
        ));
    }
    Ok(())
}

/// Resolves `[output] links` to the ports it selects, in port order (None: "none" or left
/// out). Each selector is "tier:NAME" or "A->B"; a port named twice counts once.
pub fn selected_links(topo: &Topology, o: &OutputCfg) -> Result<Option<Vec<u32>>, ScenarioError> {
    let list = match &o.links {
        None => return Ok(None),
        Some(LinksCfg::Word(w)) if w == "none" => return Ok(None),
        Some(LinksCfg::Word(w)) if w == "all" => return Ok(Some((0..topo.port_count() as u32).collect())),
        Some(LinksCfg::Word(w)) => {
            return Err(err("output.links", format!("{w:?} is not \"all\", \"none\" or a list of selectors (e.g. [\"tier:host-down\", \"sw0->h1\"])")));
        }
        Some(LinksCfg::List(l)) if l.is_empty() => return Ok(None),
        Some(LinksCfg::List(l)) => l,
    };
    let mut chosen = vec![false; topo.port_count()];
    let mut tiers: Option<(Vec<String>, Vec<u16>)> = None;
    for (i, sel) in list.iter().enumerate() {
        let field = format!("output.links[{i}]");
        if let Some(name) = sel.strip_prefix("tier:") {
            let (names, tier_of) = tiers.get_or_insert_with(|| topo.port_tiers());
            let Some(t) = names.iter().position(|n| n == name.trim()) else {
                return Err(err(field, format!("{name:?} is not a tier of this network (its tiers: {})", names.join(", "))));
            };
            for (p, &tp) in tier_of.iter().enumerate() {
                if tp as usize == t {
                    chosen[p] = true;
                }
            }
        } else if sel.contains("->") {
            let (a, b) = super::topology::port(topo, sel, &field)?;
            let p = topo.port_toward(a, b).expect("a validated link");
            chosen[p] = true;
        } else {
            return Err(err(field, format!("{sel:?}: write \"tier:NAME\" (e.g. \"tier:host-down\") or a port \"A->B\" (node A's port toward node B)")));
        }
    }
    Ok(Some(chosen.iter().enumerate().filter(|(_, &c)| c).map(|(p, _)| p as u32).collect()))
}

/// Resolves `[output] pcap`: the node ids of its hosts, after checking every field.
pub fn pcap_hosts(topo: &Topology, p: &PcapCfg) -> Result<Vec<usize>, ScenarioError> {
    if p.hosts.is_empty() {
        return Err(err("output.pcap.hosts", "name at least one host, e.g. [\"h0\"]"));
    }
    if !(1..=MAX_PCAP_PACKETS).contains(&p.max_packets) {
        return Err(err("output.pcap.max_packets", format!("{} is out of range (allowed 1..={})", p.max_packets, MAX_PCAP_PACKETS)));
    }
    output_path("output.pcap.file", &p.file)?;
    super::topology::host_list(topo, &p.hosts, "output.pcap.hosts")
}

/// Resolves `[output] pools`: the node ids of the hosts whose NIC pools are sampled.
pub fn watched_pools(topo: &Topology, hosts: &[String]) -> Result<Vec<usize>, ScenarioError> {
    super::topology::host_list(topo, hosts, "output.pools")
}

/// Checks `[output] cc_flows` against the workload's `flows` flows.
pub fn watched_flows(ids: &[u32], flows: usize) -> Result<Vec<u32>, ScenarioError> {
    for (i, &id) in ids.iter().enumerate() {
        if id as usize >= flows {
            let have = if flows == 0 { "the workload has no flows".to_string() } else { format!("flows are 0..={}", flows - 1) };
            return Err(err(format!("output.cc_flows[{i}]"), format!("flow {id} does not exist ({have})")));
        }
    }
    Ok(ids.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_paths_inside_the_folder_are_taken_as_components() {
        assert_eq!(output_path("f", "trace.pcap").unwrap(), vec!["trace.pcap"]);
        assert_eq!(output_path("f", "mix/fct.txt").unwrap(), vec!["mix", "fct.txt"]);
        // A run output's name is fine below a folder of the scenario's own.
        assert_eq!(output_path("f", "mix/summary.json").unwrap(), vec!["mix", "summary.json"]);
        let deepest = vec!["d"; MAX_PATH_DEPTH].join("/");
        assert_eq!(output_path("f", &deepest).unwrap().len(), MAX_PATH_DEPTH);
        assert_eq!(output_path("f", &"x".repeat(MAX_NAME_BYTES)).unwrap().len(), 1);
        assert!(output_path("f", "CONSOLE.txt").is_ok() && output_path("f", "COMX").is_ok() && output_path("f", "LPT10").is_ok());
    }

    #[test]
    fn every_way_out_of_the_folder_is_refused_naming_the_field() {
        for (path, why) in [
            ("", "is empty"),
            ("/tmp/x", "is absolute"),
            ("~/x", "is absolute"),
            ("~x", "is absolute"),
            ("C:x", "is absolute"),
            ("c:/x", "is absolute"),
            ("a\\b", "holds a '\\'"),
            ("..", "leaves the output folder"),
            ("a/../../b", "leaves the output folder"),
            ("./a", "leaves the output folder"),
            ("a//b", "empty component"),
            ("a/", "empty component"),
            (".hidden", "starting with '.'"),
            ("a/.b", "starting with '.'"),
            (" a", "starts or ends with a space"),
            ("a /b", "starts or ends with a space"),
            ("a\0b", "control character"),
            ("a\nb", "control character"),
            ("CON", "names a device"),
            ("nul.txt", "names a device"),
            ("COM1.log", "names a device"),
            ("lpt9", "names a device"),
            ("summary.json", "one of the run's own outputs"),
            ("flows.parquet/x", "one of the run's own outputs"),
        ] {
            let e = output_path("output.pcap.file", path).unwrap_err();
            assert_eq!(e.field, "output.pcap.file", "{path:?}");
            assert!(e.message.contains(why), "{path:?}: {}", e.message);
            assert!(!e.to_string().contains('\n'), "{path:?}");
        }
        let too_deep = vec!["d"; MAX_PATH_DEPTH + 1].join("/");
        assert!(output_path("f", &too_deep).unwrap_err().message.contains("components (at most 8)"));
        assert!(output_path("f", &"x".repeat(MAX_NAME_BYTES + 1)).unwrap_err().message.contains("a component of 256 bytes"));
        let long = vec!["x".repeat(200); 6].join("/");
        assert!(output_path("f", &long).unwrap_err().message.contains("at most 1024"));
        assert!(output_path("f", &vec!["x".repeat(203); 5].join("/")).is_ok(), "1019 bytes in 5 components");
    }

    #[test]
    fn two_outputs_of_one_section_cannot_share_a_name_or_nest() {
        let with = |fct: &str, pcap: &str| OutputCfg {
            fct_txt: Some(FctTxtCfg::Path(fct.into())),
            pcap: Some(PcapCfg { hosts: vec!["h0".into()], max_packets: 1, file: pcap.into() }),
            ..OutputCfg::default()
        };
        assert_eq!(with("a/fct.txt", "a/t.pcap").files().unwrap(), vec![("output.fct_txt", "a/fct.txt".to_string()), ("output.pcap.file", "a/t.pcap".to_string())]);
        for (fct, pcap) in [("x", "x"), ("x/fct.txt", "x"), ("x", "x/t.pcap")] {
            let e = with(fct, pcap).files().unwrap_err();
            assert_eq!(e.field, "output.pcap.file", "{fct} {pcap}");
            assert!(e.message.contains("collides with output.fct_txt"), "{}", e.message);
        }
        assert!(with("xy", "x").files().is_ok(), "a prefix of a name is not a folder of it");
        let on = OutputCfg { fct_txt: Some(FctTxtCfg::On(true)), ..OutputCfg::default() };
        assert_eq!(on.files().unwrap(), vec![("output.fct_txt", "fct.txt".to_string())]);
        let off = OutputCfg { fct_txt: Some(FctTxtCfg::On(false)), ..OutputCfg::default() };
        assert!(off.files().unwrap().is_empty());
    }

    #[test]
    fn sampling_is_bounded_by_the_duration() {
        let every = |t: Time| OutputCfg { sample_interval: Some(Dur(t)), ..OutputCfg::default() };
        assert!(every(Time::from_us(1)).check_sampling(Time::from_ms(1000)).is_ok(), "exactly 10^6 samples");
        let e = every(Time::from_us(1)).check_sampling(Time(1_000_001_000_000)).unwrap_err();
        assert!(e.message.contains("at most 1000000: allowed 1000001ps or more"), "{}", e.message);
        assert_eq!(every(Time::ZERO).check_sampling(Time::from_ms(1)).unwrap_err().message, "must be greater than 0");
    }

    #[test]
    fn an_unset_interval_gives_a_short_run_a_hundred_samples_and_a_long_one_100us() {
        let d = |t: Time| default_sample_interval(t);
        assert_eq!(d(Time::from_us(175)), Time::from_ns(1000), "175 us: 1 us steps (175 samples)");
        assert_eq!(d(Time::from_ms(1)), Time::from_us(10));
        assert_eq!(d(Time::from_us(300)), Time::from_ns(2000), "1-2-5 steps, rounded down");
        assert_eq!(d(Time::from_us(600)), Time::from_ns(5000));
        assert_eq!(d(Time::from_us(9999)), Time::from_us(50));
        assert_eq!(d(Time::from_ms(10)), Time::from_us(100), "10 ms and longer: 100 us, as always");
        assert_eq!(d(Time::from_ms(50)), Time::from_us(100));
        assert_eq!(d(Time::from_ns(50)), Time::from_ns(1), "1 ns at least");
        let hours = Time::from_ms(3_600_000);
        assert_eq!(d(hours), Time(hours.0.div_ceil(MAX_SAMPLES)), "within MAX_SAMPLES");
        for us in [1, 3, 7, 20, 99, 101, 175, 450, 999, 5000, 12345] {
            let t = d(Time::from_us(us));
            let samples = Time::from_us(us).0 / t.0;
            assert!(samples >= MIN_DEFAULT_SAMPLES || t == LONG_RUN_SAMPLE_INTERVAL, "{us} us: {samples} samples");
            assert!(samples < 5 * MIN_DEFAULT_SAMPLES / 2 + 1 || t == Time::from_ns(1), "{us} us: {samples} samples");
        }
        // Set, it stays; unset, validation writes the default in.
        let mut set = OutputCfg { sample_interval: Some(Dur(Time::from_us(7))), ..OutputCfg::default() };
        set.check_sampling(Time::from_us(175)).unwrap();
        assert_eq!(set.sample_interval, Some(Dur(Time::from_us(7))));
        let mut unset = OutputCfg::default();
        unset.check_sampling(Time::from_us(175)).unwrap();
        assert_eq!(unset.sample_interval, Some(Dur(Time::from_us(1))));
    }
}
