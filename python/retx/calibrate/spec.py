"""A calibration spec: its types (`Param`, `Cell`, `Target`, `Spec`), `load_spec` and the checks
it makes (a ScenarioError naming the field: `params.topology.link_delay.low: ...`), and
`value_text`, how a number is written in messages, the verdict and the page.

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
those); seed 1 runs the reproduction's own seeds, seed s adds 1000 x (s - 1) to each
(`retx.calibrate.search`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np
import polars as pl
import tomli_w

from retx import checked as limits
from retx import metrics
from retx._native import ScenarioError
from retx.output import shown
from retx.scenario import Scenario

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SPEC_TABLE = "calibrate"
REDUCERS = ("mean", "median", "min", "max", "sum")
# A value counts as within tolerance up to this relative slack (float noise at the boundary).
SLACK = 1e-9

# The largest value of each positive count of the spec (the others: a u32): trials and runs at
# once within what a study and a process pool hold.
POSITIVE_MAX = {"trials": 1_000_000, "workers": limits.MAX_WORKERS, "batch": limits.MAX_WORKERS}
_SPEC_KEYS = {"scenario", "reproduction", "quick", "trials", "seeds", "workers", "batch", "sampler_seed",
              "startup_trials"}
_TOP_KEYS = {SPEC_TABLE, "fixed", "params", "target"}
_PARAM_KEYS = {"type", "low", "high", "log", "step", "unit", "choices"}
_PARAM_MARKERS = {"type", "low", "high", "choices"}
_TARGET_KEYS = {"name", "metric", "args", "key", "row", "column", "reduce", "divide_by", "value", "abs_tol",
                "rel_tol", "weight"}
_CELL_KEYS = {"key", "row", "column", "reduce"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]{0,63}")
# The columns of trials.parquet (retx.calibrate.search.trials_table) a target's name must not
# take: its own, and those its name plus a suffix gives.
_TRIAL_COLUMNS = ("trial", "status", "error", "session", "loss", "satisfied", "seeds", "hashes", "wall_seconds",
                  "started_utc")
_TARGET_SUFFIXES = ("_sd", "_ci95", "_min", "_max", "_per_seed", "_seeds_within", "_ok")


# --- the spec's types ----------------------------------------------------------------------------

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
            return "{" + ", ".join(value_text(c) for c in self.choices) + "}"
        unit = f" {self.unit}" if self.unit else ""
        how = ([self.kind] + (["log scale"] if self.log else [])
               + ([f"step {value_text(self.step)}"] if self.step else []))
        return f"[{value_text(self.low)}, {value_text(self.high)}]{unit} ({', '.join(how)})"


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
        return f"{value_text(self.rel_tol * 100)} %" if self.rel_tol is not None else value_text(self.abs_tol)

    def describe(self) -> str:
        return f"{value_text(self.value)} \u00b1 {self.tolerance_text()}"


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
            what["reproduction"] = [self.reproduction, self.quick, reproduction_source_hash(self.reproduction)]
        return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


# --- loading and checking -------------------------------------------------------------------------

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
    # Optuna's sampler seeds numpy's generator: 0 to 2^32 - 1.
    sampler_seed = limits.integer(head.get("sampler_seed", 1), f"{SPEC_TABLE}.sampler_seed", 0, limits.U32_MAX)
    startup = limits.integer(head.get("startup_trials", 10), f"{SPEC_TABLE}.startup_trials", 0, POSITIVE_MAX["trials"])

    params = _params(data.get("params"))
    targets = _targets(data.get("target"), kind, params)
    checked = Spec(text, origin, kind, params, targets, trials, seeds, scenario, reproduction, quick, fixed,
                   workers, batch, sampler_seed, startup)
    check_against_base(checked)
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
        raise ScenarioError(f"{where}.high: must be above low ({value_text(low)}), not {value_text(high)}")
    if log and low <= 0:
        raise ScenarioError(f"{where}.low: a log-scale range must start above 0, not {value_text(low)}")
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


def check_against_base(spec: Spec) -> None:
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
                raise ScenarioError(f"params.{param.key}: at {value_text(value)}: {error}") from None


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


def reproduction_source_hash(name: Optional[str]) -> str:
    from retx import reproduce

    source = inspect.getsource(reproduce.lookup(str(name))).encode("utf-8")
    return hashlib.sha256(source).hexdigest()[:12]


def value_text(value: Any) -> str:
    """A value as messages, the verdict and the page write it: a float to 4 significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)



# --- parsing helpers -----------------------------------------------------------------------------

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


def _positive_int(value: Any, where: str, required: bool = False) -> Any:
    if value is None:
        if required:
            raise ScenarioError(f"{where}: missing (a positive integer)")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{where}: must be a positive integer, not {value!r}")
    return limits.integer(value, where, 1, POSITIVE_MAX.get(where.rsplit(".", 1)[-1], limits.U32_MAX))


def _seeds(seeds: Any, scenario: Optional[Scenario]) -> list[int]:
    where = f"{SPEC_TABLE}.seeds"
    first = scenario.data.get("seed", 1) if scenario is not None else 1
    # A count is checked before it is expanded, every seed within the generator's range; a
    # reproduction's seed s adds 1000 x (s - 1) to its own seeds, so a seed is at least 1.
    chosen = limits.seed_list(seeds, first, where)
    if any(s < 1 for s in chosen):
        raise ScenarioError(f"{where}: a list of seeds must hold integers of at least 1, not {seeds!r}")
    return chosen
