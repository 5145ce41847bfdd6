"""One self-contained HTML page for a run folder (`retx run`) or a sweep folder (`retx sweep`):
provenance, the scenario, the summary tables and the plots, embedded (PNG as base64), so the
file can be mailed or attached as is. `retx report DIR` writes DIR/report.html.

A sweep's page is titled by its base scenario and grid and compares its variants (the points
of the grid, each labelled by its values, e.g. "transport.cc=hpcc"): per-run metrics as the
mean over seeds with a bootstrap interval, drawn against the swept parameters (a numeric one as
lines, else grouped bars); the slowdown CDF; and slowdown by size bucket, seeds pooled, with a
bootstrap interval. `sweep_figures(DIR)` hands back those figures. A collective workload's run
gets a Collectives section (per group and per iteration, and the timeline); a sweep of one, the
collective completion time by variant and the mean CCT and busbw in the metrics table. A
calibration folder (`retx calibrate`) gets the page `retx.calibrate.report_page` writes: the
verdict per target, what the search covered, the best points, the plot and the trials.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from retx import checked
from retx.calibrate import is_calibration, report_page
from retx.metrics import SIZE_BUCKETS, finished_flows, run_metrics
from retx.plots import COLLECTIVE_TIMELINE_PLOT, plot_bars, plot_collective_cct, plot_fct_cdf, plot_lines
from retx.provenance import read_parquet_provenance
from retx.results import COLLECTIVES_FILE, FLOWS_FILE, SCENARIO_FILE, SUMMARY_FILE
from retx.sweep import POINTS_DIR, SWEEP_TABLE

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPORT_FILE = "report.html"
RUNS_FILE = "runs.parquet"
SWEEP_SUMMARY_FILE = "summary.parquet"
SWEEP_FILE = "sweep.toml"
# Flows listed in a run's report; the rest are in flows.parquet.
FLOW_ROWS = 20
FLOW_COLUMNS = ["flow_id", "src", "dst", "size_bytes", "fct_us", "slowdown", "goodput_gbps",
                "retx_bytes", "notifications", "timeouts", "completed"]
# Iterations of a collective listed in a run's report; the rest are in collectives.parquet.
COLLECTIVE_ROWS = 50
COLLECTIVE_COLUMNS = ["group", "iteration", "op", "algorithm", "ranks", "size_bytes", "steps", "start_us", "cct_us",
                      "ideal_cct_us", "slowdown", "algbw_gbps", "busbw_gbps", "slowest_step"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
.failed, .warning { color: #b00; }
nav.contents { margin: 0.5em 0 1em; font-size: 0.9em; }
.figures { display: grid; grid-template-columns: 1fr 1fr; gap: 0.5em; }
"""


class ReportError(ValueError):
    """The folder holds neither a run nor a sweep (one line, for the command line)."""


