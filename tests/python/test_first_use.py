"""What a new user meets first (issue 46, item 7): `retx.plots` after `import retx`, column
descriptions printed whole, `retx run --set`, `retx report --out`, "did you mean" on a
misspelt field, and README naming what a run reads and every command."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import retx
from conftest import REPO, SMALL_SCENARIO, run_cli
from retx.results import _SCHEMA, describe


def test_plots_is_reachable_after_import_retx() -> None:
    # A fresh interpreter: in this one another test may have imported retx.plots already.
    code = "import retx; print(retx.plots.plot_throughput.__name__, retx.plots.plot_fct_cdf.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["plot_throughput", "plot_fct_cdf"]


@pytest.mark.parametrize("table", sorted(_SCHEMA))
def test_describe_prints_every_description_whole(table: str) -> None:
    shown = str(describe(table))
    for name, _dtype, _unit, description in _SCHEMA[table]:
        assert description in shown, f"{table}.{name}: description cut"
    assert "…" not in shown
    assert repr(describe(table)) == shown
    # Still a polars table underneath.
    assert describe(table)["column"].to_list() == [row[0] for row in _SCHEMA[table]]


def test_run_set_overrides_fields_as_sweep_set_reads_them(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    done = run_cli("run", "s.toml", "--out", "out", "--quiet", "--set", "transport.cc=hpcc",
                   "--set", "nic.mtu=2048", "--set", "seed=9", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    resolved = tomllib.loads((tmp_path / "out" / "scenario.toml").read_text())
    assert resolved["transport"]["cc"] == "hpcc"
    assert resolved["nic"]["mtu"] == 2048  # read as a TOML integer, as sweep's --set reads it
    assert resolved["seed"] == 9


@pytest.mark.parametrize("option, said", [
    ("transport.cc=dcqcn,hpcc", "one value per key; sweep several with `retx sweep`"),
    ("transport.cc", "expected key=value"),
    ("transport.ccc=hpcc", "transport.ccc"),
])
def test_run_set_errors_are_one_line(tmp_path: Path, option: str, said: str) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    done = run_cli("run", "s.toml", "--out", "out", "--quiet", "--set", option, cwd=tmp_path)
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_report_out_writes_the_page_where_asked(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SMALL_SCENARIO)
    assert run_cli("run", "s.toml", "--out", "run", "--quiet", cwd=tmp_path).returncode == 0
    done = run_cli("report", "run", "--out", "pages/small.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "pages" / "small.html"
    assert page.is_file() and "retx run: small" in page.read_text()
    assert not (tmp_path / "run" / "report.html").exists()
    assert str(Path("pages") / "small.html") in done.stdout
    (tmp_path / "shared").mkdir()
    assert run_cli("report", "run", "--out", "shared", cwd=tmp_path).returncode == 0
    assert (tmp_path / "shared" / "report.html").is_file()
    bad = run_cli("report", "run", "--out", "page.png", cwd=tmp_path)
    assert bad.returncode == 2 and "name an .html file or a folder" in bad.stderr


@pytest.mark.parametrize("section, wrong, right", [
    ("topology", "spine = 2", "spines"),
    ("transport", "recovry = \"gbn\"", "recovery"),
])
def test_a_misspelt_field_gets_did_you_mean(section: str, wrong: str, right: str) -> None:
    text = SMALL_SCENARIO.replace(f"[{section}]\n", f"[{section}]\n{wrong}\n", 1)
    if section == "topology":
        text = text.replace('kind = "single-switch"\nhosts = 2', 'kind = "leaf-spine"')
    with pytest.raises(retx.ScenarioError) as error:
        retx.Scenario.from_str(text).resolved()
    message = str(error.value)
    assert f"did you mean `{right}`?" in message and "expected one of" not in message
    assert "\n" not in message and message.startswith(f"{section}.")


def test_a_misspelt_value_gets_did_you_mean_too() -> None:
    with pytest.raises(retx.ScenarioError, match=r"transport.recovery: unknown variant `xpas`; did you mean `xpass`\?"):
        retx.Scenario.from_str(SMALL_SCENARIO.replace('recovery = "gbn"', 'recovery = "xpas"')).resolved()


def test_a_name_close_to_none_still_lists_the_known_ones() -> None:
    with pytest.raises(retx.ScenarioError, match="expected `recovery` or `cc`$") as error:
        retx.Scenario.from_str(SMALL_SCENARIO.replace("[transport]\n", "[transport]\nzzzzzz = 1\n")).resolved()
    assert "did you mean" not in str(error.value)


def test_readme_names_the_inputs_and_commands_in_its_first_two_screens() -> None:
    text = (REPO / "README.md").read_text()
    # Two screens of a terminal: about 100 lines.
    first = "\n".join(text.splitlines()[:100])
    assert "```sh\nmake demo\nmake test\n```" in text  # the quick start stays those two commands
    for read in (".toml", "config.txt", ".cm"):
        assert read in first, read
    for command in ("run", "sweep", "report", "reproduce", "calibrate"):
        assert re.search(rf"retx {command}\b", first), command
    assert "collective" in first
