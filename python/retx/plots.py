"""Plots drawn on the Agg canvas directly: no pyplot global state, safe from any thread.

Each helper returns the matplotlib Figure (a notebook shows it as is); pass `path` to also
save it as a PNG.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence, Union

import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter, ScalarFormatter

from retx.metrics import finished_flows, slowdown_by_size
from retx.results import collective_flows


# More receivers than this are plotted as one summed line.
MAX_LINES = 8
# A collective timeline draws at most this many flows (the earliest steps first), and names
# each rank's host on the y axis up to this many ranks; steps up to MAX_STEP_COLOURS get a
# colour each and a legend, more a colour scale.
MAX_TIMELINE_FLOWS = 2000
# What `retx run` names the timeline of a collective run (the report shows it with the tables).
COLLECTIVE_TIMELINE_PLOT = "collective_timeline.png"
MAX_RANK_LABELS = 32
MAX_STEP_COLOURS = 10
# What `retx run` names the fabric's plots (`[output] links`), and the most links a heat map shows.
TIER_UTILISATION_PLOT = "tier_utilisation.png"
LINK_HEATMAP_PLOT = "link_heatmap.png"
MAX_HEATMAP_LINKS = 24
# A throughput series of fewer samples than this is drawn with markers; under MIN_SAMPLES the
# plot says the interval is too coarse for the run.
FEW_SAMPLES = 30
MIN_SAMPLES = 5
# A CDF of this many flows or fewer marks each flow.
FEW_FLOWS = 30
# A log axis whose data span less than this ratio is widened by WIDEN each way and labels its
# minor ticks (one value alone would otherwise be a zero-width axis).
SPREAD_FOR_LOG_TICKS = 10
WIDEN = 1.5

# Flows to plot: one table (one run's, drawn as before), or several to compare: {label: flows},
# a list (labelled 1, 2, ...), or one table split by a column (`by=`, e.g. a sweep's variant).
FlowTables = Union[pl.DataFrame, Mapping[str, pl.DataFrame], Sequence[pl.DataFrame]]


def plot_throughput(timeseries: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """What each receiving host took in over time, two ways: in-order goodput (`rx_gbps`,
    solid: bytes delivered to the application in order) and wire rate (`rx_wire_gbps`,
    dashed, same colour: bytes arriving off the link). In-order goodput can pass the line
    rate for an interval, when bytes held behind a hole are delivered as it fills; the wire
    rate cannot. More receivers than a legend can hold are summed into one pair of lines.
    Each point is a sample interval's mean (the label says how long); a series of few samples
    is drawn with markers, and one under MIN_SAMPLES points says so."""
    figure, axes = _new_figure()
    hosts = timeseries["host"].n_unique()
    wire = "rx_wire_gbps" in timeseries.columns
    columns = ["rx_gbps", "rx_wire_gbps"] if wire else ["rx_gbps"]
    if hosts > MAX_LINES:
        series = [(f"all {hosts} receivers",
                   timeseries.group_by("time_us").agg(pl.col(c).sum() for c in columns).sort("time_us"))]
    else:
        series = [(str(host), rows) for (host,), rows in timeseries.sort("time_us").group_by("host", maintain_order=True)]
    samples = max((rows.height for _, rows in series), default=0)
    marker = "o" if samples < FEW_SAMPLES else None
    for name, rows in series:
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["rx_gbps"], marker=marker, markersize=4,
                            label=f"{name} in-order goodput")
        if wire:
            axes.plot(rows["time_us"] / 1000.0, rows["rx_wire_gbps"], marker=marker, markersize=3,
                      linestyle="--", color=line.get_color(), label=f"{name} wire rate")
    interval = _sample_interval_us(timeseries)
    every = f", mean over each {_plain_number(interval)} us sample" if interval else ""
    axes.set_xlabel("time (ms)")
    axes.set_ylabel(f"received (Gbps{every})")
    axes.set_ylim(bottom=0)
    if 0 < samples < MIN_SAMPLES:
        axes.text(0.02, 0.04, f"only {samples} sample{'s' if samples != 1 else ''} per receiver: "
                  "set [output] sample_interval finer", transform=axes.transAxes, fontsize="small", color="0.35")
    return _finish(figure, axes, path, title, legend=bool(series))


def plot_lines(
    table: pl.DataFrame,
    x: str,
    y: str,
    series: Optional[str],
    path: Optional[str | Path] = None,
    *,
    interval: Optional[tuple[str, str]] = None,
    log_x: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    reference: Optional[pl.DataFrame] = None,
    reference_label: str = "paper",
) -> Figure:
    """One line per value of `series` (or one unlabelled line when None), with error bars when
    `interval` names the columns of their (low, high) ends (null: none); `reference` rows (same
    columns) are drawn as markers in the matching line's colour, e.g. numbers read off a paper."""
    figure, axes = _new_figure()
    colours: dict[object, Any] = {}  # a matplotlib colour: a name or an RGB(A) tuple
    for name, rows in _split(table.sort(x), series):
        label = None if series is None else str(name)
        if interval is None:
            (line,) = axes.plot(rows[x], rows[y], marker="o", markersize=4, label=label)
        else:
            bars = axes.errorbar(rows[x], rows[y], yerr=_error_bars(rows, y, interval), marker="o", markersize=4,
                                 capsize=3, label=label)
            line = bars.lines[0]
        colours[name] = line.get_color()
    if reference is not None:
        for name, rows in _split(reference, series):
            axes.scatter(rows[x], rows[y], marker="X", s=70, zorder=3, color=colours.get(name, "black"),
                         label=reference_label if series is None else f"{name} ({reference_label})")
    if log_x:
        axes.set_xscale("log")
    axes.set_xlabel(xlabel or x)
    axes.set_ylabel(ylabel or y)
    return _finish(figure, axes, path, title, legend=series is not None or reference is not None)


