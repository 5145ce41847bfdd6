"""The melo-fig5a reproduction, quick grid, end to end."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from retx.reproduce import REPRODUCTIONS, melo_fig5a
from retx.table import format_table

COLUMNS = ["loss_rate", "scheme", "goodput_gbps", "pct_of_line_rate", "pct_of_max_goodput",
           "retx_bytes", "naks", "timeouts"]


def test_registry_names_its_modules() -> None:
    assert REPRODUCTIONS["melo-fig5a"] is melo_fig5a


def test_quick_grid_scenarios_are_valid() -> None:
    grid = melo_fig5a.scenarios(quick=True)
    assert len(grid) == len(melo_fig5a.QUICK_LOSS_RATES) * len(melo_fig5a.SCHEMES)
    assert len({s.name for s in grid}) == len(grid)
    for scenario in grid:
        scenario.resolved()  # raises ScenarioError if the schema moved under us


def test_quick_reproduction(tmp_path: Path, capsys) -> None:
    table = melo_fig5a.run(tmp_path, quick=True)
    assert table.columns == COLUMNS
    assert table.height == len(melo_fig5a.QUICK_LOSS_RATES) * len(melo_fig5a.SCHEMES)
    for name in ["table.parquet", "table.csv", "plot.png"]:
        assert (tmp_path / name).stat().st_size > 0
    assert pl.read_parquet(tmp_path / "table.parquet").equals(table)
    printed = capsys.readouterr().out
    assert "45.6" in printed and "14.02" in printed  # the paper's numbers are shown

    assert (table["goodput_gbps"] <= 40.0).all()
    assert (table["goodput_gbps"] > 0).all()
    def pct(scheme: str, rate: float) -> float:
        row = table.filter((pl.col("scheme") == scheme) & (pl.col("loss_rate") == rate))
        return row["pct_of_max_goodput"][0]

    # The figure's point: at 1 % loss selective repeat keeps nearly all of the line rate
    # (the issue asks >= 95 %; the paper has 99.0 % for MELO) and go-back-N collapses
    # (paper 7.06 %).
    assert pct("irn", 1e-2) >= 95.0, format_table(table)
    assert pct("melo", 1e-2) >= 95.0, format_table(table)
    assert pct("gbn", 1e-2) < 15.0, format_table(table)
    # Go-back-N falls with loss, and at 0.1 % sits near the paper's 45.6 % (+-15 points:
    # the quick run sees only ~50 losses).
    gbn = [pct("gbn", r) for r in melo_fig5a.QUICK_LOSS_RATES]
    assert gbn == sorted(gbn, reverse=True), format_table(table)
    assert 30.0 <= pct("gbn", 1e-3) <= 60.0, format_table(table)
    # The HPCC ns-3 NAK rule makes one loss cost about one RTT, not a NAK interval.
    assert pct("gbn-hpcc", 1e-3) > 85.0, format_table(table)
