//! Python bindings: a scenario goes in as TOML text, columns come back as declared in
//! `retx::stats::columns` (numbers as numpy arrays). No simulation logic lives here.

use std::collections::HashMap;

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use retx::world::ParallelReport;
use retx::sim::units::Time;
use retx::stats::columns::{Data, Table, CC, COLLECTIVES, COLLECTIVE_STEPS, FLOWS, LINKS, LINK_SAMPLES, MEMORY, POOLS, QUEUES, TIER_SAMPLES, TIMESERIES};
use retx::{RunOutput, Scenario, ScenarioError as CoreError};

create_exception!(_native, ScenarioError, PyValueError, "A scenario failed validation; str() is one line naming the field.");

fn scenario_error(e: CoreError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Validates a scenario and returns it as TOML with every default filled in.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir = "."))]
fn resolve(toml_text: &str, base_dir: &str) -> PyResult<String> {
    let mut scenario = parse(toml_text, base_dir)?;
    retx::config::validate(&mut scenario).map_err(scenario_error)?;
    Ok(scenario.to_toml())
}

/// The ways a valid scenario cannot do what it seems to ask (today: PFC that cannot be
/// lossless), one line each naming the field; empty when there are none.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir = "."))]
fn warnings(toml_text: &str, base_dir: &str) -> PyResult<Vec<String>> {
    let mut scenario = parse(toml_text, base_dir)?;
    let topology = retx::config::validate(&mut scenario).map_err(scenario_error)?;
    Ok(retx::config::warnings(&scenario, &topology))
}

/// Parses a scenario whose relative paths (e.g. `workload.cdf`) resolve against `base_dir`.
fn parse(toml_text: &str, base_dir: &str) -> PyResult<Scenario> {
    let mut scenario = Scenario::from_toml(toml_text).map_err(scenario_error)?;
    scenario.base_dir = base_dir.into();
    Ok(scenario)
}

/// Refuses TOML nested too deeply for any reader, before Python's recursive reader sees it.
#[pyfunction]
fn check_nesting(toml_text: &str) -> PyResult<()> {
    retx::config::check_nesting(toml_text).map_err(scenario_error)
}

/// The file names every run (and sweep point, report, reproduction) writes into its output
/// folder; a scenario may not name one of them (`retx::config::output::RUN_OUTPUTS`).
#[pyfunction]
fn output_files() -> Vec<&'static str> {
    retx::config::output::RUN_OUTPUTS.to_vec()
}

/// Reads an HPCC ns-3 config file (`KEY value` lines) and returns the scenario as TOML; its
/// relative paths resolve against the config's directory.
#[pyfunction]
fn hpcc_config(path: &str) -> PyResult<String> {
    let scenario = retx::config::hpcc_config::read(std::path::Path::new(path)).map_err(scenario_error)?;
    Ok(scenario.to_toml())
}

