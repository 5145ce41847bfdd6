"""uet-htsim's command line run by retx: `retx uet-htsim -tm FILE.cm [flags]` takes the flags of
`htsim_uec` (uet-htsim at 40ccb05, `htsim/sim/datacenter/main_uec.cpp`), builds the network,
switches and UET settings they describe, runs it and prints a line per finished flow and the
packet summary in uet-htsim's own format, so that its `validate.py` (and any script reading its
output) reads retx's as it reads uet-htsim's.

What a flag sets is uet-htsim's value, computed as `main_uec.cpp` computes it: the network RTT
(`calculate_rtt`: twice the diameter's link latency plus a 4,150 B packet and a 64 B ACK
serialised at every hop of the diameter), the BDP in packets (`calculate_bdp_pkt`), queues of
one BDP with trimming (five without, `DEFAULT_*_QUEUESIZE_FACTOR`), ECN from 20 % to 80 % of the
BDP, not toward hosts when receivers pull credit, the timeout from the queue
(`15 us + 6 x its drain time`). Flags that change what retx does not model are refused, naming
the flag; flags that only change logging are accepted and ignored.

retx's random streams are not uet-htsim's: `-seed N` is retx's seed N (absent: retx's default),
so flows move within uet-htsim's own seed-to-seed spread, not onto its exact times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from retx.scenario import Scenario, ScenarioError

ACK_BYTES = 64  # UecBasePacket::get_ack_size()
HEADER_BYTES = 64  # UecSrc::_hdr_size
DEFAULT_PACKET = 4150  # main_uec.cpp: packet_size
# `_failed_link_ratio(0.25)` (fat_tree_topology.cpp:104): a failed link runs at a quarter of
# its speed.
FAILED_LINK_RATIO = 0.25
LOAD_BALANCERS = {"bitmap": "bitmap", "reps": "reps", "reps_legacy": "reps-legacy", "oblivious": "oblivious",
                  "mixed": "mixed"}
# Flags that change only what uet-htsim logs, with the number of values each takes.
LOGGING = {"-o": 1, "-log": 1, "-logtime": 1, "-logtime_us": 1, "-debug": 0}
# Flags whose only value retx models, with that value (anything else is refused).
ONLY = {"-sender_cc_algo": "nscc", "-queue_type": "composite", "-host_queue_type": "fair_prio",
        "-strat": "ecmp_host", "-planes": "1"}
# Flags for what retx does not model.
UNMODELLED = {
    "-conn_reuse": "connection reuse across messages",
    "-pcie": "the receiver's PCIe model",
    "-sleek": "SLEEK loss recovery",
    "-enable_accurate_base_rtt": "the accurate base RTT option",
    "-Ai": "the oversubscribed control's gains (retx runs uet-htsim's defaults)",
    "-Md": "the oversubscribed control's gains (retx runs uet-htsim's defaults)",
    "-alpha": "the oversubscribed control's gains (retx runs uet-htsim's defaults)",
    "-ar_sticky_delta": "adaptive routing",
    "-ar_granularity": "adaptive routing",
    "-ar_method": "adaptive routing",
    "-disable_fd": "the flag, which uet-htsim itself has commented out",
}


class FlagError(ScenarioError):
    """A flag retx cannot run as uet-htsim would: one line naming it."""


@dataclass
class Flags:
    """`htsim_uec`'s flags as `main_uec.cpp` reads them, with its defaults."""

    tm: Optional[Path] = None
    nodes: int = 0
    tiers: int = 3
    topo: Optional[Path] = None
    end_us: int = 1000
    seed: Optional[int] = None
    paths: int = 64
    cwnd: int = 0
    sender_cc: bool = True
    receiver_cc: bool = False
    # UecSink::_oversubscribed_cc as the flags leave it, and -force_disable_oversubscribed_cc.
    oversubscribed_cc: bool = False
    force_disable_oversubscribed: bool = False
    load_balancing: str = "mixed"
    queue_packets: Optional[int] = None
    queue_bdp_factor: int = 0
    ecn_packets: Optional[tuple[int, int]] = None
    disable_trim: bool = False
    trim_size: int = 64
    failed: int = 0
    linkspeed_mbps: float = 100_000.0
    packet_size: int = DEFAULT_PACKET
    hop_latency_us: float = 1.0
    switch_latency_us: float = 0.0
    sack_threshold: Optional[int] = None
    target_q_delay_us: Optional[float] = None
    qa_gate: Optional[int] = None
    base_rtt_on_nack: bool = True
    ignored: list[str] = field(default_factory=list)


