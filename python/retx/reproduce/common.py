"""What every reproduction writes: its table, and its claims with a verdict on each.

A reproduction states what its source (a paper, slides, a testbed's raw data, another
simulator's output) says as a list of `Claim`s, each holding the source's number, ours, a
tolerance and where the docs explain a miss; the verdict is computed from them, never written
by hand:

- `within`: |retx - source| is inside the tolerance (its edge counts as inside), or, for a
  source that states a bound, ours is on its side;
- `calibrated: SPEC, see REPRODUCTIONS.md § SECTION`: outside it, and a `retx calibrate` run
  (the spec named) settled the gap: the claim met under calibrated settings, or shown out of
  reach of any setting searched; the docs section reports which;
- `not reproduced: see REPRODUCTIONS.md § SECTION`: outside it, the reason in that section;
- `no source number`: the source gives no number (a qualitative statement; ours is context);
- `not in this grid`: we have no number (the grid, e.g. `--quick`'s, has no point for it).

A NaN of ours (measured, but undefined: no flow finished) is outside every tolerance.

How a reproduction adopts it (the pattern every module here follows):

    WHY = "melo-fig5a, Differences and why"      # its docs section: where misses are explained
    NAK_RULE = relative(0.2, "the NAK interval is not stated; +-20 % is what calibration spans")

    def claims(table: pl.DataFrame) -> list[Claim]:
        # a pure function of the table the run wrote, so the goldens can be re-judged
        return [Claim("go-back-N, % of max goodput at 0.1 % loss", 45.6, pct("gbn", 1e-3),
                      NAK_RULE, WHY, calibration=Calibration("calibrate-melo-fig5a.toml",
                                                             "melo-fig5a, Calibration"))]

    def run(out_dir, quick):
        ...
        save_table(table, out_dir)
        report_claims(claims(table), out_dir, quick)   # prints them, writes claims.csv/.parquet

`report_claims` prints the table (claim, source, retx, tolerance, verdict), writes it as
claims.parquet and claims.csv beside table.parquet, and with `--quick` names the claims the
quick grid leaves out. `tests/python/test_claims.py` holds every registered reproduction to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import polars as pl

from retx.table import format_table

CLAIMS_COLUMNS = ["claim", "source", "retx", "tolerance", "verdict"]
"""The columns of every claims table: what the source says, its number, ours, the tolerance and
the verdict."""

WITHIN = "within"
CALIBRATED = "calibrated"
NOT_REPRODUCED = "not reproduced"
NO_SOURCE_NUMBER = "no source number"
NOT_IN_GRID = "not in this grid"
DOCS = "REPRODUCTIONS.md"


def save_table(table: pl.DataFrame, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "table.parquet")
    table.write_csv(out_dir / "table.csv")


def number(value: object) -> float:
    """A polars aggregate (`.max()`, `.mean()`, ...) of a numeric column as a float; polars
    types these as any scalar, and an empty column's as None, which becomes NaN."""
    if value is None:
        return float("nan")
    if isinstance(value, (int, float)):
        return float(value)
    raise TypeError(f"expected a number, got {type(value).__name__}")


@dataclass(frozen=True)
class Tolerance:
    """How far ours may be from the source's number and still count as reproduced. `kind`:
    "relative" (`amount` times |source|), "absolute" (`amount` in the claim's unit), or, for a
    source that states a bound ("> 35 us", "at least 1.4x"), "at least" / "at most" (ours on
    that side of the source's number, `amount` 0). `why` is the one-line justification (seed
    noise measured, the source's own precision, a figure read by eye...)."""

    amount: float
    kind: str
    why: str

    def __post_init__(self) -> None:
        if self.kind not in ("relative", "absolute", "at least", "at most"):
            raise ValueError(f"unknown kind of tolerance {self.kind!r}")
        if not (self.amount >= 0 and math.isfinite(self.amount)):
            raise ValueError(f"a tolerance is a finite amount >= 0, not {self.amount}")
        if not self.why.strip():
            raise ValueError("a tolerance states why it is that wide")

    def bound(self, source: float) -> float:
        return self.amount * abs(source) if self.kind == "relative" else self.amount

    def __str__(self) -> str:
        if self.kind == "relative":
            return f"+-{self.amount * 100:g} %"
        if self.kind == "absolute":
            return f"+-{self.amount:g}"
        return ">= source" if self.kind == "at least" else "<= source"