def plot_bars(
    table: pl.DataFrame,
    x: str,
    y: str,
    series: Optional[str],
    path: Optional[str | Path] = None,
    *,
    interval: Optional[tuple[str, str]] = None,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
) -> Figure:
    """Grouped bars, for a categorical `x`: a group per value of `x` (in table order), in it a
    bar per value of `series` (a colour each; when None, one bar, a colour per `x` value), with
    error bars when `interval` names the columns of their (low, high) ends (null: none)."""
    figure, axes = _new_figure()
    categories = table[x].unique(maintain_order=True).to_list()
    place = {value: i for i, value in enumerate(categories)}
    groups = _split(table, series)
    width = 0.8 / max(len(groups), 1)
    for k, (name, rows) in enumerate(groups):
        # Bar k of each group, the groups' bars side by side around the category's tick.
        at = [place[value] - 0.4 + width * (k + 0.5) for value in rows[x]]
        # Without series, a colour per category: the order other plots give their lines.
        colour = [f"C{place[value] % 10}" for value in rows[x]] if series is None else None
        axes.bar(at, _floats(rows[y]), width, label=None if series is None else str(name), color=colour,
                 yerr=None if interval is None else _error_bars(rows, y, interval), capsize=3)
    axes.set_axisbelow(True)  # the grid behind the bars
    axes.set_xticks(range(len(categories)), [str(value) for value in categories])
    axes.set_xlabel(xlabel or x)
    axes.set_ylabel(ylabel or y)
    return _finish(figure, axes, path, title, legend=series is not None, grid="y")


