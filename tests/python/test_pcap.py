"""`[output] pcap` end to end: `retx run` writes a capture that tshark dissects as RoCEv2
(InfiniBand BTH over UDP 4791), in which a go-back-N sender under loss receives NAKs and then
resends exactly what the simulation counts as retransmitted; and every scheme's frames
dissect cleanly: no errors, no frame taken for another protocol, no unknown opcode but
the two Wireshark has no name for (checked to be exactly those)."""

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
# Headers of a RoCEv2 frame without FCS: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; the
# first packet of a message adds a 16 B RETH.
HEADERS = 58
RETH = 16
WRITE_OPCODES = {0x06, 0x07, 0x08, 0x0A}  # RC RDMA WRITE First, Middle, Last, Only
WRITE_FIRST_OR_ONLY = {0x06, 0x0A}
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
    assert {int(r["infiniband.bth.opcode"]) for r in sent} <= WRITE_OPCODES
    assert {int(r["infiniband.bth.opcode"]) for r in received} == {ACKNOWLEDGE}

    # What h0 resent: every data frame whose PSN it had sent before.
    seen: set[int] = set()
    retx_psns: list[int] = []
    retx_bytes = 0
    for r in sent:
        psn = int(r["infiniband.bth.psn"])
        reth = RETH if int(r["infiniband.bth.opcode"]) in WRITE_FIRST_OR_ONLY else 0
        payload = int(r["frame.len"]) - HEADERS - reth - int(r["infiniband.bth.padcnt"])
        if psn in seen:
            retx_psns.append(psn)
            retx_bytes += payload
        seen.add(psn)
    assert len(seen) == -(-SIZE // MTU)
    assert retx_bytes == flow["retx_bytes"] > 0

    naks = [i for i, r in enumerate(rows) if r["infiniband.aeth.syndrome"] and int(r["infiniband.aeth.syndrome"]) == NAK_PSN_SEQUENCE_ERROR]
    assert len(naks) == flow["naks"] == flow["notifications"] > 0, "a NAK per NAK the sender counted"
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


# Opcodes Wireshark has no name for, and why retx still sends them: RoCEv2's CNP is 0x81
# (Annex A17; the ConnectX-4 Lx capture in wire/bth.rs), while Wireshark names only
# InfiniBand's CNP, 0x80 (`tshark -G values`); 0xC0-0xC4 are manufacturer-specific opcodes,
# which STRIDE's connection set-up and tear-down use (wire/frame.rs).
CNP = 0x81
VENDOR = range(0xC0, 0x100)
# One 3-to-1 incast per kind of frame: data, ACK, NAK (go-back-N), SACK (IRN), NACK with holes (MELO),
# RACK (Go-Back-ONE), CNP (DCQCN), and STRIDE's SYN/FIN.
SCHEMES = [("gbn", "none"), ("irn", "dcqcn"), ("melo", "dcqcn"), ("gbone", "none"), ("stride", "stride")]
CLEAN_FIELDS = ["frame.protocols", "frame.len", "infiniband.bth.opcode", "_ws.expert.severity", "_ws.malformed"]
CNP_FRAME_LEN = 74  # headers 58 B + 16 reserved bytes, as the ConnectX-4 Lx capture


def scheme_scenario(recovery: str, cc: str) -> str:
    return f"""\
name = "pcap-{recovery}"
seed = 5
duration = "2ms"

[topology]
kind = "single-switch"
hosts = 4
host_link = "40Gbps"
link_delay = "2us"

[transport]
recovery = "{recovery}"
cc = "{cc}"

[[loss]]
at = "link:sw0->h3"
rate = 0.02

[workload]
kind = "flow-list"
flows = [{{ src = "h0", dst = "h3", size = "1MB" }}, {{ src = "h1", dst = "h3", size = "1MB" }}, {{ src = "h2", dst = "h3", size = "1MB" }}]

[output]
pcap = {{ hosts = ["h0", "h3"] }}
"""


def known_opcodes() -> set[int]:
    """The BTH opcodes this tshark has a name for."""
    assert TSHARK is not None
    values = subprocess.run([TSHARK, "-G", "values"], capture_output=True, text=True, check=True, timeout=120).stdout
    return {int(v.split("\t")[2]) for v in values.splitlines() if v.startswith("V\tinfiniband.bth.opcode\t")}


@pytest.mark.parametrize("recovery,cc", SCHEMES)
def test_every_frame_dissects_cleanly(tmp_path: Path, recovery: str, cc: str) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(scheme_scenario(recovery, cc))
    out = tmp_path / "out"
    run = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    lines = subprocess.run(
        [TSHARK, "-r", str(out / "trace.pcap"), "-T", "fields", "-E", "separator=;", "-E", "occurrence=a",
         *[a for f in CLEAN_FIELDS for a in ("-e", f)]],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout.splitlines()
    assert len(lines) > 100, "a capture worth checking"
    rows = [dict(zip(CLEAN_FIELDS, line.split(";"))) for line in lines]
    known = known_opcodes()
    # Nothing claimed by another dissector (Wireshark once took RC SEND messages for
    # RPC-over-RDMA), nothing malformed, no expert error or warning.
    protocols = {r["frame.protocols"] for r in rows}
    assert protocols <= {"eth:ethertype:ip:udp:infiniband", "eth:ethertype:ip:udp:infiniband:data"}, protocols
    assert not [r for r in rows if r["_ws.malformed"]]
    severities = {s for r in rows for s in r["_ws.expert.severity"].split(",") if s}
    # Wireshark's expert severities: 2097152 chat, 4194304 note, 6291456 warn, 8388608 error.
    assert all(int(s) < 6291456 for s in severities), severities
    unknown = [r for r in rows if int(r["infiniband.bth.opcode"]) not in known]
    opcodes = {int(r["infiniband.bth.opcode"]) for r in rows}
    # The unknown ones are exactly RoCEv2 CNPs (their length) and STRIDE's vendor opcodes.
    for r in unknown:
        op = int(r["infiniband.bth.opcode"])
        assert op == CNP and int(r["frame.len"]) == CNP_FRAME_LEN or (recovery == "stride" and op in VENDOR), r
    assert (CNP in opcodes) == (cc == "dcqcn"), opcodes
