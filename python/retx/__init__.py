"""retx: a packet-level simulator of loss recovery and congestion control for RDMA NICs.

Python declares a scenario, the Rust core (`retx._native`) runs it in one call, and the
results come back as polars DataFrames.
"""

from retx._native import ScenarioError
from retx.results import Results
from retx.runner import run, run_many
from retx.scenario import Scenario

__all__ = ["Results", "Scenario", "ScenarioError", "run", "run_many"]
