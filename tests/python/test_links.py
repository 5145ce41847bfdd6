"""Fabric statistics (`[output] links`) from the command line: links.parquet, the tier and
busiest-link series, the per-switch totals in summary.json and the two plots; nothing of it
without `links`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from conftest import run_cli
from retx.plots import plot_link_heatmap, plot_tier_utilisation
from retx.results import Results

# A ring all-reduce over two leaves: h3 -> h4 and h7 -> h0 cross the spines.
RING = """\
name = "ring"
seed = 1
duration = "2ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_link = "100Gbps"
fabric_link = "100Gbps"
link_delay = "1us"
[transport]
recovery = "irn"
cc = "dcqcn"
[nic]
ack_interval = 16
[workload]
kind = "collective"
[workload.collective]
op = "all-reduce"
ranks = 8
size = "4MB"
[output]
sample_interval = "10us"
links = "all"
link_series = 4
"""

# Poisson arrivals from five hosts into h0: leaf0 -> h0 is the hot link.
HOTSPOT = """\
name = "hotspot"
seed = 3
duration = "2ms"
[topology]
kind = "leaf-spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_link = "100Gbps"
fabric_link = "100Gbps"
[transport]
recovery = "irn"
cc = "dcqcn"
[workload]
kind = "poisson"
cdf = "websearch_hpcc"
load = 0.15
pairs = [["h1", "h0"], ["h2", "h0"], ["h4", "h0"], ["h5", "h0"], ["h6", "h0"], ["h3", "h7"]]
flows = 60
[output]
sample_interval = "20us"
links = ["tier:host-down", "tier:leaf-spine"]
"""


def run(tmp_path: Path, text: str, name: str) -> Path:
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(text)
    out = tmp_path / name
    result = run_cli("run", str(scenario), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return out


def test_a_collective_run_writes_where_its_traffic_crosses_the_fabric(tmp_path: Path) -> None:
    out = run(tmp_path, RING, "ring")
    links = pl.read_parquet(out / "links.parquet")
    assert links.height == 2 * (4 + 8)
    by_tier = links.group_by("tier").agg(pl.col("tx_bytes").sum())
    bytes_of = dict(by_tier.iter_rows())
    share = bytes_of["leaf-spine"] / bytes_of["host-up"]
    assert 0.24 < share < 0.26, share
    tiers = pl.read_parquet(out / "tier_samples.parquet")
    assert set(tiers["tier"]) == {"host-up", "host-down", "leaf-spine", "spine-leaf"}
    # The hosts' links run near line rate while the ring runs.
    assert tiers.filter(pl.col("tier") == "host-up")["utilisation"].max() > 0.9
    samples = pl.read_parquet(out / "link_samples.parquet")
    assert samples.group_by("time_us").len()["len"].max() == 4
    summary = json.loads((out / "summary.json").read_text())
    switches = {s["switch"]: s for s in summary["switches"]}
    assert set(switches) == {"spine0", "spine1", "leaf0", "leaf1"}
    assert sum(s["tx_bytes"] for s in switches.values()) == links.filter(~pl.col("node").str.starts_with("h"))[
        "tx_bytes"].sum()
    assert summary["link_tiers"] == ["leaf-spine", "spine-leaf", "host-up", "host-down"]
    for plot in ("tier_utilisation.png", "link_heatmap.png"):
        assert (out / plot).stat().st_size > 0
    loaded = Results.load(out)
    assert loaded.links.equals(links) and loaded.link_samples.height == samples.height


def test_a_poisson_run_shows_its_hot_link(tmp_path: Path) -> None:
    out = run(tmp_path, HOTSPOT, "hotspot")
    links = pl.read_parquet(out / "links.parquet")
    # Only the selected tiers: 8 host-down and 4 leaf-spine ports.
    assert links.height == 12 and set(links["tier"]) == {"host-down", "leaf-spine"}
    hottest = links.sort("tx_bytes", descending=True).row(0, named=True)
    assert hottest["link"] == "leaf0->h0" and hottest["utilisation"] > 0.2
    # The heat map's top row is the hot link.
    figure = plot_link_heatmap(pl.read_parquet(out / "link_samples.parquet"), links)
    assert figure.axes[0].get_yticklabels()[0].get_text() == "leaf0->h0"
    tiers = pl.read_parquet(out / "tier_samples.parquet")
    assert len(plot_tier_utilisation(tiers).axes[0].lines) == 4  # two tiers, and each one's busiest link


def test_without_links_nothing_changes(tmp_path: Path) -> None:
    out = run(tmp_path, HOTSPOT.replace('links = ["tier:host-down", "tier:leaf-spine"]\n', ""), "plain")
    for name in ("links.parquet", "tier_samples.parquet", "link_samples.parquet", "tier_utilisation.png",
                 "link_heatmap.png"):
        assert not (out / name).exists(), name
    summary = json.loads((out / "summary.json").read_text())
    assert "switches" not in summary and "link_tiers" not in summary
    assert "links =" not in (out / "scenario.toml").read_text()
    assert Results.load(out).links.height == 0


def test_a_bad_selection_is_one_line_naming_the_field(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(HOTSPOT.replace('"tier:leaf-spine"', '"tier:core"'))
    result = run_cli("run", str(scenario), "--out", str(tmp_path / "bad"), "--quiet")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'retx: error: output.links[1]: "core" is not a tier of this network (its tiers: leaf-spine, spine-leaf, '
        "host-up, host-down)"]