def _number(flag: str, value: str, kind: type, low: float, high: float) -> Any:
    try:
        v = kind(value)
    except ValueError:
        raise FlagError(f"{flag}: {value!r} is not a{'n integer' if kind is int else ' number'}") from None
    if not (low <= v <= high) or (kind is float and not math.isfinite(v)):
        raise FlagError(f"{flag}: {value} is out of range (allowed {low:g}..={high:g})")
    return v


# Flags naming a file, and flags taking one number: its Flags field, type and range.
PATHS = {"-tm": "tm", "-topo": "topo"}
NUMBERS: dict[str, tuple[str, type, float, float]] = {
    "-nodes": ("nodes", int, 1, 1 << 20),
    "-tiers": ("tiers", int, 2, 3),
    "-end": ("end_us", int, 1, 3_600_000_000),
    "-seed": ("seed", int, 0, 2**63 - 1),
    "-paths": ("paths", int, 1, 1 << 15),
    "-cwnd": ("cwnd", int, 0, 1 << 20),
    "-q": ("queue_packets", int, 1, 1 << 20),
    "-queue_size_bdp_factor": ("queue_bdp_factor", int, 0, 1 << 10),
    "-trimsize": ("trim_size", int, 64, 65_535),
    "-failed": ("failed", int, 0, 1 << 20),
    "-linkspeed": ("linkspeed_mbps", float, 1.0, 1.6e7),
    "-mtu": ("packet_size", int, HEADER_BYTES + 64, 65_535),
    "-hop_latency": ("hop_latency_us", float, 0.0, 1e6),
    "-switch_latency": ("switch_latency_us", float, 0.0, 1e6),
    "-sack_threshold": ("sack_threshold", int, 64, 65_535),
    "-target_q_delay": ("target_q_delay_us", float, 0.0, 10_000.0),
    "-qa_gate": ("qa_gate", int, 0, 30),
}


def parse(argv: list[str]) -> Flags:
    """The flags, checked one by one; an unknown or unmodelled flag is refused naming it."""
    f = Flags()
    i = 0

    def value(k: int = 1) -> list[str]:
        if len(argv) - i - 1 < k:
            raise FlagError(f"{argv[i]}: needs {k} value{'s' if k > 1 else ''}")
        return argv[i + 1:i + 1 + k]

    while i < len(argv):
        a = argv[i]
        n = 0
        if a in PATHS:
            setattr(f, PATHS[a], Path(value()[0]))
            n = 1
        elif a in NUMBERS:
            name, kind, low, high = NUMBERS[a]
            setattr(f, name, _number(a, value()[0], kind, low, high))
            n = 1
        elif a == "-sender_cc_only":
            f.sender_cc, f.receiver_cc, f.oversubscribed_cc = True, False, False
        elif a == "-receiver_cc_only":
            f.sender_cc, f.receiver_cc, f.oversubscribed_cc = False, True, False
        elif a == "-sender_cc":
            f.sender_cc, f.oversubscribed_cc = True, False
        elif a == "-receiver_cc":
            f.receiver_cc = True
        elif a == "-oversubscribed_cc":
            f.oversubscribed_cc = True
        elif a == "-force_disable_oversubscribed_cc":
            f.oversubscribed_cc, f.force_disable_oversubscribed = False, True
        elif a == "-load_balancing_algo":
            v = value()[0]
            if v not in LOAD_BALANCERS:
                raise FlagError(f"{a}: {v!r} is not one of {', '.join(LOAD_BALANCERS)}")
            f.load_balancing = LOAD_BALANCERS[v]
            n = 1
        elif a == "-ecn":
            ecn_low, ecn_high = value(2)
            f.ecn_packets = (_number(a, ecn_low, int, 0, 1 << 20), _number(a, ecn_high, int, 0, 1 << 20))
            n = 2
        elif a == "-disable_trim":
            f.disable_trim = True
        elif a == "-disable_base_rtt_update_on_nack":
            f.base_rtt_on_nack = False
        elif a in LOGGING:
            n = LOGGING[a]
            if n:
                value(n)
            f.ignored.append(a)
        elif a in ONLY:
            v = value()[0]
            if v != ONLY[a]:
                raise FlagError(f"{a}: only {ONLY[a]!r} is modelled in retx (uet-htsim's default), not {v!r}")
            n = 1
        elif a in UNMODELLED:
            raise FlagError(f"{a}: {UNMODELLED[a]} is not modelled in retx")
        else:
            raise FlagError(f"{a}: not an htsim_uec flag (uet-htsim's main_uec.cpp at 40ccb05)")
        i += 1 + n
    if f.tm is None:
        raise FlagError("-tm: the connection matrix is needed (retx does not read one from standard input)")
    if f.trim_size > f.packet_size:
        raise FlagError(f"-trimsize: {f.trim_size} B is above the packet size (-mtu {f.packet_size} B)")
    return f


