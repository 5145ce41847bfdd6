"""STRIDE (Fu et al., "STRIDE: Single-Trip-time based Reliable Data Transport Protocol for the
Reconfigurable Cloud") §VI.B, Fig. 9 and Table 2: average and 99th-percentile FCT per flow-size
category on a 256-host fat-tree, STRIDE beside DCTCP and TCP-Vegas.

The paper: OMNeT++, "256 hosts in FatTree based topology" (Al-Fares et al.), STRIDE against
TCP-Vegas and DCTCP, FCT per category of its Table 2 (read as < 10 KB, 10-100 KB, 100 KB-1 MB,
> 1 MB: the table prints "<10b, 10b-100kb, 100b-1MB, >1MB"), improvement = compared FCT /
STRIDE's FCT. It reports "up to 1.8x and 1.4x compared to TCP-Vegas and DCTCP" on average and
the same picture at the 99th percentile (Fig. 9b; the abstract: "up to 1.8X and 2.3X on average
and 99th percentile"). It gives no link rate, delay, buffer, workload, load or run length; what
is used here and why:

- Network: `[topology] kind = "stride-256"`, the k = 8 fat-tree fabric (8 pods of 4 ToRs and 4
  aggregation switches, 16 cores) with 8 hosts per ToR = 256 hosts (a k-ary fat-tree holds
  k^3/4 hosts, never 256). Hosts at 10 Gbps, the port speed of the paper's testbed. Fabric
  links at 20 Gbps (`fabric_link`), so the ToRs' 8 x 10 Gbps down equal their 4 x 20 Gbps up
  and the tree keeps Al-Fares' full bisection; with the preset's 10 Gbps fabric (2:1 at the
  ToRs) a random-pair load of 0.5 offers the ToR uplinks 97 % of their capacity (248 of 255
  destinations are behind another ToR) and the run measures a saturated core rather than the
  controllers. 1 us per link (the preset's): a cross-pod base
  RTT of ~13 us.
- Switches: 4 MB of shared buffer each, as the 10 Gbps switch of the DCTCP paper (Broadcom
  Scorpion: 4 MB shared by 24 x 10 Gbps ports), dynamic threshold alpha 1. ECN as a DCTCP step
  (kmin = kmax = K, pmax 1) at K = 30 KB on 10 Gbps ports and 60 KB on 20 Gbps ports (HPCC
  ns-3 run.py's 30 KB per 10 Gbps, the K retx's gbone-fct and cc-compare use): about two
  bandwidth-delay products of the longest path (16 KB at 10 Gbps), far above DCTCP's floor
  K > C x RTT / 7. The same switches for all three runs; STRIDE and Vegas ignore the marks.
- Packets: 1452 B of payload for every scheme, what a 1500 B IP packet leaves STRIDE after
  IPv4 (20), UDP (8) and its 20 B header (STRIDE frames are then 1514 B; retx's TCP carries
  48 B of headers). TCP acknowledges every packet (`ack_interval = 1`), STRIDE every 64 KiB
  segment (its default).
- STRIDE: `recovery = "stride"`, `cc = "stride"` with their defaults (Algorithm 1 with TIMELY's
  10 Gbps parameters where the paper is silent, 1 ms timer; per-host clock drift within
  +-0.5 ppm, under 1 ppm apart as the paper measured). DCTCP: `recovery = "tcp"`, `cc = "dctcp-window"` (g = 1/16). TCP-Vegas:
  `recovery = "tcp"`, `cc = "vegas"` (alpha 2, beta 4, gamma 1). Both TCPs: NewReno loss
  recovery, initial window 10, 1 ms minimum RTO, no handshake (a flow's first packet leaves
  at its start); STRIDE's FCT includes its 3-way handshake and FIN teardown.
- Workload: Poisson arrivals from every host to uniformly random other hosts (`pairing =
  "random"`), sizes from the DCTCP paper's web search distribution (`cdf = "websearch_hpcc"`:
  `../shared/workloads/websearch_hpcc.txt`, linear interpolation, mean 1.71 MB), at 50 % of
  every host link: a moderate load at which queues build at receivers and in the fabric (so
  congestion control decides the FCTs) while the offered load stays well below capacity, so
  every flow can finish. The same seed, hence the same flows, for all three.
- Length: arrivals for 50 ms (quick: 5 ms), then each run goes on until every flow has
  finished. 50 ms give ~4,600 flows per seed, ~710 of them under 10 KB (the smallest category,
  15 % of web search flows), so a category's p99 is set by its 7 slowest flows or more, not by
  its single slowest one. DCTCP's and Vegas's averages then move by at most 13 % between seeds
  (p99s 24 %), but STRIDE's by up to 3.8x (p99s 15x): its runs go through overload episodes (line-rate starts, drops, go-back-N
  and timer resends) whose size depends on which flows meet. So the full run takes seeds 1-3
  (quick: seed 1), 9 runs in about a minute on 2 cores; the table pools the three seeds'
  flows (~2,100 under 10 KB) and gives each improvement's smallest and largest value over the
  seeds beside the pooled one; seeds.csv has the per-seed rows.

Percentiles use rank int(n x p) of the sorted FCTs (HPCC's fct_analysis.py rule, as
cc-compare); "unfinished" counts a category's flows that did not finish; timeouts and retx_mb
are the category's flows' own, drops (buffer drops) and ecn_marks are the runs' totals.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any, Optional

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.cc_compare import pctl
from retx.reproduce.common import Calibration, Claim, relative, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

# (label, its transport settings). STRIDE first: the others are divided by it.
SCHEMES = {
    "stride": {"recovery": "stride", "cc": "stride"},
    "dctcp": {"recovery": "tcp", "cc": "dctcp-window"},
    "vegas": {"recovery": "tcp", "cc": "vegas"},
}
BASELINES = ["dctcp", "vegas"]
LOAD = 0.5
SEEDS = [1, 2, 3]
QUICK_SEEDS = [1]
UNTIL_MS = 50
QUICK_UNTIL_MS = 5
# The paper's Table 2 categories, in bytes: [lo, hi).
BUCKETS = [(0, 10_000, "< 10 KB"), (10_000, 100_000, "10-100 KB"),
           (100_000, 1_000_000, "100 KB-1 MB"), (1_000_000, 1 << 62, "> 1 MB")]

# The paper's statements (abstract; §VI.B, Fig. 9a and 9b).
PAPER_AVG_VS_VEGAS = 1.8
PAPER_AVG_VS_DCTCP = 1.4
PAPER_P99_BEST = 2.3

BASE_SCENARIO = {
    "name": "stride-fattree",
    "seed": 1,
    "duration": "2s",
    "stop_when_done": True,
    "topology": {"kind": "stride-256", "host_link": "10Gbps", "fabric_link": "20Gbps", "link_delay": "1us"},
    "switch": {
        "buffer": "4MB",
        "ecn": {"enabled": True, "per_link": [
            {"rate": "10Gbps", "kmin": "30KB", "kmax": "30KB", "pmax": 1.0},
            {"rate": "20Gbps", "kmin": "60KB", "kmax": "60KB", "pmax": 1.0}]},
    },
    "nic": {"mtu": 1452, "ack_interval": 1},
    "transport": {"recovery": "stride", "cc": "stride"},
    "recovery": {"stride": {"segment": "64KiB"}},
    "workload": {"kind": "poisson", "cdf": "websearch_hpcc", "load": LOAD, "pairing": "random",
                 "until": f"{UNTIL_MS}ms"},
    "output": {"sample_interval": "1ms"},
}


def grid(quick: bool) -> list[tuple[int, str]]:
    """(seed, scheme)."""
    return [(seed, label) for seed in (QUICK_SEEDS if quick else SEEDS) for label in SCHEMES]


def scenarios(quick: bool) -> list[Scenario]:
    until = QUICK_UNTIL_MS if quick else UNTIL_MS
    out = []
    for seed, label in grid(quick):
        data: dict[str, Any] = copy.deepcopy(BASE_SCENARIO)
        data["name"] = f"stride-fattree-{label}-seed{seed}"
        data["seed"] = seed
        data["transport"] = dict(SCHEMES[label])
        data["workload"]["until"] = f"{until}ms"
        out.append(Scenario.from_dict(data))
    return out


def flow_rows(seed: int, label: str, result) -> pl.DataFrame:
    """The flows of one run with the run's drops and ECN marks."""
    s = result.summary
    return result.flows.select("size_bytes", "fct_us", "completed", "timeouts", "retx_bytes").with_columns(
        seed=pl.lit(seed), scheme=pl.lit(label),
        drops=pl.lit(int(s.get("drops_buffer", 0)) + int(s.get("drops_loss", 0))),
        ecn_marks=pl.lit(int(s.get("ecn_marks", 0))))


