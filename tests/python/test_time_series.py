"""Watched ports, flows and NIC pools (`[output] queues`, `cc_flows`, `pools`) from the command line:
their tables and plots."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from conftest import run_cli
from retx.plots import plot_cc, plot_pools, plot_queues
from retx.results import Results

SCENARIO = """\
name = "watched"
duration = "3ms"
[topology]
kind = "single-switch"
hosts = 3
host_link = "10Gbps"
[switch]
ecn = { enabled = true, kmin = "20KB", kmax = "20KB", pmax = 1.0 }
[transport]
recovery = "tcp"
cc = "dctcp-window"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h2", size = "1MB" }, { src = "h1", dst = "h2", size = "1MB", start = "200us" }]
[output]
sample_interval = "20us"
queues = ["sw0->h2"]
cc_flows = [0, 1]
"""


def test_run_writes_and_plots_the_watched_ports_and_flows(tmp_path: Path) -> None:
    scenario = tmp_path / "watched.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    result = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert (out / "queues.png").stat().st_size > 0 and (out / "cc.png").stat().st_size > 0
    queues = pl.read_parquet(out / "queues.parquet")
    cc = pl.read_parquet(out / "cc.parquet")
    # Two 10 Gbps senders into one 10 Gbps port: it runs at line rate while both send, and
    # DCTCP's ECN step keeps its queue near K = 20 KB rather than the buffer.
    busy = queues.filter((pl.col("time_us") > 300) & (pl.col("time_us") < 1000))
    assert busy["tx_gbps"].min() > 9.0
    assert busy["ecn_marks"].sum() > 0
    assert busy["queue_bytes"].max() < 100_000
    assert set(cc["flow_id"].unique()) == {0, 1}
    assert cc.filter(pl.col("flow_id") == 1)["time_us"].min() >= 200
    # The figures have a line per port / per flow (and the flows' windows on a second axis).
    assert len(plot_queues(queues).axes[0].lines) == 2  # queue and its peak
    figure = plot_cc(cc)
    assert len(figure.axes[0].lines) == 2 and len(figure.axes[1].lines) == 2


def test_an_unwatched_run_draws_neither_plot(tmp_path: Path) -> None:
    scenario = tmp_path / "plain.toml"
    scenario.write_text(SCENARIO.replace('queues = ["sw0->h2"]\ncc_flows = [0, 1]\n', ""))
    out = tmp_path / "out"
    assert run_cli("run", str(scenario), "--out", str(out), "--quiet").returncode == 0
    assert not (out / "queues.png").exists() and not (out / "cc.png").exists()
    # Nothing watched: no series files either (an empty table when loaded).
    assert not (out / "cc.parquet").exists() and not (out / "queues.parquet").exists()
    assert Results.load(out).cc.height == 0


MELO_SCENARIO = """\
name = "pools"
seed = 3
duration = "20ms"
stop_when_done = true
[topology]
kind = "single-switch"
hosts = 3
[transport]
recovery = "melo"
[[loss]]
at = "switch:sw0"
rate = 0.01
[workload]
kind = "flow-list"
flows = [{ src = "h1", dst = "h0", size = "300KB" }, { src = "h2", dst = "h0", size = "300KB" }]
[output]
sample_interval = "20us"
pools = ["h0"]
"""


def test_run_writes_and_plots_the_watched_pools(tmp_path: Path) -> None:
    scenario = tmp_path / "pools.toml"
    scenario.write_text(MELO_SCENARIO)
    out = tmp_path / "out"
    result = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert (out / "pools.png").stat().st_size > 0
    pools = pl.read_parquet(out / "pools.parquet")
    assert set(pools["pool"].unique()) == {"melo_rx", "melo_tx"} and set(pools["host"].unique()) == {"h0"}
    rx = pools.filter(pl.col("pool") == "melo_rx")
    # h0 receives both flows under 1 % loss: its receive pool holds bitmap blocks while holes
    # are open, and the highest peak between samples is the run's peak share of the pool.
    summary = Results.load(out).summary
    assert rx["peak"].max() == round(summary["melo_rx_pool_peak"] * rx["capacity"][0])
    assert (rx["peak"] >= rx["used"]).all() and rx["used"].max() > 0 and rx["used"][-1] == 0
    assert len(plot_pools(pools).axes[0].lines) == 4  # used and peak of each pool
    # Unwatched: an empty table, no plot.
    scenario.write_text(MELO_SCENARIO.replace('pools = ["h0"]\n', ""))
    assert run_cli("run", str(scenario), "--out", str(tmp_path / "plain"), "--quiet").returncode == 0
    assert not (tmp_path / "plain" / "pools.png").exists()
    assert not (tmp_path / "plain" / "pools.parquet").exists()