def switch_settings(queue: int, kmin: int, kmax: int, ecn_to_hosts: bool, trim_bytes: int = 64) -> dict[str, Any]:
    """uet-htsim's switches as `[switch]` settings: no PFC, a data queue of `queue` bytes per
    port that trims to a `trim_bytes` header (the victim chosen as htsim's CompositeQueue does),
    ECN at dequeue from `kmin` to `kmax` bytes with pmax 1, toward hosts or not."""
    return {
        "pfc": {"enabled": False},
        "ecn": {"enabled": True, "kmin": f"{kmin}B", "kmax": f"{kmax}B", "pmax": 1.0, "to_hosts": ecn_to_hosts},
        "trim": {"queue": 0, "header": f"{trim_bytes}B", "data_queue": f"{queue}B", "victim": "htsim"},
    }


@dataclass
class Network:
    """The network the flags describe: retx's `[topology]`, uet-htsim's diameter (hops and
    latency), where `-failed` links are, and its oversubscription."""

    topology: dict[str, Any]
    diameter: int
    diameter_latency_us: float
    degraded: list[dict[str, Any]]


def _nodes(tm: Path) -> int:
    from retx.scenario import _htsim_nodes, _read_text

    return _htsim_nodes(_read_text(tm), tm)


def network(f: Flags, nodes: int) -> Network:
    link = f"{f.linkspeed_mbps / 1000:.12g}Gbps"
    ps = round(f.hop_latency_us * 1e6)
    delay = f"{ps // 1000}ns" if ps % 1000 == 0 else f"{ps}ps"
    if f.switch_latency_us:
        raise FlagError("-switch_latency: a switch's forwarding latency is not modelled in retx (0, uet-htsim's default)")
    if f.topo is not None:
        return _topo_file(f, nodes)
    if f.tiers == 2:
        # A leaf-spine of K leaves with K/2 hosts and K/2 uplinks each, K/2 spines
        # (FatTreeTopologyCfg::set_params, 2 tiers: K x K / 2 hosts).
        k = 1
        while k * k // 2 < nodes:
            k += 1
        if k * k // 2 != nodes or k % 2:
            raise FlagError(f"-tiers: 2 tiers need K x K / 2 hosts for an even K, not {nodes} (the matrix's Nodes)")
        if f.failed:
            raise FlagError("-failed: failed links are in the core tier, which 2 tiers do not have")
        topology = {"kind": "leaf-spine", "spines": k // 2, "leaves": k, "hosts_per_leaf": k // 2, "host_link": link,
                    "fabric_link": link, "link_delay": delay}
        return Network(topology, 4, 4 * f.hop_latency_us, [])
    k = 1
    while k * k * k // 4 < nodes:
        k += 1
    if k * k * k // 4 != nodes or k % 2:
        raise FlagError(f"-nodes: a 3-tier fat-tree has K^3/4 hosts for an even K (16, 128, 1024, ...), not {nodes}")
    half = k // 2
    degraded = []
    # fat_tree_topology.cpp:981-1014: aggregation switch `agg` (position agg % (K/2) in its pod)
    # reaches core podpos + (K/2) x l by its l-th uplink, and the core's link down to it is
    # degraded when l + agg x (K/2) < N. retx numbers that core podpos x (K/2) + l.
    for agg in range(k * half):
        for up in range(half):
            if up + agg * half < f.failed:
                degraded.append({"from": f"core{(agg % half) * half + up}", "to": f"agg{agg}", "factor": FAILED_LINK_RATIO})
    topology = {"kind": "fat-tree", "k": k, "host_link": link, "link_delay": delay}
    return Network(topology, 6, 6 * f.hop_latency_us, degraded)


