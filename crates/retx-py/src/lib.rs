//! Python bindings: a scenario goes in as TOML text, columns come back. No simulation logic
//! lives here.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use retx::sim::units::Time;
use retx::{RunOutput, Scenario, ScenarioError as CoreError, Simulation};

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

/// Parses a scenario whose relative paths (e.g. `workload.cdf`) resolve against `base_dir`.
fn parse(toml_text: &str, base_dir: &str) -> PyResult<Scenario> {
    let mut scenario = Scenario::from_toml(toml_text).map_err(scenario_error)?;
    scenario.base_dir = base_dir.into();
    Ok(scenario)
}

/// Simulates a scenario with the GIL released and returns flows, timeseries and summary.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir = ".", progress = None))]
fn run(py: Python<'_>, toml_text: &str, base_dir: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    let mut scenario = parse(toml_text, base_dir)?;
    retx::config::validate(&mut scenario).map_err(scenario_error)?;
    let resolved = scenario.to_toml();
    let (name, seed) = (scenario.name.clone(), scenario.seed);
    let sim = Simulation::new(scenario).map_err(scenario_error)?;
    let wall = std::time::Instant::now();
    let mut callback_error: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut report = |now: Time, end: Time| -> bool {
            let Some(cb) = progress.as_ref() else { return true };
            Python::with_gil(|py| match cb.call1(py, (now.as_us_f64(), end.as_us_f64())) {
                Ok(_) => true,
                Err(e) => {
                    callback_error = Some(e);
                    false
                }
            })
        };
        sim.run(&mut report)
    });
    let out = match result {
        Ok(out) => out,
        Err(_) => return Err(callback_error.unwrap_or_else(|| PyValueError::new_err("run aborted"))),
    };
    let wall_s = wall.elapsed().as_secs_f64();
    to_python(py, &out, &name, seed, wall_s, resolved)
}

fn nan_or(t: Option<f64>) -> f64 {
    t.unwrap_or(f64::NAN)
}

