"""retx: a packet-level simulator of loss recovery and congestion control for RDMA NICs.

Python declares a scenario, the Rust core (`retx._native`) runs it in one call, and the
results come back as polars DataFrames.
"""

from retx import metrics, plots, progress
from retx._native import ScenarioError
from retx.calibrate import CalibrationResult, calibrate
from retx.provenance import version as _version
from retx.results import Results
from retx.runner import run, run_many
from retx.scenario import Scenario
from retx.sweep import SweepResult, sweep

__version__ = _version()

__all__ = ["CalibrationResult", "Results", "Scenario", "ScenarioError", "SweepResult", "calibrate", "metrics", "plots",
           "progress", "run", "run_many", "sweep"]
