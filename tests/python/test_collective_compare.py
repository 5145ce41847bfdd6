"""Collectives under loss recovery and load balancing (`retx reproduce collective-compare
--quick`): a ring all-reduce (16 ranks x 8 MB, random placement) and a direct all-to-all (16 x
2 MB) on the k = 4 fat-tree, go-back-N / IRN / MELO with ECMP and IRN / go-back-N with random
spraying, under DCQCN and HPCC, with and without 0.1 % loss; seed 1, one iteration.

Each test is a mechanism docs/REPRODUCTIONS.md explains, with its margin well inside what the
quick table shows (the values are quoted beside each bound). The table itself is a golden
(tests/golden/reproduce/quick/collective-compare.csv, compared byte for byte by
test_golden_reproductions.py); these tests say which of its numbers matter and why.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import collective_compare

SPRAY = collective_compare.SPRAY
OPS = ("all-reduce", "all-to-all")
# The IB local ACK timeout go-back-N runs with (4.096 us x 2^10), in us.
GBN_RTO_US = 4194.304


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out: Path = tmp_path_factory.mktemp("collective-compare")
    collective_compare.run(out, quick=True)
    assert (out / "plot.png").stat().st_size > 0
    return pl.read_csv(out / "table.csv")


def cell(table: pl.DataFrame, op: str, recovery: str, routing: str, cc: str, loss: float, col: str = "slowdown") -> float:
    r = table.filter((pl.col("op") == op) & (pl.col("recovery") == recovery) & (pl.col("routing") == routing)
                     & (pl.col("cc") == cc) & (pl.col("loss") == loss))
    assert r.height == 1, (op, recovery, routing, cc, loss)
    return r[col][0]


def test_the_quick_grid_ran_and_every_collective_finished(table: pl.DataFrame) -> None:
    # 2 workloads x (5 variants x 2 controllers + NDP under its own) x 2 loss rates, one row each.
    assert table.height == 2 * (5 * 2 + 1) * 2
    assert table.select("op", "recovery", "routing", "cc", "loss").n_unique() == table.height
    assert set(table["op"]) == set(OPS) and set(table["cc"]) == {"dcqcn", "hpcc", "none"}
    assert set(table.filter(pl.col("cc") == "none")["recovery"]) == {"ndp"}
    assert (table["finished"] == table["iterations"]).all() and (table["iterations"] == 1).all()
    # Nothing beats the ideal: every slowdown at least 1 (the lowest, IRN sprayed all-to-all
    # under DCQCN, is 1.07).
    assert table["slowdown"].min() >= 1.0


def test_loss_costs_go_back_n_most(table: pl.DataFrame) -> None:
    """0.1 % loss under ECMP: go-back-N's slowdown over twice IRN's in every case (quick: 3.9x
    to 27x), and its CCT grows more than IRN's and MELO's (it resends a window per loss and waits
    out the 4.2 ms timer for a lost tail; IRN and MELO resend the hole)."""
    for op in OPS:
        for cc in ("dcqcn", "hpcc"):
            assert cell(table, op, "gbn", "ecmp", cc, 0.001) > 2 * cell(table, op, "irn", "ecmp", cc, 0.001), (op, cc)
            cost = {rec: cell(table, op, rec, "ecmp", cc, 0.001, "cct_us") - cell(table, op, rec, "ecmp", cc, 0.0, "cct_us")
                    for rec in ("gbn", "irn", "melo")}
            assert cost["gbn"] > 3 * max(cost["irn"], cost["melo"]), (op, cc, cost)


def test_a_lossy_go_back_n_all_to_all_waits_for_its_timer(table: pl.DataFrame) -> None:
    """The all-to-all's 240 flows under 0.1 % loss: some flow loses its last packets, which no
    later packet reveals, so go-back-N waits for its 4.2 ms timeout: the CCT (ideal 164 us) is
    then over 4.2 ms (quick: 4,299 and 8,482 us). IRN's timer is 100-320 us (quick: 231, 319 us)."""
    for cc in ("dcqcn", "hpcc"):
        assert cell(table, "all-to-all", "gbn", "ecmp", cc, 0.001, "timeouts") >= 1
        assert cell(table, "all-to-all", "gbn", "ecmp", cc, 0.001, "cct_us") > GBN_RTO_US
        assert cell(table, "all-to-all", "irn", "ecmp", cc, 0.001, "cct_us") < GBN_RTO_US / 4


