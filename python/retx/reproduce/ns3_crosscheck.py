"""Cross-check with the HPCC ns-3 simulator on its own input (issue: CC family faithful to ns-3).

Its 320-server fat tree (`fat.txt`) and 3,200 web search flows at 30 % load
(`flow_ws_320_l30_0.005.txt`), run by retx straight from ns-3's own config file, and the FCT
slowdowns compared with what ns-3 itself wrote for the same input (`reference/fct_*.txt`,
alibaba-edu @ 9f4be2a). Slowdown = fct / standalone fct, at least 1, percentiles by rank, size
groups of 5 % of the flows: exactly as the repository's `analysis/fct_analysis.py` computes
them. Both runs' fct.txt carry the same standalone FCT for every flow, so the bases agree.

The inputs live outside the repository (`../shared/peers/hpcc-ns3/`, or `$RETX_HPCC_DIR`).
Both of ns-3's controllers run: DCQCN (`CC_MODE 1`) and HPCC (`CC_MODE 3`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.common import Calibration, Claim, relative, report_claims, save_table
from retx import runner
from retx.scenario import Scenario
from retx.table import format_table

# (controller, ns-3 config, ns-3's own fct.txt for it, its wall time on this machine kind as
# ../shared/peers/README.md reports it)
RUNS = [
    ("dcqcn", "config_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt",
     "reference/fct_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt", 119.0),
    ("hpcc", "config_fat_flow_ws_320_l30_0.005_hp95_nomon.txt",
     "reference/fct_fat_flow_ws_320_l30_0.005_hp95_nomon.txt", 76.0),
]
BUCKETS = [(0, 10_000, "< 10 KB"), (10_000, 100_000, "10-100 KB"),
           (100_000, 1_000_000, "100 KB-1 MB"), (1_000_000, 1 << 62, "> 1 MB")]
# The issue's target: every bucket's median, p95 and p99 within 20 % of ns-3's.
TOLERANCE = 0.20
GROUPS = 20


class MissingInputs(FileNotFoundError):
    def __str__(self) -> str:
        return (f"ns3-crosscheck needs the HPCC ns-3 inputs in {self.args[0]} "
                "(set RETX_HPCC_DIR to the folder holding fat.txt and the config files)")


def inputs_dir() -> Path:
    env = os.environ.get("RETX_HPCC_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3].parent / "shared" / "peers" / "hpcc-ns3"


def available() -> bool:
    d = inputs_dir()
    return all((d / cfg).is_file() and (d / ref).is_file() for _, cfg, ref, _ in RUNS)


def slowdowns(fct_txt: str) -> pl.DataFrame:
    """(size, slowdown) per flow of an fct.txt, slowdown = fct / standalone fct, at least 1."""
    rows = [line.split() for line in fct_txt.splitlines() if line.strip()]
    return pl.DataFrame({
        "size": [int(r[4]) for r in rows],
        "slowdown": [max(1.0, int(r[6]) / int(r[7])) for r in rows],
    }).sort("size", maintain_order=True)


def pctl(values: list[float], p: float) -> float:
    """fct_analysis.py's `get_pctl`: the value at rank int(n x p) of the sorted list."""
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * p), len(ordered) - 1)]


def stats(values: list[float]) -> tuple[float, float, float]:
    return pctl(values, 0.5), pctl(values, 0.95), pctl(values, 0.99)


def compare(cc: str, ours: pl.DataFrame, theirs: pl.DataFrame) -> tuple[list[dict], list[dict]]:
    buckets = []
    for lo, hi, name in BUCKETS:
        a = theirs.filter((pl.col("size") >= lo) & (pl.col("size") < hi))["slowdown"].to_list()
        b = ours.filter((pl.col("size") >= lo) & (pl.col("size") < hi))["slowdown"].to_list()
        row: dict[str, Any] = {"cc": cc, "bucket": name, "flows": len(b)}
        for (label, x), y in zip(zip(("median", "p95", "p99"), stats(a)), stats(b)):
            row[f"ns3_{label}"] = x
            row[f"retx_{label}"] = y
            row[f"ratio_{label}"] = y / x
        row["within_20pct"] = all(abs(row[f"ratio_{k}"] - 1.0) <= TOLERANCE for k in ("median", "p95", "p99"))
        buckets.append(row)
    groups = []
    for name, df in (("ns3", theirs), ("retx", ours)):
        n = df.height
        for g in range(GROUPS):
            part = df.slice(g * n // GROUPS, (g + 1) * n // GROUPS - g * n // GROUPS)
            median, p95, p99 = stats(part["slowdown"].to_list())
            groups.append({"cc": cc, "sim": name, "group": g, "max_size": part["size"].max(),
                           "median": median, "p95": p95, "p99": p99})
    return buckets, groups


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    """Runs every controller on the full input (`quick` changes nothing: the comparison only
    means something on ns-3's own input; one run takes about 15 s)."""
    d = inputs_dir()
    if not available():
        raise MissingInputs(d)
    buckets, groups, walls = [], [], []
    for cc, config, reference, ns3_wall in RUNS:
        scenario = Scenario.from_hpcc_config(d / config)
        start = time.perf_counter()
        result = runner.run(scenario)
        walls.append({"cc": cc, "retx_wall_s": time.perf_counter() - start, "ns3_wall_s": ns3_wall})
        ours = slowdowns(result.fct_txt or "")
        theirs = slowdowns((d / reference).read_text())
        if ours.height != theirs.height:
            raise RuntimeError(f"{cc}: {ours.height} flows finished in retx, {theirs.height} in ns-3")
        b, g = compare(cc, ours, theirs)
        buckets += b
        groups += g
    table = pl.DataFrame(buckets)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    group_table = pl.DataFrame(groups)
    group_table.write_csv(out_dir / "groups.csv")
    plot_lines(group_table.with_columns(series=pl.format("{} {} p95", "sim", "cc")),
               "group", "p95", "series", out_dir / "plot.png",
               xlabel="flow size group (5 % of flows each, small to large)", ylabel="p95 FCT slowdown",
               title="retx vs HPCC ns-3: fat.txt, web search 30 %")
    print(format_table(table.select("cc", "bucket", "flows", "ns3_median", "retx_median", "ns3_p95",
                                    "retx_p95", "ns3_p99", "retx_p99", "within_20pct")))
    print()
    print(format_table(pl.DataFrame(walls)))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, groups.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "ns3-crosscheck, The remaining gap"
# Two simulators of one model on one input: within_20pct's bar, the same as the calibration's.
SAME_INPUT = relative(TOLERANCE, "two simulators of one model on one input: 20 %, the within_20pct column's bar")
CALIBRATED = Calibration("examples/calibrate/calibrate-ns3-crosscheck.toml", "ns3-crosscheck, Calibration")
# The cells calibrate-ns3-crosscheck.toml targeted.
CALIBRATED_CELLS = {("dcqcn", "< 10 KB", "p95"), ("dcqcn", "10-100 KB", "p95"), ("dcqcn", "> 1 MB", "p95")}


def claims(table: pl.DataFrame) -> list[Claim]:
    """ns-3's slowdown percentiles per controller and size bucket against retx's."""
    out = []
    for r in table.iter_rows(named=True):
        for stat in ("median", "p95", "p99"):
            calibrated = CALIBRATED if (r["cc"], r["bucket"], stat) in CALIBRATED_CELLS else None
            out.append(Claim(f"{r['cc']} {r['bucket']}: {stat} slowdown", r[f"ns3_{stat}"], r[f"retx_{stat}"],
                             SAME_INPUT, WHY, calibrated))
    return out
