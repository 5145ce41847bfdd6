"""Run scenarios: one at a time with a progress bar, or many in parallel threads (progress:
`retx.progress`). Every run of this process goes through `simulate`, and `rewriting` changes
the scenarios it runs for a while (a calibration applying its parameters to a reproduction's
runs)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from retx import _native
from retx.checked import default_workers
from retx.progress import Reporter, ambient_label, shows_live_progress, simulated_time, wanted
from retx.provenance import provenance, utc_now
from retx.results import Results
from retx.scenario import Scenario

ScenarioLike = Union[Scenario, str, Path]
ProgressCallback = Callable[[float, float], None]
ScenarioTransform = Callable[[Scenario], Scenario]

__all__ = ["rewriting", "run", "run_many", "shows_live_progress", "simulate"]

# What `simulate` does to each scenario first, while `rewriting` is active (None: nothing).
_rewrite: Optional[ScenarioTransform] = None


def run(scenario: ScenarioLike, progress: Optional[bool] = None) -> Results:
    """Simulate one scenario. Progress (stderr; `retx.progress`): a bar with simulated time,
    wall time and an ETA on a terminal, shown only for runs longer than the first progress
    report (~0.2 s), so quick runs stay silent; a line every few seconds elsewhere. None
    follows the ambient setting (`retx.progress.quiet`), on by default."""
    scenario = _as_scenario(scenario)
    if not wanted(progress):
        return simulate(scenario, None)
    with simulated_time(ambient_label(scenario.name)) as reporter:
        return simulate(scenario, reporter)


def run_many(scenarios: Iterable[ScenarioLike], workers: Optional[int] = None,
             progress: Optional[bool] = None) -> list[Results]:
    """Simulate scenarios in parallel (the Rust core releases the GIL); results keep input order.

    Progress counts runs, each one still going by its share of simulated time, with wall time
    and an ETA (None: the ambient setting, as `run`). Ctrl-C, or any failure, stops the runs
    still going: their progress callbacks raise.
    """
    loaded = [_as_scenario(s) for s in scenarios]
    cancelled = threading.Event()
    # The share of its duration each run has simulated (1 when done), written by its thread.
    shares = [0.0] * len(loaded)

    def watcher(index: int) -> ProgressCallback:
        def report(sim_us: float, duration_us: float) -> None:
            if cancelled.is_set():
                raise KeyboardInterrupt
            shares[index] = min(1.0, sim_us / duration_us) if duration_us > 0 else 0.0
        return report

    reporter = Reporter(ambient_label("runs"), len(loaded), "runs", enabled=wanted(progress) and len(loaded) > 0,
                        amount_format=",.1f")
    executor = ThreadPoolExecutor(max_workers=workers or default_workers())
    try:
        with reporter:
            futures = [executor.submit(simulate, s, watcher(i)) for i, s in enumerate(loaded)]
            index = {future: i for i, future in enumerate(futures)}
            pending: set[Future[Results]] = set(futures)
            while pending:
                # A timeout keeps the main thread responsive to Ctrl-C.
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()  # re-raise the first failure at once
                    shares[index[future]] = 1.0
                reporter.update(sum(shares))
            return [future.result() for future in futures]
    except BaseException:
        cancelled.set()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def simulate(scenario: Scenario, progress: Optional[ProgressCallback] = None) -> Results:
    """Simulate one scenario in the calling thread, with no progress display: the one function
    every run of this process goes through (`run`, `run_many`, a sweep's or a calibration's
    point in its worker). `progress(sim_us, duration_us)` is called now and then; an exception
    it raises stops the run. While `rewriting` is active, the scenario is rewritten first."""
    if _rewrite is not None:
        scenario = _rewrite(scenario)
    started = utc_now()
    raw = _native.run(scenario.text, str(scenario.base_dir), progress)
    return Results.from_native(raw, provenance(raw["resolved"], started))


@contextmanager
def rewriting(transform: ScenarioTransform) -> Iterator[None]:
    """While the block runs, every scenario this process simulates (`simulate`: `run`, and
    `run_many` in all its threads) runs as `transform(scenario)`, e.g. with overrides applied;
    the previous behaviour is restored on leaving, also on an error. Nested, the inner
    transform applies first, then the outer. It is process-wide, not per thread, and does not
    reach runs in other processes (a sweep's or a calibration's workers)."""
    global _rewrite
    outer = _rewrite
    _rewrite = transform if outer is None else _then(transform, outer)
    try:
        yield
    finally:
        _rewrite = outer


def _then(first: ScenarioTransform, second: ScenarioTransform) -> ScenarioTransform:
    return lambda scenario: second(first(scenario))


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
