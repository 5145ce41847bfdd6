"""Parameter sweeps: a grid of scenario overrides x seeds, run in parallel, resumable.

A sweep expands a base scenario into points: every combination of the swept values (dotted
keys, as `Scenario.with_overrides` takes them) times every seed. Each point runs in a worker
process (or a Ray task) and lands in `<out>/points/<hash>/`, the hash naming its resolved
scenario text (`retx.provenance.scenario_hash`), with the files `Results.save` writes plus
`point.json`. Beside them:

- `runs.parquet`: one row per point: the swept parameters (one column per key), `seed`,
  `hash`, `status` ("done" or "failed"), `error` (one line, null when done), `wall_seconds`;
- `flows.parquet`: every finished point's flows with its parameters, `seed` and `hash`;
- `summary.parquet`: one row per parameter point: across its seeds, the mean and the 95 %
  confidence half-width (Student t, `T_975`) of each run's `mean_fct_us`, `slowdown_p50`,
  `slowdown_p99` and `goodput_gbps` (`retx.metrics.run_metrics`, finished flows only);
- `sweep.toml`: the base scenario and the grid that was asked for.

Writes are atomic: a point is written into `points/.tmp-<hash>` by this process alone and
renamed into place, the tables go to a temp file that replaces the old one. A point folder
therefore exists only complete, so a sweep killed at any instant and run again skips the
finished points (their folders), reruns failed and missing ones, and indexes each point once.
Only one sweep writes to an output folder at a time (a lock on `<out>/.lock`). Folders of
points no longer in the grid (the scenario or grid changed) stay in `points/` but are left
out of the tables.
"""

from __future__ import annotations

import copy
import ctypes
import itertools
import json
import math
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

import polars as pl
import tomli_w

from retx import checked
from retx._native import ScenarioError
from retx.metrics import run_metrics
from retx.provenance import provenance, scenario_hash, utc_now, write_parquet
from retx.output import FLOWS_FILE, OutputError, inside
from retx.scenario import SWEEP_TABLE as SWEEP_TABLE
from retx.scenario import Scenario
from retx.progress import Reporter

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

try:
    import fcntl
except ImportError:  # Windows: no lock
    fcntl = None  # type: ignore[assignment]

POINTS_DIR = "points"
RUNS_FILE = "runs.parquet"
SUMMARY_FILE = "summary.parquet"
SWEEP_FILE = "sweep.toml"
POINT_FILE = "point.json"
TEMP_PREFIX = ".tmp-"
LOCK_FILE = ".lock"
EXECUTORS = checked.EXECUTORS
METRICS = ("mean_fct_us", "slowdown_p50", "slowdown_p99", "goodput_gbps")

# Two-sided 95 % Student t quantiles t(0.975, df), to 4 decimals, from the standard table
# (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2). Degrees of freedom between the listed ones use
# the next lower entry, a slightly wider (conservative) interval; past 120, the normal 1.96.
T_975 = {
    1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646, 8: 2.3060,
    9: 2.2622, 10: 2.2281, 11: 2.2010, 12: 2.1788, 13: 2.1604, 14: 2.1448, 15: 2.1314,
    16: 2.1199, 17: 2.1098, 18: 2.1009, 19: 2.0930, 20: 2.0860, 21: 2.0796, 22: 2.0739,
    23: 2.0687, 24: 2.0639, 25: 2.0595, 26: 2.0555, 27: 2.0518, 28: 2.0484, 29: 2.0452,
    30: 2.0423, 40: 2.0211, 60: 2.0003, 120: 1.9799,
}
T_975_LARGE = 1.9600


