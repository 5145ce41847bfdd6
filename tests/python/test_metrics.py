"""slowdown_by_size and tail_fct on a hand-made flows table with answers worked out by hand.

Quantiles are polars' "linear" interpolation: q-quantile of sorted v[0..n-1] is
v[k] + (v[k+1] - v[k]) * f with k + f = q * (n - 1).
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from retx.metrics import slowdown_by_size, tail_fct

NAN = float("nan")

# Ten completed flows of 1..10 KB, listed out of size order, plus one that did not finish.
# Sorted by size, the slowdowns are [2, 10, 1, 4, 3] (1..5 KB) and [2.5, 1.5, 5, 2, 1.5]
# (6..10 KB). fct_us = size in KB x 10.
ROWS = [
    # flow_id, size_bytes, slowdown, fct_us, completed
    (7, 7_000, 1.5, 70.0, True),
    (1, 1_000, 2.0, 10.0, True),
    (3, 3_000, 1.0, 30.0, True),
    (10, 10_000, 1.5, 100.0, True),
    (2, 2_000, 10.0, 20.0, True),
    (11, 500, NAN, NAN, False),
    (4, 4_000, 4.0, 40.0, True),
    (6, 6_000, 2.5, 60.0, True),
    (5, 5_000, 3.0, 50.0, True),
    (9, 9_000, 2.0, 90.0, True),
    (8, 8_000, 5.0, 80.0, True),
]


@pytest.fixture
def flows() -> pl.DataFrame:
    cols = list(zip(*ROWS))
    return pl.DataFrame(
        {
            "flow_id": pl.Series(cols[0], dtype=pl.UInt32),
            "size_bytes": pl.Series(cols[1], dtype=pl.UInt64),
            "slowdown": pl.Series(cols[2], dtype=pl.Float64),
            "fct_us": pl.Series(cols[3], dtype=pl.Float64),
            "completed": pl.Series(cols[4], dtype=pl.Boolean),
        }
    )


def test_two_groups(flows: pl.DataFrame) -> None:
    t = slowdown_by_size(flows, groups=2)
    assert t["group"].to_list() == [0, 1]
    assert t["count"].to_list() == [5, 5]
    assert t["size_min"].to_list() == [1_000, 6_000]
    assert t["size_max"].to_list() == [5_000, 10_000]
    assert t["size_mean"].to_list() == [3_000.0, 8_000.0]
    # Group 0 sorted: [1, 2, 3, 4, 10]. Median = v[2] = 3.
    # p95: 0.95 * 4 = 3.8 -> 4 + 0.8 * (10 - 4) = 8.8; p99: 3.96 -> 4 + 0.96 * 6 = 9.76.
    # Group 1 sorted: [1.5, 1.5, 2, 2.5, 5]. Median 2; p95 2.5 + 0.8 * 2.5 = 4.5;
    # p99 2.5 + 0.96 * 2.5 = 4.9.
    assert t["slowdown_median"].to_list() == pytest.approx([3.0, 2.0])
    assert t["slowdown_p95"].to_list() == pytest.approx([8.8, 4.5])
    assert t["slowdown_p99"].to_list() == pytest.approx([9.76, 4.9])


def test_uneven_groups_and_more_groups_than_flows(flows: pl.DataFrame) -> None:
    # Flow i of 10 goes to group floor(3 i / 10): i = 0..3, 4..6, 7..9.
    t = slowdown_by_size(flows, groups=3)
    assert t["count"].to_list() == [4, 3, 3]
    assert t["size_min"].to_list() == [1_000, 5_000, 8_000]
    assert t["size_max"].to_list() == [4_000, 7_000, 10_000]
    # Group 1 slowdowns (5, 6, 7 KB): [3, 2.5, 1.5] -> median 2.5.
    assert t["slowdown_median"][1] == pytest.approx(2.5)
    # 20 groups of 10 flows: one flow per group, every quantile is that flow's slowdown.
    t = slowdown_by_size(flows)
    assert t.height == 10
    assert t["count"].to_list() == [1] * 10
    assert t["slowdown_median"].to_list() == [2.0, 10.0, 1.0, 4.0, 3.0, 2.5, 1.5, 5.0, 2.0, 1.5]
    assert t["slowdown_p99"].to_list() == t["slowdown_median"].to_list()


def test_empty_and_bad_arguments(flows: pl.DataFrame) -> None:
    none_done = flows.with_columns(completed=pl.lit(False))
    t = slowdown_by_size(none_done)
    assert t.height == 0 and "slowdown_p99" in t.columns
    assert math.isnan(tail_fct(none_done))
    with pytest.raises(ValueError):
        slowdown_by_size(flows, groups=0)
    with pytest.raises(ValueError):
        tail_fct(flows, q=1.5)


def test_tail_fct(flows: pl.DataFrame) -> None:
    # Completed fct_us: 10, 20, ..., 100 (the unfinished flow is left out).
    # q = 0.99: 0.99 * 9 = 8.91 -> 90 + 0.91 * 10 = 99.1; q = 0.5: 4.5 -> 55.
    assert tail_fct(flows) == pytest.approx(99.1)
    assert tail_fct(flows, q=0.5) == pytest.approx(55.0)
    assert tail_fct(flows, q=1.0) == pytest.approx(100.0)
