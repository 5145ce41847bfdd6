"""What every reproduction writes."""

from pathlib import Path
from typing import Optional

import polars as pl


def save_table(table: pl.DataFrame, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "table.parquet")
    table.write_csv(out_dir / "table.csv")


def claims_table(claims: list[tuple[str, float, Optional[float]]]) -> pl.DataFrame:
    """The paper's numbers beside ours: one row per (claim, paper, retx); None where our grid
    has no point for the claim."""
    return pl.DataFrame(
        {"claim": [c[0] for c in claims], "paper": [c[1] for c in claims], "retx": [c[2] for c in claims]},
        schema={"claim": pl.String, "paper": pl.Float64, "retx": pl.Float64},
    )
