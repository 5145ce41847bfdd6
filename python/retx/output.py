"""Where results go: every file a run writes lies inside its output folder, and a folder is
written whole or not at all.

The names a scenario gives (`[output] fct_txt`, `pcap.file`, an ns-3 config's
`FCT_OUTPUT_FILE`) are checked by the Rust core before the run starts
(`retx::config::output::output_path`: relative, below the folder, plain components, not one of
the run's own outputs); `inside` checks them again at the moment of writing, so no path can
reach the file system without passing here. A run folder is written into a temporary sibling
and renamed into place (`staged`), so a failure part-way leaves the old results or none.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from retx import _native

RUN_OUTPUTS: tuple[str, ...] = tuple(_native.output_files())
"""The file names a run, sweep point, report or reproduction writes under fixed names."""

SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"


class OutputError(Exception):
    """An output folder that cannot be written as asked: printed as one line, exit status 2."""


def shown(path: str | Path) -> str:
    """A path as an error shows it: as written when it is plain text, else quoted with escapes,
    so a name holding a newline cannot break the one-line rule."""
    text = str(path)
    if text and text.isprintable() and text.strip() == text:
        return text
    return json.dumps(text)


def inside(folder: Path, relative: str) -> Path:
    """`folder / relative`, refusing any name that would land outside `folder` (the last check
    before a file is written; the scenario's names were checked before the run)."""
    parts = relative.split("/")
    if (not relative or relative.startswith(("/", "~")) or "\\" in relative or "\0" in relative
            or any(part in ("", ".", "..") or part.startswith(".") for part in parts)):
        raise OutputError(f"{json.dumps(relative)} is not a path inside the output folder")
    return folder.joinpath(*parts)


def holds_results(folder: Path) -> bool:
    return (folder / SUMMARY_FILE).exists() or (folder / FLOWS_FILE).exists()


def check_creatable(out: Path, where: str = "--out") -> None:
    """Refuses, before anything runs, an output location no folder can be made in: the nearest
    folder above it that exists must take a new entry (a read-only file system, a folder the
    user may not write, or a pseudo file system such as /proc would fail only after the run,
    when its results are written). Tried by making and removing an empty temporary folder
    there."""
    out = Path(out)
    base = next((p for p in [out, *out.parents] if p.exists()), None)
    if base is None or not base.is_dir():
        return  # "is a file" is refused by the callers, naming the file
    if base == out and out.is_dir():
        # The folder itself exists: results are staged beside it, in its parent.
        base = out.parent if out.parent.exists() else out
    try:
        probe = tempfile.mkdtemp(prefix=".retx-probe-", dir=base)
    except OSError as e:
        raise OutputError(f"{where} {shown(out)}: no folder can be made in {shown(base)} ({e.strerror or e})") from None
    os.rmdir(probe)


def check_target(out: Path, force: bool) -> None:
    """Refuses an output folder before anything runs: a file where the folder should be; a
    folder of results without `force`; a folder of other files (replacing it would delete
    them)."""
    if out.is_symlink() and not out.is_dir():
        raise OutputError(f"--out {shown(out)}: is a link to no folder")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {shown(out)}: is a file, not a folder")
    check_creatable(out)
    if not out.exists():
        return
    if holds_results(out):
        if not force:
            raise OutputError(f"--out {shown(out)}: already holds results; pass --force to overwrite them")
        return
    if any(out.iterdir()):
        raise OutputError(f"--out {shown(out)}: holds other files, not results; name a new or empty folder")


def check_folder(out: Path, force: bool) -> None:
    """Refuses the output folder of a reproduction before anything runs: a file where the folder
    should be, or a folder that is not empty unless `force` (its files are then written over in
    place; a reproduction writes no summary.json, so `check_target`'s test for results does not
    apply)."""
    if out.is_symlink() and not out.is_dir():
        raise OutputError(f"--out {shown(out)}: is a link to no folder")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {shown(out)}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise OutputError(f"--out {shown(out)}: is not empty; pass --force to write over what is in it")
    check_creatable(out)


@contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A temporary folder beside `out` to write a run's results into; when the block ends
    without an exception it replaces `out` (a folder of results, or an empty one) in one
    rename, and on an exception it is removed and `out` is left as it was."""
    out = Path(out)
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    try:
        yield temp
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    _publish(temp, out)


def _publish(temp: Path, out: Path) -> None:
    """Put `temp` in `out`'s place: an absent or empty `out` is replaced by a rename; an old
    results folder is renamed aside first and removed after, so at every moment either the
    old results or the new ones are there."""
    if not out.exists():
        os.replace(temp, out)
        return
    if not any(out.iterdir()):
        out.rmdir()
        os.replace(temp, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    os.replace(out, old)
    try:
        os.replace(temp, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
