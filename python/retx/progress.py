"""Progress of long work on stderr, drawn with rich: one run's simulated time, a batch of runs,
a sweep's points, a calibration's trials.

On a terminal (or in a Jupyter notebook) a live bar shows how far the work is, the wall time
so far and an ETA; elsewhere (CI logs, pipes) a plain line says the same every
PLAIN_REPORT_EVERY_SECONDS, and work done sooner prints nothing. `--quiet` (progress=False)
shows nothing at all.

The ETA is the wall time so far scaled by what is left: elapsed x (total - done) / done, done
counted from when the bar started (a resumed sweep's earlier points do not make it look fast).
For one run, done is simulated time out of the scenario's `duration`: a run that stops when its
flows finish (`stop_when_done`) ends sooner than the ETA says. For a batch of runs in threads,
each run still going counts with its share of simulated time, so the ETA moves between runs.

Code that runs simulations deep down (a reproduction's grid) follows the ambient setting:
`with quiet():` silences every bar inside it, `with labelled("melo-fig5a"):` names them.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

# Without a terminal, long work still reports now and then (e.g. in CI logs).
PLAIN_REPORT_EVERY_SECONDS = 5.0

_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar("retx_progress_enabled", default=True)
_label: contextvars.ContextVar[str] = contextvars.ContextVar("retx_progress_label", default="")


def shows_live_progress(console: Console) -> bool:
    """Whether a live bar can be drawn: on a terminal, or in a Jupyter notebook (where rich
    draws it as a widget; that needs ipywidgets, the `notebook` extra). Elsewhere (CI logs,
    pipes) long work prints a line now and then instead."""
    return console.is_terminal or console.is_jupyter


def wanted(progress: Optional[bool]) -> bool:
    """Whether to show progress: as asked, or (None) as the ambient setting says."""
    return _enabled.get() if progress is None else progress


@contextmanager
def quiet(silent: bool = True) -> Iterator[None]:
    """No progress from anything run inside (when `silent`)."""
    token = _enabled.set(not silent and _enabled.get())
    try:
        yield
    finally:
        _enabled.reset(token)


@contextmanager
def labelled(label: str) -> Iterator[None]:
    """Bars started inside are named `label` (a reproduction's name for its runs)."""
    token = _label.set(label)
    try:
        yield
    finally:
        _label.reset(token)


def ambient_label(default: str) -> str:
    return _label.get() or default


def clock(seconds: Optional[float]) -> str:
    """'0:01:05'; '-:--:--' when unknown."""
    if seconds is None:
        return "-:--:--"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class _EtaColumn(ProgressColumn):
    """'ETA 0:00:12' from the reporter's own estimate (task.fields["eta"])."""

    max_refresh = 0.5

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text("done", style="progress.remaining")
        return Text(f"ETA {clock(task.fields.get('eta'))}", style="progress.remaining")


class Reporter:
    """Progress of one piece of work: `done` of `total` `unit`s (e.g. 3 of 10 points, or
    1,234 of 5,000 us simulated). Use as a context manager; `update` or `advance` it.

    `lazy` shows the bar only from the first update (a run's first report comes ~0.2 s in,
    so a quick run shows nothing). `note` is a field shown after the count (a calibration's
    best trial so far)."""

    def __init__(self, label: str, total: float, unit: str, enabled: bool = True, console: Optional[Console] = None,
                 completed: float = 0.0, note: str = "", lazy: bool = False, amount_format: str = ",.0f") -> None:
        self.label = label
        self.unit = unit
        self.total = float(total)
        self.console = console or Console(stderr=True)
        self.live = enabled and shows_live_progress(self.console)
        self.plain = enabled and not self.live
        self.amount_format = amount_format
        self.started = time.monotonic()
        self.first_done = float(completed)
        self.done = float(completed)
        self.note = note
        self.lazy = lazy
        self.last_plain_report = self.started
        self.printed = False
        self.bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TaskProgressColumn(),
            TextColumn(f"{{task.completed:{amount_format}}}/{{task.total:{amount_format}}} {unit}"),
            TextColumn("{task.fields[note]}"), TimeElapsedColumn(), _EtaColumn(),
            console=self.console, disable=not self.live, transient=False, auto_refresh=True)
        self.task = self.bar.add_task(label, total=self.total, completed=int(self.done), note=note, eta=None)
        self.bar.update(self.task, completed=self.done)
        self.running = False
        if self.live and not lazy:
            self._start()

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        if exc_type is None:
            self.finish()
        self.close()

    def finish(self) -> None:
        """The work is done: the bar ends whole, and plain lines, if any were printed, end with
        one saying so."""
        if self.running:
            self.bar.update(self.task, completed=self.done, total=self.total, eta=0.0)
        if self.plain and self.printed:
            fmt = self.amount_format
            # soft_wrap: one line however long, never cut at the console's width.
            self.console.print(f"{self.label}: done, {self.done:{fmt}} of {self.total:{fmt}} {self.unit} in "
                               f"{clock(time.monotonic() - self.started)}", highlight=False, markup=False,
                               soft_wrap=True)

    def close(self) -> None:
        if self.running:
            self.bar.stop()
            self.running = False

    def _start(self) -> None:
        self.bar.start()
        self.running = True

    def eta(self) -> Optional[float]:
        """Seconds left at the pace so far; None before anything was done."""
        progressed = self.done - self.first_done
        if progressed <= 0 or self.total <= 0:
            return None
        left = max(0.0, self.total - self.done)
        return (time.monotonic() - self.started) * left / progressed

    def update(self, completed: float, total: Optional[float] = None, note: Optional[str] = None) -> None:
        if total is not None and float(total) != self.total:
            self.total = float(total)
        self.done = float(completed)
        if note is not None:
            self.note = note
        self.bar.update(self.task, completed=self.done, total=self.total, note=self.note, eta=self.eta())
        if self.live and not self.running:
            self._start()
        if self.plain and time.monotonic() - self.last_plain_report >= PLAIN_REPORT_EVERY_SECONDS:
            self.last_plain_report = time.monotonic()
            self.printed = True
            self.console.print(self.line(), highlight=False, markup=False, soft_wrap=True)

    def advance(self, amount: float = 1.0, note: Optional[str] = None) -> None:
        self.update(self.done + amount, note=note)

    def line(self) -> str:
        """The plain report: 'sweep: 3 of 10 points (30 %), 0:00:12 elapsed, ETA 0:00:28'."""
        share = f" ({100.0 * self.done / self.total:.0f} %)" if self.total > 0 else ""
        note = f"; {self.note}" if self.note else ""
        fmt = self.amount_format
        return (f"{self.label}: {self.done:{fmt}} of {self.total:{fmt}} {self.unit}{share}{note}, "
                f"{clock(time.monotonic() - self.started)} elapsed, ETA {clock(self.eta())}")


def simulated_time(label: str, enabled: bool = True, console: Optional[Console] = None) -> Any:
    """A progress callback for one run (`_native.run`'s `progress(sim_us, duration_us)`):
    a Reporter in us of simulated time, shown from the simulator's first report on."""
    return _SimTime(Reporter(label, 1.0, "us simulated", enabled=enabled, console=console, lazy=True))


class _SimTime:
    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def __enter__(self) -> _SimTime:
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        if exc_type is None and self.reporter.done > 0:
            # The run is over where it stopped: a run that stopped when its flows finished,
            # before its duration, was that long.
            self.reporter.total = self.reporter.done
        self.reporter.__exit__(exc_type)

    def __call__(self, sim_us: float, duration_us: float) -> None:
        self.reporter.update(sim_us, total=duration_us)
