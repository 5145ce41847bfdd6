"""`retx --memory-budget SIZE` (issue 41): the core's total memory budget set on the command line
for every command, as RETX_MEMORY_BUDGET sets it; refused in one line when it is not a size."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def test_a_budget_below_the_runs_estimate_refuses_it_before_it_starts(small_scenario_file: Path, tmp_path: Path) -> None:
    tight = run_cli("--memory-budget", "1KB", "run", str(small_scenario_file), "--out", str(tmp_path / "a"), "--quiet")
    assert tight.returncode != 0
    lines = [line for line in tight.stderr.splitlines() if line.startswith("retx: error:")]
    assert len(lines) == 1 and "above the memory budget of 1.0 KB" in lines[0], tight.stderr
    assert not (tmp_path / "a").exists()
    roomy = run_cli("--memory-budget", "8GB", "run", str(small_scenario_file), "--out", str(tmp_path / "b"), "--quiet")
    assert roomy.returncode == 0, roomy.stderr


def test_a_budget_that_is_not_a_size_is_refused_naming_the_option(small_scenario_file: Path, tmp_path: Path) -> None:
    for bad in ("lots", "0", "-5GB", "12 parsecs"):
        done = run_cli("--memory-budget", bad, "run", str(small_scenario_file), "--out", str(tmp_path / "x"))
        assert done.returncode == 2, (bad, done.stderr)
        assert "--memory-budget" in done.stderr and "Traceback" not in done.stderr, (bad, done.stderr)