def write_report(folder: str | Path, out: Optional[str | Path] = None) -> Path:
    """Writes the page of the run, sweep or calibration in `folder` to `out` (a file; a folder,
    existing or named with a trailing slash, gets report.html inside), by default
    `folder`/report.html; returns its path. The page embeds everything, so it reads anywhere."""
    folder = Path(folder)
    # Before the page is built: report.html that is a folder is refused now, not on writing.
    checked.output_file(folder / REPORT_FILE, "report")
    if is_calibration(folder):
        title, body = report_page(folder)
    elif (folder / RUNS_FILE).exists():
        title, body = _sweep(folder)
    elif (folder / SUMMARY_FILE).exists() and (folder / FLOWS_FILE).exists():
        title, body = _run(folder)
    else:
        raise ReportError(f"{folder}: neither a run folder (summary.json, flows.parquet) "
                          f"nor a sweep folder (runs.parquet)")
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{_with_contents(body)}\n</body></html>\n")
    path = _report_path(folder, out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def _report_path(folder: Path, out: Optional[str | Path]) -> Path:
    if out is None:
        return folder / REPORT_FILE
    target = Path(out)
    if target.is_dir() or str(out).endswith(("/", "\\")):
        return target / REPORT_FILE
    if target.suffix.lower() not in (".html", ".htm"):
        raise ReportError(f"--out {out}: name an .html file or a folder")
    return target


def _run(folder: Path) -> tuple[str, str]:
    summary = json.loads((folder / SUMMARY_FILE).read_text())
    record = summary.pop("provenance", None) or read_parquet_provenance(folder / FLOWS_FILE)
    fct = summary.pop("fct", None)
    groups = summary.pop("collectives", None)
    jobs = summary.pop("jobs", None)
    flows = pl.read_parquet(folder / FLOWS_FILE)
    parts = [_section("Provenance", _key_values(record or {}))]
    figures = [p for p in sorted(folder.glob("*.png")) if p.name != COLLECTIVE_TIMELINE_PLOT]
    if figures:
        parts.append(_section("Plots", "".join(_image_file(p) for p in figures)))
    if (folder / COLLECTIVES_FILE).exists():
        parts.append(_section("Collectives", _collectives(folder, groups or [])))
    if jobs:
        parts.append(_section("Jobs", "<p>Per job (summary.json's \"jobs\"; each flow's job is the "
                                      "<code>job</code> column of flows.parquet): FCT over its finished "
                                      "flows, a collective job's CCT over its finished iterations.</p>"
                                      + _table(pl.DataFrame(jobs))))
    if fct is not None:
        parts.append(_section("FCT statistics", _fct_tables(fct)))
    parts.append(_section("Summary", _key_values(summary)))
    shown = flows.select([c for c in FLOW_COLUMNS if c in flows.columns] + (["job"] if jobs else []))
    more = f"<p>First {FLOW_ROWS} of {flows.height} flows; all are in {FLOWS_FILE}.</p>" if flows.height > FLOW_ROWS else ""
    parts.append(_section("Flows", _table(shown.head(FLOW_ROWS)) + more))
    scenario = folder / SCENARIO_FILE
    if scenario.exists():
        parts.append(_section("Scenario (resolved)", f"<pre>{html.escape(scenario.read_text())}</pre>"))
    return f"retx run: {summary.get('name', folder.name)}", "\n".join(parts)


def _collectives(folder: Path, groups: list[dict[str, Any]]) -> str:
    """A collective run's numbers: summary.json's per-group entry, the iterations
    (collectives.parquet) and the timeline of the first iteration."""
    table = pl.read_parquet(folder / COLLECTIVES_FILE)
    shown = table.select([c for c in COLLECTIVE_COLUMNS if c in table.columns])
    more = (f"<p>First {COLLECTIVE_ROWS} of {table.height} iterations; all are in {COLLECTIVES_FILE}.</p>"
            if table.height > COLLECTIVE_ROWS else "")
    body = ("<p>Per group, over its finished iterations (summary.json's \"collectives\"): CCT is the "
            "collective completion time, ideal the sum of its steps alone on an empty network, busbw "
            "NCCL's bus bandwidth.</p>" + (_table(pl.DataFrame(groups)) if groups else "")
            + "<p>Per group and iteration (collectives.parquet; its steps are in collective_steps.parquet):</p>"
            + _table(shown.head(COLLECTIVE_ROWS)) + more)
    timeline = folder / COLLECTIVE_TIMELINE_PLOT
    return body + (_image_file(timeline) if timeline.exists() else "")


@dataclass
class _Sweep:
    """A sweep folder read for its report: what was swept, and each variant (a point of the
    grid, its seeds pooled) with its numbers."""

    name: str  # the base scenario's name
    grid: dict[str, list[Any]]  # swept key -> values, as asked for
    seeds: list[int]
    params: list[str]  # the swept keys that tell variants apart (runs.parquet's columns)
    runs: pl.DataFrame  # runs.parquet, with `variant`
    flows: pl.DataFrame  # every finished run's flows, with `variant`
    metrics: pl.DataFrame  # per variant: `runs`, and per METRICS column <c>_mean, <c>_low, <c>_high
    buckets: pl.DataFrame  # per variant and size bucket: `flows`, and per BUCKET_QUANTILES <c>, <c>_low, <c>_high
    # Every finished run's collectives.parquet with its `hash` and `variant` (no rows: no collective).
    collectives: pl.DataFrame = field(default_factory=pl.DataFrame)
    # The metrics in `metrics`: METRICS, and COLLECTIVE_METRICS when the runs ran a collective.
    labels: dict[str, str] = field(default_factory=dict)


# Per-run numbers compared across variants: run_metrics' and the bytes a run retransmitted.
METRICS = {"mean_fct_us": "mean FCT (us)", "slowdown_p50": "slowdown p50", "slowdown_p99": "slowdown p99",
           "goodput_gbps": "goodput (Gbps, mean over flows)", "retx_bytes": "retransmitted bytes per run"}
PLOTTED_METRICS = ["mean_fct_us", "slowdown_p99", "goodput_gbps", "retx_bytes"]
# Per-run numbers of a collective workload: the means over its groups' finished iterations.
COLLECTIVE_METRICS = {"cct_us": "collective CCT (us)", "busbw_gbps": "collective busbw (Gbps)"}
COLLECTIVE_CCT = "collective CCT by variant"
# Slowdown quantiles per size bucket: column -> quantile.
BUCKET_QUANTILES = {"slowdown_median": 0.5, "slowdown_p99": 0.99}
# Bootstrap of a bucket's quantiles: resamples, their seed (a report is reproducible), the
# fewest flows worth resampling, and how many resampled values to hold at once (memory).
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
BOOTSTRAP_MIN_FLOWS = 10
# Fewer seeds per variant than this: the metrics' intervals come with a warning.
MIN_SEEDS_FOR_INTERVALS = 5
BOOTSTRAP_VALUES = 4_000_000
# runs.parquet's columns besides the swept keys.
RUN_COLUMNS = ("seed", "hash", "status", "error", "wall_seconds")
# A numeric parameter spanning this ratio or more is drawn on a log x axis (loss rates, say).
LOG_X_RATIO = 100


def sweep_figures(folder: str | Path) -> dict[str, Figure]:
    """The figures of a sweep folder's report, by title (for a notebook, or to check them)."""
    return _figures(_read_sweep(Path(folder)))


def _sweep(folder: Path) -> tuple[str, str]:
    sweep = _read_sweep(folder)
    summary_path = folder / SWEEP_SUMMARY_FILE
    record = read_parquet_provenance(summary_path if summary_path.exists() else folder / RUNS_FILE)
    done = sweep.runs.filter(pl.col("status") == "done").height
    about = {"base scenario": f"{sweep.name} (its text, with the grid: at the end)",
             **{key: ", ".join(_value_text(v) for v in values) for key, values in sweep.grid.items()},
             "seeds": ", ".join(str(seed) for seed in sweep.seeds),
             "runs": f"{done} of {sweep.runs.height} done"}
    parts = [_section("Sweep", _key_values(about)), _section("Provenance", _key_values(record))]
    failed = sweep.runs.filter(pl.col("status") != "done")
    if failed.height:
        parts.append(_section("Failed runs", "<div class=\"failed\">" + _table(failed.drop("variant")) + "</div>"))
    figures = _figures(sweep)
    if figures:
        parts += [_metrics_section(sweep, figures),
                  _section("Slowdown CDF", "<p>The finished flows of all of a variant's seeds, pooled.</p>"
                           + _images({"slowdown CDF": figures["slowdown CDF"]})),
                  _buckets_section(sweep, figures)]
        if COLLECTIVE_CCT in figures:
            parts.insert(-2, _section("Collectives", (
                "<p>Collective completion time by variant: the mean over every group and finished iteration "
                "of all of a variant's seeds (min to max), its ideal (black) and mean slowdown.</p>"
                + _images({COLLECTIVE_CCT: figures[COLLECTIVE_CCT]}))))
    parts.append(_section("Runs", _table(sweep.runs.drop("variant"))))
    sweep_file = folder / SWEEP_FILE
    if sweep_file.exists():
        parts.append(_section("Sweep (scenario and grid)", f"<pre>{html.escape(sweep_file.read_text())}</pre>"))
    return _sweep_title(sweep), "\n".join(parts)


def _metrics_section(sweep: _Sweep, figures: dict[str, Figure]) -> str:
    labels = list(sweep.labels.values())
    cells = {label: [_in_interval(*row) for row in sweep.metrics.select(f"{c}_mean", f"{c}_low", f"{c}_high").iter_rows()]
             for c, label in sweep.labels.items()}
    fewest = min(sweep.metrics["runs"].to_list(), default=0)
    warning = ("" if fewest >= MIN_SEEDS_FOR_INTERVALS or fewest < 2 else
               f"<p class=\"warning\">Warning: {fewest} seeds per variant is too few for these intervals to "
               f"mean much: from {fewest} runs a bootstrap interval is little more than their range. Run "
               f"{MIN_SEEDS_FOR_INTERVALS} seeds or more (<code>--seeds {MIN_SEEDS_FOR_INTERVALS}</code>).</p>")
    return _section("Metrics by variant", (
        "<p>Each run (one seed) gives one number per metric, over its finished flows. Shown: the mean "
        "over a variant's seeds and its 95 % confidence interval [low, high], a percentile bootstrap "
        f"of the mean across seeds ({BOOTSTRAP_RESAMPLES} resamples; none from one seed), which stays "
        "within what the runs gave, so a positive quantity never gets a negative end "
        "(summary.parquet keeps the Student t half-width)."
        + (" A run's collective CCT and busbw are the means over its groups' finished iterations."
           if set(COLLECTIVE_METRICS) <= set(sweep.labels) else "") + "</p>" + warning
        + _table(_with_cells(sweep.metrics, ["variant", "runs"], cells), tuple(labels))
        + _images({title: f for title, f in figures.items() if title in labels})))


def _buckets_section(sweep: _Sweep, figures: dict[str, Figure]) -> str:
    cells = {_quantile_label(c): [_in_interval(*row) for row in sweep.buckets.select(c, f"{c}_low", f"{c}_high").iter_rows()]
             for c in BUCKET_QUANTILES}
    return _section("Slowdown by flow size", (
        "<p>Median and p99 slowdown of the finished flows in each size bucket, all of a variant's seeds "
        "pooled, with a 95 % confidence interval [low, high]: a percentile bootstrap over those flows "
        f"({BOOTSTRAP_RESAMPLES} resamples; none under {BOOTSTRAP_MIN_FLOWS} flows). Flows of one run "
        "share the network, so this interval leaves out how runs differ, which the intervals across "
        "seeds above measure.</p>"
        + _table(_with_cells(sweep.buckets, ["variant", "bucket", "flows"], cells), tuple(cells))
        + _images({title: f for title, f in figures.items() if title.startswith("by size")})))


def _read_sweep(folder: Path) -> _Sweep:
    runs = pl.read_parquet(folder / RUNS_FILE)
    swept = [c for c in runs.columns if c not in RUN_COLUMNS]
    # Keys given one value are the same in every variant (the title names them).
    params = [p for p in swept if runs[p].n_unique() > 1] or swept
    sweep_file = folder / SWEEP_FILE
    declared = tomllib.loads(sweep_file.read_text()) if sweep_file.exists() else {}
    table = declared.get(SWEEP_TABLE, {})
    grid = table.get("set") or {p: runs[p].unique(maintain_order=True).to_list() for p in swept}
    seeds = table.get("seeds") or runs["seed"].unique(maintain_order=True).to_list()
    name = str(declared.get("name", folder.name))
    runs = runs.with_columns(variant=_variant(params, name))
    flows_path = folder / FLOWS_FILE
    flows = pl.read_parquet(flows_path) if flows_path.exists() else pl.DataFrame()
    if flows.height:
        flows = flows.join(runs.select("hash", "variant"), on="hash", how="left", maintain_order="left")
    collectives = _read_collectives(folder, runs)
    per_run = _per_run(runs, flows)
    labels = dict(METRICS)
    if collectives.height and per_run.height:
        per_run = per_run.join(_collective_per_run(collectives), on="hash", how="left", maintain_order="left")
        labels.update(COLLECTIVE_METRICS)
    metrics = _mean_ci(per_run, ["variant", *params], list(labels)) if per_run.height else pl.DataFrame()
    return _Sweep(name, grid, seeds, params, runs, flows, metrics, _buckets(flows), collectives, labels)


def _read_collectives(folder: Path, runs: pl.DataFrame) -> pl.DataFrame:
    """The collectives.parquet of every finished run (points/<hash>/), with its `hash` and
    `variant`; no rows when none has one."""
    parts = []
    for run_hash, variant in runs.filter(pl.col("status") == "done").select("hash", "variant").iter_rows():
        path = folder / POINTS_DIR / run_hash / COLLECTIVES_FILE
        if path.exists():
            parts.append(pl.read_parquet(path).with_columns(hash=pl.lit(run_hash), variant=pl.lit(variant)))
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def _collective_per_run(collectives: pl.DataFrame) -> pl.DataFrame:
    """Per run (`hash`): COLLECTIVE_METRICS, the means over its groups' finished iterations
    (NaN, left out of the means across seeds, when none finished)."""
    return collectives.group_by("hash", maintain_order=True).agg(
        [pl.col(c).fill_nan(None).mean().fill_null(math.nan).alias(c) for c in COLLECTIVE_METRICS])


def _sweep_title(sweep: _Sweep) -> str:
    """Names the base scenario and the grid: "retx sweep of demo: transport.cc \u2208 {dcqcn, hpcc} \u00d7 2 seeds"."""
    axes = [f"{key} \u2208 {{{', '.join(_value_text(v) for v in values)}}}" for key, values in sweep.grid.items()]
    seeds = f"{len(sweep.seeds)} seed{'s' if len(sweep.seeds) != 1 else ''}"
    return f"retx sweep of {sweep.name}: " + " \u00d7 ".join([*axes, seeds])


def _variant(params: list[str], name: str) -> pl.Expr:
    """A variant's label: its values of `params` ("transport.cc=hpcc, nic.mtu=1024"); `name`
    (the base scenario's) when only seeds were swept."""
    if not params:
        return pl.lit(name)
    return pl.concat_str([pl.lit(f"{p}=") + pl.col(p).cast(pl.String) for p in params], separator=", ")


def _per_run(runs: pl.DataFrame, flows: pl.DataFrame) -> pl.DataFrame:
    """One row per finished run: its row of runs.parquet and its METRICS."""
    if not flows.height:
        return pl.DataFrame()
    numbers = [{"hash": run_hash, **run_metrics(rows), "retx_bytes": float(rows["retx_bytes"].sum())}
               for (run_hash,), rows in flows.group_by("hash", maintain_order=True)]
    return runs.filter(pl.col("status") == "done").join(pl.DataFrame(numbers), on="hash", maintain_order="left")


def _mean_ci(per_run: pl.DataFrame, keys: list[str], columns: list[str]) -> pl.DataFrame:
    """Per value of `keys`, over its runs: `runs`, and per column `<c>_mean`, `<c>_low` and
    `<c>_high`, the 95 % interval of the mean by a percentile bootstrap over the runs
    (`_bootstrap_mean`; null for fewer than 2). A bootstrap interval stays within what the runs
    gave, so a positive quantity never gets a negative end, as a Student t interval from two
    seeds did (mean FCT from -960 to 2,570 us). NaN values (no finished flow) are left out."""
    rows = []
    for key_values, group in per_run.group_by(keys, maintain_order=True):
        row: dict[str, Any] = {**dict(zip(keys, key_values)), "runs": group.height}
        for c in columns:
            values = group[c].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy()
            low, high = _bootstrap_mean(values)
            row.update({f"{c}_mean": float(values.mean()) if len(values) else None, f"{c}_low": low, f"{c}_high": high})
        rows.append(row)
    schema: dict[str, Any] = {**{k: per_run.schema[k] for k in keys}, "runs": pl.Int64,
                              **{f"{c}_{part}": pl.Float64 for c in columns for part in ("mean", "low", "high")}}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _bootstrap_mean(values: np.ndarray) -> tuple[Optional[float], Optional[float]]:
    """The 95 % percentile-bootstrap interval of the mean of `values` (BOOTSTRAP_RESAMPLES
    resamples with replacement, seeded: a report is reproducible); (None, None) for fewer than
    two values. From two values it is their range."""
    if len(values) < 2:
        return None, None
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = rng.choice(values, size=(BOOTSTRAP_RESAMPLES, len(values))).mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def _buckets(flows: pl.DataFrame) -> pl.DataFrame:
    """Per variant and SIZE_BUCKETS bucket, over the finished flows of its seeds pooled:
    `flows`, and per BUCKET_QUANTILES the quantile and its bootstrap interval (`_bootstrap`)."""
    done = finished_flows(flows) if flows.height else flows
    if not done.height:
        return pl.DataFrame()
    labels = [label for label, _, _ in SIZE_BUCKETS]
    bucket = pl.lit(labels[0])
    for label, size, _ in SIZE_BUCKETS[1:]:  # contiguous: a size is in the last bucket it reaches
        bucket = pl.when(pl.col("size_bytes") >= size).then(pl.lit(label)).otherwise(bucket)
    rows = []
    grouped = done.with_columns(bucket=bucket.cast(pl.Enum(labels))).sort("bucket", maintain_order=True)
    for (variant, name), group in grouped.group_by("variant", "bucket", maintain_order=True):
        slowdowns = group["slowdown"].to_numpy()
        row: dict[str, Any] = {"variant": variant, "bucket": name, "flows": len(slowdowns)}
        intervals = _bootstrap(slowdowns, list(BUCKET_QUANTILES.values()))
        for (column, q), (low, high) in zip(BUCKET_QUANTILES.items(), intervals):
            row.update({column: float(np.quantile(slowdowns, q)), f"{column}_low": low, f"{column}_high": high})
        rows.append(row)
    return pl.DataFrame(rows)


def _bootstrap(values: np.ndarray, quantiles: list[float]) -> list[tuple[Optional[float], Optional[float]]]:
    """The 95 % percentile-bootstrap interval of each of `quantiles` of `values` (linear
    interpolation, as retx.metrics): BOOTSTRAP_RESAMPLES resamples with replacement, each
    quantile's 2.5th and 97.5th percentile over them; (None, None) under BOOTSTRAP_MIN_FLOWS
    values, too few to resample."""
    if len(values) < BOOTSTRAP_MIN_FLOWS:
        return [(None, None)] * len(quantiles)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    at_once = max(1, BOOTSTRAP_VALUES // len(values))
    estimates = np.concatenate([
        np.quantile(rng.choice(values, size=(min(at_once, BOOTSTRAP_RESAMPLES - start), len(values))), quantiles, axis=1)
        for start in range(0, BOOTSTRAP_RESAMPLES, at_once)], axis=1)
    low, high = np.quantile(estimates, [0.025, 0.975], axis=1)
    return [(float(a), float(b)) for a, b in zip(low, high)]


def _figures(sweep: _Sweep) -> dict[str, Figure]:
    """Variants compared: each plotted metric against the swept parameters, the slowdown CDF,
    and slowdown by size bucket; none when no run finished a flow."""
    if not sweep.metrics.height or not sweep.buckets.height:
        return {}
    figures = {METRICS[c]: _parameter_figure(sweep.metrics, sweep.params, c) for c in PLOTTED_METRICS}
    figures["slowdown CDF"] = plot_fct_cdf(sweep.flows, by="variant")
    if sweep.collectives.height:
        figures[COLLECTIVE_CCT] = plot_collective_cct(sweep.collectives, by="variant")
    buckets = sweep.buckets.with_columns(pl.col("bucket").cast(pl.String))
    for c in BUCKET_QUANTILES:
        figures[f"by size: {_quantile_label(c)}"] = plot_bars(
            buckets, "bucket", c, "variant", interval=(f"{c}_low", f"{c}_high"), xlabel="flow size",
            ylabel=f"{_quantile_label(c)} (seeds pooled; 95 % CI, bootstrap)")
    return figures


def _parameter_figure(metrics: pl.DataFrame, params: list[str], column: str) -> Figure:
    """One metric by variant, mean over seeds with its CI: against the first numeric parameter
    as lines (one per combination of the others), else as bars grouped by the first parameter
    (a bar per combination of the others)."""
    numeric = [p for p in params if metrics.schema[p].is_numeric()]
    x = numeric[0] if numeric else (params[0] if params else "variant")
    others = [p for p in params if p != x]
    table = metrics.with_columns(low=pl.col(f"{column}_low"), high=pl.col(f"{column}_high"), others=_variant(others, ""))
    series = "others" if others else None
    ylabel = f"{METRICS[column]} (mean over seeds, 95 % CI, bootstrap)"
    if numeric:
        low, high = metrics.select(pl.col(x).min().alias("low"), pl.col(x).max().alias("high")).row(0)
        log_x = low > 0 and high >= LOG_X_RATIO * low
        return plot_lines(table, x, f"{column}_mean", series, interval=("low", "high"), log_x=log_x, ylabel=ylabel)
    return plot_bars(table, x, f"{column}_mean", series, interval=("low", "high"), ylabel=ylabel)


def _with_cells(table: pl.DataFrame, keys: list[str], cells: dict[str, list[str]]) -> pl.DataFrame:
    """`keys` of `table`, then columns of text cells."""
    return table.select(keys).with_columns(pl.Series(label, values, dtype=pl.String) for label, values in cells.items())


def _in_interval(value: float, low: Optional[float], high: Optional[float]) -> str:
    return _format(value) if low is None or high is None else f"{_format(value)} [{_format(low)}, {_format(high)}]"


def _quantile_label(column: str) -> str:
    return column.replace("_", " ")


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _section(title: str, body: str) -> str:
    return f"<h2>{html.escape(title)}</h2>\n{body}"


def _with_contents(body: str) -> str:
    """The page's body with an id on each of its `<h2>` headings (a run's, a sweep's or a
    calibration's page alike), after links to them in order (none for fewer than two)."""
    anchors: list[tuple[str, str]] = []

    def anchored(match: re.Match[str]) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", html.unescape(match.group(1)).lower()).strip("-") or "section"
        anchor, n = base, 2
        while anchor in {a for a, _ in anchors}:
            anchor, n = f"{base}-{n}", n + 1
        anchors.append((anchor, match.group(1)))
        return f'<h2 id="{anchor}">{match.group(1)}</h2>'

    body = re.sub(r"<h2>(.*?)</h2>", anchored, body)
    if len(anchors) < 2:
        return body
    links = " &middot; ".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in anchors)
    return f"<nav class=\"contents\">{links}</nav>\n{body}"


def _key_values(items: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td class=\"text\">{html.escape(_format(v))}</td></tr>"
                   for k, v in items.items())
    return f"<table>{rows}</table>"


def _fct_tables(fct: dict[str, Any]) -> str:
    """The "fct" block of summary.json: one row overall, one per size bucket."""
    rows = [("all", fct.get("overall", {}))] + list(fct.get("by_size", {}).items())
    head = ("<tr><th>flows</th><th>count</th><th>FCT p50 (us)</th><th>p95</th><th>p99</th>"
            "<th>slowdown p50</th><th>p95</th><th>p99</th></tr>")
    body = ""
    for name, stats in rows:
        cells = [stats.get("count")] + [stats.get(m, {}).get(p) for m in ("fct_us", "slowdown") for p in ("p50", "p95", "p99")]
        body += f"<tr><td class=\"text\">{html.escape(name)}</td>" + "".join(f"<td>{_format(c)}</td>" for c in cells) + "</tr>"
    basis = html.escape(str(fct.get("basis", "")))
    return f"<p>{basis}</p><table>{head}{body}</table>"


def _table(frame: pl.DataFrame, numbers: tuple[str, ...] = ()) -> str:
    """An HTML table; numbers right-aligned, as are the `numbers` columns (numbers as text)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    opens = ["<td>" if dtype.is_numeric() or name in numbers else '<td class="text">'
             for name, dtype in frame.schema.items()]
    body = "".join(
        "<tr>" + "".join(f"{o}{html.escape(_format(v))}</td>" for v, o in zip(row, opens)) + "</tr>"
        for row in frame.iter_rows()
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _format(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _image_file(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<p>{html.escape(path.name)}</p><img alt=\"{html.escape(path.name)}\" src=\"data:image/png;base64,{data}\">"


def _images(figures: dict[str, Figure]) -> str:
    """Figures side by side, two to a row, each embedded as a PNG."""
    return "<div class=\"figures\">" + "".join(_image_figure(f, title) for title, f in figures.items()) + "</div>"


def _image_figure(figure: Figure, alt: str) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"<img alt=\"{html.escape(alt)}\" src=\"data:image/png;base64,{data}\">"