def t_975(df: int) -> float:
    """t(0.975, df) from T_975: the two-sided 95 % quantile of Student's t."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df > max(T_975):
        return T_975_LARGE
    return T_975[max(d for d in T_975 if d <= df)]


@dataclass(frozen=True)
class Grid:
    """What to sweep: {dotted key: values} (every combination) and the seeds."""

    values: dict[str, list[Any]]
    seeds: list[int]


@dataclass(frozen=True)
class Point:
    params: dict[str, Any]
    seed: int
    hash: str
    scenario: Scenario
    # Why the point cannot run (it does not validate), or None.
    invalid: Optional[str] = None


@dataclass
class SweepResult:
    """A sweep's output folder and its three tables."""

    out_dir: Path
    runs: pl.DataFrame
    flows: pl.DataFrame
    summary: pl.DataFrame
    keys: list[str] = field(default_factory=list)

    @property
    def failed(self) -> pl.DataFrame:
        return self.runs.filter(pl.col("status") == "failed")

    def __repr__(self) -> str:
        done = self.runs.filter(pl.col("status") == "done").height
        return (f"SweepResult({str(self.out_dir)!r})\n"
                f"  swept: {', '.join(self.keys) or '(seeds only)'}\n"
                f"  points done: {done}/{self.runs.height}")


def sweep(
    scenario: Union[Scenario, str, Path],
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Union[int, Sequence[int]]] = None,
    out: Optional[Union[str, Path]] = None,
    workers: Optional[int] = None,
    executor: str = "local",
    progress: bool = True,
) -> SweepResult:
    """Run every point of a grid and write the sweep folder (see the module docstring).

    `grid` ({dotted key: values}, as `--set key=v1,v2`) and `seeds` (a count, or the seeds
    themselves) add to and override the scenario's own `[sweep]` table. A count N gives the seeds s, s+1, ..,
    s+N-1 from the scenario's `seed` s (1 when unset); with no seeds anywhere, the scenario's
    seed alone. `out` defaults to results/<name>-sweep. `executor` is "local" (a pool of
    `workers` processes, default one per core) or "ray" (RAY_ADDRESS, else a local instance).
    A point that fails is recorded and the others go on; ScenarioError for a bad grid.
    """
    if executor not in EXECUTORS:
        raise ScenarioError(f"--executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    checked.workers(workers)
    if out is not None:
        checked.output_folder(Path(out))
    base, planned = plan(scenario, grid, seeds)
    out_dir = Path(out) if out is not None else Path("results") / f"{base.name}-sweep"
    # Before any point is resolved: a file where the folder goes is refused now, not after.
    checked.output_folder(out_dir)
    points = expand(base, planned)
    return _Sweep(base, planned, points, out_dir).run(workers, executor, progress)


def plan(
    scenario: Union[Scenario, str, Path],
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Union[int, Sequence[int]]] = None,
) -> tuple[Scenario, Grid]:
    """The base scenario (its `[sweep]` table removed; the simulator rejects unknown tables)
    and the grid: its `[sweep]` table overridden by `grid` and `seeds`."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(scenario)
    declared = scenario.data.get(SWEEP_TABLE, {})
    if not isinstance(declared, dict):
        raise ScenarioError(f"{SWEEP_TABLE}: must be a table with `set` and `seeds`")
    unknown = sorted(set(declared) - {"set", "seeds"})
    if unknown:
        raise ScenarioError(f"{SWEEP_TABLE}.{unknown[0]}: unknown key (expected `set` or `seeds`)")
    if SWEEP_TABLE in scenario.data:
        data = {key: value for key, value in scenario.data.items() if key != SWEEP_TABLE}
        scenario = Scenario(tomli_w.dumps(data), base_dir=scenario.base_dir, origin=scenario.origin)
    values = _flatten_set(declared.get("set", {}), f"{SWEEP_TABLE}.set")
    for key, listed in (grid or {}).items():
        values[key] = _value_list(listed, key)
    for key in values:
        if key == "seed" or key == "":
            raise ScenarioError(f"{SWEEP_TABLE}.set: {key!r} cannot be swept; give seeds with `seeds`")
    chosen = seeds if seeds is not None else declared.get("seeds")
    planned = Grid(values, _seed_list(chosen, scenario, "--seeds" if seeds is not None else f"{SWEEP_TABLE}.seeds"))
    # Counted before expand() makes a list of them.
    total = len(planned.seeds)
    for listed in values.values():
        total *= len(listed)
    if total > checked.MAX_POINTS:
        raise ScenarioError(f"{SWEEP_TABLE}: {total} points (values x seeds), more than the {checked.MAX_POINTS} "
                            "a sweep runs; split it")
    return scenario, planned


def expand(base: Scenario, grid: Grid) -> list[Point]:
    """Every combination of the grid's values (first key slowest) times every seed."""
    keys = list(grid.values)
    points = []
    for combination in itertools.product(*(grid.values[key] for key in keys)):
        params = dict(zip(keys, combination))
        for seed in grid.seeds:
            overrides = {**params, "seed": seed}
            try:
                scenario = base.with_overrides(overrides)
                points.append(Point(params, seed, scenario_hash(scenario.resolved()), scenario))
            except ScenarioError as error:
                # Named by what was asked for: stable across reruns, apart from valid points.
                name = scenario_hash("invalid\n" + json.dumps(overrides, sort_keys=True, default=str))
                points.append(Point(params, seed, name, base, invalid=one_line(error)))
    return points


