"""LEFT (Huang et al., APNet'24; slides "Evaluation-Benefit FCT"): flow completion times on a
dragonfly, LEFT with per-packet load balancing against per-flow ECMP, and against per-packet and
per-flowlet load balancing without LEFT.

The slides' numbers: LEFT cuts the average FCT by 28.1 % against per-flow, 20 % against
per-packet and 12 % against per-flowlet without LEFT; the 99th percentile by 48.2 %, 26.7 % and
8.1 %. Their setup: ns-3 (LEFT integrated into HPCC's simulator), a dragonfly with 400 Gbps
between groups, 200 Gbps hosts, 1 us links, 1 KB MTU, a 2 Kb pool, 3 bitmap caches, 8 FIFOs.

What is run. `kind = "left-dragonfly"` (the balanced h = 2 dragonfly: 9 groups of 4 routers, 2
hosts each, 72 hosts, 400 Gbps local and global links; docs/SCENARIO.md "Dragonfly" says why),
Valiant paths for every scheme (a balanced dragonfly has one minimal path between two routers,
so only detours give spraying and flowlets a choice; per-flow ECMP then picks one intermediate
group per flow), DCQCN (HPCC's simulator's default), no PFC (losses are recovered by each
scheme), Web Search sizes (`websearch_hpcc`, HPCC's simulator's workload) at load 0.4 of the
host links, Poisson arrivals. Two traffic patterns: `uniform` (random pairs, what HPCC's
simulator runs; the headline) and `adversarial` (every host sends to its counterpart in the next
group, the dragonfly's standard worst case, `examples/dragonfly-left.toml`). The schemes:
per-flow ECMP with go-back-N ("RoCE today") and with IRN; per-packet spraying (`spray-random`:
each switch picks a port at random) with IRN, LEFT, LEFT- and MELO+; flowlets (50 us gap) with
IRN and LEFT.
"per-flow", "per-packet" and "per-flowlet without LEFT" in the claims are per-flow go-back-N,
per-packet IRN and per-flowlet IRN (the slides' baselines are HPCC's simulator's go-back-N and
IRN). FLOWS flows per run, seeds 1-3 pooled.

--quick: uniform only; per-flow go-back-N, per-packet IRN, per-flowlet IRN, per-packet LEFT;
300 flows, seed 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import polars as pl

from retx.plots import plot_bars
from retx.reproduce.common import Claim, absolute, number, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

# (label, routing policy, recovery, LEFT variant)
SCHEMES = [
    ("per-flow gbn", "ecmp", "gbn", None),
    ("per-flow irn", "ecmp", "irn", None),
    ("per-packet irn", "spray-random", "irn", None),
    ("per-flowlet irn", "flowlet", "irn", None),
    ("per-packet left", "spray-random", "left", "left"),
    ("per-flowlet left", "flowlet", "left", "left"),
    ("per-packet left-", "spray-random", "left", "left-minus"),
    ("per-packet melo+", "spray-random", "left", "melo-plus"),
]
QUICK_SCHEMES = ["per-flow gbn", "per-packet irn", "per-flowlet irn", "per-packet left"]
PATTERNS = ["uniform", "adversarial"]
QUICK_PATTERNS = ["uniform"]
FLOWS = 1000
QUICK_FLOWS = 300
SEEDS = [1, 2, 3]
QUICK_SEEDS = [1]

# The slides: LEFT's reduction of the average and the 99th-percentile FCT, in %.
SLIDES = {
    ("per-flow gbn", "mean"): 28.1, ("per-flow gbn", "p99"): 48.2,
    ("per-packet irn", "mean"): 20.0, ("per-packet irn", "p99"): 26.7,
    ("per-flowlet irn", "mean"): 12.0, ("per-flowlet irn", "p99"): 8.1,
}

# Every host h sends to the host at the same place in the next group (8 hosts a group).
ADVERSARIAL_PAIRS = [[f"h{h}", f"h{(h + 8) % 72}"] for h in range(72)]

BASE_SCENARIO = {
    "name": "left-fct",
    "seed": 1,
    "duration": "200ms",
    "topology": {"kind": "left-dragonfly"},
    "nic": {"mtu": 1000},
    "routing": {"policy": "spray-random", "paths": "valiant"},
    "transport": {"recovery": "left", "cc": "dcqcn"},
    "workload": {"kind": "poisson", "cdf": "websearch_hpcc", "load": 0.4, "flows": FLOWS, "pairing": "random"},
}


def grid(quick: bool) -> list[tuple[str, str, int]]:
    patterns, seeds = (QUICK_PATTERNS, QUICK_SEEDS) if quick else (PATTERNS, SEEDS)
    labels = QUICK_SCHEMES if quick else [s[0] for s in SCHEMES]
    return [(p, label, seed) for p in patterns for label in labels for seed in seeds]


def scenarios(quick: bool) -> list[Scenario]:
    base = Scenario.from_dict(BASE_SCENARIO)
    kinds = {s[0]: s[1:] for s in SCHEMES}
    out = []
    for pattern, label, seed in grid(quick):
        policy, recovery, variant = kinds[label]
        over: dict[str, object] = {
            "name": f"left-fct-{pattern}-{label.replace(' ', '-')}-s{seed}", "seed": seed,
            "routing.policy": policy, "transport.recovery": recovery,
            "workload.flows": QUICK_FLOWS if quick else FLOWS,
        }
        if variant is not None:
            over["recovery.left"] = {"variant": variant}
        if pattern == "adversarial":
            over.update({"workload.pairing": "pairs", "workload.pairs": ADVERSARIAL_PAIRS})
        out.append(base.with_overrides(over))
    return out


def reduction(table: pl.DataFrame, pattern: str, baseline: str, stat: str) -> Optional[float]:
    """LEFT's reduction of `stat` FCT against `baseline`, in % (None if not in the grid)."""
    rows = {r["scheme"]: r for r in table.filter(pl.col("pattern") == pattern).iter_rows(named=True)}
    if "per-packet left" not in rows or baseline not in rows:
        return None
    col = f"{stat}_fct_us"
    return (1.0 - rows["per-packet left"][col] / rows[baseline][col]) * 100.0


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    points = grid(quick)
    results = run_many(scenarios(quick))
    pooled: dict[tuple[str, str], list[pl.DataFrame]] = {}
    drops: dict[tuple[str, str], int] = {}
    for (pattern, label, _seed), result in zip(points, results):
        pooled.setdefault((pattern, label), []).append(result.flows)
        drops[(pattern, label)] = drops.get((pattern, label), 0) + int(result.summary["drops_buffer"])
    rows = []
    for (pattern, label), parts in pooled.items():
        flows = pl.concat(parts)
        done = flows.filter(pl.col("completed"))
        rows.append({
            "pattern": pattern, "scheme": label, "flows": flows.height, "finished": done.height,
            "mean_fct_us": number(done["fct_us"].mean()),
            "p99_fct_us": number(done["fct_us"].quantile(0.99)),
            "mean_slowdown": number(done["slowdown"].mean()),
            "p99_slowdown": number(done["slowdown"].quantile(0.99)),
            "retx_mb": number(flows["retx_bytes"].sum()) / 1e6,
            "timeouts": int(flows["timeouts"].sum()),
            "drops": drops[(pattern, label)],
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    plot_bars(table.filter(pl.col("pattern") == "uniform"), "scheme", "mean_fct_us", None, out_dir / "plot.png",
        xlabel="load balancing and recovery", ylabel="mean FCT (us)",
        title="LEFT on a 72-host dragonfly, Web Search at 0.4 (uniform pairs)")
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "left-fct"
# left-sensitivity: settings that change nothing in LEFT's mechanism move the pooled mean cut by
# up to 2 points and the p99 cut (the 30th-slowest of 3,000 flows) by up to 11.
CUT = {"mean": absolute(3.0, "3 seeds pooled: the mean cut moves ~2 points between equivalent runs (left-sensitivity)"),
       "p99": absolute(6.0, "the 30th-slowest of 3,000 flows: the p99 cut moves several points between equivalent runs")}


def claims(table: pl.DataFrame) -> list[Claim]:
    """The slides' FCT reductions against ours, per pattern (both patterns always: the quick
    grid has no adversarial point, and says so)."""
    return [Claim(f"{pattern}: LEFT's {stat} FCT reduction vs {baseline} (%)", paper,
                  reduction(table, pattern, baseline, stat), CUT[stat], WHY)
            for pattern in PATTERNS for (baseline, stat), paper in SLIDES.items()]
