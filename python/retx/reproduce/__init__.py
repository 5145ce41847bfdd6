"""Registry of paper reproductions.

Each module exposes `run(out_dir: Path, quick: bool) -> polars.DataFrame`: it runs its grid,
writes table.parquet, table.csv and plot.png under out_dir and prints the table next to the
paper's numbers.
"""

from types import ModuleType

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
