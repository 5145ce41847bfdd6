"""LEFT (Huang et al., APNet'24; slides "Evaluation-Benefit FCT"): LEFT's on-chip memory, "27KB
memory overhead, only 1.7% of the baseline (IRN)", "an average of only 7B additional storage
overhead per connection".

What is computed. `retx memory`'s table (`crates/retx/src/hw/memory.rs`, `left_row`: its
breakdown of LEFT's state is retx's, the slides give none) for the slides' network: 200 Gbps,
32 us, 1 KB packets (a BDP of 800 packets, the slides' "~100 B" bitmap), a 2 Kb pool of 1-byte
blocks, 3 loop registers, 8 gather FIFOs of 8 packets. LEFT costs 7 B per connection plus
1,091 B shared, so its 27 KB (27,648 B) is 3,794 connections' worth: the table's middle row.
Beside it, two IRN baselines: retx's `irn` row (a one-BDP bitmap at the receiver and at the
sender, 203 B per connection) and the slides' own motivation ("5BDP bitmap required per
connection", 500 B: "2.5MB required for 5k connections").

--quick: the same three rows (nothing is simulated; it takes milliseconds).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.memory import memory_table
from retx.plots import plot_bars
from retx.reproduce.common import Claim, absolute, relative, report_claims, save_table
from retx.table import format_table

SLIDES_LEFT_BYTES = 27 * 1024
SLIDES_PCT_OF_IRN = 1.7
SLIDES_PER_CONNECTION = 7.0
CONNECTIONS = [1_000, 3_794, 5_000]
BDP_PACKETS = 800


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    rows = []
    for n in CONNECTIONS:
        t = memory_table("200Gbps", "32us", 1000, n, 2048, 8)
        left = t.filter(pl.col("scheme") == "left").row(0, named=True)
        irn = t.filter(pl.col("scheme") == "irn").row(0, named=True)
        irn_5bdp = n * 5 * BDP_PACKETS / 8
        rows.append({
            "connections": n,
            "left_bytes": left["total_bytes"],
            "left_per_connection": left["per_connection_bytes"],
            "left_average": left["average_bytes"],
            "irn_bytes": irn["total_bytes"],
            "irn_5bdp_bytes": irn_5bdp,
            "left_pct_of_irn": left["total_bytes"] / irn["total_bytes"] * 100.0,
            "left_pct_of_irn_5bdp": left["total_bytes"] / irn_5bdp * 100.0,
            "slides_left_bytes": float(SLIDES_LEFT_BYTES) if n == 3_794 else None,
            "slides_pct_of_irn": SLIDES_PCT_OF_IRN if n == 3_794 else None,
        })
    table = pl.DataFrame(rows, schema_overrides={"slides_left_bytes": pl.Float64, "slides_pct_of_irn": pl.Float64})
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    long = pl.concat([
        table.select(pl.col("connections"), pl.lit(label).alias("scheme"), (pl.col(col) / 1024).alias("kib"))
        for label, col in [("LEFT", "left_bytes"), ("IRN (retx: 2 x 1 BDP)", "irn_bytes"), ("IRN (slides: 5 BDP)", "irn_5bdp_bytes")]
    ])
    plot_bars(long, "connections", "kib", "scheme", out_dir / "plot.png", xlabel="connections",
              ylabel="on-chip KiB", title="LEFT's on-chip memory beside IRN's bitmaps (200 Gbps x 32 us)")
    print(format_table(table))
    print(f"\nLEFT's breakdown: {memory_table('200Gbps', '32us', 1000, 3_794, 2048, 8).filter(pl.col('scheme') == 'left')['breakdown'][0]}")
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv")
    return table


WHY = "left-memory"
KB = relative(0.02, "'27 KB' is rounded to a KB: +-0.5 KB, 2 %")
PCT = absolute(0.05, "'1.7 %' is rounded to a tenth: +-0.05 point")
BYTE = absolute(0.5, "'7 B' is rounded to a byte")


def claims(table: pl.DataFrame) -> list[Claim]:
    """The slides' three figures against the 3,794-connection row (the count at which the
    slides' 27 KB comes out; they do not say how many they counted)."""
    hit = table.filter(pl.col("connections") == 3_794)
    row = hit.row(0, named=True) if hit.height else None

    def ours(col: str) -> float | None:
        return float(row[col]) if row else None

    return [
        Claim("LEFT's on-chip bytes, 3,794 connections", float(SLIDES_LEFT_BYTES), ours("left_bytes"), KB, WHY),
        Claim("LEFT / IRN's 5-BDP bitmaps (%), same", SLIDES_PCT_OF_IRN, ours("left_pct_of_irn_5bdp"), PCT, WHY),
        Claim("LEFT's bytes per connection", SLIDES_PER_CONNECTION, ours("left_per_connection"), BYTE, WHY),
    ]
