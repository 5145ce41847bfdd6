"""MELO (APNet'17), Fig. 6a: CPU cost of copying out-of-order data out of the reorder buffer.

Two servers under one leaf, one flow at full speed, BDP 512 KB (40 Gbps x ~100 us RTT: 25 us
per link, 4 links per round trip), the switch lossy. MELO puts out-of-order data in host
memory; when a hole fills, the CPU copies the consecutive data behind it to the application.
The paper measures that copying every packet at 40 Gbps takes 82.2 % of one core
(E5-2630 v3), so CPU % = copied bytes / run time / 40 Gbps x 82.2 % (MeloParams::
copy_gbps_per_core = 40 / 0.822).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.common import Claim, absolute, number, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

LOSS_RATES = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2]
QUICK_LOSS_RATES = [1e-4, 1e-3, 2e-3, 1e-2]
CORE_GBPS = 40.0 / 0.822  # one core copies 48.7 Gbps (82.2 % of a core at 40 Gbps)
WORST_CASE_PCT = 82.2

BASE_SCENARIO = {
    "name": "melo-fig6a",
    "seed": 1,
    "duration": "50ms",
    "topology": {"kind": "melo-fig4", "link_delay": "25us"},
    "switch": {"pfc": {"enabled": True}},
    "transport": {"recovery": "melo", "cc": "dcqcn"},
    # The timeout must exceed the 100 us RTT; 200 us stays inside the 220 us the pool covers.
    "recovery": {"melo": {"rto": "200us"}},
    "workload": {"kind": "long-flows", "pairs": [["h0", "h1"]]},
}


def scenarios(quick: bool) -> list[Scenario]:
    base = Scenario.from_dict(BASE_SCENARIO)
    return [
        base.with_overrides({
            "name": f"melo-fig6a-{rate:g}",
            "duration": "10ms" if quick else "50ms",
            "loss": [{"at": "switch:leaf0", "rate": rate}],
        })
        for rate in (QUICK_LOSS_RATES if quick else LOSS_RATES)
    ]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    grid = scenarios(quick)
    rows = []
    for scenario, result in zip(grid, run_many(grid)):
        flow = result.flows.row(0, named=True)
        seconds = result.summary["sim_time_us"] / 1e6
        copied_gbps = flow["reorder_copied_bytes"] * 8 / seconds / 1e9
        rows.append({
            "loss_rate": scenario.data["loss"][0]["rate"],
            "goodput_gbps": flow["goodput_gbps"],
            "ooo_share_pct": 100.0 * flow["reorder_copied_bytes"] / max(flow["delivered_bytes"], 1),
            "copied_gbps": copied_gbps,
            "cpu_pct_of_core": copied_gbps / CORE_GBPS * 100.0,
            "timeouts": flow["timeouts"],
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    paper = pl.DataFrame({"loss_rate": [2e-3], "cpu_pct_of_core": [30.0], "series": ["MELO"]})
    plot_lines(
        table.with_columns(series=pl.lit("MELO")), "loss_rate", "cpu_pct_of_core", "series",
        out_dir / "plot.png", log_x=True, xlabel="loss ratio", ylabel="CPU (% of one core)",
        title="MELO Fig. 6a: reorder copying cost, 40 Gbps, BDP 512 KB", reference=paper,
    )
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "melo-fig6a"
# "about 30 %" read off a bar of Fig. 6a: the figure's resolution is a few points.
READ_OFF = absolute(5.0, "read off the figure's bar ('~30 %'): a few points either way")


def claims(table: pl.DataFrame) -> list[Claim]:
    at = table.filter(pl.col("loss_rate") == 2e-3)
    return [
        Claim("CPU % of one core at 0.2 % loss", 30.0, at["cpu_pct_of_core"][0] if at.height else None,
              READ_OFF, WHY),
        Claim("worst case: every packet copied at 40 Gbps", WORST_CASE_PCT,
              number(table["cpu_pct_of_core"].max()), READ_OFF, WHY),
    ]
