"""Scenario loading and overrides (pure Python, no simulation)."""

from __future__ import annotations

from pathlib import Path

import pytest

import retx
from conftest import EXAMPLES, SMALL_SCENARIO


def test_with_overrides_deep_merges_tables() -> None:
    base = retx.Scenario.from_str(SMALL_SCENARIO)
    changed = base.with_overrides({
        "transport.recovery": "irn",
        "topology": {"link_delay": "1us"},
        "switch.pfc.enabled": True,
    })
    assert changed.data["transport"] == {"recovery": "irn", "cc": "dcqcn"}
    assert changed.data["topology"]["link_delay"] == "1us"
    assert changed.data["topology"]["hosts"] == 2  # untouched siblings survive
    assert changed.data["switch"] == {"pfc": {"enabled": True}}
    assert base.data["transport"]["recovery"] == "gbn"  # the original is not modified


def test_with_overrides_replaces_lists() -> None:
    new_loss = [{"at": "switch:leaf0", "rate": 1e-4}]
    changed = retx.Scenario.from_str(SMALL_SCENARIO).with_overrides({"loss": new_loss})
    assert changed.data["loss"] == new_loss


def test_with_overrides_round_trips_through_toml() -> None:
    changed = retx.Scenario.from_str(SMALL_SCENARIO).with_overrides({"seed": 9})
    assert retx.Scenario.from_str(changed.text).data == changed.data


def test_override_through_a_value_is_an_error() -> None:
    with pytest.raises(retx.ScenarioError, match="seed"):
        retx.Scenario.from_str(SMALL_SCENARIO).with_overrides({"seed.x": 1})


def test_from_toml_uses_the_files_folder_and_name() -> None:
    scenario = retx.Scenario.from_toml(EXAMPLES / "demo.toml")
    assert scenario.base_dir == EXAMPLES
    assert scenario.name == "demo"


def test_from_dict() -> None:
    scenario = retx.Scenario.from_dict({"name": "x", "topology": {"kind": "single-switch"}})
    assert scenario.data == {"name": "x", "topology": {"kind": "single-switch"}}


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(retx.ScenarioError, match="nope.toml: no such file"):
        retx.Scenario.from_toml(tmp_path / "nope.toml")
