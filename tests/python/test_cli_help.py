"""Help text a user reads, and how results show in a REPL or notebook."""

from __future__ import annotations

from pathlib import Path

import retx
from conftest import run_cli


def test_run_help_shows_defaults_and_no_type_noise() -> None:
    result = run_cli("run", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Output folder [default: results/<name>]." in text
    assert "<bool>" not in result.stdout
    assert "--force" in text


def test_reproduce_help_makes_no_timing_promise() -> None:
    text = run_cli("reproduce", "--help").stdout
    assert "minute" not in text and "<bool>" not in text
    assert "[default: results/<name>]" in " ".join(text.split())


def test_results_repr_is_short(small_scenario_file: Path) -> None:
    results = retx.run(small_scenario_file, progress=False)
    fct = results.flows["fct_us"][0]
    lines = repr(results).splitlines()
    assert lines == ["Results('small')", "  flows finished: 1/1", f"  mean FCT: {fct:,.1f} us"]
    html = results._repr_html_()
    assert "small" in html and "1/1" in html and html.count("<br>") == 2
