"""`retx uet-htsim`: htsim_uec's command line run by retx (issue 44). Its flags set what
main_uec.cpp sets them to (network, queues, ECN, timeout, UET's settings), a flag retx does not
model is refused naming it, and stdout is uet-htsim's own format, which its validate.py reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from test_cli_errors import assert_one_line_error

from retx import uet_htsim as uh
from retx.reproduce import uet_htsim_crosscheck as xc


def matrix(tmp_path: Path, nodes: int, flows: str = "0->13 start 0 size 2000000") -> Path:
    path = tmp_path / f"m{nodes}.cm"
    lines = flows.splitlines()
    path.write_text(f"Nodes {nodes}\nConnections {len(lines)}\n" + "\n".join(lines) + "\n")
    return path


def data(tmp_path: Path, nodes: int, *flags: str) -> dict:
    return uh.scenario(uh.parse(["-tm", str(matrix(tmp_path, nodes)), *flags])).data


def test_defaults_are_main_uec_cpps_on_its_three_tier_network(tmp_path: Path) -> None:
    # 100 Gbps, 1 us hops, 4,150 B packets: RTT 14.02272 us, a BDP of 43 packets (the numbers
    # uet-htsim prints: "Tier 0 QueueSize Down 178450 bytes", ECN 37350 to 145250).
    d = data(tmp_path, 16)
    assert d["topology"] == {"kind": "fat-tree", "k": 4, "host_link": "100Gbps", "link_delay": "1000ns"}
    assert d["switch"]["trim"]["data_queue"] == "178450B"
    assert (d["switch"]["ecn"]["kmin"], d["switch"]["ecn"]["kmax"]) == ("37350B", "145250B")
    assert d["switch"]["ecn"]["to_hosts"] is True
    assert d["nic"]["mtu"] == 4086
    assert d["recovery"]["uet"] == {"cc": "nscc", "paths": 64, "load_balancing": "mixed"}
    assert d["duration"] == "1000us" and "seed" not in d


def test_each_flag_sets_what_uet_htsim_sets(tmp_path: Path) -> None:
    d = data(tmp_path, 128, "-receiver_cc_only", "-q", "500", "-paths", "128", "-load_balancing_algo", "reps_legacy",
             "-cwnd", "50", "-end", "3000", "-seed", "7", "-ecn", "10", "40", "-sack_threshold", "8192")
    assert d["topology"]["k"] == 8
    assert d["switch"]["trim"]["data_queue"] == f"{500 * 4150}B"
    assert (d["switch"]["ecn"]["kmin"], d["switch"]["ecn"]["kmax"]) == (f"{10 * 4150}B", f"{40 * 4150}B")
    assert d["switch"]["ecn"]["to_hosts"] is False, "no marking toward hosts when receivers pull credit"
    uet = d["recovery"]["uet"]
    # -receiver_cc_only turns the oversubscribed control off, but main_uec.cpp turns it back on
    # for an oversubscribed network without sender control: retx's default decides that.
    assert uet["cc"] == "rccc" and "oversubscribed_cc" not in uet
    assert "initial_window" not in uet, "-cwnd sets NSCC's window, unread under RCCC alone"
    assert (uet["paths"], uet["load_balancing"], uet["sack_threshold"]) == (128, "reps-legacy", "8192B")
    assert (d["duration"], d["seed"]) == ("3000us", 7)
    both = data(tmp_path, 16, "-sender_cc", "-receiver_cc", "-cwnd", "50")["recovery"]["uet"]
    assert (both["cc"], both["initial_window"]) == ("both", 50)
    forced = data(tmp_path, 16, "-receiver_cc_only", "-oversubscribed_cc")["recovery"]["uet"]
    assert forced["oversubscribed_cc"] is True
    off = data(tmp_path, 16, "-receiver_cc_only", "-force_disable_oversubscribed_cc")["recovery"]["uet"]
    assert off["oversubscribed_cc"] is False


def test_without_trimming_queues_are_five_bdps_and_the_timeout_follows(tmp_path: Path) -> None:
    d = data(tmp_path, 16, "-disable_trim")
    assert "trim" not in d["switch"] and d["switch"]["port_buffer"] == f"{5 * 43 * 4150}B"
    # 15 us + 6 x 892,250 B at 100 Gbps = 15 + 428.28 us.
    assert d["recovery"]["uet"]["trimming"] is False
    assert d["recovery"]["uet"]["rto"] == "443280000ps"


def test_failed_links_are_the_core_downlinks_uet_htsim_degrades(tmp_path: Path) -> None:
    # fat_tree_topology.cpp: with -failed 8 on K = 16 aggregation switch 0's eight core
    # downlinks (its cores 0, 8, ..., 56; retx numbers them 0..7) run at a quarter of the speed.
    d = data(tmp_path, 1024, "-failed", "8")
    assert d["switch"]["degraded"] == [{"from": f"core{c}", "to": "agg0", "factor": 0.25} for c in range(8)]
    # -failed 10: the next aggregation switch's first two as well (l + agg x 8 < 10).
    ten = data(tmp_path, 1024, "-failed", "10")["switch"]["degraded"]
    assert [x["to"] for x in ten] == ["agg0"] * 8 + ["agg1"] * 2
    assert [x["from"] for x in ten[8:]] == ["core8", "core9"], "agg1 sits at position 1 of its pod"


def test_two_tiers_and_topo_files_are_leaf_spines(tmp_path: Path) -> None:
    d = data(tmp_path, 32, "-tiers", "2")
    assert d["topology"] == {"kind": "leaf-spine", "spines": 4, "leaves": 8, "hosts_per_leaf": 4,
                             "host_link": "100Gbps", "fabric_link": "100Gbps", "link_delay": "1000ns"}
    # Diameter 4: RTT 9.34848 us, BDP 29 packets (what uet-htsim prints for its leaf-spines).
    assert d["switch"]["trim"]["data_queue"] == f"{29 * 4150}B"
    topo = tmp_path / "tiny.topo"
    topo.write_text("Nodes 32\nTiers 2\nPodsize 32\n\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\nRadix_Up 2\n"
                    "Downlink_Latency_ns 1000\nSwitch_Latency_ns 0\nOversubscribed 4\n\nTier 1\n"
                    "Downlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n")
    t = data(tmp_path, 32, "-topo", str(topo))["topology"]
    assert (t["kind"], t["spines"], t["leaves"], t["hosts_per_leaf"]) == ("leaf-spine", 2, 4, 8)


@pytest.mark.parametrize("flags, named", [
    (["-sleek"], "-sleek"),
    (["-frobnicate"], "-frobnicate"),
    (["-strat", "ecmp_ar"], "-strat"),
    (["-planes", "2"], "-planes"),
    (["-sender_cc_algo", "dctcp"], "-sender_cc_algo"),
    (["-end", "ten"], "-end"),
    (["-end", str(2**64)], "-end"),
    (["-ecn", "10"], "-ecn"),
    (["-ecn", "40", "10"], "-ecn"),
    (["-paths"], "-paths"),
    (["-nodes", "128"], "-nodes"),
    (["-tiers", "2"], "-tiers"),
    (["-switch_latency", "0.5"], "-switch_latency"),
    (["-trimsize", "5000"], "-trimsize"),
    (["-linkspeed", "nan"], "-linkspeed"),
])
def test_what_retx_cannot_run_as_uet_htsim_would_is_refused_naming_the_flag(tmp_path: Path, flags, named) -> None:
    cm = matrix(tmp_path, 16)
    assert_one_line_error(run_cli("uet-htsim", "--out", str(tmp_path / "out"), "-tm", str(cm), *flags), named)
    assert not (tmp_path / "out").exists()


def test_a_matrix_is_needed(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("uet-htsim", "-end", "10"), "-tm")
    assert_one_line_error(run_cli("uet-htsim", "-tm", str(tmp_path / "none.cm")), "-tm", "no such file")
    assert_one_line_error(run_cli("uet-htsim", "-tm", str(tmp_path)), "-tm")


def test_a_refused_setting_names_the_flag_that_set_it(tmp_path: Path) -> None:
    # The user wrote flags, not fields: the scenario's refusals are told as the flag's.
    cm = str(matrix(tmp_path, 16))
    assert_one_line_error(run_cli("uet-htsim", "-tm", cm, "-paths", "3"), "-paths", "power of two")
    assert_one_line_error(run_cli("uet-htsim", "-tm", cm, "-q", "2"), "-q")
    for flags, named in ((["-linkspeed", "16000000"], "-linkspeed"), (["-trimsize", "4150"], "-trimsize")):
        line = assert_one_line_error(run_cli("uet-htsim", "--out", str(tmp_path / "o"), "-tm", cm, *flags), named)
        assert "topology" not in line and "switch" not in line, line
    assert not (tmp_path / "o").exists()


def test_a_three_tier_topo_file_is_refused(tmp_path: Path) -> None:
    topo = tmp_path / "ft.topo"
    topo.write_text("Nodes 16\nTiers 3\nPodsize 4\n\nTier 0\nRadix_Down 2\n\nTier 1\nRadix_Down 2\n\nTier 2\nRadix_Down 4\n")
    assert_one_line_error(run_cli("uet-htsim", "-tm", str(matrix(tmp_path, 16)), "-topo", str(topo)), "-topo", "2-tier")


def test_stdout_is_uet_htsims_format_and_the_single_connection_matches_it(tmp_path: Path) -> None:
    # validate_uec_sender.txt's first line: one 2 MB flow, 0 -> 13, NSCC. uet-htsim prints
    # "finished at 176.2" and "New: 490 Rtx: 0 ... ACKs: 124 NACKs: 0 Pulls: 0".
    cm = matrix(tmp_path, 16)
    r = run_cli("uet-htsim", "--out", str(tmp_path / "out"), "-tm", str(cm), "-end", "1000", "-sender_cc_only")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    finished = [x for x in lines if "finished" in x]
    assert len(finished) == 1
    items = finished[0].split()  # as validate.py splits it
    assert items[1] == "Uec_0_13" and items[9:12] == ["total", "messages", "1"]
    assert abs(float(items[8]) - 176.2) <= 0.02 * 176.2
    summary = [x for x in lines if "New:" in x and "Rtx:" in x]
    assert summary[-1].startswith("New: 490 Rtx: 0 ") and " NACKs: 0 Pulls: 0 " in summary[-1]
    assert (tmp_path / "out" / "flows.parquet").is_file()


def plan_lines(plan: Path) -> list[tuple[str, list[str]]]:
    """A validate.py plan's experiments: matrix and `!Param` flags, in file order."""
    out: list[tuple[str, list[str]]] = []
    for line in plan.read_text().splitlines():
        if line.strip() and not line.startswith("!"):
            out.append((line.strip(), []))
        elif line.startswith("!Param"):
            out[-1][1].extend(line.split()[1:])
    return out


@pytest.mark.skipif(not xc.available(), reason="uet-htsim's connection matrices are not beside the repository")
def test_the_cross_check_runs_the_validation_plans_own_command_lines() -> None:
    # Every experiment of the three plans is the command line validate.py gives htsim_uec:
    # the same flags, read as htsim_uec reads them (`-paths 64` written or not).
    datacenter = xc.inputs_dir() / "htsim" / "sim" / "datacenter"
    for mode, plan in (("sender", "validate_uec_sender.txt"), ("rcv", "validate_uec_rcv.txt"), ("both", "validate_uec_both.txt")):
        lines = plan_lines(datacenter / plan)
        for e in (x for x in xc.EXPERIMENTS if x.mode == mode):
            cm, params = lines[e.idx - 1]
            theirs = uh.parse(["-tm", str(datacenter / cm), *(p.replace("topologies/", f"{datacenter}/topologies/") for p in params)])
            mine = uh.parse(xc.experiment_flags(e))
            assert (Path(cm).name, theirs) == (e.cm, mine), f"{mode} {e.idx}"
