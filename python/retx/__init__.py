"""retx: a packet-level simulator of loss recovery and congestion control for RDMA NICs.

Python declares a scenario, the Rust core (`retx._native`) runs it in one call, and the
results come back as polars DataFrames.

The names below are imported when first used (PEP 562), not with the package: `retx --help`,
`retx validate` and the sweep's worker processes import `retx` without paying for polars,
matplotlib and the reproductions they do not use (issue 45 item 6). `from retx import Results`
and `retx.plots.plot_fct_cdf` work as they always did.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from retx._native import ScenarioError

if TYPE_CHECKING:
    from retx import metrics, plots, progress
    from retx.calibrate import CalibrationResult, calibrate
    from retx.results import Results
    from retx.runner import run, run_many
    from retx.scenario import Scenario
    from retx.sweep import SweepResult, sweep

    __version__: str

# Each public name and the module that defines it (a submodule itself when it has no entry).
_LAZY = {
    "CalibrationResult": "retx.calibrate",
    "Results": "retx.results",
    "Scenario": "retx.scenario",
    "SweepResult": "retx.sweep",
    "calibrate": "retx.calibrate",
    "run": "retx.runner",
    "run_many": "retx.runner",
    "sweep": "retx.sweep",
}
_SUBMODULES = ("metrics", "plots", "progress")

__all__ = ["CalibrationResult", "Results", "Scenario", "ScenarioError", "SweepResult", "calibrate", "metrics", "plots",
           "progress", "run", "run_many", "sweep"]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from retx.provenance import version
        value: Any = version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"retx.{name}")
    else:
        raise AttributeError(f"module 'retx' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES, "__version__"})


class _Package(ModuleType):
    """`retx.calibrate` is the function `retx.calibrate.calibrate`, as it was when this package
    imported it eagerly: importing the subpackage `retx.calibrate` (which Python records on its
    parent by setting the attribute) leaves the function in place."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("calibrate", "sweep") and isinstance(value, ModuleType) and value.__name__ == f"retx.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