def relative(fraction: float, why: str) -> Tolerance:
    """+-`fraction` of the source's number (0.2: +-20 %)."""
    return Tolerance(fraction, "relative", why)


def absolute(amount: float, why: str) -> Tolerance:
    """+-`amount` in the claim's own unit (what a relative tolerance cannot say near 0)."""
    return Tolerance(amount, "absolute", why)


def at_least(why: str) -> Tolerance:
    """The source states a lower bound: ours must reach it."""
    return Tolerance(0.0, "at least", why)


def at_most(why: str) -> Tolerance:
    """The source states an upper bound: ours must not exceed it."""
    return Tolerance(0.0, "at most", why)


@dataclass(frozen=True)
class Calibration:
    """A `retx calibrate` run that settled a gap: its spec (under examples/calibrate/) and the
    docs section that reports its verdict."""

    spec: str
    section: str


def _missing(value: Optional[float]) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def within(source: float, ours: float, tolerance: Tolerance) -> bool:
    """|ours - source| <= the tolerance's bound (or ours on the bound's side of it); a difference
    equal to the bound up to float rounding (1.1 - 1.0 against 10 % of 1.0) is inside, a NaN or
    infinite difference outside."""
    if not math.isfinite(ours - source):
        return False
    if tolerance.kind == "at least":
        return ours >= source
    if tolerance.kind == "at most":
        return ours <= source
    difference = abs(ours - source)
    bound = tolerance.bound(source)
    return difference <= bound or math.isclose(difference, bound, rel_tol=1e-9, abs_tol=1e-12)


@dataclass(frozen=True)
class Claim:
    """One number a source states, ours beside it, and what settles the comparison.

    `why` names the docs section (`NAME, Heading` of docs/REPRODUCTIONS.md) that explains a
    miss; `calibration`, when given, the calibration that settled it. `source` is None (or NaN)
    for a statement without a number; `retx` is None when our grid has no point for it."""

    claim: str
    source: Optional[float]
    retx: Optional[float]
    tolerance: Tolerance
    why: str
    calibration: Optional[Calibration] = None

    @property
    def verdict(self) -> str:
        if _missing(self.source):
            return NO_SOURCE_NUMBER
        if self.retx is None:
            return NOT_IN_GRID
        assert self.source is not None
        if within(self.source, self.retx, self.tolerance):
            return WITHIN
        if self.calibration is not None:
            return f"{CALIBRATED}: {self.calibration.spec}, see {DOCS} § {self.calibration.section}"
        return f"{NOT_REPRODUCED}: see {DOCS} § {self.why}"


def claims_table(claims: Sequence[Claim]) -> pl.DataFrame:
    """The source's numbers beside ours, one row per claim: claim, source, retx, tolerance and
    verdict (see the module's docstring)."""
    def num(value: Optional[float]) -> Optional[float]:
        return None if value is None else float(value)

    return pl.DataFrame(
        {"claim": [c.claim for c in claims], "source": [num(c.source) for c in claims],
         "retx": [num(c.retx) for c in claims], "tolerance": [str(c.tolerance) for c in claims],
         "verdict": [c.verdict for c in claims]},
        schema={"claim": pl.String, "source": pl.Float64, "retx": pl.Float64, "tolerance": pl.String,
                "verdict": pl.String},
    )


def left_out(claims: Sequence[Claim]) -> list[str]:
    """The claims a grid has no number of ours for."""
    return [c.claim for c in claims if c.verdict == NOT_IN_GRID]


def report_claims(claims: Sequence[Claim], out_dir: Path, quick: bool) -> pl.DataFrame:
    """Prints the claims table, writes it as claims.parquet and claims.csv under `out_dir`, and
    with `quick` says which claims the quick grid leaves out; returns the table."""
    table = claims_table(claims)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "claims.parquet")
    table.write_csv(out_dir / "claims.csv")
    print()
    print(format_table(table) if claims else "no claims: no source states a number this reproduction is judged by")
    missing = left_out(claims)
    if quick and missing:
        print(f"\n--quick leaves out {len(missing)} claim(s), run without --quick for them: " + "; ".join(missing))
    return table
