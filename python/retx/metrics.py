"""Flow completion metrics over a run's `flows` table (columns as in `Results.flows`).

Everything here counts finished flows only: `completed`, with a finite `fct_us` and `slowdown`
(`finished_flows`); an unfinished flow has no completion time to measure.

- `fct_stats`: FCT and slowdown p50/p95/p99, overall and by size bucket (summary.json "fct");
- `run_metrics`: one run's mean FCT, p50/p99 slowdown and mean goodput (a sweep's summary);
- `slowdown_by_size`: slowdown quantiles in size groups of equal count;
- `tail_fct`: one quantile of FCT.

Quantiles use polars' "linear" interpolation (numpy's default): the q-quantile of n sorted
values v[0..n-1] is v[k] + (v[k+1] - v[k]) * f where k + f = q * (n - 1).
"""

from __future__ import annotations

import math
from typing import Any, Final, Literal, Optional

import polars as pl

_QUANTILE: Final[Literal["linear"]] = "linear"

_BY_SIZE_SCHEMA = pl.Schema({
    "group": pl.Int64,
    "count": pl.Int64,
    "size_min": pl.Int64,
    "size_max": pl.Int64,
    "size_mean": pl.Float64,
    "slowdown_median": pl.Float64,
    "slowdown_p95": pl.Float64,
    "slowdown_p99": pl.Float64,
})


def _completed(flows: pl.DataFrame, value: str) -> pl.DataFrame:
    """Flows that finished and have a finite `value`."""
    done = flows
    if "completed" in flows.columns:
        done = done.filter(pl.col("completed"))
    return done.filter(pl.col(value).is_not_null() & pl.col(value).is_finite())


def finished_flows(flows: pl.DataFrame) -> pl.DataFrame:
    """The flows that finished: completed, with a finite `fct_us` and `slowdown`."""
    return _completed(_completed(flows, "fct_us"), "slowdown")


def slowdown_by_size(flows: pl.DataFrame, groups: int = 20) -> pl.DataFrame:
    """FCT slowdown by flow size, the Go-Back-ONE way.

    Completed flows are sorted by size (ties by `flow_id` when present) and cut into `groups`
    groups of near-equal count: flow i of n goes to group floor(i * groups / n), so group sizes
    differ by at most one (n groups of one flow if n < groups). Per group: `count`, the size
    range (`size_min`, `size_max`, `size_mean`) and the median, 95th and 99th percentile of
    `slowdown` (linear interpolation). One row per non-empty group, smallest sizes first.
    """
    if groups < 1:
        raise ValueError(f"groups must be at least 1, not {groups}")
    done = _completed(flows, "slowdown")
    n = done.height
    if n == 0:
        return pl.DataFrame(schema=_BY_SIZE_SCHEMA)
    keys = ["size_bytes", "flow_id"] if "flow_id" in done.columns else ["size_bytes"]
    groups = min(groups, n)
    done = done.sort(keys).with_row_index("_i")
    done = done.with_columns(group=(pl.col("_i").cast(pl.Int64) * groups // n))
    slowdown = pl.col("slowdown")
    return (
        done.group_by("group")
        .agg(
            count=pl.len().cast(pl.Int64),
            size_min=pl.col("size_bytes").min().cast(pl.Int64),
            size_max=pl.col("size_bytes").max().cast(pl.Int64),
            size_mean=pl.col("size_bytes").mean().cast(pl.Float64),
            slowdown_median=slowdown.quantile(0.5, _QUANTILE),
            slowdown_p95=slowdown.quantile(0.95, _QUANTILE),
            slowdown_p99=slowdown.quantile(0.99, _QUANTILE),
        )
        .sort("group")
        .select(list(_BY_SIZE_SCHEMA))
        .cast(_BY_SIZE_SCHEMA)
    )


def tail_fct(flows: pl.DataFrame, q: float = 0.99) -> float:
    """The q-quantile of `fct_us` over completed flows (linear interpolation); NaN if none."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], not {q}")
    done = _completed(flows, "fct_us")
    if done.height == 0:
        return math.nan
    value = done.select(pl.col("fct_us").quantile(q, _QUANTILE)).item()
    return float(value)


# Flow size buckets of `fct_stats`, in bytes (1 KB = 1000 B): (label, lowest size, first size
# past the bucket); each bucket holds its lower bound, so a 10 KB flow is in "10KB-100KB".
SIZE_BUCKETS: list[tuple[str, int, Optional[int]]] = [
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">=1MB", 1_000_000, None),
]
FCT_QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}
FINISHED_ONLY = "finished flows only: completed, with a finite fct_us and slowdown"


def fct_stats(flows: pl.DataFrame) -> dict[str, Any]:
    """FCT (us) and slowdown p50/p95/p99, overall and per SIZE_BUCKETS bucket, over finished
    flows only (unfinished flows have no FCT; `flows_unfinished` counts them).

    {"basis": ..., "flows_finished": n, "flows_unfinished": m,
     "overall": {"count": n, "fct_us": {"p50", "p95", "p99"}, "slowdown": {...}},
     "by_size": {bucket label: the same, NaN quantiles (null in JSON) when empty}}
    """
    done = finished_flows(flows)
    by_size = {}
    for label, low, high in SIZE_BUCKETS:
        inside = pl.col("size_bytes") >= low
        if high is not None:
            inside = inside & (pl.col("size_bytes") < high)
        by_size[label] = _quantiles(done.filter(inside))
    return {
        "basis": FINISHED_ONLY,
        "flows_finished": done.height,
        "flows_unfinished": flows.height - done.height,
        "overall": _quantiles(done),
        "by_size": by_size,
    }


def run_metrics(flows: pl.DataFrame) -> dict[str, float]:
    """One run's headline numbers over its finished flows (NaN when none finished):
    `mean_fct_us`, `slowdown_p50`, `slowdown_p99` and `goodput_gbps`, the mean of the
    finished flows' goodput."""
    done = finished_flows(flows)
    if done.height == 0:
        return {"mean_fct_us": math.nan, "slowdown_p50": math.nan, "slowdown_p99": math.nan,
                "goodput_gbps": math.nan}
    row = done.select(
        mean_fct_us=pl.col("fct_us").mean(),
        slowdown_p50=pl.col("slowdown").quantile(0.5, _QUANTILE),
        slowdown_p99=pl.col("slowdown").quantile(0.99, _QUANTILE),
        goodput_gbps=pl.col("goodput_gbps").mean(),
    ).row(0, named=True)
    return {key: float(value) for key, value in row.items()}


def _quantiles(done: pl.DataFrame) -> dict[str, Any]:
    def of(column: str) -> dict[str, float]:
        if done.height == 0:
            return {name: math.nan for name in FCT_QUANTILES}
        row = done.select(
            [pl.col(column).quantile(q, _QUANTILE).alias(name) for name, q in FCT_QUANTILES.items()]
        ).row(0, named=True)
        return {name: float(value) for name, value in row.items()}

    return {"count": done.height, "fct_us": of("fct_us"), "slowdown": of("slowdown")}
