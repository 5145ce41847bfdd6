"""On-chip memory of each loss recovery scheme (MELO §3.2.3-3.2.4), as a polars table."""

from __future__ import annotations

import polars as pl

from retx import _native, checked
from retx.results import frame


def memory_table(bandwidth: str = "100Gbps", rtt: str = "200us", mtu: int = 1024,
                 connections: int = 300, pool_bits: int = 1024, block_bits: int = 8) -> pl.DataFrame:
    """Per-connection, shared and total on-chip bytes of go-back-N, IRN, MELO and Go-Back-ONE
    for a NIC sized for `bandwidth` x `rtt` with `connections` queue pairs. Raises
    ScenarioError (one line naming the argument) on bad input."""
    # Each count is a u32 in the core: checked here, so 2^32 is a refusal naming it, not an
    # overflow inside the binding.
    for name, value in (("mtu", mtu), ("connections", connections), ("pool_bits", pool_bits),
                        ("block_bits", block_bits)):
        checked.integer(value, f"--{name.replace('_', '-')}", 0, checked.U32_MAX)
    columns = _native.memory_table(bandwidth, rtt, mtu, connections, pool_bits, block_bits)
    columns.pop("bdp_packets")
    return frame(columns, "memory")
