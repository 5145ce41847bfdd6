# Type stubs for the compiled module built from crates/retx-py. tests/python/test_types.py
# checks them against the compiled module with mypy's stubtest; tests/python/test_schema.py
# checks every function's parameters and defaults too.
#
# Tables come back as {column name: values} in the order `schema()` lists them: numeric and
# boolean columns as 1-D numpy arrays (dtype int64, uint64, float64 or bool), string columns
# as lists of str. Unfinished values (e.g. fct_us of a flow still running) are NaN.
from typing import Callable, Optional, TypedDict, Union

import numpy as np
import numpy.typing as npt

__all__ = ["ScenarioError", "PanicException", "last_panic", "resolve", "run", "hw_trace", "hpcc_config", "memory_table", "schema", "schemes", "warnings", "output_files", "check_nesting"]

# Names with a leading underscore exist only here, for the annotations (stubtest skips them).

_Column = Union[npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.float64], npt.NDArray[np.bool_], list[str]]
# (name, dtype, unit, description); dtype is "i64", "u64", "f64", "bool" or "str", unit "" when
# the value has none.
_ColumnSpec = tuple[str, str, str, str]

class _RunResult(TypedDict):
    flows: dict[str, _Column]  # schema()["flows"]: one row per flow
    timeseries: dict[str, _Column]  # schema()["timeseries"]: one row per receiver per sample
    queues: dict[str, _Column]  # schema()["queues"]: one row per watched port per sample
    cc: dict[str, _Column]  # schema()["cc"]: one row per watched flow's sender per sample
    pools: dict[str, _Column]  # schema()["pools"]: one row per watched host's NIC structure per sample
    collectives: dict[str, _Column]  # schema()["collectives"]: one row per collective group and iteration
    collective_steps: dict[str, _Column]  # schema()["collective_steps"]: one row per step of each collective iteration
    links: dict[str, _Column]  # schema()["links"]: one row per link direction [output] links selects (none without)
    tier_samples: dict[str, _Column]  # schema()["tier_samples"]: one row per tier of the selected links per sample
    link_samples: dict[str, _Column]  # schema()["link_samples"]: per sample, one row per busiest selected link ([output] link_series)
    # name, seed, sim_time_us, wall_seconds, events, events_per_sec, packet_hops,
    # packets_created/consumed/in_flight, drops_loss/buffer/unroutable, drops_by_kind
    # ({scheduled_data, unscheduled_data, grants, control}: the transport packets dropped, by
    # kind), packets_trimmed/returned ([switch] trim), ecn_marks, pfc_pauses,
    # qp_swaps, bad_deliveries, background_sent/dropped/delivered ([[background]] packets;
    # background_dropped is part of drops_buffer), the recovery scheme's own figures (e.g.
    # melo_rx_pool_peak), sized_for_bandwidth_gbps, sized_for_rtt_us,
    # onchip_per_connection/shared/total_bytes, flows, flows_completed, unfinished_flows (None,
    # or {count, never_started, reason}: finite flows that did not finish, and why); warnings
    # (list of str: see `warnings`), pfc_deadlock (None, or {detected_at_us, ports: [{port, node,
    # peer, link}]}: the run ended there), pfc_storms ([{port, node, peer, link, first_at_us,
    # windows, max_paused_fraction}]); with [output] links only: switches ([{switch, ports,
    # tx_bytes, utilisation, drops, drops_by_kind: {scheduled_data, unscheduled_data, grants,
    # control, background}, trims, ecn_marks, pfc_pauses_sent, pfc_paused_us, max_queue_bytes}]:
    # each switch's selected egress ports together, in node order), links_selected, link_tiers.
    summary: dict[str, Union[str, int, float, None, list[str], list[dict[str, Union[str, int, float]]], dict[str, object]]]
    resolved: str  # the scenario as TOML with every default filled in
    memory: dict[str, _Column]  # schema()["memory"]: one row per loss recovery scheme
    fct_txt: Optional[str]  # the HPCC ns-3 fct.txt lines, when [output] fct_txt asks for them
    pcap: Optional[bytes]  # the libpcap file, when [output] pcap asks for one
    pcap_file: Optional[str]  # its file name, relative to the output folder ([output] pcap.file)
    fct_txt_file: Optional[str]  # fct.txt's path relative to the output folder ([output] fct_txt)
    engine: _Engine  # how the run used the machine (not a result: the same on any thread count)

