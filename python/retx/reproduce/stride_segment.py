"""STRIDE (Fu et al.) §VI.A, Fig. 5: average time per byte against the ACK segment size.

STRIDE's receiver acknowledges once per data segment; "we observe that 64 kb provides STRIDE
with the quickest time to adjust its transmission rate based on observed STT (Figure 5)". Fig. 5
itself ("Avg. time (per Byte) varying with segment size") is not legible in the paper's text, so
only its conclusion, 64 KB fastest, is compared. Here `[recovery.stride] segment` is swept over
4, 8, 16, 32, 64, 128 and 256 KiB on the same flows.

Network, after the paper's testbed (Fig. 4: two FPGA hosts through two 10 Gbps switches, an
IXIA emulator adding background traffic): a dumbbell written as an HPCC ns-3 topology file
(`testbed.txt`, written beside the table): h0 and h2 on switch sw4, h1 and h3 on switch sw5,
every link 10 Gbps and 1 us, 4 MB of shared buffer per switch (as stride-fattree). h0 sends to
h1 through both switches; h2 -> h3 is the competing traffic, which shares the sw4 -> sw5 link
with it. retx runs one transport per scenario, so the competitor is STRIDE too (the paper's
background came from an emulator that does not react to congestion; with retx's unresponsive
`[[background]]` on sw4 -> sw5 instead, STRIDE collapses at every segment size, see
docs/REPRODUCTIONS.md).

Flows: Poisson arrivals from h0 to h1 and from h2 to h3, web search sizes (`websearch_hpcc`,
`../shared/workloads/websearch_hpcc.txt`, linear interpolation, mean 1.71 MB), 20 % of each
sender's link, so 40 % of the shared link: flows often overlap there, which is when the rate
control matters, and the offered load leaves the link room to recover. Arrivals for 2 s per
seed (quick: 1 s), seeds 1-10 (quick: 1-2); the flows of a seed are the same for every
segment (the workload does not depend on the transport). 1452 B payloads (a 1500 B IP packet),
STRIDE's other settings at their defaults (1 ms timer, Algorithm 1 with TIMELY's 10 Gbps
parameters). One seed's flows are few (~590 in 2 s) and a handful of overload episodes move
its numbers a lot, so the result is pooled over seeds.

Per segment size:
- ns_per_byte: the time per byte of the whole set, sum of FCTs / sum of bytes over every flow of
  every seed (each byte counts once; large flows, where the rate control acts, dominate), and
  its smallest and largest value over the seeds; mean_flow_ns_per_byte: the mean over flows of
  FCT / size (dominated by small flows, whose handshake and single ACK the segment does not
  change);
- fastest_seeds: in how many seeds this segment had the lowest ns_per_byte;
- stt_samples: the STT samples the senders' rate control took (every ACK and NACK carries one:
  the run's `stride_cc_updates`), and min_acks, the ACKs the segment rule alone requires: one
  per segment of every flow (sum of ceil(packets / packets per segment)); the difference is
  NACKs and the re-acknowledgements of duplicates after a go-back;
- timeouts, naks, retx_mb (payload resent) and drops (buffer drops) summed over seeds.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any, Optional

import polars as pl

from retx.plots import plot_lines
from retx.reproduce.common import Calibration, Claim, absolute, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

SEGMENTS_KIB = [4, 8, 16, 32, 64, 128, 256]
SEEDS = list(range(1, 11))
QUICK_SEEDS = [1, 2]
UNTIL_MS = 2000
QUICK_UNTIL_MS = 1000
LOAD = 0.2
MTU = 1452
PAPER_FASTEST_KIB = 64

# HPCC ns-3 topology format: "nodes switches links", the switch ids, then "a b rate delay
# error_rate" per link. Hosts 0-3 (h0..h3), switches 4 and 5 (sw4, sw5).
TOPOLOGY_FILE = "testbed.txt"
TOPOLOGY = """\
6 2 5
4 5
0 4 10Gbps 1000ns 0
2 4 10Gbps 1000ns 0
4 5 10Gbps 1000ns 0
5 1 10Gbps 1000ns 0
5 3 10Gbps 1000ns 0
"""

BASE_SCENARIO = {
    "name": "stride-segment",
    "seed": 1,
    "duration": "10s",
    "stop_when_done": True,
    "topology": {"kind": "hpcc-file", "file": TOPOLOGY_FILE},
    "switch": {"buffer": "4MB", "ecn": {"enabled": False}},
    "nic": {"mtu": MTU},
    "transport": {"recovery": "stride", "cc": "stride"},
    "recovery": {"stride": {"segment": "64KiB"}},
    "workload": {"kind": "poisson", "cdf": "websearch_hpcc", "load": LOAD,
                 "pairs": [["h0", "h1"], ["h2", "h3"]], "until": f"{UNTIL_MS}ms"},
    "output": {"sample_interval": "1ms"},
}


def grid(quick: bool) -> list[tuple[int, int]]:
    """(segment in KiB, seed)."""
    return [(seg, seed) for seed in (QUICK_SEEDS if quick else SEEDS) for seg in SEGMENTS_KIB]


def scenarios(quick: bool, topology_dir: Path) -> list[Scenario]:
    """The runs; `topology_dir` holds testbed.txt (see write_topology)."""
    until = QUICK_UNTIL_MS if quick else UNTIL_MS
    out = []
    for seg, seed in grid(quick):
        data: dict[str, Any] = copy.deepcopy(BASE_SCENARIO)
        data["name"] = f"stride-segment-{seg}KiB-seed{seed}"
        data["seed"] = seed
        data["recovery"]["stride"]["segment"] = f"{seg}KiB"
        data["workload"]["until"] = f"{until}ms"
        out.append(Scenario.from_dict(data, base_dir=topology_dir))
    return out


def write_topology(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / TOPOLOGY_FILE).write_text(TOPOLOGY)
    return out_dir


def min_acks(sizes: list[int], seg_kib: int) -> int:
    """ACKs the segment rule requires: one per segment of every flow (the last may be short)."""
    per_segment = math.ceil(seg_kib * 1024 / MTU)
    return sum(math.ceil(math.ceil(s / MTU) / per_segment) for s in sizes)


def per_seed(seg: int, seed: int, result) -> dict:
    flows = result.flows
    done = flows.filter(pl.col("completed"))
    s = result.summary
    fct_ns = float(done["fct_us"].sum()) * 1000.0
    done_bytes = int(done["size_bytes"].sum())
    return {
        "segment_kib": seg, "seed": seed, "flows": flows.height, "unfinished": flows.height - done.height,
        "bytes": done_bytes, "fct_ns": fct_ns,
        "ns_per_byte": fct_ns / done_bytes if done_bytes else None,
        "mean_flow_ns_per_byte": float((done["fct_us"] * 1000.0 / done["size_bytes"]).mean()) if done.height else None,
        "stt_samples": int(s.get("stride_cc_updates", 0)),
        "min_acks": min_acks(done["size_bytes"].to_list(), seg),
        "timeouts": int(flows["timeouts"].sum()), "naks": int(flows["naks"].sum()),
        "retx_mb": float(flows["retx_bytes"].sum()) / 1e6,
        "drops": int(s.get("drops_buffer", 0)) + int(s.get("drops_loss", 0)),
    }


def pool(seeds: pl.DataFrame) -> pl.DataFrame:
    """One row per segment size over every seed (see the module doc)."""
    fastest = (seeds.sort("ns_per_byte", "segment_kib").group_by("seed", maintain_order=True).first()
               .group_by("segment_kib").agg(fastest_seeds=pl.len()))
    out = seeds.group_by("segment_kib", maintain_order=True).agg(
        pl.col("flows").sum(), pl.col("unfinished").sum(),
        ns_per_byte=pl.col("fct_ns").sum() / pl.col("bytes").sum(),
        ns_per_byte_min=pl.col("ns_per_byte").min(), ns_per_byte_max=pl.col("ns_per_byte").max(),
        mean_flow_ns_per_byte=(pl.col("mean_flow_ns_per_byte") * pl.col("flows")).sum() / pl.col("flows").sum(),
        stt_samples=pl.col("stt_samples").sum(), min_acks=pl.col("min_acks").sum(),
        timeouts=pl.col("timeouts").sum(), naks=pl.col("naks").sum(), retx_mb=pl.col("retx_mb").sum(),
        drops=pl.col("drops").sum(),
    )
    out = out.join(fastest, on="segment_kib", how="left", maintain_order="left").with_columns(
        pl.col("fastest_seeds").fill_null(0).cast(pl.Int64))
    return out.select("segment_kib", "flows", "unfinished", "ns_per_byte", "ns_per_byte_min", "ns_per_byte_max",
                      "fastest_seeds", "mean_flow_ns_per_byte", "stt_samples", "min_acks", "timeouts", "naks",
                      "retx_mb", "drops")


def fastest(table: pl.DataFrame) -> Optional[int]:
    rows = table.drop_nulls("ns_per_byte").sort("ns_per_byte")
    return int(rows["segment_kib"][0]) if rows.height else None


WHY = "stride-segment, Why, by mechanism"
SEGMENT = absolute(0.0, "a segment size of the grid: it is the fastest or it is not")
# calibrate-stride-segment.toml asks 64 KiB within 5 % of the fastest segment.
RATIO = absolute(0.05, "within 5 % of the fastest, as calibrate-stride-segment.toml asks")
CALIBRATED = Calibration("examples/calibrate/calibrate-stride-segment.toml", "stride-segment, Why, by mechanism")


def claims(table: pl.DataFrame) -> list[Claim]:
    best = fastest(table)
    at = {r["segment_kib"]: r["ns_per_byte"] for r in table.iter_rows(named=True)}
    ratio = at[PAPER_FASTEST_KIB] / at[best] if best is not None and at.get(PAPER_FASTEST_KIB) else None
    return [
        Claim("fastest segment, lowest time per byte (KiB)", float(PAPER_FASTEST_KIB),
              None if best is None else float(best), SEGMENT, WHY, CALIBRATED),
        Claim("time per byte at 64 KiB / at the fastest segment (x)", 1.0, ratio, RATIO, WHY, CALIBRATED),
    ]


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    out_dir = write_topology(Path(out_dir))
    points = grid(quick)
    start = time.perf_counter()
    results = run_many(scenarios(quick, out_dir))
    wall = time.perf_counter() - start
    seeds = pl.DataFrame([per_seed(seg, seed, r) for (seg, seed), r in zip(points, results)])
    table = pool(seeds)
    save_table(table, out_dir)
    seeds.write_csv(out_dir / "seeds.csv")
    lines = pl.concat([
        table.select("segment_kib", ns_per_byte=pl.col(col), series=pl.lit(name))
        for col, name in [("ns_per_byte", "all seeds"), ("ns_per_byte_min", "fastest seed"),
                          ("ns_per_byte_max", "slowest seed")]])
    plot_lines(lines, "segment_kib", "ns_per_byte", "series", out_dir / "plot.png", log_x=True,
               xlabel="ACK segment size (KiB)", ylabel="time per byte, sum FCT / sum bytes (ns/B)",
               title="STRIDE Fig. 5: time per byte vs segment size (dumbbell, 2 x 20 % web search)")
    print(format_table(seeds.select("segment_kib", "seed", "flows", "ns_per_byte", "mean_flow_ns_per_byte",
                                    "stt_samples", "timeouts", "retx_mb", "drops"), max_rows=100))
    print()
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\n{len(points)} runs in {wall:.0f} s wall; wrote {out_dir}/table.parquet, table.csv, seeds.csv, "
          f"plot.png, {TOPOLOGY_FILE}")
    return table
