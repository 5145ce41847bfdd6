"""Cross-check with uet-htsim, the Ultra Ethernet consortium's simulator, on its own validation
inputs (issue 44).

The experiments are those of uet-htsim's `validate_uec_sender.txt`, `validate_uec_rcv.txt` and
`validate_uec_both.txt` (`htsim/sim/datacenter/`, commit 40ccb05) on its default network, run by
retx from the same connection matrices with the same flags: 3-tier fat-trees of 16, 128 or 1,024
hosts (K = 4, 8, 16), 100 Gbps and 1 us everywhere, 4,150 B packets (4,086 B payload, 64 B
header) trimmed to 64 B by a switch port holding one BDP (178,450 B) of data, ECN marked at
dequeue from 20 % to 80 % of it (37,350-145,250 B), not on ports toward hosts when receivers pull
credit; UET over it with NSCC (`-sender_cc_only`), RCCC (`-receiver_cc_only`) or both, 64 or
`-paths` entropy values, mixed load balancing, `-cwnd` where the plan sets it.

Each row: the plan's tail-FCT target, what uet-htsim built here printed for it (its verdict), what
retx gives (its verdict against the same target), their ratio and the verdict on the 2 % tail
tolerance; where uet-htsim's per-flow finish times are at hand (the permutations and incasts,
`data/uet_htsim_flows.csv`, 1 ns, from its flow-event log) the largest per-flow deviation and the
share of flows within 5 %. As validate.py does, the tail is the last flow's absolute finish time.

`-failed 1` (lines 9 and 12) is core 0's downlink to aggregation switch 0 at a quarter of its
speed (`[[switch.degraded]]`). Lines 14 and 15 (`-topo`) run on uet-htsim's 2-tier leaf-spines
(32 ToRs of 32 hosts, 8 or 4 spines: 4:1 and 8:1 oversubscribed) declared as retx's
`leaf-spine`, hosts numbered as uet-htsim numbers them (ToR by ToR).

The connection matrices live outside the repository (../peers/uet-htsim, or
$RETX_UET_HTSIM_DIR: the uet-htsim checkout).
"""

from __future__ import annotations

import functools
import os
import statistics
from pathlib import Path
from typing import Any, NamedTuple, Optional

import polars as pl

from retx import runner, uet_htsim
from retx.reproduce.common import Claim, Tolerance, absolute, at_most, relative, report_claims, save_table
from retx.scenario import Scenario
from retx.table import format_table

TAIL_TOLERANCE = 0.02
FLOW_TOLERANCE = 0.05
REFERENCE = Path(__file__).resolve().parent / "data" / "uet_htsim_flows.csv"
# uet-htsim's own outcomes at other seeds (scripts/uet_htsim_seeds.py): how far one draw of its
# random streams (hash salts, ECN marks, trimming choices, entropy values) moves it from itself.
SEEDS = Path(__file__).resolve().parent / "data" / "uet_htsim_seeds.csv"
# retx's seeds for the single-path experiments of the quick grid (`seed` 1 is the scenario's).
SEED_RUNS = range(1, 11)
# The plans' controller flags, by plan.
MODE_FLAGS = {"sender": ["-sender_cc_only"], "rcv": ["-receiver_cc_only"], "both": ["-sender_cc", "-receiver_cc"]}
# uet-htsim's 2-tier `.topo` files of lines 14 and 15, by spine count.
TOPO_FILES = {8: "leaf_spine_1024_oversub.topo", 4: "leaf_spine_1024_oversub_8-1.topo"}