def test_without_loss_or_reordering_the_recovery_scheme_does_not_matter_to_all_to_all(table: pl.DataFrame) -> None:
    """Lossless ECMP: no packet is lost or reordered, so no recovery acts, and the all-to-all's
    flows (each at most a fifteenth of a link) never reach IRN's one-BDP in-flight cap: the three
    schemes finish within 2 % of one another (quick: identically)."""
    for cc in ("dcqcn", "hpcc"):
        ccts = [cell(table, "all-to-all", rec, "ecmp", cc, 0.0, "cct_us") for rec in ("gbn", "irn", "melo")]
        assert max(ccts) <= 1.02 * min(ccts), (cc, ccts)
        assert cell(table, "all-to-all", "gbn", "ecmp", cc, 0.0, "retx_mb") == 0


def test_spraying_undoes_ecmp_collisions_for_irn_under_dcqcn(table: pl.DataFrame) -> None:
    """Lossless, DCQCN: ECMP puts several of a step's flows on one fabric link (the random ring's
    cross-pod neighbours, the all-to-all's 240 flows); spraying every packet over all paths
    spreads them, and IRN accepts the reordering. IRN sprayed under 0.9x IRN with ECMP
    (quick: 1.71 against 2.13, 1.07 against 1.36)."""
    for op in OPS:
        assert cell(table, op, "irn", SPRAY, "dcqcn", 0.0) < 0.9 * cell(table, op, "irn", "ecmp", "dcqcn", 0.0), op


def test_go_back_n_collapses_under_spraying(table: pl.DataFrame) -> None:
    """DCQCN, sprayed: reordering looks like loss to go-back-N, which drops every out-of-order
    packet and goes back, so it is over twice as slow as IRN sprayed, with or without loss
    (quick: 10.6x and 9.6x for the ring, 25.7x and 8.7x for the all-to-all)."""
    for op in OPS:
        for loss in (0.0, 0.001):
            assert cell(table, op, "gbn", SPRAY, "dcqcn", loss) > 2 * cell(table, op, "irn", SPRAY, "dcqcn", loss), (op, loss)


def test_reordering_alone_makes_irn_retransmit(table: pl.DataFrame) -> None:
    """No loss, yet IRN sprayed resends data: it NACKs every out-of-order arrival and the sender
    resends the hole at once, so a packet that is only late is sent twice. The ring's flows run
    at line rate, so reordering is frequent (quick: 90 MB resent of 240 MB); under ECMP none."""
    assert cell(table, "all-reduce", "irn", SPRAY, "dcqcn", 0.0, "retx_mb") > 10
    assert cell(table, "all-reduce", "irn", "ecmp", "dcqcn", 0.0, "retx_mb") == 0


def test_hpcc_misreads_sprayed_paths(table: pl.DataFrame) -> None:
    """HPCC keeps its previous INT reading per hop *position* (as HPCC's ns-3 does): sprayed, two
    successive ACKs report different links at the same position, whose byte counters differ,
    so the utilisation it computes is wrong and the rate collapses. IRN's ring all-reduce sprayed
    is over 3x slower than with ECMP under HPCC (quick: 6.4x), while under DCQCN spraying speeds it
    up. Should HPCC keep per-path state one day, this fails and docs/REPRODUCTIONS.md must change."""
    assert cell(table, "all-reduce", "irn", SPRAY, "hpcc", 0.0) > 3 * cell(table, "all-reduce", "irn", "ecmp", "hpcc", 0.0)
    assert cell(table, "all-reduce", "irn", SPRAY, "dcqcn", 0.0) < cell(table, "all-reduce", "irn", "ecmp", "dcqcn", 0.0)


def test_findings_are_the_tables_ratios(table: pl.DataFrame) -> None:
    found = collective_compare.findings(table)
    assert found.height == 4 + 4  # per workload and controller; NDP beside IRN sprayed under each
    row = found.filter((pl.col("op") == "all-to-all") & (pl.col("cc") == "dcqcn")).row(0, named=True)
    want = cell(table, "all-to-all", "gbn", "ecmp", "dcqcn", 0.001) / cell(table, "all-to-all", "irn", "ecmp", "dcqcn", 0.001)
    assert row["gbn/irn ecmp, 0.1 % loss"] == pytest.approx(want, abs=1e-3)
    row = found.filter((pl.col("op") == "all-to-all") & (pl.col("cc") == "ndp vs irn spray hpcc")).row(0, named=True)
    want = cell(table, "all-to-all", "ndp", SPRAY, "none", 0.0) / cell(table, "all-to-all", "irn", SPRAY, "hpcc", 0.0)
    assert row["ndp/irn spray, lossless"] == pytest.approx(want, abs=1e-3)