def plot_fct_cdf(flows: FlowTables, path: Optional[str | Path] = None, title: str = "",
                 by: Optional[str] = None) -> Figure:
    """Empirical CDF of the FCT slowdown of finished flows (log x), rising from 0 at the
    smallest value; several flow tables (see FlowTables) draw a line each, labelled with their
    count of finished flows. Few flows get a marker per flow; one flow is a step from 0 to 1
    at its slowdown, with the x axis widened around it."""
    figure, axes = _new_figure()
    tables = _labelled(flows, by)
    counts = []
    for label, table in tables:
        slowdowns = finished_flows(table)["slowdown"].sort().to_list()
        n = len(slowdowns)
        counts.append(n)
        if not n:
            continue
        xs = [slowdowns[0], *slowdowns]
        ys = [0.0, *[(i + 1) / n for i in range(n)]]
        (line,) = axes.step(xs, ys, where="post", label=None if label is None else f"{label} (n = {n})")
        if n <= FEW_FLOWS:
            axes.plot(slowdowns, ys[1:], linestyle="none", marker="o", markersize=4, color=line.get_color())
    if sum(counts):
        axes.set_xscale("log")
        # Plain numbers (2, 3, 20) rather than 2x10^0 on the ticks a log axis labels.
        plain = FuncFormatter(lambda value, _pos: f"{value:g}")
        axes.xaxis.set_major_formatter(plain)
        low, high = axes.dataLim.intervalx
        if high / low < SPREAD_FOR_LOG_TICKS:
            axes.set_xlim(low / WIDEN, high * WIDEN)
            axes.xaxis.set_minor_formatter(plain)
    axes.set_xlabel("FCT slowdown (FCT / ideal FCT)")
    several = tables[0][0] is not None
    axes.set_ylabel("fraction of finished flows" + ("" if several else f" (n = {counts[0]})"))
    axes.set_ylim(0, 1.02)
    return _finish(figure, axes, path, title, legend=several)


def plot_slowdown_by_size(flows: FlowTables, path: Optional[str | Path] = None, title: str = "",
                          groups: int = 20, by: Optional[str] = None) -> Figure:
    """Median, p95 and p99 slowdown of finished flows by flow size: `groups` groups of
    near-equal count (`retx.metrics.slowdown_by_size`), at each group's mean size; when the
    flows have no more distinct sizes than that, one point per size instead (groups would share
    a size and draw vertical lines). Flows of one size alone give one point per quantile, the x
    axis widened around it and labelled with the size. Several flow tables (see FlowTables)
    draw each one's median (solid) and p99 (dashed) in a colour of its own; p95 is left out to
    keep the lines apart."""
    figure, axes = _new_figure()
    tables = _labelled(flows, by)
    sizes: set[float] = set()
    counted = 0
    if tables[0][0] is None:
        table = _by_size(tables[0][1], groups)
        sizes.update(table["size_mean"].to_list())
        counted += int(table["count"].sum())
        for column, quantile in [("slowdown_median", "p50"), ("slowdown_p95", "p95"), ("slowdown_p99", "p99")]:
            axes.plot(table["size_mean"], table[column], marker="o", markersize=4, label=quantile)
        legend = table.height > 0
    else:
        for name, flows_of in tables:
            table = _by_size(flows_of, groups)
            sizes.update(table["size_mean"].to_list())
            counted += int(table["count"].sum())
            (line,) = axes.plot(table["size_mean"], table["slowdown_median"], marker="o", markersize=4,
                                label=f"{name} p50")
            axes.plot(table["size_mean"], table["slowdown_p99"], marker="o", markersize=4, linestyle="--",
                      color=line.get_color(), label=f"{name} p99")
        legend = True
    axes.set_xscale("log")
    if len(sizes) == 1:
        (size,) = sizes
        axes.set_xlim(size / WIDEN, size * WIDEN)
        axes.set_xticks([size], [_bytes_text(size)])
        axes.xaxis.set_minor_formatter(NullFormatter())
        flows_text = "the one flow" if counted == 1 else f"all {counted:,} flows"
        axes.set_xlabel(f"flow size ({flows_text} {_bytes_text(size)})")
    else:
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: _bytes_text(value)))
        axes.set_xlabel("flow size (group mean)")
    axes.set_ylabel("FCT slowdown")
    return _finish(figure, axes, path, title, legend=legend)


def _by_size(flows: pl.DataFrame, groups: int) -> pl.DataFrame:
    """slowdown_by_size's table, or with few distinct sizes one row per size (same columns)."""
    done = finished_flows(flows)
    distinct = done["size_bytes"].n_unique() if done.height else 0
    if distinct == 0 or distinct > groups:
        return slowdown_by_size(flows, groups)
    slowdown = pl.col("slowdown")
    return (done.group_by("size_bytes").agg(
        count=pl.len().cast(pl.Int64),
        size_min=pl.col("size_bytes").min().cast(pl.Int64),
        size_max=pl.col("size_bytes").max().cast(pl.Int64),
        size_mean=pl.col("size_bytes").mean().cast(pl.Float64),
        slowdown_median=slowdown.quantile(0.5, "linear"),
        slowdown_p95=slowdown.quantile(0.95, "linear"),
        slowdown_p99=slowdown.quantile(0.99, "linear"),
    ).sort("size_bytes").drop("size_bytes"))


