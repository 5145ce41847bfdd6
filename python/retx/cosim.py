"""Lockstep co-simulation of the RTL in `rtl/` against retx's models: the operations of a trace
(`retx trace`, retx.hw_trace) go through the module under Icarus Verilog in order (MELO's and
LEFT's scheduler/gather FIFOs' back to back with a valid/ready handshake, STRIDE's one at a time), and every operation's
outputs are compared with the model's; the first difference is reported with its operation
index.

The testbenches (rtl/tb/) read the operations with $fscanf and write one line of outputs per
operation, in the trace's column order, followed by the clocks it took (MELO: from its
acceptance to the unit's next in_ready, i.e. its initiation interval).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from retx.hw_trace import Trace

# The configuration line of the STRIDE testbench, in its order.
STRIDE_CONFIG = ["alpha_shift", "beta", "omega_shift", "t_low", "t_high", "k", "min_rate",
                 "normalizer", "base_stt"]
STRIDE_VARIANTS = ("shift", "muldiv")


class CosimError(Exception):
    """The simulator is missing or failed (not a divergence)."""


@dataclass
class Divergence:
    index: int
    column: str
    expected: int
    got: int

    def __str__(self) -> str:
        return f"operation {self.index}: {self.column} is {self.got} in the RTL, {self.expected} in the model"


@dataclass
class CosimResult:
    ops: int
    divergence: Optional[Divergence]
    cycles: list[int]

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.ops > 0


def iverilog_available() -> bool:
    return shutil.which("iverilog") is not None and shutil.which("vvp") is not None


def _run(cmd: Sequence[str]) -> None:
    done = subprocess.run(list(cmd), capture_output=True, text=True)
    if done.returncode != 0:
        raise CosimError(f"{cmd[0]} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")


def _sources(trace: Trace, rtl_dir: Path, variant: str) -> tuple[list[Path], str, list[str], str]:
    """(sources, testbench module, its parameters, operations text) for a trace."""
    if trace.kind == "melo-rx":
        p = trace.params
        params = [f"POOL_BLOCKS={p['pool_blocks']}", f"BLOCK_BITS={p['block_bits']}",
                  f"CONNS={max(2, trace.conns)}", f"PSN_W={p['psn_bits']}", f"HOLES={p['nack_holes']}"]
        ops = "".join(f"{r[0]} {r[1]}\n" for r in trace.rows)
        return [rtl_dir / "tb/melo_rx_bitmap_tb.v", rtl_dir / "melo_rx_bitmap.v"], "melo_rx_bitmap_tb", params, ops
    if trace.kind == "stride-rate":
        if variant not in STRIDE_VARIANTS:
            raise CosimError(f"STRIDE variant {variant!r} is not one of {', '.join(STRIDE_VARIANTS)}")
        config = " ".join(str(trace.params[k]) for k in STRIDE_CONFIG)
        ops = config + "\n" + "".join(f"{r[0]} {r[1]} {r[2]}\n" for r in trace.rows)
        return ([rtl_dir / "tb/stride_rate_tb.v", rtl_dir / f"stride_rate_{variant}.v"], "stride_rate_tb",
                [f"CONNS={max(2, trace.conns)}"], ops)
    if trace.kind == "left-gather":
        p = trace.params
        conns = 1 << max(1, trace.conns - 1).bit_length()
        params = [f"FIFOS={p['fifos']}", f"DEPTH={p['gather_packets']}", f"VARIANT={p['variant']}",
                  f"THRESHOLD={p['disorder_threshold']}", f"CONN_THRESHOLD={p['connection_threshold']}",
                  f"TIMEOUT={p['gather_timeout']}", f"CONNS={max(2, conns)}", f"MAX_OPS={max(1, len(trace.rows))}"]
        ops = "".join(" ".join(str(x) for x in r[:6]) + "\n" for r in trace.rows)
        return [rtl_dir / "tb/left_gather_tb.v", rtl_dir / "left_gather.v"], "left_gather_tb", params, ops
    raise CosimError(f"no RTL for a {trace.kind!r} trace")


def cosim(trace: Trace, rtl_dir: Path, work_dir: Path, variant: str = "shift",
          defines: Sequence[str] = ()) -> CosimResult:
    """Simulates `trace`'s operations on its module (`variant` picks STRIDE's rate unit;
    `defines` are Verilog macros, e.g. a planted bug) and compares every output."""
    if not iverilog_available():
        raise CosimError("iverilog/vvp not found (apt install iverilog)")
    sources, top, params, ops_text = _sources(trace, rtl_dir, variant)
    work_dir.mkdir(parents=True, exist_ok=True)
    ops_file, out_file, binary = work_dir / "ops.txt", work_dir / "out.txt", work_dir / "sim.vvp"
    ops_file.write_text(ops_text)
    cmd = ["iverilog", "-g2005", "-o", str(binary), "-s", top]
    cmd += [f"-P{top}.{p}" for p in params]
    if variant == "muldiv":
        cmd.append("-DSTRIDE_MULDIV")
    cmd += [f"-D{d}" for d in defines]
    _run(cmd + [str(s) for s in sources])
    _run(["vvp", "-n", str(binary), f"+ops={ops_file}", f"+out={out_file}"])
    got = [[int(x) for x in line.split()] for line in out_file.read_text().splitlines() if line.strip()]
    cycles = [row[-1] for row in got]
    width = len(trace.columns)
    for i, (want, have) in enumerate(zip(trace.rows, got)):
        if have[:width] != want:
            col = next(k for k in range(width) if have[k] != want[k])
            return CosimResult(len(got), Divergence(i, trace.columns[col], want[col], have[col]), cycles)
    if len(got) != len(trace.rows):
        return CosimResult(len(got), Divergence(len(got), "ops", len(trace.rows), len(got)), cycles)
    return CosimResult(len(got), None, cycles)