/// Simulates a scenario with the GIL released and returns flows, timeseries and summary.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir = ".", progress = None))]
fn run(py: Python<'_>, toml_text: &str, base_dir: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    let mut scenario = parse(toml_text, base_dir)?;
    let topology = retx::config::validate(&mut scenario).map_err(scenario_error)?;
    let resolved = scenario.to_toml();
    let warnings = retx::config::warnings(&scenario, &topology);
    let (name, seed) = (scenario.name.clone(), scenario.seed);
    let fct_txt_file = scenario.output.fct_txt.as_ref().and_then(|c| c.path()).map(str::to_string);
    let wants_fct_txt = fct_txt_file.is_some();
    let mut pcap = retx::config::pcap_writer(&scenario, &topology).map_err(scenario_error)?;
    let pcap_file = scenario.output.pcap.as_ref().map(|p| p.file.clone());
    let fct_context = wants_fct_txt.then(|| (scenario.clone(), topology));
    let wall = std::time::Instant::now();
    // Without [output] pcap the simulation records nothing (its observer compiles away).
    let threads = scenario.run.threads;
    let (out, engine) = match pcap.as_mut() {
        Some(writer) => {
            let sim = retx::config::build_with_observer(scenario, writer).map_err(scenario_error)?;
            let serial = (threads > 1).then(|| "[output] pcap records every packet in the one order of the serial run".to_string());
            (simulate(py, progress.as_ref(), |report| sim.run(report))?, ParallelReport { threads: 1, serial_because: serial, ..Default::default() })
        }
        None => {
            let mut engine = None;
            let mut failed = None;
            let out = simulate(py, progress.as_ref(), |report| match retx::config::build::run(scenario, report) {
                Ok((out, e)) => {
                    engine = Some(e);
                    out
                }
                Err(e) => {
                    failed = Some(e);
                    Err(retx::Aborted)
                }
            });
            if let Some(e) = failed {
                return Err(scenario_error(e));
            }
            (out?, engine.expect("ran"))
        }
    };
    let wall_s = wall.elapsed().as_secs_f64();
    let fct_txt = match fct_context {
        Some((s, topology)) => Some(retx::config::fct_txt::fct_txt(&s, &topology, &out).map_err(scenario_error)?),
        None => None,
    };
    let result = to_python(py, &out, &name, seed, wall_s, resolved)?;
    let summary = result.bind(py).get_item("summary")?;
    // The configuration's warnings, then what the built network shows (the scheme's settings
    // against its BDP and switch queues).
    let warnings: Vec<String> = warnings.into_iter().chain(out.warnings.iter().cloned()).collect();
    summary.set_item("warnings", warnings)?;
    result.bind(py).set_item("fct_txt", fct_txt)?;
    result.bind(py).set_item("pcap", pcap.map(|w| PyBytes::new_bound(py, w.bytes()).unbind()))?;
    result.bind(py).set_item("pcap_file", pcap_file)?;
    result.bind(py).set_item("fct_txt_file", fct_txt_file)?;
    result.bind(py).set_item("engine", engine_dict(py, &engine)?)?;
    Ok(result)
}

/// How the run used the machine: threads, why serially, and per partition its balance and
/// where its thread's time went (`retx run` prints it; it is not part of the results, which
/// are the same on any number of threads).
fn engine_dict<'py>(py: Python<'py>, e: &ParallelReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("threads", e.threads)?;
    d.set_item("serial_because", e.serial_because.clone())?;
    d.set_item("lookahead_us", e.lookahead.as_us_f64())?;
    d.set_item("windows", e.windows)?;
    d.set_item("link_ends", e.weight.clone())?;
    d.set_item("events", e.events.clone())?;
    d.set_item("busy_s", e.busy_s.clone())?;
    d.set_item("wait_s", e.wait_s.clone())?;
    Ok(d)
}

/// Simulates a scenario while tracing the operations on one hardware structure
/// (`kind`: "melo" for MELO's receiver bitmap manager, "stride" for STRIDE's rate calculator,
/// "left" for LEFT's dual-state pool, "left-gather" for its scheduler and gather FIFOs):
/// returns the trace text (retx::observe::hw_trace describes it).
#[pyfunction]
#[pyo3(signature = (toml_text, kind, max_ops, max_conns, base_dir = "."))]
fn hw_trace(py: Python<'_>, toml_text: &str, kind: &str, max_ops: usize, max_conns: u32, base_dir: &str) -> PyResult<String> {
    use retx::observe::hw_trace::HwTraceKind;
    let kind = match kind {
        "melo" => HwTraceKind::MeloRx,
        "stride" => HwTraceKind::StrideRate,
        "left" => HwTraceKind::LeftPool,
        "left-gather" => HwTraceKind::LeftGather,
        other => return Err(ScenarioError::new_err(format!("trace: {other:?} is not a traced structure (melo, stride, left or left-gather)"))),
    };
    let scenario = parse(toml_text, base_dir)?;
    py.allow_threads(|| retx::run_hw_trace(scenario, kind, max_ops, max_conns)).map(|(_, text)| text).map_err(scenario_error)
}

/// Runs a simulation (`go`, given the progress report) with the GIL released, reporting
/// progress to `progress`.
fn simulate(py: Python<'_>, progress: Option<&PyObject>, go: impl FnOnce(&mut dyn FnMut(Time, Time) -> bool) -> Result<RunOutput, retx::Aborted> + Send) -> PyResult<RunOutput> {
    let mut callback_error: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut report = |now: Time, end: Time| -> bool {
            let Some(cb) = progress else { return true };
            Python::with_gil(|py| match cb.call1(py, (now.as_us_f64(), end.as_us_f64())) {
                Ok(_) => true,
                Err(e) => {
                    callback_error = Some(e);
                    false
                }
            })
        };
        go(&mut report)
    });
    result.map_err(|_| callback_error.unwrap_or_else(|| PyValueError::new_err("run aborted")))
}

