"""The `retx` command line. User errors print one line `retx: error: ...` and exit with 2."""

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from retx import reproduce
from retx._native import ScenarioError
from retx.memory import memory_table
from retx.plots import plot_throughput
from retx.runner import run as run_scenario
from retx.scenario import Scenario
from retx.table import format_table, format_value

USER_ERROR_STATUS = 2
FLOW_ROWS_SHOWN = 10
FLOW_COLUMNS_SHOWN = [
    "flow_id", "src", "dst", "size_bytes", "fct_us", "slowdown", "goodput_gbps",
    "retx_bytes", "naks", "timeouts", "completed",
]

app = typer.Typer(
    name="retx",
    help="Packet-level simulator of loss recovery and congestion control for RDMA NICs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.command()
def run(
    file: Path = typer.Argument(..., help="Scenario TOML file, or an HPCC ns-3 config (see docs/SCENARIO.md)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder [default: results/<name>]."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Override the scenario's root seed."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no tables."),
) -> None:
    """Run one scenario; write flows, time series, summary and a throughput plot."""
    scenario = Scenario.load(file)
    if seed is not None:
        scenario = scenario.with_overrides({"seed": seed})
    results = run_scenario(scenario, progress=not quiet)
    out_dir = results.save(out or Path("results") / scenario.name)
    plot_throughput(results.timeseries, out_dir / "throughput.png", title=scenario.name)
    if results.fct_txt is not None:
        print(f"wrote {results.fct_txt_target(out_dir)}")
    if results.pcap is not None:
        print(f"wrote {results.pcap_target(out_dir)}")
    if not quiet:
        print(_format_summary(results.summary))
        print()
        shown = [c for c in FLOW_COLUMNS_SHOWN if c in results.flows.columns]
        print(format_table(results.flows.select(shown), max_rows=FLOW_ROWS_SHOWN))
        print()
    print(f"wrote {out_dir}/")


@app.command()
def validate(file: Path = typer.Argument(..., help="Scenario TOML file, or an HPCC ns-3 config.")) -> None:
    """Check a scenario and print it with every default filled in."""
    print(Scenario.load(file).resolved(), end="")


@app.command(name="reproduce")
def reproduce_command(
    name: str = typer.Argument(..., help=f"One of: {', '.join(reproduce.REPRODUCTIONS)}."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder [default: results/<name>]."),
    quick: bool = typer.Option(False, "--quick", help="A coarser, shorter grid (about a minute)."),
) -> None:
    """Reproduce a figure from a paper: run the grid, print the table, write table and plot."""
    module = reproduce.lookup(name)
    default_dir = Path("results") / (f"{name}-quick" if quick else name)
    module.run(out or default_dir, quick)


@app.command()
def memory(
    bandwidth: str = typer.Option("100Gbps", help="Link rate the NIC is sized for."),
    rtt: str = typer.Option("200us", help="Round-trip time the bitmaps must cover."),
    mtu: int = typer.Option(1024, help="Payload bytes per packet."),
    connections: int = typer.Option(300, help="Concurrent queue pairs on the NIC."),
    pool_bits: int = typer.Option(1024, help="MELO bits pool size per NIC side."),
    block_bits: int = typer.Option(8, help="MELO block size in bits."),
) -> None:
    """On-chip bytes per connection and in total for every loss recovery scheme."""
    table = memory_table(bandwidth, rtt, mtu, connections, pool_bits, block_bits)
    print(f"NIC sized for {bandwidth} x {rtt}, MTU {mtu} B, {connections} connections; "
          f"a CX-3 Pro QPC is 248 B")
    print(format_table(table.drop("breakdown")))
    print()
    for scheme, note in table.select("scheme", "breakdown").iter_rows():
        print(f"{scheme}: {note}")


def main() -> None:
    try:
        app()
    except (ScenarioError, reproduce.UnknownReproduction) as error:
        print(f"retx: error: {error}", file=sys.stderr)
        sys.exit(USER_ERROR_STATUS)


def _format_summary(summary: dict[str, Any]) -> str:
    width = max((len(key) for key in summary), default=0)
    return "\n".join(f"{key.ljust(width)}  {format_value(value)}" for key, value in summary.items())
