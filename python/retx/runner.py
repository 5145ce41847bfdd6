"""Run scenarios: one at a time with a progress bar, or many in parallel threads. Every run of
this process goes through `simulate`, and `rewriting` changes the scenarios it runs for a while
(a calibration applying its parameters to a reproduction's runs)."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn

from retx import _native
from retx.provenance import provenance, utc_now
from retx.results import Results
from retx.scenario import Scenario

ScenarioLike = Union[Scenario, str, Path]
ProgressCallback = Callable[[float, float], None]
ScenarioTransform = Callable[[Scenario], Scenario]

# Without a terminal, a long run still reports now and then (e.g. in CI logs).
PLAIN_REPORT_EVERY_SECONDS = 10.0

# What `simulate` does to each scenario first, while `rewriting` is active (None: nothing).
_rewrite: Optional[ScenarioTransform] = None


def run(scenario: ScenarioLike, progress: bool = True) -> Results:
    """Simulate one scenario. The progress bar (stderr) appears only for runs longer than
    the first progress report (~0.2 s), so quick runs stay silent."""
    scenario = _as_scenario(scenario)
    if not progress:
        return simulate(scenario, None)
    with _SimTimeProgress(scenario.name) as reporter:
        return simulate(scenario, reporter)


def run_many(scenarios: Iterable[ScenarioLike], workers: Optional[int] = None,
             progress: bool = True) -> list[Results]:
    """Simulate scenarios in parallel (the Rust core releases the GIL); results keep input order.

    Ctrl-C, or any failure, stops the runs still going: their progress callbacks raise.
    """
    loaded = [_as_scenario(s) for s in scenarios]
    cancelled = threading.Event()

    def abort_if_cancelled(_sim_us: float, _duration_us: float) -> None:
        if cancelled.is_set():
            raise KeyboardInterrupt

    console = Console(stderr=True)
    bar = _progress_bar(console, enabled=progress and shows_live_progress(console))
    executor = ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1)
    try:
        with bar:
            task = bar.add_task("runs", total=len(loaded))
            futures = [executor.submit(simulate, s, abort_if_cancelled) for s in loaded]
            pending: set[Future[Results]] = set(futures)
            while pending:
                # A timeout keeps the main thread responsive to Ctrl-C.
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()  # re-raise the first failure at once
                    bar.advance(task)
            return [future.result() for future in futures]
    except BaseException:
        cancelled.set()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def shows_live_progress(console: Console) -> bool:
    """Whether a live bar can be drawn: on a terminal, or in a Jupyter notebook (where rich
    draws it as a widget; that needs ipywidgets, the `notebook` extra). Elsewhere (CI logs,
    pipes) long runs print a line now and then instead."""
    return console.is_terminal or console.is_jupyter


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


def _progress_bar(console: Console, enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.completed:.0f}/{task.total:.0f}"),
        TimeElapsedColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )


class _SimTimeProgress:
    """Progress callback for one run: a live bar on a terminal, a line every few seconds
    otherwise. Nothing is shown until the simulator's first report."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.console = Console(stderr=True)
        self.bar: Optional[Progress] = None
        self.task: Optional[TaskID] = None
        self.last_plain_report = time.monotonic()

    def __enter__(self) -> _SimTimeProgress:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, sim_us: float, duration_us: float) -> None:
        if shows_live_progress(self.console):
            self._update_bar(sim_us, duration_us)
        elif time.monotonic() - self.last_plain_report >= PLAIN_REPORT_EVERY_SECONDS:
            self.last_plain_report = time.monotonic()
            self.console.print(f"{self.name}: simulated {sim_us:,.0f} of {duration_us:,.0f} us",
                               highlight=False)

    def _update_bar(self, sim_us: float, duration_us: float) -> None:
        if self.bar is None:
            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.completed:,.0f}/{task.total:,.0f} us simulated"),
                TimeElapsedColumn(),
                console=self.console,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.name, total=duration_us)
        assert self.task is not None  # added with the bar
        self.bar.update(self.task, completed=sim_us, total=duration_us)
