"""Collective workloads on the Python side (issue 31, item 3): collectives.parquet and
collective_steps.parquet (only for a collective run), summary.json's "collectives", the line
per group `retx run` prints, the timeline and CCT plots, and the reports' Collectives sections."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from matplotlib.collections import LineCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import retx
from conftest import SMALL_SCENARIO, run_cli
from retx.output import RUN_OUTPUTS
from retx.plots import COLLECTIVE_TIMELINE_PLOT, plot_collective_cct, plot_collective_timeline
from retx.report import COLLECTIVE_CCT, sweep_figures, write_report
from retx.results import (COLLECTIVE_STEPS_FILE, COLLECTIVES_FILE, Results, _json_safe, collective_flows, describe,
                          table_schema)
from retx.table import format_value

# Two groups of 4 ranks on 8 hosts, a ring all-reduce twice: 6 steps of 4 flows per iteration.
GROUPS, RANKS, ITERATIONS, STEPS = 2, 4, 2, 2 * (4 - 1)
COLLECTIVE = f"""\
name = "coll"
seed = 1
duration = "50ms"

[topology]
kind = "single-switch"
hosts = 8
host_link = "100Gbps"
link_delay = "1us"

[transport]
recovery = "irn"
cc = "none"

[workload]
kind = "collective"

[workload.collective]
op = "all-reduce"
ranks = {RANKS}
groups = {GROUPS}
size = "512KB"
iterations = {ITERATIONS}
gap = "10us"
"""
NEW_FILES = (COLLECTIVES_FILE, COLLECTIVE_STEPS_FILE, COLLECTIVE_TIMELINE_PLOT)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scenario run by `retx run` (as a user would), its folder."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "coll.toml").write_text(COLLECTIVE)
    done = run_cli("run", "coll.toml", "--out", "out", cwd=folder)
    assert done.returncode == 0, done.stderr
    (folder / "stdout.txt").write_text(done.stdout)
    return folder / "out"


@pytest.fixture(scope="module")
def results() -> Results:
    return retx.run(retx.Scenario.from_str(COLLECTIVE), progress=False)


def group_stats(collectives: pl.DataFrame) -> list[dict[str, object]]:
    """summary.json's "collectives" recomputed here from the table, group by group."""
    stats = []
    for g in sorted(set(collectives["group"])):
        rows = collectives.filter(pl.col("group") == g).sort("iteration")
        cct = rows["cct_us"].to_list()
        stats.append({
            "group": g, "op": rows["op"][0], "algorithm": rows["algorithm"][0], "ranks": rows["ranks"][0],
            "size_bytes": rows["size_bytes"][0], "iterations": rows.height, "iterations_finished": rows.height,
            "cct_us_mean": sum(cct) / len(cct), "cct_us_max": max(cct), "ideal_cct_us": rows["ideal_cct_us"][0],
            "slowdown_mean": sum(rows["slowdown"]) / rows.height,
            "busbw_gbps_mean": sum(rows["busbw_gbps"]) / rows.height,
        })
    return stats


def assert_same_stats(got: list[dict[str, object]], expected: list[dict[str, object]]) -> None:
    assert [sorted(g) for g in got] == [sorted(e) for e in expected]
    for g, e in zip(got, expected):
        for key, value in e.items():
            assert g[key] == (pytest.approx(value) if isinstance(value, float) else value), key


def check_tables(collectives: pl.DataFrame, steps: pl.DataFrame, flows: pl.DataFrame) -> None:
    assert collectives.schema == pl.Schema(table_schema("collectives"))
    assert steps.schema == pl.Schema(table_schema("collective_steps"))
    assert collectives.height == GROUPS * ITERATIONS
    assert steps.height == GROUPS * ITERATIONS * STEPS
    assert sorted(collectives.select("group", "iteration").rows()) == [
        (g, i) for g in range(GROUPS) for i in range(ITERATIONS)]
    assert set(collectives["steps"]) == {STEPS} and set(collectives["ranks"]) == {RANKS}
    # Every iteration finished, no faster than its ideal (2 % for rounding), and NCCL's busbw.
    assert collectives["cct_us"].is_nan().sum() == 0
    for row in collectives.iter_rows(named=True):
        assert row["cct_us"] >= row["ideal_cct_us"] * 0.98
        assert row["slowdown"] == pytest.approx(row["cct_us"] / row["ideal_cct_us"])
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * (RANKS - 1) / RANKS)
    # The steps hold every flow, and a step ends when its slowest flow was received.
    assert steps["flows"].sum() == flows.height == GROUPS * ITERATIONS * STEPS * RANKS
    received = dict(zip(flows["flow_id"], flows["received_us"]))
    for row in steps.iter_rows(named=True):
        assert received[row["slowest_flow"]] == pytest.approx(row["end_us"])


