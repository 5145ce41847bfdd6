"""The Python API: Scenario -> run -> Results with polars tables."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import retx
from conftest import EXAMPLES, SMALL_SCENARIO


def small(**overrides: object) -> retx.Scenario:
    return retx.Scenario.from_str(SMALL_SCENARIO).with_overrides(overrides)


def test_run_returns_polars_tables() -> None:
    results = retx.run(small(), progress=False)
    assert isinstance(results, retx.Results)
    assert isinstance(results.flows, pl.DataFrame)
    assert isinstance(results.timeseries, pl.DataFrame)
    assert results.flows["src"].dtype == pl.String
    assert results.flows["completed"].dtype == pl.Boolean
    assert results.flows["fct_us"].dtype == pl.Float64
    assert results.summary["name"] == "small"
    assert results.summary["flows"] == results.flows.height == 1
    assert "[topology]" in results.resolved


def test_run_accepts_a_path() -> None:
    assert retx.run(EXAMPLES / "demo.toml", progress=False).summary["name"] == "demo"


def test_same_seed_same_results() -> None:
    first = retx.run(small(seed=3), progress=False)
    second = retx.run(small(seed=3), progress=False)
    assert first.flows.equals(second.flows)
    assert first.timeseries.equals(second.timeseries)


def test_seed_changes_the_loss_pattern() -> None:
    # ~200 packets through 5 % loss: two seeds losing exactly the same ones is vanishingly
    # unlikely, so equal tables would mean the seed is ignored.
    lossy = [{"at": "switch:sw0", "rate": 0.05}]
    first = retx.run(small(seed=3, loss=lossy), progress=False)
    other = retx.run(small(seed=4, loss=lossy), progress=False)
    assert not first.flows.equals(other.flows)


def test_completed_flow_is_consistent() -> None:
    flow = retx.run(small(), progress=False).flows.row(0, named=True)
    assert flow["completed"]
    assert flow["delivered_bytes"] == flow["size_bytes"] == 200_000
    # Every byte goes out once, plus whatever was retransmitted.
    assert flow["sent_bytes"] == flow["delivered_bytes"] + flow["retx_bytes"]
    assert flow["fct_us"] == pytest.approx(flow["finish_us"] - flow["start_us"])
    assert flow["fct_us"] >= flow["ideal_fct_us"] > 0
    assert flow["slowdown"] == pytest.approx(flow["fct_us"] / flow["ideal_fct_us"])


def test_run_many_keeps_input_order() -> None:
    # The first run simulates the longest, so completion order differs from input order.
    scenarios = [
        small(name="long", duration="5ms",
              workload={"flows": [{"src": "h0", "dst": "h1", "size": "2MB", "start": "0us"}]}),
        small(name="short-a", seed=1),
        small(name="short-b", seed=2),
    ]
    results = retx.run_many(scenarios, workers=2, progress=False)
    assert [r.summary["name"] for r in results] == ["long", "short-a", "short-b"]
    assert results[0].flows["size_bytes"][0] == 2_000_000


def test_run_many_matches_run() -> None:
    scenario = small(seed=11)
    (parallel,) = retx.run_many([scenario], progress=False)
    assert parallel.flows.equals(retx.run(scenario, progress=False).flows)


def test_results_save_and_load_round_trip(tmp_path: Path) -> None:
    results = retx.run(small(), progress=False)
    loaded = retx.Results.load(results.save(tmp_path / "saved"))
    assert loaded.flows.equals(results.flows)
    assert loaded.timeseries.equals(results.timeseries)
    assert loaded.summary == results.summary
    assert loaded.resolved == results.resolved


def test_the_python_summary_is_summary_json(tmp_path: Path) -> None:
    """One summary: `Results.summary` is exactly what summary.json holds (its "fct"
    statistics and provenance included), before and after a save and load."""
    import json

    from retx.results import _json_safe

    results = retx.run(small(), progress=False)
    assert results.summary["fct"]["flows_finished"] == results.fct_stats()["flows_finished"] > 0
    assert results.summary["provenance"]["scenario_hash"]
    results.save(tmp_path / "out")
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk == _json_safe(results.summary)
    assert _json_safe(retx.Results.load(tmp_path / "out").summary) == on_disk


def test_resolved_fills_defaults_and_validates() -> None:
    resolved = retx.Scenario.from_str(SMALL_SCENARIO).resolved()
    again = retx.Scenario.from_str(resolved)
    assert again.resolved() == resolved  # resolving is idempotent
    with pytest.raises(retx.ScenarioError, match="topology.host_link"):
        small(**{"topology.host_link": "40Gbs"}).resolved()


def test_scenario_error_is_a_value_error() -> None:
    assert issubclass(retx.ScenarioError, ValueError)
    with pytest.raises(ValueError):
        retx.run(small(**{"loss": [{"at": "everywhere", "rate": 1.5}]}), progress=False)
