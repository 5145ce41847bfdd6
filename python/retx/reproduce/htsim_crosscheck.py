"""Cross-check with htsim's NDP on its own inputs (issue 30: NDP, faithful to htsim).

htsim's 432-host k = 12 fat-tree (100 Gbps everywhere, 1 us links), run by retx from htsim's own
connection matrices (`perm_432_2MB.cm`: a permutation of 2 MB flows; `ws_432_l30_5ms.cm`: web
search at 30 % load for 5 ms, 4,298 flows) with NDP set as `htsim_ndp -strat perm -mtu 4000`
sets it, and compared flow by flow with what `htsim_ndp` reported
(`reference/*.ndp_mtu4000.finish.txt`, Broadcom/csg-htsim @ 841d9e7).

The model, per htsim (`sim/ndp.cpp`, `sim/compositequeue.cpp`, `sim/datacenter/main_ndp.cpp`):
4,000 B packets, whole packets only (a flow's bytes rounded up, htsim's `acked_bytes`), 64 B
headers, ACKs, NACKs and PULLs; switch ports with a 15-packet (60,000 B) data queue, a header
queue of twice that served first, and htsim's coin flip between trimming the arrival and the last
queued packet; an initial window of 15 packets, then one packet per PULL, paced per host at 0.99
of the link. Paths: htsim's `perm` walks a per-flow permutation of the paths from the source;
retx's `spray-permutation` walks a per-flow permutation of each switch's ports.

FCT = finish - start, htsim's finish being when the sender saw its last ACK (as retx's). One
ideal-FCT definition for both: retx's `ideal_fct_us` of the flow (its bytes at the path's
bottleneck rate plus the path's latency), so the slowdowns differ exactly as the FCTs do. Flows
are bucketed by their size in the matrix (before rounding up), percentiles by rank as
ns3-crosscheck computes them.

The inputs live outside the repository (`../shared/peers/htsim/`, or `$RETX_HTSIM_DIR`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import polars as pl

from retx import runner
from retx.plots import plot_lines
from retx.reproduce.common import Claim, relative, report_claims, save_table
from retx.scenario import Scenario
from retx.table import format_table

# (name, connection matrix, htsim's finish.txt for it, htsim's wall time for it as
# ../shared/peers/htsim/README.md reports it on a 2-vCPU machine of this kind, seconds)
RUNS = [
    ("permutation", "perm_432_2MB.cm", "reference/perm_432_2MB.ndp_mtu4000.finish.txt", 18.0),
    ("web search", "ws_432_l30_5ms.cm", "reference/ws_432_l30_5ms.ndp_mtu4000.finish.txt", 162.0),
]
BUCKETS = [(0, 10_000, "< 10 KB"), (10_000, 100_000, "10-100 KB"),
           (100_000, 1_000_000, "100 KB-1 MB"), (1_000_000, 1 << 62, "> 1 MB")]
# The targets: every bucket's median, p95 and p99 FCT (and slowdown) within 20 % of
# htsim's; every permutation flow's finish time within 5 %.
TOLERANCE = 0.20
PERMUTATION_TOLERANCE = 0.05

# htsim_ndp's defaults and the references' command lines, as retx settings.
HTSIM_DATA_QUEUE = 15 * 4000  # main_ndp DEFAULT_QUEUE_SIZE = 15 packets of -mtu 4000


def scenario(cm: Path, name: str) -> Scenario:
    return Scenario.from_dict({
        "name": name,
        "duration": "100ms",
        "topology": {"kind": "fat-tree", "k": 12, "host_link": "100Gbps", "link_delay": "1us"},
        "nic": {"mtu": 4000, "whole_packets": True},
        "switch": {"pfc": {"enabled": False}, "ecn": {"enabled": False},
                   "trim": {"queue": 0, "header": "64B", "data_queue": f"{HTSIM_DATA_QUEUE}B", "victim": "htsim"}},
        "routing": {"policy": "spray-permutation"},
        "transport": {"recovery": "ndp", "cc": "none"},
        "workload": {"kind": "htsim-cm", "file": str(cm)},
    })


class MissingInputs(FileNotFoundError):
    def __str__(self) -> str:
        return (f"htsim-crosscheck needs htsim's inputs in {self.args[0]} "
                "(set RETX_HTSIM_DIR to the folder holding perm_432_2MB.cm and reference/)")


def inputs_dir() -> Path:
    env = os.environ.get("RETX_HTSIM_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3].parent / "shared" / "peers" / "htsim"


def available() -> bool:
    d = inputs_dir()
    return all((d / cm).is_file() and (d / ref).is_file() for _, cm, ref, _ in RUNS)


def read_finish(text: str) -> pl.DataFrame:
    """htsim's finish.txt: flow_id src dst size_bytes start_ps finish_us acked_bytes, ordered
    as retx numbers flows (by start, ties in file order)."""
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    df = pl.DataFrame({
        "htsim_id": [int(r[0]) for r in rows],
        "src": [f"h{r[1]}" for r in rows],
        "dst": [f"h{r[2]}" for r in rows],
        "size": [int(r[3]) for r in rows],
        "start_us": [int(r[4]) / 1e6 for r in rows],
        "finish_us": [float(r[5]) for r in rows],
        "acked_bytes": [int(r[6]) for r in rows],
    })
    return df.with_row_index("file_order").sort("start_us", "file_order", maintain_order=True)


def htsim_finish_txt(flows: pl.DataFrame, ids: list[int], sizes: list[int]) -> str:
    """retx's flows in htsim's terms (the reference's columns): flow_id src dst size_bytes
    start_ps finish_us acked_bytes."""
    lines = ["# flow_id src dst size_bytes start_ps finish_us acked_bytes   (retx, htsim's columns)"]
    for fid, size, r in zip(ids, sizes, flows.iter_rows(named=True)):
        lines.append(f"{fid} {r['src'][1:]} {r['dst'][1:]} {size} {round(r['start_us'] * 1e6)} "
                     f"{r['finish_us']:.3f} {r['delivered_bytes']}")
    return "\n".join(lines) + "\n"


def pctl(values: list[float], p: float) -> float:
    """The value at rank int(n x p) of the sorted list (ns3-crosscheck's rule)."""
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * p), len(ordered) - 1)]


