"""Every command beside `run` under its rule (issue 41 item 3): numbers too large for the Rust
type they become, seeds outside the generator's range, counts that would be expanded into huge
lists, and output paths that are folders (or files) are refused in one line naming the option
before any work starts; a temporary folder is removed whatever happens; a sweep's failed
points never break its tables."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import SMALL_SCENARIO, run_cli
from test_cli_errors import assert_one_line_error

from retx import checked, hw_trace
from retx._native import ScenarioError
from retx.sweep import plan, sweep
from retx.scenario import Scenario

REPO = Path(__file__).resolve().parents[2]
DEMO_SPEC = REPO / "examples" / "calibrate" / "calibrate-demo.toml"
HUGE = str(2**64)


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


MEMORY_CASES = {
    "mtu above u32": (["--mtu", HUGE], ["--mtu", "out of range"]),
    "connections above u32": (["--connections", str(2**32)], ["--connections"]),
    "pool bits negative": (["--pool-bits", "-1"], ["--pool-bits", "at least 0"]),
    "block bits above 64": (["--block-bits", "65"], ["block_bits", "65"]),
    "pool below block": (["--pool-bits", "4"], ["pool_bits"]),
    "bdp beyond u64": (["--bandwidth", "10000000Tbps", "--rtt", "1000000s"], ["rtt", "bandwidth x rtt"]),
}


@pytest.mark.parametrize("case", list(MEMORY_CASES))
def test_memory_refuses_each_number_by_name(case: str) -> None:
    args, words = MEMORY_CASES[case]
    line = assert_one_line_error(run_cli("memory", *args), *words)
    # One rule, not every rule at once.
    assert ";" not in line, line


def test_trace_refuses_its_numbers_and_a_folder_for_the_file_before_running(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("trace", "melo", "--ops", HUGE, "--out", str(tmp_path / "t.txt")), "--ops")
    assert_one_line_error(run_cli("trace", "melo", "--conns", HUGE, "--out", str(tmp_path / "t.txt")), "--conns")
    assert_one_line_error(run_cli("trace", "melo", "--conns", "0", "--out", str(tmp_path / "t.txt")), "--conns")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    started = time.monotonic()
    assert_one_line_error(run_cli("trace", "melo", "--out", str(folder)), "--out", "is a folder")
    # Refused before the run (a melo trace's run takes seconds).
    assert time.monotonic() - started < 30
    below_a_file = tmp_path / "file"
    below_a_file.write_text("")
    assert_one_line_error(run_cli("trace", "melo", "--out", str(below_a_file / "t.txt")), "--out", "is a file")


def test_the_left_trace_removes_its_temporary_folder_whatever_happens(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def broken(*args: object) -> str:
        raise ScenarioError("a run that fails")

    monkeypatch.setattr(hw_trace._native, "hw_trace", broken)
    with pytest.raises(ScenarioError):
        hw_trace.trace("left", ops=10)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seeds", [HUGE, str(10**9), "0", "-3"])
def test_sweep_refuses_a_seed_count_before_expanding_it(scenario_file: Path, tmp_path: Path, seeds: str) -> None:
    started = time.monotonic()
    assert_one_line_error(run_cli("sweep", str(scenario_file), "--seeds", seeds, "--out", str(tmp_path / "s")),
                          "--seeds")
    assert time.monotonic() - started < 30
    assert not (tmp_path / "s").exists()


def test_sweep_seeds_stay_within_the_generators_range(tmp_path: Path) -> None:
    base = Scenario(SMALL_SCENARIO.replace("seed = 7", f"seed = {checked.SEED_MAX - 1}"))
    with pytest.raises(ScenarioError, match="run past the largest seed"):
        plan(base, {}, 3)
    assert plan(base, {}, 2)[1].seeds == [checked.SEED_MAX - 1, checked.SEED_MAX]
    with pytest.raises(ScenarioError, match="at least 0"):
        plan(Scenario(SMALL_SCENARIO), {}, [1, -1])
    with pytest.raises(ScenarioError, match="out of range"):
        plan(Scenario(SMALL_SCENARIO), {}, [2**63])


def test_sweep_counts_its_points_before_making_them(scenario_file: Path) -> None:
    grid = {"duration": [f"{i}ms" for i in range(1, 401)], "topology.link_delay": [f"{i}us" for i in range(1, 401)]}
    with pytest.raises(ScenarioError, match="160000 points"):
        plan(Scenario(SMALL_SCENARIO), grid, 1)


@pytest.mark.parametrize("option", ["--workers"])
@pytest.mark.parametrize("value", [HUGE, "0"])
def test_sweep_and_calibrate_refuse_workers_out_of_range(scenario_file: Path, tmp_path: Path, option: str,
                                                        value: str) -> None:
    assert_one_line_error(run_cli("sweep", str(scenario_file), option, value, "--out", str(tmp_path / "s")), option)
    assert_one_line_error(run_cli("calibrate", str(DEMO_SPEC), option, value, "--out", str(tmp_path / "c")), option)


def test_calibrate_refuses_trials_beyond_its_limit_and_a_file_for_its_folder(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("calibrate", str(DEMO_SPEC), "--trials", HUGE, "--out", str(tmp_path / "c")),
                          "--trials")
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_one_line_error(run_cli("calibrate", str(DEMO_SPEC), "--out", str(a_file)), "--out", "is a file")


@pytest.mark.parametrize("key,value,words", [
    ("seeds", str(10**12), ["calibrate.seeds", "out of range"]),
    ("seeds", f"[1, {2**63}]", ["calibrate.seeds"]),
    ("sampler_seed", str(2**40), ["calibrate.sampler_seed"]),
    ("startup_trials", str(2**40), ["calibrate.startup_trials"]),
    ("trials", str(2**40), ["calibrate.trials"]),
])
def test_calibrate_spec_numbers_are_checked(tmp_path: Path, key: str, value: str, words: list[str]) -> None:
    text = DEMO_SPEC.read_text().replace('"../melo-websearch.toml"', f'"{REPO / "examples" / "melo-websearch.toml"}"')
    lines = [line for line in text.splitlines() if not line.startswith(f"{key} ")]
    lines.insert(lines.index("[calibrate]") + 1, f"{key} = {value}")
    spec = tmp_path / "spec.toml"
    spec.write_text("\n".join(lines) + "\n")
    assert_one_line_error(run_cli("calibrate", str(spec), "--out", str(tmp_path / "c")), *words)


def test_sweep_refuses_a_file_for_its_folder_before_any_point(scenario_file: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_one_line_error(run_cli("sweep", str(scenario_file), "--out", str(a_file)), "--out", "is a file")


def test_reproduce_refuses_a_file_for_its_folder(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_one_line_error(run_cli("reproduce", "melo-fig5a", "--quick", "--out", str(a_file)), "--out", "is a file")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no folder can be made")
@pytest.mark.parametrize("command", ["run", "sweep", "reproduce", "calibrate"])
def test_an_output_folder_that_cannot_be_made_is_refused_before_any_work(command: str, scenario_file: Path) -> None:
    # /proc takes no new folder, even for root: found before the run, not as an internal
    # error when its results are written (hostile input, round five).
    args = {"run": ["run", str(scenario_file)], "sweep": ["sweep", str(scenario_file)],
            "reproduce": ["reproduce", "melo-fig5a", "--quick"], "calibrate": ["calibrate", str(DEMO_SPEC)]}[command]
    r = run_cli(*args, "--out", "/proc/retx-out/sub")
    assert_one_line_error(r, "--out /proc/retx-out/sub", "no folder can be made in /proc")


def test_report_refuses_a_missing_folder_and_a_folder_named_report_html(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("report", str(tmp_path / "nothing")), "report", "no such folder")
    (tmp_path / "report.html").mkdir()
    assert_one_line_error(run_cli("report", str(tmp_path)), "report", "is a folder")


def test_a_sweep_whose_points_all_fail_still_writes_its_tables(tmp_path: Path) -> None:
    # Every point refused (an unknown recovery scheme), and a mix of types in one column.
    result = sweep(Scenario(SMALL_SCENARIO), {"transport.recovery": ["nope", 3]}, 1, tmp_path / "s", workers=1,
                   progress=False)
    assert result.failed.height == 2
    for name in ("runs.parquet", "flows.parquet", "summary.parquet"):
        pl.read_parquet(tmp_path / "s" / name)
    assert not any(p.name.startswith(".") for p in (tmp_path / "s").iterdir() if p.name != ".lock"), \
        os.listdir(tmp_path / "s")


def test_a_finished_point_whose_flows_cannot_be_read_fails_alone(tmp_path: Path) -> None:
    out = tmp_path / "s"
    first = sweep(Scenario(SMALL_SCENARIO), {"topology.link_delay": ["1us", "2us"]}, 1, out, workers=1,
                  progress=False)
    assert first.failed.height == 0
    broken = out / "points" / first.runs["hash"][0] / "flows.parquet"
    broken.write_bytes(b"not parquet")
    again = sweep(Scenario(SMALL_SCENARIO), {"topology.link_delay": ["1us", "2us"]}, 1, out, workers=1,
                  progress=False)
    assert again.runs["status"].to_list() == ["failed", "done"]
    assert "cannot be read" in again.runs["error"][0]
    assert pl.read_parquet(out / "summary.parquet").height == 1
    assert pl.read_parquet(out / "runs.parquet")["status"].to_list() == ["failed", "done"]
    # The next run of the sweep runs it again.
    third = sweep(Scenario(SMALL_SCENARIO), {"topology.link_delay": ["1us", "2us"]}, 1, out, workers=1,
                  progress=False)
    assert third.runs["status"].to_list() == ["done", "done"]