class Experiment(NamedTuple):
    """One experiment of the three plans: its plan (mode) and line, name, matrix, hosts,
    `-paths`, `-cwnd` (packets, 0: none), `-end` (us), the plan's tail target (us), what
    uet-htsim printed (tail us, its Summary packet counters) and the key of its per-flow finish
    times in the reference file (None: none recorded)."""

    mode: str
    idx: int
    name: str
    cm: str
    hosts: int
    paths: int
    cwnd: int
    end_us: int
    target_us: float
    htsim_tail_us: float
    htsim_summary: str
    flows_key: Optional[str]
    quick: bool
    # `-failed N`: in a 3-tier tree uet-htsim degrades the core-to-aggregation downlinks with
    # l + agg x (aggs per pod) < N to 25 % of their speed, queue and ECN thresholds
    # (fat_tree_topology.cpp:1005-1018, 1174-1177); N = 1 is core 0's link down to aggregation
    # switch 0, which retx's fat-tree numbers the same (`core0` -> `agg0`).
    failed: int = 0
    # `-topo`: one of uet-htsim's 2-tier `.topo` files, by its spine count (0: the default
    # 3-tier fat-tree). Both files are 32 ToRs of 32 hosts at 100 Gbps with 1 us links, every
    # ToR wired once to each spine: 8 spines (4:1) or 4 (8:1).
    spines: int = 0


def _plan(mode: str, rows: list[tuple[Any, ...]]) -> list[Experiment]:
    return [Experiment(mode, *r) for r in rows]


