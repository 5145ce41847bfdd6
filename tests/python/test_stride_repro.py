"""STRIDE's large-scale comparison and segment sweep on their quick grids
(`retx reproduce stride-fattree --quick`, `retx reproduce stride-segment --quick`).

stride-fattree quick: seed 1, 5 ms of 50 % web search arrivals on the 256-host fat-tree (444
flows), STRIDE, DCTCP and TCP-Vegas. stride-segment quick: the dumbbell with two 20 % web search
senders, seeds 1-2, 1 s of arrivals (594 flows per segment size), segments 4-256 KiB.

Each test says what it catches and why its tolerance is what it is; the quick values the bounds
were set against are quoted (every run is deterministic: the margins allow for model changes
that move a number legitimately, not for noise). Both quick tables are also goldens
(tests/golden/reproduce/quick/stride-*.csv, compared byte for byte by
test_golden_reproductions.py).
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import stride_fattree, stride_segment
from retx.table import format_table

# Wire time of one payload byte at 10 Gbps with STRIDE's 62 B header on 1452 B payloads.
LINE_NS_PER_BYTE = 8 / 10.0 * (1452 + 62) / 1452


class Ran:
    def __init__(self, table: pl.DataFrame, out: str, out_dir: Path) -> None:
        self.table, self.out, self.out_dir = table, out, out_dir


def run_quietly(module, out_dir: Path) -> Ran:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        table = module.run(out_dir, quick=True)
    return Ran(table, buf.getvalue(), out_dir)


@pytest.fixture(scope="module")
def fattree(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return run_quietly(stride_fattree, tmp_path_factory.mktemp("stride-fattree"))


@pytest.fixture(scope="module")
def segment(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return run_quietly(stride_segment, tmp_path_factory.mktemp("stride-segment"))


def cell(table: pl.DataFrame, scheme: str, bucket: str, col: str) -> float:
    r = table.filter((pl.col("scheme") == scheme) & (pl.col("bucket") == bucket))
    assert r.height == 1
    return r[col][0]


# --- stride-fattree --------------------------------------------------------------------------

def test_fattree_writes_its_files_and_every_flow_finished(fattree: Ran) -> None:
    """Catches a missing output, a lost category or scheme, and flows left unfinished."""
    table = fattree.table
    show = format_table(table)
    for name in ["table.parquet", "table.csv", "plot.png", "seeds.csv"]:
        assert (fattree.out_dir / name).stat().st_size > 0
    assert pl.read_parquet(fattree.out_dir / "table.parquet").equals(table)
    assert table.height == 3 * 4, show  # 3 schemes x the paper's 4 size categories
    assert table["scheme"].unique(maintain_order=True).to_list() == ["stride", "dctcp", "vegas"]
    assert table["bucket"].to_list()[:4] == [b[2] for b in stride_fattree.BUCKETS]
    assert table["unfinished"].sum() == 0, show
    # The same seed gives the three schemes the same flows (the workload does not depend on the
    # transport): equal counts per category, 444 in all at 5 ms of 50 % load on 256 hosts.
    counts = {s: table.filter(pl.col("scheme") == s)["flows"].to_list() for s in stride_fattree.SCHEMES}
    assert counts["stride"] == counts["dctcp"] == counts["vegas"], show
    assert sum(counts["stride"]) == 444, show
    assert min(counts["stride"]) >= 50, show  # quick: 64 / 182 / 78 / 120


def test_fattree_improvements_are_the_fct_ratios(fattree: Ran) -> None:
    """Catches an improvement taken the wrong way round, against the wrong row, or not finite;
    and checks the printed claims against the table."""
    table = fattree.table
    show = format_table(table)
    for r in table.iter_rows(named=True):
        if r["scheme"] == "stride":
            assert r["improvement_avg"] is None and r["improvement_p99"] is None, show
            continue
        for stat in ("avg", "p99"):
            got = r[f"improvement_{stat}"]
            want = r[f"{stat}_fct_us"] / cell(table, "stride", r["bucket"], f"{stat}_fct_us")
            assert math.isfinite(got) and got > 0, show
            assert math.isclose(got, want, rel_tol=1e-12), show
            # One seed: the range over seeds is the value itself.
            assert got == r[f"improvement_{stat}_min"] == r[f"improvement_{stat}_max"], show
        assert r["avg_fct_us"] > 0 and r["p99_fct_us"] > 0, show
    best_vegas = table.filter(pl.col("scheme") == "vegas")["improvement_avg"].max()
    best_dctcp = table.filter(pl.col("scheme") == "dctcp")["improvement_avg"].max()
    best_p99 = table.filter(pl.col("scheme") != "stride")["improvement_p99"].max()
    got = stride_fattree.claims(table)
    assert [c.source for c in got] == [1.8, 1.4, 2.3]
    assert [c.retx for c in got] == [best_vegas, best_dctcp, best_p99]
    assert "avg FCT, Vegas / STRIDE, best category (x)" in fattree.out


def test_fattree_small_flows_pay_stride_s_handshake(fattree: Ran) -> None:
    """Catches STRIDE's FCT losing its handshake and teardown, or the TCP baselines gaining one.

    A < 10 KB flow is at most 7 packets, ~20 us alone across the pods at 10 Gbps; STRIDE adds
    its SYN/SYN+ACK and FIN/FIN+ACK, two base RTTs (~25 us), and its line-rate starts queue
    more. A lone 5 KB flow: 19.9 us with TCP, 45.4 us with STRIDE (0.44). Quick: DCTCP / STRIDE
    0.38, Vegas / STRIDE 0.43 on average; at most 0.7 leaves room for queueing to move either
    side while the two round trips still decide.
    """
    for other in stride_fattree.BASELINES:
        assert cell(fattree.table, other, "< 10 KB", "improvement_avg") <= 0.7, format_table(fattree.table)
    # Neither TCP times out on this run; STRIDE's large flows do (quick: 110 timeouts, from its
    # 1 ms timer firing while a slowed flow's 64 KiB segment is still being sent).
    tcp = fattree.table.filter(pl.col("scheme") != "stride")
    assert tcp["timeouts"].sum() == 0 and tcp["retx_mb"].sum() == 0
    # Every switch marks at K whatever the scheme: the same network for all three.
    assert (fattree.table["ecn_marks"] > 0).all()


# --- stride-segment --------------------------------------------------------------------------

def test_segment_sweep_shape_and_every_flow_finished(segment: Ran) -> None:
    """Catches a lost segment size or seed, different flows per segment, unfinished flows."""
    table = segment.table
    show = format_table(table)
    for name in ["table.parquet", "table.csv", "plot.png", "seeds.csv", "testbed.txt"]:
        assert (segment.out_dir / name).stat().st_size > 0
    assert table["segment_kib"].to_list() == stride_segment.SEGMENTS_KIB, show
    assert table["unfinished"].sum() == 0, show
    # The same two seeds' flows at every segment size (quick: 594).
    assert table["flows"].n_unique() == 1 and table["flows"][0] > 400, show
    seeds = pl.read_csv(segment.out_dir / "seeds.csv")
    assert seeds.height == len(stride_segment.SEGMENTS_KIB) * len(stride_segment.QUICK_SEEDS)
    assert sorted(seeds["seed"].unique().to_list()) == stride_segment.QUICK_SEEDS
    assert table["fastest_seeds"].sum() == len(stride_segment.QUICK_SEEDS), show
    # The pooled time per byte is the seeds' sums' ratio, between the seeds' own values.
    for r in table.iter_rows(named=True):
        mine = seeds.filter(pl.col("segment_kib") == r["segment_kib"])
        assert math.isclose(r["ns_per_byte"], mine["fct_ns"].sum() / mine["bytes"].sum(), rel_tol=1e-9)
        assert r["ns_per_byte_min"] <= r["ns_per_byte"] <= r["ns_per_byte_max"], show


def test_segment_ack_counts_follow_the_segment(segment: Ran) -> None:
    """Catches a segment setting that does not reach the receiver's ACK rule.

    min_acks, one ACK per segment of every flow, must fall strictly as the segment grows, by at
    most half per doubling (ceil per flow keeps each flow's last, short segment). Where nothing
    was dropped every ACK reaches its sender, and each carries one STT sample, so the samples
    the rate control took are at least min_acks (NACKs and re-acknowledged duplicates add
    more; quick 4 KiB: 209,541 samples for 209,531 required ACKs).
    """
    table = segment.table
    show = format_table(table)
    acks = table["min_acks"].to_list()
    for a, b in zip(acks, acks[1:]):
        assert a / 2 <= b < a, show
    seeds = pl.read_csv(segment.out_dir / "seeds.csv")
    clean = seeds.filter(pl.col("drops") == 0)
    assert clean.height >= 1, format_table(seeds)  # quick: 8 KiB in seed 2
    for r in clean.iter_rows(named=True):
        assert r["stt_samples"] >= r["min_acks"], r
    # One ACK per 4 KiB gives the senders ~16x the samples of one per 64 KiB; NACKs and
    # duplicates after go-backs add more at 64 KiB (quick: 209,541 vs 22,543): at least 4x.
    at = {r["segment_kib"]: r for r in table.iter_rows(named=True)}
    assert at[4]["stt_samples"] >= 4 * at[64]["stt_samples"], show


def test_segment_small_segments_are_fastest(segment: Ran) -> None:
    """Catches the time per byte losing its floor, or the sweep's result flipping.

    No flow beats its own serialisation: every time per byte is above 10 Gbps' 0.834 ns/B.
    Per ACK, Algorithm 1 moves the rate one step (+10 Mbps, or x 7/8 above T_high), and the
    1 ms timer fires whenever a segment takes longer than 1 ms to send: below 33 Mbps at
    4 KiB, below 524 Mbps at 64 KiB. So small segments adjust the rate faster and time out less.
    Quick: 4 KiB fastest in both seeds, 4.17 ns/B pooled against 9.19 at 64 KiB (0.45x; <= 0.8
    allows the overload episodes that move single seeds by 2x); timeouts 251 vs 4,231.
    """
    table = segment.table
    show = format_table(table)
    assert (table["ns_per_byte_min"] > LINE_NS_PER_BYTE).all(), show
    at = {r["segment_kib"]: r for r in table.iter_rows(named=True)}
    assert stride_segment.fastest(table) <= 8, show
    assert at[4]["ns_per_byte"] <= 0.8 * at[64]["ns_per_byte"], show
    assert at[4]["timeouts"] * 4 <= at[64]["timeouts"], show
    got = stride_segment.claims(table)
    assert [c.source for c in got] == [64.0, 1.0]
    assert [c.retx for c in got] == [float(stride_segment.fastest(table)),
                                     at[64]["ns_per_byte"] / at[stride_segment.fastest(table)]["ns_per_byte"]]
    assert "fastest segment, lowest time per byte (KiB)" in segment.out
