"""The verdict tables of docs/REPRODUCTIONS.md, computed from the stored tables.

Each reproduction's section holds, between `<!-- verdicts:NAME -->` and `<!-- /verdicts -->`,
its claims judged on the full grid's stored table (tests/golden/reproduce/NAME.csv) beside the
quick grid's (tests/golden/reproduce/quick/NAME.claims.csv, what `--quick` prints and writes).
`python -m retx.reproduce.verdicts` rewrites those blocks; tests/python/test_claims.py fails when
they drift from the stored tables. Numbers are as `retx reproduce` prints them.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import polars as pl

from retx.reproduce import REPRODUCTIONS
from retx.reproduce.common import Claim
from retx.table import format_value

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "REPRODUCTIONS.md"
GOLDEN = ROOT / "tests" / "golden" / "reproduce"
BLOCK = re.compile(r"<!-- verdicts:(?P<name>[a-z0-9-]+) -->\n.*?<!-- /verdicts -->", re.S)


def judged(name: str, table_csv: Path) -> list[Claim]:
    """NAME's claims computed from a stored table. stride-testbed's Fig. 8 claims come from its
    drift run, which is the same in both grids: their numbers are taken from the stored quick
    claims."""
    module = REPRODUCTIONS[name]
    table = pl.read_csv(table_csv)
    if len(inspect.signature(module.claims).parameters) == 1:
        return module.claims(table)
    quick = pl.read_csv(GOLDEN / "quick" / f"{name}.claims.csv")
    drift = dict(zip(quick["claim"], quick["retx"]))
    return module.claims(table, {"stride_stt_max_dev_from_first": drift["Fig. 8a: max |STT(t)/STT(1) - 1|"],
                                 "stride_stt_max_dev_step": drift["Fig. 8b: max |STT(t)/STT(t+1) - 1|"]})


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(name: str) -> str:
    """The markdown block for NAME (markers included)."""
    full_csv = GOLDEN / f"{name}.csv"
    quick_csv = GOLDEN / "quick" / f"{name}.csv"
    quick = judged(name, quick_csv)
    head = [f"<!-- verdicts:{name} -->"]
    if not quick:
        head.append("**Verdicts:** none: no source states a number this reproduction is judged by.")
        return "\n".join(head + ["<!-- /verdicts -->"])
    if full_csv.exists():
        full = judged(name, full_csv)
        head.append(f"**Verdicts** (`claims.csv`; full grid: `tests/golden/reproduce/{name}.csv` judged, "
                    f"`--quick`: `quick/{name}.claims.csv`):")
        head.append("")
        head.append("| claim | source | retx | tolerance | verdict | retx `--quick` | verdict `--quick` |")
        head.append("|---|---|---|---|---|---|---|")
        for f, q in zip(full, quick):
            head.append(f"| {_cell(f.claim)} | {format_value(f.source)} | {format_value(f.retx)} | {f.tolerance} | "
                        f"{_cell(f.verdict)} | {format_value(q.retx)} | {_cell(q.verdict)} |")
    else:
        head.append(f"**Verdicts** (`claims.csv`; `--quick` runs the full grid: `quick/{name}.claims.csv`):")
        head.append("")
        head.append("| claim | source | retx | tolerance | verdict |")
        head.append("|---|---|---|---|---|")
        for q in quick:
            head.append(f"| {_cell(q.claim)} | {format_value(q.source)} | {format_value(q.retx)} | {q.tolerance} | "
                        f"{_cell(q.verdict)} |")
    return "\n".join(head + ["<!-- /verdicts -->"])


def stale_blocks(text: str) -> list[str]:
    """The names whose block in `text` differs from what `render` gives."""
    return [m["name"] for m in BLOCK.finditer(text) if m.group(0) != render(m["name"])]


def rewrite(text: str) -> str:
    return BLOCK.sub(lambda m: render(m["name"]), text)


if __name__ == "__main__":
    DOCS.write_text(rewrite(DOCS.read_text()))
    print(f"rewrote the verdict blocks of {DOCS}", file=sys.stderr)