def test_retx_run_writes_the_collective_tables_summary_and_timeline(run_dir: Path) -> None:
    collectives = pl.read_parquet(run_dir / COLLECTIVES_FILE)
    steps = pl.read_parquet(run_dir / COLLECTIVE_STEPS_FILE)
    flows = pl.read_parquet(run_dir / "flows.parquet")
    assert "received_us" in flows.columns
    check_tables(collectives, steps, flows)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert_same_stats(summary["collectives"], group_stats(collectives))
    assert (run_dir / COLLECTIVE_TIMELINE_PLOT).stat().st_size > 0
    # Nothing else is new: every other file is one of the run's declared outputs.
    assert {p.name for p in run_dir.iterdir()} - set(RUN_OUTPUTS) <= set(NEW_FILES)
    # A line per group on stdout, with the numbers of summary.json.
    lines = [line for line in (run_dir.parent / "stdout.txt").read_text().splitlines()
             if line.startswith("collective ")]
    assert len(lines) == GROUPS
    first = summary["collectives"][0]
    assert f"mean CCT {format_value(first['cct_us_mean'])} us" in lines[0]
    assert "mean busbw" in lines[0] and "mean slowdown" in lines[0]
    # Means over the iterations are called means: no bare "CCT" that reads as one iteration's.
    assert ": CCT" not in lines[0]


def test_the_api_gives_the_same_tables_and_summary_json_is_results_summary(results: Results, tmp_path: Path) -> None:
    check_tables(results.collectives, results.collective_steps, results.flows)
    assert_same_stats(results.summary["collectives"], group_stats(results.collectives))
    results.save(tmp_path / "out")
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk == _json_safe(results.summary)
    loaded = Results.load(tmp_path / "out")
    assert loaded.collectives.equals(results.collectives)
    assert loaded.collective_steps.equals(results.collective_steps)
    assert _json_safe(loaded.summary) == on_disk


def test_a_run_without_a_collective_writes_neither_table(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    assert run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=tmp_path).returncode == 0
    for name in NEW_FILES:
        assert not (tmp_path / "out" / name).exists(), name
    assert "collectives" not in json.loads((tmp_path / "out" / "summary.json").read_text())
    loaded = Results.load(tmp_path / "out")  # missing files: empty tables of the schema's types
    assert loaded.collectives.height == 0 and loaded.collectives.schema == pl.Schema(table_schema("collectives"))
    assert loaded.collective_steps.height == 0
    assert describe("collectives")["column"].to_list() == list(table_schema("collectives"))
    assert describe("collective_steps")["column"].to_list() == list(table_schema("collective_steps"))


def test_the_collective_files_are_reserved_output_names() -> None:
    assert set(NEW_FILES) <= set(RUN_OUTPUTS)


def test_collective_flows_tags_each_flow_with_its_step(results: Results) -> None:
    tagged = collective_flows(results.flows, results.collective_steps)
    counts = tagged.group_by("group", "iteration", "step").len().sort("group", "iteration", "step")
    assert counts["len"].to_list() == results.collective_steps.sort("group", "iteration", "step")["flows"].to_list()
    # Ring: in each step every rank of the group sends once, to the next rank.
    for (_g, _i, _k), rows in tagged.group_by("group", "iteration", "step"):
        assert rows["src"].n_unique() == RANKS


def test_collective_flows_takes_a_results_alone_as_documented(results: Results) -> None:
    # `collective_flows(r)`, as a user first writes it, is the same as passing its two tables.
    assert collective_flows(results).equals(collective_flows(results.flows, results.collective_steps))
    with pytest.raises(TypeError, match="give the steps table too"):
        collective_flows(results.flows)
    with pytest.raises(TypeError, match="takes no second table"):
        collective_flows(results, results.collective_steps)


