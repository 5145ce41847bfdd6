"""The search: `calibrate` runs a spec's trials into a folder, resuming what it holds. Here are
evaluating one point (`evaluate`, in a worker process or a Ray task; `run_reproduction`), the
Optuna-driven loop, the folder's lock, `trials_table` and `CalibrationResult`.

The search is Optuna's TPE sampler (multivariate, with the constant liar for batches), its
study kept in `<out>/study.db` (sqlite): a calibration killed at any point and run again
resumes there, repeating no finished trial; a trial cut off mid-evaluation is evaluated again
under a new number (its parameters enqueued first). Each trial runs its point once per seed
through the sweep executors (`retx.sweep`: a local process pool, or Ray), `batch` trials at a
time; the objective minimised is sum over targets of weight x ln(1 + e^2), e = (mean over
seeds - value) / tolerance: the squared error near the targets, growing slowly far off, so a
point meeting some targets beats a compromise missing them all. A point already evaluated (same
resolved scenario and seed) is not run again. A reproduction's parameters reach the scenarios
it runs through `retx.runner.rewriting`.

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
  search covered (`retx.calibrate.verdict`);
- `targets.png`: each target against its most influential parameters (`influence`);
- `spec.toml` (the spec as given), `study.db`; `retx report OUT` renders a page.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager, nullcontext, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import numpy as np
import polars as pl
import tomli_w

from retx import checked as limits
from retx import metrics
from retx._native import ScenarioError
from retx.calibrate.report import BEST_FILE, PLOT_FILE, SPEC_FILE, TRIALS_FILE, VERDICT_FILE, plot_targets
from retx.calibrate.spec import POSITIVE_MAX, REDUCERS, Cell, Spec, Target, load_spec, reproduction_source_hash
from retx.calibrate.verdict import best_points, loss_term, verdict
from retx.provenance import provenance, scenario_hash, utc_now, write_parquet
from retx.progress import Reporter, quiet
from retx.runner import rewriting, simulate
from retx.scenario import Scenario
from retx.sweep import EXECUTORS, Outcome, Point, local_pool, one_line, run_local, run_ray, t_975

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

try:
    import fcntl
except ImportError:  # Windows: no lock
    fcntl = None  # type: ignore[assignment]

STUDY_FILE = "study.db"
LOCK_FILE = ".lock"
TEMP_PREFIX = ".tmp-"
STUDY_NAME = "retx-calibration"
RESULT_ATTR = "retx"
# A reproduction's seed s adds this x (s - 1) to the seed of every scenario it runs.
REPRODUCTION_SEED_STRIDE = 1000


class TargetError(ValueError):
    """A target cannot be read from what a run produced (a spec mistake found at run time)."""


class _SpecError(Exception):
    """A worker's TargetError, carried out of the search loop."""


# --- evaluating one point (in a worker process or a Ray task) ---------------------------------------

def evaluate(targets: tuple[Target, ...], kind: str, text: str, base_dir: str) -> Outcome:
    """Run one point and read its targets: {"status", "error", "wall_seconds", "values":
    {name: float}}; "spec_error" is true when a target cannot be read (a mistake in the spec).
    `text` is the point's scenario, or for a reproduction its job (TOML: reproduction, quick,
    seed_shift, set). Never raises for a failed run."""
    started = time.monotonic()
    try:
        if kind == "scenario":
            flows = simulate(Scenario(text, base_dir=base_dir)).flows
            values = {t.name: _metric_value(t, flows) for t in targets}
        else:
            table = run_reproduction(tomllib.loads(text))
            values = {t.name: _ratio(t, table) for t in targets}
        return {"status": "done", "error": None, "wall_seconds": time.monotonic() - started, "values": values}
    except TargetError as error:
        return {"status": "failed", "error": str(error), "wall_seconds": time.monotonic() - started,
                "spec_error": True}
    except (Exception, BaseException) as error:  # pyo3's PanicException is a BaseException
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return {"status": "failed", "error": one_line(error), "wall_seconds": time.monotonic() - started}


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
                raise TargetError(f"{where}.row.{name}: cannot compare with {wanted!r}: {one_line(error)}") from None
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


def run_reproduction(job: dict[str, Any]) -> pl.DataFrame:
    """Run a reproduction with `job["set"]` applied to every scenario it runs and its seeds
    shifted by `job["seed_shift"]` (through `retx.runner.rewriting`, in this process for the
    duration); its printed tables and its runs' progress go nowhere, its files to a temporary folder."""
    from retx import reproduce

    module = reproduce.lookup(job["reproduction"])
    overrides = job.get("set", {})
    shift = int(job.get("seed_shift", 0))

    def applied(scenario: Scenario) -> Scenario:
        seed = scenario.data.get("seed", 1)
        return scenario.with_overrides({**overrides, "seed": (seed if isinstance(seed, int) else 1) + shift})

    with rewriting(applied) if overrides or shift else nullcontext(), \
            tempfile.TemporaryDirectory(prefix="retx-calibrate-") as temp, \
            redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()), quiet():
        table = module.run(Path(temp), bool(job.get("quick", False)))
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
    """Search the spec's parameters for its targets (see this module's docstring, and
    retx.calibrate.spec's for the spec) into `out` (default results/<spec file's name>).
    `trials` (the budget in all, counting trials an earlier run left in `out`) and `workers`
    override the spec's. Rerun to resume."""
    if executor not in EXECUTORS:
        raise ScenarioError(f"--executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    if not isinstance(spec, Spec):
        spec = load_spec(spec, base_dir)
    budget = spec.trials if trials is None else limits.integer(trials, "--trials", 1, POSITIVE_MAX["trials"])
    limits.workers(workers)
    out_dir = limits.output_folder(Path(out) if out is not None else Path("results") / spec.name)
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
        workers = workers or (1 if self.spec.kind == "reproduction" else limits.default_workers())
        batch = self.spec.batch or max(1, math.ceil(workers / seeds))
        (self.out_dir / SPEC_FILE).write_text(self.spec.text)
        todo = max(0, budget - finished)
        try:
            # retx.progress: a bar with wall time and an ETA, or a line every few seconds.
            with Reporter("calibrate", budget, "trials", enabled=show_progress, completed=min(finished, budget),
                          note=self._best_text(study)) as bar, \
                    self._executor(executor, workers, min(workers, batch * seeds) if todo else 0) as run_all:
                while finished < budget:
                    asked = [study.ask(self.distributions) for _ in range(min(batch, budget - finished))]
                    self._evaluate(study, asked, session, run_all)
                    finished += len(asked)
                    self._write(study)
                    bar.update(finished, note=self._best_text(study))
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
            yield lambda points: run_ray(points, workers, self.task)
        elif pool_size == 0:
            yield lambda points: iter(())
        else:
            pool = local_pool(pool_size)
            try:
                yield lambda points: run_local(points, workers, self.task, pool)
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
                    points.append(Point(params, seed, name, base, invalid=one_line(error)))
            else:
                job = tomli_w.dumps({"reproduction": self.spec.reproduction, "quick": self.spec.quick, "seed": seed,
                                     "seed_shift": REPRODUCTION_SEED_STRIDE * (seed - 1), "set": overrides,
                                     "source_hash": reproduction_source_hash(self.spec.reproduction)})
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
                          source_hash=reproduction_source_hash(self.spec.reproduction))
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
    return sum(loss_term(t, _mean(values[t.name])) for t in targets)


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
