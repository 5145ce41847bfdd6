"""Calibration: find the parameter values under which a run's numbers match a paper's, or show
that none in the searched ranges do (`retx calibrate SPEC.toml`, `retx.calibrate(spec)`).

A spec (TOML) names what runs, what is unknown and what should come out:

    [calibrate]
    scenario = "demo.toml"      # a base scenario, relative to the spec; or
    # reproduction = "melo-fig5b" and quick = true: a registered reproduction (retx reproduce)
    trials = 40                 # trials in all (a resumed calibration counts the earlier ones)
    seeds = 2                   # per trial: a count (seed, seed+1, ..) or a list
    # workers, batch, sampler_seed, startup_trials: see Spec

    [fixed]                     # optional: set in every run, dotted keys as `retx sweep --set`
    "workload.until" = "2ms"

    [params."topology.link_delay"]    # an unknown, keyed by its dotted path
    low = 1.0                   # float range (int when low and high are both integers, or
    high = 20.0                 # type = "int"); log = true samples it on a log scale;
    unit = "us"                 # appended to the number ("3.5us"); step = grid spacing
    [params."transport.recovery"]
    choices = ["gbn", "irn"]    # categorical

    [[target]]                  # a number from a run, with the paper's value
    name = "mean_fct"
    metric = "run_metrics"      # a function of retx.metrics, called with the run's flows
    args = {}                   # ... and these keyword arguments
    key = "mean_fct_us"         # a dict result: its entry (dotted for nested dicts); a table
                                # result (slowdown_by_size): row = {column = value}, column,
                                # reduce = "mean" | "median" | "min" | "max" | "sum" over rows
    value = 250.0               # the paper's number
    rel_tol = 0.05              # or abs_tol = 12.5
    # weight = 1.0; divide_by = { row = {...}, column = "..." } (a ratio of two cells)

For a reproduction, a target is a cell of the table its `run` returns (table.parquet): `row`
(a filter, each value one or a list of values), `column`, optional `reduce` and `divide_by`
(e.g. go-back-N's p99 over MELO's). `[fixed]` and the parameters are applied to every scenario
the reproduction runs (so a key its grid varies would collapse the grid: do not calibrate
those); seed 1 runs the reproduction's own seeds, seed s adds 1000 x (s - 1) to each.

The search is Optuna's TPE sampler (multivariate, with the constant liar for batches), its
study kept in `<out>/study.db` (sqlite): a calibration killed at any point and run again
resumes there, repeating no finished trial; a trial cut off mid-evaluation is evaluated again
under a new number (its parameters enqueued first). Each trial runs its point once per seed
through the sweep executors (`retx.sweep`: a local process pool, or Ray), `batch` trials at a
time; the objective minimised is sum over targets of weight x ln(1 + e^2), e = (mean over
seeds - value) / tolerance: the squared error near the targets, growing slowly far off, so a
point meeting some targets beats a compromise missing them all. A point already evaluated (same
resolved scenario and seed) is not run again.

`<out>/` holds:

- `trials.parquet`: every trial: `trial`, `status` ("done", "failed", "interrupted"), `error`,
  `session` (which invocation ran it), the parameters (a column per dotted key, the sampled
  number, before its unit), `loss`, `satisfied` (targets within tolerance), and per target
  `<name>` (mean over seeds), `<name>_sd`, `_ci95` (Student t), `_min`, `_max`, `_per_seed`,
  `_seeds_within` (seeds individually within tolerance) and `_ok` (the mean within); then
  `seeds`, `hashes` (each seed's resolved scenario hash, as sweeps name points), `wall_seconds`
  and `started_utc`; the Parquet metadata holds the provenance (`retx.provenance`);
- `best.json`: the best points (most targets satisfied, then lowest loss), which targets each
  satisfies, and per target the trial closest to the paper;
- `verdict.json`: per target "reproduced", "not reproduced" or "conflicting", and what the
  search covered (`verdict`);
- `targets.png`: each target against its most influential parameters (`influence`);
- `spec.toml` (the spec as given), `study.db`; `retx report OUT` renders a page.
"""

from __future__ import annotations

import functools
import hashlib
import html
import inspect
import io
import json
import math
import os
import re
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import numpy as np
import polars as pl
import tomli_w
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from retx import metrics
from retx._native import ScenarioError
from retx.output import shown
from retx.provenance import provenance, read_parquet_provenance, scenario_hash, utc_now, write_parquet
from retx.runner import shows_live_progress
from retx.scenario import Scenario
from retx.sweep import EXECUTORS, Outcome, Point, _one_line, _run_local, _run_ray, local_pool, t_975

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

try:
    import fcntl
except ImportError:  # Windows: no lock
    fcntl = None  # type: ignore[assignment]

SPEC_TABLE = "calibrate"
TRIALS_FILE = "trials.parquet"
BEST_FILE = "best.json"
VERDICT_FILE = "verdict.json"
PLOT_FILE = "targets.png"
STUDY_FILE = "study.db"
SPEC_FILE = "spec.toml"
LOCK_FILE = ".lock"
TEMP_PREFIX = ".tmp-"
STUDY_NAME = "retx-calibration"
RESULT_ATTR = "retx"
REDUCERS = ("mean", "median", "min", "max", "sum")
# A reproduction's seed s adds this x (s - 1) to the seed of every scenario it runs.
REPRODUCTION_SEED_STRIDE = 1000
# Points listed in best.json, and parameters plotted per target.
BEST_POINTS = 5
PLOTTED_PARAMS = 2
# A target whose trials span this factor or more is drawn on a log scale.
LOG_Y_RATIO = 20.0
PLAIN_REPORT_EVERY_SECONDS = 10.0
# A value counts as within tolerance up to this relative slack (float noise at the boundary).
SLACK = 1e-9
REPRODUCED, NOT_REPRODUCED, CONFLICTING = "reproduced", "not reproduced", "conflicting"

_SPEC_KEYS = {"scenario", "reproduction", "quick", "trials", "seeds", "workers", "batch", "sampler_seed",
              "startup_trials"}
_TOP_KEYS = {SPEC_TABLE, "fixed", "params", "target"}
_PARAM_KEYS = {"type", "low", "high", "log", "step", "unit", "choices"}
_PARAM_MARKERS = {"type", "low", "high", "choices"}
_TARGET_KEYS = {"name", "metric", "args", "key", "row", "column", "reduce", "divide_by", "value", "abs_tol",
                "rel_tol", "weight"}
