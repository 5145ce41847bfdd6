"""MELO (APNet'17), Fig. 5b: 99th-percentile FCT under load with a lossy spine.

The Fig. 4 fabric; the servers of the first 16 leaves each send to a fixed partner under the
other 16 (half of the servers to the other half, across leaves); web search flow sizes
(websearch_hpcc, linear, as HPCC's generator), Poisson arrivals at 50-80 % of the 40 Gbps
host links; spine0 drops 1 % of the data packets it forwards; DCQCN, PFC on. Go-back-N (one
NAK per 500 us, the rule that reproduces Fig. 5a) against MELO.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.metrics import tail_fct
from retx.plots import plot_lines
from retx.reproduce.common import Calibration, Claim, number, relative, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

LOADS = [0.5, 0.6, 0.7, 0.8]
QUICK_LOADS = [0.5, 0.8]
SCHEMES = {
    "gbn": {"transport.recovery": "gbn", "recovery.gbn.nak_policy": "strict"},
    "gbn-hpcc": {"transport.recovery": "gbn", "recovery.gbn.nak_policy": "per-psn"},
    "melo": {"transport.recovery": "melo"},
}
LABELS = {"gbn": "go-back-N (1 NAK / 500 us)", "gbn-hpcc": "go-back-N (HPCC ns-3 NAK rule)",
          "melo": "MELO"}

BASE_SCENARIO = {
    "name": "melo-fig5b",
    "seed": 1,
    "duration": "400ms",
    "topology": {"kind": "melo-fig4"},
    "switch": {"pfc": {"enabled": True}},
    "transport": {"recovery": "gbn", "cc": "dcqcn"},
    "loss": [{"at": "switch:spine0", "rate": 0.01}],
    "workload": {"kind": "poisson", "cdf": "websearch_hpcc", "load": 0.5,
                 "pairing": "cross-leaf-halves", "until": "4ms"},
    "output": {"sample_interval": "1ms"},
}


def grid(quick: bool) -> list[tuple[float, str]]:
    return [(load, s) for load in (QUICK_LOADS if quick else LOADS) for s in SCHEMES]


def scenarios(quick: bool) -> list[Scenario]:
    base = Scenario.from_dict(BASE_SCENARIO)
    return [
        base.with_overrides({
            "name": f"melo-fig5b-{s}-{load:g}",
            "workload.load": load,
            "workload.until": "1ms" if quick else "4ms",
            **SCHEMES[s],
        })
        for load, s in grid(quick)
    ]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    points = grid(quick)
    results = run_many(scenarios(quick))
    rows = []
    for (load, scheme), result in zip(points, results):
        flows = result.flows
        rows.append({
            "load": load,
            "scheme": scheme,
            "flows": flows.height,
            "completed": int(flows["completed"].sum()),
            "p99_fct_ms": tail_fct(flows, 0.99) / 1000.0,
            "median_fct_ms": number(flows.filter(pl.col("completed"))["fct_us"].median()) / 1000.0,
            "retx_mb": number(flows["retx_bytes"].sum()) / 1e6,
            "timeouts": int(flows["timeouts"].sum()),
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    plot_lines(table.with_columns(pl.col("scheme").replace(LABELS)), "load", "p99_fct_ms", "scheme",
               out_dir / "plot.png", xlabel="load", ylabel="99th percentile FCT (ms)",
               title="MELO Fig. 5b: web search, spine0 drops 1 %")
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "melo-fig5b"
CALIBRATED = Calibration("examples/calibrate/calibrate-melo-fig5b.toml", "melo-fig5b, Calibration")
# The paper gives the band's ends, not which load gives which; a p99 over a few hundred flows
# moves by tens of percent with the seed (docs: melo-fig5b's p99s moved 5.96-9.88 ms by event
# order alone), so +-25 % of each end.
BAND = relative(0.25, "a p99 of a few hundred flows: event order alone moved it by up to 25 %")


def claims(table: pl.DataFrame) -> list[Claim]:
    """The paper's band of p99 reductions (2.11x-3.11x over loads 0.5-0.8) against the lowest
    and highest of ours, for each go-back-N NAK rule."""
    def ratios(baseline: str) -> list[float]:
        gbn = table.filter(pl.col("scheme") == baseline).sort("load")["p99_fct_ms"]
        melo = table.filter(pl.col("scheme") == "melo").sort("load")["p99_fct_ms"]
        return (gbn / melo).to_list()

    strict, hpcc = ratios("gbn"), ratios("gbn-hpcc")
    return [
        Claim("p99 FCT reduction, go-back-N / MELO: lowest", 2.11, min(strict) if strict else None, BAND, WHY,
              CALIBRATED),
        Claim("same: highest", 3.11, max(strict) if strict else None, BAND, WHY, CALIBRATED),
        Claim("with the HPCC NAK rule: lowest", 2.11, min(hpcc) if hpcc else None, BAND, WHY),
        Claim("same: highest", 3.11, max(hpcc) if hpcc else None, BAND, WHY),
    ]
