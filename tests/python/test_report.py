"""`retx report DIR`: one self-contained HTML page for a run or a sweep folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from retx.report import sweep_figures
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
        assert f'">{section}</h2>' in page, section
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
    title = "retx sweep of demo: transport.cc \u2208 {dcqcn, hpcc} \u00d7 transport.recovery \u2208 {gbn, bogus} \u00d7 2 seeds"
    assert f"<title>{title}</title>" in page and f"<h1>{title}</h1>" in page
    assert "<tr><th>runs</th><td class=\"text\">4 of 8 done</td></tr>" in page
    assert '">Failed runs</h2>' in page and "unknown variant" in page
    for section in ("Metrics by variant", "Slowdown CDF", "Slowdown by flow size", "Runs"):
        assert f'">{section}</h2>' in page, section
    assert images(page) == 7  # four metrics, the CDF, median and p99 by size
    assert "[sweep" in page  # the grid as it ran


def test_a_folder_without_results_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_cli("report", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"retx: error: {tmp_path}: neither a run folder (summary.json, flows.parquet) nor a sweep folder (runs.parquet)"]


# --- comparing variants ---------------------------------------------------------------------

CCS = ["transport.cc=dcqcn", "transport.cc=hpcc"]


@pytest.fixture(scope="module")
def cc_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A categorical parameter, two seeds each."""
    out = tmp_path_factory.mktemp("report") / "cc"
    done = run_cli("sweep", str(DEMO), "--set", "transport.cc=dcqcn,hpcc", "--seeds", "2", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    # Two seeds make intervals of little meaning: the command says so, once, in one line.
    warnings = [line for line in done.stderr.splitlines() if line.startswith("retx: warning:")]
    assert warnings == ["retx: warning: 2 seeds per point: the _ci95 half-widths (Student t, t = 12.7) are too wide "
                        "to mean much; run --seeds 5 or more"]
    assert run_cli("report", str(out)).returncode == 0
    return out


@pytest.fixture(scope="module")
def mtu_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A numeric parameter crossed with a categorical one, one seed."""
    out = tmp_path_factory.mktemp("report") / "mtu"
    done = run_cli("sweep", str(DEMO), "--set", "nic.mtu=1024,4096", "--set", "transport.cc=dcqcn,hpcc",
                   "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    return out


def legend(figure: Figure) -> list[str]:
    box = figure.axes[0].get_legend()
    return [] if box is None else [text.get_text() for text in box.get_texts()]


def bars(figure: Figure) -> list[BarContainer]:
    return [c for c in figure.axes[0].containers if isinstance(c, BarContainer)]


def drawn_lines(figure: Figure) -> list[Line2D]:
    return [line for line in figure.axes[0].lines if line.get_linestyle() != "None"]  # not error bar caps


def test_a_sweep_report_is_titled_by_its_base_scenario_and_grid(cc_sweep: Path) -> None:
    page = (cc_sweep / "report.html").read_text()
    title = "retx sweep of demo: transport.cc \u2208 {dcqcn, hpcc} \u00d7 2 seeds"
    assert f"<title>{title}</title>" in page and f"<h1>{title}</h1>" in page
    assert "<tr><th>transport.cc</th><td class=\"text\">dcqcn, hpcc</td></tr>" in page
    assert "<tr><th>seeds</th><td class=\"text\">1, 2</td></tr>" in page


def test_every_variant_is_in_the_cdf_legend_and_the_tables_and_no_legend_says_all(cc_sweep: Path) -> None:
    figures = sweep_figures(cc_sweep)
    cdf = figures["slowdown CDF"]
    assert legend(cdf) == [f"{cc} (n = 2)" for cc in CCS]  # one flow a run, two seeds, pooled
    # A step per variant (and, for so few flows, a marker per flow on it).
    assert len([line for line in cdf.axes[0].lines if line.get_drawstyle() == "steps-post"]) == 2
    page = (cc_sweep / "report.html").read_text()
    metrics = page.split('">Metrics by variant</h2>')[1].split("<h2")[0]
    by_size = page.split('">Slowdown by flow size</h2>')[1].split("<h2")[0]
    for cc in CCS:
        assert f'<td class="text">{cc}</td>' in metrics and f'<td class="text">{cc}</td>' in by_size
    assert "bootstrap" in by_size and "bootstrap" in metrics  # each says how its intervals are made
    # Two seeds: too few for an interval to mean much, and the page says so.
    assert 'class="warning"' in metrics and "2 seeds per variant is too few" in metrics
    for title, figure in figures.items():
        assert not any(text == "all" or text.startswith("all ") for text in legend(figure)), title


def test_the_metrics_are_means_over_seeds_with_bootstrap_intervals_inside_the_runs(cc_sweep: Path) -> None:
    figure = sweep_figures(cc_sweep)["mean FCT (us)"]
    summary = pl.read_parquet(cc_sweep / "summary.parquet")
    (drawn,) = bars(figure)
    assert [patch.get_height() for patch in drawn] == pytest.approx(summary["mean_fct_us_mean"].to_list())
    # Error bars span the bootstrap interval of the mean across seeds: from two seeds, their
    # range, never below the smallest run (a Student t interval from two seeds went negative).
    ends = [(s[0][1], s[1][1]) for s in drawn.errorbar.lines[2][0].get_segments()]
    flows = pl.read_parquet(cc_sweep / "flows.parquet")
    per_run = flows.group_by("transport.cc", "seed").agg(pl.col("fct_us").mean()).sort("transport.cc", "seed")
    for (low, high), (_cc, runs) in zip(ends, per_run.group_by("transport.cc", maintain_order=True)):
        assert low == pytest.approx(runs["fct_us"].min()) and high == pytest.approx(runs["fct_us"].max())
        assert low > 0
    retx = sweep_figures(cc_sweep)["retransmitted bytes per run"]
    flows = pl.read_parquet(cc_sweep / "flows.parquet")
    per_run = flows.group_by("transport.cc", "seed").agg(pl.col("retx_bytes").sum()).group_by(
        "transport.cc").agg(pl.col("retx_bytes").mean()).sort("transport.cc")
    assert [p.get_height() for p in bars(retx)[0]] == pytest.approx(per_run["retx_bytes"].to_list())


def test_a_categorical_parameter_is_drawn_as_bars(cc_sweep: Path) -> None:
    figure = sweep_figures(cc_sweep)["goodput (Gbps, mean over flows)"]
    assert len(bars(figure)) == 1 and len(bars(figure)[0]) == 2  # one bar per cc, no other parameter
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["dcqcn", "hpcc"]
    assert drawn_lines(figure) == []
    by_size = sweep_figures(cc_sweep)["by size: slowdown p99"]
    assert [c.get_label() for c in bars(by_size)] == CCS == legend(by_size)


def test_a_numeric_parameter_is_drawn_as_lines_one_per_other_combination(mtu_sweep: Path) -> None:
    figures = sweep_figures(mtu_sweep)
    figure = figures["mean FCT (us)"]
    assert bars(figure) == []
    lines = drawn_lines(figure)
    assert [c.get_label() for c in figure.axes[0].containers] == CCS == legend(figure)  # lines with error bars
    summary = pl.read_parquet(mtu_sweep / "summary.parquet")
    for line, cc in zip(lines, ["dcqcn", "hpcc"]):
        rows = summary.filter(pl.col("transport.cc") == cc).sort("nic.mtu")
        assert list(line.get_xdata()) == [1024, 4096]
        assert list(line.get_ydata()) == pytest.approx(rows["mean_fct_us_mean"].to_list())
    assert legend(figures["slowdown CDF"]) == [f"nic.mtu={m}, {cc} (n = 1)" for m in (1024, 4096) for cc in CCS]


def test_slowdown_by_size_bucket_pools_seeds_with_a_bootstrap_interval() -> None:
    from retx.report import BOOTSTRAP_MIN_FLOWS, _buckets

    # Variant a: 100 flows of 1 KB (slowdowns 1..100, over two seeds) and one of 10 KB, which a
    # bucket holds at its lower bound; variant b: 100 flows of 2 MB.
    sizes = [1_000] * 100 + [10_000] + [2_000_000] * 100
    slowdowns = [float(i) for i in range(1, 101)] + [7.0] + [2.0] * 100
    flows = pl.DataFrame({"size_bytes": sizes, "slowdown": slowdowns, "fct_us": slowdowns,
                          "completed": [True] * 201, "seed": [1, 2] * 100 + [1],
                          "variant": ["a"] * 101 + ["b"] * 100})
    table = _buckets(flows)
    assert table.select("variant", pl.col("bucket").cast(pl.String), "flows").rows() == [
        ("a", "<10KB", 100), ("a", "10KB-100KB", 1), ("b", ">=1MB", 100)]
    small = table.row(0, named=True)
    assert small["slowdown_median"] == 50.5 and small["slowdown_p99"] == pytest.approx(99.01)
    # The median of 1..100 varies by about 3.6 (1.25 sd / sqrt(n)): a 95 % interval of some +-7.
    assert 40 < small["slowdown_median_low"] < 50.5 < small["slowdown_median_high"] < 61
    assert small["slowdown_p99_low"] < 99.01 <= small["slowdown_p99_high"] <= 100
    assert table.row(1, named=True)["slowdown_median_low"] is None  # 1 flow < BOOTSTRAP_MIN_FLOWS
    assert BOOTSTRAP_MIN_FLOWS > 1
    constant = table.row(2, named=True)
    assert constant["slowdown_p99_low"] == constant["slowdown_p99_high"] == 2.0
    assert _buckets(flows).equals(table)  # a fixed seed: the same report every time
