"""One self-contained HTML page for a run folder (`retx run`) or a sweep folder (`retx sweep`):
provenance, the scenario, the summary tables and the plots, embedded (PNG as base64), so the
file can be mailed or attached as is. `retx report DIR` writes DIR/report.html.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any, Optional

import polars as pl
from matplotlib.figure import Figure

from retx.plots import plot_lines
from retx.provenance import read_parquet_provenance
from retx.results import FLOWS_FILE, SCENARIO_FILE, SUMMARY_FILE

REPORT_FILE = "report.html"
RUNS_FILE = "runs.parquet"
SWEEP_SUMMARY_FILE = "summary.parquet"
SWEEP_FILE = "sweep.toml"
# Flows listed in a run's report; the rest are in flows.parquet.
FLOW_ROWS = 20
FLOW_COLUMNS = ["flow_id", "src", "dst", "size_bytes", "fct_us", "slowdown", "goodput_gbps",
                "retx_bytes", "naks", "timeouts", "completed"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
.failed { color: #b00; }
"""


class ReportError(ValueError):
    """The folder holds neither a run nor a sweep (one line, for the command line)."""


def write_report(folder: str | Path) -> Path:
    """Writes `folder`/report.html for the run or sweep in `folder`; returns its path."""
    folder = Path(folder)
    if (folder / RUNS_FILE).exists():
        title, body = _sweep(folder)
    elif (folder / SUMMARY_FILE).exists() and (folder / FLOWS_FILE).exists():
        title, body = _run(folder)
    else:
        raise ReportError(f"{folder}: neither a run folder (summary.json, flows.parquet) "
                          f"nor a sweep folder (runs.parquet)")
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
            f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")
    path = folder / REPORT_FILE
    path.write_text(page, encoding="utf-8")
    return path


def _run(folder: Path) -> tuple[str, str]:
    summary = json.loads((folder / SUMMARY_FILE).read_text())
    record = summary.pop("provenance", None) or read_parquet_provenance(folder / FLOWS_FILE)
    fct = summary.pop("fct", None)
    flows = pl.read_parquet(folder / FLOWS_FILE)
    parts = [_section("Provenance", _key_values(record or {}))]
    figures = sorted(folder.glob("*.png"))
    if figures:
        parts.append(_section("Plots", "".join(_image_file(p) for p in figures)))
    if fct is not None:
        parts.append(_section("FCT statistics", _fct_tables(fct)))
    parts.append(_section("Summary", _key_values(summary)))
    shown = flows.select([c for c in FLOW_COLUMNS if c in flows.columns])
    more = f"<p>First {FLOW_ROWS} of {flows.height} flows; all are in {FLOWS_FILE}.</p>" if flows.height > FLOW_ROWS else ""
    parts.append(_section("Flows", _table(shown.head(FLOW_ROWS)) + more))
    scenario = folder / SCENARIO_FILE
    if scenario.exists():
        parts.append(_section("Scenario (resolved)", f"<pre>{html.escape(scenario.read_text())}</pre>"))
    return f"retx run: {summary.get('name', folder.name)}", "\n".join(parts)


def _sweep(folder: Path) -> tuple[str, str]:
    runs = pl.read_parquet(folder / RUNS_FILE)
    summary_path = folder / SWEEP_SUMMARY_FILE
    summary = pl.read_parquet(summary_path) if summary_path.exists() else pl.DataFrame()
    record = read_parquet_provenance(summary_path) if summary_path.exists() else {}
    params = [c for c in runs.columns if c not in ("seed", "hash", "status", "error", "wall_seconds")]
    done = runs.filter(pl.col("status") == "done").height
    parts = [_section("Provenance", _key_values(record)),
             _section("Points", f"<p>{done} of {runs.height} runs done over {len(params)} "
                                f"parameter(s): {html.escape(', '.join(params))}.</p>")]
    failed = runs.filter(pl.col("status") != "done")
    if failed.height:
        parts.append(_section("Failed runs", "<div class=\"failed\">" + _table(failed) + "</div>"))
    if summary.height:
        parts.append(_section("Summary: mean and 95 % confidence interval across seeds", _table(summary)))
        figure = _sweep_figure(summary, params)
        if figure is not None:
            parts.append(_section("Mean FCT by point", _image_figure(figure)))
    parts.append(_section("Runs", _table(runs)))
    sweep = folder / SWEEP_FILE
    if sweep.exists():
        parts.append(_section("Sweep (scenario and grid)", f"<pre>{html.escape(sweep.read_text())}</pre>"))
    return f"retx sweep: {folder.name}", "\n".join(parts)


def _sweep_figure(summary: pl.DataFrame, params: list[str]) -> Optional[Figure]:
    """Mean FCT with its confidence interval per point: x the first parameter, one line per
    value of the others."""
    if not params or "mean_fct_us_mean" not in summary.columns:
        return None
    x, rest = params[0], params[1:]
    table = summary.with_columns(
        point=pl.concat_str([pl.col(p).cast(pl.String) for p in rest], separator=", ") if rest else pl.lit("all"),
        x_label=pl.col(x).cast(pl.String),
    )
    figure = plot_lines(table, "x_label", "mean_fct_us_mean", "point", xlabel=x, ylabel="mean FCT (us)")
    axes = figure.axes[0]
    for (name,), rows in table.group_by("point", maintain_order=True):
        axes.errorbar(rows["x_label"], rows["mean_fct_us_mean"], yerr=rows["mean_fct_us_ci95"].fill_null(0.0),
                      fmt="none", capsize=3, color="black", alpha=0.6)
    return figure


def _section(title: str, body: str) -> str:
    return f"<h2>{html.escape(title)}</h2>\n{body}"


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


def _table(frame: pl.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    opens = ["<td>" if dtype.is_numeric() else '<td class="text">' for dtype in frame.dtypes]
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


def _image_figure(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"<img alt=\"figure\" src=\"data:image/png;base64,{data}\">"