fn to_python(py: Python<'_>, out: &RunOutput, name: &str, seed: u64, wall_s: f64, resolved: String) -> PyResult<PyObject> {
    let f = &out.flows;
    let flows = columns(py, &FLOWS, &(), f)?;
    let ts = columns(py, &TIMESERIES, &out.host_names, &out.samples)?;
    let queues = columns(py, &QUEUES, &out.queue_names, &out.queue_samples)?;
    let cc = columns(py, &CC, &(), &out.cc_samples)?;
    let pools = columns(py, &POOLS, &out.host_names, &out.pool_samples)?;
    let collectives = columns(py, &COLLECTIVES, &(), &out.collectives)?;
    let collective_steps = columns(py, &COLLECTIVE_STEPS, &(), &out.collective_steps)?;
    let no_links = retx::stats::links::LinkReport::default();
    let l = out.links.as_ref().unwrap_or(&no_links);
    let links = columns(py, &LINKS, &l.names, &l.links)?;
    let tier_samples = columns(py, &TIER_SAMPLES, &l.names, &l.tier_samples)?;
    let link_samples = columns(py, &LINK_SAMPLES, &l.names, &l.link_samples)?;

    let c = &out.counters;
    let summary = PyDict::new_bound(py);
    summary.set_item("name", name)?;
    summary.set_item("seed", seed)?;
    summary.set_item("sim_time_us", out.end.as_us_f64())?;
    summary.set_item("wall_seconds", wall_s)?;
    summary.set_item("events", c.events)?;
    summary.set_item("events_per_sec", c.events as f64 / wall_s.max(1e-9))?;
    summary.set_item("packet_hops", c.packet_hops)?;
    summary.set_item("packets_created", c.packets_created)?;
    summary.set_item("packets_consumed", c.packets_consumed)?;
    summary.set_item("packets_in_flight", out.packets_in_flight)?;
    summary.set_item("drops_loss", c.drops_loss)?;
    summary.set_item("drops_buffer", c.drops_buffer)?;
    summary.set_item("drops_unroutable", c.drops_unroutable)?;
    let kinds = PyDict::new_bound(py);
    kinds.set_item("scheduled_data", c.drops_by_kind.scheduled_data)?;
    kinds.set_item("unscheduled_data", c.drops_by_kind.unscheduled_data)?;
    kinds.set_item("grants", c.drops_by_kind.grants)?;
    kinds.set_item("control", c.drops_by_kind.control)?;
    summary.set_item("drops_by_kind", kinds)?;
    summary.set_item("packets_trimmed", c.packets_trimmed)?;
    summary.set_item("packets_returned", c.packets_returned)?;
    summary.set_item("ecn_marks", c.ecn_marks)?;
    summary.set_item("pfc_pauses", c.pfc_pauses)?;
    summary.set_item("qp_swaps", c.qp_swaps)?;
    summary.set_item("bad_deliveries", c.bad_deliveries)?;
    summary.set_item("background_sent", c.background_sent)?;
    summary.set_item("background_dropped", c.background_dropped)?;
    summary.set_item("background_delivered", c.background_delivered)?;
    for (name, value) in &out.scheme_report {
        summary.set_item(*name, *value)?;
    }
    let memory = out.memory.as_ref().expect("a built simulation carries its memory report");
    summary.set_item("sized_for_bandwidth_gbps", memory.sizing.bandwidth.as_gbps_f64())?;
    summary.set_item("sized_for_rtt_us", memory.sizing.rtt.as_us_f64())?;
    summary.set_item("onchip_per_connection_bytes", memory.onchip.per_connection)?;
    summary.set_item("onchip_shared_bytes", memory.onchip.shared)?;
    summary.set_item("onchip_total_bytes", memory.onchip.total)?;
    let port = |p: &retx::world::PortName| -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new_bound(py);
        d.set_item("port", p.port)?;
        d.set_item("node", &p.node)?;
        d.set_item("peer", &p.peer)?;
        d.set_item("link", format!("{}->{}", p.node, p.peer))?;
        Ok(d)
    };
    let deadlock = match &out.pfc_deadlock {
        Some(d) => {
            let x = PyDict::new_bound(py);
            x.set_item("detected_at_us", d.at.as_us_f64())?;
            x.set_item("ports", d.ports.iter().map(&port).collect::<PyResult<Vec<_>>>()?)?;
            Some(x)
        }
        None => None,
    };
    summary.set_item("pfc_deadlock", deadlock)?;
    let storms = out
        .pfc_storms
        .iter()
        .map(|s| {
            let x = port(&s.port)?;
            x.set_item("first_at_us", s.first_at.as_us_f64())?;
            x.set_item("windows", s.windows)?;
            x.set_item("max_paused_fraction", s.max_fraction)?;
            Ok(x)
        })
        .collect::<PyResult<Vec<_>>>()?;
    summary.set_item("pfc_storms", storms)?;
    if let Some(l) = &out.links {
        // Per switch, its selected ports together (`[output] links`); absent without.
        let switches = l
            .switches
            .iter()
            .map(|s| {
                let x = PyDict::new_bound(py);
                x.set_item("switch", &s.switch)?;
                x.set_item("ports", s.ports)?;
                x.set_item("tx_bytes", s.tx_bytes)?;
                x.set_item("utilisation", s.utilisation)?;
                x.set_item("drops", s.drops.total() + s.drops_background)?;
                let kinds = PyDict::new_bound(py);
                kinds.set_item("scheduled_data", s.drops.scheduled_data)?;
                kinds.set_item("unscheduled_data", s.drops.unscheduled_data)?;
                kinds.set_item("grants", s.drops.grants)?;
                kinds.set_item("control", s.drops.control)?;
                kinds.set_item("background", s.drops_background)?;
                x.set_item("drops_by_kind", kinds)?;
                x.set_item("trims", s.trims)?;
                x.set_item("ecn_marks", s.ecn_marks)?;
                x.set_item("pfc_pauses_sent", s.pauses_sent)?;
                x.set_item("pfc_paused_us", s.paused.as_us_f64())?;
                x.set_item("max_queue_bytes", s.max_queue)?;
                Ok(x)
            })
            .collect::<PyResult<Vec<_>>>()?;
        summary.set_item("switches", switches)?;
        summary.set_item("links_selected", l.links.len())?;
        summary.set_item("link_tiers", l.names.tiers.clone())?;
    }
    summary.set_item("flows", f.len())?;
    summary.set_item("flows_completed", f.iter().filter(|r| r.finish.is_some()).count())?;
    let unfinished = match out.unfinished() {
        Some(u) => {
            let x = PyDict::new_bound(py);
            x.set_item("count", u.count)?;
            x.set_item("never_started", u.never_started)?;
            x.set_item("reason", u.reason)?;
            Some(x)
        }
        None => None,
    };
    summary.set_item("unfinished_flows", unfinished)?;

    let result = PyDict::new_bound(py);
    result.set_item("flows", flows)?;
    result.set_item("timeseries", ts)?;
    result.set_item("queues", queues)?;
    result.set_item("cc", cc)?;
    result.set_item("pools", pools)?;
    result.set_item("collectives", collectives)?;
    result.set_item("collective_steps", collective_steps)?;
    result.set_item("links", links)?;
    result.set_item("tier_samples", tier_samples)?;
    result.set_item("link_samples", link_samples)?;
    result.set_item("summary", summary)?;
    result.set_item("resolved", resolved)?;
    result.set_item("memory", columns(py, &MEMORY, &(), &memory.rows)?)?;
    Ok(result.into())
}

