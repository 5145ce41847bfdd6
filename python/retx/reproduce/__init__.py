"""Registry of paper reproductions.

Each module exposes `run(out_dir: Path, quick: bool) -> polars.DataFrame`: it runs its grid,
writes table.parquet, table.csv and plot.png under out_dir and prints the table next to the
paper's numbers. `run` here runs one by name and records where its numbers came from.
"""

import hashlib
import inspect
import json
import time
from pathlib import Path
from types import ModuleType

import polars as pl

from retx.provenance import PROVENANCE_FILE, provenance_without_scenario, utc_now, write_parquet

from retx.reproduce import (cc_compare, gbone_fct, gbone_goodput, hpcc_micro, melo_fig5a, melo_fig5b, melo_fig6a,
                            melo_fig6b, ns3_crosscheck, stride_fattree, stride_segment,
                            stride_testbed)

REPRODUCTIONS: dict[str, ModuleType] = {
    "melo-fig5a": melo_fig5a,
    "melo-fig5b": melo_fig5b,
    "melo-fig6a": melo_fig6a,
    "melo-fig6b": melo_fig6b,
    "gbone-fct": gbone_fct,
    "gbone-goodput": gbone_goodput,
    "ns3-crosscheck": ns3_crosscheck,
    "hpcc-micro": hpcc_micro,
    "cc-compare": cc_compare,
    "stride-fattree": stride_fattree,
    "stride-segment": stride_segment,
    "stride-testbed": stride_testbed,
}


class UnknownReproduction(LookupError):
    def __str__(self) -> str:
        return f"unknown reproduction {self.args[0]!r} (known: {', '.join(REPRODUCTIONS)})"


def lookup(name: str) -> ModuleType:
    try:
        return REPRODUCTIONS[name]
    except KeyError:
        raise UnknownReproduction(name) from None


def run(name: str, out_dir: Path, quick: bool) -> pl.DataFrame:
    """Reproduce `name` into `out_dir`, then record its provenance there: provenance.json, and
    the same record as key-value metadata in every Parquet file the reproduction wrote. A
    reproduction is a grid of scenarios built in code, so instead of a scenario hash the record
    holds the SHA-256 of the module that defines the grid (`source_hash`)."""
    module = lookup(name)
    started = utc_now()
    clock = time.monotonic()
    table = module.run(out_dir, quick)
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
