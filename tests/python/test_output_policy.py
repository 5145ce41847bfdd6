"""The output policy (`retx.output`, `retx::config::output`): every file a run writes lies inside
its output folder, a name a scenario gives is checked before the run, and a folder is written
whole or not at all. Also the one-line rule for hostile paths and nesting, and the warning of a
run whose flows did not all finish."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import retx.cli
import retx.plots
from conftest import SMALL_SCENARIO, run_cli
from retx.output import RUN_OUTPUTS

WATCHED = SMALL_SCENARIO.replace("[workload]", """[output]
sample_interval = "100us"
queues = ["sw0->h1"]
cc_flows = [0]
pools = ["h0"]
fct_txt = "mix/fct.txt"
pcap = { hosts = ["h0"], max_packets = 50, file = "traces/h0.pcap" }

[workload]""")


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI's entry point in this process: exit status, stdout, stderr."""
    argv = sys.argv
    sys.argv = ["retx", *args]
    try:
        retx.cli.main()
        status = 0
    except SystemExit as end:
        status = end.code if isinstance(end.code, int) else 1
    finally:
        sys.argv = argv
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_run_writes_only_its_declared_outputs_and_the_files_its_scenario_names(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(WATCHED)
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = files_under(tmp_path / "out")
    named = {"mix/fct.txt", "traces/h0.pcap"}
    assert named <= set(written)
    assert [f for f in written if f not in named and f not in RUN_OUTPUTS] == []
    # Nothing beside the folder: no temporary sibling left, nothing in the scenario's folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.toml"]


@pytest.mark.parametrize("name, why", [
    ("/tmp/retx-policy-escape.pcap", "is absolute"),
    ("../escape.pcap", "leaves the output folder"),
    ("traces/../../escape.pcap", "leaves the output folder"),
    ("a//b.pcap", "leaves the output folder or has an empty component"),
    ("summary.json", "is one of the run's own outputs"),
    ("flows.parquet/x.pcap", "is one of the run's own outputs"),
    (".hidden.pcap", "has a component starting with '.'"),
    ("CON.pcap", "names a device"),
    ("a\\u0000b.pcap", "holds a control character"),
    ("line\\nbreak.pcap", "holds a control character"),
    ("x" * 300 + ".pcap", "has a component of 305 bytes"),
    ("mix/fct.txt", "collides with output.fct_txt"),
])
def test_a_hostile_output_name_is_refused_before_the_run(tmp_path: Path, name: str, why: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.toml").write_text(WATCHED.replace('file = "traces/h0.pcap"', f'file = "{name}"'))
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=work)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("retx: error: output.pcap.file: ") and why in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    # Refused before anything ran: no output folder, nothing anywhere else.
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["s.toml", "work"]
    assert not Path("/tmp/retx-policy-escape.pcap").exists()


def test_an_absolute_fct_txt_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(WATCHED.replace('fct_txt = "mix/fct.txt"', f'fct_txt = "{tmp_path / "fct.txt"}"'))
    result = run_cli("validate", "s.toml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f'retx: error: output.fct_txt: "{tmp_path / "fct.txt"}" is absolute'), result.stderr


def test_a_failure_while_writing_leaves_the_old_results(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SMALL_SCENARIO)
    out = tmp_path / "out"
    assert cli(capsys, "run", str(scenario), "--out", str(out), "--quiet")[0] == 0
    before = {name: (out / name).read_bytes() for name in files_under(out)}

    def fails(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(retx.plots, "plot_fct_cdf", fails)
    scenario.write_text(SMALL_SCENARIO.replace("seed = 7", "seed = 8"))
    status, _, err = cli(capsys, "run", str(scenario), "--out", str(out), "--quiet", "--force")
    assert status == 3 and err.startswith("retx: internal error: OSError"), err
    assert {name: (out / name).read_bytes() for name in files_under(out)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.toml"], "no temporary folder left"


def test_force_replaces_the_folder_whole(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    assert run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out" / "fct_cdf.png").exists()
    # This run finishes no flow, so it draws no CDF: the old one must not survive beside it.
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO.replace('duration = "2ms"', 'duration = "1us"'))
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", "--force", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "out" / "fct_cdf.png").exists()
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["flows_completed"] == 0


def test_an_out_folder_of_other_files_is_refused_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    result = run_cli("run", "s.toml", "--out", "mine", "--quiet", "--force", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "retx: error: --out mine: holds other files, not results; name a new or empty folder\n"
    assert files_under(tmp_path / "mine") == ["notes.txt"]


def test_a_run_that_leaves_flows_unfinished_says_so(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO.replace('duration = "2ms"', 'duration = "20us"'))
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("retx: warning: 1 of 1 flows did not finish (the run reached its duration (20us) first); "
                             "their FCTs are missing from the results\n")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["unfinished_flows"] == {"count": 1, "never_started": 0, "reason": "the run reached its duration (20us) first"}
    # A run that finishes its flows has no such entry.
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", "--force", cwd=tmp_path)
    assert result.stderr == "" and json.loads((tmp_path / "out" / "summary.json").read_text())["unfinished_flows"] is None


def test_flows_that_start_after_the_run_ends_are_counted(tmp_path: Path) -> None:
    late = SMALL_SCENARIO.replace('start = "0us"', 'start = "5ms"')
    (tmp_path / "s.toml").write_text(late)
    result = run_cli("run", "s.toml", "--out", "out", "--quiet", cwd=tmp_path)
    assert "1 of 1 flows did not finish (the run reached its duration (2ms) first, 1 of them never started)" in result.stderr


def test_deep_nesting_is_one_line_not_a_recursion_error(tmp_path: Path) -> None:
    (tmp_path / "deep.toml").write_text('name = "d"\nx = ' + "[" * 500 + "]" * 500 + "\n")
    result = run_cli("validate", "deep.toml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "retx: error: x: is nested too deeply (tables and arrays at most about 80 levels deep)\n")


def test_a_path_with_a_newline_is_quoted_on_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "we\nird"
    folder.mkdir()
    result = run_cli("validate", str(folder / "nope.toml"))
    assert result.returncode == 2
    assert result.stderr == f"retx: error: {json.dumps(str(folder / 'nope.toml'))}: no such file\n"


def test_a_sweep_point_keeps_the_scenarios_file_names_inside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(WATCHED)
    result = run_cli("sweep", "s.toml", "--seeds", "2", "--out", "sweep", "--quiet", "--workers", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    points = sorted((tmp_path / "sweep" / "points").iterdir())
    assert len(points) == 2
    for point in points:
        assert {"mix/fct.txt", "traces/h0.pcap", "summary.json"} <= set(files_under(point))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml", "sweep"]
