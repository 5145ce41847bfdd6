"""The bad-input corpus (tests/bad/): every case is refused by `retx validate` with exit status
2 and exactly the one line in its `.expected` file, naming the field (or the HPCC config key).
Plus the CLI's boundary: a bug (a Rust panic, an unexpected exception) is one line
`retx: internal error: ...` with exit status 3, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import retx.cli
from conftest import REPO, SMALL_SCENARIO, run_cli
from retx._native import PanicException

BAD = REPO / "tests" / "bad"
CASES = sorted(p.name for p in BAD.iterdir() if p.suffix in (".toml", ".txt") and p.is_file())
# What an error line starts with: the field's dotted path (topology.file, loss[1].rate), an HPCC
# config key with its line when the config gives it (CC_MODE (line 3)), or for text that is not
# TOML at all, the file.
FIELD = re.compile(r"retx: error: ([a-z_][a-z0-9_-]*(\[\d+\])?(\.[a-z_][a-z0-9_-]*(\[\d+\])?)*|[A-Z][A-Z0-9_]*( \(line \d+\))?|[\w.-]+\.toml): ")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Runs the CLI's entry point in this process (a subprocess per case would take a minute):
    its exit status and stderr."""
    import sys

    argv = sys.argv
    sys.argv = ["retx", *args]
    try:
        retx.cli.main()
        status = 0
    except SystemExit as end:
        status = end.code if isinstance(end.code, int) else 1
    finally:
        sys.argv = argv
    return status, capsys.readouterr().err


def test_the_corpus_is_large_and_every_case_has_its_expected_line() -> None:
    assert len(CASES) >= 100, len(CASES)
    kinds = {
        "toml": [c for c in CASES if c.endswith(".toml") and not c.startswith("hpcc-") and not c.startswith("cdf-")],
        "hpcc topology": [c for c in CASES if c.startswith("hpcc-topo")],
        "hpcc flows": [c for c in CASES if c.startswith("hpcc-flows")],
        "hpcc config": [c for c in CASES if c.endswith(".txt")],
        "cdf": [c for c in CASES if c.startswith("cdf-")],
    }
    assert all(len(v) >= 8 for v in kinds.values()), {k: len(v) for k, v in kinds.items()}
    for case in CASES:
        expected = (BAD / case).with_suffix(".expected")
        assert expected.is_file(), f"{case} has no {expected.name}"
        lines = expected.read_text().splitlines()
        assert len(lines) == 1 and FIELD.match(lines[0]), f"{expected.name}: {lines!r} is not one line naming a field"


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_with_its_line(case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BAD)  # paths in the messages are then relative: ./data/...
    status, err = cli(capsys, "validate", case)
    assert (status, err) == (2, (BAD / case).with_suffix(".expected").read_text())


def test_the_installed_command_gives_the_same_lines() -> None:
    for case in ["hpcc-topo-disconnected.toml", "flow-size-u64-max.toml", "config-buffer-huge.txt", "name-parent-path.toml"]:
        result = run_cli("validate", case, cwd=BAD)
        assert (result.returncode, result.stderr) == (2, (BAD / case).with_suffix(".expected").read_text()), case


def test_a_name_that_is_a_path_writes_nothing(tmp_path: Path) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (work / "x.toml").write_text(SMALL_SCENARIO.replace('name = "small"', 'name = "../../escaped"'))
    result = run_cli("run", "x.toml", "--quiet", cwd=work)
    assert result.returncode == 2 and result.stderr.startswith("retx: error: name: "), result.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["a", "a/b", "a/b/x.toml"]


def test_a_byte_order_mark_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SMALL_SCENARIO.encode())
    status, err = cli(capsys, "validate", str(path))
    assert (status, err) == (0, "")


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_device_as_the_scenario_is_refused(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = cli(capsys, "validate", path)
    assert (status, err) == (2, f"retx: error: {path}: not a regular file (a device, pipe or socket)\n")


def test_a_rust_panic_is_an_internal_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, small_scenario_file: Path) -> None:
    def panics(*_args: object, **_kwargs: object) -> None:
        raise PanicException("index out of bounds")

    monkeypatch.setattr(retx.cli, "run_scenario", panics)
    monkeypatch.setattr(retx.cli, "last_panic", lambda: "crates/retx/src/x.rs:10: index out of bounds")
    status, err = cli(capsys, "run", str(small_scenario_file), "--quiet")
    assert status == 3
    assert err == "retx: internal error: panic at crates/retx/src/x.rs:10: index out of bounds (a bug in retx; please report it)\n"


def test_an_unexpected_exception_is_an_internal_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, small_scenario_file: Path) -> None:
    def fails(*_args: object, **_kwargs: object) -> None:
        raise KeyError("flows")

    monkeypatch.setattr(retx.cli, "run_scenario", fails)
    status, err = cli(capsys, "run", str(small_scenario_file), "--quiet")
    assert status == 3
    assert re.fullmatch(r"retx: internal error: KeyError: 'flows' at test_bad_inputs\.py:\d+ \(a bug in retx; please report it\)\n", err), err
