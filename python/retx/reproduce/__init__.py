"""Registry of paper reproductions.

Each module exposes `run(out_dir: Path, quick: bool) -> polars.DataFrame`: it runs its grid,
writes table.parquet, table.csv and plot.png under out_dir and prints the table next to the
paper's numbers. `run` here runs one by name and records where its numbers came from.

Each entry also announces what the reproduction costs: its typical wall time on 2 cores, full
grid and `--quick`, which `retx reproduce --help` lists and docs/REPRODUCTIONS.md repeats. The
tests that run a quick grid hold the announcement to the time they measure
(`stale_wall_time`), so it cannot drift far from the truth unnoticed.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterator, Mapping

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Reproduction:
    """A registered reproduction: its module's name (in this package), one line on what it
    reproduces, and its typical wall time in seconds on 2 cores (what `reproduce.run` records
    as `wall_seconds`), full grid and `--quick`. The module is imported when first asked for
    (`module`), so the listing `retx reproduce --help` prints imports none of them."""

    module_name: str
    about: str
    full_seconds: float
    quick_seconds: float

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module_name}")


# The wall times were measured with `retx reproduce NAME [--quick]` on the 2-core development
# machine at commit 86f4c4f (2026-11-26; the quick grids twice, the second time a few commits
# later) while other work shared it (load average 0.5 to 4.7: these are typical, not best,
# times). Every one was measured, none estimated; ns3-crosscheck and hpcc-micro have no smaller
# grid, so their --quick costs what the full run does. docs/REPRODUCTIONS.md has the measured
# seconds. A change that makes a grid much slower or faster must update its line here and there:
# a test that times the quick grid fails otherwise (`stale_wall_time`). collective-compare was
# measured later the same day (after 2d52825) beside a cargo-mutants build (load 2 to 5.5): full
# 120 s (its module's run) and 178 s (`retx reproduce`), quick 11.4 and 12.5 s (5 s at load 1.2).
# Its UET, LEFT and permutation rows (issue 44, item 7) made the quick grid 84 runs: 35.9 and
# 37.5 s at load 3-4.6 (2026-12-07), when the 44-run grid before them took 28.5 s, so the
# announced quick time is scaled from the earlier 8 s by that ratio (1.3): 11 s. The full grid
# (336 runs) took 574 s then; over the quick grid's loading at the time (3.3x its 11 s), 180 s.
# aeolus-incast was measured at the testbed rewrite (issue 43, load ~3): full 3.1 s, quick 1.2 s.
CATALOGUE: dict[str, Reproduction] = {
    "melo-fig5a": Reproduction("melo_fig5a", "MELO Fig. 5a: one flow's goodput vs. loss rate", 12, 1),
    "melo-fig5b": Reproduction("melo_fig5b", "MELO Fig. 5b: p99 FCT under load, lossy spine", 30, 2),
    "melo-fig6a": Reproduction("melo_fig6a", "MELO Fig. 6a: CPU cost of reorder copying", 1, 1),
    "melo-fig6b": Reproduction("melo_fig6b", "MELO Fig. 6b: bits pool usage vs. connections", 2, 1),
    "gbone-fct": Reproduction("gbone_fct", "Go-Back-ONE Figs. 9-10: FCT slowdown over a lossy WAN", 10, 2),
    "gbone-goodput": Reproduction("gbone_goodput", "Go-Back-ONE Fig. 10: goodput over time, 10 % loss", 2, 1),
    "ns3-crosscheck": Reproduction("ns3_crosscheck", "retx beside HPCC's ns-3 on its own input", 20, 20),
    "htsim-crosscheck": Reproduction("htsim_crosscheck", "NDP: retx beside htsim_ndp on its own inputs", 10, 10),
    "hpcc-micro": Reproduction("hpcc_micro", "HPCC §5.2 micro-benchmarks: DCQCN vs. HPCC", 1, 1),
    "cc-compare": Reproduction("cc_compare", "HPCC §5.3: HPCC, DCQCN, TIMELY, DCTCP on hpcc-320", 600, 10),
    "stride-fattree": Reproduction("stride_fattree", "STRIDE Fig. 9: FCT per size on a 256-host fat-tree", 90, 2),
    "stride-segment": Reproduction("stride_segment", "STRIDE Fig. 5: time per byte vs. ACK segment size", 20, 2),
    "stride-testbed": Reproduction("stride_testbed", "STRIDE Figs. 6-8: the two-switch testbed", 1, 1),
    "collective-compare": Reproduction("collective_compare", "Ring all-reduce, all-to-all, permutation: recovery x ECMP/spray (UET, LEFT, NDP), loss",
                                       180, 11),
    "aeolus-incast": Reproduction("aeolus_incast", "Aeolus §5 testbed: the authors' 70-message incast, their Homa ± Aeolus, ExpressPass", 4, 2),
    "aeolus-threshold": Reproduction("aeolus_threshold", "Aeolus: the selective-drop threshold, WRED vs. ECN codepoint", 22, 1),
    "aeolus-workloads": Reproduction("aeolus_workloads", "Aeolus §5: four workloads, Homa ± Aeolus (one queue too), NDP ± Aeolus, ExpressPass ± Aeolus", 180, 30),
    "left-fct": Reproduction("left_fct", "LEFT: FCT on a 72-host dragonfly, per-flow/packet/flowlet ± LEFT", 75, 3),
    "left-fpga": Reproduction("left_fpga", "LEFT's FPGA setup: throughput vs. out-of-order share, processing rate", 1, 1),
    "left-memory": Reproduction("left_memory", "LEFT: on-chip bytes beside IRN's bitmaps (retx memory)", 1, 1),
    "left-rtt-ratio": Reproduction("left_rtt_ratio", "LEFT: throughput over two paths 1x-32x apart, LEFT/LEFT-/MELO+", 5, 1),
    "left-sensitivity": Reproduction("left_sensitivity", "LEFT: its headlines against block, registers, FIFOs, threshold", 83, 2),
    "uet-htsim-crosscheck": Reproduction("uet_htsim_crosscheck", "UET: retx beside uet-htsim on its validation experiments, and uet-htsim beside itself at other seeds", 150, 4),
}

class _Modules(Mapping[str, ModuleType]):
    """{name: module} of every reproduction, each module imported when it is looked up."""

    def __getitem__(self, name: str) -> ModuleType:
        return CATALOGUE[name].module

    def __iter__(self) -> Iterator[str]:
        return iter(CATALOGUE)

    def __len__(self) -> int:
        return len(CATALOGUE)


REPRODUCTIONS: Mapping[str, ModuleType] = _Modules()


def _duration(seconds: float) -> str:
    """'~12 s', '~1.5 min', '~10 min': whole seconds below a minute (at least 1), half minutes above."""
    if seconds < 60:
        return f"~{max(1, round(seconds))} s"
    return f"~{round(seconds / 30) / 2:g} min"


def wall_time(name: str) -> str:
    """The announced cost of `name`, e.g. '~10 min full, ~10 s --quick (2 cores)'."""
    entry = entry_of(name)
    return f"{_duration(entry.full_seconds)} full, {_duration(entry.quick_seconds)} --quick (2 cores)"


def listing() -> str:
    """Every reproduction: its name and what it reproduces, then its announced wall time."""
    width = max(len(name) for name in CATALOGUE)
    lines = []
    for name, entry in CATALOGUE.items():
        lines.append(f"{name.ljust(width)}  {entry.about}")
        lines.append(f"{''.ljust(width)}  {wall_time(name)}")
    return "\n".join(lines)


# How far a measured quick run may stray from its announcement before the announcement counts
# as stale. The tests run on 2 cores that other jobs share (a build beside them doubles or
# triples wall times: stride-fattree's full grid took 64 s alone and 190 s beside a busy core),
# so "too slow" is generous: over SLOW_FACTOR times the announcement, and a sub-second grid is
# held to 2 s (MIN_HELD_SECONDS) rather than its rounded ~1 s, since start-up and scheduling
# noise of a second or two must not fail a test. "Too pessimistic" is over PESSIMISTIC_FACTOR
# times what was measured, a measurement under 1 s counting as 1 s (announcements never go
# below ~1 s): a loaded machine only makes runs slower, so that side needs no more room.
SLOW_FACTOR = 4.0
MIN_HELD_SECONDS = 2.0
PESSIMISTIC_FACTOR = 10.0


def stale_wall_time(name: str, quick: bool, wall_seconds: float) -> str | None:
    """Why the announced wall time of `name` (full or quick) disagrees with `wall_seconds`, a
    measured run of it; None when it does not (within the factors above)."""
    entry = entry_of(name)
    announced = entry.quick_seconds if quick else entry.full_seconds
    grid = "--quick" if quick else "full"
    fix = "measure it again and update it in retx.reproduce.CATALOGUE and docs/REPRODUCTIONS.md"
    held = max(announced, MIN_HELD_SECONDS)
    if wall_seconds > SLOW_FACTOR * held:
        floor = f" (held to {held:g} s)" if held > announced else ""
        return f"{name} {grid} took {wall_seconds:.1f} s, over {SLOW_FACTOR:g}x the {announced:g} s announced{floor}: {fix}"
    if announced > PESSIMISTIC_FACTOR * max(wall_seconds, 1.0):
        return f"{name} {grid} took {wall_seconds:.1f} s, under 1/{PESSIMISTIC_FACTOR:g} of the {announced:g} s announced: {fix}"
    return None


# Other names a reproduction answers to: issue 44 asks for UET's as `retx reproduce uet-validation`.
ALIASES: dict[str, str] = {"uet-validation": "uet-htsim-crosscheck"}


def canonical(name: str) -> str:
    """`name`, or the reproduction it is another name of."""
    return ALIASES.get(name, name)


class UnknownReproduction(LookupError):
    def __str__(self) -> str:
        return f"unknown reproduction {self.args[0]!r} (known: {', '.join(REPRODUCTIONS)})"


def entry_of(name: str) -> Reproduction:
    try:
        return CATALOGUE[canonical(name)]
    except KeyError:
        raise UnknownReproduction(name) from None


def lookup(name: str) -> ModuleType:
    return entry_of(name).module


def run(name: str, out_dir: Path, quick: bool, progress: bool = True) -> pl.DataFrame:
    """Reproduce `name` into `out_dir`, then record its provenance there: provenance.json, and
    the same record as key-value metadata in every Parquet file the reproduction wrote. A
    reproduction is a grid of scenarios built in code, so instead of a scenario hash the record
    holds the SHA-256 of the module that defines the grid (`source_hash`).

    With `progress`, stderr says what runs and its announced wall time, then its runs' progress
    (`retx.progress`, each bar named after the reproduction) and the time it took; without, the
    runs show nothing (the table is still printed)."""
    import polars as pl

    from retx.progress import labelled, quiet
    from retx.provenance import PROVENANCE_FILE, provenance_without_scenario, utc_now, write_parquet

    name = canonical(name)
    module = lookup(name)
    started = utc_now()
    clock = time.monotonic()
    if progress:
        grid = "--quick" if quick else "full grid"
        print(f"{name} ({grid}): {entry_of(name).about}; typically {wall_time(name)}", file=sys.stderr)
    with labelled(name), quiet(not progress):
        table = module.run(out_dir, quick)
    if progress:
        print(f"{name}: done in {time.monotonic() - clock:.1f} s", file=sys.stderr)
    source = inspect.getsource(module).encode("utf-8")
    record = {
        **provenance_without_scenario(started),
        "reproduction": name,
        "quick": quick,
        "source_hash": hashlib.sha256(source).hexdigest()[:12],
        "wall_seconds": round(time.monotonic() - clock, 3),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / PROVENANCE_FILE).write_text(json.dumps(record, indent=2) + "\n")
    for parquet in sorted(out_dir.glob("*.parquet")):
        write_parquet(pl.read_parquet(parquet), parquet, record)
    return table
