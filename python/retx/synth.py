"""Synthesis of the RTL in `rtl/` with yosys (`make rtl`): each module in the configurations
below, through yosys's generic flow and `synth_xilinx` for the 7-series family, into one table
of resources (results/rtl/resources.parquet) that docs/HARDWARE.md reads beside `retx memory`
and the papers' claims.

Generic: coarse synthesis, memories kept as memories (counted in bits), the rest mapped to
yosys's internal gates and flip-flops. Xilinx 7-series (`synth_xilinx -family xc7`, e.g. an
Artix-7 xc7a100t): LUTs, flip-flops, LUTRAM, block RAM and DSP48 slices as yosys maps them,
before place and route.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import polars as pl

TARGETS = ("generic", "xc7")
GENERIC_SCRIPT = ("synth -top {top} -run begin:fine; opt -fast -full; techmap; opt -fast; "
                  "abc -fast; opt -fast; check")
XC7_SCRIPT = "synth_xilinx -family xc7 -top {top}"
# LUTs a LUTRAM primitive occupies (7-series: RAM32M/RAM64M are 4 LUTs of a SLICEM).
LUTRAM_LUTS = {"RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
               "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4}


@dataclass(frozen=True)
class Design:
    module: str
    label: str
    params: dict = field(default_factory=dict, hash=False)


# MELO at the paper's 1 Kb pool of 1-byte blocks with 16 and with 300 connections (its "~300
# concurrent connections"), so the per-connection slope shows beside the constant pool.
# STRIDE's two rate units for one connection (the arithmetic alone: Table 1's like-for-like)
# and with the 64 connections of the co-simulation (the same state memory in both). LEFT's
# dual-state pool at the slides' 2 Kb pool of 1-byte blocks with 3 loop registers of 800 bits
# (100 blocks), for 16 and 64 connections; its scheduler and the slides' 8 gather FIFOs (8
# packets each, the model's default), for 16 and 64 connections (a disorder degree each).
DESIGNS = [
    Design("melo_rx_bitmap", "melo-1Kb-16conn", {"POOL_BLOCKS": 128, "BLOCK_BITS": 8, "CONNS": 16}),
    Design("melo_rx_bitmap", "melo-1Kb-300conn", {"POOL_BLOCKS": 128, "BLOCK_BITS": 8, "CONNS": 300}),
    Design("stride_rate_shift", "stride-shift-1conn", {"CONNS": 1}),
    Design("stride_rate_muldiv", "stride-muldiv-1conn", {"CONNS": 1}),
    Design("stride_rate_shift", "stride-shift-64conn", {"CONNS": 64}),
    Design("stride_rate_muldiv", "stride-muldiv-64conn", {"CONNS": 64}),
    Design("left_pool", "left-2Kb-3reg-16conn", {"POOL_BLOCKS": 256, "BLOCK_BITS": 8, "REGS": 3, "REG_BLOCKS": 100, "CONNS": 16}),
    Design("left_pool", "left-2Kb-3reg-64conn", {"POOL_BLOCKS": 256, "BLOCK_BITS": 8, "REGS": 3, "REG_BLOCKS": 100, "CONNS": 64}),
    Design("left_gather", "left-gather-8fifo-16conn", {"FIFOS": 8, "DEPTH": 8, "CONNS": 16}),
    Design("left_gather", "left-gather-8fifo-64conn", {"FIFOS": 8, "DEPTH": 8, "CONNS": 64}),
]


class SynthError(Exception):
    pass


def yosys_available() -> bool:
    return shutil.which("yosys") is not None


def _counts(stat: dict, target: str) -> dict[str, float]:
    module = next(iter(stat["modules"].values()))
    cells: dict[str, int] = module.get("num_cells_by_type", {})
    row: dict[str, float] = {"cells": int(module.get("num_cells", 0))}
    if target == "xc7":
        row["lut"] = sum(n for c, n in cells.items() if c.startswith("LUT"))
        row["ff"] = sum(n for c, n in cells.items() if c in ("FDRE", "FDSE", "FDCE", "FDPE"))
        row["lutram"] = sum(n * LUTRAM_LUTS.get(c, 1) for c, n in cells.items() if c in LUTRAM_LUTS)
        row["bram36"] = cells.get("RAMB36E1", 0) + 0.5 * cells.get("RAMB18E1", 0)
        row["dsp"] = cells.get("DSP48E1", 0)
        row["carry4"] = cells.get("CARRY4", 0)
    else:
        row["ff"] = sum(n for c, n in cells.items() if "DFF" in c or "DLATCH" in c)
        row["logic_gates"] = sum(n for c, n in cells.items() if c.startswith("$_") and "DFF" not in c)
    return row


def synthesize(design: Design, target: str, rtl_dir: Path, work_dir: Path) -> dict[str, object]:
    """Runs yosys on one design for one target and returns its resource counts."""
    if not yosys_available():
        raise SynthError("yosys not found (apt install yosys)")
    work_dir.mkdir(parents=True, exist_ok=True)
    stat_file = work_dir / f"{design.label}.{target}.json"
    params = "; ".join(f"chparam -set {k} {v} {design.module}" for k, v in design.params.items())
    flow = (XC7_SCRIPT if target == "xc7" else GENERIC_SCRIPT).format(top=design.module)
    # Memory bits are counted on the elaborated design, before any flow maps memories away.
    mem_file = work_dir / f"{design.label}.{target}.memories.json"
    script = (f"read_verilog {rtl_dir / (design.module + '.v')}; {params}; hierarchy -top {design.module}; "
              f"proc; tee -q -o {mem_file} stat -json; {flow}; tee -q -o {stat_file} stat -json")
    start = time.monotonic()
    done = subprocess.run(["yosys", "-q", "-p", script], capture_output=True, text=True)
    if done.returncode != 0:
        raise SynthError(f"yosys failed on {design.label} ({target}): {(done.stderr or done.stdout).strip()[-300:]}")
    row: dict[str, object] = dict(_counts(json.loads(stat_file.read_text()), target))
    memories = next(iter(json.loads(mem_file.read_text())["modules"].values()))
    row["memory_bits"] = int(memories.get("num_memory_bits", 0))
    row.update(module=design.module, config=design.label, target=target,
               params=" ".join(f"{k}={v}" for k, v in design.params.items()),
               seconds=round(time.monotonic() - start, 1))
    return row


COLUMNS = ["module", "config", "params", "target", "lut", "ff", "lutram", "bram36", "dsp", "carry4",
           "logic_gates", "memory_bits", "cells", "seconds"]


def resource_table(rtl_dir: Path, work_dir: Path, designs: Optional[list[Design]] = None,
                   targets: tuple[str, ...] = TARGETS, progress=print) -> pl.DataFrame:
    rows = []
    for design in designs or DESIGNS:
        for target in targets:
            progress(f"yosys: {design.label} ({target}) ...")
            rows.append(synthesize(design, target, rtl_dir, work_dir))
    table = pl.DataFrame(rows)
    return table.select([c for c in COLUMNS if c in table.columns])


def main(argv: list[str]) -> int:
    """`python -m retx.synth RTL_DIR OUT_DIR`: writes OUT_DIR/resources.parquet, prints it."""
    from retx.table import format_table
    if len(argv) != 2:
        print("usage: python -m retx.synth RTL_DIR OUT_DIR", file=sys.stderr)
        return 2
    rtl_dir, out_dir = Path(argv[0]), Path(argv[1])
    try:
        table = resource_table(rtl_dir, out_dir / "yosys", progress=lambda m: print(m, file=sys.stderr))
    except SynthError as error:
        print(f"retx: error: {error}", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out_dir / "resources.parquet")
    for target in TARGETS:
        part = table.filter(pl.col("target") == target).drop("target")
        part = part.select([c for c in part.columns if part[c].null_count() < part.height])
        print(f"\n{target}:")
        print(format_table(part))
    print(f"\nwrote {out_dir / 'resources.parquet'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
