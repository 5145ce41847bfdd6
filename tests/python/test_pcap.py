"""`[output] pcap` end to end: `retx run` writes a capture that tshark dissects as RoCEv2
(InfiniBand BTH over UDP 4791), in which a go-back-N sender under loss receives NAKs and then
resends exactly what the simulation counts as retransmitted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from conftest import run_cli

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (.ci/run installs it: apt-get install tshark)"
)

SIZE = 100_000
MTU = 1024
# Headers of a RoCEv2 frame without FCS: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4.
HEADERS = 58
SEND_OPCODES = {0x00, 0x01, 0x02, 0x04}  # RC SEND First, Middle, Last, Only
ACKNOWLEDGE = 0x11
NAK_PSN_SEQUENCE_ERROR = 0x60
H0, H1 = "10.0.0.1", "10.0.0.2"

SCENARIO = f"""\
name = "pcap-gbn"
seed = 3
duration = "2ms"

[topology]
kind = "single-switch"
hosts = 2
host_link = "40Gbps"
link_delay = "2us"

[transport]
recovery = "gbn"
cc = "none"

[[loss]]
at = "link:sw0->h1"
rate = 0.03

[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h1", size = "{SIZE}B" }}]

[output]
pcap = {{ hosts = ["h0"], file = "gbn.pcap" }}
"""

FIELDS = [
    "frame.protocols", "frame.len", "ip.src", "ip.dst", "udp.dstport",
    "infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.bth.padcnt", "infiniband.aeth.syndrome",
]


def tshark_rows(pcap: Path) -> list[dict[str, str]]:
    assert TSHARK is not None
    out = subprocess.run(
        [TSHARK, "-r", str(pcap), "-T", "fields", "-E", "separator=;", *[a for f in FIELDS for a in ("-e", f)]],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    return [dict(zip(FIELDS, line.split(";"))) for line in out.splitlines()]


def test_tshark_reads_the_go_back_n_recovery_the_simulation_reports(tmp_path: Path) -> None:
    scenario = tmp_path / "gbn.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    run = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    pcap = out / "gbn.pcap"
    assert f"wrote {pcap}" in run.stdout
    flow = pl.read_parquet(out / "flows.parquet").row(0, named=True)
    assert flow["completed"]

    rows = tshark_rows(pcap)
    assert rows, "tshark read no frames"
    for r in rows:
        # UDP 4791 is dissected as RoCEv2 by default: InfiniBand right after UDP (then the
        # payload as data).
        assert r["frame.protocols"].startswith("eth:ethertype:ip:udp:infiniband"), r
        assert r["udp.dstport"] == "4791"
    sent = [r for r in rows if r["ip.src"] == H0]
    received = [r for r in rows if r["ip.src"] == H1]
    assert {int(r["infiniband.bth.opcode"]) for r in sent} <= SEND_OPCODES
    assert {int(r["infiniband.bth.opcode"]) for r in received} == {ACKNOWLEDGE}

    # What h0 resent: every data frame whose PSN it had sent before.
    seen: set[int] = set()
    retx_psns: list[int] = []
    retx_bytes = 0
    for r in sent:
        psn = int(r["infiniband.bth.psn"])
        payload = int(r["frame.len"]) - HEADERS - int(r["infiniband.bth.padcnt"])
        if psn in seen:
            retx_psns.append(psn)
            retx_bytes += payload
        seen.add(psn)
    assert len(seen) == -(-SIZE // MTU)
    assert retx_bytes == flow["retx_bytes"] > 0

    naks = [i for i, r in enumerate(rows) if r["infiniband.aeth.syndrome"] and int(r["infiniband.aeth.syndrome"]) == NAK_PSN_SEQUENCE_ERROR]
    assert len(naks) == flow["naks"] > 0, "a NAK per NAK the sender counted"
    # Go-back-N: after the first NAK (naming the PSN h1 expects), h0 resends from that PSN on,
    # in order, every PSN it had sent.
    first = naks[0]
    expected = int(rows[first]["infiniband.bth.psn"])
    before = {int(r["infiniband.bth.psn"]) for r in rows[:first] if r["ip.src"] == H0}
    assert expected in before
    after = [int(r["infiniband.bth.psn"]) for r in rows[first + 1 :] if r["ip.src"] == H0]
    resent = sorted(p for p in before if p >= expected)
    assert after[: len(resent)] == resent
    assert retx_psns[: len(resent)] == resent