def bars(figure: Figure) -> BarContainer:
    containers = [c for c in figure.axes[0].containers if isinstance(c, BarContainer)]
    assert len(containers) == 1
    return containers[0]


def test_the_timeline_draws_a_bar_per_flow_coloured_by_step(results: Results) -> None:
    figure = plot_collective_timeline(results.flows, results.collective_steps)
    drawn = bars(figure)
    assert len(drawn) == STEPS * RANKS  # group 0, its first iteration
    assert len(figure.axes[0].patches) == STEPS * RANKS
    tagged = collective_flows(results.flows, results.collective_steps).filter(pl.col("group") == 0)
    first = tagged.filter(pl.col("iteration") == 0)
    for bar, start, received in zip(drawn, first["start_us"], first["received_us"]):
        assert bar.get_x() == pytest.approx(start) and bar.get_width() == pytest.approx(received - start)
    colours: dict[int, set[tuple[float, ...]]] = {}
    for bar, step in zip(drawn, first["step"]):
        colours.setdefault(step, set()).add(tuple(bar.get_facecolor()))
    assert all(len(c) == 1 for c in colours.values()) and len(set().union(*colours.values())) == STEPS
    assert [t.get_text() for t in figure.axes[0].get_yticklabels()] == ["h0", "h1", "h2", "h3"]
    # Both iterations, capped: the earliest flows first, and the title says so.
    capped = plot_collective_timeline(results.flows, results.collective_steps, iterations=2, max_flows=30)
    assert len(bars(capped)) == 30
    assert "first 30 of 48 flows" in capped.axes[0].get_title()


def test_the_cct_plot_draws_a_bar_per_variant_with_its_ideal(results: Results) -> None:
    slower = results.collectives.with_columns(pl.col("cct_us") * 2)
    figure = plot_collective_cct({"fast": results.collectives, "slow": slower})
    mean = float(results.collectives["cct_us"].sum()) / results.collectives.height
    assert [bar.get_height() for bar in bars(figure)] == pytest.approx([mean, 2 * mean])
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["fast", "slow"]
    ideal = [c for c in figure.axes[0].collections if isinstance(c, LineCollection) and c.get_label() == "ideal"]
    assert len(ideal) == 1 and len(ideal[0].get_segments()) == 2
    # One table alone: a bar per group.
    assert len(bars(plot_collective_cct(results.collectives))) == GROUPS


def test_the_run_report_has_a_collectives_section(run_dir: Path) -> None:
    page = write_report(run_dir).read_text()
    section = page.split('">Collectives</h2>')[1].split("<h2")[0]
    assert section.count("<tr>") == 1 + GROUPS + 1 + GROUPS * ITERATIONS  # the two tables, with headers
    assert f'alt="{COLLECTIVE_TIMELINE_PLOT}"' in section
    assert page.count(f'alt="{COLLECTIVE_TIMELINE_PLOT}"') == 1  # not again under Plots


def test_a_sweep_report_compares_the_variants_cct(tmp_path: Path) -> None:
    (tmp_path / "coll.toml").write_text(COLLECTIVE.replace('size = "512KB"', 'size = "128KB"'))
    grid = {"workload.collective.algorithm": ["ring", "halving-doubling"]}
    result = retx.sweep(tmp_path / "coll.toml", grid, out=tmp_path / "sweep", workers=2, progress=False)
    assert result.failed.height == 0
    figure = sweep_figures(tmp_path / "sweep")[COLLECTIVE_CCT]
    assert len(bars(figure)) == 2
    page = write_report(tmp_path / "sweep").read_text()
    assert '">Collectives</h2>' in page
    metrics = page.split('">Metrics by variant</h2>')[1].split("<h2")[0]
    assert "collective CCT (us)" in metrics and "collective busbw (Gbps)" in metrics
    table = metrics.split("<table>")[1].split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in table.split("<tr>")[2:]]
    assert len(rows) == 2
    for cells in rows:  # busbw, the last column: a number (one seed: no interval)
        assert 0 < float(cells[-1].replace(",", "")) <= 100
