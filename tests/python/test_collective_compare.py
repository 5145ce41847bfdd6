"""Collectives under loss recovery and load balancing (`retx reproduce collective-compare
--quick`): a ring all-reduce (16 ranks x 8 MB, random placement), a direct all-to-all (16 x
2 MB) and a permutation (16 flows of 2 MB, a derangement drawn from the seed) on the k = 4
fat-tree, go-back-N / IRN / MELO with ECMP and IRN / go-back-N / LEFT with random spraying, under
DCQCN and HPCC, NDP sprayed and UET (RUD + NSCC, sprayed by entropy value) under their own
control, with and without 0.1 % loss; seed 1, one iteration.

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
OPS = ("all-reduce", "all-to-all", "permutation")
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
    # 3 workloads x (6 variants x 2 controllers + NDP and UET under their own) x 2 loss rates,
    # one row each.
    assert table.height == 3 * (6 * 2 + 2) * 2
    assert table.select("op", "recovery", "routing", "cc", "loss").n_unique() == table.height
    assert set(table["op"]) == set(OPS) and set(table["cc"]) == {"dcqcn", "hpcc", "none", "nscc"}
    assert set(table.filter(pl.col("cc") == "none")["recovery"]) == {"ndp"}
    assert set(table.filter(pl.col("cc") == "nscc")["recovery"]) == {"uet"}
    assert (table["finished"] == table["iterations"]).all() and (table["iterations"] == 1).all()
    # The permutation is not a collective: no bus bandwidth; the collectives all have one.
    assert table.filter(pl.col("op") == "permutation")["busbw_gbps"].is_null().all()
    assert table.filter(pl.col("op") != "permutation")["busbw_gbps"].is_not_null().all()
    # Nothing beats the ideal: every slowdown at least 1 (the lowest, IRN sprayed all-to-all
    # under DCQCN, is 1.07).
    assert table["slowdown"].min() >= 1.0


def test_loss_costs_go_back_n_most(table: pl.DataFrame) -> None:
    """0.1 % loss under ECMP: go-back-N's slowdown over twice IRN's in every case (quick: 3.9x
    to 27x; the permutation 7.0x and 12x), and its CCT grows more than IRN's and MELO's (it resends a window per loss and waits
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
    then over 4.2 ms (quick: 4,299 and 8,482 us). IRN's timer is 100-320 us (quick: 231, 319 us).
    The permutation's 16 flows of 2 MB likewise (ideal 180 us; quick: 4,720 and 8,762 us against
    IRN's 678 and 727)."""
    for op in ("all-to-all", "permutation"):
        for cc in ("dcqcn", "hpcc"):
            assert cell(table, op, "gbn", "ecmp", cc, 0.001, "timeouts") >= 1, (op, cc)
            assert cell(table, op, "gbn", "ecmp", cc, 0.001, "cct_us") > GBN_RTO_US, (op, cc)
            assert cell(table, op, "irn", "ecmp", cc, 0.001, "cct_us") < GBN_RTO_US / 4, (op, cc)


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
    (quick: 1.83 against 2.13, 1.07 against 1.36; the permutation, whose cross-pod flows ECMP
    hashes onto shared uplinks, 1.82 against 3.33)."""
    for op in OPS:
        assert cell(table, op, "irn", SPRAY, "dcqcn", 0.0) < 0.9 * cell(table, op, "irn", "ecmp", "dcqcn", 0.0), op


def test_go_back_n_collapses_under_spraying(table: pl.DataFrame) -> None:
    """DCQCN, sprayed: reordering looks like loss to go-back-N, which drops every out-of-order
    packet and goes back, so it is over twice as slow as IRN sprayed, with or without loss
    (quick: 9.9x and 10.1x for the ring, 25.7x and 8.7x for the all-to-all, 23.7x and 11.2x for
    the permutation)."""
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


def test_left_takes_reordering_without_resending(table: pl.DataFrame) -> None:
    """Lossless, DCQCN, sprayed: LEFT's receiver records an out-of-order packet in its bitmap
    and answers nothing (no NACK), so it resends nothing (quick: 0 MB on every workload) where
    IRN NACKs every out-of-order arrival and resends packets that were only late (quick: 82 MB
    on the ring, 13 MB on the permutation, whose flows run at line rate over the four cross-pod
    paths). Those resends take link capacity: LEFT is faster than IRN sprayed there (quick: ring
    1.15 against 1.83, permutation 1.30 against 1.82; the all-to-all's flows, a fifteenth of a
    link each, are barely reordered: 1.06 against 1.07)."""
    for op in ("all-reduce", "permutation"):
        assert cell(table, op, "left", SPRAY, "dcqcn", 0.0, "retx_mb") == 0, op
        assert cell(table, op, "irn", SPRAY, "dcqcn", 0.0, "retx_mb") > 5, op
        assert cell(table, op, "left", SPRAY, "dcqcn", 0.0) < 0.85 * cell(table, op, "irn", SPRAY, "dcqcn", 0.0), op
    assert cell(table, "all-to-all", "left", SPRAY, "dcqcn", 0.0, "retx_mb") == 0


def test_left_finds_random_loss_late(table: pl.DataFrame) -> None:
    """0.1 % loss, DCQCN, sprayed: with no NACK on reordering LEFT learns of a loss only when
    RCV.NXT has stood still for its 100 us hole timer, while its sender, capped at one BDP in
    flight, waits at the hole; IRN NACKs at the next arrival and resends within a round trip.
    On the line-rate ring and permutation LEFT is then over 1.5x IRN sprayed (quick: ring 5.72
    against 2.10, permutation 6.53 against 1.94), though it resends less (1.4 MB against 70 on
    the ring: only the lost packets)."""
    for op in ("all-reduce", "permutation"):
        assert cell(table, op, "left", SPRAY, "dcqcn", 0.001) > 1.5 * cell(table, op, "irn", SPRAY, "dcqcn", 0.001), op
        assert cell(table, op, "left", SPRAY, "dcqcn", 0.001, "retx_mb") < cell(table, op, "irn", SPRAY, "dcqcn", 0.001, "retx_mb"), op


def test_uet_is_the_fastest_without_loss(table: pl.DataFrame) -> None:
    """Lossless: UET (RUD + NSCC, every packet on an entropy value the switches hash) spreads
    each flow over the paths as spraying does, accepts packets out of order without a NACK
    (SACK), and its switches neither pause (no PFC) nor trim here (a data queue of one BDP):
    it resends nothing and comes within 15 % of the ideal on every workload (quick: ring 1.12,
    all-to-all 1.03, permutation 1.14), the lowest slowdown in each; every variant under ECMP is
    over 1.15x it (quick: 1.9x, 1.33x and 2.9x the best of them)."""
    for op in OPS:
        uet = cell(table, op, "uet", "ecmp", "nscc", 0.0)
        assert uet < 1.3, op
        assert cell(table, op, "uet", "ecmp", "nscc", 0.0, "retx_mb") == 0, op
        lossless = table.filter((pl.col("op") == op) & (pl.col("loss") == 0.0) & (pl.col("recovery") != "uet"))
        assert uet <= min(lossless["slowdown"].to_list()), op
        ecmp = min(lossless.filter(pl.col("routing") == "ecmp")["slowdown"].to_list())
        assert uet < ecmp / 1.15, (op, uet, ecmp)


def test_uet_recovers_from_random_loss_by_its_timer(table: pl.DataFrame) -> None:
    """0.1 % loss: nothing is trimmed, so UET, like NDP, finds a lost packet only by its timer;
    but UET's is uet-htsim's 15 us + 6 x one data queue's drain (90.7 us here) against NDP's
    1 ms, so UET stays under half NDP's slowdown on every workload (quick: 2.79 against 22.9,
    1.58 against 8.81, 1.86 against 7.91), and under half go-back-N's with ECMP and DCQCN, RoCE
    today (quick: 0.26, 0.06, 0.07 of it). Its timer fires once per packet older than the
    timeout (one per expiry, as uet-htsim's), so it counts far more expiries than NDP's
    (quick: 4,317 on the ring)."""
    for op in OPS:
        uet = cell(table, op, "uet", "ecmp", "nscc", 0.001)
        assert uet < 0.5 * cell(table, op, "ndp", SPRAY, "none", 0.001), op
        assert uet < 0.5 * cell(table, op, "gbn", "ecmp", "dcqcn", 0.001), op
        assert cell(table, op, "uet", "ecmp", "nscc", 0.001, "timeouts") > 0, op


def test_findings_are_the_tables_ratios(table: pl.DataFrame) -> None:
    found = collective_compare.findings(table)
    # per workload and controller; per workload NDP and UET beside IRN sprayed under each, UET beside NDP
    assert found.height == 3 * 2 + 3 * (2 + 2 + 1)
    row = found.filter((pl.col("op") == "all-to-all") & (pl.col("cc") == "dcqcn")).row(0, named=True)
    want = cell(table, "all-to-all", "gbn", "ecmp", "dcqcn", 0.001) / cell(table, "all-to-all", "irn", "ecmp", "dcqcn", 0.001)
    assert row["gbn/irn ecmp, 0.1 % loss"] == pytest.approx(want, abs=1e-3)
    row = found.filter((pl.col("op") == "all-reduce") & (pl.col("cc") == "dcqcn")).row(0, named=True)
    want = cell(table, "all-reduce", "left", SPRAY, "dcqcn", 0.0) / cell(table, "all-reduce", "irn", SPRAY, "dcqcn", 0.0)
    assert row["left/irn spray, lossless"] == pytest.approx(want, abs=1e-3)
    row = found.filter((pl.col("op") == "all-to-all") & (pl.col("cc") == "ndp vs irn spray hpcc")).row(0, named=True)
    want = cell(table, "all-to-all", "ndp", SPRAY, "none", 0.0) / cell(table, "all-to-all", "irn", SPRAY, "hpcc", 0.0)
    assert row["ndp/irn spray, lossless"] == pytest.approx(want, abs=1e-3)
    row = found.filter((pl.col("op") == "permutation") & (pl.col("cc") == "uet vs dcqcn")).row(0, named=True)
    want = cell(table, "permutation", "uet", "ecmp", "nscc", 0.001) / cell(table, "permutation", "irn", SPRAY, "dcqcn", 0.001)
    assert row["uet/irn spray, 0.1 % loss"] == pytest.approx(want, abs=1e-3)
    row = found.filter((pl.col("op") == "all-reduce") & (pl.col("cc") == "uet vs ndp")).row(0, named=True)
    want = cell(table, "all-reduce", "uet", "ecmp", "nscc", 0.001) / cell(table, "all-reduce", "ndp", SPRAY, "none", 0.001)
    assert row["uet/ndp, 0.1 % loss"] == pytest.approx(want, abs=1e-3)


def test_the_permutation_is_a_derangement_of_the_seed() -> None:
    """Every host sends once and receives once, never to itself; the same seed gives the same
    permutation, another seed (here) another one."""
    for seed in (1, 2, 3):
        dst = collective_compare.derangement(seed)
        assert sorted(dst) == list(range(collective_compare.RANKS))
        assert all(d != s for s, d in enumerate(dst))
        assert dst == collective_compare.derangement(seed)
    assert collective_compare.derangement(1) != collective_compare.derangement(2)
    flows = collective_compare.permutation_flows(1, "2MB", 2)
    assert len(flows) == 2 * collective_compare.RANKS
    assert all("after" not in f for f in flows[:16]) and all(f["after"] == list(range(16)) for f in flows[16:])
