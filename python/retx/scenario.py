"""Scenario files: load, override fields, resolve defaults (validation lives in Rust)."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import tomli_w

from retx import _native
from retx._native import ScenarioError
from retx.output import shown

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# The table of a scenario file that declares a grid for `retx sweep` (`retx run` refuses it).
SWEEP_TABLE = "sweep"


class Scenario:
    """A scenario as TOML text plus the folder its relative paths are resolved against.

    The text is kept verbatim (not re-serialised) until an override changes it, so the Rust
    validator's messages refer to what the user wrote.
    """

    def __init__(self, text: str, base_dir: str | Path = ".", origin: str = "<string>") -> None:
        self.text = text.removeprefix("\ufeff")
        self.base_dir = Path(base_dir)
        self.origin = origin
        self.data = _parse(self.text, origin)

    @classmethod
    def from_toml(cls, path: str | Path) -> Scenario:
        path = Path(path)
        return cls(_read_text(path), base_dir=path.parent, origin=str(path))

    @classmethod
    def from_hpcc_config(cls, path: str | Path) -> Scenario:
        """An HPCC ns-3 simulator config file (`KEY value` lines, see docs/SCENARIO.md)."""
        path = Path(path)
        _read_text(path)  # the same one-line errors as a TOML file
        return cls(_native.hpcc_config(str(path)), base_dir=path.parent, origin=str(path))

    @classmethod
    def from_htsim_cm(cls, path: str | Path, network: str | Path | None = None) -> Scenario:
        """An htsim connection matrix (`.cm`) as `htsim_ndp` would run it: on the network of the
        scenario file `network` (its workload replaced by the matrix), or without one on
        htsim_ndp's defaults: the k-ary fat-tree of the matrix's `Nodes` hosts (k^3/4), 100 Gbps,
        1 us links, 9,000 B whole packets, 15-packet trimming queues, NDP, each flow's packets walking
        permutations of the paths (htsim's `-strat perm`)."""
        path = Path(path)
        text = _read_text(path)
        workload = {"kind": "htsim-cm", "file": str(path.resolve())}
        if network is not None:
            base = cls.from_toml(network)
            data = copy.deepcopy(base.data)
            data["workload"] = workload
            return cls(tomli_w.dumps(data), base_dir=base.base_dir, origin=str(path))
        nodes = _htsim_nodes(text, path)
        k = round((4 * nodes) ** (1 / 3))
        if k % 2 or k * k * k // 4 != nodes:
            raise ScenarioError(f"{shown(path)}: Nodes {nodes} is not the host count of a k-ary fat-tree "
                                "(k^3/4 for an even k, e.g. 128, 432, 1024): give the network with --topology")
        mtu = 9000  # htsim_ndp's default packet size (-mtu)
        data = {
            "name": path.stem if _NAME.fullmatch(path.stem) else "htsim-cm",
            "duration": "1s",
            "topology": {"kind": "fat-tree", "k": k, "host_link": "100Gbps", "link_delay": "1us"},
            "nic": {"mtu": mtu, "whole_packets": True},
            "switch": {"pfc": {"enabled": False}, "ecn": {"enabled": False},
                       "trim": {"queue": 0, "header": "64B", "data_queue": f"{15 * mtu}B"}},
            "routing": {"policy": "spray-permutation"},
            "transport": {"recovery": "ndp", "cc": "none"},
            "workload": workload,
        }
        return cls(tomli_w.dumps(data), base_dir=path.parent, origin=str(path))

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """A scenario file: TOML, or an HPCC ns-3 config (a `.txt` file, or one whose first
        line reads `KEY value`)."""
        path = Path(path)
        if path.suffix != ".toml" and (path.suffix == ".txt" or _looks_like_hpcc_config(_read_text(path))):
            return cls.from_hpcc_config(path)
        return cls.from_toml(path)

    @classmethod
    def from_str(cls, text: str, base_dir: str | Path = ".") -> Scenario:
        return cls(text, base_dir=base_dir)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: str | Path = ".") -> Scenario:
        return cls(tomli_w.dumps(dict(data)), base_dir=base_dir)

    @property
    def name(self) -> str:
        """The scenario's name, checked to be a plain folder name (it names the output
        folder); raises ScenarioError otherwise."""
        return check_name(str(self.data.get("name", Path(self.origin).stem)))

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A copy with fields replaced; keys may be dotted ("transport.recovery").

        Tables merge recursively; any other value, lists included, replaces what was there.
        """
        merged = copy.deepcopy(self.data)
        for key, value in overrides.items():
            *parents, leaf = key.split(".")
            table = merged
            for part in parents:
                table = table.setdefault(part, {})
                if not isinstance(table, dict):
                    raise ScenarioError(f"{key}: cannot override inside {part!r}, which is not a table")
            _merge_into(table, leaf, value)
        return Scenario(tomli_w.dumps(merged), base_dir=self.base_dir, origin=self.origin)

    def resolved(self) -> str:
        """The scenario as the simulator will run it, every default filled in, as TOML."""
        return _native.resolve(self.text, str(self.base_dir))

    def warnings(self) -> list[str]:
        """Lines naming a field whose value cannot do what it seems to ask (e.g. PFC that
        cannot be lossless); `retx validate` and `retx run` print them, summary.json lists them."""
        return _native.warnings(self.text, str(self.base_dir))

    def __repr__(self) -> str:
        return f"Scenario(name={self.data.get('name')!r}, origin={self.origin!r})"


def _merge_into(table: dict[str, Any], key: str, value: Any) -> None:
    current = table.get(key)
    if isinstance(current, dict) and isinstance(value, Mapping):
        for sub_key, sub_value in value.items():
            _merge_into(current, sub_key, sub_value)
    else:
        table[key] = copy.deepcopy(value)


MAX_SCENARIO_BYTES = 64 << 20
"""Largest scenario or config file read (a flow list of about a million flows)."""

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+=,-]{0,127}")


def check_name(name: str) -> str:
    """`name` if it is a plain folder name (as the Rust validator requires), else a
    ScenarioError naming the field: a scenario's name names its output folder."""
    if not name:
        raise ScenarioError("name: must not be empty")
    if _NAME.fullmatch(name) is None:
        raise ScenarioError(
            f"name: {json.dumps(name)} is not a plain name (it names the output folder: up to 128 letters, "
            "digits and . _ - + = , starting with a letter, digit or _)")
    return name