fn to_python(py: Python<'_>, out: &RunOutput, name: &str, seed: u64, wall_s: f64, resolved: String) -> PyResult<PyObject> {
    let flows = PyDict::new_bound(py);
    let f = &out.flows;
    flows.set_item("flow_id", f.iter().map(|r| r.flow_id).collect::<Vec<_>>())?;
    flows.set_item("src", f.iter().map(|r| r.src.as_str()).collect::<Vec<_>>())?;
    flows.set_item("dst", f.iter().map(|r| r.dst.as_str()).collect::<Vec<_>>())?;
    flows.set_item("size_bytes", f.iter().map(|r| r.size_bytes).collect::<Vec<_>>())?;
    flows.set_item("start_us", f.iter().map(|r| r.start.as_us_f64()).collect::<Vec<_>>())?;
    flows.set_item("finish_us", f.iter().map(|r| nan_or(r.finish.map(|t| t.as_us_f64()))).collect::<Vec<_>>())?;
    flows.set_item("fct_us", f.iter().map(|r| nan_or(r.fct().map(|t| t.as_us_f64()))).collect::<Vec<_>>())?;
    flows.set_item(
        "ideal_fct_us",
        f.iter().map(|r| if r.size_bytes == 0 { f64::NAN } else { r.ideal_fct.as_us_f64() }).collect::<Vec<_>>(),
    )?;
    flows.set_item("slowdown", f.iter().map(|r| nan_or(r.slowdown())).collect::<Vec<_>>())?;
    flows.set_item("goodput_gbps", f.iter().map(|r| r.goodput_bps / 1e9).collect::<Vec<_>>())?;
    flows.set_item("delivered_bytes", f.iter().map(|r| r.delivered_bytes).collect::<Vec<_>>())?;
    flows.set_item("sent_bytes", f.iter().map(|r| r.sent_bytes).collect::<Vec<_>>())?;
    flows.set_item("retx_bytes", f.iter().map(|r| r.retx_bytes).collect::<Vec<_>>())?;
    flows.set_item("naks", f.iter().map(|r| r.naks).collect::<Vec<_>>())?;
    flows.set_item("timeouts", f.iter().map(|r| r.timeouts).collect::<Vec<_>>())?;
    flows.set_item("cnps", f.iter().map(|r| r.cnps).collect::<Vec<_>>())?;
    flows.set_item("reorder_stored_bytes", f.iter().map(|r| r.reorder_stored_bytes).collect::<Vec<_>>())?;
    flows.set_item("reorder_copied_bytes", f.iter().map(|r| r.reorder_copied_bytes).collect::<Vec<_>>())?;
    flows.set_item("rx_dropped", f.iter().map(|r| r.rx_dropped).collect::<Vec<_>>())?;
    flows.set_item("completed", f.iter().map(|r| r.finish.is_some()).collect::<Vec<_>>())?;

    let ts = PyDict::new_bound(py);
    let s = &out.samples;
    ts.set_item("time_us", s.iter().map(|x| x.time.as_us_f64()).collect::<Vec<_>>())?;
    ts.set_item("host", s.iter().map(|x| out.host_names[x.host as usize].as_str()).collect::<Vec<_>>())?;
    ts.set_item("rx_gbps", s.iter().map(|x| x.bps / 1e9).collect::<Vec<_>>())?;
    ts.set_item("rx_wire_gbps", s.iter().map(|x| x.wire_bps / 1e9).collect::<Vec<_>>())?;

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
    summary.set_item("ecn_marks", c.ecn_marks)?;
    summary.set_item("pfc_pauses", c.pfc_pauses)?;
    summary.set_item("qp_swaps", c.qp_swaps)?;
    summary.set_item("bad_deliveries", c.bad_deliveries)?;
    for (name, value) in &out.scheme_report {
        summary.set_item(*name, *value)?;
    }
    let memory = out.memory.as_ref().expect("a built simulation carries its memory report");
    summary.set_item("sized_for_bandwidth_gbps", memory.sizing.bandwidth.as_gbps_f64())?;
    summary.set_item("sized_for_rtt_us", memory.sizing.rtt.as_us_f64())?;
    summary.set_item("onchip_per_connection_bytes", memory.onchip.per_connection)?;
    summary.set_item("onchip_shared_bytes", memory.onchip.shared)?;
    summary.set_item("onchip_total_bytes", memory.onchip.total)?;
    summary.set_item("flows", f.len())?;
    summary.set_item("flows_completed", f.iter().filter(|r| r.finish.is_some()).count())?;

    let result = PyDict::new_bound(py);
    result.set_item("flows", flows)?;
    result.set_item("timeseries", ts)?;
    result.set_item("summary", summary)?;
    result.set_item("resolved", resolved)?;
    result.set_item("memory", memory_columns(py, &memory.rows)?)?;
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
    if mtu == 0 || connections == 0 || block_bits == 0 || block_bits > 64 || pool_bits < block_bits {
        return Err(ScenarioError::new_err(
            "mtu, connections must be >= 1; block_bits in 1..=64; pool_bits >= block_bits",
        ));
    }
    let sizing = retx::hw::memory::Sizing { bandwidth, rtt, mtu, connections, pool_bits, block_bits };
    let t = memory_columns(py, &retx::hw::memory::footprints(&sizing))?;
    t.set_item("bdp_packets", sizing.bdp_packets())?;
    Ok(t.into())
}

fn memory_columns<'py>(py: Python<'py>, rows: &[retx::hw::memory::Footprint]) -> PyResult<Bound<'py, PyDict>> {
    let t = PyDict::new_bound(py);
    t.set_item("scheme", rows.iter().map(|r| r.scheme).collect::<Vec<_>>())?;
    t.set_item("per_connection_bytes", rows.iter().map(|r| r.per_connection).collect::<Vec<_>>())?;
    t.set_item("shared_bytes", rows.iter().map(|r| r.shared).collect::<Vec<_>>())?;
    t.set_item("average_bytes", rows.iter().map(|r| r.average).collect::<Vec<_>>())?;
    t.set_item("pct_of_qpc", rows.iter().map(|r| r.pct_of_qpc).collect::<Vec<_>>())?;
    t.set_item("total_bytes", rows.iter().map(|r| r.total).collect::<Vec<_>>())?;
    t.set_item("breakdown", rows.iter().map(|r| r.breakdown.as_str()).collect::<Vec<_>>())?;
    Ok(t)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(memory_table, m)?)?;
    Ok(())
}
