"""Several jobs on one fabric on the Python side (issue 46 item 2): the `job` column of the
flow and collective tables, summary.json's "jobs" (only for a run of several), the line per
job `retx run` prints, the FCT CDF with a line per job, the report's Jobs section, and
`collective_flows` cutting each collective job's own flows."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

import retx
from conftest import EXAMPLES, SMALL_SCENARIO, run_cli
from retx.plots import plot_fct_cdf
from retx.report import write_report
from retx.results import Results, collective_flows, job_names, job_stats

# A tenant's flow list first, then a ring all-reduce on h0..h3 that starts later than some of
# the tenant's flows, so that the two jobs' flows interleave in flow_id order.
TWO_JOBS = """\
name = "jobs"
seed = 3
duration = "20ms"

[topology]
kind = "single-switch"
hosts = 6
host_link = "100Gbps"
link_delay = "1us"

[transport]
recovery = "irn"
cc = "none"

[[workload]]
name = "tenant"
kind = "flow-list"
hosts = ["h4", "h5", "h0"]
flows = [{ src = "h4", dst = "h5", size = "100KB" },
         { src = "h5", dst = "h0", size = "200KB", start = "30us" }]

[[workload]]
name = "ring"
kind = "collective"
hosts = "0..4"

[workload.collective]
op = "all-reduce"
ranks = 4
size = "400KB"
start = "10us"
"""


def _run(text: str) -> Results:
    return retx.run(retx.Scenario.from_str(text))


def test_every_row_carries_its_job_and_the_summary_has_one_entry_per_job() -> None:
    results = _run(TWO_JOBS)
    flows = results.flows
    assert flows["job"].to_list().count("tenant") == 2
    assert flows["job"].to_list().count("ring") == 4 * 6
    # Merged by start time: the tenant's second flow (30 us) comes after the ring's first step (10 us).
    assert flows["job"].to_list()[:2] == ["tenant", "ring"]
    assert set(results.collectives["job"]) == {"ring"}
    assert set(results.collective_steps["job"]) == {"ring"}
    jobs = results.summary["jobs"]
    assert [j["job"] for j in jobs] == ["tenant", "ring"]
    assert [j["flows"] for j in jobs] == [2, 24]
    assert all(j["flows_finished"] == j["flows"] for j in jobs)
    assert "iterations" not in jobs[0] and jobs[1]["iterations"] == jobs[1]["iterations_finished"] == 1
    assert jobs[1]["cct_us_mean"] == results.collectives["cct_us"][0]
    assert jobs[0]["fct_us_mean"] == flows.filter(pl.col("job") == "tenant")["fct_us"].mean()
    # The steps cut each collective job's own flows, not the flow table's first rows.
    tagged = collective_flows(results)
    assert tagged.height == 24 and set(tagged["job"]) == {"ring"}
    assert tagged.filter(pl.col("step") == 0)["src"].to_list() == ["h0", "h1", "h2", "h3"]


def test_one_workload_has_its_default_job_and_no_jobs_summary() -> None:
    results = _run(SMALL_SCENARIO)
    assert results.flows["job"].to_list() == ["job0"]
    assert "jobs" not in results.summary
    assert job_names(results.flows, results.resolved) == ["job0"]


def test_jobs_without_names_are_job0_job1_and_stats_read_back(tmp_path: Path) -> None:
    text = TWO_JOBS.replace('name = "tenant"\n', "").replace('name = "ring"\n', "")
    results = _run(text)
    assert [j["job"] for j in results.summary["jobs"]] == ["job0", "job1"]
    saved = Results.load(results.save(tmp_path / "run"))
    assert saved.summary["jobs"] == results.summary["jobs"]
    assert job_stats(saved.flows, saved.collectives) == results.summary["jobs"]


def test_the_fct_cdf_draws_a_line_per_job() -> None:
    results = _run(TWO_JOBS)
    figure = plot_fct_cdf(results.flows, by="job")
    assert isinstance(figure, Figure)
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert labels == ["tenant (n = 2)", "ring (n = 24)"]


def test_the_cli_prints_a_line_per_job_and_the_report_a_jobs_section(tmp_path: Path) -> None:
    out = tmp_path / "two-jobs"
    done = run_cli("run", str(EXAMPLES / "two-jobs.toml"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "job allreduce" in done.stdout and "job tenant" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert [j["job"] for j in summary["jobs"]] == ["allreduce", "tenant"]
    assert all(j["flows_finished"] == j["flows"] for j in summary["jobs"]), summary["jobs"]
    flows = pl.read_parquet(out / "flows.parquet")
    assert set(flows["job"]) == {"allreduce", "tenant"}
    assert (out / "fct_cdf.png").exists() and (out / "collective_timeline.png").exists()
    page = write_report(out).read_text()
    assert "Jobs</h2>" in page and "allreduce" in page


def test_a_second_workload_error_names_its_job(tmp_path: Path) -> None:
    bad = TWO_JOBS.replace('hosts = "0..4"', 'hosts = "0..9"')
    path = tmp_path / "bad.toml"
    path.write_text(bad)
    done = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.startswith('retx: error: workload[1].hosts: "0..9" is not a range of host positions'), done.stderr


def test_links_show_where_two_jobs_meet() -> None:
    """The issue's done-when: a ring all-reduce and a Poisson tenant on one fat-tree, with
    `[output] links` showing where they met. The all-reduce is the first job, so alone it runs
    the same flows (the seed's own streams); the tenant's hosts h8..h15 carry nothing then, and
    the links the ring uses carry more in the joint run wherever the tenant crossed them."""
    text = (EXAMPLES / "two-jobs.toml").read_text() + '\n[output]\nlinks = "all"\n'
    ring_only = text[: text.index('[[workload]]\nname = "tenant"')] + '\n[output]\nlinks = "all"\n'

    def link_bytes(scenario: str) -> dict[str, int]:
        links = retx.run(retx.Scenario.from_str(scenario)).links
        return {r["link"]: r["tx_bytes"] for r in links.iter_rows(named=True)}

    joint, ring = link_bytes(text), link_bytes(ring_only)
    assert set(joint) == set(ring) and len(joint) > 0
    tenant_hosts = [f"h{i}" for i in range(8, 16)]
    for k in joint:
        if k.split("->")[0] in tenant_hosts:
            assert ring[k] == 0 < joint[k], k
    met = [k for k in joint if 0 < ring[k] < joint[k]]
    fabric = [k for k in met if not any(end.startswith("h") for end in k.split("->"))]
    assert fabric, "the two jobs meet inside the fabric"
