"""Numbers and paths the commands beside `run` take (calibrate, trace, memory, sweep, report,
reproduce), checked as `run` checks a scenario's before any work starts (issue 41 item 3): an
integer within its range and within the width of the Rust type it becomes (a Python int has
none, so 2^64 would otherwise reach the binding and fail there as an internal error), a seed
within the random generator's range, a list sized by one number checked before it is expanded,
an output path that is an existing folder (or a file) refused before the run. Each refusal is
one ScenarioError line naming the option or key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from retx._native import ScenarioError
from retx.output import OutputError, check_creatable, shown

U32_MAX = 2**32 - 1
# A scenario's `seed` is a TOML integer (i64) read as the generator's u64 seed: 0 to 2^63 - 1.
SEED_MAX = 2**63 - 1
# The most seeds a sweep or a calibration expands one count into, and the most points a sweep
# runs: far beyond what 2 cores finish, small enough that the list itself is a few MB.
MAX_SEEDS = 10_000
MAX_POINTS = 100_000
# Processes at once: beyond this, a pool would exhaust the machine's process table first.
MAX_WORKERS = 1024
# Where a sweep's points and a calibration's runs go (`--executor`).
EXECUTORS = ("local", "ray")
# Threads every run of this process takes (`--threads N`; read by the core too, over a
# scenario's [run] threads).
THREADS_ENV = "RETX_THREADS"


def default_workers() -> int:
    """Runs at once when none is asked for: one per core, divided by the threads each run takes
    (`RETX_THREADS`), so runs x threads stay about one per core: more would leave the runs'
    partitions waiting for one another at every window."""
    import os

    try:
        threads = max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        threads = 1  # the core refuses it, naming the variable
    return max(1, (os.cpu_count() or 1) // threads)


def integer(value: Any, where: str, low: int, high: int) -> int:
    """`value` as an int from `low` to `high`; a bool, a float or text is refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where}: must be a whole number from {low} to {high}, not {value!r}")
    if value < low:
        raise ScenarioError(f"{where}: must be at least {low}, not {value}")
    if value > high:
        raise ScenarioError(f"{where}: {value} is out of range (at most {high})")
    return value


def workers(value: Optional[int], where: str = "--workers") -> Optional[int]:
    return None if value is None else integer(value, where, 1, MAX_WORKERS)


def seed(value: Any, where: str) -> int:
    """A seed the generator takes: a whole number from 0 to 2^63 - 1."""
    return integer(value, where, 0, SEED_MAX)


def seed_list(seeds: Any, first: Any, where: str) -> list[int]:
    """A count N (seeds first, first + 1, .., first + N - 1: N checked before the list is made,
    and the last seed within range) or a list of distinct seeds."""
    if isinstance(seeds, bool) or not isinstance(seeds, (int, list, tuple)):
        raise ScenarioError(f"{where}: must be a count or a list of seeds, not {seeds!r}")
    if isinstance(seeds, int):
        count = integer(seeds, where, 1, MAX_SEEDS)
        start = seed(first, "seed") if isinstance(first, int) and not isinstance(first, bool) else 1
        if start + count - 1 > SEED_MAX:
            raise ScenarioError(f"{where}: {count} seeds from seed {start} run past the largest seed, {SEED_MAX}")
        return list(range(start, start + count))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ScenarioError(f"{where}: a list of seeds must hold integers, not {list(seeds)!r}")
    if len(seeds) > MAX_SEEDS:
        raise ScenarioError(f"{where}: {len(seeds)} seeds, more than the {MAX_SEEDS} allowed")
    for s in seeds:
        seed(s, where)
    if len(set(seeds)) != len(seeds):
        raise ScenarioError(f"{where}: {list(seeds)!r} repeats a seed")
    return list(seeds)


def output_file(path: Path, where: str = "--out") -> Path:
    """A file to write: refused when it is a folder, a link to one, or below a file."""
    path = Path(path)
    if path.is_dir():
        raise ScenarioError(f"{where} {shown(path)}: is a folder, not a file")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ScenarioError(f"{where} {shown(path)}: {shown(parent)} is a file, not a folder")
            break
    try:
        check_creatable(path.parent, where)
    except OutputError as e:
        raise ScenarioError(f"{where} {shown(path)}: {str(e).split(': ', 1)[1]}") from None
    return path


def output_folder(path: Path, where: str = "--out") -> Path:
    """A folder to write into (a sweep or calibration resumes in its own folder): refused when
    it is a file or below one."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ScenarioError(f"{where} {shown(path)}: is a file, not a folder")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ScenarioError(f"{where} {shown(path)}: {shown(parent)} is a file, not a folder")
            break
    try:
        check_creatable(path, where)
    except OutputError as e:
        raise ScenarioError(str(e)) from None
    return path


def input_folder(path: Path, where: str) -> Path:
    """A folder to read (retx report's): refused when absent or not a folder."""
    path = Path(path)
    if not path.exists():
        raise ScenarioError(f"{where} {shown(path)}: no such folder")
    if not path.is_dir():
        raise ScenarioError(f"{where} {shown(path)}: is a file, not a folder")
    return path
