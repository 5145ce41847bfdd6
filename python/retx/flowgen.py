"""Flow files of the Aeolus testbed's DPDK application (gaoxiongzeng/dpdk-18.05,
`app/test-pmd/flowgen.c`, read at its lines 658-661): one flow per line,

    flow_id  a b c d (source IPv4)  a b c d (destination IPv4)  src_port  dst_port  size_bytes  start_s

Start times are seconds after the servers' synchronisation. The first lines are warm-up flows
("The first few lines are used for warm-up flows", flowgen.c:101): 1-byte messages to the
warm-up receiver, sent data-only before the synchronisation and never measured; they are
skipped here (a row of at most `WARM_UP_BYTES` bytes).

The application starts every due flow of a server in file order within one loop: a grant
request and the first RTT of data (13 packets), message after message, into one transmit
queue (flowgen.c:1518-1597). With `back_to_back`, a server's k-th message of one start time
starts k first-RTTs later (`first_rtt_us` each), which puts its packets on the wire in that
order: retx's NIC otherwise serves a host's queue pairs round robin, interleaving them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

WARM_UP_BYTES = 1


class FlowgenError(ValueError):
    pass


def host_of_ip(ip: str) -> str:
    """The testbed's servers 192.168.111.1 ... .8 as retx hosts h0 ... h7 (the last octet
    minus one)."""
    last = int(ip.rsplit(".", 1)[1])
    if last < 1:
        raise FlowgenError(f"{ip}: no host for a last octet below 1")
    return f"h{last - 1}"


def read(path: Path, host: Callable[[str], str] = host_of_ip, back_to_back: bool = True,
         first_rtt_us: float = 0.0) -> list[dict[str, object]]:
    """The measured flows of a flowgen flow file as `[workload] kind = "flow-list"` entries
    (`src`, `dst`, `size`, `start`), starts relative to the earliest measured flow."""
    rows = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 13:
            raise FlowgenError(f"{path}:{n}: {len(fields)} columns, expected 13 (id, 4+4 address bytes, 2 ports, size, start)")
        try:
            size = int(fields[11])
            start = float(fields[12])
        except ValueError as e:
            raise FlowgenError(f"{path}:{n}: {e}") from None
        if size <= WARM_UP_BYTES:
            continue
        src = ".".join(fields[1:5])
        dst = ".".join(fields[5:9])
        rows.append((start, host(src), host(dst), size))
    if not rows:
        raise FlowgenError(f"{path}: no measured flow (every row is a warm-up flow)")
    t0 = min(r[0] for r in rows)
    seen: dict[tuple[str, float], int] = {}
    flows: list[dict[str, object]] = []
    for start, src, dst, size in rows:
        k = seen.get((src, start), 0)
        seen[(src, start)] = k + 1
        at_us = (start - t0) * 1e6 + (k * first_rtt_us if back_to_back else 0.0)
        flows.append({"src": src, "dst": dst, "size": f"{size}B", "start": f"{at_us:.6f}us"})
    return flows
