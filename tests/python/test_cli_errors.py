"""Every user error: exit status 2, one line `retx: error: ...` naming the field, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SMALL_SCENARIO, run_cli


def assert_one_line_error(result, *must_mention: str) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("retx: error: "), line
    for word in must_mention:
        assert word in line, f"{word!r} not in {line!r}"
    return line


BROKEN_SCENARIOS = {
    "unknown key": (
        SMALL_SCENARIO.replace("hosts = 2", "hosts = 2\nhostz = 3"),
        ["topology", "hostz"],
    ),
    "wrong unit": (
        SMALL_SCENARIO.replace('host_link = "40Gbps"', 'host_link = "40Gbs"'),
        ["topology.host_link", "40Gbs"],
    ),
    "out of range": (
        SMALL_SCENARIO.replace("rate = 0.01", "rate = 1.5"),
        ["loss", "rate"],
    ),
    "unknown host in pairs": (
        SMALL_SCENARIO.split("[workload]")[0]
        + '[workload]\nkind = "long-flows"\npairs = [["h0", "h9"]]\n',
        ["pairs", "h9"],
    ),
    "unknown host in flows": (
        SMALL_SCENARIO.replace('dst = "h1"', 'dst = "h9"'),
        ["flows", "h9"],
    ),
    "missing required field": (
        SMALL_SCENARIO.replace('kind = "flow-list"\n', ""),
        ["workload", "kind"],
    ),
    "not TOML": (SMALL_SCENARIO.replace("seed = 7", "seed = "), ["invalid TOML"]),
}


@pytest.mark.parametrize("case", list(BROKEN_SCENARIOS))
@pytest.mark.parametrize("command", ["run", "validate"])
def test_invalid_scenario_is_one_line_error(tmp_path: Path, case: str, command: str) -> None:
    text, must_mention = BROKEN_SCENARIOS[case]
    path = tmp_path / "broken.toml"
    path.write_text(text)
    out = tmp_path / "out"
    extra = ["--out", str(out)] if command == "run" else []
    assert_one_line_error(run_cli(command, str(path), *extra), *must_mention)
    assert not out.exists()


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert_one_line_error(run_cli("run", str(missing)), str(missing), "no such file")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("run", str(tmp_path)), str(tmp_path))


def test_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "binary.toml"
    path.write_bytes(b"name = \"\xff\xfe\"\n")
    assert_one_line_error(run_cli("run", str(path)), str(path), "UTF-8")


def test_unknown_reproduction_lists_known_ones() -> None:
    assert_one_line_error(run_cli("reproduce", "no-such-figure"), "no-such-figure", "melo-fig5a")


def test_reproduce_refuses_a_folder_that_is_not_empty_unless_forced(tmp_path: Path) -> None:
    """`retx reproduce --out` refuses a folder holding anything, before any run (as `retx run`
    refuses a folder of results), and writes over it with --force; melo-fig6a --quick: ~1 s."""
    out = tmp_path / "fig6a"
    out.mkdir()
    (out / "table.csv").write_text("old\n")
    refused = run_cli("reproduce", "melo-fig6a", "--quick", "--out", str(out))
    assert_one_line_error(refused, str(out), "not empty", "--force")
    assert refused.stdout == ""  # checked before any work
    assert (out / "table.csv").read_text() == "old\n"
    assert_one_line_error(run_cli("reproduce", "melo-fig6a", "--quick", "--out", str(out / "table.csv")),
                          "is a file")
    forced = run_cli("reproduce", "melo-fig6a", "--quick", "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert (out / "table.csv").read_text().startswith("loss_rate,")
    assert (out / "claims.csv").read_text().startswith("claim,source,retx,tolerance,verdict")
    assert "verdict" in forced.stdout
    # A new or empty folder needs no --force.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli("reproduce", "melo-fig6a", "--quick", "--out", str(empty)).returncode == 0
