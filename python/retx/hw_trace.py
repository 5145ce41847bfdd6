"""Traces of hardware-structure operations from a real run, for co-simulating the RTL in
`rtl/` (`retx trace`): MELO's receiver bitmap manager, STRIDE's rate calculator, LEFT's
dual-state pool and LEFT's scheduler with its gather FIFOs ("left-gather"; both LEFT
co-simulations run in `cargo test`: crates/retx/tests/it/left_rtl_cosim.rs and
left_gather_cosim.rs; retx.cosim runs a "left-gather" trace too).

The Rust core records each operation with the model's answer (crates/retx/src/observe/
hw_trace.rs); this module picks the runs they come from and reads the text back.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from retx import _native, checked
from retx.scenario import Scenario

KINDS = ("melo", "stride", "left", "left-gather")
# MELO: one connection at the receiver of melo-fig5a; STRIDE: up to 64 flows at a time that take an
# STT sample in stride-fattree (the RTL's connection table is sized from the trace).
DEFAULT_CONNS = {"melo": 4, "stride": 64, "left": 16, "left-gather": 16}
DEFAULT_OPS = 4000
# A trace is about 50 B a line, held whole in memory: a million operations is some 50 MB, far
# more than any co-simulation reads. Connections are a u32 in the core.
MAX_OPS = 1_000_000
MAX_CONNS = 1_000_000
MELO_LOSS_RATE = 1e-2


def default_scenario(kind: str, folder: Optional[Path] = None) -> Scenario:
    """The reproduction run a trace comes from by default: melo-fig5a's MELO run at 1 % loss,
    stride-fattree's STRIDE run (seed 1, the quick arrivals), or left-rtt-ratio's LEFT run at 32x
    (its topology files written into `folder`, which the caller removes; `trace` does)."""
    if kind == "melo":
        from retx.reproduce import melo_fig5a
        # The run stops once the trace is complete; 10 ms is far more than it needs.
        return Scenario.from_dict(melo_fig5a.BASE_SCENARIO).with_overrides({
            "name": "melo-fig5a-trace", "duration": "10ms", "transport.recovery": "melo",
            "loss": [{"at": "switch:leaf0", "rate": MELO_LOSS_RATE}]})
    if kind == "stride":
        from retx.reproduce import stride_fattree
        return next(s for s in stride_fattree.scenarios(quick=True) if s.data["transport"]["cc"] == "stride")
    if kind in ("left", "left-gather"):
        # left-rtt-ratio's LEFT run at 32x (its topology files written into `folder`).
        from retx.reproduce import left_rtt_ratio
        if folder is None:
            raise ValueError("trace: the left scenario needs a folder for its topology files")
        return next(s for s in left_rtt_ratio.scenarios(folder, quick=True) if s.name == "left-rtt-ratio-32us-left")
    raise ValueError(f"trace: {kind!r} is not a traced structure ({' or '.join(KINDS)})")


def trace(kind: str, scenario: Optional[Scenario] = None, ops: int = DEFAULT_OPS,
          conns: Optional[int] = None) -> str:
    """Runs `scenario` (default: [default_scenario]) and returns the trace text of its first
    `ops` operations on `kind`'s structure. Raises ScenarioError (one line) if it cannot."""
    if kind not in KINDS:
        raise _native.ScenarioError(f"trace: {kind!r} is not a traced structure ({' or '.join(KINDS)})")
    checked.integer(ops, "--ops", 1, MAX_OPS)
    conns = DEFAULT_CONNS[kind] if conns is None else checked.integer(conns, "--conns", 1, MAX_CONNS)
    if scenario is not None:
        return _native.hw_trace(scenario.text, kind, ops, conns, str(scenario.base_dir))
    # The default LEFT run's topology files go to a temporary folder, removed whatever happens.
    with tempfile.TemporaryDirectory(prefix="retx-trace-") as folder:
        scenario = default_scenario(kind, Path(folder))
        return _native.hw_trace(scenario.text, kind, ops, conns, str(scenario.base_dir))


@dataclass
class Trace:
    """A parsed trace: its kind, parameters, column names and integer rows."""
    kind: str
    params: dict[str, int] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    rows: list[list[int]] = field(default_factory=list)
    conns: int = 0


def parse(text: str) -> Trace:
    t = Trace(kind="")
    for line in text.splitlines():
        if line.startswith("# retx hw trace "):
            t.kind = line.split()[4]
        elif line.startswith("# param "):
            _, _, name, value = line.split()
            t.params[name] = int(value)
        elif line.startswith("# columns "):
            t.columns = line.split()[2:]
        elif line.startswith("# conns "):
            t.conns = int(line.split()[2])
        elif line and not line.startswith("#"):
            t.rows.append([int(x) for x in line.split()])
    return t
