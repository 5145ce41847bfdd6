"""Progress (retx.progress): a live bar with wall time and an ETA on a terminal or in a Jupyter
notebook, a plain line every few seconds elsewhere, nothing with --quiet; for one run, a batch
of runs, a sweep, a reproduction (and a calibration, which shares the Reporter)."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import retx
from conftest import EXAMPLES, REPO, SMALL_SCENARIO, run_cli
from retx import progress
from retx.progress import Reporter, clock, quiet, wanted
from retx.runner import shows_live_progress


def test_a_pipe_gets_plain_lines_not_a_live_bar():
    assert not shows_live_progress(Console(file=io.StringIO()))


def test_a_terminal_gets_a_live_bar():
    assert shows_live_progress(Console(file=io.StringIO(), force_terminal=True))


def test_a_jupyter_notebook_gets_a_live_bar():
    # In Jupyter, output is not a terminal; rich draws the bar as a widget instead.
    notebook = Console(file=io.StringIO(), force_jupyter=True)
    assert not notebook.is_terminal
    assert shows_live_progress(notebook)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock_ = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock_)
    return clock_


def test_the_eta_scales_the_time_so_far_by_what_is_left(fake_clock: Clock) -> None:
    out = io.StringIO()
    reporter = Reporter("sweep", 100, "points", console=Console(file=out))
    assert reporter.eta() is None  # nothing done yet: no estimate
    fake_clock.now += 10.0
    reporter.update(25)
    assert reporter.eta() == pytest.approx(30.0)
    # Work done before the bar started (a resumed sweep) does not count as speed.
    resumed = Reporter("sweep", 100, "points", console=Console(file=out), completed=50)
    fake_clock.now += 20.0
    resumed.update(60)
    assert resumed.eta() == pytest.approx(20.0 * 40 / 10)
    assert clock(3725) == "1:02:05" and clock(None) == "-:--:--"


def test_without_a_terminal_a_line_every_few_seconds_with_elapsed_and_eta(fake_clock: Clock) -> None:
    out = io.StringIO()
    with Reporter("sweep", 10, "points", console=Console(file=out)) as reporter:
        fake_clock.now += 1.0
        reporter.advance()  # sooner than PLAIN_REPORT_EVERY_SECONDS: nothing yet
        assert out.getvalue() == ""
        fake_clock.now += progress.PLAIN_REPORT_EVERY_SECONDS
        reporter.advance(note="best 1.5")
        assert out.getvalue() == "sweep: 2 of 10 points (20 %); best 1.5, 0:00:06 elapsed, ETA 0:00:24\n"
        fake_clock.now += 1.0
        reporter.advance(8)  # sooner than PLAIN_REPORT_EVERY_SECONDS after the last line
    # Lines were printed, so the end is too.
    assert out.getvalue().splitlines()[1:] == ["sweep: done, 10 of 10 points in 0:00:07"]


def test_on_a_terminal_the_bar_shows_the_amount_wall_time_and_eta(fake_clock: Clock) -> None:
    out = io.StringIO()
    with Reporter("demo", 1.0, "us simulated", console=Console(file=out, force_terminal=True, width=160),
                  lazy=True) as reporter:
        assert out.getvalue() == ""  # lazy: nothing before the first report
        fake_clock.now += 2.0
        reporter.update(2500.0, total=10000.0)
    shown = out.getvalue()
    assert "demo" in shown and "2,500/10,000 us simulated" in shown and "ETA 0:00:06" in shown
    assert re.search(r"\d:\d\d:\d\d", shown)  # the elapsed wall time


def test_quiet_shows_nothing_and_silences_what_runs_inside(fake_clock: Clock) -> None:
    out = io.StringIO()
    with Reporter("sweep", 10, "points", enabled=False, console=Console(file=out, force_terminal=True)) as reporter:
        fake_clock.now += 100.0
        reporter.advance()
    assert out.getvalue() == ""
    assert wanted(None) and not wanted(False)
    with quiet():
        assert not wanted(None) and wanted(True)
    assert wanted(None)


def test_runs_report_through_the_plain_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    monkeypatch.setattr(progress, "PLAIN_REPORT_EVERY_SECONDS", 0.0)
    scenario = retx.Scenario.from_str(SMALL_SCENARIO)
    retx.run(scenario)
    err = capsys.readouterr().err
    # The flow finishes before the 2 ms duration and the run stops there: that is its length.
    line, last = err.splitlines()
    assert re.fullmatch(r"small: \d+ of 2,000 us simulated \(\d+ %\), \d:\d\d:\d\d elapsed, ETA \d:\d\d:\d\d", line), err
    assert re.fullmatch(r"small: done, (\d+) of \1 us simulated in \d:\d\d:\d\d", last), err
    retx.run_many([scenario, scenario.with_overrides({"seed": 8})], workers=2)
    err = capsys.readouterr().err
    assert re.search(r"runs: 2\.0 of 2\.0 runs \(100 %\)", err) and "runs: done, 2.0 of 2.0 runs" in err, err
    retx.run(scenario, progress=False)
    with quiet():
        retx.run_many([scenario])
    assert capsys.readouterr().err == ""


def test_a_sweep_reports_points(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                tmp_path: Path) -> None:
    monkeypatch.setattr(progress, "PLAIN_REPORT_EVERY_SECONDS", 0.0)
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    retx.sweep(tmp_path / "s.toml", seeds=2, out=tmp_path / "sweep", workers=1)
    err = capsys.readouterr().err
    assert "sweep: 2 of 2 points (100 %)" in err and "sweep: done, 2 of 2 points in" in err


def test_reproduce_says_what_runs_and_is_quiet_with_quiet(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from retx import reproduce

    monkeypatch.setattr(progress, "PLAIN_REPORT_EVERY_SECONDS", 0.0)
    reproduce.run("melo-fig6a", tmp_path / "a", quick=True)
    shown = capsys.readouterr()
    assert "melo-fig6a (--quick): MELO Fig. 6a" in shown.err and "typically ~1 s full" in shown.err
    assert "melo-fig6a: done, " in shown.err  # its runs' progress, named after it
    assert re.search(r"melo-fig6a: done in \d+\.\d s", shown.err)
    hushed = run_cli("reproduce", "melo-fig6a", "--quick", "--quiet", "--out", str(tmp_path / "b"))
    assert hushed.returncode == 0 and hushed.stderr == "", hushed.stderr
    assert hushed.stdout.splitlines()[0] == shown.out.splitlines()[0]  # the table is still printed


def test_a_run_on_a_terminal_draws_the_bar(tmp_path: Path) -> None:
    # A real pseudo-terminal: rich sees a terminal and draws the bar (at the latest at the
    # simulator's last report, when the run ends).
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm"}
    command = [sys.executable, "-m", "retx", "run", str(EXAMPLES / "demo.toml"), "--out", str(tmp_path / "demo")]
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, cwd=REPO, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    shown = b"".join(chunks).decode(errors="replace")
    # The demo's flow ends near 2.2 ms of its 10 ms: the bar ends there, whole.
    assert re.search(r"100%.*2,1\d\d/2,1\d\d us simulated.*done", shown), shown[-2000:]
    assert "0/1 us" not in shown  # never drawn before the simulator's first report
    assert re.search(r"\d:\d\d:\d\d", shown)


def test_a_calibration_reports_trials_with_the_best_so_far_and_an_eta(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from test_calibrate import ONE_FLOW, spec_dict

    monkeypatch.setattr(progress, "PLAIN_REPORT_EVERY_SECONDS", 0.0)
    (tmp_path / "base.toml").write_text(ONE_FLOW)
    retx.calibrate(spec_dict(trials=2, batch=1), out=tmp_path / "out", base_dir=tmp_path)
    lines = capsys.readouterr().err.splitlines()
    assert re.fullmatch(r"calibrate: 1 of 2 trials \(50 %\); best: trial \d+, .+, \d:\d\d:\d\d elapsed, ETA \d:\d\d:\d\d",
                        lines[0]), lines
    assert re.fullmatch(r"calibrate: done, 2 of 2 trials in \d:\d\d:\d\d", lines[-1]), lines
    retx.calibrate(spec_dict(trials=3, batch=1), out=tmp_path / "out", base_dir=tmp_path, progress=False)
    assert capsys.readouterr().err == ""
