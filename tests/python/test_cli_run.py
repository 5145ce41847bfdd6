"""`retx run` and `retx validate` on the shipped examples."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

from conftest import EXAMPLES, run_cli

FLOW_COLUMNS = {
    "flow_id", "src", "dst", "size_bytes", "start_us", "finish_us", "received_us", "fct_us", "ideal_fct_us",
    "slowdown", "goodput_gbps", "delivered_bytes", "sent_bytes", "retx_bytes", "notifications",
    "naks", "nacks", "sacks", "racks", "fast_retransmits", "timeouts", "completed",
}
TIMESERIES_COLUMNS = {"time_us", "host", "rx_gbps"}


def test_run_demo_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    result = run_cli("run", str(EXAMPLES / "demo.toml"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    flows = pl.read_parquet(out / "flows.parquet")
    assert FLOW_COLUMNS <= set(flows.columns)
    assert flows.height == 1
    flow = flows.row(0, named=True)
    assert (flow["src"], flow["dst"], flow["size_bytes"]) == ("h0", "h1", 10_000_000)
    assert flow["completed"] and flow["delivered_bytes"] == 10_000_000
    assert 0 < flow["goodput_gbps"] <= 40.0

    timeseries = pl.read_parquet(out / "timeseries.parquet")
    assert TIMESERIES_COLUMNS <= set(timeseries.columns)
    assert timeseries.height > 0

    summary = json.loads((out / "summary.json").read_text())
    assert summary["name"] == "demo"
    assert summary["flows"] == 1 and summary["flows_completed"] == 1
    assert (out / "scenario.toml").read_text().strip()
    assert (out / "throughput.png").stat().st_size > 0
    # The on-chip memory table, for a NIC sized like this run (40 Gbps, one flow).
    memory = pl.read_parquet(out / "memory.parquet")
    assert memory["scheme"].to_list() == ["go-back-N", "irn", "melo", "gbone", "left", "stride"]
    melo = memory.row(by_predicate=pl.col("scheme") == "melo", named=True)
    assert melo["per_connection_bytes"] == 20.0 and melo["shared_bytes"] == 768.0
    assert summary["sized_for_bandwidth_gbps"] == 40.0 and summary["onchip_total_bytes"] == 0.0
    assert str(out) in result.stdout  # tells the user where the results went


def test_seed_option_overrides_scenario(tmp_path: Path) -> None:
    out = tmp_path / "seeded"
    result = run_cli("run", str(EXAMPLES / "demo.toml"), "--out", str(out), "--seed", "42",
                     "--quiet")
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "summary.json").read_text())["seed"] == 42


def test_default_output_folder_is_results_name(tmp_path: Path) -> None:
    result = run_cli("run", str(EXAMPLES / "demo.toml"), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "results" / "demo" / "flows.parquet").exists()


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_validate_prints_resolved_scenario(example: str) -> None:
    result = run_cli("validate", str(EXAMPLES / example))
    assert result.returncode == 0, result.stderr
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    resolved = tomllib.loads(result.stdout)
    # Defaults are filled in: sections the examples leave out appear in the output.
    assert {"nic", "output", "recovery"} <= set(resolved)
    # Clean: no warning, unless the example says it exists to show one.
    shows_a_warning = "shows a warning" in (EXAMPLES / example).read_text()
    assert ("warning" in result.stderr) == shows_a_warning, result.stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "retx"
    assert script.exists(), "run `make build` to install the retx console script"


def test_the_printed_summary_shows_what_is_not_zero_or_is_the_schemes_own() -> None:
    from retx.cli import _format_summary

    summary = {"name": "x", "seed": 1, "events": 10, "flows": 2, "flows_completed": 2, "bad_deliveries": 0,
               "drops_loss": 3, "drops_buffer": 0, "background_sent": 0, "melo_blocks_in_use_at_end": 0,
               "stride_dram_peak": 0, "unfinished_flows": None, "fct": {"flows_finished": 2},
               "provenance": {"git_commit": None}, "pfc_storms": []}
    keys = [line.split()[0] for line in _format_summary(summary, "melo").splitlines()]
    # Always: what the run is and the delivery check; then what is not zero; then MELO's own at 0.
    assert keys == ["name", "seed", "events", "flows", "flows_completed", "bad_deliveries", "drops_loss",
                    "melo_blocks_in_use_at_end"]
    assert "melo_blocks_in_use_at_end" not in _format_summary(summary, "gbn")


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_every_example_runs_clean(example: str, tmp_path: Path) -> None:
    """Every example runs without a warning (before or after the run: PFC that cannot be
    lossless, unfinished flows) unless its text says it exists to show one."""
    result = run_cli("run", str(EXAMPLES / example), "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    shows_a_warning = "shows a warning" in (EXAMPLES / example).read_text()
    assert ("warning" in result.stderr) == shows_a_warning, result.stderr


HTSIM_CM = """Nodes 128
Connections 3
Triggers 1
# an incast of three onto node 5, one flow triggered when the first is received
0->5 id 1 start 0 size 90000 recv_done_trigger 1
trigger id 1 oneshot
7->5 id 2 start 1000000 size 20000
100->5 id 3 trigger 1 size 5000
"""


def test_run_takes_an_htsim_connection_matrix_on_htsim_ndps_defaults(tmp_path: Path) -> None:
    cm = tmp_path / "incast.cm"
    cm.write_text(HTSIM_CM)
    out = tmp_path / "out"
    result = run_cli("run", str(cm), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    scenario = (out / "scenario.toml").read_text()
    # 128 nodes: htsim's k = 8 fat-tree; htsim_ndp's 9,000 B whole packets and NDP.
    for line in ('k = 8', 'recovery = "ndp"', 'mtu = 9000', 'whole_packets = true', 'data_queue = "135KB"'):
        assert line in scenario, line
    flows = pl.read_parquet(out / "flows.parquet").sort("flow_id")
    assert flows["dst"].to_list() == ["h5"] * 3
    # Whole packets: 90,000 B is ten 9,000 B packets, 5,000 B one.
    assert sorted(flows["delivered_bytes"].to_list()) == [9_000, 27_000, 90_000]
    first = flows.filter(pl.col("src") == "h0").row(0, named=True)
    third = flows.filter(pl.col("src") == "h100").row(0, named=True)
    assert third["start_us"] == pytest.approx(first["received_us"])


def test_run_puts_a_connection_matrix_on_a_network_of_ones_own(tmp_path: Path) -> None:
    cm = tmp_path / "pair.cm"
    cm.write_text("Nodes 4\nConnections 1\n0->3 id 1 start 0 size 8000\n")
    network = tmp_path / "net.toml"
    network.write_text('name = "mine"\nduration = "10ms"\n[topology]\nkind = "single-switch"\nhosts = 4\n'
                       '[transport]\nrecovery = "irn"\ncc = "none"\n[workload]\nkind = "long-flows"\n')
    out = tmp_path / "out"
    result = run_cli("run", str(cm), "--topology", str(network), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    flows = pl.read_parquet(out / "flows.parquet")
    assert (flows["src"].to_list(), flows["dst"].to_list(), flows["delivered_bytes"].to_list()) == (["h0"], ["h3"], [8_000])
    assert 'recovery = "irn"' in (out / "scenario.toml").read_text()


@pytest.mark.parametrize("nodes", [100, 3])
def test_a_matrix_off_every_fat_tree_needs_a_network(tmp_path: Path, nodes: int) -> None:
    cm = tmp_path / "odd.cm"
    cm.write_text(f"Nodes {nodes}\nConnections 1\n0->1 id 1 start 0 size 8000\n")
    result = run_cli("run", str(cm), "--out", str(tmp_path / "out"))
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "--topology" in result.stderr, result.stderr


def test_topology_is_only_for_a_connection_matrix(tmp_path: Path) -> None:
    result = run_cli("run", str(EXAMPLES / "demo.toml"), "--topology", str(EXAMPLES / "demo.toml"),
                     "--out", str(tmp_path / "out"))
    assert result.returncode != 0 and "--topology" in result.stderr, result.stderr


def test_trace_left_writes_the_pool_operations_of_a_left_run(tmp_path: Path) -> None:
    """`retx trace left`: left-rtt-ratio's LEFT run at 32x, the receiving NIC's pool operations
    in the LEFT testbench's columns (crates/retx/tests/left_rtl_cosim.rs replays such rows)."""
    from retx import hw_trace
    out = tmp_path / "left.trace"
    result = run_cli("trace", "left", "--ops", "500", "--out", str(out))
    assert result.returncode == 0, result.stderr
    trace = hw_trace.parse(out.read_text())
    from retx.reproduce import left_rtt_ratio
    assert trace.kind == "left" and len(trace.rows) == 500 and trace.conns == left_rtt_ratio.CONNECTIONS
    assert trace.params == {"pool_blocks": 256, "block_bits": 8, "registers": 3, "register_bits": 800}
    assert trace.columns[:4] == ["op", "conn", "front", "index"]
    # Updates (op 0), and bring-ins (op 1) once batches close.
    assert {0, 1} <= {row[0] for row in trace.rows}