# validate_uec_{sender,rcv,both}.txt at 40ccb05, the experiments on the default network; the
# tails and Summary lines are what uet-htsim printed here (identical to its committed
# validate_outputs/*.out).
EXPERIMENTS = (
    _plan("sender", [
        (1, "Single Connection", "one.cm", 16, 64, 0, 1000, 190, 176.2, "New: 490 Rtx: 0 ACKs: 124 NACKs: 0 Pulls: 0", None, True),
        (2, "Bidirectional Connection", "bidir.cm", 16, 64, 0, 1000, 190, 176.804, "New: 980 Rtx: 0 ACKs: 248 NACKs: 0 Pulls: 0", None, True),
        (3, "Small 16 node incast", "incast.cm", 16, 64, 0, 3000, 2550, 2478.53, "New: 7350 Rtx: 811 ACKs: 7131 NACKs: 811 Pulls: 0", "incast16", True),
        (4, "128 node incast", "incast_128.cm", 128, 64, 0, 30000, 23000, 21029.3, "New: 62230 Rtx: 72623 ACKs: 62126 NACKs: 72623 Pulls: 0", "incast128", True),
        (5, "1024 node incast", "incast_1024_100K.cm", 1024, 64, 50, 15000, 8950, 10556.2, "New: 25575 Rtx: 448242 ACKs: 25569 NACKs: 433185 Pulls: 0", "incast1024_100K", False),
        (6, "3 to 1 incast with long running flow", "incast_3-1_overlapped.tm", 128, 64, 50, 1000, 220, 221.731, "New: 614 Rtx: 80 ACKs: 351 NACKs: 80 Pulls: 0", None, True),
        (7, "outcast incast", "outcast_incast.cm", 128, 64, 0, 3000, 2500, 1638.08, "New: 10290 Rtx: 0 ACKs: 2629 NACKs: 0 Pulls: 0", None, True),
        (8, "Small permutation (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 1000, 210, 194.022, "New: 7840 Rtx: 0 ACKs: 2547 NACKs: 0 Pulls: 0", "perm16_paths128", True),
        (9, "Small permutation, INC (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 2000, 210, 238.218, "New: 7840 Rtx: 99 ACKs: 2731 NACKs: 99 Pulls: 0", None, True, 1),
        (10, "Small permutation, single path.", "perm_16n_16c_2MB.cm", 16, 1, 0, 2000, 1300, 527.755, "New: 7840 Rtx: 279 ACKs: 6083 NACKs: 279 Pulls: 0", None, True),
        (11, "Large permutation (1024 nodes)", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 400, 220, 200.507, "New: 501760 Rtx: 0 ACKs: 170700 NACKs: 0 Pulls: 0", "perm1024_paths128", False),
        (12, "Large permutation, INC (1024 nodes)", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 400, 220, 202.266, "New: 501760 Rtx: 77 ACKs: 170053 NACKs: 77 Pulls: 0", None, False, 1),
        (13, "Large permutation (1024 nodes), single path.", "perm_1024n_1024c_0u_2000000b.cm", 1024, 1, 0, 3000, 1300, 889.92, "New: 501760 Rtx: 25621 ACKs: 393298 NACKs: 25621 Pulls: 0", None, False),
        (14, "Oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 880, 785.774, "New: 501760 Rtx: 31934 ACKs: 437309 NACKs: 31934 Pulls: 0", None, False, 0, 8),
        (15, "8:1 oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 1760, 1443.43, "New: 501760 Rtx: 39531 ACKs: 453543 NACKs: 39530 Pulls: 0", None, False, 0, 4),
    ])
    + _plan("rcv", [
        (1, "Single Connection", "one.cm", 16, 64, 0, 1000, 190, 177.368, "New: 490 Rtx: 0 ACKs: 126 NACKs: 0 Pulls: 206", None, True),
        (2, "Bidirectional Connection", "bidir.cm", 16, 64, 0, 1000, 190, 178.18, "New: 980 Rtx: 0 ACKs: 254 NACKs: 0 Pulls: 420", None, True),
        (3, "Small 16 node incast", "incast.cm", 16, 64, 0, 3000, 2550, 2464.44, "New: 7350 Rtx: 762 ACKs: 2586 NACKs: 762 Pulls: 2148", "incast16", True),
        (4, "128 node incast", "incast_128.cm", 128, 64, 0, 30000, 23000, 20891.4, "New: 62230 Rtx: 6218 ACKs: 20650 NACKs: 6206", "incast128", True),
        (5, "1024 node incast", "incast_1024_100K.cm", 1024, 64, 50, 10000, 8950, 8902.25, "New: 25575 Rtx: 33864 ACKs: 47186 NACKs: 12211", "incast1024_100K", False),
        (6, "3 to 1 incast with long running flow", "incast_3-1_overlapped.tm", 128, 64, 50, 1000, 220, 217.08, "New: 614 Rtx: 48 ACKs: 211 NACKs: 48 Pulls: 400", None, True),
        (7, "outcast incast", "outcast_incast.cm", 128, 64, 0, 3000, 2500, 1637.76, "New: 10290 Rtx: 0 ACKs: 2609 NACKs: 0 Pulls: 42288", None, True),
        (8, "Small permutation (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 1000, 210, 195.673, "New: 7840 Rtx: 3 ACKs: 2911 NACKs: 3 Pulls: 3362", "perm16_paths128", True),
        (9, "Small permutation, INC (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 2000, 210, 229.764, "New: 7840 Rtx: 284 ACKs: 3647 NACKs: 284 Pulls: 3814", None, True, 1),
        (10, "Small permutation, single path.", "perm_16n_16c_2MB.cm", 16, 1, 0, 2000, 1300, 515.24, "New: 7840 Rtx: 7493 ACKs: 7275 NACKs: 7493", None, True),
        (11, "Large permutation (1024 nodes)", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 400, 220, 203.384, "New: 501760 Rtx: 199 ACKs: 196594 NACKs: 199", "perm1024_paths128", False),
        (12, "Large permutation (1024 nodes), 1 INC path", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 1500, 220, 200.864, "New: 501760 Rtx: 308 ACKs: 197648 NACKs: 308 Pulls: 217949", None, False, 1),
        (13, "Large permutation (1024 nodes), single path.", "perm_1024n_1024c_0u_2000000b.cm", 1024, 1, 0, 3000, 1300, 1063.0, "New: 501760 Rtx: 751044 ACKs: 476887 NACKs: 751044", None, False),
        (14, "4:1 oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 880, 749.717, "New: 501760 Rtx: 47945 ACKs: 323455 NACKs: 47945 Pulls: 149034", None, False, 0, 8),
        (15, "8:1 oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 1760, 1459.06, "New: 501760 Rtx: 67853 ACKs: 341690 NACKs: 67853 Pulls: 152274", None, False, 0, 4),
    ])
    + _plan("both", [
        (1, "Single Connection", "one.cm", 16, 64, 0, 1000, 190, 177.368, "New: 490 Rtx: 0 ACKs: 126 NACKs: 0 Pulls: 206", None, True),
        (2, "Bidirectional Connection", "bidir.cm", 16, 64, 0, 1000, 190, 178.18, "New: 980 Rtx: 0 ACKs: 254 NACKs: 0 Pulls: 420", None, True),
        (3, "Small 16 node incast", "incast.cm", 16, 64, 0, 3000, 2550, 2462.92, "New: 7350 Rtx: 758 ACKs: 2576 NACKs: 758 Pulls: 2150", "incast16", True),
        (4, "128 node incast", "incast_128.cm", 128, 64, 0, 30000, 23000, 20892.4, "New: 62230 Rtx: 6226 ACKs: 20618 NACKs: 6216", "incast128", True),
        (5, "1024 node incast", "incast_1024_100K.cm", 1024, 64, 50, 10000, 8950, 8802.62, "New: 25575 Rtx: 26625 ACKs: 26542 NACKs: 12033", "incast1024_100K", False),
        (6, "3 to 1 incast with long running flow", "incast_3-1_overlapped.tm", 128, 64, 50, 1000, 220, 217.555, "New: 614 Rtx: 49 ACKs: 202 NACKs: 49 Pulls: 327", None, True),
        (7, "outcast incast", "outcast_incast.cm", 128, 64, 0, 3000, 2500, 1634.11, "New: 10290 Rtx: 0 ACKs: 2628 NACKs: 0 Pulls: 42262", None, True),
        (8, "Small permutation (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 1000, 210, 196.774, "New: 7840 Rtx: 0 ACKs: 2742 NACKs: 0 Pulls: 3755", "perm16_paths128", True),
        (9, "Small permutation, INC (16 nodes)", "perm_16n_16c_2MB.cm", 16, 128, 0, 2000, 210, 238.253, "New: 7840 Rtx: 100 ACKs: 2858 NACKs: 100 Pulls: 4348", None, True, 1),
        (10, "Small permutation, single path.", "perm_16n_16c_2MB.cm", 16, 1, 0, 2000, 1300, 518.735, "New: 7840 Rtx: 270 ACKs: 5871 NACKs: 270 Pulls: 7302", None, True),
        (11, "Large permutation (1024 nodes)", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 400, 220, 202.633, "New: 501760 Rtx: 0 ACKs: 173066 NACKs: 0", "perm1024_paths128", False),
        (12, "Large permutation, INC (1024 nodes)", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 1000, 220, 205.1, "New: 501760 Rtx: 67 ACKs: 173014 NACKs: 67 Pulls: 256892", None, False, 1),
        (13, "Large permutation (1024 nodes), single path.", "perm_1024n_1024c_0u_2000000b.cm", 1024, 1, 0, 3000, 1300, 1047.05, "New: 501760 Rtx: 25032 ACKs: 397854 NACKs: 25032", None, False),
        (14, "Oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 880, 814.138, "New: 501760 Rtx: 31622 ACKs: 437359 NACKs: 31622 Pulls: 456248", None, False, 0, 8),
        (15, "8:1 oversubscribed permutation with multipath", "perm_1024n_1024c_0u_2000000b.cm", 1024, 128, 0, 2000, 1760, 1479.39, "New: 501760 Rtx: 39251 ACKs: 451957 NACKs: 39251 Pulls: 623776", None, False, 0, 4),
    ])
)


def inputs_dir() -> Path:
    env = os.environ.get("RETX_UET_HTSIM_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3].parent / "peers" / "uet-htsim"


def matrices() -> Path:
    return inputs_dir() / "htsim" / "sim" / "datacenter" / "connection_matrices"


def topologies() -> Path:
    return inputs_dir() / "htsim" / "sim" / "datacenter" / "topologies"


class MissingInputs(FileNotFoundError):
    def __str__(self) -> str:
        return (f"uet-htsim-crosscheck needs uet-htsim's connection matrices in {self.args[0]} "
                "(set RETX_UET_HTSIM_DIR to a uet-htsim checkout at 40ccb05)")


def available() -> bool:
    return all((matrices() / e.cm).is_file() for e in EXPERIMENTS)


def experiment_flags(e: Experiment) -> list[str]:
    """The experiment's htsim_uec command line, as its plan gives it (`-paths` always)."""
    flags = ["-tm", str(matrices() / e.cm), "-end", str(e.end_us), "-paths", str(e.paths), *MODE_FLAGS[e.mode]]
    flags += ["-cwnd", str(e.cwnd)] if e.cwnd else []
    flags += ["-failed", str(e.failed)] if e.failed else []
    flags += ["-topo", str(topologies() / TOPO_FILES[e.spines])] if e.spines else []
    return flags


def scenario(e: Experiment) -> Scenario:
    """The experiment as retx runs it: its flags through `retx uet-htsim`'s translation of
    uet-htsim's network, switches and settings (retx/uet_htsim.py)."""
    return uet_htsim.scenario(uet_htsim.parse(experiment_flags(e)), name=f"uet-{e.mode}-{e.idx}")


def reference_flows() -> pl.DataFrame:
    return pl.read_csv(REFERENCE, comment_prefix="#")


class SeedSpread(NamedTuple):
    """uet-htsim on one experiment at seed 13 and other seeds: how many runs, the lowest and
    highest tail (us) and its quartiles, the largest relative move of the tail from the seed-13
    run's, and the largest deviation of a flow's finish time from the seed-13 run."""

    runs: int
    tail_min_us: float
    tail_max_us: float
    tail_q1_us: float
    tail_q3_us: float
    tail_dev: float
    max_dev: float


@functools.cache
def seed_spreads() -> dict[tuple[str, int], SeedSpread]:
    """uet-htsim's seed spread per (plan, line), from `SEEDS` (read once)."""
    table = pl.read_csv(SEEDS, comment_prefix="#")
    out: dict[tuple[str, int], SeedSpread] = {}
    for (mode, line), runs in table.group_by(["mode", "line"], maintain_order=True):
        tails = sorted(float(t) for t in runs["tail_us"])
        q1, _, q3 = statistics.quantiles(tails, n=4, method="inclusive") if len(tails) > 1 else (tails[0],) * 3
        own = float(runs.filter(pl.col("seed") == 13)["tail_us"][0])
        out[(str(mode), int(line))] = SeedSpread(runs.height, tails[0], tails[-1], q1, q3,
                                                 max(abs(t / own - 1.0) for t in tails),
                                                 float(runs["max_dev"].max()))  # type: ignore[arg-type]
    return out


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "FAIL"


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    """Every experiment (`quick`: those of 16 and 128 hosts)."""
    if not available():
        raise MissingInputs(matrices())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ref = reference_flows()
    rows: list[dict[str, Any]] = []
    flows: list[pl.DataFrame] = []
    for e in EXPERIMENTS:
        if quick and not e.quick:
            continue
        result = runner.run(scenario(e), progress=False)
        ours = result.flows.sort("flow_id")
        finished = int(ours["finish_us"].is_not_null().sum()) - int(ours["finish_us"].is_nan().sum())
        tail = float(ours["finish_us"].max()) if finished == ours.height else float("nan")  # type: ignore[arg-type]
        ratio = tail / e.htsim_tail_us
        row: dict[str, Any] = {
            "plan": e.mode, "line": e.idx, "experiment": e.name, "flows": ours.height, "finished": finished,
            "target_us": e.target_us, "htsim_tail_us": e.htsim_tail_us, "htsim_verdict": verdict(e.htsim_tail_us, e.target_us),
            "retx_tail_us": round(tail, 3), "retx_verdict": verdict(tail, e.target_us) if finished == ours.height else "FAIL",
            "tail_ratio": round(ratio, 4), "tail_tolerance": TAIL_TOLERANCE,
            "tail_verdict": "PASS" if abs(ratio - 1.0) <= TAIL_TOLERANCE else "FAIL",
            "retx_tail_median_us": None,
            "flow_max_dev": None, "flows_within_5pct": None, "flow_verdict": None,
            "htsim_summary": e.htsim_summary,
            "retx_summary": (f"ACKs: {int(result.summary.get('uet_acks_received', 0))} "
                             f"NACKs: {int(result.summary.get('uet_nacks_received', 0))} Pulls: {int(result.summary.get('uet_pulls_received', 0))}"),
        }
        if e.paths == 1 and e.quick:
            # One EV per connection: the tail is the ECMP draw's, so compare a typical draw of
            # ours with a typical draw of uet-htsim's (see `claims`).
            tails = [tail] + [float(runner.run(scenario(e).with_overrides({"seed": seed}), progress=False)
                                    .flows["finish_us"].max()) for seed in SEED_RUNS[1:]]  # type: ignore[arg-type]
            row["retx_tail_median_us"] = round(statistics.median(tails), 3)
        if e.flows_key:
            theirs = ref.filter((pl.col("mode") == e.mode) & (pl.col("workload") == e.flows_key)).sort("idx")
            if theirs.height != ours.height or theirs["dst"].to_list() != [int(d[1:]) for d in ours["dst"].to_list()] \
                    or theirs["src"].to_list() != [int(s[1:]) for s in ours["src"].to_list()]:
                raise RuntimeError(f"{e.mode} {e.name}: retx's flows are not uet-htsim's, in order")
            joined = pl.DataFrame({"plan": e.mode, "experiment": e.name, "idx": theirs["idx"],
                                   "src": theirs["src"], "dst": theirs["dst"],
                                   "htsim_finish_us": theirs["finish_us"], "retx_finish_us": ours["finish_us"]})
            joined = joined.with_columns(deviation=(pl.col("retx_finish_us") / pl.col("htsim_finish_us") - 1.0))
            dev = joined["deviation"].abs()
            within = float((dev <= FLOW_TOLERANCE).mean())  # type: ignore[arg-type]
            row["flow_max_dev"] = round(float(dev.max()), 4)  # type: ignore[arg-type]
            row["flows_within_5pct"] = round(within, 4)
            row["flow_verdict"] = "PASS" if within == 1.0 else "FAIL"
            flows.append(joined)
        rows.append(row)
    table = pl.DataFrame(rows)
    save_table(table, out_dir)
    if flows:
        pl.concat(flows).write_csv(out_dir / "flows.csv")
    print(format_table(table.select("plan", "line", "experiment", "target_us", "htsim_tail_us", "htsim_verdict",
                                    "retx_tail_us", "retx_verdict", "tail_ratio", "tail_verdict",
                                    "flow_max_dev", "flows_within_5pct", "flow_verdict")))
    agree = sum(r["htsim_verdict"] == r["retx_verdict"] for r in rows)
    print(f"\ntarget verdicts agree with uet-htsim's on {agree} of {len(rows)} experiments; tails within "
          f"{TAIL_TOLERANCE:.0%} on {sum(r['tail_verdict'] == 'PASS' for r in rows)} of {len(rows)}")
    print(f"wrote {out_dir}/table.parquet, table.csv and flows.csv (per flow, where uet-htsim's are recorded)")
    report_claims(claims(table), out_dir, quick)
    print(f"wrote {out_dir}/claims.parquet, claims.csv")
    return table


WHY = "uet-htsim-crosscheck, What differs"
TAIL = relative(TAIL_TOLERANCE, "issue 44's bar for the tail against uet-htsim built here on the same input")
PER_FLOW = absolute(FLOW_TOLERANCE, "issue 44's bar per flow: every flow within 5 % of uet-htsim's finish time")
SEED_WHY = "uet-htsim-crosscheck, uet-htsim against itself"


def _seed_range(spread: SeedSpread) -> Tolerance:
    return absolute((spread.tail_max_us - spread.tail_min_us) / 2,
                    f"uet-htsim's own tails over {spread.runs} seeds (scripts/uet_htsim_seeds.py): source is "
                    "their range's midpoint, the tolerance its half-width")


def _seed_deviation(spread: SeedSpread) -> Tolerance:
    return at_most(f"uet-htsim's own flows move this far from its seed-13 run at {spread.runs - 1} other seeds "
                   "(scripts/uet_htsim_seeds.py)")


def claims(table: pl.DataFrame) -> list[Claim]:
    """uet-htsim's tail per experiment against ours (2 %), and where its per-flow finish times
    are recorded the largest deviation of a flow from them (at most 0.05); every experiment of
    the full grid, those a grid did not run (`--quick`'s) not in it. Where uet-htsim was also
    run at other seeds (`SEEDS`) and moved from itself by more than the bar, the same number
    against what uet-htsim itself does: our tail inside the range of its tails (and for the
    single-path experiments of the quick grid, our median tail over 10 seeds inside the
    interquartile range of its), our largest per-flow deviation from its seed-13 run no larger
    than its own other seeds' deviations from that run. A reimplementation with its own random
    streams can match uet-htsim's distribution of outcomes, not one draw of it."""
    rows = {(r["plan"], r["line"]): r for r in table.iter_rows(named=True)}
    spreads = seed_spreads()
    out: list[Claim] = []
    for e in EXPERIMENTS:
        r = rows.get((e.mode, e.idx))
        name = f"{e.mode} {e.idx} {e.name}"
        spread = spreads.get((e.mode, e.idx))
        out.append(Claim(f"{name}: tail us", e.htsim_tail_us, None if r is None else r["retx_tail_us"], TAIL, WHY))
        # Judged against uet-htsim's own spread only where that spread is wider than the bar:
        # where another seed moves uet-htsim itself further from its seed-13 run than the bar
        # allows (a property of uet-htsim's runs alone, not of ours).
        if spread is not None and spread.tail_dev > TAIL_TOLERANCE:
            out.append(Claim(f"{name}: tail us, in uet-htsim's range over {spread.runs} seeds",
                             (spread.tail_min_us + spread.tail_max_us) / 2, None if r is None else r["retx_tail_us"],
                             _seed_range(spread), SEED_WHY))
        if spread is not None and e.paths == 1 and e.quick:
            out.append(Claim(f"{name}: median tail us over seeds 1-{SEED_RUNS[-1]}, in uet-htsim's interquartile range",
                             (spread.tail_q1_us + spread.tail_q3_us) / 2,
                             None if r is None else r["retx_tail_median_us"],
                             absolute((spread.tail_q3_us - spread.tail_q1_us) / 2,
                                      f"uet-htsim's own tails over {spread.runs} seeds: source is their interquartile "
                                      "range's midpoint, the tolerance its half-width"), SEED_WHY))
        if e.flows_key:
            out.append(Claim(f"{name}: largest per-flow deviation", 0.0, None if r is None else r["flow_max_dev"],
                             PER_FLOW, WHY))
            if spread is not None and spread.max_dev > FLOW_TOLERANCE:
                out.append(Claim(f"{name}: largest per-flow deviation, against uet-htsim's own at other seeds",
                                 spread.max_dev, None if r is None else r["flow_max_dev"], _seed_deviation(spread),
                                 SEED_WHY))
    return out
