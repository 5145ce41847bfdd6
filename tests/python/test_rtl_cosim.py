"""Lockstep co-simulation of rtl/ against retx's models (retx.cosim): a few thousand operations
traced from real runs go through each module under Icarus Verilog and every operation's
outputs must equal the model's; a bug planted in the RTL, or in the model's side of a trace,
must be caught at the operation where it first shows."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from conftest import REPO
from retx import hw_trace
from retx.cosim import cosim, iverilog_available
from retx.reproduce import melo_fig6b
from retx.scenario import Scenario

RTL = REPO / "rtl"
OPS = 4000
# The small-pool run repeats a bit (a retransmission of a packet that had arrived) first at
# operation 6,613.
STRESS_OPS = 10000

pytestmark = pytest.mark.skipif(not iverilog_available(),
                                reason="iverilog not installed (CI installs it: .ci/run)")


@pytest.fixture(scope="module")
def melo_fig5a() -> hw_trace.Trace:
    """melo-fig5a's MELO run at 1 % loss (one connection, the 1 Kb pool)."""
    return hw_trace.parse(hw_trace.trace("melo", ops=OPS))


@pytest.fixture(scope="module")
def melo_small_pool() -> hw_trace.Trace:
    """melo-fig6b's setting (200 us RTT, 5 connections into one receiver, 2 % loss) with a
    256-bit pool, so that every outcome happens: fills, repeats, both kinds of drop."""
    scenario = Scenario.from_dict(melo_fig6b.BASE_SCENARIO).with_overrides({
        "workload.pairs": [["h0", "h10"]] * 5, "loss": [{"at": "switch:leaf1", "rate": 2e-2}],
        "recovery.melo.pool_bits": 256})
    return hw_trace.parse(hw_trace.trace("melo", scenario, ops=STRESS_OPS, conns=8))


@pytest.fixture(scope="module")
def stride() -> hw_trace.Trace:
    """stride-fattree's STRIDE run (seed 1): up to 64 connections at a time."""
    return hw_trace.parse(hw_trace.trace("stride", ops=OPS))


def test_melo_rtl_matches_the_model_on_melo_fig5a(melo_fig5a, tmp_path):
    assert len(melo_fig5a.rows) == OPS and melo_fig5a.conns == 1
    actions = Counter(r[2] for r in melo_fig5a.rows)
    # 1 % loss: in-order packets, appends past holes (each with a NACK), old duplicates.
    assert actions[0] > 0 and actions[1] > 0 and sum(r[3] for r in melo_fig5a.rows) > 0
    result = cosim(melo_fig5a, RTL, tmp_path)
    assert result.ok, str(result.divergence)
    assert result.ops == OPS
    # Header of rtl/melo_rx_bitmap.v: one packet per clock when no more than one block is
    # allocated and the drain ends in the first block; more clocks only for multi-block work.
    assert min(result.cycles) == 1
    assert sum(c == 1 for c in result.cycles) > 0.9 * OPS


def test_melo_rtl_matches_the_model_through_every_outcome(melo_small_pool, tmp_path):
    assert len(melo_small_pool.rows) == STRESS_OPS and melo_small_pool.conns == 5
    actions = Counter(r[2] for r in melo_small_pool.rows)
    assert set(actions) == set(range(7)), actions
    # The pool of 32 blocks fills up (that is what the no-block drops are).
    assert max(r[6] for r in melo_small_pool.rows) == melo_small_pool.params["pool_blocks"] == 32
    result = cosim(melo_small_pool, RTL, tmp_path)
    assert result.ok, str(result.divergence)