def _read_text(path: Path) -> str:
    """A scenario file's text: a regular UTF-8 file of at most MAX_SCENARIO_BYTES, without a
    byte order mark."""
    name = shown(path)
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise ScenarioError(f"{name}: not a regular file (a device, pipe or socket)")
        size = path.stat().st_size
        if size > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"{name}: {size} bytes, above the limit of {MAX_SCENARIO_BYTES} bytes for a scenario file")
        return path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except FileNotFoundError:
        raise ScenarioError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{name}: is a directory, not a scenario file") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{name}: not UTF-8 text") from None
    except OSError as error:
        raise ScenarioError(f"{name}: cannot read ({error.strerror})") from None


_HPCC_LINE = re.compile(r"[A-Z][A-Z0-9_]*\s+[^=\s]")


def _htsim_nodes(text: str, path: Path) -> int:
    """The `Nodes N` header of a connection matrix (the core reads and checks the rest)."""
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) == 2 and words[0] == "Nodes" and words[1].isdigit():
            return int(words[1])
    raise ScenarioError(f"{shown(path)}: no `Nodes N` line: not an htsim connection matrix")


def _looks_like_hpcc_config(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    return _HPCC_LINE.match(first) is not None


def _parse(text: str, origin: str) -> dict[str, Any]:
    # Nesting is bounded first, by the core's parser: tomllib recurses per level and a few
    # hundred levels raise RecursionError.
    try:
        _native.check_nesting(text)
    except ScenarioError as error:
        message = str(error)
        raise ScenarioError(message if not message.startswith("is nested") else f"{shown(origin)}: {message}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{shown(origin)}: invalid TOML: {error}") from None