def summarize(flows: pl.DataFrame) -> list[dict]:
    """Per scheme and category over the given flows (one seed's, or every seed's)."""
    rows = []
    for label in SCHEMES:
        mine = flows.filter(pl.col("scheme") == label)
        runs = mine.select("seed", "drops", "ecn_marks").unique()
        for lo, hi, name in BUCKETS:
            part = mine.filter((pl.col("size_bytes") >= lo) & (pl.col("size_bytes") < hi))
            done = part.filter(pl.col("completed"))["fct_us"].to_list()
            rows.append({
                "scheme": label, "bucket": name, "flows": part.height,
                "unfinished": part.height - len(done),
                "avg_fct_us": sum(done) / len(done) if done else None,
                "p99_fct_us": pctl(done, 0.99),
                "timeouts": int(part["timeouts"].sum()),
                "retx_mb": float(part["retx_bytes"].sum()) / 1e6,
                "drops": int(runs["drops"].sum()),
                "ecn_marks": int(runs["ecn_marks"].sum()),
            })
    return rows


def with_improvements(table: pl.DataFrame) -> pl.DataFrame:
    """improvement_avg / improvement_p99: the row's FCT / STRIDE's in the same category (the
    paper's "compared FCTs / STRIDE's FCTs"; > 1 means STRIDE is faster); None on STRIDE's rows."""
    ref = table.filter(pl.col("scheme") == "stride").select(
        "bucket", stride_avg=pl.col("avg_fct_us"), stride_p99=pl.col("p99_fct_us"))
    out = table.join(ref, on="bucket", how="left", maintain_order="left")
    other = pl.col("scheme") != "stride"
    return out.with_columns(
        improvement_avg=pl.when(other).then(pl.col("avg_fct_us") / pl.col("stride_avg")),
        improvement_p99=pl.when(other).then(pl.col("p99_fct_us") / pl.col("stride_p99")),
    ).drop("stride_avg", "stride_p99")


