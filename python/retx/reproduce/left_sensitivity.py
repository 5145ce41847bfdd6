"""LEFT (APNet'24): how its two headlines move with the settings the slides leave open: block size,
loop registers, the FIFOs' packet count and timeout, and the scheduler's disorder threshold
(docs/SCENARIO.md, "LEFT", gives each default and why).

The headlines, as `left-rtt-ratio` and `left-fct` measure them:
- *throughput*: LEFT's goodput at the 32x point of `left-rtt-ratio` (two paths, 1 us and 32 us,
  8 connections sprayed over both), in % of the most 1 KB payloads carry at 200 Gbps, with the
  share of the run its bitmap pool was busy;
- *FCT*: LEFT's reduction of the mean and p99 FCT against per-flow go-back-N on `left-fct`'s
  uniform dragonfly point (1,000 flows x seeds 1-3, pooled, as `left-fct`).
One setting moves at a time; the others keep their defaults.

--quick: the throughput headline only, two values per setting.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402

from retx.reproduce import left_fct, left_rtt_ratio  # noqa: E402
from retx.reproduce.common import Claim, number, report_claims, save_table  # noqa: E402
from retx.runner import run_many  # noqa: E402
from retx.scenario import Scenario  # noqa: E402
from retx.table import format_table  # noqa: E402

# (setting, values, default, how a value is written in the scenario)
SETTINGS: list[tuple[str, list[float], float]] = [
    ("block_bits", [4, 8, 16, 32], 8),
    ("registers", [1, 2, 3, 8], 3),
    ("gather_packets", [2, 4, 8, 16], 8),
    ("gather_timeout_us", [1, 2, 8, 32], 2),
    ("disorder_threshold", [0, 8, 32, 128], 32),
]
QUICK_VALUES = {"block_bits": [4, 32], "registers": [1, 8], "gather_packets": [2, 16],
                "gather_timeout_us": [1, 32], "disorder_threshold": [0, 128]}
SLOW_US = 32


def left_section(setting: str, value: float) -> dict[str, object]:
    if setting == "gather_timeout_us":
        return {"gather_timeout": f"{value}us"}
    return {setting: int(value)}


def points(quick: bool) -> list[tuple[str, float, float]]:
    return [(name, v, default) for name, values, default in SETTINGS for v in (QUICK_VALUES[name] if quick else values)]


def rtt_scenarios(out_dir: Path, quick: bool) -> list[Scenario]:
    (out_dir / f"two-paths-{SLOW_US}us.txt").write_text(left_rtt_ratio.topology(SLOW_US))
    base = [s for s in left_rtt_ratio.scenarios(out_dir, quick=True) if s.name == f"left-rtt-ratio-{SLOW_US}us-left"][0]
    duration = f"{left_rtt_ratio.DURATION_MS}ms"
    return [base.with_overrides({"name": f"left-sensitivity-rtt-{name}-{v}", "duration": duration,
                                 "recovery.left": {"variant": "left", **left_section(name, v)}})
            for name, v, _ in points(quick)]


SEEDS = [1, 2, 3]


def fct_scenarios(quick: bool) -> list[Scenario]:
    """The per-flow baseline's seeds, then each point's."""
    base = Scenario.from_dict(left_fct.BASE_SCENARIO)
    out = [base.with_overrides({"name": f"left-sensitivity-fct-per-flow-gbn-s{seed}", "seed": seed,
                                "routing.policy": "ecmp", "transport.recovery": "gbn"}) for seed in SEEDS]
    for name, v, _ in points(quick):
        out += [base.with_overrides({"name": f"left-sensitivity-fct-{name}-{v}-s{seed}", "seed": seed,
                                     "recovery.left": {"variant": "left", **left_section(name, v)}}) for seed in SEEDS]
    return out


def pooled(results: list, k: int) -> pl.DataFrame:
    """The finished flows of point `k`'s seeds (point 0: the baseline)."""
    n = len(SEEDS)
    return pl.concat([r.flows for r in results[k * n:(k + 1) * n]]).filter(pl.col("completed"))


