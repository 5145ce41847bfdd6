"""fct_stats and run_metrics on a hand-made flows table, answers worked out by hand
(linear-interpolation quantiles, as in test_metrics.py), and the plots `retx run` draws."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from matplotlib.figure import Figure

from retx.metrics import SIZE_BUCKETS, fct_stats, run_metrics
from retx.plots import plot_fct_cdf, plot_lines, plot_slowdown_by_size, plot_throughput
from conftest import EXAMPLES, run_cli

NAN = float("nan")

ROWS = [
    # size_bytes, fct_us, slowdown, goodput_gbps, completed
    (1_000, 10.0, 2.0, 1.0, True),
    (5_000, 50.0, 4.0, 2.0, True),
    (20_000, 100.0, 1.0, 3.0, True),
    (10_000, 30.0, 3.0, 4.0, True),  # a bucket holds its lower bound: 10KB-100KB
    (1_000_000, 1000.0, 1.5, 5.0, True),  # >=1MB
    (500, NAN, NAN, NAN, False),
]


@pytest.fixture
def flows() -> pl.DataFrame:
    size, fct, slowdown, goodput, completed = zip(*ROWS)
    return pl.DataFrame({"flow_id": list(range(len(ROWS))), "size_bytes": size, "fct_us": fct,
                         "slowdown": slowdown, "goodput_gbps": goodput, "completed": completed})


def test_fct_stats_overall_and_by_size(flows: pl.DataFrame) -> None:
    stats = fct_stats(flows)
    assert "finished" in stats["basis"]
    assert (stats["flows_finished"], stats["flows_unfinished"]) == (5, 1)
    overall = stats["overall"]
    assert overall["count"] == 5
    # fct sorted [10, 30, 50, 100, 1000]: p95 at 3.8 -> 100 + 0.8 * 900
    assert overall["fct_us"] == pytest.approx({"p50": 50.0, "p95": 820.0, "p99": 964.0})
    # slowdown sorted [1, 1.5, 2, 3, 4]
    assert overall["slowdown"] == pytest.approx({"p50": 2.0, "p95": 3.8, "p99": 3.96})
    assert list(stats["by_size"]) == [label for label, _, _ in SIZE_BUCKETS]
    small = stats["by_size"]["<10KB"]
    assert small["count"] == 2
    assert small["fct_us"] == pytest.approx({"p50": 30.0, "p95": 48.0, "p99": 49.6})
    assert small["slowdown"] == pytest.approx({"p50": 3.0, "p95": 3.9, "p99": 3.98})
    medium = stats["by_size"]["10KB-100KB"]
    assert medium["count"] == 2 and medium["fct_us"]["p50"] == 65.0 and medium["slowdown"]["p50"] == 2.0
    empty = stats["by_size"]["100KB-1MB"]
    assert empty["count"] == 0 and all(math.isnan(v) for v in empty["fct_us"].values())
    large = stats["by_size"][">=1MB"]
    assert large["count"] == 1 and large["fct_us"]["p99"] == 1000.0


def test_run_metrics(flows: pl.DataFrame) -> None:
    assert run_metrics(flows) == pytest.approx(
        {"mean_fct_us": 238.0, "slowdown_p50": 2.0, "slowdown_p99": 3.96, "goodput_gbps": 3.0})
    nothing = run_metrics(flows.filter(~pl.col("completed")))
    assert all(math.isnan(value) for value in nothing.values())


def test_plot_helpers_return_figures_and_save_only_when_asked(flows: pl.DataFrame, tmp_path: Path) -> None:
    figure = plot_fct_cdf(flows)
    assert isinstance(figure, Figure) and not list(tmp_path.iterdir())
    line = figure.axes[0].lines[0]
    # Finished flows only, the step rising from 0 at the first.
    assert list(line.get_xdata()) == [1.0, 1.0, 1.5, 2.0, 3.0, 4.0]
    assert list(line.get_ydata()) == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert len(plot_slowdown_by_size(flows, groups=2).axes[0].lines) == 3
    table = pl.DataFrame({"x": [1, 2], "y": [3, 4], "s": ["a", "a"]})
    assert isinstance(plot_lines(table, "x", "y", "s", tmp_path / "lines.png"), Figure)
    timeseries = pl.DataFrame({"time_us": [0.0, 1.0], "host": ["h1", "h1"], "rx_gbps": [1.0, 2.0]})
    plot_throughput(timeseries, tmp_path / "sub" / "throughput.png")
    assert (tmp_path / "lines.png").stat().st_size > 0
    assert (tmp_path / "sub" / "throughput.png").stat().st_size > 0


def test_run_writes_fct_statistics_and_plots(small_scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    stats = json.loads((out / "summary.json").read_text())["fct"]
    flow = pl.read_parquet(out / "flows.parquet").row(0, named=True)
    assert flow["completed"] and stats["flows_finished"] == 1
    assert stats["overall"]["fct_us"]["p99"] == pytest.approx(flow["fct_us"])
    assert stats["by_size"]["100KB-1MB"]["count"] == 1  # the 200 KB flow
    assert stats["by_size"]["<10KB"]["fct_us"]["p50"] is None  # empty: null, strict JSON
    assert (out / "fct_cdf.png").stat().st_size > 0
    assert (out / "slowdown_by_size.png").stat().st_size > 0


def test_run_without_finished_flows_draws_no_fct_plots(small_scenario_file: Path, tmp_path: Path) -> None:
    text = small_scenario_file.read_text().replace('duration = "2ms"', 'duration = "5us"')
    path = tmp_path / "cut.toml"
    path.write_text(text)
    out = tmp_path / "out"
    assert run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet").returncode == 0
    assert (out / "fct_cdf.png").exists()
    result = run_cli("run", str(path), "--out", str(out), "--quiet", "--force")
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "summary.json").read_text())["fct"]["flows_finished"] == 0
    assert (out / "throughput.png").exists()
    assert not (out / "fct_cdf.png").exists() and not (out / "slowdown_by_size.png").exists()


def test_hpcc_fat_example_draws_its_throughput_and_fct_cdf(tmp_path: Path) -> None:
    """The HPCC ns-3 inputs: flows start at 2.0 s and end ~2.5 ms later. The series starts at
    the first flow and keeps its last, partial interval, so the plot is not flat zeros."""
    out = tmp_path / "out"
    result = run_cli("run", str(EXAMPLES / "hpcc-fat.toml"), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert (out / "throughput.png").stat().st_size > 0 and (out / "fct_cdf.png").stat().st_size > 0
    series = pl.read_parquet(out / "timeseries.parquet")
    assert series["time_us"].min() == pytest.approx(2_000_100.0)  # first grid point after 2.0 s
    summary = json.loads((out / "summary.json").read_text())
    assert series["time_us"].max() == pytest.approx(summary["sim_time_us"])  # the partial interval
    # Goodput over the series is every byte delivered (rate x interval, summed), within 0.1 %.
    series = series.sort("host", "time_us").with_columns(
        dt_s=pl.col("time_us").diff().over("host").fill_null(100.0) / 1e6)
    delivered = (series["rx_gbps"] * 1e9 / 8 * series["dt_s"]).sum()
    flows = pl.read_parquet(out / "flows.parquet")
    assert delivered == pytest.approx(flows["size_bytes"].sum(), rel=1e-3)
