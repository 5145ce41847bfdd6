"""The cross-check with the HPCC ns-3 simulator on its own input (`retx reproduce
ns3-crosscheck`): its 320-server DCQCN and HPCC configs, each compared with ns-3's fct.txt.

The inputs live outside the repository (../shared/peers/hpcc-ns3 or $RETX_HPCC_DIR); without
them these tests skip. The table is also a golden (tests/golden/reproduce/quick/), so a change
that moves a number here must say why (RETX_BLESS=1 to store the new table).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import ns3_crosscheck

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reproduce" / "quick" / "ns3-crosscheck.csv"

pytestmark = pytest.mark.skipif(not ns3_crosscheck.available(), reason="HPCC ns-3 inputs not present")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("ns3")
    ns3_crosscheck.run(out, quick=True)
    got = (out / "table.csv").read_text()
    if os.environ.get("RETX_BLESS"):
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text(), "ns3-crosscheck moved: say why, then RETX_BLESS=1"
    return pl.read_csv(out / "table.csv")


def test_every_flow_of_every_bucket_is_compared(table: pl.DataFrame) -> None:
    buckets = [b[2] for b in ns3_crosscheck.BUCKETS]
    assert table["cc"].to_list() == ["dcqcn"] * 4 + ["hpcc"] * 4
    assert table["bucket"].to_list() == buckets * 2
    assert table["flows"].to_list() == [496, 1276, 494, 934] * 2  # 3,200 web search flows


def test_hpcc_matches_ns3_in_every_bucket(table: pl.DataFrame) -> None:
    # The target (median, p95 and p99 within 20 %) in every bucket; medians within 5 %.
    for row in table.filter(pl.col("cc") == "hpcc").iter_rows(named=True):
        assert row["within_20pct"], row
        assert abs(row["ratio_median"] - 1) <= 0.05, row


def test_dcqcn_medians_and_tails_match_ns3_where_they_do_today(table: pl.DataFrame) -> None:
    # Medians within 5 % and p99 within the 20 % in every bucket; p95 within 20 % for
    # flows of 100 KB and more.
    for row in table.filter(pl.col("cc") == "dcqcn").iter_rows(named=True):
        assert abs(row["ratio_median"] - 1) <= 0.05, row
        assert abs(row["ratio_p99"] - 1) <= 0.20, row
        if row["bucket"] in ("100 KB-1 MB", "> 1 MB"):
            assert abs(row["ratio_p95"] - 1) <= 0.20, row


@pytest.mark.xfail(strict=True, reason="known gap: DCQCN: retx's p95 for flows under 100 KB is 25-40 % below ns-3's")
def test_dcqcn_small_flow_p95_within_20_percent(table: pl.DataFrame) -> None:
    small = table.filter((pl.col("cc") == "dcqcn") & pl.col("bucket").is_in(["< 10 KB", "10-100 KB"]))
    assert ((small["ratio_p95"] - 1).abs() <= 0.20).all()
