"""Plots drawn on the Agg canvas directly: no pyplot global state, safe from any thread.

Each helper returns the matplotlib Figure (a notebook shows it as is); pass `path` to also
save it as a PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import polars as pl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from retx.metrics import finished_flows, slowdown_by_size


# More receivers than this are plotted as one summed line.
MAX_LINES = 8


def plot_throughput(timeseries: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
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
    path: Optional[str | Path] = None,
    *,
    log_x: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    reference: Optional[pl.DataFrame] = None,
    reference_label: str = "paper",
) -> Figure:
    """One line per value of `series`; `reference` rows (same columns) are drawn as markers
    in the matching line's colour, e.g. numbers read off a paper."""
    figure, axes = _new_figure()
    colours: dict[object, Any] = {}  # a matplotlib colour: a name or an RGB(A) tuple
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


def plot_fct_cdf(flows: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Empirical CDF of the FCT slowdown of finished flows (log x)."""
    figure, axes = _new_figure()
    slowdowns = finished_flows(flows)["slowdown"].sort()
    n = slowdowns.len()
    if n:
        axes.step(slowdowns, [(i + 1) / n for i in range(n)], where="post")
        axes.set_xscale("log")
        # Plain numbers (2, 3, 20) rather than 2x10^0 on the ticks a log axis labels.
        plain = FuncFormatter(lambda value, _pos: f"{value:g}")
        axes.xaxis.set_major_formatter(plain)
        if slowdowns[-1] / slowdowns[0] < 10:
            axes.xaxis.set_minor_formatter(plain)
    axes.set_xlabel("FCT slowdown (FCT / ideal FCT)")
    axes.set_ylabel(f"fraction of finished flows (n = {n})")
    axes.set_ylim(0, 1.02)
    return _finish(figure, axes, path, title, legend=False)


def plot_slowdown_by_size(flows: pl.DataFrame, path: Optional[str | Path] = None, title: str = "",
                          groups: int = 20) -> Figure:
    """Median, p95 and p99 slowdown of finished flows by flow size: `groups` groups of
    near-equal count (`retx.metrics.slowdown_by_size`), at each group's mean size."""
    figure, axes = _new_figure()
    table = slowdown_by_size(flows, groups)
    for column, label in [("slowdown_median", "p50"), ("slowdown_p95", "p95"), ("slowdown_p99", "p99")]:
        axes.plot(table["size_mean"], table[column], marker="o", markersize=4, label=label)
    axes.set_xscale("log")
    axes.set_xlabel("flow size (bytes, group mean)")
    axes.set_ylabel("FCT slowdown")
    return _finish(figure, axes, path, title, legend=table.height > 0)


def plot_queues(queues: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched ports (`[output] queues`): bytes queued at each sample (line) and the peak
    since the previous one (dotted, same colour), in KB."""
    figure, axes = _new_figure()
    for (port,), rows in queues.sort("time_us").group_by("port", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["queue_bytes"] / 1000.0, label=str(port))
        axes.plot(rows["time_us"] / 1000.0, rows["peak_bytes"] / 1000.0, linestyle=":",
                  color=line.get_color())
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("queue (KB; dotted: peak since last sample)")
    axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=queues.height > 0)


def plot_cc(cc: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched flows' senders (`[output] cc_flows`): pacing rate over time, and the window
    (in KB, on a second axis, dashed) for controllers that keep one."""
    figure, axes = _new_figure()
    windows = cc.filter(pl.col("window_bytes").is_not_nan())
    window_axes = axes.twinx() if windows.height else None
    for (flow,), rows in cc.sort("time_us").group_by("flow_id", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["rate_gbps"], label=f"flow {flow}")
        w = rows.filter(pl.col("window_bytes").is_not_nan())
        if window_axes is not None and w.height:
            window_axes.plot(w["time_us"] / 1000.0, w["window_bytes"] / 1000.0, linestyle="--",
                             color=line.get_color())
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("pacing rate (Gbps)")
    axes.set_ylim(bottom=0)
    if window_axes is not None:
        window_axes.set_ylabel("window (KB, dashed)")
        window_axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=cc.height > 0)


def plot_pools(pools: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched hosts' NIC structures (`[output] pools`): share of each one's capacity in use at
    each sample (line) and the peak since the previous one (dotted, same colour), in %."""
    figure, axes = _new_figure()
    shares = pools.sort("time_us").with_columns(
        used_pct=pl.col("used") / pl.col("capacity") * 100.0,
        peak_pct=pl.col("peak") / pl.col("capacity") * 100.0,
    )
    for (host, pool), rows in shares.group_by("host", "pool", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["used_pct"], label=f"{host} {pool}")
        axes.plot(rows["time_us"] / 1000.0, rows["peak_pct"], linestyle=":", color=line.get_color())
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("in use (% of capacity; dotted: peak since last sample)")
    axes.set_ylim(0, 105)
    return _finish(figure, axes, path, title, legend=pools.height > 0)


def _new_figure() -> tuple[Figure, Axes]:
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _finish(figure: Figure, axes: Axes, path: Optional[str | Path], title: str, legend: bool) -> Figure:
    if title:
        axes.set_title(title)
    if legend:
        axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=120)
    return figure