def _topo_file(f: Flags, nodes: int) -> Network:
    """A 2-tier `.topo` file (uet-htsim's leaf-spines) as retx's leaf-spine."""
    from retx.scenario import _read_text

    path = f.topo
    assert path is not None
    header: dict[str, str] = {}
    tiers: list[dict[str, str]] = []
    try:
        text = _read_text(path)
    except ScenarioError as e:
        raise FlagError(f"-topo: {e}") from None
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "Tier" and len(words) == 2:
            tiers.append({})
            continue
        if len(words) != 2:
            raise FlagError(f"-topo: {path.name}: {raw.strip()!r} is not a `Key value` line")
        (tiers[-1] if tiers else header)[words[0]] = words[1]

    def number(d: dict[str, str], key: str, default: Optional[str] = None) -> float:
        v = d.get(key, default)
        if v is None:
            raise FlagError(f"-topo: {path.name}: no {key}")
        try:
            return float(v)
        except ValueError:
            raise FlagError(f"-topo: {path.name}: {key} {v!r} is not a number") from None

    if number(header, "Tiers") != 2 or len(tiers) != 2:
        raise FlagError(f"-topo: {path.name}: only 2-tier (leaf-spine) files are mapped to retx; run 3-tier "
                        "fat-trees without -topo")
    total = int(number(header, "Nodes"))
    if total != nodes:
        raise FlagError(f"-topo: {path.name} has {total} nodes, the connection matrix {nodes}")
    tor, spine = tiers
    hosts_per_leaf, uplinks = int(number(tor, "Radix_Down")), int(number(tor, "Radix_Up"))
    leaves = total // max(hosts_per_leaf, 1)
    per_spine = int(number(spine, "Radix_Down"))
    bundle = int(number(spine, "Bundle", "1"))
    if hosts_per_leaf * leaves != total or per_spine != leaves or bundle != 1 or uplinks < 1:
        raise FlagError(f"-topo: {path.name}: not a leaf-spine with every leaf wired once to every spine")
    latencies = {number(t, "Downlink_Latency_ns") for t in tiers}
    speeds = [number(t, "Downlink_speed_Gbps") for t in tiers]
    if len(latencies) != 1 or any(number(t, "Switch_Latency_ns", "0") for t in tiers):
        raise FlagError(f"-topo: {path.name}: one link latency and no switch latency are mapped to retx")
    latency_ns = latencies.pop()
    topology = {"kind": "leaf-spine", "spines": uplinks, "leaves": leaves, "hosts_per_leaf": hosts_per_leaf,
                "host_link": f"{speeds[0]:g}Gbps", "fabric_link": f"{speeds[1]:g}Gbps", "link_delay": f"{latency_ns:g}ns"}
    if f.failed:
        raise FlagError("-failed: failed links are in the core tier, which 2 tiers do not have")
    return Network(topology, 4, 4 * latency_ns / 1000, [])


