"""A calibration folder shown: `plot_targets` (targets.png: each target against its most
influential parameters) and `report_page` (the HTML body `retx report OUT` wraps), with the
names of the files they read, which the search writes (`retx.calibrate.search`).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from retx.calibrate.spec import Spec, value_text
from retx.calibrate.verdict import influence, params_text
from retx.provenance import read_parquet_provenance

# The files of a calibration folder the page shows.
TRIALS_FILE = "trials.parquet"
BEST_FILE = "best.json"
VERDICT_FILE = "verdict.json"
PLOT_FILE = "targets.png"
SPEC_FILE = "spec.toml"
# Parameters plotted per target.
PLOTTED_PARAMS = 2
# A target whose trials span this factor or more is drawn on a log scale.
LOG_Y_RATIO = 20.0


# --- the plot ------------------------------------------------------------------------------------

def plot_targets(trials: pl.DataFrame, spec: Spec, verdict_: Optional[dict[str, Any]] = None,
                 path: Optional[Union[str, Path]] = None) -> Figure:
    """A row per target, a panel per most influential parameter (up to PLOTTED_PARAMS): each
    finished trial's mean over seeds (bars: min to max over seeds), the paper's value and its
    tolerance band, the best point circled."""
    params = {p.key: p for p in spec.params}
    columns = min(PLOTTED_PARAMS, len(spec.params))
    rows = len(spec.targets)
    figure = Figure(figsize=(5.2 * columns, 3.4 * rows))
    FigureCanvasAgg(figure)
    done = trials.filter(pl.col("status") == "done")
    best = (verdict_ or {}).get("best_trial")
    for r, target in enumerate(spec.targets):
        ranked = influence(trials, spec.params, target)
        for c, key in enumerate(list(ranked)[:columns]):
            axes = figure.add_subplot(rows, columns, r * columns + c + 1)
            param = params[key]
            usable = done.filter(pl.col(target.name).is_not_null())
            if param.kind == "categorical":
                labels = [value_text(v) for v in param.choices]
                x = np.array([labels.index(value_text(v)) for v in usable[key].to_list()], dtype=float)
                # Spread the trials of one choice a little, so they do not hide each other.
                x += 0.25 * (np.arange(len(x)) % 7 - 3) / 3
                axes.set_xticks(range(len(labels)), labels)
            else:
                x = usable[key].cast(pl.Float64).to_numpy()
                if param.log:
                    axes.set_xscale("log")
                    for axis_formatter in (axes.xaxis.set_major_formatter, axes.xaxis.set_minor_formatter):
                        axis_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            y = usable[target.name].to_numpy()
            if len(y) and np.nanmin(y) > 0 and np.nanmax(y) >= LOG_Y_RATIO * np.nanmin(y):
                axes.set_yscale("log")
            low = y - usable[f"{target.name}_min"].fill_null(np.nan).to_numpy()
            high = usable[f"{target.name}_max"].fill_null(np.nan).to_numpy() - y
            axes.axhspan(target.value - target.tolerance, target.value + target.tolerance, color="tab:green", alpha=0.15,
                         label=f"paper {target.describe()}")
            axes.axhline(target.value, color="tab:green", linewidth=1)
            axes.errorbar(x, y, yerr=np.nan_to_num(np.vstack([low, high])), fmt="o", markersize=4, alpha=0.7,
                          elinewidth=0.8, label="trials (mean, min-max over seeds)")
            if best is not None and best in usable["trial"].to_list():
                i = usable["trial"].to_list().index(best)
                axes.plot([x[i]], [y[i]], "o", markersize=11, markerfacecolor="none", markeredgecolor="tab:red",
                          label=f"best point (trial {best})")
            score = ranked[key]
            unit = f" ({param.unit})" if param.unit else ""
            axes.set_xlabel(f"{key}{unit}")
            axes.set_ylabel(target.name)
            strength = f"influence {score:.2f}" if math.isfinite(score) else "influence n/a"
            axes.set_title(f"{target.name} vs {key}: {strength}", fontsize=9)
            if r == 0 and c == 0:
                axes.legend(fontsize=7)
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=110)
    return figure


# --- the report page -----------------------------------------------------------------------------

def is_calibration(folder: Union[str, Path]) -> bool:
    folder = Path(folder)
    return (folder / TRIALS_FILE).exists() and (folder / VERDICT_FILE).exists()


def report_page(folder: Union[str, Path]) -> tuple[str, str]:
    """The title and HTML body of a calibration folder's report (`retx report OUT`): the
    verdict per target, what was covered, the best points, the plot, the trials and the spec."""
    folder = Path(folder)
    verdict_ = json.loads((folder / VERDICT_FILE).read_text())
    best = json.loads((folder / BEST_FILE).read_text()) if (folder / BEST_FILE).exists() else {"best": []}
    trials = pl.read_parquet(folder / TRIALS_FILE)
    record = read_parquet_provenance(folder / TRIALS_FILE)
    spec_text = (folder / SPEC_FILE).read_text() if (folder / SPEC_FILE).exists() else ""
    esc = html.escape
    parts = [f"<p>{esc(verdict_.get('summary', ''))}</p>"]
    rows = "".join(
        f"<tr><td class=\"text\">{esc(name)}</td><td class=\"text\">{esc(entry['verdict'])}</td>"
        f"<td>{esc(value_text(entry.get('paper')))} \u00b1 {esc(str(entry.get('tolerance', '')))}</td><td class=\"text\">{esc(entry.get('statement', ''))}</td></tr>"
        for name, entry in verdict_.get("targets", {}).items())
    parts.append("<h2>Verdict</h2><table><tr><th>target</th><th>verdict</th><th>paper</th><th>what the trials show"
                 f"</th></tr>{rows}</table>")
    coverage = verdict_.get("coverage", {})
    cover = {**{k: v for k, v in coverage.items() if k != "params"},
             **{f"range of {k}": v for k, v in coverage.get("params", {}).items()}}
    parts.append("<h2>Coverage</h2>" + _html_key_values(cover))
    best_rows = "".join(
        f"<tr><td>{b['trial']}</td><td class=\"text\">{esc(params_text(b['params']))}</td>"
        f"<td>{esc(value_text(b['loss']))}</td><td class=\"text\">{esc(', '.join(b['satisfies']) or '-')}</td></tr>"
        for b in best.get("best", []))
    parts.append("<h2>Best points</h2><table><tr><th>trial</th><th>parameters</th><th>loss</th>"
                 f"<th>targets within tolerance</th></tr>{best_rows}</table>")
    plot = folder / PLOT_FILE
    if plot.exists():
        import base64

        data = base64.b64encode(plot.read_bytes()).decode("ascii")
        parts.append(f"<h2>Targets against the most influential parameters</h2>"
                     f"<img alt=\"{PLOT_FILE}\" src=\"data:image/png;base64,{data}\">")
    shown_trials = trials.drop([c for c in trials.columns if c.endswith("_per_seed")] + ["hashes"], strict=False)
    shown_trials = shown_trials.with_columns(pl.col("seeds").cast(pl.List(pl.String)).list.join(", ")) \
        if "seeds" in shown_trials.columns else shown_trials
    parts.append(f"<h2>Trials ({trials.height})</h2>" + _html_table(shown_trials.head(200))
                 + (f"<p>First 200 of {trials.height}; all are in {TRIALS_FILE}.</p>" if trials.height > 200 else ""))
    parts.append("<h2>Provenance</h2>" + _html_key_values(record))
    parts.append(f"<h2>Spec</h2><pre>{esc(spec_text)}</pre>")
    title = f"retx calibration of {verdict_.get('calibrating') or folder.name}"
    return title, "\n".join(parts)


def _html_key_values(items: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td class=\"text\">{html.escape(_cell_text(v))}</td></tr>"
                   for k, v in items.items())
    return f"<table>{rows}</table>"


def _html_table(frame: pl.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell_text(v))}</td>" for v in row) + "</tr>"
                   for row in frame.iter_rows())
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return value_text(value)
    return str(value)
