"""The Aeolus testbed's incast (`retx reproduce aeolus-incast --quick`): the authors' flow files
(one burst of 70 messages), their application's Homa (`testbed = true`), 30 and 50 KB, seed 1.

Each test is a mechanism docs/REPRODUCTIONS.md explains. The quick table and its claims are
goldens (tests/golden/reproduce/quick/aeolus-incast.csv and .claims.csv, compared by
test_golden_reproductions.py); these tests say which of its numbers matter and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from retx import flowgen
from retx.reproduce import aeolus_incast

RTO_MS = 10.0  # flowgen.c:157, TIMEOUT 0.01


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out: Path = tmp_path_factory.mktemp("aeolus-incast")
    aeolus_incast.run(out, quick=True)
    return out


@pytest.fixture(scope="module")
def table(out: Path) -> pl.DataFrame:
    return pl.read_csv(out / "table.csv")


def row(table: pl.DataFrame, kb: int, scheme: str) -> dict[str, Any]:
    r = table.filter((pl.col("size_kb") == kb) & (pl.col("scheme") == scheme))
    assert r.height == 1, (kb, scheme)
    return r.row(0, named=True)


def test_the_flow_files_are_one_burst_of_seventy_messages_back_to_back_per_sender() -> None:
    """The authors' files: 8 warm-up rows skipped, 70 messages to h0, 10 from each of h1..h7,
    all at one start time; a sender's k-th message k first RTTs after its first."""
    flows = flowgen.read(aeolus_incast.INPUTS / "flow_info_many_to_one_30kb.txt", first_rtt_us=10.0)
    assert len(flows) == 70 and {f["dst"] for f in flows} == {"h0"}
    assert {f["size"] for f in flows} == {"30000B"}
    by_sender: dict[object, list[float]] = {}
    for f in flows:
        by_sender.setdefault(f["src"], []).append(float(str(f["start"])[:-2]))
    assert sorted(by_sender) == [f"h{i}" for i in range(1, 8)]
    assert all(starts == [10.0 * k for k in range(10)] for starts in by_sender.values())


def test_a_flowgen_file_with_a_bad_row_is_refused_naming_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "flows.txt"
    bad.write_text("0 192 168 111 1 192 168 111 9 1 2 1 0\n1 192 168 111 2 192 168 111 1 3 4 30000\n")
    with pytest.raises(flowgen.FlowgenError, match=r"flows.txt:2: 12 columns"):
        flowgen.read(bad)


def test_every_message_finishes(table: pl.DataFrame) -> None:
    assert set(table["size_kb"]) == {30, 50}
    assert (table["messages"] == 70).all() and (table["finished"] == 70).all()


def test_testbed_homa_serialises_its_timeouts_through_one_grant_slot(table: pl.DataFrame) -> None:
    """The testbed's receiver grants one message at a time and times out only that one: a
    message that lost packets holds the slot for 10 ms while every message behind it waits, so
    the mean MCT is many RTOs (about a dozen), not one, and the slowest message waits for over
    ten in turn (RESENDs to messages whose 10 ms had long run cost nothing more)."""
    for kb in (30, 50):
        r = row(table, kb, "homa")
        assert r["resends"] > 0 and r["drops_unscheduled"] > 0, kb
        assert r["mean_mct_ms"] > 8 * RTO_MS, (kb, r)
        assert r["max_mct_ms"] > 10 * RTO_MS, (kb, r)


def test_its_sender_timer_alone_would_need_about_one_rto(table: pl.DataFrame) -> None:
    """The same burst under retx's default Homa recovery (a timer per message at the sender):
    concurrent timeouts, a mean MCT of a few RTOs at most, an order of magnitude below the
    testbed's Homa: the serialisation, not the losses, makes the testbed's 100+ ms."""
    for kb in (30, 50):
        slot, timer = row(table, kb, "homa"), row(table, kb, "homa-sender-rto")
        assert timer["timeouts"] > 0 and timer["resends"] == 0, kb
        assert timer["mean_mct_ms"] * 5 < slot["mean_mct_ms"], (kb, timer, slot)


def test_aeolus_leaves_one_shared_ten_ms_wait(table: pl.DataFrame) -> None:
    """With Aeolus no scheduled packet is dropped (the selective drop takes unscheduled ones
    only) and no sender timer fires; messages whose whole first RTT was dropped get no grant
    (nothing arrived to move it) and wait out 10 ms from their requests together, so the mean
    is about half an RTO and the maximum just over one."""
    for kb in (30, 50):
        a = row(table, kb, "homa+aeolus")
        assert a["drops_scheduled"] == 0 and a["timeouts"] == 0 and a["resends"] > 0, kb
        assert 0.2 * RTO_MS < a["mean_mct_ms"] < 0.8 * RTO_MS, (kb, a)
        assert RTO_MS < a["max_mct_ms"] < 1.3 * RTO_MS, (kb, a)
        assert a["mean_mct_ms"] * 10 < row(table, kb, "homa")["mean_mct_ms"], kb


def test_fig8a_quantiles_and_plot(out: Path) -> None:
    """Fig. 8(a) at 30 KB: Homa's median many RTOs, Homa+Aeolus's about one (the messages that
    lost their whole first RTT, here just over half, finish just after their shared 10 ms)."""
    q = pl.read_csv(out / "fig8a_quantiles.csv")
    assert (out / "fig8a.png").stat().st_size > 0
    homa = q.filter(pl.col("scheme") == "homa").row(0, named=True)
    aeolus = q.filter(pl.col("scheme") == "homa+aeolus").row(0, named=True)
    assert homa["messages"] == aeolus["messages"] == 70
    assert homa["p50"] > 5 * RTO_MS and aeolus["p50"] < 1.2 * RTO_MS and aeolus["p10"] < 0.1 * RTO_MS
    assert homa["min"] <= homa["p10"] <= homa["p50"] <= homa["p90"] <= homa["max"]


def test_claims_are_judged_against_the_raw_results(out: Path) -> None:
    claims = pl.read_csv(out / "claims.csv")
    assert claims.height == 8
    quick = claims.filter(pl.col("retx").is_not_null())
    assert quick.height == 4, "the quick grid judges 30 and 50 KB"
    assert claims.filter(pl.col("retx").is_null())["verdict"].to_list() == ["not in this grid"] * 4
