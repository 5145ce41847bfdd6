//! The HPCC ns-3 simulator's run configuration (`simulation/mix/config.txt`, read by
//! `scratch/third.cc` of alibaba-edu/High-Precision-Congestion-Control): `KEY value` lines
//! turned into a [`Scenario`] with `kind = "hpcc-file"` topology and `kind = "hpcc-flows"`
//! workload.
//!
//! Every key either maps to the retx setting that does what ns-3 does with it, is accepted
//! because its value is what retx does anyway (or only matters to a congestion control retx
//! does not run), or is an error naming the key and the values retx supports. A key third.cc
//! does not read is an error too. A key left out takes third.cc's default, as ns-3 would.

use super::{AckClass, CcKind, Dur, EcnLinkCfg, FctTxtCfg, LossCfg, LossModel, PfcMode, RecoveryKind, Scenario, ScenarioError, Size};
use crate::sim::check::shown;
use crate::sim::units::{parse_rate, Bw, Rate, Time, MAX_TIME};
use crate::transport::cc::dcqcn::{DcqcnParams, DcqcnPreset};
use crate::transport::common::rate_window::RateWindow;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads a config file; its TOPOLOGY_FILE, FLOW_FILE and FCT_OUTPUT_FILE resolve against its
/// directory. The scenario is named after the file.
pub fn read(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = crate::sim::input::read_text(path, crate::sim::input::MAX_CONFIG_FILE).map_err(|e| ScenarioError::new("", e))?;
    // The name names the output folder: the file's stem with anything a name may not hold
    // (validate::check_name) replaced by '_'.
    let stem = path.file_stem().map_or("hpcc-config".into(), |s| s.to_string_lossy().into_owned());
    let mut name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '=' | ',') { c } else { '_' }).take(super::validate::MAX_NAME - 1).collect();
    if name.starts_with('.') || name.is_empty() {
        name.insert(0, '_');
    }
    parse(&text, path.parent().unwrap_or(Path::new("")), &name)
}

/// The keys of one config, each with its value tokens; a key is consumed as it is mapped. The
/// line each key is on stays known, for errors.
struct Keys {
    values: BTreeMap<String, Vec<String>>,
    lines: BTreeMap<String, usize>,
}

fn err(key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(key, msg)
}

/// A number a key may hold: an integer as it parses; a real only finite and not negative (no
/// key of third.cc takes a negative, infinite or NaN value, and one would become 0 or
/// `u64::MAX` when turned into a time or a size).
trait Number: std::str::FromStr {
    fn usable(&self) -> bool {
        true
    }
}
impl Number for u32 {}
impl Number for u64 {}
impl Number for usize {}
impl Number for f64 {
    fn usable(&self) -> bool {
        self.is_finite() && *self >= 0.0
    }
}

/// The most link speeds a `*_MAP` key may list (ns-3 configs list two or three).
const MAX_MAP_ENTRIES: usize = 64;

impl Keys {
    fn parse(text: &str) -> Result<Keys, ScenarioError> {
        let (mut values, mut lines) = (BTreeMap::new(), BTreeMap::new());
        for (n, line) in text.lines().enumerate() {
            let mut tokens = line.split_whitespace();
            let Some(key) = tokens.next() else { continue };
            if key.starts_with('#') {
                continue;
            }
            let here = |msg: &str| err(&format!("{key} (line {})", n + 1), msg);
            if !KNOWN.contains(&key) {
                return Err(here("unknown key (not a key of HPCC ns-3 third.cc)"));
            }
            if values.insert(key.to_string(), tokens.map(str::to_string).collect()).is_some() {
                return Err(here("is given twice"));
            }
            lines.insert(key.to_string(), n + 1);
        }
        Ok(Keys { values, lines })
    }

    /// Whether the config gives `key`.
    fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// The tokens of `key`, consumed.
    fn take(&mut self, key: &str) -> Option<Vec<String>> {
        self.values.remove(key)
    }

    /// The single value of `key`, or third.cc's `default` when the key is absent.
    fn one(&mut self, key: &str, default: Option<&str>) -> Result<Option<String>, ScenarioError> {
        match self.take(key) {
            None => Ok(default.map(str::to_string)),
            Some(v) if v.len() == 1 => Ok(v.into_iter().next()),
            Some(v) => Err(err(key, format!("expects one value, found {}", v.len()))),
        }
    }

    fn num<T: Number>(&mut self, key: &str, default: Option<&str>) -> Result<Option<T>, ScenarioError> {
        match self.one(key, default)? {
            None => Ok(None),
            Some(v) => match v.parse::<T>() {
                Ok(x) if x.usable() => Ok(Some(x)),
                Ok(_) => Err(err(key, format!("{v:?} is not a finite, non-negative number"))),
                Err(_) => Err(err(key, format!("{v:?} is not a number"))),
            },
        }
    }

    fn required<T: Number>(&mut self, key: &str) -> Result<T, ScenarioError> {
        self.num(key, None)?.ok_or_else(|| err(key, "is missing (third.cc has no usable default)"))
    }

    /// A key whose only supported value is `want` (what retx does anyway); `why` says what
    /// ns-3 does with it.
    fn only(&mut self, key: &str, default: Option<&str>, want: &str, why: &str) -> Result<(), ScenarioError> {
        match self.one(key, default)? {
            Some(v) if v.parse::<f64>().ok() != want.parse::<f64>().ok() || v.parse::<f64>().is_err() => {
                Err(err(key, format!("{v} is not supported ({why}; supported: {want})")))
            }
            _ => Ok(()),
        }
    }

    /// A key that only matters to a congestion control retx does not run (HPCC, TIMELY): any
    /// value is accepted.
    fn unused(&mut self, key: &str) {
        self.take(key);
    }

