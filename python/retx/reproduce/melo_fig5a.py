"""MELO (APNet'17), Fig. 5a: goodput of one long flow vs. packet loss rate at a switch.

One long-running flow h0 -> h1 under leaf0 of the paper's Fig. 4 leaf-spine fabric, with
random loss at leaf0, DCQCN and PFC on. Go-back-N against MELO (shared 1 Kb bits pool) and,
for reference, IRN-style selective repeat with a per-QP bitmap.

Go-back-N runs twice, because the cost of one loss is set by the receiver's NAK generation
rule: "gbn" allows one NAK per 500 us whatever PSN it names (the DCQCN-era NIC model the
paper used), "gbn-hpcc" NAKs a new expected PSN at once (the public HPCC ns-3 model).
Goodput is reported against the line-rate goodput: 40 Gbps x payload / (payload + headers).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.common import (Calibration, Claim, absolute, claims_table, relative, report_claims,
                                   save_table)
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

LINE_RATE_GBPS = 40.0
MTU = 1024
HEADER_BYTES = 48  # crates/retx/src/transport/mod.rs: DATA_HEADER_BYTES
MAX_GOODPUT_GBPS = LINE_RATE_GBPS * MTU / (MTU + HEADER_BYTES)
LOSS_RATES = [1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
QUICK_LOSS_RATES = [1e-5, 1e-4, 1e-3, 1e-2]
SCHEMES = {
    "gbn": {"transport.recovery": "gbn", "recovery.gbn.nak_policy": "strict"},
    "gbn-hpcc": {"transport.recovery": "gbn", "recovery.gbn.nak_policy": "per-psn"},
    "melo": {"transport.recovery": "melo"},
    "irn": {"transport.recovery": "irn"},
}
SCHEME_LABELS = {
    "gbn": "go-back-N (1 NAK / 500 us)",
    "gbn-hpcc": "go-back-N (HPCC ns-3 NAK rule)",
    "melo": "MELO (1 Kb shared bits pool)",
    "irn": "selective repeat (IRN-style bitmap)",
}

BASE_SCENARIO = {
    "name": "melo-fig5a",
    "seed": 1,
    "duration": "20ms",
    "topology": {"kind": "melo-fig4", "host_link": "40Gbps", "link_delay": "2us"},
    "switch": {"pfc": {"enabled": True}},
    "transport": {"recovery": "gbn", "cc": "dcqcn"},
    "workload": {"kind": "long-flows", "pairs": [["h0", "h1"]]},
}

# Points with absolute values in the paper's text; go-back-N at 1 % follows from
# "selective repeat is 14.02x go-back-N" (99.0 / 14.02).
PAPER_POINTS = pl.DataFrame({
    "loss_rate": [1e-3, 1e-2, 1e-3, 1e-2],
    "scheme": ["gbn", "gbn", "melo", "melo"],
    "pct_of_max_goodput": [45.6, 99.0 / 14.02, 99.9, 99.0],
})


def scenarios(quick: bool) -> list[Scenario]:
    base = Scenario.from_dict(BASE_SCENARIO)
    # Long enough for ~20 losses at the lowest rate in the full grid (4.7 M packets/s).
    duration = "10ms" if quick else "200ms"
    return [
        base.with_overrides({
            "name": f"melo-fig5a-{scheme}-{rate:g}",
            "duration": duration,
            **overrides,
            "loss": [{"at": "switch:leaf0", "rate": rate}],
        })
        for rate in (QUICK_LOSS_RATES if quick else LOSS_RATES)
        for scheme, overrides in SCHEMES.items()
    ]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    grid = scenarios(quick)
    results = run_many(grid)
    rows = []
    schemes = [scheme for _ in (QUICK_LOSS_RATES if quick else LOSS_RATES) for scheme in SCHEMES]
    for scheme, scenario, result in zip(schemes, grid, results):
        flow = result.flows.row(0, named=True)
        rows.append({
            "loss_rate": scenario.data["loss"][0]["rate"],
            "scheme": scheme,
            "goodput_gbps": flow["goodput_gbps"],
            "pct_of_line_rate": flow["goodput_gbps"] / LINE_RATE_GBPS * 100.0,
            "pct_of_max_goodput": flow["goodput_gbps"] / MAX_GOODPUT_GBPS * 100.0,
            "retx_bytes": flow["retx_bytes"],
            "notifications": flow["notifications"],
            "timeouts": flow["timeouts"],
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    labelled = pl.col("scheme").replace(SCHEME_LABELS)
    plot_lines(
        table.with_columns(labelled), "loss_rate", "goodput_gbps", "scheme", out_dir / "plot.png",
        log_x=True, xlabel="loss ratio at leaf0", ylabel="goodput (Gbps)",
        title="MELO Fig. 5a: one 40 Gbps flow under random loss",
        reference=PAPER_POINTS.with_columns(
            labelled, goodput_gbps=pl.col("pct_of_max_goodput") * MAX_GOODPUT_GBPS / 100.0),
    )
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "melo-fig5a, Differences and why"
CALIBRATED = Calibration("examples/calibrate/calibrate-melo-fig5a.toml", "melo-fig5b, Calibration")
# The paper's go-back-N numbers hang on a NAK rule it does not state; the calibration (of the
# strict rule: the HPCC rule's rows are not covered by it) asks +-20 % of them, and so do we.
GBN = relative(0.2, "go-back-N's NAK rule is unstated; +-20 % is the band calibrate-melo-fig5a.toml asks")
# MELO's share is near 100 % and printed to 0.1 point; one seed's losses move it by tenths.
MELO = absolute(1.0, "near the line rate: 1 point of max goodput, a few seeds' spread of one flow's losses")
# The ratio divides by go-back-N's share, so it inherits twice its uncertainty.
RATIO = relative(0.4, "a ratio over go-back-N's share: twice go-back-N's +-20 %")
# A 3.37 % gap at 0.001 % loss is ~10 losses in 200 ms: +-2 points is what one seed allows.
GAP = absolute(2.0, "about 10 losses a run at 0.001 %: a couple of points of seed noise")


def claims(table: pl.DataFrame) -> list[Claim]:
    """The paper's claims next to ours; a claim whose loss rate is not in the grid has no
    number of ours (None), not a neighbour's."""
    def pct(scheme: str, rate: float) -> float | None:
        match = table.filter((pl.col("scheme") == scheme) & (pl.col("loss_rate") == rate))
        return match["pct_of_max_goodput"][0] if match.height else None

    def ratio(rate: float) -> float | None:
        gbn, melo = pct("gbn", rate), pct("melo", rate)
        return melo / gbn if gbn and melo is not None else None

    gain_at_1e5 = ratio(1e-5)
    return [
        Claim("go-back-N, % of max goodput at 0.1 % loss", 45.6, pct("gbn", 1e-3), GBN, WHY, CALIBRATED),
        Claim("go-back-N (HPCC NAK rule), same", 45.6, pct("gbn-hpcc", 1e-3), GBN, WHY),
        Claim("MELO, % of max goodput at 0.1 % loss", 99.9, pct("melo", 1e-3), MELO, WHY),
        Claim("MELO, % of max goodput at 1 % loss", 99.0, pct("melo", 1e-2), MELO, WHY),
        Claim("IRN-style bitmap, same", 99.0, pct("irn", 1e-2), MELO, WHY),
        Claim("go-back-N, % of max goodput at 1 % loss", 99.0 / 14.02, pct("gbn", 1e-2), GBN, WHY, CALIBRATED),
        Claim("go-back-N (HPCC NAK rule), same", 99.0 / 14.02, pct("gbn-hpcc", 1e-2), GBN, WHY),
        Claim("MELO / go-back-N at 1 % loss (x)", 14.02, ratio(1e-2), RATIO, WHY, CALIBRATED),
        Claim("MELO better than go-back-N at 0.001 % loss (%)", 3.37,
              None if gain_at_1e5 is None else (gain_at_1e5 - 1.0) * 100.0, GAP, WHY),
    ]


def compare_with_paper(table: pl.DataFrame) -> pl.DataFrame:
    """`claims` as a table: claim, source, retx, tolerance, verdict."""
    return claims_table(claims(table))