def plot_queues(queues: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched ports (`[output] queues`): bytes queued at each sample (line) and the peak
    since the previous one (dotted, same colour), in KB; few samples are marked each (as in
    plot_throughput)."""
    figure, axes = _new_figure()
    marker = _few_samples_marker(queues, "port")
    for (port,), rows in queues.sort("time_us").group_by("port", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["queue_bytes"] / 1000.0, label=str(port), marker=marker,
                            markersize=4)
        axes.plot(rows["time_us"] / 1000.0, rows["peak_bytes"] / 1000.0, linestyle=":",
                  color=line.get_color(), marker=marker, markersize=3)
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("queue (KB; dotted: peak since last sample)")
    axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=queues.height > 0)


def plot_cc(cc: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched flows' senders (`[output] cc_flows`): pacing rate over time, and the window
    (in KB, on a second axis, dashed) for controllers that keep one; few samples are marked each."""
    figure, axes = _new_figure()
    windows = cc.filter(pl.col("window_bytes").is_not_nan())
    window_axes = axes.twinx() if windows.height else None
    marker = _few_samples_marker(cc, "flow_id")
    for (flow,), rows in cc.sort("time_us").group_by("flow_id", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["rate_gbps"], label=f"flow {flow}", marker=marker,
                            markersize=4)
        w = rows.filter(pl.col("window_bytes").is_not_nan())
        if window_axes is not None and w.height:
            window_axes.plot(w["time_us"] / 1000.0, w["window_bytes"] / 1000.0, linestyle="--",
                             color=line.get_color(), marker=marker, markersize=3)
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("pacing rate (Gbps)")
    axes.set_ylim(bottom=0)
    if window_axes is not None:
        window_axes.set_ylabel("window (KB, dashed)")
        window_axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=cc.height > 0)