    /// `KEY n rate value rate value ...`, rates in bit/s, values finite and not negative.
    fn rate_map(&mut self, key: &str) -> Result<Vec<(u64, f64)>, ScenarioError> {
        let v = self.take(key).ok_or_else(|| err(key, "is missing (ns-3 needs a value for every link speed)"))?;
        let bad = || err(key, "expects `count rate value rate value ...` (rates in bit/s, values finite and not negative)");
        let n: usize = v.first().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        if n > MAX_MAP_ENTRIES {
            return Err(err(key, format!("{n} link speeds is out of range (allowed up to {MAX_MAP_ENTRIES})")));
        }
        if v.len() != 1 + 2 * n {
            return Err(bad());
        }
        let value = |t: &str| t.parse::<f64>().ok().filter(Number::usable).ok_or_else(bad);
        v[1..].chunks(2).map(|p| Ok((p[0].parse().map_err(|_| bad())?, value(&p[1])?))).collect()
    }

    /// An error naming a key also names its line, when the config gives the key.
    fn locate(&self, mut e: ScenarioError) -> ScenarioError {
        if let Some(line) = self.lines.get(&e.field) {
            e.field = format!("{} (line {line})", e.field);
        }
        e
    }
}

/// Every key third.cc reads.
const KNOWN: &[&str] = &[
    "ENABLE_QCN", "USE_DYNAMIC_PFC_THRESHOLD", "CLAMP_TARGET_RATE", "PAUSE_TIME", "DATA_RATE", "LINK_DELAY",
    "PACKET_PAYLOAD_SIZE", "L2_CHUNK_SIZE", "L2_ACK_INTERVAL", "L2_BACK_TO_ZERO", "TOPOLOGY_FILE", "FLOW_FILE",
    "TRACE_FILE", "TRACE_OUTPUT_FILE", "SIMULATOR_STOP_TIME", "ALPHA_RESUME_INTERVAL", "RP_TIMER", "EWMA_GAIN",
    "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI", "ERROR_RATE_PER_LINK", "CC_MODE", "RATE_DECREASE_INTERVAL",
    "MIN_RATE", "FCT_OUTPUT_FILE", "HAS_WIN", "GLOBAL_T", "MI_THRESH", "VAR_WIN", "FAST_REACT", "U_TARGET",
    "INT_MULTI", "RATE_BOUND", "ACK_HIGH_PRIO", "DCTCP_RATE_AI", "PFC_OUTPUT_FILE", "LINK_DOWN", "ENABLE_TRACE",
    "KMAX_MAP", "KMIN_MAP", "PMAX_MAP", "BUFFER_SIZE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END",
    "MULTI_RATE", "SAMPLE_FEEDBACK", "PINT_LOG_BASE", "PINT_PROB",
];

/// An ns-3 `DataRate` string ("20Mb/s", "100Gbps", "1000000000" bit/s).
fn ns3_rate(key: &str, v: &str) -> Result<Rate, ScenarioError> {
    let normal = v.replace("b/s", "bps");
    let plain = normal.parse::<u64>().ok().map(Rate);
    plain.or_else(|| parse_rate(&normal)).ok_or_else(|| err(key, format!("{v:?} is not a rate such as \"20Mb/s\"")))
}

/// A time in microseconds (a finite, non-negative number: [`Keys::num`]), refused beyond the
/// engine's range.
fn micros(key: &str, v: f64) -> Result<Dur, ScenarioError> {
    let ps = v * 1e6;
    if ps > MAX_TIME.0 as f64 {
        return Err(err(key, format!("{v:?} us is beyond the engine's range (at most {MAX_TIME})")));
    }
    Ok(Dur(Time(ps.round() as u64)))
}

/// A file named in the config: relative to its directory, or, since the files name paths
/// relative to ns-3's `simulation/` folder (`mix/fat.txt`), the file name in that directory.
/// Returned relative to `dir`, the scenario's base directory.
fn input_file(key: &str, v: &str, dir: &Path) -> Result<String, ScenarioError> {
    if dir.join(v).is_file() {
        return Ok(v.to_string());
    }
    let name = Path::new(v).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !name.is_empty() && dir.join(&name).is_file() {
        return Ok(name);
    }
    Err(err(key, format!("{v}: no such file (tried {} and {})", shown(&dir.join(v)), shown(&dir.join(&name)))))
}

/// Parses config text; files resolve against `dir`. The scenario it maps to is validated here,
/// so every error, whatever check finds it, names the key the user wrote and its line
/// (`ALPHA_RESUME_INTERVAL (line 12): ...`), never a scenario field.
pub fn parse(text: &str, dir: &Path, name: &str) -> Result<Scenario, ScenarioError> {
    let mut k = Keys::parse(text)?;
    let s = map(&mut k, dir, name).map_err(|e| k.locate(e))?;
    super::validate(&mut s.clone()).map_err(|e| k.locate(key_of(e)))?;
    Ok(s)
}

/// Which key a scenario field comes from (the first prefix that matches): for the errors of
/// checks that run on the scenario after the mapping.
const FIELD_KEYS: &[(&str, &str)] = &[
    ("duration", "SIMULATOR_STOP_TIME"),
    ("output.sample_interval", "SIMULATOR_STOP_TIME"),
    ("output.fct_txt", "FCT_OUTPUT_FILE"),
    ("switch.buffer", "BUFFER_SIZE"),
    ("switch.pfc.reserve", "BUFFER_SIZE"),
    ("switch.pfc.headroom", "BUFFER_SIZE"),
    ("switch.pfc.resume_offset", "BUFFER_SIZE"),
    ("nic.mtu", "PACKET_PAYLOAD_SIZE"),
    ("nic.ack_interval", "L2_ACK_INTERVAL"),
    ("cc.dcqcn.g", "EWMA_GAIN"),
    ("cc.dctcp.g", "EWMA_GAIN"),
    ("cc.dcqcn.alpha_interval", "ALPHA_RESUME_INTERVAL"),
    ("cc.dcqcn.decrease_interval", "RATE_DECREASE_INTERVAL"),
    ("cc.dcqcn.increase_interval", "RP_TIMER"),
    ("cc.dcqcn.fast_recovery_steps", "FAST_RECOVERY_TIMES"),
    ("cc.dcqcn.rate_ai", "RATE_AI"),
    ("cc.dcqcn.rate_hai", "RATE_HAI"),
    ("cc.dcqcn.min_rate", "MIN_RATE"),
    ("cc.dctcp.rate_ai", "DCTCP_RATE_AI"),
    ("cc.dctcp.min_rate", "MIN_RATE"),
    ("cc.timely.rate_ai", "RATE_AI"),
    ("cc.timely.rate_hai", "RATE_HAI"),
    ("cc.timely.min_rate", "MIN_RATE"),
    ("cc.hpcc.rate_ai", "RATE_AI"),
    ("cc.hpcc.min_rate", "MIN_RATE"),
    ("cc.hpcc.eta", "U_TARGET"),
    ("cc.hpcc.max_stage", "MI_THRESH"),
    ("cc.hpcc.int_multi", "INT_MULTI"),
    ("switch.ecn.per_link", "KMIN_MAP"),
    ("loss", "ERROR_RATE_PER_LINK"),
    ("topology", "TOPOLOGY_FILE"),
    ("workload", "FLOW_FILE"),
];