def parse_set_option(option: str) -> tuple[str, list[Any]]:
    """`key=v1,v2,..` from the command line: each value read as a TOML value when it is one
    (numbers, true/false, quoted strings), else as a bare string; values cannot hold commas."""
    key, sep, listed = option.partition("=")
    key = key.strip()
    if not sep or not key or not listed.strip():
        raise ScenarioError(f"--set {option}: expected key=value[,value...]")
    return key, [_cli_value(item.strip()) for item in listed.split(",")]


class _Sweep:
    def __init__(self, base: Scenario, grid: Grid, points: list[Point], out_dir: Path) -> None:
        self.base = base
        self.grid = grid
        self.points = points
        self.out_dir = out_dir
        self.points_dir = out_dir / POINTS_DIR
        self.keys = list(grid.values)
        # hash -> {"status", "error", "wall_seconds"} of the points finished or failed.
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.runs = pl.DataFrame()
        self.record: Optional[dict[str, Any]] = None

    def run(self, workers: Optional[int], executor: str, show_progress: bool) -> SweepResult:
        self.points_dir.mkdir(parents=True, exist_ok=True)
        with _exclusive(self.out_dir / LOCK_FILE):
            return self._run_locked(workers, executor, show_progress)

    def _run_locked(self, workers: Optional[int], executor: str, show_progress: bool) -> SweepResult:
        for stale in self.points_dir.glob(TEMP_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a sweep killed mid-write
        _atomic_write_text(self.out_dir / SWEEP_FILE, self._sweep_toml())
        for point in self.points:
            folder = self.points_dir / point.hash
            if point.invalid is not None:
                self.outcomes[point.hash] = {"status": "failed", "error": point.invalid, "wall_seconds": None}
            elif folder.is_dir():
                wall = json.loads((folder / POINT_FILE).read_text()).get("wall_seconds")
                self.outcomes[point.hash] = {"status": "done", "error": None, "wall_seconds": wall}
        todo = {p.hash: p for p in self.points if p.hash not in self.outcomes}
        self._write_index()
        run_all = run_ray if executor == "ray" else run_local
        with Reporter("sweep", len(todo), "points", enabled=show_progress) as reporter:
            for name, outcome in run_all(list(todo.values()), workers):
                self._record(name, outcome)
                reporter.advance()
        return self._finish()

    def _record(self, name: str, outcome: dict[str, Any]) -> None:
        files = outcome.pop("files", None)
        if outcome["status"] == "done":
            temp = self.points_dir / f"{TEMP_PREFIX}{name}"
            try:
                shutil.rmtree(temp, ignore_errors=True)
                temp.mkdir()
                for file_name, content in files.items():
                    target = inside(temp, file_name)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(content)
                (temp / POINT_FILE).write_text(json.dumps({"hash": name, **outcome}, indent=2) + "\n")
                _fsync_dir_files(temp)
                os.replace(temp, self.points_dir / name)
            except (OSError, OutputError) as error:
                # A point whose files cannot be written fails alone; the sweep's tables go on.
                shutil.rmtree(temp, ignore_errors=True)
                outcome = {**outcome, "status": "failed", "error": f"writing its files: {one_line(error)}"}
        self.outcomes[name] = outcome
        self._write_index()

    def _write_index(self) -> None:
        rows = []
        for point in self.points:
            outcome = self.outcomes.get(point.hash)
            if outcome is None:
                continue
            rows.append({**_columns(point.params), "seed": point.seed, "hash": point.hash,
                         "status": outcome["status"], "error": outcome["error"],
                         "wall_seconds": outcome["wall_seconds"]})
        runs = _frame(rows, {**{key: pl.Null for key in self.keys}, "seed": pl.Int64, "hash": pl.String,
                             "status": pl.String, "error": pl.String, "wall_seconds": pl.Float64})
        _atomic_parquet(runs, self.out_dir / RUNS_FILE, self._provenance())
        self.runs = runs

    def _finish(self) -> SweepResult:
        flows_parts = []
        per_run = []
        for point in self.points:
            if self.outcomes[point.hash]["status"] != "done":
                continue
            try:
                flows = pl.read_parquet(self.points_dir / point.hash / FLOWS_FILE)
            except (OSError, pl.exceptions.PolarsError) as error:
                # A finished point whose flows cannot be read back (removed, truncated by a
                # full disk) is failed in runs.parquet and its folder removed, so the next run
                # of the sweep runs it again; it never breaks the sweep's tables.
                shutil.rmtree(self.points_dir / point.hash, ignore_errors=True)
                self.outcomes[point.hash] = {"status": "failed", "wall_seconds": None,
                                             "error": f"its {FLOWS_FILE} cannot be read (it runs again next time): "
                                                      f"{one_line(error)}"}
                self._write_index()
                continue
            labels = {**_columns(point.params), "seed": point.seed, "hash": point.hash}
            flows_parts.append(flows.with_columns(**{key: pl.lit(value) for key, value in labels.items()}))
            per_run.append({**labels, **run_metrics(flows)})
        flows = pl.concat(flows_parts, how="diagonal_relaxed") if flows_parts else pl.DataFrame()
        record = self._provenance()
        _atomic_parquet(flows, self.out_dir / FLOWS_FILE, record)
        summary = summarise(_frame(per_run, {}), self.keys)
        _atomic_parquet(summary, self.out_dir / SUMMARY_FILE, record)
        return SweepResult(self.out_dir, self.runs, flows, summary, self.keys)

    def _provenance(self) -> dict[str, Any]:
        """The sweep's own record (its hash names sweep.toml), stamped when it starts."""
        if self.record is None:
            self.record = provenance(self._sweep_toml(), utc_now())
        return self.record

    def _sweep_toml(self) -> str:
        grid = {"set": self.grid.values, "seeds": self.grid.seeds}
        return f"{self.base.text.rstrip()}\n\n{tomli_w.dumps({SWEEP_TABLE: grid})}"


def summarise(per_run: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per parameter point (one row per distinct value of `keys`), across its seeds: `seeds`
    (runs counted) and for each of METRICS `<metric>_mean` and `<metric>_ci95`, the half-width
    of the 95 % confidence interval of the mean, t(0.975, n-1) * sd / sqrt(n) with the sample
    sd (n - 1); NaN runs (no finished flow) are left out and n counts the rest. A metric with
    n = 1 has a null half-width, with n = 0 a null mean."""
    if per_run.height == 0:
        return pl.DataFrame()
    metrics = [m for m in METRICS if m in per_run.columns]
    frame = per_run.with_columns([pl.col(m).fill_nan(None) for m in metrics])
    aggregations = [pl.len().alias("seeds")]
    for m in metrics:
        aggregations += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std(ddof=1).alias(f"_{m}_sd"),
                         pl.col(m).count().alias(f"_{m}_n")]
    grouped = (frame.group_by(keys, maintain_order=True).agg(aggregations) if keys
               else frame.select(aggregations))
    rows = []
    for row in grouped.iter_rows(named=True):
        out = {key: value for key, value in row.items() if not key.startswith("_")}
        for m in metrics:
            n, sd = row.pop(f"_{m}_n"), row.pop(f"_{m}_sd")
            out[f"{m}_ci95"] = t_975(n - 1) * sd / math.sqrt(n) if n >= 2 and sd is not None else None
        rows.append(out)
    order = keys + ["seeds"] + [f"{m}_{part}" for m in metrics for part in ("mean", "ci95")]
    schema: dict[str, Any] = {**{key: grouped.schema[key] for key in keys}, "seeds": pl.Int64,
              **{f"{m}_{part}": pl.Float64 for m in metrics for part in ("mean", "ci95")}}
    return pl.DataFrame(rows, schema=schema).select(order)


# --- running points: in a worker process or a Ray task --------------------------------------

Outcome = dict[str, Any]


def run_point(text: str, base_dir: str) -> Outcome:
    """Run one point and hand back its output files as bytes, so that only the sweep's own
    process writes into the sweep folder (atomically). Never raises for a failed run."""
    from retx.runner import simulate  # here: a Ray worker imports this module lazily

    started = time.monotonic()
    try:
        results = simulate(Scenario(text, base_dir=base_dir))
        with tempfile.TemporaryDirectory(prefix="retx-point-") as temp:
            results.write(temp)
            # Relative names with '/' (an fct.txt under mix/), checked again when written.
            files = {path.relative_to(temp).as_posix(): path.read_bytes()
                     for path in sorted(Path(temp).rglob("*")) if path.is_file()}
        return {"status": "done", "error": None, "wall_seconds": time.monotonic() - started,
                "files": files}
    except (Exception, BaseException) as error:  # pyo3's PanicException is a BaseException
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return {"status": "failed", "error": one_line(error),
                "wall_seconds": time.monotonic() - started}


# What an executor runs for a point: (scenario text, base folder) -> outcome. Sweeps run
# `run_point`; a calibration (retx.calibrate) its own picklable task, which returns numbers.
Task = Callable[[str, str], Outcome]


def local_pool(workers: int) -> ProcessPoolExecutor:
    """The local executor's pool: `workers` spawned processes that die with this one. A caller
    running several batches (a calibration) passes one to `run_local` to start it once."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init)


def run_local(points: list[Point], workers: Optional[int], task: Task = run_point,
              pool: Optional[ProcessPoolExecutor] = None) -> Iterator[tuple[str, Outcome]]:
    """The local executor: `task` on each point in a process pool (`pool`, else one of up to
    `workers` processes for this call), yielding (point hash, outcome) as each finishes. A
    worker that dies fails its point; Ctrl-C or the caller stopping early stops the rest."""
    if not points:
        return
    owned = pool is None
    if pool is None:
        pool = local_pool(min(workers or checked.default_workers(), len(points)))
    try:
        futures: dict[Future[Outcome], Point] = {
            pool.submit(task, p.scenario.text, str(p.scenario.base_dir)): p for p in points}
        pending = set(futures)
        while pending:
            # A timeout keeps the main thread responsive to Ctrl-C.
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    outcome = {"status": "failed", "wall_seconds": None,
                               "error": "the worker process died (killed, or out of memory)"}
                yield futures[future].hash, outcome
    except BaseException:
        # Ctrl-C, an error, or the caller stopping early: stop the points still running rather
        # than wait for them (the executor has no public way to).
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive():
                process.terminate()
        raise
    finally:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    # Ctrl-C is for the sweep's own process, which stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        # Die with the sweep's process even when it is SIGKILLed (prctl PR_SET_PDEATHSIG = 1).
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def run_ray(points: list[Point], workers: Optional[int], task: Task = run_point) -> Iterator[tuple[str, Outcome]]:
    """The Ray executor: `task` on each point as a Ray task (at most `workers` in flight, when
    given), yielding (point hash, outcome) as each finishes; the tasks still running are
    cancelled when the caller stops."""
    try:
        import ray
    except ImportError:
        raise ScenarioError("--executor ray: Ray is not installed (pip install 'retx[ray]')") from None
    if not points:
        return
    if not ray.is_initialized():
        # ray.init() connects to RAY_ADDRESS when it is set, else starts a local instance.
        ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False,
                 include_dashboard=False, configure_logging=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(_call_task)
    # `workers`, when given, caps the tasks in flight; else Ray schedules them all.
    limit = workers or len(points)
    queue = list(reversed(points))
    in_flight: dict[Any, Point] = {}
    try:
        while queue or in_flight:
            while queue and len(in_flight) < limit:
                point = queue.pop()
                in_flight[remote.remote(task, point.scenario.text, str(point.scenario.base_dir.resolve()))] = point
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
            for ref in ready:
                point = in_flight.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception as error:  # the task's worker died
                    outcome = {"status": "failed", "wall_seconds": None, "error": one_line(error)}
                yield point.hash, outcome
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)


def _call_task(task: Task, text: str, base_dir: str) -> Outcome:
    """A Ray task running `task` (Ray takes only plain functions, not e.g. a partial)."""
    return task(text, base_dir)


# --- helpers ------------------------------------------------------------------------------------

def _flatten_set(table: Any, where: str) -> dict[str, list[Any]]:
    """{dotted key: values} from `set = { "a.b" = [..] }` or nested tables `set.a.b = [..]`."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: must be a table of key = [values]")
    flat: dict[str, list[Any]] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            for sub_key, sub_values in _flatten_set(value, f"{where}.{key}").items():
                flat[f"{key}.{sub_key}"] = sub_values
        else:
            flat[key] = _value_list(value, f"{where}.{key}")
    return flat


def _value_list(values: Any, where: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ScenarioError(f"{where}: must be a list of values, e.g. [1, 2]")
    if len(values) == 0:
        raise ScenarioError(f"{where}: needs at least one value")
    return [copy.deepcopy(v) for v in values]


def _seed_list(seeds: Any, scenario: Scenario, where: str) -> list[int]:
    first = scenario.data.get("seed", 1)
    if seeds is None:
        return [first] if isinstance(first, int) and not isinstance(first, bool) else [1]
    # A count is checked before it is expanded, every seed within the generator's range.
    return checked.seed_list(seeds, first, where)


def _cli_value(item: str) -> Any:
    try:
        return tomllib.loads(f"v = {item}")["v"]
    except tomllib.TOMLDecodeError:
        return item


def _columns(params: Mapping[str, Any]) -> dict[str, Any]:
    """Swept values as table cells: scalars as they are, lists and tables as TOML-ish JSON."""
    return {key: value if isinstance(value, (str, int, float, bool)) else json.dumps(value, default=str)
            for key, value in params.items()}


def _frame(rows: list[dict[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    """A table from row dicts; a column whose values mix types (e.g. 1 and "a") becomes strings."""
    if not rows:
        return pl.DataFrame(schema={k: (pl.String if v == pl.Null else v) for k, v in schema.items()})
    columns = {key: [row.get(key) for row in rows] for key in rows[0]}
    series = []
    for key, values in columns.items():
        present = [v for v in values if v is not None]
        if not present:
            dtype = schema.get(key, pl.String)
            series.append(pl.Series(key, values, dtype=pl.String if dtype == pl.Null else dtype))
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            dtype = pl.Float64 if any(isinstance(v, float) for v in present) else pl.Int64
            series.append(pl.Series(key, values, dtype=dtype))
        elif all(type(v) is type(present[0]) for v in present):
            series.append(pl.Series(key, values))
        else:
            series.append(pl.Series(key, [None if v is None else str(v) for v in values]))
    return pl.DataFrame(series)


def one_line(error: BaseException) -> str:
    """An error as one line: a ScenarioError's message, else prefixed with the error's type."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if isinstance(error, ScenarioError) else f"{type(error).__name__}: {text}"


@contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (flock, released even if the process is killed), so
    two sweeps never write to one folder; ScenarioError if another sweep holds it."""
    with open(path, "a") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ScenarioError(f"--out {path.parent}: another sweep is writing there") from None
        yield


def _atomic_write_text(path: Path, text: str) -> None:
    temp = path.with_name(f"{TEMP_PREFIX}{path.name}")
    temp.write_text(text)
    os.replace(temp, path)


def _atomic_parquet(frame: pl.DataFrame, path: Path, record: dict[str, Any]) -> None:
    temp = path.with_name(f"{TEMP_PREFIX}{path.name}")
    write_parquet(frame, temp, record)
    os.replace(temp, path)


def _fsync_dir_files(folder: Path) -> None:
    """Flush a finished point's files (in subfolders too: `mix/fct.txt`) before the rename
    makes it count as done."""
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())

