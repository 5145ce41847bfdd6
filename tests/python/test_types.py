"""The package type-checks against its stubs, and the stubs match the compiled module.

stubtest imports retx._native and compares every name, signature and default in
_native.pyi with the real objects, so a function added, renamed or given a new parameter in
crates/retx-py without its stub fails here; mypy then checks the Python package's use of them.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_stubs_match_the_compiled_module() -> None:
    done = run("mypy.stubtest", "retx._native")
    assert done.returncode == 0, done.stdout + done.stderr


def test_package_type_checks() -> None:
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
