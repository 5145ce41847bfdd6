"""Results of one simulation: flow and time-series tables, a summary, the resolved scenario."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

# Declared so that empty tables (no flow finished, no sample taken) still get the right types.
FLOW_DTYPES: dict[str, pl.DataType] = {
    "flow_id": pl.Int64,
    "src": pl.String,
    "dst": pl.String,
    "size_bytes": pl.Int64,
    "start_us": pl.Float64,
    "finish_us": pl.Float64,
    "fct_us": pl.Float64,
    "ideal_fct_us": pl.Float64,
    "slowdown": pl.Float64,
    "goodput_gbps": pl.Float64,
    "delivered_bytes": pl.Int64,
    "sent_bytes": pl.Int64,
    "retx_bytes": pl.Int64,
    "naks": pl.Int64,
    "timeouts": pl.Int64,
    "completed": pl.Boolean,
}
TIMESERIES_DTYPES: dict[str, pl.DataType] = {
    "time_us": pl.Float64,
    "host": pl.String,
    "rx_gbps": pl.Float64,
}

FLOWS_FILE = "flows.parquet"
TIMESERIES_FILE = "timeseries.parquet"
SUMMARY_FILE = "summary.json"
SCENARIO_FILE = "scenario.toml"
MEMORY_FILE = "memory.parquet"


@dataclass(frozen=True)
class Results:
    flows: pl.DataFrame
    timeseries: pl.DataFrame
    summary: dict[str, Any]
    resolved: str
    # On-chip bytes of every loss recovery scheme for a NIC sized like this run's hosts (host
    # link x longest base RTT, one connection per flow): see `retx memory`.
    memory: pl.DataFrame

    @classmethod
    def from_native(cls, raw: dict[str, Any]) -> Results:
        return cls(
            flows=_frame(raw["flows"], FLOW_DTYPES),
            timeseries=_frame(raw["timeseries"], TIMESERIES_DTYPES),
            summary=dict(raw["summary"]),
            resolved=raw["resolved"],
            memory=pl.DataFrame(raw["memory"]),
        )

    @property
    def name(self) -> str:
        return str(self.summary.get("name", "scenario"))

    def save(self, out_dir: str | Path) -> Path:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        self.flows.write_parquet(out_dir / FLOWS_FILE)
        self.timeseries.write_parquet(out_dir / TIMESERIES_FILE)
        (out_dir / SUMMARY_FILE).write_text(json.dumps(self.summary, indent=2) + "\n")
        (out_dir / SCENARIO_FILE).write_text(self.resolved)
        self.memory.write_parquet(out_dir / MEMORY_FILE)
        return out_dir

    @classmethod
    def load(cls, out_dir: str | Path) -> Results:
        out_dir = Path(out_dir)
        return cls(
            flows=pl.read_parquet(out_dir / FLOWS_FILE),
            timeseries=pl.read_parquet(out_dir / TIMESERIES_FILE),
            summary=json.loads((out_dir / SUMMARY_FILE).read_text()),
            resolved=(out_dir / SCENARIO_FILE).read_text(),
            memory=pl.read_parquet(out_dir / MEMORY_FILE),
        )


def _frame(columns: dict[str, list[Any]], dtypes: dict[str, pl.DataType]) -> pl.DataFrame:
    known = {name: dtype for name, dtype in dtypes.items() if name in columns}
    return pl.DataFrame(columns, schema_overrides=known)
