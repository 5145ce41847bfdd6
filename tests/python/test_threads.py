"""`retx run --threads N` and `[run] threads` (issue 45): the run is split over N threads and its
results are the serial run's, file for file; a network that cannot be split runs on one thread
and says why once; the option is checked like every other."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from conftest import REPO, run_cli

FAT_TREE = REPO / "examples" / "fat-tree.toml"


def _summary(folder: Path) -> dict:
    summary = json.loads((folder / "summary.json").read_text())
    # What differs between any two runs of the same scenario: when and how fast it ran.
    for key in ("wall_seconds", "events_per_sec", "provenance"):
        summary.pop(key, None)
    return summary


def test_two_threads_write_the_serial_runs_tables_and_summary(tmp_path: Path) -> None:
    one = run_cli("run", str(FAT_TREE), "--out", str(tmp_path / "one"), "--quiet", "--no-plots")
    two = run_cli("run", str(FAT_TREE), "--out", str(tmp_path / "two"), "--quiet", "--no-plots", "--threads", "2")
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    assert "ran on 2 threads: 2 partitions, lookahead 1 us" in two.stderr, two.stderr
    assert "ran on" not in one.stderr
    for table in ("flows.parquet", "timeseries.parquet"):
        assert_frame_equal(pl.read_parquet(tmp_path / "one" / table), pl.read_parquet(tmp_path / "two" / table))
    assert _summary(tmp_path / "one") == _summary(tmp_path / "two")


def test_a_network_too_small_to_gain_runs_on_one_thread_and_says_why(small_scenario_file: Path, tmp_path: Path) -> None:
    done = run_cli("run", str(small_scenario_file), "--out", str(tmp_path / "a"), "--quiet", "--no-plots", "--threads", "4")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "ran on one thread" in line]
    assert said == ["retx: ran on one thread: the network is too small to gain: 2 hosts, fewer than 8 per thread "
                    "(run.min_hosts_per_thread)"], done.stderr
    # Asked to split it anyway, its one switch cannot be.
    path = tmp_path / "any.toml"
    path.write_text(small_scenario_file.read_text() + "\n[run]\nmin_hosts_per_thread = 1\n")
    done = run_cli("run", str(path), "--out", str(tmp_path / "b"), "--quiet", "--no-plots", "--threads", "4")
    assert "retx: ran on one thread: the network has one switch" in done.stderr, done.stderr


def test_a_thread_count_out_of_range_is_refused_naming_the_option(small_scenario_file: Path, tmp_path: Path) -> None:
    for bad in ("0", "1025", "two"):
        done = run_cli("run", str(small_scenario_file), "--out", str(tmp_path / "x"), "--threads", bad)
        assert done.returncode == 2 and "--threads" in done.stderr and "Traceback" not in done.stderr, (bad, done.stderr)
    in_file = small_scenario_file.read_text() + "\n[run]\nthreads = 0\n"
    path = tmp_path / "zero.toml"
    path.write_text(in_file)
    done = run_cli("run", str(path), "--out", str(tmp_path / "y"))
    assert done.returncode == 2 and "run.threads" in done.stderr, done.stderr


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@pytest.mark.skipif(CORES >= 4, reason="the example's fat-tree splits into at most 4 partitions")
def test_more_threads_than_cores_are_warned(tmp_path: Path) -> None:
    # Partitions beyond the cores take turns and wait at every window: slower, never wrong.
    # Small networks split too at min_hosts_per_thread = 1: the k = 4 fat-tree into its 4 pods.
    done = run_cli("run", str(FAT_TREE), "--out", str(tmp_path / "o"), "--quiet", "--no-plots",
                   "--threads", "4", "--set", "run.min_hosts_per_thread=1")
    assert done.returncode == 0, done.stderr
    assert "ran on 4 threads" in done.stderr, done.stderr
    assert f"retx: warning: 4 threads on {CORES} cores" in done.stderr, done.stderr
    two = run_cli("run", str(FAT_TREE), "--out", str(tmp_path / "t"), "--quiet", "--no-plots", "--threads", str(CORES))
    assert "threads on" not in two.stderr, two.stderr
