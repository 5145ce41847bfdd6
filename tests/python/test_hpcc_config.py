"""`retx run` on an HPCC ns-3 simulator config: its topology and flow files, and fct.txt in
its format (compared with what the HPCC simulator itself wrote for the same flows)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli

PEERS = Path("/work/shared/peers/hpcc-ns3")
CONFIG = PEERS / "config_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt"
REFERENCE = PEERS / "reference" / "fct_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt"
FLOWS = 50
LINE = re.compile(r"[0-9a-f]{8} [0-9a-f]{8} \d+ \d+ \d+ \d+ \d+ \d+")

pytestmark = pytest.mark.skipif(not CONFIG.exists(), reason="needs the shared HPCC ns-3 inputs")


def short_config(tmp_path: Path) -> Path:
    """The shared DCQCN config on the real fat.txt and the flow file's first FLOWS flows,
    writing fct.txt into the output folder."""
    flow_lines = (PEERS / "flow_ws_320_l30_0.005.txt").read_text().splitlines()[1 : FLOWS + 1]
    (tmp_path / "flows.txt").write_text(f"{FLOWS}\n" + "\n".join(flow_lines) + "\n")
    text = CONFIG.read_text()
    text = text.replace("TOPOLOGY_FILE mix/fat.txt", f"TOPOLOGY_FILE {PEERS / 'fat.txt'}")
    text = text.replace("FLOW_FILE mix/flow_ws_320_l30_0.005.txt", "FLOW_FILE mix/flows.txt")
    text = text.replace("FCT_OUTPUT_FILE mix/fct_fat_flow_ws_320_l30_0.005_dcqcn_nomon.txt", "FCT_OUTPUT_FILE fct.txt")
    config = tmp_path / "config.txt"
    config.write_text(text)
    return config


def key(fields: list[str]) -> tuple[str, ...]:
    """sip dip sport dport size start_ns: what identifies a flow in fct.txt."""
    return tuple(fields[:6])


def test_run_writes_fct_txt_as_the_hpcc_simulator(tmp_path: Path) -> None:
    config = short_config(tmp_path)
    result = run_cli("run", str(config), "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    fct = (tmp_path / "out" / "fct.txt").read_text().splitlines()
    assert f"wrote {tmp_path / 'out' / 'fct.txt'}" in result.stdout
    assert not (tmp_path / "fct.txt").exists()
    assert len(fct) == FLOWS
    assert all(LINE.fullmatch(line) for line in fct), fct[:3]
    # Completion order: start + fct never decreases.
    ends = [int(f.split()[5]) + int(f.split()[6]) for f in fct]
    assert ends == sorted(ends)
    # The same flows as the reference's, and the same standalone FCT (topology and size only).
    reference = {key(f): f[7] for f in (line.split() for line in REFERENCE.read_text().splitlines())}
    ours = {key(f): f[7] for f in (line.split() for line in fct)}
    assert set(ours) <= set(reference)
    assert {k: reference[k] for k in ours} == ours


def test_fct_txt_keeps_its_relative_path_inside_the_output_folder(tmp_path: Path) -> None:
    config = short_config(tmp_path)
    config.write_text(config.read_text().replace("FCT_OUTPUT_FILE fct.txt", "FCT_OUTPUT_FILE mix/fct_x.txt"))
    result = run_cli("run", str(config), "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "out" / "mix" / "fct_x.txt").read_text().splitlines()) == FLOWS


@pytest.mark.parametrize("path", ["/tmp/retx-escaped-fct.txt", "../fct.txt", "mix/../../fct.txt", "summary.json"])
def test_an_fct_file_outside_the_output_folder_is_refused_before_the_run(tmp_path: Path, path: str) -> None:
    config = short_config(tmp_path)
    text = config.read_text().replace("FCT_OUTPUT_FILE fct.txt", f"FCT_OUTPUT_FILE {path}")
    config.write_text(text)
    line = next(n for n, l in enumerate(text.splitlines(), 1) if l.startswith("FCT_OUTPUT_FILE"))
    result = run_cli("run", str(config), "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 2
    assert result.stderr.startswith(f"retx: error: FCT_OUTPUT_FILE (line {line}): \"{path}\" "), result.stderr
    assert not (tmp_path / "out").exists() and not Path("/tmp/retx-escaped-fct.txt").exists()


def test_unsupported_key_is_one_line_naming_it(tmp_path: Path) -> None:
    config = short_config(tmp_path)
    config.write_text(config.read_text().replace("CC_MODE 1", "CC_MODE 10"))
    result = run_cli("run", str(config))
    assert result.returncode == 2
    line = next(n for n, l in enumerate(config.read_text().splitlines(), 1) if l.startswith("CC_MODE"))
    assert result.stderr == f"retx: error: CC_MODE (line {line}): 10 (HPCC-PINT) is not supported yet (supported: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)\n"
