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
    assert memory["scheme"].to_list() == ["go-back-N", "irn", "melo", "gbone", "stride"]
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
