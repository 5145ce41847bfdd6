"""Every reproduction's quick table and its claims table (claims.csv: the source's numbers, ours,
the tolerance and the verdict; see retx.reproduce.common), byte for byte against the ones stored
in tests/golden/reproduce/quick/ as NAME.csv and NAME.claims.csv (the full tables, too slow for a test run, are beside it and are
compared by hand after an engine change: see docs/TESTING.md). A change that moves a number
here must say why, then store the new table: RETX_BLESS=1 pytest tests/python/test_golden_reproductions.py.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from retx.reproduce import REPRODUCTIONS, stale_wall_time

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reproduce" / "quick"
# Reproductions that write no claims.csv yet (none: every one judges its claims,
# tests/python/test_claims.py).
PENDING: set[str] = set()


# ns3-crosscheck and htsim-crosscheck read inputs from outside the repository:
# tests/python/test_ns3_crosscheck.py, test_htsim_crosscheck.py.
@pytest.mark.parametrize("name", sorted(set(REPRODUCTIONS) - {"ns3-crosscheck", "htsim-crosscheck", "uet-htsim-crosscheck"}))
def test_quick_table_is_unchanged(name: str, tmp_path: Path) -> None:
    clock = time.monotonic()
    REPRODUCTIONS[name].run(tmp_path, quick=True)
    stale = stale_wall_time(name, True, time.monotonic() - clock)
    for written, stored in (("table.csv", f"{name}.csv"), ("claims.csv", f"{name}.claims.csv")):
        path = tmp_path / written
        if not path.exists() and written == "claims.csv" and name in PENDING:
            continue
        got = path.read_text()
        golden = GOLDEN / stored
        if os.environ.get("RETX_BLESS"):
            golden.write_text(got)
        want = golden.read_text()
        if got != want:
            diff = [f"  want: {w}\n  got:  {g}" for w, g in zip(want.splitlines(), got.splitlines()) if w != g]
            pytest.fail(f"{name} {written}: {len(diff)} row(s) moved\n" + "\n".join(diff[:5]))
    # Kept true: the --quick time `retx reproduce --help` announces (see retx.reproduce).
    assert stale is None, stale
