"""docs/SCENARIO.md against the real schema: its annotated scenario shows every field's
default as `retx validate` fills it in, and every field the simulator knows is documented."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Iterator

import pytest

import retx

DOC = Path(__file__).resolve().parents[2] / "docs" / "SCENARIO.md"
# The few fields the doc's scenario sets to an example rather than the default (it says so).
EXAMPLES = ("name", "duration", "loss", "workload.")
# 10 ms: the shortest duration whose default sample_interval is the doc's 100us (a shorter
# run gets duration / 100; tests/python/test_plots_hold.py checks that).
MINIMAL = """\
name = "minimal"
duration = "10ms"
[topology]
kind = "single-switch"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "1MB" }]
"""
UNITS = {
    "ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0,
    "bps": 1.0, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12,
    "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3,
}
QUANTITY = re.compile(r"^(-?[0-9.]+(?:e-?[0-9]+)?)\s*([A-Za-z]+)$")


def doc_scenario() -> dict[str, Any]:
    """The first TOML block of the doc: the annotated scenario."""
    return tomllib.loads(DOC.read_text().split("```toml\n", 1)[1].split("```", 1)[0])


def resolved_defaults() -> dict[str, Any]:
    return tomllib.loads(retx.Scenario.from_str(MINIMAL).resolved())


def leaves(table: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(table, dict):
        for key, value in table.items():
            yield from leaves(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, table


def quantity(value: Any) -> Any:
    """A value in base units when it is a number with a unit ("64KiB" -> 65536.0), else as is."""
    if isinstance(value, str) and (m := QUANTITY.match(value)) and m.group(2) in UNITS:
        return float(m.group(1)) * UNITS[m.group(2)]
    return value


def same(doc: Any, default: Any) -> bool:
    doc, default = quantity(doc), quantity(default)
    if isinstance(doc, (int, float)) and isinstance(default, (int, float)) and not isinstance(doc, bool):
        return doc == pytest.approx(default, rel=1e-3)
    return doc == default


def test_the_annotated_scenario_shows_the_defaults() -> None:
    defaults = dict(leaves(resolved_defaults()))
    shown = dict(leaves(doc_scenario()))
    checked = [key for key in shown if not key.startswith(EXAMPLES)]
    assert len(checked) > 60  # not vacuous: most of the file is defaults
    wrong = {key: (shown[key], defaults.get(key, "<no such field>")) for key in checked
             if key not in defaults or not same(shown[key], defaults[key])}
    assert wrong == {}, "docs/SCENARIO.md shows (doc, real default): " + repr(wrong)


def test_every_field_is_documented() -> None:
    text = DOC.read_text()
    fields = [key for key, _ in leaves(resolved_defaults())]
    missing = [key for key in fields
               if not re.search(rf"(?<![\w-]){re.escape(key.rsplit('.', 1)[-1])}(?![\w-])", text)]
    assert missing == []


def test_the_unit_reader_of_this_test_is_right() -> None:
    assert same("64KiB", "65536B") and same("1000Mbps", "1Gbps") and same("0us", "0ps")
    assert not same("2us", "1us") and not same("1KB", "1KiB")


def test_the_transport_line_lists_every_registered_scheme_and_controller() -> None:
    # The names come from the registry itself (crates/retx/src/transport/schemes.rs), so a new
    # scheme that is not added to the annotated scenario's `[transport]` lines fails here.
    from retx import _native

    transport = DOC.read_text().split("[transport]\n", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r'"([a-z][a-z0-9-]*)"', transport))
    registered = _native.schemes()
    assert {"gbn", "xpass", "left"} <= set(registered["recovery"])
    assert {"dcqcn", "none", "dctcp-window"} <= set(registered["cc"])
    assert [name for name in registered["recovery"] if name not in listed] == []
    assert [name for name in registered["cc"] if name not in listed] == []
