"""The HPCC paper's micro-benchmarks (`retx reproduce hpcc-micro`): the behaviour each one shows,
with tolerances stated; the exact table is a golden (test_golden_reproductions.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import hpcc_micro

BASE_RTT_US = 4.2


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    return hpcc_micro.run(tmp_path_factory.mktemp("hpcc-micro"), quick=True)


def get(table: pl.DataFrame, exp: str, cc: str, col: str) -> float:
    return table.filter((pl.col("experiment") == exp) & (pl.col("cc") == cc))[col][0]


def test_every_experiment_ran_both_controllers_without_pauses(table: pl.DataFrame) -> None:
    assert table.select("experiment", "cc").rows() == [(e, c) for e in hpcc_micro.EXPERIMENTS for c in hpcc_micro.CONTROLLERS]
    assert (table["pfc_pauses"] == 0).all()


def test_long_short_hpcc_recovers_at_once_dcqcn_takes_its_timers(table: pl.DataFrame) -> None:
    # HPCC is back within a few RTTs (the per-RTT reference sees the freed link at once);
    # DCQCN waits for its 300 us increase timer, several times.
    assert get(table, "long-short", "hpcc", "recover_to_98pct_us") <= 10 * BASE_RTT_US
    assert get(table, "long-short", "dcqcn", "recover_to_98pct_us") >= 600
    # HPCC runs at eta of the link on 1090 B frames: 100 x 0.95 x 1000 / 1090 = 87.2 Gbps.
    assert get(table, "long-short", "hpcc", "long_gbps_alone") == pytest.approx(87.2, rel=0.01)


def test_incast_hpcc_queue_is_the_first_rtt_burst_and_drains(table: pl.DataFrame) -> None:
    # Eight senders' first windows (one BDP each, 52 KB) meet at the switch; HPCC then drains
    # it at line rate (400 KB / 100 Gbps = 32 us) plus a few RTTs. DCQCN reacts only above
    # the 400 KB ECN threshold and peaks far higher.
    hp, dc = get(table, "incast", "hpcc", "peak_queue_kb"), get(table, "incast", "dcqcn", "peak_queue_kb")
    assert hp <= 8 * 52 + 16
    assert get(table, "incast", "hpcc", "queue_above_1bdp_for_us") <= 80
    assert dc >= 3 * hp


def test_mice_see_the_base_rtt_with_hpcc(table: pl.DataFrame) -> None:
    assert get(table, "mice", "hpcc", "mice") == 40
    assert get(table, "mice", "hpcc", "mice_fct_p99_us") <= 2 * BASE_RTT_US
    # DCQCN's queue comes and goes: its worst mice wait behind hundreds of KB.
    assert get(table, "mice", "dcqcn", "mice_fct_p99_us") >= 35
