"""Aeolus (Hu et al., SIGCOMM'20): how its results move with the selective-drop threshold and
with the way switches drop (WRED colours or the ECN codepoint), on Homa and on ExpressPass
(`retx reproduce aeolus-threshold`).

The paper prints no threshold (issue 29). Two reference implementations exist: htsim's
`AeolusQueue` admits unscheduled packets only below 0.2 x its queue size; the authors' early
NDP-based prototype uses 6,000 B of a 12 KB port. retx's other Aeolus runs use 6,000 B. Here:

- Thresholds: "3 packets" (3 x 1,500 B = 4,500 B, a few packets), "6,000 B" (the prototype), and
  "0.2 x buffer" (htsim's rule on the scenario's buffer: the 200 KB switch buffer of the incast,
  40,000 B; the 30 KB port of the workload run, 6,000 B, the prototype's number again).
- Markings: "wred" (`[[switch.wred]] colour = 2, threshold = T`: unscheduled packets coloured
  red, hard-thresholded) and "ecn" (`[nic] colour_codepoint = "ecn"`: unscheduled packets sent
  Not-ECT, scheduled ECT(0); `[switch.ecn]` with kmin = kmax = T and `drop_not_ect = true`: RED
  drops Not-ECT packets where it would mark, §4.1). On the same threshold the two are the same
  rule, so their rows must be equal; the table shows that they are.
- Two scenarios: the testbed's 7-to-1 incast of 30 KB messages (`aeolus-incast`'s scenario, 70
  rounds) and Web Server at load 0.8 on the Homa simulator's 144 hosts with 30 KB ports
  (`aeolus-workloads`' point where Aeolus matters), each also run as plain Homa.
- ExpressPass (issue 29: "the same for ExpressPass"): the same incast with the switches' credit
  queues (`aeolus-incast`'s ExpressPass rows), and Web Server on ExpressPass's 192-host network at
  its script's load (`aeolus-workloads`' ExpressPass point; "0.2 x buffer" is then 0.2 of its
  384,500 B port, 76,900 B), each also run as plain ExpressPass.

Metrics: mean and p99 FCT (message completion time for the incast) of all flows, p99 of flows
under 100 KB, timeouts and drops.

--quick: the incast alone, Homa and ExpressPass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from retx.plots import plot_bars
from retx.reproduce import aeolus_incast, aeolus_workloads
from retx.reproduce.common import Claim, absolute, number, report_claims, save_table
from retx.runner import run_many
from retx.scenario import Scenario
from retx.table import format_table

INCAST_KB = 30
INCAST_BUFFER = 200_000  # aeolus-incast's switch buffer
WORKLOAD_PORT = 30_000  # aeolus-workloads' shallow port
XPASS_PORT = 384_500  # the ExpressPass network's port (250 x 1,538 B)
PACKET = 1_500  # a full frame of the 1,460 B MTU
MARKINGS = ["wred", "ecn"]


def thresholds(buffer: int) -> list[tuple[str, int]]:
    return [("3 packets", 3 * PACKET), ("6,000 B", 6_000), ("0.2 x buffer", buffer // 5)]


# The threshold study's incast: 7 senders, one 30 KB message each per round, 70 rounds 50 ms
# apart (each round meets an idle network), retx's default Homa (the seed's Aeolus, a sender
# timer). Not aeolus-incast's burst of the authors' flow files, whose testbed Homa gives every
# threshold the same one shared 10 ms wait (docs/REPRODUCTIONS.md § aeolus-incast).
ROUNDS = 70
INTERVAL_MS = 50
INCAST_SCENARIO = {
    "name": "aeolus-incast",
    "seed": 1,
    "topology": {"kind": "single-switch", "hosts": 8, "host_link": "10Gbps", "link_delay": "3us"},
    "nic": {"mtu": 1460},
    "switch": {"buffer": "200KB", "queues": 8, "ecn": {"enabled": False}, "pfc": {"enabled": False}},
    "transport": {"recovery": "homa", "cc": "none"},
    "workload": {"kind": "incast", "receiver": "h0", "fan_in": 7, "size": "20KB",
                 "interval": f"{INTERVAL_MS}ms", "start": "0us"},
}


def incast_base() -> Scenario:
    return Scenario.from_dict(INCAST_SCENARIO).with_overrides({
        "duration": f"{ROUNDS * INTERVAL_MS + 100}ms",
        "workload.size": f"{INCAST_KB}KB",
        "workload.rounds": ROUNDS,
    })


def workload_base() -> Scenario:
    label, table, flows = aeolus_workloads.QUICK_WORKLOAD
    return Scenario.from_dict(aeolus_workloads.BASE_SCENARIO).with_overrides(
        aeolus_workloads.overrides(table, flows, WORKLOAD_PORT // 1000, "homa"))


def xpass_incast_base() -> Scenario:
    return incast_base().with_overrides(aeolus_incast.XPASS)


def xpass_workload_base() -> Scenario:
    _, table, flows = aeolus_workloads.QUICK_WORKLOAD
    return Scenario.from_toml(aeolus_workloads.XPASS_EXAMPLE).with_overrides(
        aeolus_workloads.xpass_overrides(table, flows, "xpass"))


def aeolus(threshold: int, marking: str, transport: str = "homa") -> dict[str, object]:
    over: dict[str, object] = {f"recovery.{transport}.aeolus": True}
    if marking == "wred":
        over["switch.wred"] = [{"colour": 2, "threshold": f"{threshold}B"}]
    else:
        over["nic.colour_codepoint"] = "ecn"
        over["switch.ecn"] = {"enabled": True, "kmin": f"{threshold}B", "kmax": f"{threshold}B", "pmax": 1.0,
                              "drop_not_ect": True}
    return over


def grid(quick: bool) -> list[tuple[str, str, str, int, str]]:
    """(transport, scenario, threshold label, threshold bytes, marking) per point; marking
    "none" is the transport without Aeolus."""
    scenarios = [("homa", "incast 30 KB", INCAST_BUFFER)]
    scenarios += [] if quick else [("homa", "web server 30 KB ports", WORKLOAD_PORT)]
    scenarios += [("xpass", "incast 30 KB", INCAST_BUFFER)]
    scenarios += [] if quick else [("xpass", "web server, ExpressPass network", XPASS_PORT)]
    points = []
    for transport, name, buffer in scenarios:
        points.append((transport, name, f"{transport} (no Aeolus)", 0, "none"))
        points += [(transport, name, label, t, m) for label, t in thresholds(buffer) for m in MARKINGS]
    return points


def scenarios(quick: bool) -> list[Scenario]:
    bases = {("homa", "incast 30 KB"): incast_base, ("homa", "web server 30 KB ports"): workload_base,
             ("xpass", "incast 30 KB"): xpass_incast_base, ("xpass", "web server, ExpressPass network"): xpass_workload_base}
    out = []
    for transport, name, label, t, marking in grid(quick):
        base = bases[(transport, name)]()
        out.append(base if marking == "none" else base.with_overrides(aeolus(t, marking, transport)))
    return out


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    points = grid(quick)
    results = run_many(scenarios(quick))
    rows: list[dict[str, Any]] = []
    for (transport, name, label, t, marking), result in zip(points, results):
        flows = result.flows
        done = flows.filter(pl.col("completed"))["fct_us"]
        small = flows.filter(pl.col("completed") & (pl.col("size_bytes") < 100_000))["fct_us"]
        rows.append({
            "transport": transport, "scenario": name, "threshold": label, "threshold_bytes": t, "marking": marking,
            "flows": flows.height, "finished": done.len(),
            "mean_fct_us": round(number(done.mean()), 2),
            "p99_fct_us": round(number(done.quantile(0.99, "nearest")), 2),
            "small_p99_fct_us": round(number(small.quantile(0.99, "nearest")), 2),
            "timeouts": int(flows["timeouts"].sum()),
            "drops": int(result.summary["drops_buffer"]),
        })
    table = pl.DataFrame(rows)
    out_dir = Path(out_dir)
    save_table(table, out_dir)
    shown = table.filter(pl.col("transport") == "homa").with_columns(
        (pl.col("scenario") + "\n" + pl.col("threshold")).alias("point"))
    figure = plot_bars(shown, "point", "mean_fct_us", "marking", xlabel="scenario, threshold",
                       ylabel="mean FCT / MCT (us)", title="Aeolus on Homa: the selective-drop threshold and how it is applied")
    figure.axes[0].set_yscale("log")
    figure.savefig(out_dir / "plot.png", dpi=120)
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


def claims(table: pl.DataFrame) -> list[Claim]:
    """The paper prints no threshold, so no number to judge the thresholds by. What it does state
    (§4.1) is that its two switch implementations, WRED colours and RED/ECN with Not-ECT
    unscheduled packets, realise the same selective drop: per transport, the largest difference
    of mean FCT between the two markings on the same threshold and scenario, in %, is 0."""
    out = []
    for transport in ["homa", "xpass"]:
        rows = table.filter((pl.col("transport") == transport) & pl.col("marking").is_in(["wred", "ecn"]))
        wide = rows.pivot(on="marking", index=["scenario", "threshold"], values="mean_fct_us") if rows.height else None
        gap = None
        if wide is not None and {"wred", "ecn"} <= set(wide.columns) and wide.height:
            diffs = ((wide["wred"] - wide["ecn"]).abs() / wide["wred"] * 100).drop_nulls()
            gap = round(number(diffs.max()), 3) if diffs.len() else None
        out.append(Claim(f"{transport}: WRED and RED/ECN selective drops, largest mean FCT difference (%)", 0.0, gap,
                         absolute(0.0, "§4.1: the two are one rule on the same threshold"), "aeolus-threshold"))
    return out