_CELL_KEYS = {"key", "row", "column", "reduce"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{0,63}")
_TRIAL_COLUMNS = ("trial", "status", "error", "session", "loss", "satisfied", "seeds", "hashes", "wall_seconds",
                  "started_utc")
_TARGET_SUFFIXES = ("_sd", "_ci95", "_min", "_max", "_per_seed", "_seeds_within", "_ok")


class TargetError(ValueError):
    """A target cannot be read from what a run produced (a spec mistake found at run time)."""


class _SpecError(Exception):
    """A worker's TargetError, carried out of the search loop."""


# --- the spec -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """An unknown: its dotted key and range. `kind` is "float", "int" or "categorical"."""

    key: str
    kind: str
    low: Optional[float] = None
    high: Optional[float] = None
    log: bool = False
    step: Optional[float] = None
    unit: str = ""
    choices: tuple[Any, ...] = ()

    def distribution(self) -> Any:
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

        if self.kind == "categorical":
            return CategoricalDistribution(list(self.choices))
        assert self.low is not None and self.high is not None
        if self.kind == "int":
            return IntDistribution(int(self.low), int(self.high), log=self.log, step=int(self.step or 1))
        return FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def scenario_value(self, value: Any) -> Any:
        """The value as the scenario takes it: a number with the unit appended ("3.5us")."""
        if not self.unit or self.kind == "categorical":
            return value
        number = str(value) if self.kind == "int" else np.format_float_positional(float(value), trim="-")
        return f"{number}{self.unit}"

    def describe(self) -> str:
        if self.kind == "categorical":
            return "{" + ", ".join(_text(c) for c in self.choices) + "}"
        unit = f" {self.unit}" if self.unit else ""
        how = [self.kind] + (["log scale"] if self.log else []) + ([f"step {_text(self.step)}"] if self.step else [])
        return f"[{_text(self.low)}, {_text(self.high)}]{unit} ({', '.join(how)})"


@dataclass(frozen=True)
class Cell:
    """Where a target's number is in a result: a dict's `key`, or a table's `row` and `column`
    (`reduce` over several matching rows)."""

    key: Optional[str] = None
    row: Optional[dict[str, Any]] = None
    column: Optional[str] = None
    reduce: Optional[str] = None


@dataclass(frozen=True)
class Target:
    """A number a run should produce: the paper's `value` within `abs_tol` or `rel_tol` x |value|."""

    name: str
    value: float
    abs_tol: Optional[float] = None
    rel_tol: Optional[float] = None
    weight: float = 1.0
    metric: Optional[str] = None
    args: dict[str, Any] = field(default_factory=dict)
    cell: Cell = Cell()
    divide_by: Optional[Cell] = None
    where: str = "target"

    @property
    def tolerance(self) -> float:
        return self.abs_tol if self.abs_tol is not None else float(self.rel_tol or 0.0) * abs(self.value)

    def within(self, value: Optional[float]) -> bool:
        return value is not None and math.isfinite(value) and abs(value - self.value) <= self.tolerance * (1 + SLACK)

    def error(self, value: Optional[float]) -> float:
        """|value - paper| in tolerances (inf when there is no finite value)."""
        if value is None or not math.isfinite(value):
            return math.inf
        return abs(value - self.value) / self.tolerance

    def tolerance_text(self) -> str:
        """"5 %" (relative) or "0.5" (absolute)."""
        return f"{_text(self.rel_tol * 100)} %" if self.rel_tol is not None else _text(self.abs_tol)

    def describe(self) -> str:
        return f"{_text(self.value)} \u00b1 {self.tolerance_text()}"


@dataclass
class Spec:
    """A calibration spec, checked (`load_spec`)."""

    text: str
    origin: str
    kind: str  # "scenario" or "reproduction"
    params: list[Param]
    targets: list[Target]
    trials: int
    seeds: list[int]
    scenario: Optional[Scenario] = None
    reproduction: Optional[str] = None
    quick: bool = False
    fixed: dict[str, Any] = field(default_factory=dict)
    workers: Optional[int] = None
    batch: Optional[int] = None
    sampler_seed: int = 1
    startup_trials: int = 10

    @property
    def name(self) -> str:
        return Path(self.origin).stem if self.origin != "<dict>" else "calibration"

    @property
    def what(self) -> str:
        """What is calibrated: "scenario demo.toml" or "reproduction melo-fig5b --quick"."""
        if self.scenario is not None:
            return f"scenario {shown(self.scenario.origin)}"
        return f"reproduction {self.reproduction}" + (" --quick" if self.quick else "")

    @property
    def keys(self) -> list[str]:
        return [p.key for p in self.params]

    def fingerprint(self) -> str:
        """What a resumed calibration must share with the one in its folder: what runs, the
        parameters, targets and seeds (not the budget, workers, batch or sampler settings)."""
        what: dict[str, Any] = {"kind": self.kind, "fixed": self.fixed, "seeds": self.seeds,
                                "params": [asdict(p) for p in self.params],
                                "targets": [{k: v for k, v in asdict(t).items() if k != "where"} for t in self.targets]}
        if self.scenario is not None:
            what["scenario"] = self.scenario.text
        else:
            what["reproduction"] = [self.reproduction, self.quick, _reproduction_source_hash(self.reproduction)]
        return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load_spec(spec: Union[str, Path, Mapping[str, Any]], base_dir: Union[str, Path, None] = None) -> Spec:
    """A spec from a TOML file (its scenario path relative to the file) or a dict (relative to
    `base_dir`, default the working folder). ScenarioError naming the field if it is wrong."""
    if isinstance(spec, Mapping):
        data = json.loads(json.dumps(spec))  # a deep copy, and plain types
        text, origin, folder = tomli_w.dumps(data), "<dict>", Path(base_dir or ".")
    else:
        path = Path(spec)
        if not path.is_file():
            raise ScenarioError(f"{shown(path)}: no such calibration spec")
        text, origin, folder = path.read_text(encoding="utf-8"), str(path), path.parent
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ScenarioError(f"{shown(path)}: invalid TOML: {error}") from None
    _no_unknown(data, _TOP_KEYS, "", "expected [calibrate], [fixed], [params] and [[target]]")
    head = _table(data.get(SPEC_TABLE), SPEC_TABLE, required=True)
    _no_unknown(head, _SPEC_KEYS, f"{SPEC_TABLE}.")
    fixed = _table(data.get("fixed", {}), "fixed")
    if "seed" in fixed:
        raise ScenarioError("fixed.seed: seeds are set by calibrate.seeds")

    scenario: Optional[Scenario] = None
    reproduction: Optional[str] = None
    if ("scenario" in head) == ("reproduction" in head):
        raise ScenarioError(f"{SPEC_TABLE}: give exactly one of scenario (a TOML file) or reproduction (a name)")
    if "scenario" in head:
        where = _string(head["scenario"], f"{SPEC_TABLE}.scenario")
        if "quick" in head:
            raise ScenarioError(f"{SPEC_TABLE}.quick: only for a reproduction")
        scenario_path = folder / where
        if not scenario_path.is_file():
            raise ScenarioError(f"{SPEC_TABLE}.scenario: {shown(scenario_path)}: no such file")
        scenario = Scenario.load(scenario_path)
        if "sweep" in scenario.data:
            raise ScenarioError(f"{SPEC_TABLE}.scenario: {where} declares a [sweep] grid; calibrate a scenario without one")
        kind = "scenario"
    else:
        from retx import reproduce

        reproduction = _string(head["reproduction"], f"{SPEC_TABLE}.reproduction")
        if reproduction not in reproduce.REPRODUCTIONS:
            raise ScenarioError(f"{SPEC_TABLE}.reproduction: unknown reproduction {reproduction!r} "
                                f"(known: {', '.join(reproduce.REPRODUCTIONS)})")
        kind = "reproduction"
    quick = head.get("quick", False)
    if not isinstance(quick, bool):
        raise ScenarioError(f"{SPEC_TABLE}.quick: must be true or false, not {quick!r}")

    trials: int = _positive_int(head.get("trials"), f"{SPEC_TABLE}.trials", required=True)
    seeds = _seeds(head.get("seeds", 1), scenario)
    workers = _positive_int(head.get("workers"), f"{SPEC_TABLE}.workers")
    batch = _positive_int(head.get("batch"), f"{SPEC_TABLE}.batch")
    sampler_seed = _integer(head.get("sampler_seed", 1), f"{SPEC_TABLE}.sampler_seed")
    startup = _integer(head.get("startup_trials", 10), f"{SPEC_TABLE}.startup_trials")
    if startup < 0:
        raise ScenarioError(f"{SPEC_TABLE}.startup_trials: must be 0 or more, not {startup}")

    params = _params(data.get("params"))
    targets = _targets(data.get("target"), kind, params)
    checked = Spec(text, origin, kind, params, targets, trials, seeds, scenario, reproduction, quick, fixed,
                   workers, batch, sampler_seed, startup)
    _check_against_base(checked)
    return checked


def _params(table: Any) -> list[Param]:
    if table is None:
        raise ScenarioError("params: missing; name at least one unknown, e.g. [params.\"topology.link_delay\"]")
    definitions = _flatten_params(_table(table, "params"), "params")
    if not definitions:
        raise ScenarioError("params: name at least one unknown, e.g. [params.\"topology.link_delay\"]")
    return [_param(key, value) for key, value in definitions.items()]


def _flatten_params(table: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """{dotted key: definition}: `[params."a.b"]` or nested `[params.a.b]` alike; a table with
    low, high, choices or type is a definition."""
    flat: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        if not isinstance(value, dict):
            raise ScenarioError(f"{where}.{key}: must be a table with low and high, or choices")
        if _PARAM_MARKERS & set(value):
            flat[key if where == "params" else f"{where[len('params.'):]}.{key}"] = value
        else:
            flat.update(_flatten_params(value, f"{where}.{key}"))
    return flat


def _param(key: str, spec: dict[str, Any]) -> Param:
    where = f"params.{key}"
    if key == "seed":
        raise ScenarioError(f"{where}: seeds are set by calibrate.seeds, not searched")
    _no_unknown(spec, _PARAM_KEYS, f"{where}.")
    unit = spec.get("unit", "")
    if not isinstance(unit, str):
        raise ScenarioError(f"{where}.unit: must be a string such as \"us\", not {unit!r}")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ScenarioError(f"{where}.log: must be true or false, not {log!r}")
    if "choices" in spec:
        for extra in ("low", "high", "step", "unit"):
            if extra in spec:
                raise ScenarioError(f"{where}.{extra}: not for a categorical parameter (choices)")
        if log:
            raise ScenarioError(f"{where}.log: not for a categorical parameter (choices)")
        if spec.get("type", "categorical") != "categorical":
            raise ScenarioError(f"{where}.type: choices make it categorical, not {spec['type']!r}")
        choices = spec["choices"]
        if not isinstance(choices, list) or not choices:
            raise ScenarioError(f"{where}.choices: must be a non-empty list of values")
        for choice in choices:
            if not isinstance(choice, (str, int, float, bool)):
                raise ScenarioError(f"{where}.choices: {choice!r} is not a string, number or boolean")
        if len({json.dumps(c) for c in choices}) != len(choices):
            raise ScenarioError(f"{where}.choices: {choices!r} repeats a value")
        return Param(key, "categorical", choices=tuple(choices))
    for bound in ("low", "high"):
        if bound not in spec:
            raise ScenarioError(f"{where}.{bound}: missing (a range needs low and high; or give choices)")
        if isinstance(spec[bound], bool) or not isinstance(spec[bound], (int, float)) or not math.isfinite(spec[bound]):
            raise ScenarioError(f"{where}.{bound}: must be a finite number, not {spec[bound]!r}")
    low, high = spec["low"], spec["high"]
    kind = spec.get("type", "int" if isinstance(low, int) and isinstance(high, int) else "float")
    if kind not in ("float", "int"):
        raise ScenarioError(f"{where}.type: must be \"float\" or \"int\" (or give choices), not {kind!r}")
    if kind == "int" and not (float(low).is_integer() and float(high).is_integer()):
        raise ScenarioError(f"{where}.low: an int parameter needs integer bounds, not {low!r} and {high!r}")
    if not low < high:
        raise ScenarioError(f"{where}.high: must be above low ({_text(low)}), not {_text(high)}")
    if log and low <= 0:
        raise ScenarioError(f"{where}.low: a log-scale range must start above 0, not {_text(low)}")
    step = spec.get("step")
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0:
            raise ScenarioError(f"{where}.step: must be a number above 0, not {step!r}")
        if log and (kind == "float" or step != 1):
            raise ScenarioError(f"{where}.step: cannot be combined with log = true")
        if kind == "int" and not float(step).is_integer():
            raise ScenarioError(f"{where}.step: an int parameter needs an integer step, not {step!r}")
    return Param(key, kind, float(low), float(high), log, None if step is None else float(step), unit)


def _targets(items: Any, kind: str, params: list[Param]) -> list[Target]:
    if items is None:
        raise ScenarioError("target: missing; give at least one [[target]] with value and abs_tol or rel_tol")
    if not isinstance(items, list) or not items or not all(isinstance(t, dict) for t in items):
        raise ScenarioError("target: must be one or more [[target]] tables")
    targets: list[Target] = []
    taken = {p.key: f"params.{p.key}" for p in params}
    for index, spec in enumerate(items):
        target = _target(spec, f"target[{index}]", kind)
        names = [target.name] + [target.name + suffix for suffix in _TARGET_SUFFIXES]
        for name in names:
            if name in _TRIAL_COLUMNS:
                raise ScenarioError(f"target[{index}].name: {target.name!r} would name the column {name!r}, "
                                    "which trials.parquet already has; choose another name")
            if name in taken:
                raise ScenarioError(f"target[{index}].name: {target.name!r} is already used by {taken[name]}; "
                                    "give each target a distinct name")
        for name in names:
            taken[name] = f"target[{index}]"
        targets.append(target)
    return targets


def _target(spec: dict[str, Any], where: str, kind: str) -> Target:
    _no_unknown(spec, _TARGET_KEYS, f"{where}.")
    value = spec.get("value")
    if value is None:
        raise ScenarioError(f"{where}.value: missing (the paper's number)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(f"{where}.value: must be a finite number, not {value!r}")
    if ("abs_tol" in spec) == ("rel_tol" in spec):
        raise ScenarioError(f"{where}: give exactly one of abs_tol or rel_tol")
    tolerances = {}
    for tolerance in ("abs_tol", "rel_tol"):
        if tolerance in spec:
            number = spec[tolerance]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not number > 0 or not math.isfinite(number):
                raise ScenarioError(f"{where}.{tolerance}: must be a number above 0, not {number!r}")
            tolerances[tolerance] = float(number)
    if "rel_tol" in tolerances and value == 0:
        raise ScenarioError(f"{where}.rel_tol: the value is 0; give abs_tol")
    weight = spec.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        raise ScenarioError(f"{where}.weight: must be a number above 0, not {weight!r}")
    cell = _cell(spec, where)
    divide_by = None
    if "divide_by" in spec:
        divide = _table(spec["divide_by"], f"{where}.divide_by")
        _no_unknown(divide, _CELL_KEYS, f"{where}.divide_by.")
        divide_by = _cell(divide, f"{where}.divide_by")
    metric = spec.get("metric")
    args = spec.get("args", {})
    if kind == "scenario":
        if metric is None:
            raise ScenarioError(f"{where}.metric: missing; one of {', '.join(metric_functions())}")
        metric = _string(metric, f"{where}.metric")
        if metric not in metric_functions():
            raise ScenarioError(f"{where}.metric: {metric!r} is not a metric; one of {', '.join(metric_functions())}")
        args = _table(args, f"{where}.args")
        try:
            inspect.signature(getattr(metrics, metric)).bind(pl.DataFrame(), **args)
        except TypeError as error:
            raise ScenarioError(f"{where}.args: {metric}(flows, ...): {error}") from None
    else:
        if metric is not None or "args" in spec:
            raise ScenarioError(f"{where}.{'metric' if metric is not None else 'args'}: a reproduction's "
                                "targets are cells of its table: give row and column")
        if cell.column is None:
            raise ScenarioError(f"{where}.column: missing; which column of the reproduction's table")
        if divide_by is not None and divide_by.column is None:
            raise ScenarioError(f"{where}.divide_by.column: missing")
    label: Any = spec.get("name")
    if label is None:
        label = (cell.column or (cell.key or "").replace(".", "_") or str(metric)) + ("_ratio" if divide_by else "")
    name = _string(label, f"{where}.name")
    if not _NAME.fullmatch(name):
        raise ScenarioError(f"{where}.name: {name!r} is not a plain name (letters, digits and _ . + -, "
                            "starting with a letter or _, up to 64)")
    return Target(name, float(value), tolerances.get("abs_tol"), tolerances.get("rel_tol"), float(weight), metric,
                  dict(args), cell, divide_by, where)


def _cell(spec: dict[str, Any], where: str) -> Cell:
    key = spec.get("key")
    if key is not None:
        key = _string(key, f"{where}.key")
    column = spec.get("column")
    if column is not None:
        column = _string(column, f"{where}.column")
    row = spec.get("row")
    if row is not None:
        row = _table(row, f"{where}.row")
        for name, wanted in row.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            if not values or not all(isinstance(v, (str, int, float, bool)) for v in values):
                raise ScenarioError(f"{where}.row.{name}: must be a value or a list of values, not {wanted!r}")
    reduce = spec.get("reduce")
    if reduce is not None and reduce not in REDUCERS:
        raise ScenarioError(f"{where}.reduce: must be one of {', '.join(REDUCERS)}, not {reduce!r}")
    if key is not None and (column is not None or row is not None):
        raise ScenarioError(f"{where}.key: a key reads a dict result; row and column a table: give one or the other")
    if row is not None and column is None:
        raise ScenarioError(f"{where}.column: missing (row picks rows, column the number)")
    return Cell(key, row, column, reduce)


def metric_functions() -> list[str]:
    """The functions of retx.metrics a target can name: public, taking the flows table first."""
    names = []
    for name, function in vars(metrics).items():
        if name.startswith("_") or not inspect.isfunction(function) or function.__module__ != metrics.__name__:
            continue
        parameters = list(inspect.signature(function).parameters)
        if parameters and parameters[0] == "flows":
            names.append(name)
    return names


def _check_against_base(spec: Spec) -> None:
    """Every parameter's bounds and choices, with [fixed], make a valid scenario (each alone, the
    others as in the base); for a reproduction, checked on its first scenario when its module
    builds them with `scenarios(quick)`."""
    base = spec.scenario
    if base is None:
        base = _reproduction_base(spec)
        if base is None:
            return
    if spec.fixed:
        try:
            base.with_overrides(spec.fixed).resolved()
        except ScenarioError as error:
            raise ScenarioError(f"fixed: {error}") from None
    for param in spec.params:
        probes = param.choices if param.kind == "categorical" else (param.low, param.high)
        for probe in probes:
            value = int(probe) if param.kind == "int" else probe
            try:
                base.with_overrides({**spec.fixed, param.key: param.scenario_value(value)}).resolved()
            except ScenarioError as error:
                raise ScenarioError(f"params.{param.key}: at {_text(value)}: {error}") from None


def _reproduction_base(spec: Spec) -> Optional[Scenario]:
    from retx import reproduce

    module = reproduce.lookup(str(spec.reproduction))
    build = getattr(module, "scenarios", None)
    if build is None or list(inspect.signature(build).parameters) != ["quick"]:
        return None
    try:
        built = build(spec.quick)
    except Exception:  # noqa: BLE001 - e.g. inputs it reads are absent: the runs will say so
        return None
    return built[0] if built and isinstance(built[0], Scenario) else None


def _reproduction_source_hash(name: Optional[str]) -> str:
    from retx import reproduce

    source = inspect.getsource(reproduce.lookup(str(name))).encode("utf-8")
    return hashlib.sha256(source).hexdigest()[:12]


# --- evaluating one point (in a worker process or a Ray task) ---------------------------------------

def evaluate(targets: tuple[Target, ...], kind: str, text: str, base_dir: str) -> Outcome:
    """Run one point and read its targets: {"status", "error", "wall_seconds", "values":
    {name: float}}; "spec_error" is true when a target cannot be read (a mistake in the spec).
    `text` is the point's scenario, or for a reproduction its job (TOML: reproduction, quick,
    seed_shift, set). Never raises for a failed run."""
    started = time.monotonic()
    try:
        if kind == "scenario":
            from retx.runner import _simulate

            flows = _simulate(Scenario(text, base_dir=base_dir), None).flows
            values = {t.name: _metric_value(t, flows) for t in targets}
        else:
            table = _run_reproduction(tomllib.loads(text))
            values = {t.name: _ratio(t, table) for t in targets}
        return {"status": "done", "error": None, "wall_seconds": time.monotonic() - started, "values": values}
    except TargetError as error:
        return {"status": "failed", "error": str(error), "wall_seconds": time.monotonic() - started,
                "spec_error": True}
    except (Exception, BaseException) as error:  # pyo3's PanicException is a BaseException
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return {"status": "failed", "error": _one_line(error), "wall_seconds": time.monotonic() - started}


def _metric_value(target: Target, flows: pl.DataFrame) -> float:
    result = getattr(metrics, str(target.metric))(flows, **target.args)
    return _ratio(target, result)


def _ratio(target: Target, result: Any) -> float:
    value = _pick(result, target.cell, target.where, target.metric)
    if target.divide_by is None:
        return value
    divisor = _pick(result, target.divide_by, f"{target.where}.divide_by", target.metric)
    return value / divisor if divisor != 0 else math.nan


def _pick(result: Any, cell: Cell, where: str, metric: Optional[str]) -> float:
    """The number `cell` names in a metric's result (a number, a dict or a table)."""
    what = f"{metric}(...)" if metric else "the reproduction's table"
    if isinstance(result, pl.DataFrame):
        if cell.column is None:
            raise TargetError(f"{where}.column: {what} is a table; name its column (and row)")
        if cell.column not in result.columns:
            raise TargetError(f"{where}.column: {cell.column!r} is not a column of {what} "
                              f"(columns: {', '.join(result.columns)})")
        rows = result
        for name, wanted in (cell.row or {}).items():
            if name not in result.columns:
                raise TargetError(f"{where}.row.{name}: not a column of {what} (columns: {', '.join(result.columns)})")
            values = wanted if isinstance(wanted, list) else [wanted]
            try:
                rows = rows.filter(pl.col(name).is_in(values))
            except (pl.exceptions.PolarsError, TypeError) as error:
                raise TargetError(f"{where}.row.{name}: cannot compare with {wanted!r}: {_one_line(error)}") from None
        if rows.height == 0:
            raise TargetError(f"{where}.row: no row of {what} matches {json.dumps(cell.row)}")
        if rows.height > 1 and cell.reduce is None:
            raise TargetError(f"{where}.row: {rows.height} rows of {what} match {json.dumps(cell.row or {})}; "
                              f"narrow it or give reduce = {' | '.join(REDUCERS)}")
        column = rows[cell.column]
        if not column.dtype.is_numeric():
            raise TargetError(f"{where}.column: {cell.column!r} holds {column.dtype}, not numbers")
        if rows.height == 1:
            return _float(column[0])
        reduced = getattr(column.cast(pl.Float64).fill_nan(None), str(cell.reduce))()
        return _float(reduced)
    if isinstance(result, Mapping):
        if cell.key is None:
            raise TargetError(f"{where}.key: {what} is a dict; name its entry (keys: {', '.join(map(str, result))})")
        value: Any = result
        for part in cell.key.split("."):
            if not isinstance(value, Mapping) or part not in value:
                keys = ", ".join(map(str, value)) if isinstance(value, Mapping) else "none"
                raise TargetError(f"{where}.key: {cell.key!r}: no entry {part!r} (keys there: {keys})")
            value = value[part]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TargetError(f"{where}.key: {cell.key!r} is {value!r}, not a number")
        return float(value)
    if isinstance(result, (int, float)) and not isinstance(result, bool):
        if cell.key is not None or cell.column is not None:
            raise TargetError(f"{where}: {what} is a number; it has no key, row or column")
        return float(result)
    raise TargetError(f"{where}: {what} gives {type(result).__name__}, not a number, dict or table")


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def _run_reproduction(job: dict[str, Any]) -> pl.DataFrame:
    """Run a reproduction with `job["set"]` applied to every scenario it runs and its seeds
    shifted by `job["seed_shift"]` (retx.runner's one simulate function, patched in this
    process for the duration); its printed tables go nowhere, its files to a temporary folder."""
    from retx import reproduce, runner

    module = reproduce.lookup(job["reproduction"])
    overrides = job.get("set", {})
    shift = int(job.get("seed_shift", 0))
    original = runner._simulate

    def simulate(scenario: Scenario, progress: Any) -> Any:
        seed = scenario.data.get("seed", 1)
        changed = scenario.with_overrides({**overrides, "seed": (seed if isinstance(seed, int) else 1) + shift})
        return original(changed, progress)

    if overrides or shift:
        runner._simulate = simulate  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory(prefix="retx-calibrate-") as temp, \
                redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            table = module.run(Path(temp), bool(job.get("quick", False)))
    finally:
        runner._simulate = original  # type: ignore[assignment]
    if not isinstance(table, pl.DataFrame):
        raise TargetError(f"reproduction {job['reproduction']!r} returned no table")
    return table


# --- the search ----------------------------------------------------------------------------------------

@dataclass
class CalibrationResult:
    """A calibration's folder, its trials, best points and verdict; `evaluated` lists the trial
    numbers this call ran (a resumed calibration runs only new ones)."""

    out_dir: Path
    trials: pl.DataFrame
    best: dict[str, Any]
    verdict: dict[str, Any]
    evaluated: list[int] = field(default_factory=list)

    def __repr__(self) -> str:
        lines = [f"CalibrationResult({str(self.out_dir)!r})", f"  {self.verdict.get('summary', '')}"]
        for name, entry in self.verdict.get("targets", {}).items():
            lines.append(f"  {name}: {entry['statement']}")
        return "\n".join(lines)


def calibrate(
    spec: Union[str, Path, Mapping[str, Any], Spec],
    out: Optional[Union[str, Path]] = None,
    trials: Optional[int] = None,
    workers: Optional[int] = None,
    executor: str = "local",
    progress: bool = True,
    base_dir: Union[str, Path, None] = None,
) -> CalibrationResult:
    """Search the spec's parameters for its targets (see the module docstring) into `out`
    (default results/<spec file's name>). `trials` (the budget in all, counting trials an
    earlier run left in `out`) and `workers` override the spec's. Rerun to resume."""
    if executor not in EXECUTORS:
        raise ScenarioError(f"--executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    if not isinstance(spec, Spec):
        spec = load_spec(spec, base_dir)
    budget = spec.trials if trials is None else trials
    if budget < 1:
        raise ScenarioError(f"--trials: must be at least 1, not {budget}")
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers: must be at least 1, not {workers}")
    out_dir = Path(out) if out is not None else Path("results") / spec.name
    out_dir.mkdir(parents=True, exist_ok=True)
    with _exclusive(out_dir / LOCK_FILE):
        return _Calibration(spec, out_dir).run(budget, workers or spec.workers, executor, progress)


class _Calibration:
    def __init__(self, spec: Spec, out_dir: Path) -> None:
        self.spec = spec
        self.out_dir = out_dir
        self.distributions = {p.key: p.distribution() for p in spec.params}
        self.task = functools.partial(evaluate, tuple(spec.targets), spec.kind)
        self.started = utc_now()
        self.evaluated: list[int] = []
        # (point hash) -> value per target, from every finished trial: a point met again
        # (an integer or categorical space, a re-enqueued trial) is not run twice.
        self.known: dict[str, dict[str, float]] = {}

    def run(self, budget: int, workers: Optional[int], executor: str, show_progress: bool) -> CalibrationResult:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = self._study()
        session = int(study.user_attrs.get("sessions", 0)) + 1
        study.set_user_attr("sessions", session)
        interrupted = self._retire_interrupted(study)
        self._remember(study)
        finished = sum(1 for t in study.get_trials(deepcopy=False)
                       if t.state.is_finished() and t.number not in interrupted)
        seeds = len(self.spec.seeds)
        workers = workers or (1 if self.spec.kind == "reproduction" else os.cpu_count() or 1)
        batch = self.spec.batch or max(1, math.ceil(workers / seeds))
        (self.out_dir / SPEC_FILE).write_text(self.spec.text)
        console = Console(stderr=True)
        live = show_progress and shows_live_progress(console)
        plain = show_progress and not live
        bar = Progress(TextColumn("[bold]calibrate"), BarColumn(), TaskProgressColumn(),
                       TextColumn("{task.completed:.0f}/{task.total:.0f} trials"), TextColumn("{task.fields[best]}"),
                       TimeElapsedColumn(), console=console, disable=not live)
        last_report = time.monotonic()
        todo = max(0, budget - finished)
        try:
            with bar, self._executor(executor, workers, min(workers, batch * seeds) if todo else 0) as run_all:
                task = bar.add_task("trials", total=budget, completed=min(finished, budget),
                                    best=self._best_text(study))
                while finished < budget:
                    asked = [study.ask(self.distributions) for _ in range(min(batch, budget - finished))]
                    self._evaluate(study, asked, session, run_all)
                    finished += len(asked)
                    self._write(study)
                    bar.update(task, completed=finished, best=self._best_text(study))
                    if plain and time.monotonic() - last_report >= PLAIN_REPORT_EVERY_SECONDS:
                        last_report = time.monotonic()
                        console.print(f"calibrate: {finished} of {budget} trials run; {self._best_text(study)}",
                                      highlight=False)
        except _SpecError as error:
            # A target the runs cannot give: a mistake in the spec. Unless some trial is worth
            # keeping, start afresh next time (the corrected spec is another spec).
            if not any(_result(t).get("status") == "done" for t in study.get_trials(deepcopy=False)):
                for name in (STUDY_FILE, TRIALS_FILE, BEST_FILE, VERDICT_FILE):
                    (self.out_dir / name).unlink(missing_ok=True)
            raise ScenarioError(str(error)) from None
        table, best, verdict_ = self._write(study)
        plot_targets(table, self.spec, verdict_, self.out_dir / PLOT_FILE)
        return CalibrationResult(self.out_dir, table, best, verdict_, self.evaluated)

    def _study(self) -> Any:
        import optuna

        storage = f"sqlite:///{(self.out_dir / STUDY_FILE).resolve()}"
        study = optuna.create_study(storage=storage, sampler=self._sampler(self.spec.sampler_seed),
                                    study_name=STUDY_NAME, direction="minimize", load_if_exists=True)
        fingerprint = study.user_attrs.get("fingerprint")
        if fingerprint is None:
            study.set_user_attr("fingerprint", self.spec.fingerprint())
        elif fingerprint != self.spec.fingerprint():
            raise ScenarioError(f"--out {self.out_dir}: holds a calibration of another spec (what runs, its "
                                "parameters, targets, seeds or [fixed] differ); give another --out or remove it")
        existing = len(study.get_trials(deepcopy=False))
        if existing:
            # A resumed search: the sampler seeded as at the start would propose the same first
            # (random start-up) points again. Its seed follows from sampler_seed and the trials
            # so far instead: still reproducible, never the same sequence twice.
            mixed = hashlib.sha256(f"{self.spec.sampler_seed}:{existing}".encode()).hexdigest()
            study.sampler = self._sampler(int(mixed[:8], 16))
        return study

    def _sampler(self, seed: int) -> Any:
        import optuna

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.TPESampler(seed=seed, n_startup_trials=self.spec.startup_trials,
                                              multivariate=True, constant_liar=True)

    def _retire_interrupted(self, study: Any) -> set[int]:
        """Trials a killed calibration left running: marked failed and remembered as
        interrupted (not counted against the budget), their parameters enqueued to run again."""
        import optuna

        interrupted = set(study.user_attrs.get("interrupted", []))
        for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
            study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
            interrupted.add(trial.number)
            if set(trial.params) == set(self.distributions):  # else cut off before it had them
                study.enqueue_trial(dict(trial.params))
        study.set_user_attr("interrupted", sorted(interrupted))
        return interrupted

    def _remember(self, study: Any) -> None:
        for trial in study.get_trials(deepcopy=False):
            attrs = _result(trial)
            if attrs.get("status") != "done":
                continue
            for index, name in enumerate(attrs["hashes"]):
                self.known[name] = {t: values[index] for t, values in attrs["values"].items()}

    @contextmanager
    def _executor(self, executor: str, workers: int, pool_size: int) -> Iterator[Any]:
        if executor == "ray":
            yield lambda points: _run_ray(points, workers, self.task)
        elif pool_size == 0:
            yield lambda points: iter(())
        else:
            pool = local_pool(pool_size)
            try:
                yield lambda points: _run_local(points, workers, self.task, pool)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)

    def _points(self, params: dict[str, Any]) -> list[Point]:
        overrides = {**self.spec.fixed, **{p.key: p.scenario_value(params[p.key]) for p in self.spec.params}}
        points = []
        for seed in self.spec.seeds:
            if self.spec.scenario is not None:
                base = self.spec.scenario
                try:
                    scenario = base.with_overrides({**overrides, "seed": seed})
                    points.append(Point(params, seed, scenario_hash(scenario.resolved()), scenario))
                except ScenarioError as error:
                    name = scenario_hash("invalid\n" + json.dumps({**overrides, "seed": seed}, sort_keys=True, default=str))
                    points.append(Point(params, seed, name, base, invalid=_one_line(error)))
            else:
                job = tomli_w.dumps({"reproduction": self.spec.reproduction, "quick": self.spec.quick, "seed": seed,
                                     "seed_shift": REPRODUCTION_SEED_STRIDE * (seed - 1), "set": overrides,
                                     "source_hash": _reproduction_source_hash(self.spec.reproduction)})
                points.append(Point(params, seed, scenario_hash(job), Scenario(job, base_dir=".")))
        return points

    def _evaluate(self, study: Any, asked: list[Any], session: int, run_all: Any) -> None:
        import optuna

        planned = {trial.number: self._points(trial.params) for trial in asked}
        outcomes: dict[str, Outcome] = {}
        todo: dict[str, Point] = {}
        for points in planned.values():
            for point in points:
                if point.invalid is not None:
                    outcomes[point.hash] = {"status": "failed", "error": point.invalid, "wall_seconds": None}
                elif point.hash in self.known:
                    outcomes[point.hash] = {"status": "done", "error": None, "wall_seconds": 0.0,
                                            "values": self.known[point.hash]}
                else:
                    todo[point.hash] = point
        for name, outcome in run_all(list(todo.values())):
            if outcome.get("spec_error"):
                for trial in asked:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                raise _SpecError(outcome["error"])
            outcomes[name] = outcome
        for trial in asked:
            points = planned[trial.number]
            results = [outcomes[p.hash] for p in points]
            failed = next((r for r in results if r["status"] != "done"), None)
            values = {t.name: [float(r["values"][t.name]) if failed is None else math.nan for r in results]
                      for t in self.spec.targets}
            attrs = {"status": "failed" if failed else "done", "error": failed["error"] if failed else None,
                     "session": session, "seeds": [p.seed for p in points], "hashes": [p.hash for p in points],
                     "wall_seconds": [r.get("wall_seconds") for r in results], "values": values}
            trial.set_user_attr(RESULT_ATTR, attrs)
            if failed:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                for point, result in zip(points, results):
                    self.known[point.hash] = result["values"]
                study.tell(trial, min(_loss(self.spec.targets, values), sys.float_info.max))
            self.evaluated.append(trial.number)

    def _best_text(self, study: Any) -> str:
        done = [_result(t) | {"number": t.number} for t in study.get_trials(deepcopy=False)
                if _result(t).get("status") == "done"]
        if not done:
            return ""
        best = min(done, key=lambda r: _loss(self.spec.targets, r["values"]))
        ok = sum(target.within(_mean(best["values"][target.name])) for target in self.spec.targets)
        return f"best: trial {best['number']}, {ok}/{len(self.spec.targets)} targets within"

    def _write(self, study: Any) -> tuple[pl.DataFrame, dict[str, Any], dict[str, Any]]:
        table = trials_table(study.get_trials(deepcopy=False), self.spec,
                             set(study.user_attrs.get("interrupted", [])))
        record = provenance(self.spec.text + "\n" + (self.spec.scenario.text if self.spec.scenario else ""),
                            self.started)
        if self.spec.reproduction is not None:
            record.update(reproduction=self.spec.reproduction, quick=self.spec.quick,
                          source_hash=_reproduction_source_hash(self.spec.reproduction))
        temp = self.out_dir / f"{TEMP_PREFIX}{TRIALS_FILE}"
        write_parquet(table, temp, record)
        os.replace(temp, self.out_dir / TRIALS_FILE)
        interrupted = len(study.user_attrs.get("interrupted", []))
        verdict_ = verdict(table, self.spec.targets, self.spec.params, self.spec.seeds, interrupted=interrupted,
                           sampler=f"Optuna {_optuna_version()} TPE (multivariate, seed {self.spec.sampler_seed}, "
                                   f"{self.spec.startup_trials} random start-up trials)", what=self.spec.what)
        best = best_points(table, self.spec.targets, self.spec.keys)
        _write_json(self.out_dir / BEST_FILE, best)
        _write_json(self.out_dir / VERDICT_FILE, verdict_)
        return table, best, verdict_


def _result(trial: Any) -> dict[str, Any]:
    """What a finished trial recorded: one user attribute, written in one go before the trial
    is told (a calibration killed in between leaves a running trial, retired as interrupted)."""
    if not trial.state.is_finished():
        return {}
    result = trial.user_attrs.get(RESULT_ATTR, {})
    return result if isinstance(result, dict) else {}


def _optuna_version() -> str:
    import optuna

    return str(optuna.__version__)


def _loss(targets: Sequence[Target], values: Mapping[str, Sequence[float]]) -> float:
    """The objective: sum over targets of weight x ln(1 + e^2), e = |mean - paper| / tolerance
    (inf if a mean is not finite). Near zero it is the squared error; far off it grows slowly,
    so meeting some targets beats a compromise that misses them all."""
    return sum(_term(t, _mean(values[t.name])) for t in targets)


def _term(target: Target, value: float) -> float:
    error = target.error(value)
    return target.weight * math.log1p(error * error) if math.isfinite(error) else math.inf


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return sum(finite) / len(finite) if finite and len(finite) == len(values) else math.nan


def trials_table(trials: Sequence[Any], spec: Spec, interrupted: set[int]) -> pl.DataFrame:
    """trials.parquet from the study's trials (see the module docstring)."""
    rows = []
    for trial in trials:
        attrs = _result(trial)
        status: str
        error: Optional[str]
        if trial.number in interrupted:
            status, error = "interrupted", ("cut off when the calibration was killed; not counted (its parameters, "
                                            "if it had them yet, ran again as a new trial)")
        elif "status" in attrs:
            status, error = str(attrs["status"]), attrs.get("error")
        else:
            continue
        row: dict[str, Any] = {"trial": trial.number, "status": status, "error": error,
                               "session": attrs.get("session")}
        for param in spec.params:
            row[param.key] = trial.params.get(param.key)
        values = attrs.get("values", {})
        per_target = {t.name: values.get(t.name, []) if status == "done" else [] for t in spec.targets}
        row["loss"] = _loss(spec.targets, per_target) if status == "done" else None
        row["satisfied"] = sum(t.within(_mean(per_target[t.name])) for t in spec.targets) if status == "done" else None
        for target in spec.targets:
            row.update(_target_columns(target, per_target[target.name]))
        walls = [w for w in attrs.get("wall_seconds", []) if w is not None]
        row.update(seeds=attrs.get("seeds", []), hashes=attrs.get("hashes", []),
                   wall_seconds=sum(walls) if walls else None,
                   started_utc=trial.datetime_start.astimezone(timezone.utc).isoformat(timespec="seconds")
                   if trial.datetime_start else None)
        rows.append(row)
    schema: dict[str, Any] = {"trial": pl.Int64, "status": pl.String, "error": pl.String, "session": pl.Int64}
    for param in spec.params:
        schema[param.key] = (pl.Int64 if param.kind == "int" else pl.Float64 if param.kind == "float"
                             else _choice_dtype(param.choices))
    schema.update(loss=pl.Float64, satisfied=pl.Int64)
    for target in spec.targets:
        n = target.name
        schema.update({n: pl.Float64, f"{n}_sd": pl.Float64, f"{n}_ci95": pl.Float64, f"{n}_min": pl.Float64,
                       f"{n}_max": pl.Float64, f"{n}_per_seed": pl.List(pl.Float64), f"{n}_seeds_within": pl.Int64,
                       f"{n}_ok": pl.Boolean})
    schema.update(seeds=pl.List(pl.Int64), hashes=pl.List(pl.String), wall_seconds=pl.Float64, started_utc=pl.String)
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


def _choice_dtype(choices: Sequence[Any]) -> Any:
    if all(isinstance(c, bool) for c in choices):
        return pl.Boolean
    if all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
        return pl.Int64
    if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in choices):
        return pl.Float64
    return pl.String


def _target_columns(target: Target, values: Sequence[float]) -> dict[str, Any]:
    n = target.name
    finite = [v for v in values if v is not None and math.isfinite(v)]
    mean = _mean(values) if values else math.nan
    sd = float(np.std(finite, ddof=1)) if len(finite) >= 2 else None
    return {n: None if not math.isfinite(mean) else mean, f"{n}_sd": sd,
            f"{n}_ci95": t_975(len(finite) - 1) * sd / math.sqrt(len(finite)) if sd is not None else None,
            f"{n}_min": min(finite) if finite else None, f"{n}_max": max(finite) if finite else None,
            f"{n}_per_seed": [None if v is None or not math.isfinite(v) else float(v) for v in values],
            f"{n}_seeds_within": sum(target.within(v) for v in values) if values else None,
            f"{n}_ok": target.within(mean) if values else None}


# --- the verdict -------------------------------------------------------------------------------------

def verdict(trials: pl.DataFrame, targets: Sequence[Target], params: Sequence[Union[Param, str]],
            seeds: Optional[Sequence[int]] = None, interrupted: int = 0, sampler: str = "",
            what: str = "") -> dict[str, Any]:
    """Per target, what the trials show, and no more. `trials` needs `trial`, `status` ("done"
    for a finished trial), a column per parameter, and per target `<name>` (the mean over seeds)
    and optionally `<name>_per_seed` (each seed's value).

    The best point is the finished trial that satisfies the most targets (its mean within
    tolerance), then the lowest loss, then the lowest number. A target is
    - "reproduced" when the best point satisfies it and no trial satisfying another target
      excludes it (see conflicting): its mean there and how many seeds were individually within;
    - "conflicting" when some trial satisfies it but no trial satisfies it together with some
      other target that a trial satisfies (`conflicts_with`; when no single other target does,
      but it is never satisfied together with those met at the best point, all of those);
    - "not reproduced" when no trial's mean is within tolerance: the closest mean reached, at
      which trial and parameters.
    `coverage` says what was searched: trials run (and failed, interrupted), seeds per trial,
    each parameter's range, and the sampler; a search samples its ranges, so "not reproduced"
    means not found in these trials, never unreachable."""
    keys = [p.key if isinstance(p, Param) else p for p in params]
    done = trials.filter(pl.col("status") == "done").sort("trial")
    failed = trials.filter(pl.col("status") == "failed").height
    rows = list(done.iter_rows(named=True))
    means = {t.name: [_none_nan(r.get(t.name)) for r in rows] for t in targets}
    ok = {t.name: [t.within(v) for v in means[t.name]] for t in targets}
    losses = [sum(_term(t, means[t.name][i]) for t in targets) for i in range(len(rows))]
    coverage: dict[str, Any] = {
        "trials": len(rows), "failed": failed, "interrupted": interrupted,
        "seeds_per_trial": len(seeds) if seeds is not None else None, "seeds": list(seeds) if seeds is not None else None,
        "params": {p.key: p.describe() for p in params if isinstance(p, Param)} or {k: "(not given)" for k in keys},
        "sampler": sampler or "(not given)",
        "note": "the search sampled these ranges in these trials; a target not reproduced was not found "
                "within them, which does not show it unreachable there, and nothing is claimed outside them",
    }
    result: dict[str, Any] = {"calibrating": what or None, "coverage": coverage, "best_trial": None,
                              "best_params": None, "targets": {}}
    if not rows:
        for t in targets:
            result["targets"][t.name] = {"verdict": NOT_REPRODUCED, "paper": t.value, "tolerance": t.tolerance_text(),
                                         "statement": "not reproduced: no trial finished"}
        result["summary"] = f"no trial finished ({failed} failed); nothing is reproduced"
        return result
    order = sorted(range(len(rows)), key=lambda i: (-sum(ok[t.name][i] for t in targets), losses[i], rows[i]["trial"]))
    best = order[0]
    met = {t.name for t in targets if ok[t.name][best]}
    satisfying = {t.name: {i for i in range(len(rows)) if ok[t.name][i]} for t in targets}
    reachable = [t.name for t in targets if satisfying[t.name]]
    pairwise = {n: sorted((m for m in reachable if m != n and not satisfying[n] & satisfying[m]),
                          key=[t.name for t in targets].index) for n in reachable}
    result["best_trial"] = rows[best]["trial"]
    result["best_params"] = {k: rows[best].get(k) for k in keys}
    result["best_loss"] = losses[best]

    def point(i: int, t: Target) -> dict[str, Any]:
        per_seed = rows[i].get(f"{t.name}_per_seed")
        within = sum(t.within(_none_nan(v)) for v in per_seed) if per_seed is not None else None
        return {"trial": rows[i]["trial"], "params": {k: rows[i].get(k) for k in keys}, "value": means[t.name][i],
                "per_seed": list(per_seed) if per_seed is not None else None, "seeds_within": within,
                "seeds": len(per_seed) if per_seed is not None else None}

    def seeds_text(p: dict[str, Any]) -> str:
        return f", {p['seeds_within']} of {p['seeds']} seeds individually within" if p["seeds"] is not None else ""

    for t in targets:
        entry: dict[str, Any] = {"paper": t.value, "tolerance": t.tolerance_text()}
        if not satisfying[t.name]:
            finite = [i for i in range(len(rows)) if math.isfinite(means[t.name][i])]
            entry["verdict"] = NOT_REPRODUCED
            if finite:
                closest = min(finite, key=lambda i: (t.error(means[t.name][i]), rows[i]["trial"]))
                entry["closest"] = point(closest, t)
                entry["statement"] = (f"not reproduced: no trial's mean came within {t.describe()}; the closest was "
                                      f"{_text(means[t.name][closest])} at trial {rows[closest]['trial']} "
                                      f"({_params_text(entry['closest']['params'])})")
            else:
                entry["statement"] = "not reproduced: no trial gave a finite value"
        else:
            conflicts = pairwise[t.name]
            if t.name not in met and not conflicts:
                conflicts = sorted(met, key=[x.name for x in targets].index)
            if conflicts:
                alone = min(satisfying[t.name], key=lambda i: (losses[i], rows[i]["trial"]))
                entry.update(verdict=CONFLICTING, conflicts_with=conflicts, alone=point(alone, t))
                joint = "any of" if pairwise[t.name] else "all of"
                entry["statement"] = (f"conflicting: reproduced alone (e.g. {_text(means[t.name][alone])} at trial "
                                      f"{rows[alone]['trial']}), but no trial also satisfies {joint} "
                                      f"{', '.join(conflicts)}")
            else:
                at = point(best, t)
                entry.update(verdict=REPRODUCED, at=at)
                entry["statement"] = (f"reproduced: mean {_text(means[t.name][best])} over seeds at trial "
                                      f"{rows[best]['trial']} ({_params_text(at['params'])}){seeds_text(at)}")
        result["targets"][t.name] = entry
    counts = {v: sum(e["verdict"] == v for e in result["targets"].values())
              for v in (REPRODUCED, CONFLICTING, NOT_REPRODUCED)}
    seeds_part = f" x {len(seeds)} seed{'s' if len(seeds) != 1 else ''}" if seeds is not None else ""
    reproduced = [t.name for t in targets if result["targets"][t.name]["verdict"] == REPRODUCED]
    fits_text = ""
    if reproduced:
        # Which other trials meet the same targets: a reproduction that many settings give
        # does not pin the parameters down, and the verdict says so.
        fits = [i for i in range(len(rows)) if all(ok[n][i] for n in reproduced)]
        spread = {k: _spread([rows[i].get(k) for i in fits]) for k in keys}
        result["fits"] = {"targets": reproduced, "trials": [rows[i]["trial"] for i in fits], "spread": spread}
        fits_text = (f"; {len(fits)} trial{'s' if len(fits) != 1 else ''} meet{'s' if len(fits) == 1 else ''} "
                     f"the reproduced target{'s' if len(reproduced) != 1 else ''}"
                     + (", with " + "; ".join(f"{k} {_spread_text(v)}" for k, v in spread.items()) if len(fits) > 1 else ""))
    where = f"at trial {rows[best]['trial']}" if counts[REPRODUCED] else f"(the best point: trial {rows[best]['trial']})"
    result["summary"] = (f"{counts[REPRODUCED]} of {len(targets)} targets reproduced {where}, "
                         f"{counts[CONFLICTING]} conflicting, {counts[NOT_REPRODUCED]} not reproduced{fits_text}; "
                         f"searched {len(rows)} finished trials{seeds_part} ({failed} failed) over "
                         + "; ".join(f"{k} {v}" for k, v in coverage["params"].items()))
    result["all_reproduced"] = counts[REPRODUCED] == len(targets)
    return result


def _spread(values: list[Any]) -> Any:
    """[min, max] of numbers, else the distinct values (as text, sorted)."""
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [min(values), max(values)]
    return sorted({_text(v) for v in values})


def _spread_text(spread: Any) -> str:
    if len(spread) == 2 and all(isinstance(v, (int, float)) for v in spread):
        return f"from {_text(spread[0])} to {_text(spread[1])}"
    return "in {" + ", ".join(spread) + "}"


def best_points(trials: pl.DataFrame, targets: Sequence[Target], keys: Sequence[str],
                count: int = BEST_POINTS) -> dict[str, Any]:
    """best.json: the `count` best finished trials (most targets satisfied, then lowest loss)
    with the targets each satisfies, and per target the trial whose mean came closest."""
    done = trials.filter(pl.col("status") == "done")
    rows = list(done.iter_rows(named=True))

    def describe(row: dict[str, Any]) -> dict[str, Any]:
        loss = sum(_term(t, _none_nan(row.get(t.name))) for t in targets)
        return {"trial": row["trial"], "params": {k: row.get(k) for k in keys}, "loss": loss,
                "satisfies": [t.name for t in targets if t.within(_none_nan(row.get(t.name)))],
                "targets": {t.name: {"mean": row.get(t.name), "sd": row.get(f"{t.name}_sd"),
                                     "per_seed": row.get(f"{t.name}_per_seed"),
                                     "seeds_within": row.get(f"{t.name}_seeds_within"),
                                     "within": t.within(_none_nan(row.get(t.name))),
                                     "paper": t.value, "tolerance": t.tolerance_text()} for t in targets}}

    described = sorted((describe(r) for r in rows), key=lambda d: (-len(d["satisfies"]), d["loss"], d["trial"]))
    closest = {}
    for t in targets:
        finite = [r for r in rows if math.isfinite(_none_nan(r.get(t.name)))]
        if finite:
            row = min(finite, key=lambda r: (t.error(r[t.name]), r["trial"]))
            closest[t.name] = {"trial": row["trial"], "mean": row[t.name], "within": t.within(row[t.name]),
                               "params": {k: row.get(k) for k in keys}}
    return {"objective": "sum over targets of weight x ln(1 + ((mean over seeds - paper) / tolerance)^2)",
            "best": described[:count], "closest_per_target": closest}


def _none_nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {_text(v)}" for k, v in params.items())


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)


# --- influence and the plot ----------------------------------------------------------------------

def influence(trials: pl.DataFrame, params: Sequence[Param], target: Target) -> dict[str, float]:
    """How strongly each parameter moves a target over the finished trials: |Spearman's rank
    correlation| for a numeric parameter, the correlation ratio (eta) for a categorical one;
    NaN with fewer than 3 usable trials or no variation. Sorted, strongest first."""
    done = trials.filter((pl.col("status") == "done") & pl.col(target.name).is_not_null()
                         & pl.col(target.name).is_finite())
    y = done[target.name].to_numpy().astype(float) if done.height else np.array([])
    scores: dict[str, float] = {}
    for param in params:
        if done.height < 3 or np.ptp(y) == 0:
            scores[param.key] = math.nan
            continue
        column = done[param.key]
        if param.kind == "categorical":
            labels = column.cast(pl.String).to_list()
            total = float(((y - y.mean()) ** 2).sum())
            between = sum(len(g) * (g.mean() - y.mean()) ** 2
                          for g in (y[[i for i, l in enumerate(labels) if l == label]] for label in set(labels)))
            scores[param.key] = math.sqrt(between / total)
        else:
            x = column.cast(pl.Float64).to_numpy()
            if np.ptp(x) == 0:
                scores[param.key] = math.nan
                continue
            rx = pl.Series(x).rank("average").to_numpy()
            ry = pl.Series(y).rank("average").to_numpy()
            scores[param.key] = abs(float(np.corrcoef(rx, ry)[0, 1]))
    return dict(sorted(scores.items(), key=lambda kv: -kv[1] if math.isfinite(kv[1]) else 1.0))


def plot_targets(trials: pl.DataFrame, spec: Spec, verdict_: Optional[dict[str, Any]] = None,
                 path: Optional[Union[str, Path]] = None) -> Figure:
    """A row per target, a panel per most influential parameter (up to PLOTTED_PARAMS): each
    finished trial's mean over seeds (bars: min to max over seeds), the paper's value and its
    tolerance band, the best point circled."""
    params = {p.key: p for p in spec.params}
    columns = min(PLOTTED_PARAMS, len(spec.params))
    rows = len(spec.targets)
    figure = Figure(figsize=(5.2 * columns, 3.4 * rows))
    FigureCanvasAgg(figure)
    done = trials.filter(pl.col("status") == "done")
    best = (verdict_ or {}).get("best_trial")
    for r, target in enumerate(spec.targets):
        ranked = influence(trials, spec.params, target)
        for c, key in enumerate(list(ranked)[:columns]):
            axes = figure.add_subplot(rows, columns, r * columns + c + 1)
            param = params[key]
            usable = done.filter(pl.col(target.name).is_not_null())
            if param.kind == "categorical":
                labels = [_text(v) for v in param.choices]
                x = np.array([labels.index(_text(v)) for v in usable[key].to_list()], dtype=float)
                # Spread the trials of one choice a little, so they do not hide each other.
                x += 0.25 * (np.arange(len(x)) % 7 - 3) / 3
                axes.set_xticks(range(len(labels)), labels)
            else:
                x = usable[key].cast(pl.Float64).to_numpy()
                if param.log:
                    axes.set_xscale("log")
                    for axis_formatter in (axes.xaxis.set_major_formatter, axes.xaxis.set_minor_formatter):
                        axis_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            y = usable[target.name].to_numpy()
            if len(y) and np.nanmin(y) > 0 and np.nanmax(y) >= LOG_Y_RATIO * np.nanmin(y):
                axes.set_yscale("log")
            low = y - usable[f"{target.name}_min"].fill_null(np.nan).to_numpy()
            high = usable[f"{target.name}_max"].fill_null(np.nan).to_numpy() - y
            axes.axhspan(target.value - target.tolerance, target.value + target.tolerance, color="tab:green", alpha=0.15,
                         label=f"paper {target.describe()}")
            axes.axhline(target.value, color="tab:green", linewidth=1)
            axes.errorbar(x, y, yerr=np.nan_to_num(np.vstack([low, high])), fmt="o", markersize=4, alpha=0.7,
                          elinewidth=0.8, label="trials (mean, min-max over seeds)")
            if best is not None and best in usable["trial"].to_list():
                i = usable["trial"].to_list().index(best)
                axes.plot([x[i]], [y[i]], "o", markersize=11, markerfacecolor="none", markeredgecolor="tab:red",
                          label=f"best point (trial {best})")
            score = ranked[key]
            unit = f" ({param.unit})" if param.unit else ""
            axes.set_xlabel(f"{key}{unit}")
            axes.set_ylabel(target.name)
            strength = f"influence {score:.2f}" if math.isfinite(score) else "influence n/a"
            axes.set_title(f"{target.name} vs {key}: {strength}", fontsize=9)
            if r == 0 and c == 0:
                axes.legend(fontsize=7)
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=110)
    return figure


