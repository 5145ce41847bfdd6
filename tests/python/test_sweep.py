"""`retx sweep` and `retx.sweep`: the grid, point folders, index, combined tables, failures,
resuming (also after SIGKILL), statistics across seeds, and the Ray executor."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import polars as pl
import pytest

import retx
from retx.provenance import read_parquet_provenance, scenario_hash
from retx.sweep import parse_set_option, plan, summarise, t_975
from conftest import SMALL_SCENARIO, run_cli
from test_cli_errors import assert_one_line_error

SWEPT = SMALL_SCENARIO + """
[sweep]
set = { "transport.cc" = ["dcqcn", "hpcc"] }
seeds = 2
"""
# Nothing watched: no queues, cc or pools files.
POINT_FILES = {"flows.parquet", "timeseries.parquet", "memory.parquet", "summary.json", "scenario.toml", "point.json"}


@pytest.fixture
def swept_file(tmp_path: Path) -> Path:
    path = tmp_path / "swept.toml"
    path.write_text(SWEPT)
    return path


def assert_complete_point(folder: Path) -> None:
    assert {p.name for p in folder.iterdir()} == POINT_FILES
    assert folder.name == scenario_hash((folder / "scenario.toml").read_text())
    assert pl.read_parquet(folder / "flows.parquet").height == 1
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["provenance"]["scenario_hash"] == folder.name


# --- the grid ---------------------------------------------------------------------------------

def test_plan_reads_the_sweep_table_and_lets_arguments_override_it(swept_file: Path) -> None:
    base, grid = plan(swept_file)
    assert "sweep" not in base.data and "sweep" not in base.resolved()
    assert grid.values == {"transport.cc": ["dcqcn", "hpcc"]}
    assert grid.seeds == [7, 8]  # from the scenario's seed 7
    _, grid = plan(swept_file, {"transport.cc": ["timely"], "transport.recovery": ["gbn", "irn"]}, 3)
    assert grid.values == {"transport.cc": ["timely"], "transport.recovery": ["gbn", "irn"]}
    assert grid.seeds == [7, 8, 9]
    assert plan(swept_file, seeds=[3, 1]).__getitem__(1).seeds == [3, 1]


def test_plan_flattens_nested_set_tables(tmp_path: Path) -> None:
    path = tmp_path / "nested.toml"
    path.write_text(SMALL_SCENARIO + '\n[sweep.set.transport]\ncc = ["dcqcn"]\nrecovery = ["gbn", "irn"]\n')
    _, grid = plan(path)
    assert grid.values == {"transport.cc": ["dcqcn"], "transport.recovery": ["gbn", "irn"]}
    assert grid.seeds == [7]


def test_parse_set_option_reads_toml_values_else_strings() -> None:
    assert parse_set_option("transport.cc=dcqcn,hpcc") == ("transport.cc", ["dcqcn", "hpcc"])
    assert parse_set_option("loss.rate=0.01, 1e-3") == ("loss.rate", [0.01, 0.001])
    assert parse_set_option("a.b=1,true,\"x y\"") == ("a.b", [1, True, "x y"])


@pytest.mark.parametrize("sweep_table, args, must_mention", [
    ("[sweep]\ncolour = 1\n", [], ["sweep.colour", "unknown key"]),
    ("[sweep]\nseeds = 0\n", [], ["sweep.seeds", "at least 1"]),
    ("[sweep]\nset = { seed = [1, 2] }\n", [], ["'seed'", "seeds"]),
    ("[sweep]\nset = { \"transport.cc\" = \"dcqcn\" }\n", [], ["sweep.set.transport.cc", "list"]),
    ("", ["--set", "transport.cc"], ["--set transport.cc", "key=value"]),
    ("", ["--executor", "spark"], ["--executor", "spark"]),
    ("", ["--workers", "0"], ["--workers"]),
])
def test_bad_grid_is_one_line_error(tmp_path: Path, sweep_table: str, args: list[str],
                                    must_mention: list[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SMALL_SCENARIO + "\n" + sweep_table)
    out = tmp_path / "out"
    assert_one_line_error(run_cli("sweep", str(path), "--out", str(out), *args), *must_mention)
    assert not out.exists()


@pytest.mark.parametrize("command", ["run", "validate"])
def test_run_and_validate_point_a_sweep_file_to_retx_sweep(swept_file: Path, command: str) -> None:
    assert_one_line_error(run_cli(command, str(swept_file)), "sweep:", f"retx sweep {swept_file}")


# --- statistics across seeds --------------------------------------------------------------------

def test_t_quantiles() -> None:
    assert t_975(1) == 12.7062 and t_975(2) == 4.3027 and t_975(30) == 2.0423
    assert t_975(35) == 2.0423  # between entries: the next lower one, a wider interval
    assert t_975(1000) == 1.96
    with pytest.raises(ValueError):
        t_975(0)


def test_summarise_mean_and_confidence_interval() -> None:
    per_run = pl.DataFrame({
        "cc": ["a", "a", "a", "b", "b"],
        "seed": [1, 2, 3, 1, 2],
        "mean_fct_us": [1.0, 2.0, 3.0, 10.0, float("nan")],  # b's second seed finished nothing
        "slowdown_p50": [1.0, 1.0, 1.0, 2.0, 4.0],
        "slowdown_p99": [2.0, 4.0, 6.0, 1.0, 1.0],
        "goodput_gbps": [5.0, 5.0, 5.0, 1.0, 3.0],
    })
    table = summarise(per_run, ["cc"])
    a, b = table.rows(named=True)
    assert (a["cc"], a["seeds"], b["seeds"]) == ("a", 3, 2)
    # [1, 2, 3]: mean 2, sd 1, half-width t(0.975, 2) * 1 / sqrt(3)
    assert a["mean_fct_us_mean"] == 2.0
    assert a["mean_fct_us_ci95"] == pytest.approx(4.3027 / math.sqrt(3))
    assert a["slowdown_p99_ci95"] == pytest.approx(4.3027 * 2 / math.sqrt(3))
    assert a["slowdown_p50_ci95"] == 0.0
    # the NaN run is left out: one value, no interval
    assert b["mean_fct_us_mean"] == 10.0 and b["mean_fct_us_ci95"] is None
    # [2, 4]: sd sqrt(2), half-width 12.7062 * sqrt(2) / sqrt(2)
    assert b["slowdown_p50_mean"] == 3.0 and b["slowdown_p50_ci95"] == pytest.approx(12.7062)


# --- whole sweeps -------------------------------------------------------------------------------

def test_sweep_cli_writes_points_index_flows_and_summary(swept_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("sweep", str(swept_file), "--set", "transport.recovery=gbn,irn", "--out", str(out),
                     "--quiet")
    assert result.returncode == 0, result.stderr
    assert f"8 of 8 points done; wrote {out}/" in result.stdout

    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.columns == ["transport.cc", "transport.recovery", "seed", "hash", "status", "error",
                            "wall_seconds"]
    assert runs.select("transport.cc", "transport.recovery", "seed").rows() == [
        (cc, recovery, seed) for cc in ["dcqcn", "hpcc"] for recovery in ["gbn", "irn"] for seed in [7, 8]]
    assert runs["status"].to_list() == ["done"] * 8 and runs["error"].null_count() == 8
    assert runs["hash"].n_unique() == 8 and (runs["wall_seconds"] > 0).all()
    folders = sorted(p.name for p in (out / "points").iterdir())
    assert folders == sorted(runs["hash"])
    for folder in (out / "points").iterdir():
        assert_complete_point(folder)
    # The point's folder holds the point: its scenario has the swept values and the seed.
    row = runs.row(3, named=True)
    resolved = (out / "points" / row["hash"] / "scenario.toml").read_text()
    assert 'cc = "dcqcn"' in resolved and 'recovery = "irn"' in resolved and "seed = 8" in resolved

    flows = pl.read_parquet(out / "flows.parquet")
    assert flows.height == 8
    assert {"transport.cc", "transport.recovery", "seed", "hash", "fct_us"} <= set(flows.columns)
    assert flows.select("hash", "seed").rows() == runs.select("hash", "seed").rows()

    summary = pl.read_parquet(out / "summary.parquet")
    assert summary.height == 4 and summary["seeds"].to_list() == [2] * 4
    # Checked against the flows table: one flow per run, so a run's mean FCT is its FCT.
    first = flows.filter((pl.col("transport.cc") == "dcqcn") & (pl.col("transport.recovery") == "gbn"))
    fct = first["fct_us"].to_list()
    row = summary.row(0, named=True)
    assert row["mean_fct_us_mean"] == pytest.approx(sum(fct) / 2)
    assert row["mean_fct_us_ci95"] == pytest.approx(12.7062 * abs(fct[0] - fct[1]) / 2)

    for table in ["runs", "flows", "summary"]:
        record = read_parquet_provenance(out / f"{table}.parquet")
        assert record["retx_version"] == retx.__version__
        assert record["scenario_hash"] == scenario_hash((out / "sweep.toml").read_text())
    assert "[sweep]" in (out / "sweep.toml").read_text()


def test_failed_point_is_recorded_and_the_grid_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(SMALL_SCENARIO)
    out = tmp_path / "out"
    result = run_cli("sweep", str(path), "--set", "transport.recovery=gbn,bogus", "--set",
                     "topology.host_link=40Gbps,100Gbps", "--out", str(out), "--quiet")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "2 of 4 points done" in result.stdout
    runs = pl.read_parquet(out / "runs.parquet")
    failed = runs.filter(pl.col("status") == "failed")
    assert failed["transport.recovery"].to_list() == ["bogus", "bogus"]
    for error in failed["error"]:
        assert "\n" not in error and error.startswith("transport.recovery:") and "bogus" in error
    done = runs.filter(pl.col("status") == "done")
    assert done["topology.host_link"].to_list() == ["40Gbps", "100Gbps"]
    assert pl.read_parquet(out / "flows.parquet").height == 2
    assert pl.read_parquet(out / "summary.parquet").height == 2


def test_rerun_skips_finished_points_and_repairs_a_lost_index(swept_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = retx.sweep(swept_file, out=out, workers=2, progress=False)
    assert first.runs["status"].to_list() == ["done"] * 4
    started = {p.name: (p / "point.json").read_text() + (p / "summary.json").read_text()
               for p in (out / "points").iterdir()}
    # As if killed between a point's rename and the index update, and mid-write of another.
    (out / "runs.parquet").unlink()
    (out / "points" / ".tmp-0123456789ab").mkdir()
    again = retx.sweep(swept_file, out=out, workers=2, progress=False)
    assert again.runs.equals(first.runs)
    assert {p.name: (p / "point.json").read_text() + (p / "summary.json").read_text()
            for p in (out / "points").iterdir()} == started  # nothing ran again
    assert again.flows.equals(first.flows) and again.summary.equals(first.summary)
    # A grown grid runs only the new points.
    grown = retx.sweep(swept_file, grid={"transport.cc": ["dcqcn", "hpcc", "timely"]}, out=out,
                       workers=2, progress=False)
    assert grown.runs.height == 6 and len(list((out / "points").iterdir())) == 6
    assert grown.runs.head(4).equals(first.runs)


def test_a_second_sweep_into_the_same_folder_is_refused(swept_file: Path, tmp_path: Path) -> None:
    import fcntl

    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running sweep holds it
        assert_one_line_error(run_cli("sweep", str(swept_file), "--out", str(out)),
                              f"--out {out}", "another sweep")
    assert not (out / "runs.parquet").exists()
    assert run_cli("sweep", str(swept_file), "--out", str(out), "--quiet").returncode == 0


def test_python_api_and_repr(tmp_path: Path) -> None:
    base = retx.Scenario.from_str(SMALL_SCENARIO)
    result = retx.sweep(base, {"transport.recovery": ["gbn", "irn"]}, seeds=[1, 2], out=tmp_path / "s",
                        workers=1, progress=False)
    assert result.runs["seed"].to_list() == [1, 2, 1, 2]
    assert result.summary["transport.recovery"].to_list() == ["gbn", "irn"]
    assert repr(result).splitlines() == [f"SweepResult({str(tmp_path / 's')!r})",
                                         "  swept: transport.recovery", "  points done: 4/4"]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkilled_sweep_resumes_with_every_point_once(tmp_path: Path) -> None:
    # Three ~1.4 s points, one at a time: kill the sweep when the first has landed.
    slow = SMALL_SCENARIO.replace('size = "200KB"', 'size = "2GB"').replace('duration = "2ms"', 'duration = "1s"')
    path = tmp_path / "slow.toml"
    path.write_text(slow.replace("rate = 0.01", "rate = 0.0"))
    out = tmp_path / "out"
    marker = f"RETX_TEST_SWEEP={uuid.uuid4()}"
    key, value = marker.split("=")
    command = [sys.executable, "-m", "retx", "sweep", str(path), "--seeds", "3", "--workers", "1",
               "--out", str(out), "--quiet"]
    sweep = subprocess.Popen(command, env={**os.environ, key: value}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    points = out / "points"
    deadline = time.monotonic() + 60
    while not (points.is_dir() and any(not p.name.startswith(".") for p in points.iterdir())):
        assert sweep.poll() is None, sweep.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    finished_before = {p.name for p in points.iterdir() if not p.name.startswith(".")}
    assert 1 <= len(finished_before) < 3
    # The worker dies with the sweep at once, not when its point ends (~1 s later).
    deadline = time.monotonic() + 0.5
    while _processes_with(value) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(value) == []

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs["seed"].to_list() == [7, 8, 9]
    assert runs["hash"].n_unique() == 3 and runs["status"].to_list() == ["done"] * 3
    assert sorted(p.name for p in points.iterdir()) == sorted(runs["hash"])  # no temp left
    for folder in points.iterdir():
        assert_complete_point(folder)
    assert pl.read_parquet(out / "flows.parquet")["seed"].to_list() == [7, 8, 9]


def test_ray_executor_matches_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")  # requirements-dev.txt installs it, so CI runs this
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    base = retx.Scenario.from_str(SMALL_SCENARIO)
    grid = {"transport.recovery": ["gbn", "irn"]}
    try:
        remote = retx.sweep(base, grid, seeds=2, out=tmp_path / "ray", executor="ray", progress=False)
    finally:
        ray.shutdown()
    local = retx.sweep(base, grid, seeds=2, out=tmp_path / "local", progress=False)
    assert remote.runs["status"].to_list() == ["done"] * 4
    assert remote.runs.drop("wall_seconds").equals(local.runs.drop("wall_seconds"))
    # Same points, same simulation: the engine is deterministic wherever it runs.
    assert remote.flows.equals(local.flows)
    for folder in (tmp_path / "ray" / "points").iterdir():
        assert_complete_point(folder)
