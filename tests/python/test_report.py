"""`retx report DIR`: one self-contained HTML page for a run or a sweep folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import EXAMPLES, run_cli

DEMO = EXAMPLES / "demo.toml"


def images(page: str) -> int:
    return len(re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]+"', page))


def test_a_run_report_holds_provenance_tables_scenario_and_every_plot(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli("run", str(DEMO), "--out", str(out), "--quiet").returncode == 0
    done = run_cli("report", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out / 'report.html'}"
    page = (out / "report.html").read_text()
    summary = json.loads((out / "summary.json").read_text())
    # Provenance as the run recorded it, the FCT table, the flows and the resolved scenario.
    assert summary["provenance"]["scenario_hash"] in page
    assert summary["provenance"]["started_utc"] in page
    for section in ("Provenance", "Plots", "FCT statistics", "Summary", "Flows", "Scenario (resolved)"):
        assert f"<h2>{section}</h2>" in page, section
    assert "recovery = &quot;gbn&quot;" in page
    # Every PNG of the folder is embedded, and nothing is fetched from elsewhere.
    assert images(page) == len(list(out.glob("*.png"))) >= 3
    assert "http://" not in page and "https://" not in page and "<script" not in page


def test_a_sweep_report_shows_the_summary_the_figure_and_the_failures(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    done = run_cli("sweep", str(DEMO), "--set", "transport.cc=dcqcn,hpcc",
                   "--set", "transport.recovery=gbn,bogus", "--seeds", "2", "--out", str(out), "--quiet")
    assert done.returncode == 1  # the bogus points failed; the others ran
    assert run_cli("report", str(out)).returncode == 0
    page = (out / "report.html").read_text()
    assert "4 of 8 runs done over 2 parameter(s): transport.cc, transport.recovery." in page
    assert "<h2>Failed runs</h2>" in page and "unknown variant" in page
    assert "<h2>Summary: mean and 95 % confidence interval across seeds</h2>" in page
    assert images(page) == 1  # mean FCT by point, with the intervals
    assert "[sweep" in page  # the grid as it ran


def test_a_folder_without_results_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_cli("report", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"retx: error: {tmp_path}: neither a run folder (summary.json, flows.parquet) nor a sweep folder (runs.parquet)"]
