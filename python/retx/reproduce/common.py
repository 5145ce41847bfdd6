"""What every reproduction writes."""

from pathlib import Path
from typing import Optional, Sequence

import polars as pl


def save_table(table: pl.DataFrame, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "table.parquet")
    table.write_csv(out_dir / "table.csv")


def number(value: object) -> float:
    """A polars aggregate (`.max()`, `.mean()`, ...) of a numeric column as a float; polars
    types these as any scalar, and an empty column's as None, which becomes NaN."""
    if value is None:
        return float("nan")
    if isinstance(value, (int, float)):
        return float(value)
    raise TypeError(f"expected a number, got {type(value).__name__}")


def claims_table(claims: Sequence[tuple[str, Optional[float], Optional[float]]]) -> pl.DataFrame:
    """The paper's numbers beside ours: one row per (claim, paper, retx); None where our grid
    has no point for the claim, or the paper no number."""
    return pl.DataFrame(
        {"claim": [c[0] for c in claims], "paper": [c[1] for c in claims], "retx": [c[2] for c in claims]},
        schema={"claim": pl.String, "paper": pl.Float64, "retx": pl.Float64},
    )
