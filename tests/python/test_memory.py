"""retx memory: the on-chip table, from Python and from the CLI."""

from __future__ import annotations

import polars as pl
import pytest

from conftest import run_cli
from retx import ScenarioError
from retx.memory import memory_table


def test_melo_reproduces_the_papers_23_bytes_per_connection() -> None:
    table = memory_table()  # 100 Gbps x 200 us, 1 KB MTU, 300 connections, 1 Kb pools
    melo = table.row(by_predicate=pl.col("scheme") == "melo", named=True)
    assert melo["per_connection_bytes"] == 20.0
    assert melo["shared_bytes"] == 768.0
    assert melo["average_bytes"] == pytest.approx(22.56)
    assert melo["pct_of_qpc"] == pytest.approx(9.1, abs=0.05)
    irn = table.row(by_predicate=pl.col("scheme") == "irn", named=True)
    assert irn["per_connection_bytes"] == pytest.approx(2 * 2442 / 8 + 3)


def test_bad_bandwidth_names_the_argument() -> None:
    with pytest.raises(ScenarioError, match="^bandwidth: "):
        memory_table(bandwidth="100Gbs")


def test_cli_prints_the_table() -> None:
    result = run_cli("memory", "--connections", "300")
    assert result.returncode == 0, result.stderr
    assert "22.56" in result.stdout and "melo" in result.stdout
    bad = run_cli("memory", "--rtt", "2 weeks")
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("retx: error: rtt:")
    assert "Traceback" not in bad.stderr
