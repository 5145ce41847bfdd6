"""The command line imports only what a command uses (issue 45 item 6): polars, matplotlib and
the reproductions, sweep, calibration and report machinery are imported by the commands that
need them, so `retx --help`, `retx validate` and `retx run --no-plots` start in a fraction of
the time. Each check is a fresh interpreter's `sys.modules`, never a timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLES, REPO

HEAVY = ("polars", "matplotlib", "numpy", "optuna", "pyarrow", "rich")
RETX_HEAVY = ("retx.plots", "retx.results", "retx.sweep", "retx.calibrate", "retx.report", "retx.runner",
              "retx.reproduce.melo_fig5a")


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return [name for name in (*HEAVY, *RETX_HEAVY) if name in modules]


def test_importing_the_cli_or_the_package_imports_no_heavy_library() -> None:
    assert heavy(loaded_after("import retx.cli")) == []
    assert heavy(loaded_after("import retx")) == []


def test_help_and_validate_import_no_heavy_library() -> None:
    help_code = "from retx.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass"
    assert heavy(loaded_after(help_code)) == []
    validate = f"from retx.cli import app\ntry:\n    app(['validate', {str(EXAMPLES / 'demo.toml')!r}])\nexcept SystemExit:\n    pass"
    assert heavy(loaded_after(validate)) == []


def test_a_run_without_plots_imports_no_matplotlib(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = (f"from retx.cli import app\ntry:\n    app(['run', {str(EXAMPLES / 'demo.toml')!r}, '--out', {str(out)!r}, "
            "'--quiet', '--no-plots'])\nexcept SystemExit:\n    pass")
    modules = loaded_after(code)
    assert "matplotlib" not in modules and "retx.plots" not in modules
    assert (out / "summary.json").exists() and (out / "flows.parquet").exists()
    assert not list(out.glob("*.png"))


def test_the_package_names_resolve_when_used() -> None:
    """`retx.Results`, `retx.plots`, `from retx import run` and `retx.__version__` as before;
    `retx.calibrate` and `retx.sweep` stay the functions even after their modules load."""
    code = ("import retx, types\n"
            "from retx import Results, Scenario, run, run_many, SweepResult, CalibrationResult, ScenarioError\n"
            "import retx.calibrate.spec, retx.sweep\n"
            "assert callable(retx.calibrate) and not isinstance(retx.calibrate, types.ModuleType)\n"
            "assert callable(retx.sweep) and not isinstance(retx.sweep, types.ModuleType)\n"
            "assert isinstance(retx.plots, types.ModuleType) and retx.plots.plot_fct_cdf\n"
            "assert isinstance(retx.metrics, types.ModuleType) and isinstance(retx.progress, types.ModuleType)\n"
            "assert isinstance(retx.__version__, str)\n"
            "assert set(retx.__all__) <= set(dir(retx))")
    loaded_after(code)


def test_the_executors_and_sweep_table_are_the_sweeps() -> None:
    """The CLI reads them from the light modules the sweep now takes them from."""
    from retx import checked, scenario
    from retx.sweep import EXECUTORS, SWEEP_TABLE
    assert EXECUTORS is checked.EXECUTORS
    assert SWEEP_TABLE == scenario.SWEEP_TABLE == "sweep"
