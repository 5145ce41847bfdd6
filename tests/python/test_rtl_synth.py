"""Synthesis of rtl/ (retx.synth, `make rtl`) on small configurations: yosys accepts every module,
the memories hold the bits the design says, and the multiplier/divider rate unit costs more
logic than the shift one at the same widths."""

from __future__ import annotations

import pytest

from conftest import REPO
from retx.synth import Design, synthesize, yosys_available

RTL = REPO / "rtl"

pytestmark = pytest.mark.skipif(not yosys_available(), reason="yosys not installed (CI installs it: .ci/run)")


def test_melo_memories_are_the_pool_its_pointers_and_the_connection_table(tmp_path):
    blocks, block_bits, conns, psn = 16, 8, 2, 24
    row = synthesize(Design("melo_rx_bitmap", "small", {"POOL_BLOCKS": blocks, "BLOCK_BITS": block_bits,
                                                         "CONNS": conns}), "generic", RTL, tmp_path)
    ptr = 4  # log2(16)
    pool = blocks * block_bits + 2 * blocks * ptr          # bits, next_ptr, available
    # RCV.NXT, RCV.HIGH, start_ptr, end_ptr, 3 holes of (start, len) and their count.
    per_conn = 2 * psn + 2 * ptr + 3 * 2 * psn + 2
    assert row["memory_bits"] == pool + conns * per_conn
    assert row["ff"] > 0 and row["logic_gates"] > 0


def test_the_muldiv_rate_unit_needs_more_logic_than_the_shift_unit(tmp_path):
    params = {"W": 16, "CONNS": 2}
    shift = synthesize(Design("stride_rate_shift", "shift", params), "generic", RTL, tmp_path)
    muldiv = synthesize(Design("stride_rate_muldiv", "muldiv", params), "generic", RTL, tmp_path)
    # Both keep the same per-connection registers (6 W-bit values and a flag per connection).
    assert shift["memory_bits"] == muldiv["memory_bits"] == 2 * (6 * 16 + 1)
    assert muldiv["logic_gates"] > 1.5 * shift["logic_gates"], (shift, muldiv)


def test_lefts_pool_synthesizes_and_grows_with_its_registers(tmp_path):
    """LEFT's dual-state pool (rtl/left_pool.v) on a small configuration: yosys accepts it, and
    a third loop register adds at least its bitmap (2 blocks x 8 bits) to the memories (the
    registers' ring buffers are inferred as memories) and adds logic."""
    base = {"POOL_BLOCKS": 16, "BLOCK_BITS": 8, "REG_BLOCKS": 2, "CONNS": 2}
    two = synthesize(Design("left_pool", "two", {**base, "REGS": 2}), "generic", RTL, tmp_path)
    three = synthesize(Design("left_pool", "three", {**base, "REGS": 3}), "generic", RTL, tmp_path)
    assert two["logic_gates"] > 0 and two["ff"] > 0
    assert three["memory_bits"] >= two["memory_bits"] + 16, (two, three)
    assert three["logic_gates"] > two["logic_gates"], (two, three)
