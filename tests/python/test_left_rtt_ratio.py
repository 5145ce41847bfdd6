"""left-rtt-ratio's quick table, by mechanism (the numbers themselves are held by the golden
table): LEFT resends nothing at any delay ratio; LEFT- (every packet gathered) and MELO+ (a swap
on every miss) fall behind where their pools saturate and the NIC's queue pauses the link;
equal paths reorder nothing."""

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
    for scheme in ("left", "melo-plus"):
        assert row(table, 1, scheme)["gathered"] == 0 and row(table, 1, scheme)["pool_busy_pct"] == 0
    # LEFT- gathers even in-order packets: equal paths still cost it FIFO batches.
    assert row(table, 1, "left-minus")["gathered"] > 10_000 and row(table, 1, "left-minus")["pool_busy_pct"] > 5
    assert row(table, 32, "left")["pct_of_max"] > 95


def test_left_minus_and_melo_plus_saturate_their_pools_and_fall_behind(table: pl.DataFrame) -> None:
    left = row(table, 32, "left")
    assert left["pool_busy_pct"] < 75
    for scheme in ("left-minus", "melo-plus"):
        other = row(table, 32, scheme)
        assert other["pool_busy_pct"] > 80, scheme
        # The slides' margins, at least halved: LEFT 1.4x LEFT-'s and about 2x MELO+'s.
        assert left["pct_of_max"] > 1.4 * other["pct_of_max"], scheme
    assert row(table, 32, "melo-plus")["swaps"] > row(table, 32, "left")["swaps"]
    # Below saturation the swaps and batches cost time but not throughput.
    for scheme in ("left-minus", "melo-plus"):
        assert row(table, 8, scheme)["pct_of_max"] == pytest.approx(row(table, 8, "left")["pct_of_max"], abs=0.1)


def test_left_fpga_more_paths_more_disorder_and_the_bitmap_slows_with_it(tmp_path: Path) -> None:
    """left-fpga's quick grid: one path reorders nothing; more paths of distinct delays put more
    packets out of order (70 % at 8, 87 % at 64), throughput stays above 90 %, and the bitmap's
    processing rate falls as out-of-order packets walk the pool's lists."""
    from retx.reproduce import left_fpga
    t = left_fpga.run(tmp_path, quick=True)
    by = {r["paths"]: r for r in t.iter_rows(named=True)}
    assert by[1]["ooo_pct"] == 0 and by[1]["throughput_pct"] > 99
    assert 0 < by[8]["ooo_pct"] < by[64]["ooo_pct"] and by[64]["ooo_pct"] > 80
    assert all(r["throughput_pct"] > 90 for r in by.values())
    assert by[64]["processing_gbps"] < by[8]["processing_gbps"]
