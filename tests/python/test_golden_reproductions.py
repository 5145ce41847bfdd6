"""Every reproduction's quick table, byte for byte against the one stored in
tests/golden/reproduce/quick/ (the full tables, too slow for a test run, are beside it and are
compared by hand after an engine change: see docs/TESTING.md). A change that moves a number
here must say why, then store the new table: RETX_BLESS=1 pytest tests/python/test_golden_reproductions.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retx.reproduce import REPRODUCTIONS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reproduce" / "quick"


# ns3-crosscheck reads inputs from outside the repository: tests/python/test_ns3_crosscheck.py.
@pytest.mark.parametrize("name", sorted(set(REPRODUCTIONS) - {"ns3-crosscheck"}))
def test_quick_table_is_unchanged(name: str, tmp_path: Path) -> None:
    REPRODUCTIONS[name].run(tmp_path, quick=True)
    got = (tmp_path / "table.csv").read_text()
    golden = GOLDEN / f"{name}.csv"
    if os.environ.get("RETX_BLESS"):
        golden.write_text(got)
    want = golden.read_text()
    if got != want:
        diff = [f"  want: {w}\n  got:  {g}" for w, g in zip(want.splitlines(), got.splitlines()) if w != g]
        pytest.fail(f"{name}: {len(diff)} row(s) moved\n" + "\n".join(diff[:5]))
