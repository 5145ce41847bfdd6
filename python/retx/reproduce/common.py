"""What every reproduction writes."""

from pathlib import Path

import polars as pl


def save_table(table: pl.DataFrame, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "table.parquet")
    table.write_csv(out_dir / "table.csv")