# --- the report page -----------------------------------------------------------------------------

def is_calibration(folder: Union[str, Path]) -> bool:
    folder = Path(folder)
    return (folder / TRIALS_FILE).exists() and (folder / VERDICT_FILE).exists()


def report_page(folder: Union[str, Path]) -> tuple[str, str]:
    """The title and HTML body of a calibration folder's report (`retx report OUT`): the
    verdict per target, what was covered, the best points, the plot, the trials and the spec."""
    folder = Path(folder)
    verdict_ = json.loads((folder / VERDICT_FILE).read_text())
    best = json.loads((folder / BEST_FILE).read_text()) if (folder / BEST_FILE).exists() else {"best": []}
    trials = pl.read_parquet(folder / TRIALS_FILE)
    record = read_parquet_provenance(folder / TRIALS_FILE)
    spec_text = (folder / SPEC_FILE).read_text() if (folder / SPEC_FILE).exists() else ""
    esc = html.escape
    parts = [f"<p>{esc(verdict_.get('summary', ''))}</p>"]
    rows = "".join(
        f"<tr><td class=\"text\">{esc(name)}</td><td class=\"text\">{esc(entry['verdict'])}</td>"
        f"<td>{esc(_text(entry.get('paper')))} \u00b1 {esc(str(entry.get('tolerance', '')))}</td><td class=\"text\">{esc(entry.get('statement', ''))}</td></tr>"
        for name, entry in verdict_.get("targets", {}).items())
    parts.append("<h2>Verdict</h2><table><tr><th>target</th><th>verdict</th><th>paper</th><th>what the trials show"
                 f"</th></tr>{rows}</table>")
    coverage = verdict_.get("coverage", {})
    cover = {**{k: v for k, v in coverage.items() if k != "params"},
             **{f"range of {k}": v for k, v in coverage.get("params", {}).items()}}
    parts.append("<h2>Coverage</h2>" + _html_key_values(cover))
    best_rows = "".join(
        f"<tr><td>{b['trial']}</td><td class=\"text\">{esc(_params_text(b['params']))}</td>"
        f"<td>{esc(_text(b['loss']))}</td><td class=\"text\">{esc(', '.join(b['satisfies']) or '-')}</td></tr>"
        for b in best.get("best", []))
    parts.append("<h2>Best points</h2><table><tr><th>trial</th><th>parameters</th><th>loss</th>"
                 f"<th>targets within tolerance</th></tr>{best_rows}</table>")
    plot = folder / PLOT_FILE
    if plot.exists():
        import base64

        data = base64.b64encode(plot.read_bytes()).decode("ascii")
        parts.append(f"<h2>Targets against the most influential parameters</h2>"
                     f"<img alt=\"{PLOT_FILE}\" src=\"data:image/png;base64,{data}\">")
    shown_trials = trials.drop([c for c in trials.columns if c.endswith("_per_seed")] + ["hashes"], strict=False)
    shown_trials = shown_trials.with_columns(pl.col("seeds").cast(pl.List(pl.String)).list.join(", ")) \
        if "seeds" in shown_trials.columns else shown_trials
    parts.append(f"<h2>Trials ({trials.height})</h2>" + _html_table(shown_trials.head(200))
                 + (f"<p>First 200 of {trials.height}; all are in {TRIALS_FILE}.</p>" if trials.height > 200 else ""))
    parts.append("<h2>Provenance</h2>" + _html_key_values(record))
    parts.append(f"<h2>Spec</h2><pre>{esc(spec_text)}</pre>")
    title = f"retx calibration of {verdict_.get('calibrating') or folder.name}"
    return title, "\n".join(parts)


