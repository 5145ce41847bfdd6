"""Collectives under loss recovery and load balancing (issue 31, item 4; UET, LEFT and the
permutation: issue 44, item 7): a ring all-reduce, a direct all-to-all and a permutation on a
fat-tree, run with the recovery schemes and routing policies retx has today, under DCQCN and
HPCC (NDP and UET under their own control), with and without 0.1 % loss.

Not a paper's figure: the question the newer transports (LEFT, NDP, the Ultra Ethernet
transport) start from, asked of what retx has, on one footing. Does a collective's completion time (CCT) suffer
from ECMP collisions, and from losses that go-back-N recovers from badly, and does per-packet
spraying fix the first without making the second worse?

- Network: `[topology] kind = "fat-tree"`, k = 4: 16 hosts in 4 pods (2 per ToR), 8 ToRs,
  8 aggregation switches, 4 cores, every link 100 Gbps and 1 us, full bisection. Switches at
  retx's defaults (12 MB shared buffer, ECN kmin 5 KB / kmax 200 KB / pmax 0.01) with PFC on and
  headroom "auto", as RoCE is deployed: congestion never drops a packet, so every loss is the
  loss rule's. An ACK per packet (`[nic] ack_interval = 1`), 1024 B payloads.
- Collectives, 16 ranks, one per host (`[workload] kind = "collective"`):
  - all-reduce, ring (NCCL's: reduce-scatter then all-gather, 30 steps of size / 16 per rank),
    16 MB per rank (quick: 8 MB), on the hosts in a random order (`placement = "random"`, drawn
    from the seed): most ring neighbours are then in other pods, so ECMP can put two of a
    step's flows on one uplink;
  - the same ring on the hosts in order (`placement = "contiguous"`, full grid only): a rank's
    neighbour is under its own ToR or the next, no link carries two of a step's flows whatever
    the hash, so this is the control where load balancing has nothing to fix;
  - all-to-all, direct (every rank sends size / 16 to each of the 15 others at once), 4 MB
    per rank (quick: 2 MB): 240 flows, every host link full in both directions, so any two
    flows ECMP hashes onto one fabric link slow the whole collective.
  And not a collective, a permutation (`[workload] kind = "flow-list"`): every host sends one
  flow of 4 MB (quick: 2 MB) to another, a derangement drawn from the seed (Python's
  random.Random(seed)); its "CCT" is the last flow's finish, its ideal the largest ideal FCT
  of its flows, no bus bandwidth; a second iteration waits for every flow of the first.
  Full: 2 iterations (back to back) per run and seeds 1-3 (the seed moves the ECMP salts, the
  random placement and the losses); quick: 1 iteration, seed 1.
- Variants (recovery + routing): go-back-N + ECMP (RoCE NICs today: `recovery = "gbn"`, the
  HPCC ns-3 NAK rule, the IB 4.2 ms timeout), IRN + ECMP, MELO + ECMP, IRN + per-packet spraying
  (`[routing] policy = "spray-random"`: every packet to a random equal-cost port, so packets
  arrive out of order; IRN's selective repeat accepts them), and go-back-N + spraying, the
  counter-example (go-back-N drops every out-of-order packet and goes back); and NDP + spraying
  (`recovery = "ndp"`, the design per-packet spraying comes from: receiver-paced PULLs, switches
  that trim instead of drop, no congestion control, so its rows say cc "none"). NDP's switches
  run without PFC, with htsim's 15-packet trimming data queues (`[switch] trim.data_queue`,
  15 x 1,088 B); its initial window is one BDP (NDP's rule; 160 packets of 1,024 B cover the
  12.5 us longest round trip at 100 Gbps; htsim's default of 15 packets assumes 9 KB packets),
  and its timer 1 ms (htsim's 50 ms floor would dominate every lossy run: random loss, unlike
  trimming, is found only by the timer). LEFT + spraying (`recovery = "left"`, its defaults:
  the receiver takes reordering without a NACK, a 100 us hole timer finds losses), under DCQCN
  and HPCC as IRN. UET (`recovery = "uet"`: RUD + NSCC, uet-htsim's defaults, 64 entropy values
  with its mixed load balancing, so sprayed by entropy value over the switches' ECMP hash; its
  rows say routing "ecmp", cc "nscc"), on switches as uet-htsim sets them: PFC off, trimming to
  64 B headers at a data queue of one BDP (145 packets of 1,088 B: `UET_SETTINGS`), ECN from 20 %
  to 80 % of it with pmax 1.
- Congestion control: DCQCN (`[cc.dcqcn]` defaults) and HPCC (ns-3 run.py's defaults: eta
  0.95, INT on every data packet, a variable window).
- Loss: none, and `[[loss]] at = "everywhere", rate = 0.001` (0.1 % of the data packets on
  every link, independently).

Table: one row per (workload, recovery, routing, cc, loss), pooled over seeds and iterations:
how many iterations finished of how many, the mean and largest CCT, the mean ideal CCT (each
step alone on an empty network, summed: see docs/SCENARIO.md), the mean slowdown (CCT / ideal),
the mean NCCL bus bandwidth, and per run (mean over seeds) the retransmission timeouts,
retransmitted MB and PFC pauses that explain the numbers. plot.png draws the mean CCT per
variant, a panel per workload.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path
from typing import Any, Optional

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from retx.reproduce.common import Claim, report_claims, save_table
from retx.uet_htsim import switch_settings
from retx.results import Results
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

RANKS = 16
SPRAY = "spray-random"
PERMUTATION = "permutation"
# (label, op, algorithm, placement, size per rank full, size per rank quick; None: full only).
WORKLOADS: list[tuple[str, str, str, str, str, Optional[str]]] = [
    ("all-reduce ring, random", "all-reduce", "ring", "random", "16MB", "8MB"),
    ("all-reduce ring, contiguous", "all-reduce", "ring", "contiguous", "16MB", None),
    ("all-to-all direct", "all-to-all", "direct", "contiguous", "4MB", "2MB"),
    # Not a collective: a flow-list (`permutation_flows`), every host to another, a derangement
    # drawn from the seed.
    ("permutation", PERMUTATION, "derangement", "random", "4MB", "2MB"),
]
# (recovery, routing policy). UET sprays by the entropy value its sender picks for each packet,
# which the switches' ECMP hash reads, so its routing is "ecmp" (`[routing] entropy` does not
# apply to it: docs/SCENARIO.md, "UET").
VARIANTS: list[tuple[str, str]] = [
    ("gbn", "ecmp"),
    ("irn", "ecmp"),
    ("melo", "ecmp"),
    ("irn", SPRAY),
    ("gbn", SPRAY),
    ("ndp", SPRAY),
    ("left", SPRAY),
    ("uet", "ecmp"),
]
CCS = ["dcqcn", "hpcc"]
# NDP's settings here (see the module's text): its own congestion control only.
NDP_CCS = ["none"]
NDP_SETTINGS: dict[str, Any] = {
    "switch": {"pfc": {"enabled": False},
               "trim": {"queue": 0, "header": "64B", "data_queue": f"{15 * (1024 + 64)}B"}},
    "recovery": {"ndp": {"initial_window": 160, "rto_initial": "1ms", "rto_min": "1ms"}},
}
# UET's (RUD + NSCC, uet-htsim's defaults otherwise: 64 entropy values, mixed load balancing):
# its own congestion control (the transport's cc is "none"; its rows say "nscc"), on switches
# set as uet-htsim sets its own (main_uec.cpp:51-67, 642-711; as uet_htsim_crosscheck does): no
# PFC, a data queue of one BDP per port that trims to a 64 B header, ECN from 20 % to 80 % of it
# with pmax 1. The BDP is uet-htsim's `calculate_bdp_pkt` on this network: the longest unloaded
# round trip is 6 links out and 6 back at 1 us, plus 6 serialisations of a full packet (1,024 B +
# UET's 64 B header = 1,088 B: 87.04 ns at 100 Gbps) and 6 of a 64 B ACK (5.12 ns), 12.55296 us;
# at 100 Gbps that is 156,912 B, 144.2 packets, rounded up to 145 packets = 157,760 B. ECN:
# ceil(0.2 x 145) = 29 packets (31,552 B) to ceil(0.8 x 145) = 116 packets (126,208 B).
UET_CCS = ["nscc"]
UET_PACKET = 1024 + 64
UET_BDP_PACKETS = 145
UET_SETTINGS: dict[str, Any] = {
    "switch": switch_settings(UET_BDP_PACKETS * UET_PACKET, 29 * UET_PACKET, 116 * UET_PACKET, ecn_to_hosts=True),
}


def ccs_for(recovery: str) -> list[str]:
    """The congestion controllers a recovery scheme runs under here."""
    return NDP_CCS if recovery == "ndp" else UET_CCS if recovery == "uet" else CCS
LOSSES = [0.0, 0.001]
SEEDS, QUICK_SEEDS = [1, 2, 3], [1]
ITERATIONS, QUICK_ITERATIONS = 2, 1

BASE_SCENARIO: dict[str, Any] = {
    "name": "collective-compare",
    "seed": 1,
    # Far beyond the slowest variant (go-back-N sprayed under HPCC: ~50 ms per iteration); a run
    # ends when its last flow does.
    "duration": "1s",
    "stop_when_done": True,
    "topology": {"kind": "fat-tree", "k": 4, "host_link": "100Gbps", "link_delay": "1us"},
    "switch": {"pfc": {"enabled": True, "headroom": "auto"}},
    "routing": {"policy": "ecmp"},
    "transport": {"recovery": "gbn", "cc": "dcqcn"},
    "workload": {"kind": "collective",
                 "collective": {"op": "all-reduce", "algorithm": "ring", "ranks": RANKS, "size": "16MB",
                                "placement": "random", "iterations": 1}},
}



def workloads(quick: bool) -> list[tuple[str, str, str, str, str]]:
    """(label, op, algorithm, placement, size) of the grid."""
    out = []
    for label, op, alg, place, size, quick_size in WORKLOADS:
        if not quick:
            out.append((label, op, alg, place, size))
        elif quick_size is not None:
            out.append((label, op, alg, place, quick_size))
    return out


def grid(quick: bool) -> list[tuple[str, str, str, str, float, int]]:
    """(workload label, recovery, routing, cc, loss, seed), workload by workload."""
    seeds = QUICK_SEEDS if quick else SEEDS
    return [(w[0], rec, route, cc, loss, seed)
            for w in workloads(quick) for rec, route in VARIANTS for cc in ccs_for(rec) for loss in LOSSES
            for seed in seeds]


def scenario(workload: tuple[str, str, str, str, str], recovery: str, routing: str, cc: str, loss: float,
             seed: int, iterations: int) -> Scenario:
    label, op, alg, place, size = workload
    short = f"{op}-{place}-{recovery}-{routing}-{cc}-{loss:g}-s{seed}"
    if op == PERMUTATION:
        work: dict[str, Any] = {"kind": "flow-list", "flows": permutation_flows(seed, size, iterations)}
    else:
        work = {"kind": "collective",
                "collective": {"op": op, "algorithm": alg, "ranks": RANKS, "size": size,
                               "placement": place, "iterations": iterations}}
    data: dict[str, Any] = {
        **BASE_SCENARIO,
        "name": f"collective-compare-{short}",
        "seed": seed,
        "routing": {"policy": routing},
        # UET runs its own congestion control, named in its rows' cc column.
        "transport": {"recovery": recovery, "cc": "none" if recovery == "uet" else cc},
        "workload": work,
    }
    if recovery == "ndp":
        data.update(NDP_SETTINGS)
    if recovery == "uet":
        data.update(UET_SETTINGS)
        data["recovery"] = {"uet": {"cc": cc}}
    if loss:
        data["loss"] = [{"at": "everywhere", "rate": loss}]
    return Scenario.from_dict(data)


def derangement(seed: int) -> list[int]:
    """Host i sends to host out[i]: a random permutation of the RANKS hosts with no fixed point,
    drawn from `seed` alone (shuffled again until no host is its own destination)."""
    rng = random.Random(seed)
    hosts = list(range(RANKS))
    while True:
        rng.shuffle(hosts)
        if all(dst != src for src, dst in enumerate(hosts)):
            return list(hosts)


def permutation_flows(seed: int, size: str, iterations: int) -> list[dict[str, Any]]:
    """The permutation as a flow list: RANKS flows of `size` per iteration, all at 0 in the
    first; each later iteration's flows wait for every flow of the one before (a barrier, as a
    collective's steps), so iteration i's flows are positions i x RANKS .. (i + 1) x RANKS - 1."""
    dst = derangement(seed)
    flows: list[dict[str, Any]] = []
    for it in range(iterations):
        before = list(range((it - 1) * RANKS, it * RANKS)) if it else []
        for src in range(RANKS):
            flow: dict[str, Any] = {"src": f"h{src}", "dst": f"h{dst[src]}", "size": size, "start": "0us"}
            if before:
                flow["after"] = before
            flows.append(flow)
    return flows


def permutation_iterations(result: Results) -> pl.DataFrame:
    """A permutation run's iterations as collectives.parquet has a collective's: CCT = the last
    flow's finish - the iteration's start (its flows' earliest start), NaN when a flow did not
    finish; ideal = the largest ideal FCT of its flows (each flow alone on the empty network);
    slowdown = CCT / ideal; no bus bandwidth (not a collective)."""
    flows = result.flows.sort("flow_id")
    rows = []
    for it in range(flows.height // RANKS):
        part = flows.slice(it * RANKS, RANKS)
        finish = part["finish_us"].fill_nan(None)
        cct = float(finish.max()) - float(part["start_us"].min()) if finish.null_count() == 0 else math.nan  # type: ignore[arg-type]
        ideal = float(part["ideal_fct_us"].max())  # type: ignore[arg-type]
        rows.append({"cct_us": cct, "ideal_cct_us": ideal, "slowdown": cct / ideal, "busbw_gbps": math.nan})
    return pl.DataFrame(rows)


def scenarios(quick: bool) -> list[Scenario]:
    by_label = {w[0]: w for w in workloads(quick)}
    iterations = QUICK_ITERATIONS if quick else ITERATIONS
    return [scenario(by_label[w], rec, route, cc, loss, seed, iterations)
            for w, rec, route, cc, loss, seed in grid(quick)]


def _mean(values: list[float]) -> Optional[float]:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    return sum(finite) / len(finite) if finite else None


def _rounded(value: Optional[float], digits: int) -> Optional[float]:
    return None if value is None else round(value, digits)


def summarize(quick: bool, results: list[Results]) -> pl.DataFrame:
    """One row per (workload, recovery, routing, cc, loss): the seeds' runs pooled."""
    by_label = {w[0]: w for w in workloads(quick)}
    runs: dict[tuple[str, str, str, str, float], list[Results]] = {}
    for (w, rec, route, cc, loss, _seed), result in zip(grid(quick), results):
        runs.setdefault((w, rec, route, cc, loss), []).append(result)
    rows = []
    for (w, rec, route, cc, loss), group in runs.items():
        _label, op, alg, place, size = by_label[w]
        coll = pl.concat([permutation_iterations(r) if op == PERMUTATION else
                          r.collectives.select("cct_us", "ideal_cct_us", "slowdown", "busbw_gbps") for r in group])
        done = coll.filter(pl.col("cct_us").is_not_nan())
        cct = done["cct_us"].to_list()
        rows.append({
            "op": op, "algorithm": alg, "placement": place, "size": size,
            "recovery": rec, "routing": route, "cc": cc, "loss": loss,
            "iterations": coll.height, "finished": done.height,
            "cct_us": _rounded(_mean(cct), 2),
            "cct_max_us": _rounded(max(cct) if cct else None, 2),
            "ideal_cct_us": _rounded(_mean(coll["ideal_cct_us"].to_list()), 2),
            "slowdown": _rounded(_mean(done["slowdown"].to_list()), 4),
            "busbw_gbps": _rounded(_mean(done["busbw_gbps"].to_list()), 3),
            "timeouts": _rounded(_mean([float(r.flows["timeouts"].sum()) for r in group]), 2),
            "retx_mb": _rounded(_mean([float(r.flows["retx_bytes"].sum()) / 1e6 for r in group]), 3),
            "pfc_pauses": _rounded(_mean([float(r.summary.get("pfc_pauses", 0)) for r in group]), 2),
        })
    return pl.DataFrame(rows)


def variant_label(recovery: str, routing: str) -> str:
    if recovery == "uet":  # sprayed by its entropy values, over the switches' ECMP hash
        return "uet\nEV spray"
    return f"{recovery}\n{'spray' if routing.startswith('spray') else routing}"


def plot(table: pl.DataFrame, path: Path, quick: bool) -> Figure:
    """Mean CCT (ms, log) per variant, a panel per workload; a bar per (cc, loss) in each
    variant's group, the mean ideal CCT as a dashed line."""
    cases = table.select("op", "algorithm", "placement", "size").unique(maintain_order=True).rows()
    series = table.select("cc", "loss").unique(maintain_order=True).rows()
    figure = Figure(figsize=(5.2 * len(cases), 4.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes_list = figure.subplots(1, len(cases), squeeze=False)[0]
    width = 0.8 / len(series)
    for axes, (op, alg, place, size) in zip(axes_list, cases):
        panel = table.filter((pl.col("op") == op) & (pl.col("algorithm") == alg) & (pl.col("placement") == place))
        variants = panel.select("recovery", "routing").unique(maintain_order=True).rows()
        for k, (cc, loss) in enumerate(series):
            rows = {(r["recovery"], r["routing"]): r for r in
                    panel.filter((pl.col("cc") == cc) & (pl.col("loss") == loss)).iter_rows(named=True)}
            at = [i - 0.4 + width * (k + 0.5) for i in range(len(variants))]
            ms = [(rows[v]["cct_us"] or math.nan) / 1000 if v in rows else math.nan for v in variants]
            axes.bar(at, ms, width, label=f"{cc}, loss {loss * 100:g} %", color=f"C{k % 10}",
                     hatch="//" if loss else None, edgecolor="white" if loss else None)
        ideal = panel["ideal_cct_us"].mean()
        if isinstance(ideal, (int, float)):
            axes.axhline(ideal / 1000, color="black", linestyle="--", linewidth=1, label="ideal")
        axes.set_yscale("log")
        # Ticks at 1, 2, 5 x 10^n, written plainly (0.5, 2, 20), none between.
        axes.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axes.yaxis.set_minor_formatter(NullFormatter())
        if isinstance(ideal, (int, float)):
            axes.set_ylim(bottom=ideal / 1000 * 0.8)
        axes.set_xticks(range(len(variants)), [variant_label(*v) for v in variants])
        axes.set_title(f"{op} {alg}, {place}, {RANKS} x {size}")
        axes.set_ylabel("collective completion time (ms, mean)")
        axes.grid(True, which="both", axis="y", alpha=0.3)
        axes.set_axisbelow(True)
    axes_list[0].legend(fontsize="small")
    figure.suptitle("Collectives on a k = 4 fat-tree, 100 Gbps" + (" (--quick)" if quick else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return figure


def findings(table: pl.DataFrame) -> pl.DataFrame:
    """The comparisons docs/REPRODUCTIONS.md discusses, per workload and cc: slowdown ratios of
    one variant over another (> 1: the first is slower)."""
    def one(part: pl.DataFrame, rec: str, route: str, loss: float) -> Optional[float]:
        r = part.filter((pl.col("recovery") == rec) & (pl.col("routing") == route) & (pl.col("loss") == loss))
        return r["slowdown"][0] if r.height else None

    def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
        return round(a / b, 3) if a is not None and b else None

    rows = []
    for (op, place, cc), part in table.filter(pl.col("cc").is_in(CCS)).group_by(["op", "placement", "cc"],
                                                                                maintain_order=True):
        rows.append({
            "op": op, "placement": place, "cc": cc,
            "gbn/irn ecmp, lossless": ratio(one(part, "gbn", "ecmp", 0.0), one(part, "irn", "ecmp", 0.0)),
            "gbn/irn ecmp, 0.1 % loss": ratio(one(part, "gbn", "ecmp", 0.001), one(part, "irn", "ecmp", 0.001)),
            "melo/irn ecmp, 0.1 % loss": ratio(one(part, "melo", "ecmp", 0.001), one(part, "irn", "ecmp", 0.001)),
            "irn ecmp/spray, lossless": ratio(one(part, "irn", "ecmp", 0.0), one(part, "irn", SPRAY, 0.0)),
            "gbn/irn spray, lossless": ratio(one(part, "gbn", SPRAY, 0.0), one(part, "irn", SPRAY, 0.0)),
            "left/irn spray, lossless": ratio(one(part, "left", SPRAY, 0.0), one(part, "irn", SPRAY, 0.0)),
            "left/irn spray, 0.1 % loss": ratio(one(part, "left", SPRAY, 0.001), one(part, "irn", SPRAY, 0.001)),
        })
    # NDP and UET run under their own control only: beside IRN sprayed under each controller
    # (UET beside go-back-N with ECMP too: RoCE today), and UET beside NDP.
    for (op, place), part in table.group_by(["op", "placement"], maintain_order=True):
        ndp = {loss: one(part.filter(pl.col("cc") == "none"), "ndp", SPRAY, loss) for loss in LOSSES}
        uet = {loss: one(part.filter(pl.col("cc") == "nscc"), "uet", "ecmp", loss) for loss in LOSSES}
        for cc in CCS:
            other = part.filter(pl.col("cc") == cc)
            rows.append({"op": op, "placement": place, "cc": f"ndp vs irn spray {cc}",
                         "ndp/irn spray, lossless": ratio(ndp[0.0], one(other, "irn", SPRAY, 0.0)),
                         "ndp/irn spray, 0.1 % loss": ratio(ndp[0.001], one(other, "irn", SPRAY, 0.001))})
        for cc in CCS:
            other = part.filter(pl.col("cc") == cc)
            rows.append({"op": op, "placement": place, "cc": f"uet vs {cc}",
                         "uet/irn spray, lossless": ratio(uet[0.0], one(other, "irn", SPRAY, 0.0)),
                         "uet/irn spray, 0.1 % loss": ratio(uet[0.001], one(other, "irn", SPRAY, 0.001)),
                         "uet/gbn ecmp, lossless": ratio(uet[0.0], one(other, "gbn", "ecmp", 0.0)),
                         "uet/gbn ecmp, 0.1 % loss": ratio(uet[0.001], one(other, "gbn", "ecmp", 0.001))})
        rows.append({"op": op, "placement": place, "cc": "uet vs ndp",
                     "uet/ndp, lossless": ratio(uet[0.0], ndp[0.0]),
                     "uet/ndp, 0.1 % loss": ratio(uet[0.001], ndp[0.001])})
    return pl.DataFrame(rows, infer_schema_length=None)


def claims(table: pl.DataFrame) -> list[Claim]:
    """None: not a paper's figure, so no source states a number to judge ours against (the
    comparisons are `findings`, discussed in docs/REPRODUCTIONS.md). The claims table is
    written all the same, empty, so that every reproduction has one."""
    return []


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    points = grid(quick)
    start = time.perf_counter()
    results = run_many(scenarios(quick))
    wall = time.perf_counter() - start
    table = summarize(quick, results)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    plot(table, out_dir / "plot.png", quick)
    print(format_table(table.drop("algorithm"), max_rows=200))
    print()
    print(format_table(findings(table)))
    report_claims(claims(table), out_dir, quick)
    print(f"\n{len(points)} runs in {wall:.0f} s wall; wrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table
