"""Aligned plain-text tables for terminal output (polars' own repr truncates and boxes)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl


def format_table(frame: pl.DataFrame, max_rows: int | None = None) -> str:
    rows = frame.head(max_rows) if max_rows is not None else frame
    header = list(frame.columns)
    cells = [[format_value(value) for value in row] for row in rows.iter_rows()]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    widths = [max([len(name)] + [len(row[i]) for row in cells]) for i, name in enumerate(header)]

    def line(values: list[str]) -> str:
        padded = [v.rjust(w) if right else v.ljust(w) for v, w, right in zip(values, widths, numeric)]
        return "  ".join(padded).rstrip()

    lines = [line(header), line(["-" * w for w in widths])] + [line(row) for row in cells]
    if max_rows is not None and frame.height > max_rows:
        lines.append(f"... {frame.height - max_rows} more rows")
    return "\n".join(lines)


def format_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.3g}"
        if abs(value) >= 1e4:
            return f"{value:,.0f}"
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
