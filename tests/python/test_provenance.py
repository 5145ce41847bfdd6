"""Provenance in every output folder, `retx --version`, and `--out` refusing to overwrite."""

from __future__ import annotations

import json
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

import retx
from retx.provenance import git_commit, read_parquet_provenance, scenario_hash, version
from conftest import REPO, run_cli

FIELDS = {"retx_version", "git_commit", "started_utc", "host", "scenario_hash"}


def test_version_flag_prints_package_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"retx {version()}"
    assert version() != "unknown"


def test_git_commit_is_head_of_this_checkout() -> None:
    # None when the tests run from an export without .git (retx is then no checkout either).
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert git_commit() == (done.stdout.strip() if done.returncode == 0 else None)


def test_run_folder_carries_provenance(small_scenario_file: Path, tmp_path: Path) -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    out = tmp_path / "out"
    result = run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "summary.json").read_text())["provenance"]
    assert set(record) == FIELDS
    assert record["retx_version"] == version()
    assert record["host"] == socket.gethostname()
    assert record["git_commit"] == git_commit()
    assert record["scenario_hash"] == scenario_hash((out / "scenario.toml").read_text())
    started = datetime.fromisoformat(record["started_utc"])
    assert started.utcoffset().total_seconds() == 0 and started >= before
    # Nothing watched: no queues, cc or pools file (issue 33: outputs only when asked).
    assert not (out / "queues.parquet").exists()
    for table in ["flows", "timeseries", "memory"]:
        stored = read_parquet_provenance(out / f"{table}.parquet")
        assert stored == {key: str(value) for key, value in record.items() if value is not None}


def test_scenario_hash_follows_the_resolved_text(small_scenario_file: Path) -> None:
    base = retx.Scenario.load(small_scenario_file)
    same = retx.Scenario.from_str(base.text + "\n# a comment changes nothing resolved\n")
    other = base.with_overrides({"seed": 8})
    assert scenario_hash(base.resolved()) == scenario_hash(same.resolved())
    assert scenario_hash(base.resolved()) != scenario_hash(other.resolved())
    assert len(scenario_hash(base.resolved())) == 12


def test_results_round_trip_keeps_provenance(small_scenario_file: Path, tmp_path: Path) -> None:
    results = retx.run(small_scenario_file, progress=False)
    loaded = retx.Results.load(results.save(tmp_path / "r"))
    assert loaded.provenance == results.provenance and set(results.provenance) == FIELDS
    assert loaded.summary == results.summary  # "fct" and "provenance" live beside it


def test_run_refuses_to_overwrite_results_without_force(small_scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet").returncode == 0
    first = (out / "summary.json").read_text()
    refused = run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet", "--seed", "9")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"retx: error: --out {out}: already holds results; pass --force to overwrite them"]
    assert (out / "summary.json").read_text() == first
    forced = run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet", "--seed", "9",
                     "--force")
    assert forced.returncode == 0, forced.stderr
    assert json.loads((out / "summary.json").read_text())["seed"] == 9


def test_run_into_an_empty_existing_folder_needs_no_force(small_scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert run_cli("run", str(small_scenario_file), "--out", str(out), "--quiet").returncode == 0
    assert pl.read_parquet(out / "flows.parquet").height == 1