class _Engine(TypedDict):
    threads: int  # threads (partitions) that ran it; 1: the serial engine
    serial_because: Optional[str]  # why one thread when more were asked for
    lookahead_us: float  # the window between barriers: the shortest delay of a link between partitions
    windows: int
    link_ends: list[int]  # per partition: its link ends (what it was balanced by)
    events: list[int]  # per partition: events handled
    busy_s: list[float]  # per partition: wall seconds handling them
    wait_s: list[float]  # per partition: wall seconds waiting at barriers

class ScenarioError(ValueError):
    """A scenario failed validation; str() is one line naming the field."""

def hw_trace(toml_text: str, kind: str, max_ops: int, max_conns: int, base_dir: str = ".") -> str:
    """Run a scenario recording its operations on one hardware structure (kind "melo" or
    "stride") and return the trace text. Raises ScenarioError."""

def resolve(toml_text: str, base_dir: str = ".") -> str:
    """Validate a scenario and return it as TOML with every default filled in. Relative paths
    in it (e.g. workload.cdf) resolve against `base_dir`. Raises ScenarioError."""

def warnings(toml_text: str, base_dir: str = ".") -> list[str]:
    """What a valid scenario cannot do as it seems to ask (PFC that cannot be lossless), one
    line each naming the field; empty when nothing. Raises ScenarioError on a bad scenario."""

def output_files() -> list[str]:
    """The file names a run, sweep point, report or reproduction writes into its output folder
    under fixed names; a scenario may not name one of them."""

def check_nesting(toml_text: str) -> None:
    """Raise ScenarioError when TOML text nests tables and arrays deeper than any reader should
    recurse (about 80 levels)."""

def hpcc_config(path: str) -> str:
    """Read an HPCC ns-3 simulator config file (`KEY value` lines) and return the scenario as
    TOML; its relative paths resolve against the config's directory. Raises ScenarioError
    naming the key."""

def run(
    toml_text: str,
    base_dir: str = ".",
    progress: Optional[Callable[[float, float], object]] = None,
) -> _RunResult:
    """Simulate a scenario with the GIL released.

    `progress(sim_time_us, duration_us)` is called about every 0.2 s of wall time; an exception
    it raises aborts the run and is re-raised. Raises ScenarioError on a bad scenario.
    """

def memory_table(
    bandwidth: str = "100Gbps",
    rtt: str = "200us",
    mtu: int = 1024,
    connections: int = 300,
    pool_bits: int = 1024,
    block_bits: int = 8,
) -> dict[str, Union[_Column, int]]:
    """The on-chip memory table (schema()["memory"] columns) of every loss recovery scheme for
    a NIC sized as given, plus "bdp_packets": int, the packets in one bandwidth-delay product.
    Raises ScenarioError naming a bad argument."""

def schema() -> dict[str, list[_ColumnSpec]]:
    """Every output table's columns as declared in Rust (retx::stats::columns):
    {"flows" | "timeseries" | "queues" | "cc" | "pools" | "memory" | "collectives" | "collective_steps" |
     "links" | "tier_samples" | "link_samples":
    [(name, dtype, unit, description), ...]}."""

def schemes() -> dict[str, list[str]]:
    """The registered loss recovery schemes and congestion controllers by their names in a
    scenario ([transport] recovery and cc), in the registry's order: {"recovery": [...], "cc": [...]}."""

class PanicException(BaseException):
    """A Rust panic (a bug), as PyO3 raises it: pyo3_runtime.PanicException."""

def last_panic() -> Optional[str]:
    """Where and why the last Rust panic happened ("file.rs:line: message"), or None. A panic
    is a bug: PyO3 raises it as pyo3_runtime.PanicException (a BaseException) with the message
    alone; the CLI reports both as `retx: internal error: ...` with exit status 3."""
