"""Help text a user reads, and how results show in a REPL or notebook."""

from __future__ import annotations

import re
from pathlib import Path

import retx
from conftest import REPO, run_cli
from retx.reproduce import CATALOGUE, REPRODUCTIONS, wall_time


def test_run_help_shows_defaults_and_no_type_noise() -> None:
    result = run_cli("run", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Output folder [default: results/<name>]." in text
    assert "<bool>" not in result.stdout
    assert "--force" in text


# "~12 s full, ~1 s --quick (2 cores)", "~1.5 min full, ..." as `retx reproduce --help` prints them.
WALL_TIMES = re.compile(r"^~(\d+(?:\.\d)?) (s|min) full, ~(\d+) s --quick \(2 cores\)$")


def announced(listing: str) -> dict[str, tuple[str, float, float]]:
    """Every (name, description) line of a reproduction listing and the wall times, in seconds,
    on the line under it."""
    lines = [line.strip() for line in listing.splitlines()]
    found = {}
    for name in REPRODUCTIONS:
        (at,) = [i for i, line in enumerate(lines) if line.split(" ", 1)[0] == name]
        times = WALL_TIMES.match(lines[at + 1])
        assert times, lines[at + 1]
        full, unit, quick = times.groups()
        found[name] = (lines[at].split(None, 1)[1], float(full) * (60 if unit == "min" else 1), float(quick))
    return found


def test_reproduce_help_lists_every_reproduction_with_its_wall_times() -> None:
    """Catches a reproduction missing from the help, or times that are not the registry's."""
    result = run_cli("reproduce", "--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "<bool>" not in text
    assert "[default: results/<name>]" in " ".join(text.split())
    for name, (about, full, quick) in announced(text).items():
        entry = CATALOGUE[name]
        assert (about, full, quick) == (entry.about, rounded(entry.full_seconds), rounded(entry.quick_seconds)), name


def rounded(seconds: float) -> float:
    """A wall time as the help prints it, in seconds: whole seconds (at least 1) below a
    minute, half minutes above."""
    return float(max(1, round(seconds))) if seconds < 60 else round(seconds / 30) * 30.0


def test_reproductions_doc_table_is_the_help_data() -> None:
    """Catches docs/REPRODUCTIONS.md's wall time table drifting from what the help lists."""
    doc = (REPO / "docs" / "REPRODUCTIONS.md").read_text()
    section = doc.split("\n## Wall times\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in section.splitlines()
            if line.startswith("| ") and "---" not in line]
    got = {name: (about, f"{full} full, {quick} --quick (2 cores)") for name, about, full, quick, _ in rows[1:]}
    assert got == {name: (entry.about, wall_time(name)) for name, entry in CATALOGUE.items()}


def test_reproduce_without_a_name_prints_the_same_list() -> None:
    result = run_cli("reproduce")
    assert result.returncode == 0, result.stderr
    assert announced(result.stdout) == announced(run_cli("reproduce", "--help").stdout)


def test_results_repr_is_short(small_scenario_file: Path) -> None:
    results = retx.run(small_scenario_file, progress=False)
    fct = results.flows["fct_us"][0]
    lines = repr(results).splitlines()
    assert lines == ["Results('small')", "  flows finished: 1/1", f"  mean FCT: {fct:,.1f} us"]
    html = results._repr_html_()
    assert "small" in html and "1/1" in html and html.count("<br>") == 2
