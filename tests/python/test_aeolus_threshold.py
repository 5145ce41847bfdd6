"""Aeolus's threshold sensitivity (`retx reproduce aeolus-threshold --quick`): the testbed's
7-to-1 incast of 30 KB messages, plain Homa and Homa+Aeolus, plain ExpressPass and
ExpressPass+Aeolus, at three thresholds, each by WRED colour and by ECN codepoint.

Each test is a mechanism docs/REPRODUCTIONS.md explains, its bounds quoted beside the quick
table's values. The table itself is a golden (tests/golden/reproduce/quick/aeolus-threshold.csv).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from retx.reproduce import aeolus_threshold

RTO_US = 10_000.0


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out: Path = tmp_path_factory.mktemp("aeolus-threshold")
    aeolus_threshold.run(out, quick=True)
    assert (out / "plot.png").stat().st_size > 0
    return pl.read_csv(out / "table.csv")


def row(table: pl.DataFrame, threshold: str, marking: str, transport: str = "homa") -> dict[str, Any]:
    r = table.filter((pl.col("threshold") == threshold) & (pl.col("marking") == marking)
                     & (pl.col("transport") == transport))
    assert r.height == 1, (threshold, marking, transport)
    return r.row(0, named=True)


def test_wred_and_the_ecn_codepoint_are_the_same_rule(table: pl.DataFrame) -> None:
    """On one threshold, a red colour under WRED and Not-ECT under RED with both thresholds at
    it drop the same packets: every column of the two rows is equal."""
    for transport in ("homa", "xpass"):
        for label, _ in aeolus_threshold.thresholds(aeolus_threshold.INCAST_BUFFER):
            wred, ecn = row(table, label, "wred", transport), row(table, label, "ecn", transport)
            assert {k: v for k, v in wred.items() if k != "marking"} == {k: v for k, v in ecn.items() if k != "marking"}, label


def test_every_threshold_spares_the_timeout_plain_homa_waits_for(table: pl.DataFrame) -> None:
    """Plain Homa's mean MCT is one 10 ms timeout or near it (8.74 ms); with Aeolus at any of
    the three thresholds no message times out and the mean stays under 0.5 ms, though the drops
    (and so the SACK-driven resends) grow as the threshold falls (3 packets: most; 0.2 x the
    200 KB buffer, 40 KB: fewest)."""
    homa = row(table, "homa (no Aeolus)", "none")
    assert homa["timeouts"] > 0 and homa["mean_fct_us"] > 0.5 * RTO_US
    drops = []
    for label, _ in aeolus_threshold.thresholds(aeolus_threshold.INCAST_BUFFER):
        r = row(table, label, "wred")
        assert r["timeouts"] == 0 and r["mean_fct_us"] < 500, (label, r)
        assert r["finished"] == r["flows"]
        drops.append(r["drops"])
    assert drops[0] > drops[1] > drops[2] > 0, drops


def test_on_expresspass_the_threshold_trades_drops_for_the_credit_wait(table: pl.DataFrame) -> None:
    """Plain ExpressPass drops no data and never times out (its credits pace every sender),
    but waits an RTT for its first credit; with Aeolus every threshold cuts the mean MCT (198-191
    against 210 us), dropping fewer red packets the higher it is (5,040, 4,970, 3,430)."""
    plain = row(table, "xpass (no Aeolus)", "none", "xpass")
    assert plain["drops"] == 0 and plain["timeouts"] == 0
    drops = []
    for label, _ in aeolus_threshold.thresholds(aeolus_threshold.INCAST_BUFFER):
        r = row(table, label, "wred", "xpass")
        assert r["finished"] == r["flows"] and r["mean_fct_us"] < plain["mean_fct_us"], (label, r)
        drops.append(r["drops"])
    assert drops[0] > drops[1] > drops[2] > 0, drops
