"""PFC through the CLI: the warning line for a configuration that cannot be lossless (printed
by `retx validate` and `retx run`, listed in summary.json), and a PFC deadlock reported in
summary.json with its ports, the run ending there."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

# 20 senders at 40 Gbps into h0 through a 1 MB buffer, 100 KB each at line rate.
INCAST = """\
name = "incast-pfc"
duration = "10ms"
[topology]
kind = "single-switch"
hosts = 21
host_link = "40Gbps"
[switch]
buffer = "1MB"
pfc = {{ enabled = true, headroom = "{headroom}" }}
[transport]
recovery = "gbn"
cc = "none"
[workload]
kind = "incast"
receiver = "h0"
fan_in = 20
size = "100KB"
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_validate_warns_when_pfc_cannot_be_lossless(tmp_path: Path) -> None:
    lossy = run_cli("validate", str(write(tmp_path, "off.toml", INCAST.format(headroom="off"))))
    assert lossy.returncode == 0, lossy.stderr
    lines = lossy.stderr.strip().splitlines()
    # 21 queues x (256 KB xoff + 14 352 B of headroom) = 5 677 392 B > 1 MB.
    assert lines == ['retx: warning: switch.pfc: cannot be lossless: switch "sw0" may have to hold 5677392 B '
                     '(every lossless ingress queue at xoff = 256000 B plus what arrives after its PAUSE) in '
                     'switch.buffer = 1000000 B; set switch.pfc.headroom = "auto"']
    assert 'headroom = "off"' in lossy.stdout  # the resolved scenario still goes to stdout
    auto = run_cli("validate", str(write(tmp_path, "auto.toml", INCAST.format(headroom="auto"))))
    assert auto.returncode == 0 and auto.stderr == ""


def test_run_lists_the_warning_in_summary_and_auto_headroom_is_lossless(tmp_path: Path) -> None:
    off = run_cli("run", str(write(tmp_path, "off.toml", INCAST.format(headroom="off"))), "--out", str(tmp_path / "off"), "--quiet")
    assert off.returncode == 0, off.stderr
    assert off.stderr.startswith("retx: warning: switch.pfc: cannot be lossless")
    summary = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert len(summary["warnings"]) == 1 and summary["warnings"][0].startswith("switch.pfc: cannot be lossless")
    assert summary["drops_buffer"] > 0 and summary["pfc_deadlock"] is None

    auto = run_cli("run", str(write(tmp_path, "auto.toml", INCAST.format(headroom="auto"))), "--out", str(tmp_path / "auto"), "--quiet")
    assert auto.returncode == 0, auto.stderr
    summary = json.loads((tmp_path / "auto" / "summary.json").read_text())
    assert summary["warnings"] == []
    assert (summary["drops_buffer"], summary["flows_completed"]) == (0, 20)
    assert summary["pfc_pauses"] > 0


def ring(tmp_path: Path) -> Path:
    """Five switches in a ring, each host sending two hops clockwise at line rate: a cyclic
    buffer dependency (see crates/retx/tests/pfc_lossless.rs)."""
    links = [f"{i} {5 + i} 40Gbps 1000ns 0" for i in range(5)]
    links += [f"{5 + i} {5 + (i + 1) % 5} 40Gbps 1000ns 0" for i in range(5)]
    (tmp_path / "ring.txt").write_text("10 5 10\n5 6 7 8 9\n" + "\n".join(links) + "\n")
    pairs = ", ".join(f'["h{i}", "h{(i + 2) % 5}"]' for i in range(5))
    return write(tmp_path, "ring.toml", f"""\
name = "ring"
duration = "20ms"
[topology]
kind = "hpcc-file"
file = "ring.txt"
[switch]
pfc = {{ enabled = true, xoff = "40KB", xon = "30KB", headroom = "auto" }}
[transport]
recovery = "gbn"
cc = "none"
[workload]
kind = "long-flows"
pairs = [{pairs}]
""")


def test_a_deadlock_is_reported_in_summary_with_its_ports_and_the_run_ends(tmp_path: Path) -> None:
    result = run_cli("run", str(ring(tmp_path)), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "PFC deadlock at" in result.stdout and "sw5->sw6" in result.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    deadlock = summary["pfc_deadlock"]
    links = [port["link"] for port in deadlock["ports"]]
    # The cycle in wait-for order, starting from the lowest port id.
    assert links == ["sw5->sw6", "sw6->sw7", "sw7->sw8", "sw8->sw9", "sw9->sw5"]
    assert all(isinstance(port["port"], int) for port in deadlock["ports"])
    # Stuck for the 2 ms timeout, found at a 1 ms tick; the run ended there, not at 20 ms.
    assert 2_000 <= deadlock["detected_at_us"] < 10_000
    assert summary["sim_time_us"] == deadlock["detected_at_us"]
    assert {s["link"] for s in summary["pfc_storms"]} >= set(links)
