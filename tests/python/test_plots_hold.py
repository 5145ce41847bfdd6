"""Default plots that hold on simple runs (issue 46, item 5), each checked on the drawn artists:
one flow, flows of one size, a run shorter than the default sampling interval, what the
throughput lines measure, intervals that cannot go negative, a legend beside the data, and
numbers without offset notation."""

from __future__ import annotations

import math
import re
import tomllib

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import retx
from retx.plots import (plot_cc, plot_fct_cdf, plot_lines, plot_pools, plot_queues, plot_slowdown_by_size,
                        plot_throughput)
from retx.report import _mean_ci

ONE_FLOW = """\
name = "one"
duration = "{duration}"
[topology]
kind = "single-switch"
hosts = 2
host_link = "100Gbps"
link_delay = "1us"
[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "1MB" }}]
"""


def flows(sizes: list[int], slowdowns: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"flow_id": list(range(len(sizes))), "size_bytes": sizes,
                         "fct_us": [10.0 * s for s in slowdowns], "slowdown": slowdowns,
                         "completed": [True] * len(sizes)})


def drawn(figure: Figure) -> list[Line2D]:
    return list(figure.axes[0].lines)


def test_a_one_flow_cdf_draws_a_step_from_0_to_1_at_its_slowdown() -> None:
    figure = plot_fct_cdf(flows([1_000_000], [1.7]))
    axes = figure.axes[0]
    (step,) = [line for line in drawn(figure) if line.get_drawstyle() == "steps-post"]
    assert list(step.get_xdata()) == [1.7, 1.7] and list(step.get_ydata()) == [0.0, 1.0]
    markers = [line for line in drawn(figure) if line.get_marker() not in (None, "None", "")]
    assert markers and list(markers[0].get_xdata()) == [1.7]
    low, high = axes.get_xlim()
    assert low < 1.7 < high and high / low > 2  # an axis with room, not a zero-width one
    assert axes.get_ylim()[0] == 0.0 and axes.get_ylim()[1] >= 1.0


def test_flows_of_one_size_are_points_at_that_size_not_a_vertical_line() -> None:
    figure = plot_slowdown_by_size(flows([1_000_000] * 40, [1.0 + i / 10 for i in range(40)]))
    axes = figure.axes[0]
    for line in drawn(figure):
        assert list(line.get_xdata()) == [1_000_000.0]  # one point each: p50, p95, p99
    medians, p95, p99 = (float(line.get_ydata()[0]) for line in drawn(figure))
    assert medians < p95 < p99
    low, high = axes.get_xlim()
    assert low < 1_000_000 < high
    assert axes.get_xlabel() == "flow size (all 40 flows 1 MB)"
    assert [t.get_text() for t in axes.get_xticklabels()] == ["1 MB"]


def test_few_distinct_sizes_get_a_point_each_in_size_order() -> None:
    sizes = [1000] * 20 + [1_000_000] * 20
    figure = plot_slowdown_by_size(flows(sizes, [1.0 + (i % 7) for i in range(40)]))
    for line in drawn(figure):
        assert list(line.get_xdata()) == [1000.0, 1_000_000.0]


def test_a_run_shorter_than_100us_sampling_gets_samples_of_its_own(tmp_path) -> None:
    # No [output] sample_interval: a 175 us run gets duration / 100 in 1-2-5 steps, 1 us.
    scenario = retx.Scenario.from_str(ONE_FLOW.format(duration="175us"))
    assert tomllib.loads(scenario.resolved())["output"]["sample_interval"] == "1us"
    results = retx.run(scenario, progress=False)
    per_host = results.timeseries.filter(pl.col("host") == "h1").height
    assert per_host >= 80  # the flow takes ~85 us of the 175
    figure = plot_throughput(results.timeseries)
    assert "1 us sample" in figure.axes[0].get_ylabel()
    # A long run keeps 100 us, and a set interval stays as set.
    assert tomllib.loads(retx.Scenario.from_str(ONE_FLOW.format(duration="20ms")).resolved())["output"][
        "sample_interval"] == "100us"
    fixed = retx.Scenario.from_str(ONE_FLOW.format(duration="175us") + '[output]\nsample_interval = "25us"\n')
    assert tomllib.loads(fixed.resolved())["output"]["sample_interval"] == "25us"


def test_too_few_samples_are_drawn_as_points_and_the_plot_says_so() -> None:
    timeseries = pl.DataFrame({"time_us": [100.0, 175.0], "host": ["h1", "h1"],
                               "rx_gbps": [60.0, 40.0], "rx_wire_gbps": [62.0, 41.0]})
    figure = plot_throughput(timeseries)
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert any("only 2 samples per receiver" in t for t in texts)
    assert all(line.get_marker() == "o" for line in drawn(figure))


