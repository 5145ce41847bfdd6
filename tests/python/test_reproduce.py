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


def test_melo_fig6a_cpu_rises_with_loss_and_stays_under_the_worst_case(tmp_path: Path) -> None:
    from retx.reproduce import melo_fig6a

    table = melo_fig6a.run(tmp_path, quick=True).sort("loss_rate")
    cpu = table["cpu_pct_of_core"].to_list()
    assert cpu == sorted(cpu), format_table(table)
    # At 0.01 % loss a few percent of the data is reordered: well under 10 % of a core.
    assert cpu[0] < 10.0, format_table(table)
    # Copying everything at 40 Gbps is the paper's 82.2 % ceiling.
    assert max(cpu) <= 82.2 + 0.5, format_table(table)


def test_melo_fig6b_pool_usage_falls_with_connections(tmp_path: Path) -> None:
    from retx.reproduce import melo_fig6b

    table = melo_fig6b.run(tmp_path, quick=True)
    light = table.filter(pl.col("loss_rate") == 1e-3).sort("connections")
    usage = light["pool_peak_pct"].to_list()
    # One 40 Gbps connection over 200 us has ~930 packets behind a hole: most of 1024 bits
    # (paper: 96.9 %); more connections, each with a smaller BDP, use less.
    assert 85.0 <= usage[0] <= 100.0, format_table(table)
    assert usage == sorted(usage, reverse=True) and usage[-1] < usage[0] / 2, format_table(table)


def test_melo_fig5b_melo_cuts_the_tail(tmp_path: Path) -> None:
    from retx.reproduce import melo_fig5b

    table = melo_fig5b.run(tmp_path, quick=True)
    assert (table["completed"] == table["flows"]).all(), format_table(table)
    for load in melo_fig5b.QUICK_LOADS:
        at = {r["scheme"]: r["p99_fct_ms"] for r in table.filter(pl.col("load") == load).iter_rows(named=True)}
        # The paper's reduction is 2.11-3.11x; with one NAK per 500 us ours is larger.
        assert at["gbn"] > 2.0 * at["melo"], format_table(table)
        assert at["gbn-hpcc"] >= at["melo"] * 0.95, format_table(table)


def test_gbone_fct_helps_large_flows(tmp_path: Path) -> None:
    from retx.reproduce import gbone_fct

    table = gbone_fct.run(tmp_path, quick=True)
    largest = table.filter(pl.col("group") == table["group"].max())
    by_scheme = {r["scheme"]: r["slowdown_median"] for r in largest.iter_rows(named=True)}
    assert by_scheme["gbone"] < by_scheme["gbn"], format_table(table)


def test_gbone_goodput_wire_utilisation_is_the_unlost_share(tmp_path: Path) -> None:
    from retx.reproduce import gbone_goodput

    table = gbone_goodput.run(tmp_path, quick=True)
    # A sender at line rate losing 10 % on the way fills 90 % of the receiver's link
    # (the paper's "converges to 90 %"), whatever the recovery scheme; +-2 points.
    for wire in table["steady_wire_pct_of_link"]:
        assert abs(wire - 90.0) < 2.0, format_table(table)