def run(out_dir: Path, quick: bool) -> pl.DataFrame:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    grid = points(quick)
    rtt = rtt_scenarios(out_dir, quick)
    fct: list[Scenario] = [] if quick else fct_scenarios(quick)
    results = run_many(rtt + fct)
    rtt_results, fct_results = results[:len(rtt)], results[len(rtt):]
    seconds = left_rtt_ratio.DURATION_MS / 1e3
    rows = []
    base_flows = pooled(fct_results, 0) if fct_results else None
    for k, ((name, value, default), r) in enumerate(zip(grid, rtt_results)):
        goodput = number(r.flows["goodput_gbps"].sum())
        row: dict[str, object] = {
            "setting": name, "value": float(value), "default": value == default,
            "throughput_pct": goodput / left_rtt_ratio.MAX_GOODPUT_GBPS * 100.0,
            "pool_busy_pct": r.summary["left_pool_cycles"] * 5e-9 / seconds * 100.0,
            "fct_mean_reduction_pct": None, "fct_p99_reduction_pct": None,
        }
        if base_flows is not None:
            flows = pooled(fct_results, k + 1)
            row["fct_mean_reduction_pct"] = (1 - number(flows["fct_us"].mean()) / number(base_flows["fct_us"].mean())) * 100
            row["fct_p99_reduction_pct"] = (1 - number(flows["fct_us"].quantile(0.99))
                                            / number(base_flows["fct_us"].quantile(0.99))) * 100
        rows.append(row)
    table = pl.DataFrame(rows, schema_overrides={"fct_mean_reduction_pct": pl.Float64, "fct_p99_reduction_pct": pl.Float64})
    save_table(table, out_dir)
    figure, axes = plt.subplots(1, len(SETTINGS), figsize=(4 * len(SETTINGS), 3.4), sharey=True)
    for ax, (name, _values, default) in zip(axes, SETTINGS):
        part = table.filter(pl.col("setting") == name)
        ax.plot(part["value"], part["throughput_pct"], "o-", label="throughput at 32x (%)")
        ax.plot(part["value"], part["pool_busy_pct"], "x-", label="pool busy at 32x (%)")
        if not quick:
            ax.plot(part["value"], part["fct_mean_reduction_pct"], "s--", label="mean FCT cut vs per-flow (%)")
            ax.plot(part["value"], part["fct_p99_reduction_pct"], "^:", label="p99 FCT cut vs per-flow (%)")
        ax.axvline(default, color="grey", lw=0.8)
        low = min(part["value"])
        if low > 0:
            ax.set_xscale("log", base=2)
        else:  # 0 on a log axis: linear below 1
            ax.set_xscale("symlog", base=2, linthresh=1)
            ax.set_xlim(-0.3, max(part["value"]) * 1.3)
        ax.set_xlabel(name.replace("_us", " (us)"))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("%")
    axes[0].legend(fontsize=7)
    figure.suptitle("LEFT: sensitivity of its headlines (grey: the default)")
    figure.tight_layout()
    figure.savefig(out_dir / "plot.png", dpi=110)
    plt.close(figure)
    print(format_table(table))
    report_claims(claims(table), out_dir, quick)
    print(f"\nwrote {out_dir}/table.parquet, table.csv, claims.parquet, claims.csv, plot.png")
    return table


WHY = "left-sensitivity"
# The same tolerances as left-rtt-ratio's and left-fct's claims.
THROUGHPUT = left_rtt_ratio.BAR
SLIDES_32X = left_rtt_ratio.SLIDES_PCT_AT_32["left"]
SLIDES_CUT = {stat: left_fct.SLIDES[("per-flow gbn", stat)] for stat in ("mean", "p99")}


def claims(table: pl.DataFrame) -> list[Claim]:
    """The slides' headlines against the lowest and highest value any one setting gives (the
    FCT cuts only on the full grid)."""
    def extreme(col: str, lowest: bool) -> float | None:
        values = table[col].drop_nulls()
        return None if values.is_empty() else number(values.min() if lowest else values.max())

    out = []
    for lowest, end in ((True, "lowest"), (False, "highest")):
        out.append(Claim(f"LEFT throughput at 32x (%), {end} over the settings", SLIDES_32X,
                         extreme("throughput_pct", lowest), THROUGHPUT, WHY))
    for stat in ("mean", "p99"):
        for lowest, end in ((True, "lowest"), (False, "highest")):
            out.append(Claim(f"LEFT's {stat} FCT cut vs per-flow (%), {end} over the settings", SLIDES_CUT[stat],
                             extreme(f"fct_{stat}_reduction_pct", lowest), left_fct.CUT[stat], WHY))
    return out