/// A scenario check's error under the key its field comes from.
fn key_of(mut e: ScenarioError) -> ScenarioError {
    let key = FIELD_KEYS.iter().find(|(field, _)| e.field == *field || e.field.starts_with(&format!("{field}.")) || e.field.starts_with(&format!("{field}["))).map(|(_, key)| *key);
    if let Some(key) = key {
        // A per-link ECN error names KMAX_MAP or PMAX_MAP when that is the value at fault.
        let key = match key {
            "KMIN_MAP" if e.field.ends_with(".pmax") => "PMAX_MAP",
            "KMIN_MAP" if e.field.ends_with(".kmax") => "KMAX_MAP",
            k => k,
        };
        e.field = key.to_string();
    }
    e
}

/// Maps the keys to a scenario, key by key.
fn map(k: &mut Keys, dir: &Path, name: &str) -> Result<Scenario, ScenarioError> {
    let topology = k.one("TOPOLOGY_FILE", None)?.ok_or_else(|| err("TOPOLOGY_FILE", "is missing"))?;
    let flows = k.one("FLOW_FILE", None)?.ok_or_else(|| err("FLOW_FILE", "is missing"))?;
    let base = format!(
        "name = {name:?}\nduration = \"1s\"\n[topology]\nkind = \"hpcc-file\"\nfile = {:?}\n[workload]\nkind = \"hpcc-flows\"\nfile = {:?}\n",
        input_file("TOPOLOGY_FILE", &topology, dir)?,
        input_file("FLOW_FILE", &flows, dir)?
    );
    let mut s = Scenario::from_toml(&base)?;
    s.base_dir = dir.to_path_buf();
    // Flows start at 2.0 s in ns-3 flow files and the hpcc-flows workload keeps their times,
    // so the stop time is absolute too; the run still ends when the last flow finishes.
    let stop: f64 = k.num("SIMULATOR_STOP_TIME", Some("3.01"))?.expect("defaulted");
    if !(stop > 0.0 && stop <= 1e6) {
        return Err(err("SIMULATOR_STOP_TIME", format!("{stop} is not a time in seconds")));
    }
    s.duration = Dur(Time((stop * 1e12).round() as u64));

    // Switches. ns-3: SwitchMmu::ConfigBufferSize(BUFFER_SIZE * 1024 * 1024).
    let buffer: u64 = k.num("BUFFER_SIZE", Some("16"))?.expect("defaulted");
    if buffer > 1 << 20 {
        return Err(err("BUFFER_SIZE", format!("{buffer} MB is out of range (allowed up to 1048576)")));
    }
    s.switch.buffer = Size(buffer * 1024 * 1024);
    // ns-3: every switch port's RED/ECN profile by its link rate; Kmin/Kmax in KB (x 1000).
    let (kmin, kmax, pmax) = (k.rate_map("KMIN_MAP")?, k.rate_map("KMAX_MAP")?, k.rate_map("PMAX_MAP")?);
    for &(rate, kmin_kb) in &kmin {
        let find = |m: &[(u64, f64)], key: &str| m.iter().find(|x| x.0 == rate).map(|x| x.1).ok_or_else(|| err(key, format!("has no value for {rate} bit/s, which KMIN_MAP names")));
        let (kmax_kb, p) = (find(&kmax, "KMAX_MAP")?, find(&pmax, "PMAX_MAP")?);
        let bytes = |kb: f64, key: &str| -> Result<Size, ScenarioError> {
            let b = kb * 1000.0;
            if b > crate::sim::units::MAX_SIZE as f64 {
                return Err(err(key, format!("{kb} KB is beyond the engine's range")));
            }
            Ok(Size(b as u64))
        };
        s.switch.ecn.per_link.push(EcnLinkCfg { rate: Bw(Rate(rate)), kmin: bytes(kmin_kb, "KMIN_MAP")?, kmax: bytes(kmax_kb, "KMAX_MAP")?, pmax: p });
    }
    // ns-3: SwitchNode EcnEnabled (switches mark; senders react through the CC).
    s.switch.ecn.enabled = k.num::<u32>("ENABLE_QCN", Some("1"))?.expect("defaulted") != 0;
    // ns-3: PFC on every port, threshold (free buffer) >> shift with headroom 3 x rate x delay
    // (SwitchMmu), which is PFC mode "dynamic" with its defaults.
    k.only("USE_DYNAMIC_PFC_THRESHOLD", Some("1"), "1", "ns-3 has only the dynamic threshold")?;
    s.switch.pfc.enabled = true;
    s.switch.pfc.mode = PfcMode::Dynamic;
    // ns-3 SwitchNode AckHighPrio: 1 puts ACKs, NACKs and CNPs in queue 0 at strict priority
    // (retx's control queue); 0 in their flow's data queue (what run.py writes for HPCC).
    s.nic.ack_class = match k.num::<u32>("ACK_HIGH_PRIO", Some("0"))?.expect("defaulted") {
        0 => AckClass::Data,
        1 => AckClass::Control,
        v => return Err(err("ACK_HIGH_PRIO", format!("{v} is not supported (supported: 0, 1)"))),
    };

    // NICs. ns-3: RdmaHw Mtu (payload bytes per packet).
    s.nic.mtu = k.num("PACKET_PAYLOAD_SIZE", Some("1000"))?.expect("defaulted");
    // Checked here already: the ACK interval below divides by it.
    crate::sim::check::range_u32("PACKET_PAYLOAD_SIZE", s.nic.mtu, 64, 9000)?;
    // ns-3: the receiver ACKs when the next expected byte passes a milestone that advances by
    // L2_ACK_INTERVAL bytes, and at every L2_CHUNK_SIZE boundary.
    let ack_bytes: u64 = k.num("L2_ACK_INTERVAL", Some("0"))?.expect("defaulted");
    let chunk: u64 = k.num("L2_CHUNK_SIZE", Some("0"))?.expect("defaulted");
    let mtu = s.nic.mtu as u64;
    s.nic.ack_interval = match ack_bytes {
        0 => return Err(err("L2_ACK_INTERVAL", "0 (no ACKs) is not supported (supported: a byte count, e.g. 1 for an ACK per packet)")),
        b if b <= mtu => 1,
        b if b % mtu == 0 && (chunk == 0 || chunk.is_multiple_of(b)) => (b / mtu) as u32,
        b => return Err(err("L2_ACK_INTERVAL", format!("{b} bytes is not supported (supported: up to PACKET_PAYLOAD_SIZE, or a multiple of it that divides L2_CHUNK_SIZE)"))),
    };
    // ns-3: go-back-N resumes from the NAKed sequence (1 would go back to a chunk boundary).
    k.only("L2_BACK_TO_ZERO", Some("0"), "0", "1 goes back to the start of the chunk")?;
    s.transport.recovery = RecoveryKind::Gbn;
    // Congestion control. ns-3: RdmaHw CcMode.
    let cc: u32 = k.num("CC_MODE", Some("1"))?.expect("defaulted");
    const MODES: &str = "supported: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP";
    s.transport.cc = match cc {
        1 => CcKind::Dcqcn,
        // retx's hpcc and timely are the HPCC ns-3 model's (RdmaHw::HandleAckHp, ...Timely).
        3 => CcKind::Hpcc,
        7 => CcKind::Timely,
        // retx's dctcp is the HPCC ns-3 model's (RdmaHw::HandleAckDctcp): rate-based.
        8 => CcKind::Dctcp,
        10 => return Err(err("CC_MODE", format!("10 (HPCC-PINT) is not supported yet ({MODES})"))),
        m => return Err(err("CC_MODE", format!("{m} is not a mode of ns-3 ({MODES})"))),
    };
    let (dcqcn, hpcc, timely, dctcp) = (cc == 1, cc == 3, cc == 7, cc == 8);

    // ns-3: senders are paced at the CC rate (RATE_BOUND 1); HAS_WIN 1 also limits each flow
    // to a window of one BDP (VAR_WIN 1: scaled by rate / line rate), sized by the longest
    // path's RTT and BDP (GLOBAL_T 1). Every CC_MODE retx runs keeps it: HPCC's own window, and TIMELY's,
    // DCQCN's and DCTCP's `window` (run.py's timely_vwin, dcqcn_vwin: HAS_WIN 1, VAR_WIN 1).
    k.only("RATE_BOUND", Some("1"), "1", "0 sends without pacing")?;
    let has_win = k.num::<u32>("HAS_WIN", Some("1"))?.expect("defaulted") != 0;
    let var_win = k.num::<u32>("VAR_WIN", Some("0"))?.expect("defaulted") != 0;
    k.only("GLOBAL_T", Some("1"), "1", "0 sizes each window by its own path")?;
    let rate_window = match (has_win, var_win) {
        (false, _) => RateWindow::None,
        (true, false) => RateWindow::Fixed,
        (true, true) => RateWindow::Variable,
    };
    if hpcc {
        s.cc.hpcc.window = rate_window;
    } else if timely {
        s.cc.timely.window = rate_window;
    } else if dctcp {
        s.cc.dctcp.window = rate_window;
    }
    if dcqcn {
        // The HPCC model's DCQCN ("Mlx" functions): periodic alpha updates and rate-cut
        // checks, every ECN mark echoed, no byte counter, constant hyper steps.
        s.cc.dcqcn = DcqcnParams { window: rate_window, ..DcqcnParams::preset(DcqcnPreset::Ns3) };
    }
    // DCQCN (ns-3 "mlx" version). EwmaGain: alpha's gain (DCTCP's too).
    let g: f64 = if dcqcn || k.has("EWMA_GAIN") { k.required("EWMA_GAIN")? } else { s.cc.dctcp.g };
    let d = &mut s.cc.dcqcn;
    d.g = g;
    s.cc.dctcp.g = g;
    // AlphaResumInterval (us): alpha decays once per interval without a CNP.
    d.alpha_interval = micros("ALPHA_RESUME_INTERVAL", k.num("ALPHA_RESUME_INTERVAL", Some("55"))?.expect("defaulted"))?;
    // RateDecreaseInterval (us): at most one rate cut per interval.
    d.decrease_interval = micros("RATE_DECREASE_INTERVAL", k.num("RATE_DECREASE_INTERVAL", Some("4"))?.expect("defaulted"))?;
    // RPTimer (us): the rate increase timer.
    if let Some(t) = if dcqcn { Some(k.required("RP_TIMER")?) } else { k.num::<f64>("RP_TIMER", None)? } {
        d.increase_interval = micros("RP_TIMER", t)?;
    }
    // FastRecoveryTimes: timer stages of fast recovery before additive increase.
    d.fast_recovery_steps = k.num("FAST_RECOVERY_TIMES", Some("5"))?.expect("defaulted");
    // RateAI, RateHAI: additive and hyper increase steps.
    for (key, field) in [("RATE_AI", &mut d.rate_ai), ("RATE_HAI", &mut d.rate_hai)] {
        match k.one(key, None)? {
            Some(v) => *field = Bw(ns3_rate(key, &v)?),
            None if dcqcn || timely || (hpcc && key == "RATE_AI") => return Err(err(key, "is missing (third.cc has no usable default)")),
            None => {}
        }
    }
    // MinRate: the floor of every rate cut (DCQCN and DCTCP).
    let min_rate = ns3_rate("MIN_RATE", &k.one("MIN_RATE", Some("100Mb/s"))?.expect("defaulted"))?;
    d.min_rate = Bw(min_rate);
    s.cc.dctcp.min_rate = Bw(min_rate);
    // ClampTargetRate: 1 lowers the target rate to the current rate on every cut; 0 only when
    // the rate was increased since the last cut.
    d.clamp_target = k.num::<u32>("CLAMP_TARGET_RATE", Some("0"))?.expect("defaulted") != 0;
    // DctcpRateAI: DCTCP's additive increase per window.
    s.cc.dctcp.rate_ai = Bw(ns3_rate("DCTCP_RATE_AI", &k.one("DCTCP_RATE_AI", Some("1000Mb/s"))?.expect("defaulted"))?);
    if timely {
        // RateAI, RateHAI, MinRate: TIMELY's steps and floor too; third.cc sets no other
        // TIMELY attribute, so the rest keep the model's defaults (cc.timely's).
        let t = &mut s.cc.timely;
        (t.rate_ai, t.rate_hai, t.min_rate) = (s.cc.dcqcn.rate_ai, s.cc.dcqcn.rate_hai, Bw(min_rate));
    }
    if hpcc {
        let rate_ai = s.cc.dcqcn.rate_ai;
        let h = &mut s.cc.hpcc;
        // RateAI: HPCC's additive step too (m_rai); MinRate its floor.
        h.rate_ai = rate_ai;
        h.min_rate = Bw(min_rate);
        // U_TARGET: eta; MI_THRESH: additive steps before a multiplicative one (maxStage).
        h.eta = k.num("U_TARGET", Some("0.95"))?.expect("defaulted");
        h.max_stage = k.num("MI_THRESH", Some("5"))?.expect("defaulted");
        // FAST_REACT: per-ACK reaction; MULTI_RATE: a reference rate per hop;
        // SAMPLE_FEEDBACK: fast reactions skip empty queues; INT_MULTI: INT field units.
        h.fast_react = k.num::<u32>("FAST_REACT", Some("1"))?.expect("defaulted") != 0;
        h.per_hop_rate = k.num::<u32>("MULTI_RATE", Some("1"))?.expect("defaulted") != 0;
        h.sample_feedback = k.num::<u32>("SAMPLE_FEEDBACK", Some("0"))?.expect("defaulted") != 0;
        h.int_multi = k.num("INT_MULTI", Some("1"))?.expect("defaulted");
        if h.int_multi == 0 {
            return Err(err("INT_MULTI", "0 is not a unit (supported: 1 or more)"));
        }
    } else {
        // FastReact: HPCC's reaction on every ACK; DCQCN and DCTCP ignore it.
        k.unused("FAST_REACT");
        for key in ["U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK"] {
            k.unused(key);
        }
    }
    // Used only by HPCC-PINT (CC_MODE 10), which retx rejects above.
    for key in ["PINT_LOG_BASE", "PINT_PROB"] {
        k.unused(key);
    }
    // Read by third.cc and never used (each link's rate and delay come from the topology).
    k.unused("DATA_RATE");
    k.unused("LINK_DELAY");
    if k.take("PAUSE_TIME").is_some() {
        return Err(err("PAUSE_TIME", "is not supported (retx's PFC pauses until RESUME, not for a time; leave it out)"));
    }

    // Links. ns-3: a packet error model on every device whose link has no rate of its own in
    // the topology file; it drops any packet (data or control) on receipt.
    let loss: f64 = k.num("ERROR_RATE_PER_LINK", Some("0"))?.expect("defaulted");
    if !(0.0..=1.0).contains(&loss) {
        return Err(err("ERROR_RATE_PER_LINK", format!("{loss} is not a probability in 0..=1")));
    }
    if loss > 0.0 {
        let topo = super::topology::build(&s.topology, &s.base_dir)?;
        if topo.links.iter().any(|l| l.loss > 0.0) {
            return Err(err("ERROR_RATE_PER_LINK", "together with error rates in the topology file is not supported yet (supported: 0 there, or 0 here)"));
        }
        s.loss.push(LossCfg { at: "everywhere".into(), model: LossModel::Bernoulli, rate: Some(loss), p: None, r: None, loss_good: None, loss_bad: None, control: true, kinds: Vec::new() });
    }
    match k.take("LINK_DOWN") {
        Some(v) if v.first().is_some_and(|t| t != "0") => return Err(err("LINK_DOWN", format!("{} is not supported (retx takes no link down; supported: 0 0 0)", v.join(" ")))),
        _ => {}
    }

    // Output. ns-3 writes fct.txt (FCT_OUTPUT_FILE) relative to where it runs; retx writes it
    // inside the run's output folder, keeping its relative form (`mix/fct.txt` is
    // `<out>/mix/fct.txt`); an absolute or escaping path is refused (config/output.rs).
    let fct = k.one("FCT_OUTPUT_FILE", Some("fct.txt"))?.expect("defaulted");
    super::output::output_path("FCT_OUTPUT_FILE", &fct)?;
    s.output.fct_txt = Some(FctTxtCfg::Path(fct));
    // ns-3 writes no throughput series; its flow files start at 2 s, so retx's default 100 us
    // series would hold 20,000 empty samples per receiver before the first flow (650 MB peak
    // on the 320-host config). One per millisecond keeps the series and the memory small.
    // A stop time of hours takes a longer interval, within the samples a run may hold.
    let floor = s.duration.0 .0.div_ceil(super::output::MAX_SAMPLES);
    s.output.sample_interval = Some(Dur(Time(floor.max(Time::from_us(1000).0))));
    // Monitors: accepted only when they ask for nothing.
    k.only("ENABLE_TRACE", Some("0"), "0", "1 writes a packet trace, which retx does not")?;
    k.unused("TRACE_FILE"); // the nodes to trace (with ENABLE_TRACE 1)
    k.unused("TRACE_OUTPUT_FILE"); // the packet trace (with ENABLE_TRACE 1)
    // ns-3 logs every PFC frame there; retx counts them (pfc_pauses in the summary).
    k.unused("PFC_OUTPUT_FILE");
    let (qs, qe): (Option<u64>, Option<u64>) = (k.num("QLEN_MON_START", None)?, k.num("QLEN_MON_END", None)?);
    if qs != qe {
        return Err(err("QLEN_MON_END", "differs from QLEN_MON_START: queue-length monitoring is not supported (supported: QLEN_MON_END equal to QLEN_MON_START)"));
    }
    k.unused("QLEN_MON_FILE");
    debug_assert!(k.values.is_empty(), "every known key is mapped: {:?}", k.values.keys().collect::<Vec<_>>());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use crate::transport::cc::timely::TimelyWindow;

    const PEERS: &str = "/work/shared/peers/hpcc-ns3";

    /// A folder of its own per test, with a topology under mix/ and a flow file beside it.
    fn dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("retx-hpcc-config-{}-{test}", std::process::id()));
        std::fs::create_dir_all(d.join("mix")).unwrap();
        std::fs::write(d.join("mix/topo.txt"), "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n").unwrap();
        std::fs::write(d.join("flows.txt"), "1\n0 1 3 100 5000 2.000001\n").unwrap();
        d
    }

    const GOOD: &str = "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\n\
        TOPOLOGY_FILE mix/topo.txt\nFLOW_FILE mix/flows.txt\nFCT_OUTPUT_FILE mix/fct.txt\nPFC_OUTPUT_FILE mix/pfc.txt\n\
        SIMULATOR_STOP_TIME 4.00\nCC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\n\
        RP_TIMER 300\nEWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\nMIN_RATE 1000Mb/s\n\
        DCTCP_RATE_AI 1000Mb/s\nERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\
        HAS_WIN 0\nGLOBAL_T 1\nVAR_WIN 0\nFAST_REACT 0\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nRATE_BOUND 1\n\
        ACK_HIGH_PRIO 1\nLINK_DOWN 0 0 0\nENABLE_TRACE 0\n\
        KMAX_MAP 2 100000000000 1600 400000000000 6400\nKMIN_MAP 2 100000000000 400 400000000000 1600\n\
        PMAX_MAP 2 100000000000 0.20 400000000000 0.20\nBUFFER_SIZE 32\n\
        QLEN_MON_FILE mix/q.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 2000000000\n";

    #[test]
    fn a_dcqcn_config_maps_to_the_scenario() {
        let s = parse(GOOD, &dir("good"), "c").unwrap();
        assert_eq!(s.topology.file.as_deref(), Some("mix/topo.txt"));
        assert_eq!(s.workload[0].file.as_deref(), Some("flows.txt"), "falls back to the file name beside the config");
        assert_eq!(s.duration.0, Time::from_ms(4000));
        assert_eq!(s.switch.buffer.0, 32 << 20);
        assert!(s.switch.ecn.enabled && s.switch.pfc.enabled && s.switch.pfc.mode == PfcMode::Dynamic);
        let e = &s.switch.ecn.per_link[1];
        assert_eq!((e.rate.0, e.kmin.0, e.kmax.0, e.pmax), (Rate::gbps(400), 1_600_000, 6_400_000, 0.2));
        assert_eq!((s.nic.mtu, s.nic.ack_interval), (1000, 1));
        assert_eq!((s.transport.cc, s.transport.recovery), (CcKind::Dcqcn, RecoveryKind::Gbn));
        let d = &s.cc.dcqcn;
        assert_eq!((d.g, d.fast_recovery_steps), (1.0 / 256.0, 1));
        assert_eq!((d.alpha_interval.0, d.decrease_interval.0, d.increase_interval.0), (Time::from_us(1), Time::from_us(4), Time::from_us(300)));
        assert_eq!((d.rate_ai.0, d.rate_hai.0, d.min_rate.0), (Rate::mbps(20), Rate::mbps(200), Rate::mbps(1000)));
        assert_eq!((d.preset, d.clamp_target, d.use_byte_counter), (DcqcnPreset::Ns3, false, false));
        assert!(matches!(&s.output.fct_txt, Some(FctTxtCfg::Path(p)) if p == "mix/fct.txt"));
        // It validates, and its TOML parses back.
        let mut again = Scenario::from_toml(&s.to_toml()).unwrap();
        again.base_dir = s.base_dir.clone();
        super::super::validate(&mut again).unwrap();
    }

    #[test]
    fn errors_name_the_key_and_its_line() {
        let d = dir("errors");
        let with = |from: &str, to: &str| parse(&GOOD.replace(from, to), &d, "c").unwrap_err().to_string();
        assert_eq!(with("CC_MODE 1", "CC_MODE 10"), "CC_MODE (line 9): 10 (HPCC-PINT) is not supported yet (supported: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)");
        let zero_unit = GOOD.replace("CC_MODE 1", "CC_MODE 3").replace("INT_MULTI 1", "INT_MULTI 0");
        assert_eq!(parse(&zero_unit, &d, "c").unwrap_err().to_string(), "INT_MULTI (line 30): 0 is not a unit (supported: 1 or more)");
        assert_eq!(with("ACK_HIGH_PRIO 1", "ACK_HIGH_PRIO 2"), "ACK_HIGH_PRIO (line 32): 2 is not supported (supported: 0, 1)");
        assert_eq!(with("HAS_WIN 0", "HAS_WINDOW 0"), "HAS_WINDOW (line 24): unknown key (not a key of HPCC ns-3 third.cc)");
        assert_eq!(with("HAS_WIN 0", "ENABLE_TRACE 0"), "ENABLE_TRACE (line 34): is given twice");
        assert!(with("ENABLE_TRACE 0", "ENABLE_TRACE 1").starts_with("ENABLE_TRACE (line 34): 1 is not supported ("));
        assert!(with("QLEN_MON_END 2000000000", "QLEN_MON_END 2010000000").starts_with("QLEN_MON_END (line 41): differs"));
        assert_eq!(with("HAS_WIN 0", "HAS_WIN x"), "HAS_WIN (line 24): \"x\" is not a number");
        assert!(with("RATE_AI 20Mb/s", "RATE_AI fast").starts_with("RATE_AI (line 16): \"fast\" is not a rate"));
        assert!(with("FLOW_FILE mix/flows.txt", "FLOW_FILE mix/none.txt").starts_with("FLOW_FILE (line 5): mix/none.txt: no such file"));
        assert!(with("KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP 2 100000000000 400").starts_with("KMIN_MAP (line 36): expects"));
        for e in [with("CC_MODE 1", "CC_MODE 9"), with("LINK_DOWN 0 0 0", "LINK_DOWN 5 1 2")] {
            assert!(!e.contains('\n') && (e.starts_with("CC_MODE (line 9): 9 is not a mode of ns-3") || e.starts_with("LINK_DOWN (line 33): 5 1 2")), "{e}");
        }
        // A key left out has no line; third.cc's default is what was wrong or missing.
        assert_eq!(with("RP_TIMER 300\n", ""), "RP_TIMER: is missing (third.cc has no usable default)");
    }

    #[test]
    fn what_the_scenario_checks_names_the_key() {
        let d = dir("scenario-checks");
        let with = |from: &str, to: &str| parse(&GOOD.replace(from, to), &d, "c").unwrap_err().to_string();
        // Found by the scenario's own checks, after the mapping: still the key and its line.
        assert_eq!(with("ALPHA_RESUME_INTERVAL 1", "ALPHA_RESUME_INTERVAL 0"), "ALPHA_RESUME_INTERVAL (line 10): must be greater than 0");
        assert!(with("RP_TIMER 300", "RP_TIMER 0.0001").starts_with("RP_TIMER (line 13): 100ps is below the shortest timer period"));
        assert!(with("EWMA_GAIN 0.00390625", "EWMA_GAIN 2").starts_with("EWMA_GAIN (line 14): 2 is out of range"));
        assert!(with("BUFFER_SIZE 32", "BUFFER_SIZE 0").starts_with("BUFFER_SIZE (line 38): "));
        assert!(with("PMAX_MAP 2 100000000000 0.20", "PMAX_MAP 2 100000000000 1.5").starts_with("PMAX_MAP (line 37): 1.5 is out of range"));
        assert!(with("RATE_HAI 200Mb/s", "RATE_HAI 1Mb/s").starts_with("RATE_HAI (line 17): 1Mbps must not be below rate_ai"));
    }

    #[test]
    fn nonsense_numbers_are_refused_not_turned_into_zero_or_the_largest() {
        let d = dir("nonsense");
        let with = |from: &str, to: &str| parse(&GOOD.replace(from, to), &d, "c").unwrap_err().to_string();
        for bad in ["-5", "inf", "-inf", "NaN"] {
            assert_eq!(with("RP_TIMER 300", &format!("RP_TIMER {bad}")), format!("RP_TIMER (line 13): \"{bad}\" is not a finite, non-negative number"));
            assert!(with("KMIN_MAP 2 100000000000 400 ", &format!("KMIN_MAP 2 100000000000 {bad} ")).starts_with("KMIN_MAP (line 36): expects"), "{bad}");
        }
        assert!(with("RP_TIMER 300", "RP_TIMER 1e300").starts_with("RP_TIMER (line 13): 1e300 us is beyond the engine's range"), "beyond the engine's range");
        // A map's count near 2^63 must not wrap its length check.
        assert_eq!(with("KMIN_MAP 2 ", "KMIN_MAP 9223372036854775808 "), "KMIN_MAP (line 36): 9223372036854775808 link speeds is out of range (allowed up to 64)");
        // A divisor of zero is refused before it divides.
        let divisor = GOOD.replace("PACKET_PAYLOAD_SIZE 1000", "PACKET_PAYLOAD_SIZE 0").replace("L2_ACK_INTERVAL 1", "L2_ACK_INTERVAL 5");
        assert_eq!(parse(&divisor, &d, "c").unwrap_err().to_string(), "PACKET_PAYLOAD_SIZE (line 3): 0 is out of range (allowed 64..=9000)");
        assert_eq!(with("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME inf"), "SIMULATOR_STOP_TIME (line 8): \"inf\" is not a finite, non-negative number");
    }

    #[test]
    fn the_fct_file_stays_inside_the_output_folder() {
        let d = dir("fct-output");
        let with = |to: &str| parse(&GOOD.replace("FCT_OUTPUT_FILE mix/fct.txt", to), &d, "c");
        assert!(matches!(&with("FCT_OUTPUT_FILE out/fct.txt").unwrap().output.fct_txt, Some(FctTxtCfg::Path(p)) if p == "out/fct.txt"));
        for (bad, why) in [("/tmp/fct.txt", "is absolute"), ("../fct.txt", "leaves the output folder"), ("mix/../../x", "leaves the output folder"), ("summary.json", "is one of the run's own outputs")] {
            let e = with(&format!("FCT_OUTPUT_FILE {bad}")).unwrap_err().to_string();
            assert!(e.starts_with(&format!("FCT_OUTPUT_FILE (line 6): \"{bad}\" {why}")), "{e}");
        }
    }

    #[test]
    fn dcqcn_and_dctcp_configs_map_their_window() {
        // run.py dcqcn_vwin: HAS_WIN 1, VAR_WIN 1; HAS_WIN 0 (run.py dcqcn): no window.
        let d = dir("dcqcn-win");
        let none = parse(GOOD, &d, "c").unwrap();
        assert_eq!(none.cc.dcqcn, DcqcnParams::preset(DcqcnPreset::Ns3));
        let vwin = parse(&GOOD.replace("HAS_WIN 0", "HAS_WIN 1").replace("VAR_WIN 0", "VAR_WIN 1"), &d, "c").unwrap();
        assert_eq!(vwin.cc.dcqcn, DcqcnParams { window: RateWindow::Variable, ..DcqcnParams::preset(DcqcnPreset::Ns3) });
        let fixed = parse(&GOOD.replace("HAS_WIN 0", "HAS_WIN 1"), &d, "c").unwrap();
        assert_eq!(fixed.cc.dcqcn.window, RateWindow::Fixed);
        let dctcp = GOOD.replace("CC_MODE 1", "CC_MODE 8");
        assert_eq!(parse(&dctcp, &d, "c").unwrap().cc.dctcp.window, RateWindow::None);
        let dctcp_vwin = parse(&dctcp.replace("HAS_WIN 0", "HAS_WIN 1").replace("VAR_WIN 0", "VAR_WIN 1"), &d, "c").unwrap();
        assert_eq!(dctcp_vwin.cc.dctcp.window, RateWindow::Variable);
    }

    #[test]
    fn a_dctcp_config_needs_no_dcqcn_keys() {
        let text: String = GOOD.lines().filter(|l| !l.starts_with("RATE_") && !l.starts_with("RP_TIMER")).map(|l| format!("{l}\n")).collect();
        let s = parse(&text.replace("CC_MODE 1", "CC_MODE 8"), &dir("dctcp"), "c").unwrap();
        assert_eq!((s.transport.cc, s.cc.dctcp.rate_ai.0, s.cc.dctcp.g), (CcKind::Dctcp, Rate::mbps(1000), 1.0 / 256.0));
    }

    #[test]
    fn an_hpcc_config_maps_every_hpcc_key() {
        let text = GOOD
            .replace("CC_MODE 1", "CC_MODE 3")
            .replace("HAS_WIN 0", "HAS_WIN 1")
            .replace("VAR_WIN 0", "VAR_WIN 1")
            .replace("FAST_REACT 0", "FAST_REACT 1")
            .replace("MI_THRESH 0", "MI_THRESH 3")
            .replace("INT_MULTI 1", "INT_MULTI 4\nMULTI_RATE 0\nSAMPLE_FEEDBACK 1")
            .replace("U_TARGET 0.95", "U_TARGET 0.9")
            .replace("RATE_AI 20Mb/s", "RATE_AI 40Mb/s")
            .replace("ACK_HIGH_PRIO 1", "ACK_HIGH_PRIO 0");
        let s = parse(&text, &dir("hpcc"), "c").unwrap();
        let h = &s.cc.hpcc;
        assert_eq!(s.transport.cc, CcKind::Hpcc);
        assert_eq!((h.eta, h.max_stage, h.int_multi, h.per_hop_rate, h.sample_feedback, h.fast_react), (0.9, 3, 4, false, true, true));
        assert_eq!((h.rate_ai.0, h.min_rate.0, h.window), (Rate::mbps(40), Rate::mbps(1000), RateWindow::Variable));
        assert_eq!(s.nic.ack_class, AckClass::Data);
        // Without VAR_WIN the window is fixed; without HAS_WIN there is none.
        let fixed = parse(&text.replace("VAR_WIN 1", "VAR_WIN 0"), &dir("hpcc"), "c").unwrap();
        assert_eq!(fixed.cc.hpcc.window, RateWindow::Fixed);
        let none = parse(&text.replace("HAS_WIN 1", "HAS_WIN 0"), &dir("hpcc"), "c").unwrap();
        assert_eq!(none.cc.hpcc.window, RateWindow::None);
        // RATE_AI is HPCC's step: third.cc has no default for it.
        let e = parse(&text.replace("RATE_AI 40Mb/s\n", ""), &dir("hpcc"), "c").unwrap_err().to_string();
        assert_eq!(e, "RATE_AI: is missing (third.cc has no usable default)");
    }

    #[test]
    fn a_timely_config_maps_its_steps_and_window() {
        let text = GOOD.replace("CC_MODE 1", "CC_MODE 7").replace("RATE_AI 20Mb/s", "RATE_AI 100Mb/s").replace("RATE_HAI 200Mb/s", "RATE_HAI 500Mb/s");
        let s = parse(&text, &dir("timely"), "c").unwrap();
        let t = &s.cc.timely;
        assert_eq!(s.transport.cc, CcKind::Timely);
        assert_eq!((t.rate_ai.0, t.rate_hai.0, t.min_rate.0, t.window), (Rate::mbps(100), Rate::mbps(500), Rate::mbps(1000), TimelyWindow::None));
        let vwin = parse(&text.replace("HAS_WIN 0", "HAS_WIN 1").replace("VAR_WIN 0", "VAR_WIN 1"), &dir("timely"), "c").unwrap();
        assert_eq!(vwin.cc.timely.window, TimelyWindow::Variable);
        let e = parse(&text.replace("RATE_HAI 500Mb/s\n", ""), &dir("timely"), "c").unwrap_err().to_string();
        assert_eq!(e, "RATE_HAI: is missing (third.cc has no usable default)");
    }

    #[test]
    fn the_shared_hpcc_config_reads() {
        let path = Path::new(PEERS).join("config_fat_flow_ws_320_l30_0.005_hp95_nomon.txt");
        if !path.exists() {
            return; // the shared peer inputs are not on every machine
        }
        let s = read(&path).unwrap();
        let h = &s.cc.hpcc;
        assert_eq!((s.transport.cc, h.eta, h.max_stage, h.int_multi, h.per_hop_rate), (CcKind::Hpcc, 0.95, 0, 4, false));
    }

    #[test]
    fn the_shared_dcqcn_config_reads() {
        let path = Path::new(PEERS).join("config_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt");
        if !path.exists() {
            return; // the shared peer inputs are not on every machine
        }
        let s = read(&path).unwrap();
        assert_eq!((s.name.as_str(), s.cc.dcqcn.preset, s.cc.dcqcn.clamp_target), ("config_fat_flow_ws_320_l30_0.005_dcqcn_nomon", DcqcnPreset::Ns3, false));
    }
}