/// The on-chip memory table of every loss recovery scheme for a NIC sized as given.
#[pyfunction]
#[pyo3(signature = (bandwidth = "100Gbps", rtt = "200us", mtu = 1024, connections = 300, pool_bits = 1024, block_bits = 8))]
fn memory_table(py: Python<'_>, bandwidth: &str, rtt: &str, mtu: u32, connections: u32, pool_bits: u32, block_bits: u32) -> PyResult<PyObject> {
    use retx::sim::units::{parse_rate, parse_time, RATE_HINT, TIME_HINT};
    let bad = |field: &str, v: &str, hint: &str| ScenarioError::new_err(format!("{field}: {v:?} is not {hint}"));
    let bandwidth = parse_rate(bandwidth).ok_or_else(|| bad("bandwidth", bandwidth, RATE_HINT))?;
    let rtt = parse_time(rtt).ok_or_else(|| bad("rtt", rtt, TIME_HINT))?;
    let sizing = retx::hw::memory::Sizing { bandwidth, rtt, mtu, connections, pool_bits, block_bits };
    // The one rule broken, naming its argument (issue 41: not every rule at once).
    sizing.check().map_err(|(field, message)| ScenarioError::new_err(format!("{field}: {message}")))?;
    let t = columns(py, &MEMORY, &(), &retx::hw::memory::footprints(&sizing))?;
    t.set_item("bdp_packets", sizing.bdp_packets())?;
    Ok(t.into())
}

