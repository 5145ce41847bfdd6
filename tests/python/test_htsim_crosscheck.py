"""The cross-check with htsim's NDP on its own inputs (`retx reproduce htsim-crosscheck`): the
432-host permutation and web search matrices, each compared flow by flow with what `htsim_ndp`
reported for them.

The inputs live outside the repository (../shared/peers/htsim or $RETX_HTSIM_DIR); without
them these tests skip. The table is also a golden (tests/golden/reproduce/quick/), so a change
that moves a number here must say why (RETX_BLESS=1 to store the new table).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import polars as pl
import pytest

from retx import reproduce
from retx.reproduce import htsim_crosscheck

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reproduce" / "quick" / "htsim-crosscheck.csv"

pytestmark = pytest.mark.skipif(not htsim_crosscheck.available(), reason="htsim inputs not present")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    out = tmp_path_factory.mktemp("htsim")
    clock = time.monotonic()
    htsim_crosscheck.run(out, quick=True)
    wall = time.monotonic() - clock
    got = (out / "table.csv").read_text()
    if os.environ.get("RETX_BLESS"):
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text(), "htsim-crosscheck moved: say why, then RETX_BLESS=1"
    return out, wall


@pytest.fixture(scope="module")
def table(ran: tuple[Path, float]) -> pl.DataFrame:
    return pl.read_csv(ran[0] / "table.csv")


def test_every_flow_of_every_bucket_is_compared(table: pl.DataFrame) -> None:
    buckets = [b[2] for b in htsim_crosscheck.BUCKETS]
    assert table["workload"].to_list() == ["permutation"] * 4 + ["web search"] * 4
    assert table["bucket"].to_list() == buckets * 2
    # 432 flows of 2 MB; the web search matrix's 4,298 flows by their size in the matrix.
    assert table["flows"].to_list()[:4] == [0, 0, 0, 432]
    assert sum(table["flows"].to_list()[4:]) == 4_298


def test_fct_and_slowdown_within_20_percent_of_htsim_in_every_bucket(table: pl.DataFrame) -> None:
    for row in table.iter_rows(named=True):
        assert row["within_20pct"], row


def test_every_permutation_flow_finishes_within_5_percent_of_htsim(ran: tuple[Path, float]) -> None:
    flows = pl.read_csv(ran[0] / "flows.csv")
    perm = flows.filter(pl.col("workload") == "permutation").row(0, named=True)
    assert perm["flows"] == 432
    assert perm["max_fct_deviation"] <= htsim_crosscheck.PERMUTATION_TOLERANCE, perm


def test_flows_are_written_in_htsims_terms(ran: tuple[Path, float]) -> None:
    # The reference's columns, flow ids and sizes as in the matrix, acked bytes rounded up.
    lines = (ran[0] / "ws_432_l30_5ms.retx.finish.txt").read_text().splitlines()
    ref = (htsim_crosscheck.inputs_dir() / htsim_crosscheck.RUNS[1][2]).read_text().splitlines()
    assert len(lines) == len(ref)
    ours = {int(l.split()[0]): l.split() for l in lines[1:]}
    for line in ref[1:]:
        f = line.split()
        o = ours[int(f[0])]
        assert (o[1], o[2], o[3], o[4], o[6]) == (f[1], f[2], f[3], f[4], f[6]), (o, f)


def test_the_announced_wall_time_holds(ran: tuple[Path, float]) -> None:
    stale = reproduce.stale_wall_time("htsim-crosscheck", True, ran[1])
    assert stale is None, stale
