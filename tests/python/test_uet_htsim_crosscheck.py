"""The cross-check with uet-htsim on its validation experiments (`retx reproduce
uet-htsim-crosscheck --quick`: the 16- and 128-host experiments of the three plans).

uet-htsim's connection matrices live outside the repository (../peers/uet-htsim or
$RETX_UET_HTSIM_DIR); without them these tests skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import uet_htsim_crosscheck as uet

pytestmark = pytest.mark.skipif(not uet.available(), reason="uet-htsim inputs not present")

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reproduce" / "quick" / "uet-htsim-crosscheck.csv"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uet")
    uet.run(out, quick=True)
    got = (out / "table.csv").read_text()
    if os.environ.get("RETX_BLESS"):
        GOLDEN.write_text(got)
        (GOLDEN.parent / "uet-htsim-crosscheck.claims.csv").write_text((out / "claims.csv").read_text())
    assert got == GOLDEN.read_text(), "uet-htsim-crosscheck moved: say why, then RETX_BLESS=1"
    return out


def test_every_quick_experiment_of_the_three_plans_runs(ran: Path) -> None:
    table = pl.read_csv(ran / "table.csv")
    want = [(e.mode, e.idx) for e in uet.EXPERIMENTS if e.quick]
    assert list(zip(table["plan"].to_list(), table["line"].to_list())) == want
    assert (table["finished"] == table["flows"]).all()


# uet-htsim moves from itself when only its seed changes (scripts/uet_htsim_seeds.py, the
# spread in data/uet_htsim_seeds.csv): with one EV per connection (`-paths 1`) which flows share
# an uplink is the hash's draw (its tail 403-712 us over 10 seeds against 527.8 at seed 13); NSCC
# alone shares an incast unfairly and which flow wins is the trimming coin flips' (a flow moves
# by up to 47 % on the 16-host incast). retx draws from its own streams, so where uet-htsim does
# not hold itself to a bar, retx is held to uet-htsim's own spread instead.
SINGLE_PATH = 10


def spread(row: dict) -> "uet.SeedSpread | None":
    return uet.seed_spreads().get((row["plan"], row["line"]))


def test_target_verdicts_agree_with_uet_htsim(ran: Path) -> None:
    table = pl.read_csv(ran / "table.csv")
    for row in table.iter_rows(named=True):
        assert row["retx_verdict"] == row["htsim_verdict"], row


def test_tails_within_2_percent_wherever_uet_htsim_holds_itself_to_that(ran: Path) -> None:
    """Every tail within 2 % of uet-htsim's, except where another seed moves uet-htsim's own tail
    by more than 2 % (the single-path and degraded-link permutations, NSCC's overlapped 3-to-1
    incast, the 16-host permutation under NSCC and RCCC): 18 of the quick grid's 27."""
    table = pl.read_csv(ran / "table.csv")
    held = 0
    for row in table.iter_rows(named=True):
        s = spread(row)
        if s is None or s.tail_dev <= uet.TAIL_TOLERANCE:
            assert row["tail_verdict"] == "PASS", row
            held += 1
    assert held >= 15


def test_single_path_tails_are_a_typical_draw_of_uet_htsims(ran: Path) -> None:
    """One EV per connection: retx's median tail over seeds 1-10 lies inside the interquartile
    range of uet-htsim's tails over its 10 seeds (quick: 532.5 / 538.9 / 527.0 us against
    interquartile ranges around 575.8 / 589.5 / 575.2), though seed 1's is retx's worst draw."""
    table = pl.read_csv(ran / "table.csv").filter(pl.col("line") == SINGLE_PATH)
    assert table.height == 3
    for row in table.iter_rows(named=True):
        s = spread(row)
        assert s is not None and s.runs >= 10, row
        assert s.tail_q1_us <= row["retx_tail_median_us"] <= s.tail_q3_us, (row, s)


def test_every_flow_within_5_percent_wherever_uet_htsim_holds_itself_to_that(ran: Path) -> None:
    """Where uet-htsim's own flows stay within 5 % of its seed-13 run at every other seed, every
    flow of retx does too (the RCCC and both-controller incasts, NSCC's permutation)."""
    table = pl.read_csv(ran / "table.csv")
    held = 0
    for row in table.filter(pl.col("flow_verdict").is_not_null()).iter_rows(named=True):
        s = spread(row)
        assert s is not None, row
        if s.max_dev <= uet.FLOW_TOLERANCE:
            assert row["flow_verdict"] == "PASS", row
            held += 1
    assert held >= 5
    assert pl.read_csv(ran / "flows.csv").height == 3 * (15 + 127 + 16)


# NSCC alone on the 128-host incast: uet-htsim's flows move by up to 6.6 % between its seeds,
# retx's by 7.2 % from uet-htsim's seed-13 run (docs/REPRODUCTIONS.md, uet-htsim against itself).
BEYOND_OWN_SPREAD = {("sender", 4)}


def test_elsewhere_no_flow_moves_further_than_uet_htsims_own_do(ran: Path) -> None:
    """Where uet-htsim's flows move by more than 5 % between its own seeds (NSCC's 16-host incast:
    up to 47 %; the 16-host permutations under RCCC and both: 6.3 and 5.1 %), retx's largest
    deviation from its seed-13 run is no larger (quick: 0.41, 0.043, 0.040)."""
    table = pl.read_csv(ran / "table.csv")
    judged = 0
    for row in table.filter(pl.col("flow_verdict").is_not_null()).iter_rows(named=True):
        s = spread(row)
        assert s is not None
        if s.max_dev > uet.FLOW_TOLERANCE and (row["plan"], row["line"]) not in BEYOND_OWN_SPREAD:
            assert row["flow_max_dev"] <= s.max_dev, (row, s)
            judged += 1
    assert judged >= 3


def test_the_seed_spread_covers_every_experiment() -> None:
    """uet-htsim was run at seed 13 and at least two other seeds on every experiment, and its
    seed-13 rows are the tails the suites print."""
    spreads = uet.seed_spreads()
    for e in uet.EXPERIMENTS:
        s = spreads.get((e.mode, e.idx))
        assert s is not None and s.runs >= 3, e
        assert s.tail_min_us <= e.htsim_tail_us * 1.000005 and s.tail_max_us >= e.htsim_tail_us * 0.999995, (e, s)


def test_the_reference_holds_every_recorded_experiment() -> None:
    ref = uet.reference_flows()
    for e in uet.EXPERIMENTS:
        if e.flows_key:
            assert ref.filter((pl.col("mode") == e.mode) & (pl.col("workload") == e.flows_key)).height > 0, e
