"""The output columns are declared once, in Rust (retx::stats::columns): the compiled module
matches its stub, a real run returns exactly the declared columns with the declared types,
and saving then loading a run keeps them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import retx
from conftest import SMALL_SCENARIO
from retx import _native
from retx.results import POLARS_DTYPES, Results, describe, frame, table_schema

STUB = Path(retx.__file__).with_name("_native.pyi")
TABLES = ("flows", "timeseries", "queues", "cc", "pools", "memory", "collectives", "collective_steps", "links",
          "tier_samples", "link_samples")
NUMPY_DTYPES = {"i64": np.int64, "u64": np.uint64, "f64": np.float64, "bool": np.bool_}

# The small scenario sampled often enough that its time series has rows.
SAMPLED = retx.Scenario.from_str(SMALL_SCENARIO).with_overrides({"output": {"sample_interval": "10us", "cc_flows": [0]}}).text

# One flow starting after the run ends, sampled less often than the run lasts: every table
# empty but the flow table, whose one flow never finished.
IDLE_SCENARIO = """\
name = "idle"
duration = "50us"
[topology]
kind = "single-switch"
[output]
# The series starts at the grid point before the first flow (100 us), after the end: no rows.
sample_interval = "10us"
[workload]
kind = "flow-list"
flows = [{ src = "h0", dst = "h1", size = "1MB", start = "100us" }]
"""


def stub_module() -> ast.Module:
    return ast.parse(STUB.read_text())


def stub_functions() -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in stub_module().body if isinstance(node, ast.FunctionDef)}


def stub_classes() -> dict[str, ast.ClassDef]:
    return {node.name: node for node in stub_module().body if isinstance(node, ast.ClassDef)}


def is_typeddict(node: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id == "TypedDict" for b in node.bases)


def stub_parameters(node: ast.FunctionDef) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of every parameter, as inspect.signature would give them."""
    a = node.args
    positional = a.posonlyargs + a.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(a.defaults))
    defaults += [ast.literal_eval(d) for d in a.defaults]
    kinds = [inspect.Parameter.POSITIONAL_ONLY] * len(a.posonlyargs)
    kinds += [inspect.Parameter.POSITIONAL_OR_KEYWORD] * len(a.args)
    params = [(p.arg, kind, d) for p, kind, d in zip(positional, kinds, defaults)]
    if a.vararg:
        params.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        default = inspect.Parameter.empty if d is None else ast.literal_eval(d)
        params.append((p.arg, inspect.Parameter.KEYWORD_ONLY, default))
    if a.kwarg:
        params.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty))
    return params


def compiled_functions() -> dict[str, Any]:
    return {
        name: value for name, value in vars(_native).items()
        if not name.startswith("_") and inspect.isbuiltin(value)
    }


def compiled_classes() -> dict[str, type]:
    return {name: value for name, value in vars(_native).items() if not name.startswith("_") and inspect.isclass(value)}


def test_stub_declares_every_compiled_function_and_only_those() -> None:
    assert sorted(stub_functions()) == sorted(compiled_functions())
    runtime_classes = [name for name, node in stub_classes().items() if not is_typeddict(node)]
    assert sorted(runtime_classes) == sorted(compiled_classes())


@pytest.mark.parametrize("name", sorted(compiled_functions()))
def test_stub_signature_matches_compiled(name: str) -> None:
    compiled = inspect.signature(compiled_functions()[name])
    got = [(p.name, p.kind, p.default) for p in compiled.parameters.values()]
    assert stub_parameters(stub_functions()[name]) == got


def test_stub_exception_matches_compiled() -> None:
    node = stub_classes()["ScenarioError"]
    bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
    assert bases == [base.__name__ for base in _native.ScenarioError.__bases__] == ["ValueError"]


def test_stub_documents_the_keys_run_returns() -> None:
    node = stub_classes()["_RunResult"]
    keys = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    raw = _native.run(SMALL_SCENARIO)
    assert keys == list(raw)


