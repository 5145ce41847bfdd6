"""The verdict beside every reproduced number (issue 43 item 6): `retx.reproduce.common.Claim`'s
verdict logic at its edges, and every registered reproduction's claims table, judged on its
stored quick table (tests/golden/reproduce/quick/NAME.csv: no simulation runs here), with the
docs sections and calibration specs its verdicts point to."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import polars as pl
import pytest

from retx.reproduce import REPRODUCTIONS
from retx.reproduce.common import (CLAIMS_COLUMNS, NO_SOURCE_NUMBER, NOT_IN_GRID, WITHIN, Calibration, Claim,
                                   Tolerance, absolute, at_least, at_most, claims_table, left_out, relative,
                                   report_claims)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "reproduce" / "quick"
DOCS = ROOT / "docs" / "REPRODUCTIONS.md"
WHY = "melo-fig5a, Differences and why"
TEN_PCT = relative(0.1, "test")
ONE = absolute(1.0, "test")

# Being rewritten on another branch (issue 43 items 1-3); each is held to the same checks as
# soon as its module defines `claims`.
PENDING: set[str] = set()


def verdict(source, retx, tolerance=TEN_PCT, calibration=None) -> str:
    return Claim("c", source, retx, tolerance, WHY, calibration).verdict


@pytest.mark.parametrize("retx", [1.1, 0.9, 1.0, 1.0999999])
def test_relative_tolerance_includes_its_edge(retx: float) -> None:
    # 1.1 - 1.0 is 0.10000000000000009 in floats: still the edge, still inside.
    assert verdict(1.0, retx) == WITHIN


@pytest.mark.parametrize("retx", [1.1000001, 0.8999999, -1.0])
def test_relative_tolerance_excludes_beyond_its_edge(retx: float) -> None:
    assert verdict(1.0, retx) == f"not reproduced: see REPRODUCTIONS.md § {WHY}"


def test_relative_tolerance_scales_with_the_source_and_its_magnitude() -> None:
    assert verdict(-50.0, -55.0) == WITHIN  # 10 % of |source|
    assert verdict(-50.0, -55.1).startswith("not reproduced")
    assert verdict(1000.0, 1099.0) == WITHIN
    # A relative tolerance of a zero source admits only zero: use an absolute one near 0.
    assert verdict(0.0, 0.0) == WITHIN
    assert verdict(0.0, 1e-9).startswith("not reproduced")
    assert verdict(0.0, 0.9, ONE) == WITHIN


def test_absolute_tolerance_is_in_the_claims_unit() -> None:
    assert verdict(45.6, 46.6, ONE) == WITHIN
    assert verdict(45.6, 44.6, ONE) == WITHIN
    assert verdict(45.6, 46.61, ONE).startswith("not reproduced")
    assert verdict(0.3, 0.3, absolute(0.0, "exact")) == WITHIN
    assert verdict(0.0, 1.0, absolute(0.0, "exact")).startswith("not reproduced")


def test_one_sided_tolerances() -> None:
    assert verdict(35.0, 35.0, at_least("bound")) == WITHIN
    assert verdict(35.0, 200.0, at_least("bound")) == WITHIN
    assert verdict(35.0, 34.9, at_least("bound")).startswith("not reproduced")
    assert verdict(35.0, 35.0, at_most("bound")) == WITHIN
    assert verdict(35.0, 35.1, at_most("bound")).startswith("not reproduced")


@pytest.mark.parametrize("source", [None, math.nan])
def test_no_source_number_is_no_verdict(source) -> None:
    assert verdict(source, 1.0) == NO_SOURCE_NUMBER
    assert verdict(source, None) == NO_SOURCE_NUMBER


def test_missing_and_undefined_numbers_of_ours() -> None:
    # None: the grid has no point for the claim (e.g. --quick's); NaN: measured but undefined
    # (no flow finished), which is a miss.
    assert verdict(1.0, None) == NOT_IN_GRID
    assert verdict(1.0, math.nan).startswith("not reproduced")
    assert verdict(1.0, math.inf).startswith("not reproduced")
    assert verdict(1.0, math.nan, at_least("bound")).startswith("not reproduced")


def test_calibration_settles_a_miss_but_not_a_match() -> None:
    spec = Calibration("examples/calibrate/calibrate-melo-fig5a.toml", "melo-fig5b, Calibration")
    assert verdict(45.6, 45.0, calibration=spec) == WITHIN
    assert verdict(45.6, 20.0, calibration=spec) == (
        "calibrated: examples/calibrate/calibrate-melo-fig5a.toml, see REPRODUCTIONS.md § melo-fig5b, Calibration")
    assert verdict(45.6, None, calibration=spec) == NOT_IN_GRID


def test_a_tolerance_states_its_size_and_why() -> None:
    with pytest.raises(ValueError):
        relative(-0.1, "negative")
    with pytest.raises(ValueError):
        absolute(math.nan, "nan")
    with pytest.raises(ValueError):
        absolute(1.0, "  ")
    with pytest.raises(ValueError):
        Tolerance(1.0, "roughly", "unknown kind")
    assert [str(t) for t in (relative(0.2, "x"), absolute(0.05, "x"), at_least("x"), at_most("x"))] == [
        "+-20 %", "+-0.05", ">= source", "<= source"]


def test_claims_table_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = [Claim("a", 1.0, 1.05, TEN_PCT, WHY), Claim("b", 2, None, ONE, WHY), Claim("c", None, 3.0, ONE, WHY)]
    table = claims_table(claims)
    assert table.columns == CLAIMS_COLUMNS
    assert table.dtypes == [pl.String, pl.Float64, pl.Float64, pl.String, pl.String]
    assert table["verdict"].to_list() == [WITHIN, NOT_IN_GRID, NO_SOURCE_NUMBER]
    assert left_out(claims) == ["b"]
    report_claims(claims, tmp_path, quick=True)
    out = capsys.readouterr().out
    assert "--quick leaves out 1 claim(s), run without --quick for them: b" in out
    assert re.search(r"^claim\s+source\s+retx\s+tolerance\s+verdict$", out, re.M)
    assert pl.read_csv(tmp_path / "claims.csv").columns == CLAIMS_COLUMNS
    assert pl.read_parquet(tmp_path / "claims.parquet").equals(table)
    report_claims(claims, tmp_path, quick=False)
    assert "leaves out" not in capsys.readouterr().out


def judged(name: str) -> list[Claim]:
    """NAME's claims, computed from its stored quick table (stride-testbed's drift claims from
    its stored quick claims, as `retx.reproduce.verdicts` does: the drift run is not in its table)."""
    from retx.reproduce import verdicts

    return verdicts.judged(name, GOLDEN / f"{name}.csv")


def docs_sections() -> dict[str, str]:
    """docs/REPRODUCTIONS.md by `## NAME` heading: NAME -> its text."""
    sections: dict[str, str] = {}
    name = None
    for line in DOCS.read_text().splitlines():
        if line.startswith("## "):
            name = re.split(r"[\s(—]", line[3:].strip())[0]
            sections[name] = ""
        elif name is not None:
            sections[name] += line + "\n"
    return sections


def assert_points_to_docs(pointer: str, sections: dict[str, str]) -> None:
    """`NAME` or `NAME, Heading`: a `## NAME` section, holding a `**Heading...` paragraph."""
    name, _, heading = pointer.partition(", ")
    assert name in sections, f"{pointer}: no section ## {name} in docs/REPRODUCTIONS.md"
    if heading:
        assert f"**{heading}" in sections[name], f"{pointer}: no paragraph **{heading}... in ## {name}"


@pytest.mark.parametrize("name", sorted(REPRODUCTIONS))
def test_every_reproduction_judges_its_claims(name: str) -> None:
    module = REPRODUCTIONS[name]
    if name in PENDING and not hasattr(module, "claims"):
        pytest.skip(f"{name} is being rewritten (issue 43 items 1-3); it adopts retx.reproduce.common.Claim there")
    claims = judged(name)
    table = claims_table(claims)
    assert table.columns == CLAIMS_COLUMNS
    sections = docs_sections()
    for claim in claims:
        assert claim.tolerance.why.strip(), claim
        assert_points_to_docs(claim.why, sections)
        if claim.calibration is not None:
            assert (ROOT / claim.calibration.spec).is_file(), claim.calibration.spec
            assert_points_to_docs(claim.calibration.section, sections)
    allowed = ("within", "calibrated: ", "not reproduced: see ", NO_SOURCE_NUMBER, NOT_IN_GRID)
    assert all(v.startswith(allowed) for v in table["verdict"]), table
    # The stored quick claims are what this computes (the golden test checks they are what a
    # run writes).
    stored = GOLDEN / f"{name}.claims.csv"
    if os.environ.get("RETX_BLESS"):  # also for ns3- and htsim-crosscheck, whose inputs may be absent
        table.write_csv(stored)
    assert stored.is_file(), f"{stored} missing: RETX_BLESS=1 pytest tests/python/test_golden_reproductions.py"
    assert pl.read_csv(stored, schema=dict(zip(table.columns, table.dtypes))).equals(table)


def test_docs_carry_every_verdict_table() -> None:
    """docs/REPRODUCTIONS.md holds each judged reproduction's verdicts, as the stored tables give
    them (`python -m retx.reproduce.verdicts` rewrites them)."""
    from retx.reproduce import verdicts

    text = DOCS.read_text()
    blocks = {m["name"] for m in verdicts.BLOCK.finditer(text)}
    assert blocks == {name for name in REPRODUCTIONS if hasattr(REPRODUCTIONS[name], "claims")}
    assert verdicts.stale_blocks(text) == [], "run python -m retx.reproduce.verdicts"