@pytest.mark.parametrize("variant", ["shift", "muldiv"])
def test_stride_rate_units_match_the_model_on_stride_fattree(stride, variant, tmp_path):
    assert len(stride.rows) == OPS
    samples = [r for r in stride.rows if r[0] == 1]
    branches = Counter(r[6] for r in samples)
    # Both threshold branches and both gradient branches occur in the run.
    assert {0, 1, 2, 3} <= set(branches), branches
    assert max(r[7] for r in samples) >= 2  # a decrease of more than one eq. (1) round
    result = cosim(stride, RTL, tmp_path, variant=variant)
    assert result.ok, str(result.divergence)
    # Threshold branches answer 2 clocks after acceptance (module headers).
    assert min(result.cycles) == 2


def test_melo_rtl_matches_the_model_with_gaps_between_packets(melo_small_pool, tmp_path):
    # The testbench withholds in_valid on about one clock in three: operations then also read
    # the connection table after a write-back, not only the state forwarded back to back.
    result = cosim(melo_small_pool, RTL, tmp_path, defines=["MELO_TB_BUBBLES"])
    assert result.ok, str(result.divergence)


def test_a_freed_block_pushed_to_the_wrong_stack_slot_is_caught(melo_fig5a, tmp_path):
    result = cosim(melo_fig5a, RTL, tmp_path, defines=["MELO_BUG_STACK_SLOT"])
    assert result.divergence is not None
    # The first freed block is lost; a later allocation hands out a block still in use.
    assert result.divergence.column in {"start_ptr", "end_ptr"}, str(result.divergence)
    first_free = next(i for i, r in enumerate(melo_fig5a.rows) if i and r[6] < melo_fig5a.rows[i - 1][6])
    assert result.divergence.index > first_free


def test_an_off_by_one_shift_in_eq1_is_caught(stride, tmp_path):
    result = cosim(stride, RTL, tmp_path, defines=["STRIDE_BUG_SHIFT"])
    assert result.divergence is not None and result.divergence.column == "rate"
    first_cut = next(i for i, r in enumerate(stride.rows) if r[0] == 1 and r[6] in (1, 3))
    assert result.divergence.index == first_cut


def test_a_wrong_model_answer_is_reported_at_its_operation(melo_fig5a, stride, tmp_path):
    # A bug on the model's side: one expected value changed in the middle of each trace.
    for trace, column, variant in [(melo_fig5a, "used_blocks", "shift"), (stride, "rate", "muldiv")]:
        rows = [list(r) for r in trace.rows]
        col = trace.columns.index(column)
        rows[1234][col] += 1
        planted = dataclasses.replace(trace, rows=rows)
        result = cosim(planted, RTL, tmp_path / column, variant=variant)
        assert result.divergence is not None
        assert (result.divergence.index, result.divergence.column) == (1234, column)
        assert result.divergence.expected == result.divergence.got + 1


def test_left_scheduler_and_gather_fifos_match_the_model_on_left_rtt_ratio(tmp_path):
    # left-rtt-ratio's LEFT run at 32x (`retx trace left-gather`): every call on the receiving
    # NIC's scheduler and gather FIFOs. The co-simulation over more runs, with planted bugs, is
    # crates/retx/tests/it/left_gather_cosim.rs.
    trace = hw_trace.parse(hw_trace.trace("left-gather", ops=OPS))
    assert trace.kind == "left-gather" and len(trace.rows) == OPS
    assert trace.params["fifos"] == 8 and trace.params["variant"] == 0
    ops = Counter(r[0] for r in trace.rows)
    fast = Counter(r[6] for r in trace.rows if r[0] == 0)
    # Out-of-order packets both fast and gathered, in-order ones, FIFO timeouts.
    assert ops[0] > 0 and ops[1] > 0 and ops[2] > 0 and fast[0] > 0 and fast[1] > 0, (ops, fast)
    result = cosim(trace, RTL, tmp_path)
    assert result.ok, str(result.divergence)
    # A planted bug: the degree's gain 1/4 instead of 1/8.
    bad = cosim(trace, RTL, tmp_path / "bug", defines=["LEFT_GATHER_BUG_GAIN"])
    assert bad.divergence is not None and bad.divergence.column == "degree", str(bad.divergence)
