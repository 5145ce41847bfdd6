"""Where a result came from: retx version, git commit, start time, host and scenario hash.

Every output folder carries this record twice: in summary.json under "provenance", and as
key-value metadata in each Parquet file it holds (keys prefixed "retx.", values strings; a
missing git commit is left out). `read_parquet_provenance` reads it back.
"""

from __future__ import annotations

import hashlib
import re
import socket
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import polars as pl

# Hex digits of the scenario hash that names a run: 48 bits, so a grid of a million points
# has a ~2e-3 chance of one collision.
HASH_CHARS = 12
PROVENANCE_FILE = "provenance.json"
PARQUET_PREFIX = "retx."
_SOURCE_DIR = Path(__file__).resolve().parent
_COMMIT = re.compile(r"[0-9a-f]{40}")


def scenario_hash(resolved: str) -> str:
    """A short, stable name for a resolved scenario text (SHA-256, first HASH_CHARS hex)."""
    return hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:HASH_CHARS]


@lru_cache(maxsize=1)
def version() -> str:
    """The installed retx's version (read once: every run's record holds it)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("retx")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def git_commit() -> Optional[str]:
    """HEAD of the git checkout retx runs from, when it runs from one (an editable install);
    None for an installed wheel, even one inside some other repository."""
    try:
        done = subprocess.run(
            ["git", "-C", str(_SOURCE_DIR), "rev-parse", "--show-toplevel", "HEAD"],
            capture_output=True, text=True, timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2:
        return None
    toplevel, commit = lines
    if (Path(toplevel) / "python" / "retx").resolve() != _SOURCE_DIR or not _COMMIT.fullmatch(commit):
        return None
    return commit


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def provenance(resolved: str, started_utc: str) -> dict[str, Any]:
    """The record for a run of `resolved` (the scenario with defaults filled in) begun at
    `started_utc`."""
    return {**provenance_without_scenario(started_utc), "scenario_hash": scenario_hash(resolved)}


def provenance_without_scenario(started_utc: str) -> dict[str, Any]:
    """What every record holds: retx version, git commit, start time and host."""
    return {
        "retx_version": version(),
        "git_commit": git_commit(),
        "started_utc": started_utc,
        "host": socket.gethostname(),
    }


def parquet_metadata(record: Optional[dict[str, Any]]) -> Optional[dict[str, str]]:
    """The record as Parquet key-value metadata: "retx.<field>" -> str, None fields left out."""
    if record is None:
        return None
    return {PARQUET_PREFIX + key: str(value) for key, value in record.items() if value is not None}


def write_parquet(frame: pl.DataFrame, path: str | Path, record: Optional[dict[str, Any]]) -> None:
    frame.write_parquet(path, metadata=parquet_metadata(record))


def read_parquet_provenance(path: str | Path) -> dict[str, str]:
    """The "retx." metadata of a Parquet file, prefix removed ({} if it has none)."""
    import polars as pl

    metadata = pl.read_parquet_metadata(path)
    return {key[len(PARQUET_PREFIX):]: value for key, value in metadata.items()
            if key.startswith(PARQUET_PREFIX)}