def test_throughput_draws_in_order_goodput_and_wire_rate_labelled_as_such() -> None:
    timeseries = pl.DataFrame({"time_us": [10.0 * i for i in range(1, 41)], "host": ["h1"] * 40,
                               "rx_gbps": [0.0] * 20 + [160.0] + [90.0] * 19,
                               "rx_wire_gbps": [95.0] * 40})
    figure = plot_throughput(timeseries)
    axes = figure.axes[0]
    goodput, wire = drawn(figure)
    assert goodput.get_label() == "h1 in-order goodput" and wire.get_label() == "h1 wire rate"
    assert max(goodput.get_ydata()) == 160.0 and max(wire.get_ydata()) == 95.0
    assert goodput.get_linestyle() == "-" and wire.get_linestyle() == "--"
    assert goodput.get_color() == wire.get_color()
    assert axes.get_ylabel() == "received (Gbps, mean over each 10 us sample)"
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["h1 in-order goodput", "h1 wire rate"]


def test_the_legend_sits_beside_the_axes_not_on_the_data() -> None:
    figure = plot_fct_cdf({f"variant {i}": flows([1000 * (j + 1) for j in range(50)], [1.0 + j for j in range(50)])
                           for i in range(6)})
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    axes_box = figure.axes[0].get_window_extent(renderer)
    legend_box = figure.axes[0].get_legend().get_window_extent(renderer)
    assert legend_box.x0 >= axes_box.x1  # wholly to the right of the plotting area


def test_byte_counts_are_written_whole_without_an_offset() -> None:
    table = pl.DataFrame({"x": [1, 2, 3], "bytes": [10_000_000.0, 10_000_150.0, 10_000_300.0]})
    figure = plot_lines(table, "x", "bytes", None)
    figure.canvas.draw()
    axis = figure.axes[0].yaxis
    assert axis.get_offset_text().get_text() == ""
    labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
    assert "10,000,150" in labels and all(re.fullmatch(r"\d{1,3}(,\d{3})+", label) for label in labels), labels
    big = plot_lines(pl.DataFrame({"x": [1, 2], "bytes": [0.0, 3e9]}), "x", "bytes", None)
    big.canvas.draw()
    assert all("e" not in t.get_text() for t in big.axes[0].yaxis.get_ticklabels())


def test_an_interval_from_two_seeds_stays_within_them() -> None:
    per_run = pl.DataFrame({"variant": ["a", "a", "b"], "mean_fct_us": [100.0, 5000.0, 300.0]})
    table = _mean_ci(per_run, ["variant"], ["mean_fct_us"])
    a, b = table.iter_rows(named=True)
    assert a["mean_fct_us_mean"] == 2550.0
    assert (a["mean_fct_us_low"], a["mean_fct_us_high"]) == (100.0, 5000.0)  # never negative
    assert b["mean_fct_us_low"] is None and b["runs"] == 1  # no interval from one seed
    many = pl.DataFrame({"variant": ["c"] * 8, "mean_fct_us": list(np.linspace(10.0, 80.0, 8))})
    (c,) = _mean_ci(many, ["variant"], ["mean_fct_us"]).iter_rows(named=True)
    assert 10.0 < c["mean_fct_us_low"] < c["mean_fct_us_mean"] < c["mean_fct_us_high"] < 80.0
    assert not math.isnan(c["mean_fct_us_low"])


@pytest.mark.parametrize("samples, marked", [(3, True), (60, False)])
def test_the_other_sampled_plots_mark_few_samples_too(samples: int, marked: bool) -> None:
    times = [10.0 * (i + 1) for i in range(samples)]
    queues = pl.DataFrame({"time_us": times, "port": ["s0:h1"] * samples, "queue_bytes": [5000.0] * samples,
                           "peak_bytes": [8000.0] * samples})
    cc = pl.DataFrame({"time_us": times, "flow_id": [0] * samples, "rate_gbps": [40.0] * samples,
                       "window_bytes": [64000.0] * samples})
    pools = pl.DataFrame({"time_us": times, "host": ["h1"] * samples, "pool": ["reorder"] * samples,
                          "used": [3] * samples, "capacity": [10] * samples, "peak": [5] * samples})
    for figure in (plot_queues(queues), plot_cc(cc), plot_pools(pools)):
        lines = [line for axes in figure.axes for line in axes.lines]
        assert lines and all((line.get_marker() == "o") == marked for line in lines), figure.axes[0].get_ylabel()