def scenario(f: Flags, name: Optional[str] = None) -> Scenario:
    """The run the flags describe, as retx settings (see the module's text)."""
    assert f.tm is not None
    try:
        nodes = _nodes(f.tm)
    except FlagError:
        raise
    except ScenarioError as e:
        raise FlagError(f"-tm: {e}") from None
    if f.nodes and f.nodes != nodes:
        raise FlagError(f"-nodes: {f.nodes}, but the connection matrix has {nodes} (Nodes)")
    net = network(f, nodes)
    gbps = f.linkspeed_mbps / 1000
    # calculate_rtt (main_uec.cpp:51): in picoseconds, as uet-htsim's integer time.
    rtt_ps = (2 * round(net.diameter_latency_us * 1e6)
              + int(f.packet_size * 8 / gbps * net.diameter * 1000)
              + int(ACK_BYTES * 8 / gbps * net.diameter * 1000))
    bdp = math.ceil(rtt_ps * 1e-12 * (f.linkspeed_mbps * 1e6 / 8) / f.packet_size)
    if f.queue_packets is not None:
        queue_packets = f.queue_packets
    else:
        factor = f.queue_bdp_factor or (5 if f.disable_trim else 1)
        queue_packets = bdp * factor
    queue = queue_packets * f.packet_size
    if f.ecn_packets is not None:
        kmin, kmax = (p * f.packet_size for p in f.ecn_packets)
    else:
        kmin, kmax = math.ceil(bdp * 0.2) * f.packet_size, math.ceil(bdp * 0.8) * f.packet_size
    if kmin > kmax or kmax > queue:
        # Name what the user wrote: the thresholds, or the queue the default thresholds outgrow.
        named = "-ecn" if f.ecn_packets is not None or f.queue_packets is None else "-q"
        raise FlagError(f"{named}: ECN low {kmin} B, high {kmax} B and the queue {queue} B must rise in that "
                        "order (uet-htsim asserts it)")
    if not (f.sender_cc or f.receiver_cc):
        raise FlagError("-receiver_cc_only: with no sender control and no receiver credit nothing paces the "
                        "sender")
    cc = "both" if f.sender_cc and f.receiver_cc else ("nscc" if f.sender_cc else "rccc")
    uet: dict[str, Any] = {"cc": cc, "paths": f.paths, "load_balancing": f.load_balancing}
    if f.cwnd and cc != "rccc":
        # -cwnd sets NSCC's window, which RCCC alone never reads.
        uet["initial_window"] = f.cwnd
    if f.sack_threshold is not None:
        uet["sack_threshold"] = f"{f.sack_threshold}B"
    if f.target_q_delay_us is not None and cc != "rccc":
        uet["target_delay"] = f"{f.target_q_delay_us * 1000:g}ns"
    if f.qa_gate is not None and cc != "rccc":
        uet["qa_gate"] = f.qa_gate
    if not f.base_rtt_on_nack:
        uet["base_rtt_from_nacks"] = False
    if f.disable_trim:
        uet["trimming"] = False
        # main_uec.cpp:695: the timeout from the (untrimmed) queue's drain time.
        uet["rto"] = f"{15_000_000 + round(queue * 6.0 * 8 * 1e6 / (f.linkspeed_mbps * 1e6) * 1e6)}ps"
    # main_uec.cpp:688: on where the flags left it on, or on an oversubscribed network without
    # sender control unless forced off: retx's default decides the second the same way.
    if f.force_disable_oversubscribed and cc != "nscc":
        uet["oversubscribed_cc"] = False
    elif f.oversubscribed_cc and cc != "nscc":
        uet["oversubscribed_cc"] = True
    # set_ecn_parameters(true, !receiver_driven, ..): no marking toward hosts when receivers
    # pull credit (fat_tree_topology.cpp:1187-1194).
    switch = switch_settings(queue, kmin, kmax, ecn_to_hosts=not f.receiver_cc, trim_bytes=f.trim_size)
    if f.disable_trim:
        del switch["trim"]
        switch["port_buffer"] = f"{queue}B"
    if net.degraded:
        switch["degraded"] = net.degraded
    data: dict[str, Any] = {
        "name": name or "uet-htsim",
        "duration": f"{f.end_us}us",
        "topology": net.topology,
        "nic": {"mtu": f.packet_size - HEADER_BYTES},
        "switch": switch,
        "transport": {"recovery": "uet", "cc": "none"},
        "recovery": {"uet": uet},
        # htsim_uec reads `start` in whole microseconds (main_uec.cpp:913), htsim_ndp in ps.
        "workload": {"kind": "htsim-cm", "file": str(f.tm.resolve()), "start_unit": "us"},
    }
    if f.seed is not None:
        data["seed"] = f.seed
    built = Scenario.from_dict(data)
    try:
        built.resolved()
    except ScenarioError as e:
        raise FlagError(_as_flag(str(e))) from None
    return built