def plot_pools(pools: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """Watched hosts' NIC structures (`[output] pools`): share of each one's capacity in use at
    each sample (line) and the peak since the previous one (dotted, same colour), in %; few
    samples are marked each."""
    figure, axes = _new_figure()
    shares = pools.sort("time_us").with_columns(
        used_pct=pl.col("used") / pl.col("capacity") * 100.0,
        peak_pct=pl.col("peak") / pl.col("capacity") * 100.0,
    )
    marker = _few_samples_marker(pools, "host", "pool")
    for (host, pool), rows in shares.group_by("host", "pool", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["used_pct"], label=f"{host} {pool}", marker=marker,
                            markersize=4)
        axes.plot(rows["time_us"] / 1000.0, rows["peak_pct"], linestyle=":", color=line.get_color(), marker=marker,
                  markersize=3)
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("in use (% of capacity; dotted: peak since last sample)")
    axes.set_ylim(0, 105)
    return _finish(figure, axes, path, title, legend=pools.height > 0)


def plot_tier_utilisation(tier_samples: pl.DataFrame, path: Optional[str | Path] = None, title: str = "") -> Figure:
    """The fabric by tier (`[output] links`, tier_samples.parquet): each tier's utilisation
    over time (its selected links' bytes over what they could carry, line) and its busiest
    link's (dotted, same colour), in %; few samples are marked each."""
    figure, axes = _new_figure()
    marker = _few_samples_marker(tier_samples, "tier")
    for (tier,), rows in tier_samples.sort("time_us").group_by("tier", maintain_order=True):
        (line,) = axes.plot(rows["time_us"] / 1000.0, rows["utilisation"] * 100.0, label=str(tier), marker=marker,
                            markersize=4)
        axes.plot(rows["time_us"] / 1000.0, rows["max_utilisation"] * 100.0, linestyle=":", color=line.get_color(),
                  marker=marker, markersize=3)
    axes.set_xlabel("time (ms)")
    axes.set_ylabel("utilisation (%; dotted: busiest link of the tier)")
    axes.set_ylim(0, 105)
    return _finish(figure, axes, path, title, legend=tier_samples.height > 0)


def plot_link_heatmap(link_samples: pl.DataFrame, links: Optional[pl.DataFrame] = None,
                      path: Optional[str | Path] = None, title: str = "",
                      max_links: int = MAX_HEATMAP_LINKS) -> Figure:
    """The busiest links over time (`[output] links`, link_samples.parquet): a row per link, the
    `max_links` that sent the most over the run (by links.parquet's tx_bytes when given, else
    by their sampled bytes), busiest on top, and a column per sample interval, coloured by
    utilisation. An interval in which a link was not among the `link_series` busiest is left
    blank (its utilisation was at most theirs)."""
    figure, axes = _new_figure()
    if link_samples.height == 0:
        axes.text(0.5, 0.5, "no link samples", ha="center", va="center", transform=axes.transAxes)
        return _finish(figure, axes, path, title, legend=False)
    if links is not None and links.height:
        ranked = links.filter(pl.col("link").is_in(link_samples["link"].unique().implode()))
        order = ranked.sort(["tx_bytes", "link"], descending=[True, False])["link"].head(max_links).to_list()
    else:
        totals = link_samples.group_by("link").agg(pl.col("tx_bytes").sum())
        order = totals.sort(["tx_bytes", "link"], descending=[True, False])["link"].head(max_links).to_list()
    times = link_samples["time_us"].unique().sort().to_list()
    column = {t: i for i, t in enumerate(times)}
    row = {name: i for i, name in enumerate(order)}
    grid = [[math.nan] * len(times) for _ in order]
    for name, t, share in link_samples.filter(pl.col("link").is_in(order)).select("link", "time_us", "utilisation").iter_rows():
        grid[row[name]][column[t]] = share * 100.0
    edges = [0.0] + [t / 1000.0 for t in times]
    image = axes.pcolormesh(edges, range(len(order) + 1), grid, cmap=colormaps["viridis"], vmin=0.0, vmax=100.0,
                            shading="flat")
    figure.colorbar(image, ax=axes, label="utilisation (%)")
    axes.set_yticks([i + 0.5 for i in range(len(order))], order, fontsize="small" if len(order) <= 12 else "x-small")
    axes.invert_yaxis()
    axes.set_xlabel("time (ms)")
    return _finish(figure, axes, path, title or "busiest links", legend=False, grid="x")


def plot_collective_timeline(flows: pl.DataFrame, collective_steps: pl.DataFrame, path: Optional[str | Path] = None,
                             title: str = "", group: int = 0, iterations: int = 1,
                             max_flows: int = MAX_TIMELINE_FLOWS) -> Figure:
    """A collective's flows over time: a row per rank of `group` (its sending host, in rank
    order, rank 0 on top) and in it a bar per flow from its start to its `received_us`,
    coloured by step, for the group's first `iterations` iterations; at most `max_flows` flows,
    the earliest steps first (the title says how many were drawn). A rank's flows of one step
    (all-to-all's) share its row, stacked. A flow never received is drawn hatched up to the
    latest time drawn (one that never started starts at the run's end: a bar of no width)."""
    figure, axes = _new_figure()
    tagged = collective_flows(flows, collective_steps).filter(pl.col("group") == group)
    ranks = tagged["src"].unique(maintain_order=True).to_list()
    first = tagged["iteration"].min()
    chosen = tagged.filter(pl.col("iteration") < (first if isinstance(first, int) else 0) + iterations)
    place = {host: float(i) for i, host in enumerate(ranks)}
    drawn = chosen.head(max_flows)
    drawn = drawn.with_columns(
        row=pl.Series([place[host] for host in drawn["src"]], dtype=pl.Float64),
        slot=pl.int_range(pl.len()).over("iteration", "step", "src").cast(pl.Float64),
        slots=pl.len().over("iteration", "step", "src").cast(pl.Float64),
    )
    received = drawn["received_us"].fill_nan(None)
    # Not received: to the latest time drawn (a flow that never started starts at the run's end).
    last = max(_as_number(received.max()), _as_number(drawn["start_us"].max()))
    end = received.fill_null(last)
    height = 0.8 / drawn["slots"]
    centre = drawn["row"] - 0.4 + height * (drawn["slot"] + 0.5)
    steps = drawn["step"].to_list()
    many = drawn.height and drawn["step"].n_unique() > MAX_STEP_COLOURS
    scale = Normalize(vmin=min(steps, default=0), vmax=max(steps, default=0) or 1)
    colours: list[Any] = ([colormaps["viridis"](scale(k)) for k in steps] if many
                          else [f"C{k % 10}" for k in steps])
    bars = axes.barh(_floats(centre), _floats(end - drawn["start_us"]), _floats(height),
                     left=_floats(drawn["start_us"]), color=colours, edgecolor="white", linewidth=0.3)
    for bar, done in zip(bars.patches, received.is_not_null()):
        if not done:
            bar.set_hatch("//")
    if many:
        figure.colorbar(ScalarMappable(norm=scale, cmap="viridis"), ax=axes, label="step")
    elif drawn.height:
        shown = sorted(set(steps))
        axes.legend(handles=[Patch(color=f"C{k % 10}", label=f"step {k}") for k in shown],
                    fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if ranks:
        axes.set_ylim(len(ranks) - 0.5, -0.5)  # rank 0 on top
    if len(ranks) <= MAX_RANK_LABELS:
        axes.set_yticks(range(len(ranks)), [str(host) for host in ranks])
        axes.set_ylabel(f"sending host (group {group}, rank order)")
    else:
        axes.set_ylabel(f"rank (group {group})")
    axes.set_xlabel("time (us)")
    cut = f"first {drawn.height} of {chosen.height}" if drawn.height < chosen.height else f"all {drawn.height}"
    shown_iterations = chosen["iteration"].n_unique()
    about = f"{cut} flows of group {group}, {shown_iterations} iteration{'s' if shown_iterations != 1 else ''}"
    return _finish(figure, axes, path, f"{title}: {about}" if title else about, legend=False, grid="x")


def plot_collective_cct(collectives: FlowTables, path: Optional[str | Path] = None, title: str = "",
                        by: Optional[str] = None) -> Figure:
    """Collective completion time per variant: a bar per collectives table (several, labelled,
    as FlowTables: {label: table}, a list, or one table split by=column), the mean CCT over its
    finished groups and iterations with an error bar from the least to the largest, its mean
    ideal CCT marked (black line) and its mean slowdown written above. One table alone draws a
    bar per group."""
    figure, axes = _new_figure()
    tables = _labelled(collectives, by)
    if tables[0][0] is None:
        tables = [(f"group {g}", rows) for g, rows in _split(tables[0][1].sort("group"), "group")]
    means, low, high, ideals, slowdowns = [], [], [], [], []
    for _label, table in tables:
        cct = table["cct_us"].fill_nan(None)
        mean = _as_number(cct.mean())
        means.append(mean)
        low.append(mean - _as_number(cct.min()))
        high.append(_as_number(cct.max()) - mean)
        ideals.append(_as_number(table["ideal_cct_us"].fill_nan(None).mean()))
        slowdowns.append(_as_number(table["slowdown"].fill_nan(None).mean()))
    at = list(range(len(tables)))
    bars = axes.bar(at, means, 0.6, yerr=[low, high], capsize=3, color=[f"C{i % 10}" for i in at])
    axes.hlines(ideals, [x - 0.35 for x in at], [x + 0.35 for x in at], colors="black", linewidth=2, label="ideal")
    axes.bar_label(bars, [f"{s:.3g}x" if math.isfinite(s) else "" for s in slowdowns], padding=2, fontsize="small")
    axes.set_axisbelow(True)
    axes.set_xticks(at, [str(label) for label, _ in tables])
    axes.set_ylabel("collective completion time (us; mean, min-max)")
    axes.set_ylim(bottom=0)
    return _finish(figure, axes, path, title, legend=True, grid="y")


def _as_number(value: object) -> float:
    """A polars aggregate (None for no rows) as a float, NaN for none."""
    return float(value) if isinstance(value, (int, float)) else math.nan


def _labelled(flows: FlowTables, by: Optional[str]) -> list[tuple[Optional[str], pl.DataFrame]]:
    """The flow tables to draw with their labels; one table alone (no `by`) has label None and
    is drawn as a single run's."""
    if isinstance(flows, pl.DataFrame):
        if by is None:
            return [(None, flows)]
        return [(str(name), table) for name, table in _split(flows, by)]
    if by is not None:
        raise ValueError("by= splits one flows table; several tables are labelled already")
    tables: list[tuple[Optional[str], pl.DataFrame]]
    if isinstance(flows, Mapping):
        tables = [(str(label), table) for label, table in flows.items()]
    else:
        tables = [(str(i), table) for i, table in enumerate(flows, 1)]
    if not tables:
        raise ValueError("no flow tables to plot")
    return tables


def _split(table: pl.DataFrame, column: Optional[str]) -> list[tuple[Any, pl.DataFrame]]:
    """(value, rows) per value of `column` in order of appearance; the whole table when None."""
    if column is None:
        return [(None, table)]
    return [(name, rows) for (name,), rows in table.group_by(column, maintain_order=True)]


def _error_bars(rows: pl.DataFrame, y: str, interval: tuple[str, str]) -> Any:
    """matplotlib's yerr, the distances from y down and up to an interval's ends."""
    low, high = interval
    return [_floats(rows[y] - rows[low]), _floats(rows[high] - rows[y])]


def _floats(column: pl.Series) -> Any:
    # Null (e.g. no interval from one seed) as NaN, which matplotlib leaves undrawn.
    return column.cast(pl.Float64).fill_null(math.nan).to_numpy()


def _new_figure() -> tuple[Figure, Axes]:
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _finish(figure: Figure, axes: Axes, path: Optional[str | Path], title: str, legend: bool,
            grid: Literal["both", "x", "y"] = "both") -> Figure:
    """Title, legend, grid and tick labels every plot shares. The legend goes outside the axes,
    to their right, so it never hides a line or a point; numbers on linear axes are written
    whole (12,000,000, never 1.2 with a 1e7 offset or "+1.2e7" above the axis)."""
    if title:
        axes.set_title(title)
    if legend and axes.get_legend_handles_labels()[0]:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
    for each in figure.axes:
        _plain_ticks(each)
    axes.grid(True, which="both", axis=grid, alpha=0.3)
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=120)
    return figure


def _plain_ticks(axes: Axes) -> None:
    """Linear axes with matplotlib's default formatter get whole numbers with thousands
    separators instead (no offset, no scientific notation); others are left as they are."""
    for axis in (axes.xaxis, axes.yaxis):
        if axis.get_scale() == "linear" and isinstance(axis.get_major_formatter(), ScalarFormatter):
            axis.set_major_formatter(FuncFormatter(lambda value, _pos: _plain_number(value)))


def _plain_number(value: float) -> str:
    """12,000,000; 2.5; 0.001: whole numbers with thousands separators, fractions as short as they go."""
    if value == round(value) and abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:,.6g}"


def _bytes_text(size: float) -> str:
    """A byte count for a label: 1 KB, 10 MB, 1.5 MB, 200 B (decimal units, as retx's sizes)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(size) >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.3g} B"


def _few_samples_marker(table: pl.DataFrame, *keys: str) -> Optional[str]:
    """A marker for sampled series of fewer than FEW_SAMPLES points each (a short run, a coarse
    interval: a line between two samples would pass for data), else none."""
    most = table.group_by(*keys).len()["len"].max() if table.height else 0
    return "o" if isinstance(most, int) and most < FEW_SAMPLES else None


def _sample_interval_us(timeseries: pl.DataFrame) -> Optional[float]:
    """The sampling interval of a time series: the most common gap between its sample times."""
    times = timeseries["time_us"].unique().sort()
    if times.len() < 2:
        return None
    gaps = times.diff().drop_nulls().round(6)
    return float(gaps.mode().sort()[0])