def test_schema_is_well_formed() -> None:
    schema = _native.schema()
    assert list(schema) == list(TABLES)
    for table, columns in schema.items():
        names = [c[0] for c in columns]
        assert len(names) == len(set(names)), table
        for name, dtype, unit, description in columns:
            assert dtype in POLARS_DTYPES, (table, name)
            assert isinstance(unit, str) and description, (table, name)
        assert describe(table)["column"].to_list() == names == list(table_schema(table))


def assert_columns_match_schema(columns: dict[str, Any], table: str, rows: int | None = None) -> None:
    """The native columns are the schema's, in order, as numpy arrays of the declared dtype
    (numbers, booleans) or lists of str, and polars reads them as the declared types with no
    cast."""
    declared = _native.schema()[table]
    assert list(columns) == [c[0] for c in declared]
    for name, dtype, _unit, _description in declared:
        values = columns[name]
        if dtype == "str":
            assert isinstance(values, list) and all(isinstance(v, str) for v in values), name
        else:
            assert isinstance(values, np.ndarray) and values.ndim == 1, name
            assert values.dtype == NUMPY_DTYPES[dtype], name
        if rows is not None:
            assert len(values) == rows, name
    if all(len(v) for v in columns.values()):
        assert dict(pl.DataFrame(columns).schema) == table_schema(table)


def test_run_returns_the_declared_columns() -> None:
    raw = _native.run(SAMPLED)
    for table in TABLES:
        assert_columns_match_schema(raw[table], table)
    assert len(raw["flows"]["flow_id"]) == 1 and len(raw["timeseries"]["time_us"]) > 0
    assert len(raw["cc"]["time_us"]) > 0 and set(raw["cc"]["flow_id"]) == {0}
    # Pools have rows only where a scheme keeps shared structures: MELO's bits pools.
    melo = retx.Scenario.from_str(SMALL_SCENARIO).with_overrides(
        {"transport": {"recovery": "melo"}, "output": {"sample_interval": "10us", "pools": ["h1"]}})
    pools = _native.run(melo.text)["pools"]
    assert_columns_match_schema(pools, "pools")
    assert len(pools["time_us"]) > 0 and set(pools["pool"]) == {"melo_rx", "melo_tx"}


def test_memory_table_returns_the_declared_columns() -> None:
    raw = _native.memory_table()
    assert isinstance(raw.pop("bdp_packets"), int)
    assert_columns_match_schema(raw, "memory", rows=6)  # go-back-N, IRN, MELO, Go-Back-ONE, LEFT, STRIDE


def test_results_tables_have_the_declared_types() -> None:
    results = retx.run(retx.Scenario.from_str(SAMPLED), progress=False)
    for table in TABLES:
        assert dict(getattr(results, table).schema) == table_schema(table), table


def test_empty_tables_keep_their_types() -> None:
    raw = _native.run(IDLE_SCENARIO)
    assert_columns_match_schema(raw["timeseries"], "timeseries", rows=0)
    results = Results.from_native(raw)
    assert results.timeseries.height == 0
    assert dict(results.timeseries.schema) == table_schema("timeseries")
    assert results.flows["completed"].to_list() == [False]
    assert np.isnan(results.flows["fct_us"][0])
    empty = frame({name: [] for name in table_schema("flows")}, "flows")
    assert dict(empty.schema) == table_schema("flows")


def test_save_then_load_keeps_the_types(tmp_path: Path) -> None:
    for scenario in (SAMPLED, IDLE_SCENARIO):
        results = retx.run(retx.Scenario.from_str(scenario), progress=False)
        loaded = Results.load(results.save(tmp_path / results.name))
        for table in TABLES:
            assert dict(getattr(loaded, table).schema) == table_schema(table), table
            assert getattr(loaded, table).equals(getattr(results, table)), table
        assert loaded.summary == results.summary
        assert loaded.resolved == results.resolved
