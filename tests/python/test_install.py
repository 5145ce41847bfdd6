"""`pip install .` into an environment of the user's own, as a user would.

A fresh virtualenv, nothing in it but what pip installs from this checkout and the
dependencies it declares: the `retx` command runs a scenario, every module imports (so a
dependency used but not declared fails here), and the package runs from the installed copy,
not from this checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SMALL_SCENARIO

# Building reuses this checkout's target/ folder (pip builds in tree), so only the bindings
# relink; downloads come from pip's cache after `make build`.
INSTALL_TIMEOUT_SECONDS = 1200


# Nothing of the test run's own environment leaks in: no PYTHONPATH, no active virtualenv.
CLEAN_ENV = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_pip_install_into_a_fresh_environment(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, retx = venv / "bin" / "python", venv / "bin" / "retx"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(REPO)],
                             capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, env=CLEAN_ENV)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]

    modules = sorted(p.stem for p in (REPO / "python" / "retx").glob("*.py") if p.stem != "__main__")
    probe = ("import importlib, json, retx\n"
             f"for m in {modules!r}: importlib.import_module('retx.' + m)\n"
             "print(json.dumps({'file': retx.__file__}))\n")
    imported = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path, env=CLEAN_ENV)
    assert imported.returncode == 0, imported.stderr[-3000:]
    where = Path(json.loads(imported.stdout)["file"])
    assert venv in where.parents and REPO not in where.parents

    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_SCENARIO)
    ran = subprocess.run([str(retx), "run", str(scenario), "--out", str(tmp_path / "out"), "--quiet"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=CLEAN_ENV)
    assert ran.returncode == 0, ran.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["flows_completed"] == 1
    # An installed wheel is not a git checkout: no commit is claimed.
    assert summary["provenance"]["git_commit"] is None