# The settings a flag sets, longest first: a refusal of the setting names the flag written.
FLAG_OF = (
    ("recovery.uet.paths", "-paths"), ("recovery.uet.initial_window", "-cwnd"),
    ("recovery.uet.sack_threshold", "-sack_threshold"), ("recovery.uet.target_delay", "-target_q_delay"),
    ("recovery.uet.qa_gate", "-qa_gate"), ("recovery.uet.load_balancing", "-load_balancing_algo"),
    ("recovery.uet.rto", "-disable_trim"), ("switch.trim.header", "-trimsize"), ("switch.trim", "-q"),
    ("switch.port_buffer", "-q"), ("switch.ecn", "-ecn"), ("switch.degraded", "-failed"), ("nic.mtu", "-mtu"),
    ("topology.host_link", "-linkspeed"), ("topology.fabric_link", "-linkspeed"), ("topology.link_delay", "-hop_latency"),
    ("topology", "-tm"), ("workload", "-tm"), ("duration", "-end"), ("seed", "-seed"),
)


def _as_flag(message: str) -> str:
    """A scenario refusal as the flag that set the field it names (the user wrote flags)."""
    for setting, flag in FLAG_OF:
        if message.startswith(setting):
            rest = message[len(setting):].lstrip(".[]0123456789").lstrip(":").strip()
            return f"{flag}: {rest}"
    return message


def flow_lines(flows: Any, packet_size: int, summary: dict[str, Any]) -> list[str]:
    """A line per finished flow in the order they finished, then the packet summary, as
    uet-htsim prints them (`UecSrc::processAck`, uec.cpp:842; `main_uec.cpp:1034`). The fields
    validate.py reads are uet-htsim's: the name `Uec_SRC_DST`, "finished at" the absolute time
    in us to 6 significant digits (C++'s default), "total messages". Flow ids are retx's; `New`
    counts the packets of the flows that started, `Rtx` each flow's retransmitted payload in
    whole packets."""
    mss = packet_size - HEADER_BYTES
    lines = []
    new = rtx = 0
    for r in flows.iter_rows(named=True):
        if r["start_us"] is not None and r["start_us"] <= summary.get("sim_time_us", math.inf):
            new += math.ceil(r["size_bytes"] / mss)
            rtx += math.ceil(r["retx_bytes"] / mss)
    done = flows.filter(flows["finish_us"].is_not_null()).sort(["finish_us", "flow_id"])
    for r in done.iter_rows(named=True):
        src, dst = r["src"].lstrip("h"), r["dst"].lstrip("h")
        lines.append(f"Flow Uec_{src}_{dst} flowId {r['flow_id']} uecSrc {src} finished at {r['finish_us']:.6g} "
                     f"total messages 1 total packets {math.ceil(r['size_bytes'] / mss)} total bytes {r['size_bytes']}")
    c = summary
    lines.append(f"New: {new} Rtx: {rtx} RTS: {c.get('uet_rts_sent', 0):.0f} Bounced: 0 ACKs: "
                 f"{c.get('uet_acks_received', 0):.0f} NACKs: {c.get('uet_nacks_received', 0):.0f} Pulls: "
                 f"{c.get('uet_pulls_received', 0):.0f} sleek_pkts: 0")
    return lines
