"""Results of one simulation: flow and time-series tables, a summary, the resolved scenario."""

from __future__ import annotations

import html
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import polars as pl

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from retx import _native
from retx.metrics import fct_stats, finished_flows
from retx.output import FLOWS_FILE, SUMMARY_FILE, inside, staged
from retx.provenance import write_parquet

_SCHEMA = _native.schema()

# Polars type of each column type the Rust schema (`retx::stats::columns`) declares.
POLARS_DTYPES: dict[str, type[pl.DataType]] = {
    "i64": pl.Int64,
    "u64": pl.UInt64,
    "f64": pl.Float64,
    "bool": pl.Boolean,
    "str": pl.String,
}


def table_schema(table: str) -> dict[str, type[pl.DataType]]:
    """{column: polars type} of an output table ("flows", "timeseries", "queues", "cc", "pools", "memory",
    "collectives", "collective_steps", "links", "tier_samples", "link_samples"), in column order, as the Rust core declares it; empty tables get
    these types too."""
    return {name: POLARS_DTYPES[dtype] for name, dtype, _unit, _description in _SCHEMA[table]}


class ColumnDescriptions(pl.DataFrame):
    """`describe`'s table: a polars DataFrame whose printed form (str, repr, a notebook's
    cell) shows every row and every description whole, where a plain DataFrame cuts long
    text at 30 characters."""

    def _shown(self, render: Any) -> Any:
        with pl.Config(fmt_str_lengths=10_000, tbl_rows=-1, tbl_cols=-1, tbl_width_chars=10_000,
                       tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
            return render()

    def __str__(self) -> str:
        return str(self._shown(lambda: pl.DataFrame.__str__(self)))

    def __repr__(self) -> str:
        return str(self._shown(lambda: pl.DataFrame.__repr__(self)))

    def _repr_html_(self, **kwargs: Any) -> str:
        return str(self._shown(lambda: pl.DataFrame._repr_html_(self, **kwargs)))


def describe(table: str) -> ColumnDescriptions:
    """The columns of an output table: name, type, unit and meaning (printed whole)."""
    rows = _SCHEMA[table]
    return ColumnDescriptions(
        {
            "column": [r[0] for r in rows],
            "dtype": [r[1] for r in rows],
            "unit": [r[2] for r in rows],
            "description": [r[3] for r in rows],
        }
    )


TIMESERIES_FILE = "timeseries.parquet"
QUEUES_FILE = "queues.parquet"
CC_FILE = "cc.parquet"
POOLS_FILE = "pools.parquet"
SCENARIO_FILE = "scenario.toml"
MEMORY_FILE = "memory.parquet"
FCT_TXT_FILE = "fct.txt"
COLLECTIVES_FILE = "collectives.parquet"
COLLECTIVE_STEPS_FILE = "collective_steps.parquet"
LINKS_FILE = "links.parquet"
TIER_SAMPLES_FILE = "tier_samples.parquet"
LINK_SAMPLES_FILE = "link_samples.parquet"


def empty(table: str) -> pl.DataFrame:
    """An output table with no rows, typed as the Rust core declares it."""
    return pl.DataFrame(schema=table_schema(table))


@dataclass(frozen=True)
class Results:
    flows: pl.DataFrame
    timeseries: pl.DataFrame
    # Exactly what summary.json holds: the run's counters and report, "fct" (FCT and slowdown
    # statistics over finished flows, `retx.metrics.fct_stats`) and "provenance" (built once,
    # in `__post_init__`, from the core's summary, the flows and the provenance record).
    summary: dict[str, Any]
    resolved: str
    # On-chip bytes of every loss recovery scheme for a NIC sized like this run's hosts (host
    # link x longest base RTT, one connection per flow): see `retx memory`.
    memory: pl.DataFrame
    # The flows in the HPCC ns-3 simulator's fct.txt format, when `[output] fct_txt` asks for
    # it, and its path relative to the output folder (checked by the core before the run).
    fct_txt: Optional[str] = None
    fct_txt_file: Optional[str] = None
    # The ports `[output] queues` watches, sampled with the time series (no rows without).
    queues: Optional[pl.DataFrame] = None
    # The flows `[output] cc_flows` watches: their senders' rate, window and bytes in flight.
    cc: Optional[pl.DataFrame] = None
    # The hosts `[output] pools` watches: their NIC's shared structures (MELO's bits pools,
    # the QP cache) in use, peak between samples and capacity.
    pools: Optional[pl.DataFrame] = None
    # Where the run came from (retx.provenance): version, git commit, start time, host,
    # scenario hash. Saved in summary.json and in every Parquet file's metadata.
    provenance: Optional[dict[str, Any]] = None
    # The libpcap file `[output] pcap` asks for, and its name relative to the output folder.
    pcap: Optional[bytes] = None
    pcap_file: Optional[str] = None
    # A collective workload's (`[workload] kind = "collective"`): one row per group and
    # iteration (CCT, ideal, slowdown, NCCL's algbw and busbw), and one per step of each. Empty
    # (no rows) for every other workload; saved only when not.
    collectives: pl.DataFrame = field(default_factory=lambda: empty("collectives"))
    collective_steps: pl.DataFrame = field(default_factory=lambda: empty("collective_steps"))
    # Fabric statistics (`[output] links`): per selected link direction over the run, per tier
    # every sample interval, and the busiest `link_series` ports every interval. Empty (no rows)
    # without `links`; saved only with it. summary["switches"] holds the per-switch totals.
    links: pl.DataFrame = field(default_factory=lambda: empty("links"))
    tier_samples: pl.DataFrame = field(default_factory=lambda: empty("tier_samples"))
    link_samples: pl.DataFrame = field(default_factory=lambda: empty("link_samples"))
    # How the run used the machine (not a result: the same run on any number of threads gives
    # the same tables): threads, why one thread when more were asked for, the partitions'
    # lookahead, windows, link ends, events, busy and waiting seconds. None when not run here.
    engine: Optional[dict[str, Any]] = None

    def __post_init__(self) -> None:
        core = {key: value for key, value in self.summary.items() if key not in (*_DERIVED, "provenance")}
        derived: dict[str, Any] = {"fct": fct_stats(self.flows)}
        if self.collectives.height:
            derived["collectives"] = collective_stats(self.collectives)
        names = job_names(self.flows, self.resolved)
        if len(names) > 1:
            derived["jobs"] = job_stats(self.flows, self.collectives, names)
        object.__setattr__(self, "summary", {**core, **derived, "provenance": self.provenance})

    @classmethod
    def from_native(cls, raw: Mapping[str, Any], provenance: Optional[dict[str, Any]] = None) -> Results:
        return cls(
            flows=frame(raw["flows"], "flows"),
            timeseries=frame(raw["timeseries"], "timeseries"),
            summary=dict(raw["summary"]),
            resolved=raw["resolved"],
            memory=frame(raw["memory"], "memory"),
            fct_txt=raw.get("fct_txt"),
            fct_txt_file=raw.get("fct_txt_file"),
            queues=frame(raw["queues"], "queues"),
            cc=frame(raw["cc"], "cc"),
            pools=frame(raw["pools"], "pools"),
            provenance=provenance,
            pcap=raw.get("pcap"),
            pcap_file=raw.get("pcap_file"),
            collectives=frame(raw["collectives"], "collectives"),
            collective_steps=frame(raw["collective_steps"], "collective_steps"),
            links=frame(raw["links"], "links"),
            tier_samples=frame(raw["tier_samples"], "tier_samples"),
            link_samples=frame(raw["link_samples"], "link_samples"),
            engine=raw.get("engine"),
        )

    def fct_txt_target(self, out_dir: str | Path) -> Path:
        """Where `save` writes fct.txt: `[output] fct_txt` (or an ns-3 config's
        `FCT_OUTPUT_FILE`) inside the output folder, keeping its relative form."""
        return inside(Path(out_dir), self.fct_txt_file or FCT_TXT_FILE)

    @property
    def name(self) -> str:
        return str(self.summary.get("name", "scenario"))

    def fct_stats(self) -> dict[str, Any]:
        """FCT and slowdown p50/p95/p99, overall and by flow size, over finished flows only
        (`retx.metrics.fct_stats`); `summary["fct"]` and summary.json hold the same."""
        return self.summary["fct"]

    def save(self, out_dir: str | Path) -> Path:
        """Write the tables, summary.json (the run's summary plus "fct" statistics, "collectives"
        when the run has one, and "provenance") and the resolved scenario into `out_dir`, whole:
        into a temporary folder beside it that then replaces it (`retx.output.staged`), so a
        failure leaves the old folder as it was."""
        out_dir = Path(out_dir)
        with staged(out_dir) as temp:
            self.write(temp)
        return out_dir

    def write(self, out_dir: str | Path) -> Path:
        """Write what `save` does into an existing folder, in place."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        record = self.provenance
        write_parquet(self.flows, out_dir / FLOWS_FILE, record)
        write_parquet(self.timeseries, out_dir / TIMESERIES_FILE, record)
        (out_dir / SUMMARY_FILE).write_text(json.dumps(_json_safe(self.summary), indent=2) + "\n")
        (out_dir / SCENARIO_FILE).write_text(self.resolved)
        write_parquet(self.memory, out_dir / MEMORY_FILE, record)
        # A series file only when the scenario watches something for it (`[output] queues`,
        # `cc_flows`, `pools`); `load` reads a missing one as an empty table.
        watched = self.watched()
        for key, table, name in (("queues", self.queues, QUEUES_FILE), ("cc_flows", self.cc, CC_FILE),
                                 ("pools", self.pools, POOLS_FILE)):
            if table is not None and key in watched:
                write_parquet(table, out_dir / name, record)
        # The collective tables only for a collective workload (`load` reads none as empty).
        if self.collectives.height:
            write_parquet(self.collectives, out_dir / COLLECTIVES_FILE, record)
            write_parquet(self.collective_steps, out_dir / COLLECTIVE_STEPS_FILE, record)
        # The fabric's tables only when `[output] links` selects some (`load` reads none as empty).
        if "links" in watched:
            write_parquet(self.links, out_dir / LINKS_FILE, record)
            write_parquet(self.tier_samples, out_dir / TIER_SAMPLES_FILE, record)
            write_parquet(self.link_samples, out_dir / LINK_SAMPLES_FILE, record)
        if self.fct_txt is not None:
            _write_file(self.fct_txt_target(out_dir), self.fct_txt.encode())
        if self.pcap is not None:
            _write_file(self.pcap_target(out_dir), self.pcap)
        return out_dir

    @property
    def recovery(self) -> str:
        """The run's loss recovery scheme, as the resolved scenario names it ("gbn", "melo")."""
        return str(tomllib.loads(self.resolved).get("transport", {}).get("recovery", ""))

    def watched(self) -> set[str]:
        """The `[output]` lists of the resolved scenario that name something: "queues",
        "cc_flows", "pools", and "links" when it selects links (not "none")."""
        output = tomllib.loads(self.resolved).get("output", {})
        watched = {key for key in ("queues", "cc_flows", "pools") if output.get(key)}
        if output.get("links") and output.get("links") != "none":
            watched.add("links")
        return watched

    def pcap_target(self, out_dir: str | Path) -> Path:
        """Where `save` writes the pcap: `[output] pcap.file` inside the output folder."""
        return inside(Path(out_dir), self.pcap_file or "trace.pcap")

    @classmethod
    def load(cls, out_dir: str | Path) -> Results:
        out_dir = Path(out_dir)
        summary = json.loads((out_dir / SUMMARY_FILE).read_text())
        for key in _DERIVED:  # recomputed from the tables (the same numbers)
            summary.pop(key, None)
        record = summary.pop("provenance", None)
        return cls(
            flows=pl.read_parquet(out_dir / FLOWS_FILE),
            timeseries=pl.read_parquet(out_dir / TIMESERIES_FILE),
            summary=summary,
            resolved=(out_dir / SCENARIO_FILE).read_text(),
            memory=pl.read_parquet(out_dir / MEMORY_FILE),
            # Folders written before a table existed have no file: an empty table.
            queues=_read_or_empty(out_dir / QUEUES_FILE, "queues"),
            cc=_read_or_empty(out_dir / CC_FILE, "cc"),
            pools=_read_or_empty(out_dir / POOLS_FILE, "pools"),
            provenance=record,
            collectives=_read_or_empty(out_dir / COLLECTIVES_FILE, "collectives"),
            collective_steps=_read_or_empty(out_dir / COLLECTIVE_STEPS_FILE, "collective_steps"),
            links=_read_or_empty(out_dir / LINKS_FILE, "links"),
            tier_samples=_read_or_empty(out_dir / TIER_SAMPLES_FILE, "tier_samples"),
            link_samples=_read_or_empty(out_dir / LINK_SAMPLES_FILE, "link_samples"),
        )

    def __repr__(self) -> str:
        finished, total, mean_fct = self._headline()
        return f"Results({self.name!r})\n  flows finished: {finished}/{total}\n  mean FCT: {mean_fct}"

    def _repr_html_(self) -> str:
        finished, total, mean_fct = self._headline()
        return (f"<b>Results</b> {html.escape(self.name)}<br>"
                f"flows finished: {finished}/{total}<br>mean FCT: {html.escape(mean_fct)}")

    def _headline(self) -> tuple[int, int, str]:
        """Finished flows, all flows, and the finished flows' mean FCT as text."""
        done = finished_flows(self.flows)
        return done.height, self.flows.height, _format_us(_as_float(done["fct_us"].mean()))


# summary.json's entries Python builds from the tables (and "provenance", from the record);
# the core's summary has none of them.
_DERIVED = ("fct", "collectives", "jobs")


def job_names(flows: pl.DataFrame, resolved: str = "") -> list[str]:
    """The run's jobs (`[[workload]]` tables) by position: their names as the resolved scenario
    gives them (default "job0", "job1", ...), else as the flow table's `job` column first
    names them; [] for a table without the column (written before jobs existed)."""
    try:
        workload = tomllib.loads(resolved).get("workload") if resolved else None
    except tomllib.TOMLDecodeError:
        workload = None
    if isinstance(workload, list):
        return [str(job.get("name", f"job{i}")) for i, job in enumerate(workload)]
    if isinstance(workload, dict):
        return [str(workload.get("name", "job0"))]
    if "job" not in flows.columns:
        return []
    return [str(name) for name in flows["job"].unique(maintain_order=True).to_list()]


def job_stats(flows: pl.DataFrame, collectives: Optional[pl.DataFrame] = None,
              names: Optional[list[str]] = None) -> list[dict[str, Any]]:
    """summary.json's "jobs" (a run of several `[[workload]]` jobs): one entry per job, in job
    order: its `flows` and how many finished, the finished flows' mean and p99 FCT and p99
    slowdown (None when none finished); a collective job adds its iterations, how many
    finished and their mean CCT (collectives.parquet's rows of the job)."""
    if names is None:
        names = job_names(flows)
    out = []
    for name in names:
        rows = flows.filter(pl.col("job") == name)
        done = finished_flows(rows)
        entry: dict[str, Any] = {
            "job": name,
            "flows": rows.height,
            "flows_finished": done.height,
            "fct_us_mean": _as_float(done["fct_us"].mean()),
            "fct_us_p99": _as_float(done["fct_us"].quantile(0.99, "linear")),
            "slowdown_p99": _as_float(done["slowdown"].quantile(0.99, "linear")),
        }
        if collectives is not None and collectives.height and "job" in collectives.columns:
            iterations = collectives.filter(pl.col("job") == name)
            if iterations.height:
                finished = iterations.filter(pl.col("cct_us").is_not_nan())
                entry.update({
                    "iterations": iterations.height,
                    "iterations_finished": finished.height,
                    "cct_us_mean": _as_float(finished["cct_us"].mean()),
                })
        out.append(entry)
    return out


def collective_stats(collectives: pl.DataFrame) -> list[dict[str, Any]]:
    """summary.json's "collectives": one entry per group of a collectives table, in group order:
    what it ran (op, algorithm, ranks, size_bytes), its `iterations` and how many finished, and
    over the finished ones the mean and the largest CCT, the mean slowdown and the mean NCCL bus
    bandwidth; `ideal_cct_us` is its first iteration's (every iteration has the same). The
    means are None when no iteration finished."""
    stats = []
    for (group,), rows in collectives.sort("group", "iteration").group_by("group", maintain_order=True):
        done = rows.filter(pl.col("cct_us").is_not_nan())
        first = rows.row(0, named=True)
        stats.append({
            "group": group,
            "op": first["op"],
            "algorithm": first["algorithm"],
            "ranks": first["ranks"],
            "size_bytes": first["size_bytes"],
            "iterations": rows.height,
            "iterations_finished": done.height,
            "cct_us_mean": _as_float(done["cct_us"].mean()),
            "cct_us_max": _as_float(done["cct_us"].max()),
            "ideal_cct_us": first["ideal_cct_us"],
            "slowdown_mean": _as_float(done["slowdown"].mean()),
            "busbw_gbps_mean": _as_float(done["busbw_gbps"].mean()),
        })
    return stats


def collective_flows(flows: Union[pl.DataFrame, "Results"],
                     collective_steps: Optional[pl.DataFrame] = None) -> pl.DataFrame:
    """The flows of a collective run with the `group`, `iteration` and `step` each belongs to:
    `collective_flows(results)` for a run's `Results`, or `collective_flows(flows,
    collective_steps)` for its two tables (e.g. read from a run folder). A collective's flows
    are numbered group by group, iteration by iteration, step by step
    (`workload/collective.rs`), so the steps' `flows` counts, in that order, cut the flow table
    (by flow_id) into its steps."""
    if isinstance(flows, Results):
        if collective_steps is not None:
            raise TypeError("collective_flows(results) takes no second table: the Results holds its steps")
        results = flows
        flows, collective_steps = results.flows, results.collective_steps
    elif collective_steps is None:
        raise TypeError("collective_flows(flows, collective_steps): give the steps table too, "
                        "or pass the run's Results alone")
    steps = collective_steps.sort("group", "iteration", "step")
    if "job" in steps.columns and "job" in flows.columns and steps.height:
        # With several jobs, each collective job's flows in flow_id order are its steps'.
        parts = [_cut(flows.filter(pl.col("job") == job), rows.drop("job"))
                 for (job,), rows in steps.group_by("job", maintain_order=True)]
        return pl.concat(parts)
    return _cut(flows, steps)


def _cut(flows: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """`flows` in flow_id order cut into `steps` (sorted) by their `flows` counts."""
    total = int(steps["flows"].sum()) if steps.height else 0
    ordered = flows.sort("flow_id")
    if ordered.height < total:
        raise ValueError(f"the steps name {total} flows but the flow table has {ordered.height}")
    place = steps.select(pl.col("group", "iteration", "step").repeat_by(pl.col("flows").cast(pl.UInt32))).explode(
        "group", "iteration", "step")
    return ordered.head(total).hstack(place)


def _write_file(path: Path, content: bytes) -> None:
    """A file a scenario named, in a folder of its own if its name has one (`mix/fct.txt`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


def _read_or_empty(path: Path, table: str) -> pl.DataFrame:
    return pl.read_parquet(path) if path.exists() else pl.DataFrame(schema=table_schema(table))


def _as_float(value: object) -> Optional[float]:
    """A polars scalar (e.g. the mean of no rows: None) as a float, or None."""
    return float(value) if isinstance(value, (int, float)) else None


def _format_us(value: Optional[float]) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.1f} us"


def _json_safe(value: Any) -> Any:
    """NaN and infinities as null, so summary.json is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def frame(columns: dict[str, Any], table: str) -> pl.DataFrame:
    """A table from the columns the native module returns (numpy arrays and lists of str)."""
    return pl.DataFrame(columns, schema_overrides=table_schema(table))