def _html_key_values(items: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td class=\"text\">{html.escape(_cell_text(v))}</td></tr>"
                   for k, v in items.items())
    return f"<table>{rows}</table>"


def _html_table(frame: pl.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell_text(v))}</td>" for v in row) + "</tr>"
                   for row in frame.iter_rows())
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return _text(value)
    return str(value)


# --- helpers -------------------------------------------------------------------------------------

def _no_unknown(table: Mapping[str, Any], known: set[str], prefix: str, hint: str = "") -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        expected = hint or f"expected one of {', '.join(sorted(known))}"
        raise ScenarioError(f"{prefix}{unknown[0]}: unknown key ({expected})")


def _table(value: Any, where: str, required: bool = False) -> dict[str, Any]:
    if value is None and required:
        raise ScenarioError(f"{where}: missing; the spec needs a [{where}] table")
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: must be a table")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{where}: must be a non-empty string, not {value!r}")
    return value


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where}: must be an integer, not {value!r}")
    return value


def _positive_int(value: Any, where: str, required: bool = False) -> Any:
    if value is None:
        if required:
            raise ScenarioError(f"{where}: missing (a positive integer)")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{where}: must be a positive integer, not {value!r}")
    return value


def _seeds(seeds: Any, scenario: Optional[Scenario]) -> list[int]:
    where = f"{SPEC_TABLE}.seeds"
    if isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
        raise ScenarioError(f"{where}: must be a count or a list of seeds, not {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ScenarioError(f"{where}: must be at least 1, not {seeds}")
        first = scenario.data.get("seed", 1) if scenario is not None else 1
        start = first if isinstance(first, int) and not isinstance(first, bool) else 1
        return list(range(start, start + seeds))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in seeds):
        raise ScenarioError(f"{where}: a list of seeds must hold integers of at least 1, not {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ScenarioError(f"{where}: {seeds!r} repeats a seed")
    return list(seeds)


def _write_json(path: Path, data: Any) -> None:
    temp = path.with_name(f"{TEMP_PREFIX}{path.name}")
    temp.write_text(json.dumps(_finite(data), indent=2) + "\n")
    os.replace(temp, path)


def _finite(value: Any) -> Any:
    """JSON without NaN or Infinity (not JSON): non-finite numbers become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


@contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path`, so two calibrations never write to one folder."""
    with open(path, "a") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ScenarioError(f"--out {path.parent}: another calibration is writing there") from None
        yield
