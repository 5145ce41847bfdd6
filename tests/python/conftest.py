"""Shared helpers: a small fast scenario and a way to run the `retx` CLI as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# Two hosts, one 200 KB flow with some loss: enough to exercise recovery, fast to simulate.
SMALL_SCENARIO = """\
name = "small"
seed = 7
duration = "2ms"

[topology]
kind = "single-switch"
hosts = 2
host_link = "40Gbps"
link_delay = "2us"

[transport]
recovery = "gbn"
cc = "dcqcn"

[[loss]]
at = "switch:sw0"
rate = 0.01

[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "200KB", start = "0us" }]
"""


@pytest.fixture
def small_scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "retx", *args],
        capture_output=True, text=True, cwd=cwd, timeout=600,
    )