def compare(name: str, joined: pl.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for lo, hi, bucket in BUCKETS:
        part = joined.filter((pl.col("size") >= lo) & (pl.col("size") < hi))
        row: dict[str, Any] = {"workload": name, "bucket": bucket, "flows": part.height}
        for metric in ("fct", "slowdown"):
            theirs, ours = part[f"htsim_{metric}"].to_list(), part[f"retx_{metric}"].to_list()
            for label, p in (("median", 0.5), ("p95", 0.95), ("p99", 0.99)):
                a, b = (pctl(theirs, p), pctl(ours, p)) if part.height else (float("nan"), float("nan"))
                row[f"htsim_{metric}_{label}"] = round(a, 3)
                row[f"retx_{metric}_{label}"] = round(b, 3)
                row[f"ratio_{metric}_{label}"] = round(b / a, 4) if part.height else float("nan")
        row["within_20pct"] = part.height == 0 or all(
            abs(row[f"ratio_{m}_{k}"] - 1.0) <= TOLERANCE for m in ("fct", "slowdown") for k in ("median", "p95", "p99"))
        rows.append(row)
    return rows


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    """Runs both matrices in full (`quick` changes nothing: the comparison only means something
    on htsim's own input; both take about 10 s together)."""
    d = inputs_dir()
    if not available():
        raise MissingInputs(d)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table_rows: list[dict[str, Any]] = []
    spreads: list[dict[str, Any]] = []
    cdf: list[dict[str, Any]] = []
    for name, cm, reference, htsim_wall in RUNS:
        start = time.perf_counter()
        result = runner.run(scenario(d / cm, f"htsim-{name.replace(' ', '-')}"))
        wall = time.perf_counter() - start
        theirs = read_finish((d / reference).read_text())
        ours = result.flows.sort("flow_id")
        if ours.height != theirs.height:
            raise RuntimeError(f"{name}: {ours.height} flows in retx, {theirs.height} in htsim")
        if ours["src"].to_list() != theirs["src"].to_list() or ours["dst"].to_list() != theirs["dst"].to_list():
            raise RuntimeError(f"{name}: retx's flows are not htsim's, in order")
        if ours["finish_us"].is_null().any() or ours["finish_us"].is_nan().any():
            raise RuntimeError(f"{name}: a flow did not finish in retx")
        joined = pl.DataFrame({
            "size": theirs["size"],
            "htsim_fct": theirs["finish_us"] - theirs["start_us"],
            "retx_fct": ours["fct_us"],
            "ideal": ours["ideal_fct_us"],
        }).with_columns(htsim_slowdown=pl.col("htsim_fct") / pl.col("ideal"),
                        retx_slowdown=pl.col("retx_fct") / pl.col("ideal"))
        table_rows += compare(name, joined)
        deviation = (joined["retx_fct"] / joined["htsim_fct"] - 1.0).abs().to_list()
        spreads.append({"workload": name, "flows": joined.height,
                        "max_fct_deviation": round(max(deviation), 4),
                        "mean_fct_deviation": round(sum(deviation) / len(deviation), 4),
                        "retx_wall_s": round(wall, 2), "htsim_wall_s_reported": htsim_wall})
        (out_dir / f"{cm.removesuffix('.cm')}.retx.finish.txt").write_text(
            htsim_finish_txt(ours, theirs["htsim_id"].to_list(), theirs["size"].to_list()))
        for sim in ("htsim", "retx"):
            values = sorted(joined[f"{sim}_slowdown"].to_list())
            n = len(values)
            cdf += [{"series": f"{sim} {name}", "slowdown": values[int(i * (n - 1) / 99)], "cdf": i / 99}
                    for i in range(100)]
    table = pl.DataFrame(table_rows)
    save_table(table, out_dir)
    spread = pl.DataFrame(spreads)
    spread.write_csv(out_dir / "flows.csv")
    plot_lines(pl.DataFrame(cdf), "slowdown", "cdf", "series", out_dir / "plot.png",
               xlabel="FCT slowdown (FCT / retx's ideal FCT)", ylabel="CDF of flows",
               title="retx vs htsim_ndp: 432-host fat-tree, NDP")
    print(format_table(table.select("workload", "bucket", "flows", "htsim_fct_median", "retx_fct_median",
                                    "htsim_fct_p95", "retx_fct_p95", "htsim_fct_p99", "retx_fct_p99",
                                    "within_20pct")))
    print()
    print(format_table(spread))
    print(f"\nwrote {out_dir}/table.parquet, table.csv, flows.csv, plot.png and each matrix's "
          "flows in htsim's finish.txt columns")
    report_claims(claims(table), out_dir, quick)
    print(f"wrote {out_dir}/claims.parquet, claims.csv")
    return table


WHY = "htsim-crosscheck, Where the models differ"
SAME_INPUT = relative(TOLERANCE, "two simulators of NDP on htsim's own input: 20 %, the within_20pct column's bar")


def claims(table: pl.DataFrame) -> list[Claim]:
    """htsim's FCT and slowdown percentiles per workload and size bucket against retx's
    (buckets without flows left out)."""
    return [Claim(f"{r['workload']} {r['bucket']}: {stat} {metric}", r[f"htsim_{metric}_{stat}"],
                  r[f"retx_{metric}_{stat}"], SAME_INPUT, WHY)
            for r in table.iter_rows(named=True) if r["flows"]
            for metric in ("fct", "slowdown") for stat in ("median", "p95", "p99")]
