"""left-fct's quick table, by mechanism (its numbers are held by the golden table): spraying
reorders, IRN takes it for loss and resends, LEFT resends nothing and finishes sooner than every
baseline, on the mean and the tail."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import left_fct


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, Path]:
    out: Path = tmp_path_factory.mktemp("left-fct")
    return left_fct.run(out, quick=True), out


def test_every_flow_finishes_and_only_irn_resends_under_spraying(ran: tuple[pl.DataFrame, Path]) -> None:
    table, _ = ran
    assert table.height == len(left_fct.QUICK_SCHEMES)
    assert (table["finished"] == table["flows"]).all() and (table["drops"] == 0).all()
    retx = dict(zip(table["scheme"], table["retx_mb"]))
    assert retx["per-packet irn"] > 10 and retx["per-packet left"] == 0 and retx["per-flow gbn"] == 0


def test_left_beats_every_baseline_and_the_claims_recompute(ran: tuple[pl.DataFrame, Path]) -> None:
    table, out = ran
    rows = {r["scheme"]: r for r in table.iter_rows(named=True)}
    for baseline in ("per-flow gbn", "per-packet irn", "per-flowlet irn"):
        for stat in ("mean", "p99"):
            assert rows["per-packet left"][f"{stat}_fct_us"] < rows[baseline][f"{stat}_fct_us"], (baseline, stat)
    claims = pl.read_csv(out / "claims.csv")
    first = claims.row(0, named=True)
    want = (1 - rows["per-packet left"]["mean_fct_us"] / rows["per-flow gbn"]["mean_fct_us"]) * 100
    assert first["source"] == 28.1 and first["retx"] == pytest.approx(want)