def tabulate(flows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the table over every seed's flows, with each improvement's smallest and largest value
    over the seeds; the same per seed)."""
    per_seed = pl.concat([
        with_improvements(pl.DataFrame(summarize(flows.filter(pl.col("seed") == seed)))).with_columns(seed=pl.lit(seed))
        for seed in flows["seed"].unique(maintain_order=True).to_list()])
    spread = per_seed.group_by("scheme", "bucket").agg(
        improvement_avg_min=pl.col("improvement_avg").min(), improvement_avg_max=pl.col("improvement_avg").max(),
        improvement_p99_min=pl.col("improvement_p99").min(), improvement_p99_max=pl.col("improvement_p99").max())
    table = with_improvements(pl.DataFrame(summarize(flows))).join(
        spread, on=["scheme", "bucket"], how="left", maintain_order="left")
    table = table.select(
        "scheme", "bucket", "flows", "unfinished", "avg_fct_us", "p99_fct_us", "improvement_avg",
        "improvement_avg_min", "improvement_avg_max", "improvement_p99", "improvement_p99_min",
        "improvement_p99_max", "timeouts", "retx_mb", "drops", "ecn_marks")
    return table, per_seed.select("seed", *[c for c in per_seed.columns if c != "seed"])


def best(table: pl.DataFrame, schemes: list[str], col: str) -> Optional[float]:
    vals = table.filter(pl.col("scheme").is_in(schemes))[col].drop_nulls().to_list()
    vals = [v for v in vals if math.isfinite(v)]
    return max(vals) if vals else None


WHY = "stride-fattree, Why, by mechanism"
# calibrate-stride-fattree.toml asks +-20 % of each "up to" figure, the seeds' spread on the quick grid.
UP_TO = relative(0.2, "an 'up to' over categories and seeds: +-20 %, as calibrate-stride-fattree.toml asks")
CALIBRATED = Calibration("examples/calibrate/calibrate-stride-fattree.toml", "stride-fattree, Why, by mechanism")


def claims(table: pl.DataFrame) -> list[Claim]:
    """The paper's "up to" numbers beside the largest improvement over the four categories."""
    return [
        Claim("avg FCT, Vegas / STRIDE, best category (x)", PAPER_AVG_VS_VEGAS,
              best(table, ["vegas"], "improvement_avg"), UP_TO, WHY, CALIBRATED),
        Claim("avg FCT, DCTCP / STRIDE, best category (x)", PAPER_AVG_VS_DCTCP,
              best(table, ["dctcp"], "improvement_avg"), UP_TO, WHY, CALIBRATED),
        Claim("p99 FCT, other / STRIDE, best category and baseline (x)", PAPER_P99_BEST,
              best(table, BASELINES, "improvement_p99"), UP_TO, WHY, CALIBRATED),
    ]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    points = grid(quick)
    start = time.perf_counter()
    results = run_many(scenarios(quick))
    wall = time.perf_counter() - start
    flows = pl.concat([flow_rows(seed, label, r) for (seed, label), r in zip(points, results)])
    table, per_seed = tabulate(flows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    per_seed.write_csv(out_dir / "seeds.csv")
    category = {name: i + 1 for i, (_, _, name) in enumerate(BUCKETS)}
    lines = pl.concat([
        table.filter(pl.col("scheme") != "stride").select(
            category=pl.col("bucket").replace_strict(category),
            improvement=pl.col(f"improvement_{stat}"),
            series=pl.col("scheme") + f" / stride, {stat}")
        for stat in ("avg", "p99")])
    plot_lines(lines, "category", "improvement", "series", out_dir / "plot.png",
               xlabel="flow size category (1: < 10 KB, 2: 10-100 KB, 3: 100 KB-1 MB, 4: > 1 MB)",
               ylabel="FCT improvement (other / STRIDE; > 1: STRIDE faster)",
               title=f"STRIDE Fig. 9: 256-host fat-tree, web search {int(LOAD * 100)} % load")
    print(format_table(per_seed.select("seed", "scheme", "bucket", "flows", "unfinished", "avg_fct_us", "p99_fct_us",
                                       "improvement_avg", "improvement_p99", "timeouts", "drops")))
    print()
    print(format_table(table.select("scheme", "bucket", "flows", "unfinished", "avg_fct_us", "p99_fct_us",
                                    "improvement_avg", "improvement_avg_min", "improvement_avg_max", "improvement_p99",
                                    "improvement_p99_min", "improvement_p99_max")))
    report_claims(claims(table), out_dir, quick)
    print(f"\n{len(points)} runs in {wall:.0f} s wall; wrote {out_dir}/table.parquet, table.csv, seeds.csv, plot.png")
    return table
