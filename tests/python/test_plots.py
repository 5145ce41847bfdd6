"""retx.plots comparing several flow tables (a dict, a list, or one table split `by` a column),
grouped bars, and error bars from an interval's ends; one table alone draws as it always did."""

from __future__ import annotations

import math

import polars as pl
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from retx.plots import plot_bars, plot_fct_cdf, plot_lines, plot_slowdown_by_size


def flows(slowdowns: list[float]) -> pl.DataFrame:
    """Finished flows of sizes 1000, 2000, ... with the given slowdowns, and one unfinished."""
    n = len(slowdowns)
    return pl.DataFrame({
        "flow_id": list(range(n + 1)),
        "size_bytes": [1000 * (i + 1) for i in range(n + 1)],
        "fct_us": [10.0 * s for s in slowdowns] + [math.nan],
        "slowdown": slowdowns + [math.nan],
        "completed": [True] * n + [False],
    })


A = flows([1.0, 3.0, 2.0])
B = flows([4.0, 1.5])


def legend_texts(figure: Figure) -> list[str]:
    legend = figure.axes[0].get_legend()
    return [] if legend is None else [text.get_text() for text in legend.get_texts()]


def curves(figure: Figure) -> list[tuple[list[float], list[float]]]:
    """The CDF steps drawn (not the markers a few flows get), each rising from 0 at its first x."""
    return [(list(line.get_xdata()), list(line.get_ydata())) for line in figure.axes[0].lines
            if line.get_drawstyle() == "steps-post"]


def test_a_cdf_of_several_tables_draws_one_line_each_labelled_with_its_count() -> None:
    figure = plot_fct_cdf({"transport.cc=dcqcn": A, "transport.cc=hpcc": B})
    assert legend_texts(figure) == ["transport.cc=dcqcn (n = 3)", "transport.cc=hpcc (n = 2)"]
    (xa, ya), (xb, yb) = curves(figure)
    assert xa == [1.0, 1.0, 2.0, 3.0] and ya == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])  # finished flows only
    assert xb == [1.5, 1.5, 4.0] and yb == pytest.approx([0.0, 0.5, 1.0])
    assert figure.axes[0].get_ylabel() == "fraction of finished flows"


def test_a_list_and_a_table_split_by_a_column_draw_the_same_lines() -> None:
    by_dict = plot_fct_cdf({"a": A, "b": B})
    joined = pl.concat([A.with_columns(variant=pl.lit("a")), B.with_columns(variant=pl.lit("b"))])
    assert curves(plot_fct_cdf(joined, by="variant")) == curves(by_dict)
    assert legend_texts(plot_fct_cdf(joined, by="variant")) == legend_texts(by_dict)
    listed = plot_fct_cdf([A, B])
    assert curves(listed) == curves(by_dict)
    assert legend_texts(listed) == ["1 (n = 3)", "2 (n = 2)"]
    with pytest.raises(ValueError):
        plot_fct_cdf([A, B], by="variant")


def test_one_table_draws_as_a_single_run_with_no_legend() -> None:
    figure = plot_fct_cdf(A)
    assert figure.axes[0].get_legend() is None
    assert figure.axes[0].get_ylabel() == "fraction of finished flows (n = 3)"
    assert curves(figure) == [([1.0, 1.0, 2.0, 3.0], pytest.approx([0.0, 1 / 3, 2 / 3, 1.0]))]
    assert len(plot_slowdown_by_size(A, groups=3).axes[0].lines) == 3  # p50, p95, p99


def test_slowdown_by_size_of_several_tables_draws_each_ones_median_and_p99_in_its_colour() -> None:
    figure = plot_slowdown_by_size({"a": A, "b": B}, groups=1)
    assert legend_texts(figure) == ["a p50", "a p99", "b p50", "b p99"]
    lines = figure.axes[0].lines
    assert [line.get_linestyle() for line in lines] == ["-", "--", "-", "--"]
    assert lines[0].get_color() == lines[1].get_color() != lines[2].get_color() == lines[3].get_color()
    # One group of all of b's finished flows: sizes 1000 and 2000, slowdowns 4 and 1.5.
    assert list(lines[2].get_xdata()) == [1500.0] and list(lines[2].get_ydata()) == [2.75]
    assert list(lines[3].get_ydata()) == pytest.approx([1.5 + 0.99 * 2.5])


def test_grouped_bars_a_bar_per_series_in_each_group_with_error_bars_to_the_interval() -> None:
    table = pl.DataFrame({"bucket": ["<10KB", "<10KB", ">=1MB", ">=1MB"], "variant": ["a", "b", "a", "b"],
                          "y": [1.0, 2.0, 3.0, 4.0], "low": [0.5, None, 2.0, 3.5], "high": [2.0, None, 3.5, 6.0]})
    figure = plot_bars(table, "bucket", "y", "variant", interval=("low", "high"))
    axes = figure.axes[0]
    bars = [c for c in axes.containers if isinstance(c, BarContainer)]
    assert [c.get_label() for c in bars] == ["a", "b"] == legend_texts(figure)
    assert [[patch.get_height() for patch in c] for c in bars] == [[1.0, 3.0], [2.0, 4.0]]
    # Bars of one group side by side around its tick, groups in table order.
    centres = [[patch.get_x() + patch.get_width() / 2 for patch in c] for c in bars]
    assert centres == [pytest.approx([-0.2, 0.8]), pytest.approx([0.2, 1.2])]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["<10KB", ">=1MB"]
    # a's error bars run from low to high (b's first has none: null).
    segments = bars[0].errorbar.lines[2][0].get_segments()
    assert [(s[0][1], s[1][1]) for s in segments] == [(0.5, 2.0), (2.0, 3.5)]
    assert not axes.lines or all(line.get_linestyle() == "None" for line in axes.lines)  # caps, no lines


def test_bars_without_series_colour_each_category_and_draw_no_legend() -> None:
    table = pl.DataFrame({"cc": ["dcqcn", "hpcc"], "y": [1.0, 2.0]})
    figure = plot_bars(table, "cc", "y", None)
    (bars,) = [c for c in figure.axes[0].containers if isinstance(c, BarContainer)]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()
    assert figure.axes[0].get_legend() is None


def test_lines_with_an_interval_draw_error_bars_and_no_series_draws_one_unlabelled_line() -> None:
    table = pl.DataFrame({"mtu": [4096, 1024], "y": [2.0, 1.0], "low": [1.5, 0.0], "high": [2.5, 3.0]})
    figure = plot_lines(table, "mtu", "y", None, interval=("low", "high"))
    axes = figure.axes[0]
    (line,) = [line for line in axes.lines if line.get_linestyle() == "-"]
    assert list(line.get_xdata()) == [1024, 4096] and list(line.get_ydata()) == [1.0, 2.0]  # sorted by x
    segments = axes.containers[0].lines[2][0].get_segments()
    assert [(s[0][1], s[1][1]) for s in segments] == [(0.0, 3.0), (1.5, 2.5)]
    assert axes.get_legend() is None
    assert not [c for c in axes.containers if isinstance(c, BarContainer)]
