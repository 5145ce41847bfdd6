"""left-rtt-ratio's quick table, by mechanism (the numbers themselves are held by the golden
table): LEFT resends nothing at any delay ratio; MELO+ swaps on every miss and falls behind
where its pool saturates; equal paths reorder nothing."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import left_rtt_ratio


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out: Path = tmp_path_factory.mktemp("left-rtt-ratio")
    return left_rtt_ratio.run(out, quick=True)


def row(table: pl.DataFrame, us: int, scheme: str) -> dict:
    return table.filter((pl.col("slow_path_us") == us) & (pl.col("scheme") == scheme)).row(0, named=True)


def test_left_resends_nothing_and_equal_paths_reorder_nothing(table: pl.DataFrame) -> None:
    assert table.height == len(left_rtt_ratio.QUICK_DELAYS_US) * len(left_rtt_ratio.QUICK_SCHEMES)
    assert (table["retx_mb"] == 0).all()
    for scheme in left_rtt_ratio.QUICK_SCHEMES:
        assert row(table, 1, scheme)["gathered"] == 0 and row(table, 1, scheme)["pool_busy_pct"] == 0
    assert row(table, 32, "left")["pct_of_max"] > 95


def test_melo_plus_swaps_on_every_miss_and_saturates_its_pool(table: pl.DataFrame) -> None:
    left, plus = row(table, 32, "left"), row(table, 32, "melo-plus")
    assert plus["swaps"] > 3 * left["swaps"]
    assert plus["pool_busy_pct"] > 95 and left["pool_busy_pct"] < 60
    assert plus["pct_of_max"] < left["pct_of_max"] - 10
    # Below saturation the swaps cost time but not throughput.
    assert row(table, 8, "melo-plus")["pct_of_max"] == pytest.approx(row(table, 8, "left")["pct_of_max"], abs=0.1)