/// A table as {column name: values}, in schema order: numbers and booleans as numpy arrays that
/// take over the Rust vectors (no Python object per value), strings as lists of str.
fn columns<'py, C: ?Sized, R>(py: Python<'py>, table: &Table<C, R>, context: &C, rows: &[R]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new_bound(py);
    for (column, data) in table.fill(context, rows) {
        let values = match data {
            Data::I64(v) => v.into_pyarray_bound(py).into_any(),
            Data::U64(v) => v.into_pyarray_bound(py).into_any(),
            Data::F64(v) => v.into_pyarray_bound(py).into_any(),
            Data::Bool(v) => v.into_pyarray_bound(py).into_any(),
            Data::Str(v) => str_list(py, &v).into_any(),
        };
        dict.set_item(column.name, values)?;
    }
    Ok(dict)
}

/// A list of str with one Python string per distinct value (a host name repeats in every
/// sample of the time series).
fn str_list<'py>(py: Python<'py>, values: &[&str]) -> Bound<'py, PyList> {
    let mut distinct: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    PyList::new_bound(py, values.iter().map(|v| distinct.entry(v).or_insert_with(|| PyString::new_bound(py, v)).clone()))
}

/// Every output table's columns, as declared in `retx::stats::columns`:
/// {table: [(name, dtype, unit, description), ...]}.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<PyObject> {
    let dict = PyDict::new_bound(py);
    for (table, specs) in retx::stats::columns::schema() {
        let specs: Vec<_> = specs.iter().map(|c| (c.name, c.dtype.name(), c.unit, c.description)).collect();
        dict.set_item(table, specs)?;
    }
    Ok(dict.into())
}

/// The registered loss recovery schemes and congestion controllers, by their names in a
/// scenario (`[transport] recovery` and `cc`), in the registry's order
/// (`retx::transport::schemes`): {"recovery": [...], "cc": [...]}.
#[pyfunction]
fn schemes(py: Python<'_>) -> PyResult<PyObject> {
    let dict = PyDict::new_bound(py);
    dict.set_item("recovery", retx::config::RecoveryKind::names().to_vec())?;
    dict.set_item("cc", retx::config::CcKind::names().to_vec())?;
    Ok(dict.into())
}

/// Where and why the last Rust panic happened ("src/x.rs:10:5: message"), kept by the hook
/// [`_native`] installs so the CLI can report a bug in one line.
static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The last panic's location and message, if any (PyO3 turns the panic itself into
/// `pyo3_runtime.PanicException`, whose text is the message alone).
#[pyfunction]
fn last_panic() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|p| p.clone())
}

/// Records panics instead of printing them, so a bug reaches the user as one line (the CLI's
/// "internal error"); with RUST_BACKTRACE set the default report is printed too.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let place = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("{place}: {}", message.replace('\n', " ")));
        }
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            default(info);
        }
    }));
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("PanicException", m.py().get_type_bound::<pyo3::panic::PanicException>())?;
    m.add_function(wrap_pyfunction!(last_panic, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(warnings, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(hw_trace, m)?)?;
    m.add_function(wrap_pyfunction!(hpcc_config, m)?)?;
    m.add_function(wrap_pyfunction!(memory_table, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(output_files, m)?)?;
    m.add_function(wrap_pyfunction!(check_nesting, m)?)?;
    Ok(())
}
