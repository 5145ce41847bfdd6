"""Go-Back-ONE, Fig. 10: goodput over time across a WAN with 10 ms links and 10 % loss.

Two hosts through one core switch, 100 Gbps links with 10 ms propagation each (RTT 40 ms),
10 % random loss on the data path (the paper's "inherent link loss"), DCQCN, one long flow
node 0 -> node 1. Receiver goodput (in-order bytes to the application) is sampled every
millisecond, beside the data arriving on the receiver's link (duplicates and discarded
packets included): the paper monitors the receiver's channel and reports utilisation
converging to ~90 % for Go-Back-ONE and "effective" utilisation far lower for go-back-N.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.common import Claim, absolute, number, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

LINK_GBPS = 100.0
SCHEMES = {"gbn": "go-back-N", "gbone": "Go-Back-ONE"}

BASE_SCENARIO = {
    "name": "gbone-goodput",
    "seed": 1,
    "duration": "400ms",
    "topology": {"kind": "single-switch", "hosts": 2, "host_link": "100Gbps", "link_delay": "10ms"},
    "switch": {"buffer": "64MB", "pfc": {"enabled": True}},
    "transport": {"recovery": "gbn", "cc": "dcqcn"},
    # Timeouts above the 40 ms RTT: the IB value 4.096 us x 2^15 = 134 ms.
    "recovery": {"gbn": {"rto": "134217728ns"}, "gbone": {"rto": "134217728ns"}},
    "loss": [{"at": "link:sw0->h1", "rate": 0.1}],
    "workload": {"kind": "long-flows", "pairs": [["h0", "h1"]]},
    "output": {"sample_interval": "1ms"},
}


def scenarios(quick: bool) -> list[Scenario]:
    base = Scenario.from_dict(BASE_SCENARIO)
    return [base.with_overrides({"name": f"gbone-goodput-{s}", "duration": "150ms" if quick else "400ms",
                                 "transport.recovery": s}) for s in SCHEMES]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    results = run_many(scenarios(quick))
    series = []
    rows = []
    for scheme, result in zip(SCHEMES, results):
        ts = result.timeseries.filter(pl.col("host") == "h1").with_columns(
            scheme=pl.lit(SCHEMES[scheme]), time_ms=pl.col("time_us") / 1000.0)
        series.append(ts)
        # Steady state: after the first two round trips.
        steady = ts.filter(pl.col("time_ms") > 80.0)
        flow = result.flows.row(0, named=True)
        rows.append({
            "scheme": scheme,
            "steady_goodput_gbps": steady["rx_gbps"].mean(),
            "steady_pct_of_link": number(steady["rx_gbps"].mean()) / LINK_GBPS * 100.0,
            "steady_wire_pct_of_link": number(steady["rx_wire_gbps"].mean()) / LINK_GBPS * 100.0,
            "retx_bytes": flow["retx_bytes"],
            "notifications": flow["notifications"],
            "timeouts": flow["timeouts"],
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    pl.concat(series).write_parquet(out_dir / "timeseries.parquet")
    both = pl.concat(series)
    long = pl.concat([
        both.select("time_ms", gbps="rx_gbps", series=pl.format("{} goodput", "scheme")),
        both.select("time_ms", gbps="rx_wire_gbps", series=pl.format("{} on the wire", "scheme")),
    ])
    plot_lines(long, "time_ms", "gbps", "series", out_dir / "plot.png",
               xlabel="time (ms)", ylabel="at the receiver (Gbps)",
               title="Go-Back-ONE Fig. 10: 100 Gbps, 10 ms links, 10 % loss, DCQCN")
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, timeseries.parquet, plot.png")
    return table


WHY = "gbone-goodput"
# "converges to about 90 %", read off Fig. 10's curve: a couple of points of the link.
READ_OFF = absolute(2.0, "'about 90 %' read off Fig. 10's curve: a couple of points")


def claims(table: pl.DataFrame) -> list[Claim]:
    gb1 = table.filter(pl.col("scheme") == "gbone")
    wire = gb1["steady_wire_pct_of_link"][0] if gb1.height else None
    goodput = gb1["steady_pct_of_link"][0] if gb1.height else None
    return [
        Claim("Go-Back-ONE receive utilisation converges to (% of link): on the wire", 90.0, wire, READ_OFF, WHY),
        Claim("same, as in-order goodput", 90.0, goodput, READ_OFF, WHY),
    ]
