"""PNG plots drawn on the Agg canvas directly: no pyplot global state, safe from any thread."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import polars as pl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


# More receivers than this are plotted as one summed line.
MAX_LINES = 8


def plot_throughput(timeseries: pl.DataFrame, path: str | Path, title: str = "") -> Path:
    """Receiver goodput over time: one line per receiving host, or their sum when there are
    more than a legend can hold."""
    figure, axes = _new_figure()
    hosts = timeseries["host"].n_unique()
    if hosts > MAX_LINES:
        total = timeseries.group_by("time_us").agg(pl.col("rx_gbps").sum()).sort("time_us")
        axes.plot(total["time_us"] / 1000.0, total["rx_gbps"], label=f"all {hosts} receivers")
    else:
        for (host,), samples in timeseries.sort("time_us").group_by("host", maintain_order=True):
            axes.plot(samples["time_us"] / 1000.0, samples["rx_gbps"], label=str(host))
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("receiver goodput (Gbps)")
    axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=hosts > 1)


def plot_lines(
    table: pl.DataFrame,
    x: str,
    y: str,
    series: str,
    path: str | Path,
    *,
    log_x: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    reference: Optional[pl.DataFrame] = None,
    reference_label: str = "paper",
) -> Path:
    """One line per value of `series`; `reference` rows (same columns) are drawn as markers
    in the matching line's colour, e.g. numbers read off a paper."""
    figure, axes = _new_figure()
    colours: dict[object, str] = {}
    for (name,), rows in table.sort(x).group_by(series, maintain_order=True):
        (line,) = axes.plot(rows[x], rows[y], marker="o", markersize=4, label=str(name))
        colours[name] = line.get_color()
    if reference is not None:
        for (name,), rows in reference.group_by(series, maintain_order=True):
            axes.scatter(rows[x], rows[y], marker="X", s=70, zorder=3,
                         color=colours.get(name, "black"), label=f"{name} ({reference_label})")
    if log_x:
        axes.set_xscale("log")
    axes.set_xlabel(xlabel or x)
    axes.set_ylabel(ylabel or y)
    return _finish(figure, axes, path, title, legend=True)


def _new_figure() -> tuple[Figure, Axes]:
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _finish(figure: Figure, axes: Axes, path: str | Path, title: str, legend: bool) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if title:
        axes.set_title(title)
    if legend:
        axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    figure.savefig(path, dpi=120)
    return path
