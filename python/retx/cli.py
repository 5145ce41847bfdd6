"""The `retx` command line. User errors print one line `retx: error: ...` and exit with 2; a
bug (a Rust panic or an unexpected Python exception) prints one line `retx: internal error:
...` and exits with 3, never a traceback."""

import os
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

# Only what every command, the help and the argument declarations need is imported here;
# polars, matplotlib, the sweep, calibration and report machinery are imported by the
# commands that use them, so `retx --help`, `retx validate` and a `retx run` without plots
# do not pay for them (issue 45 item 6; tests/python/test_cli_imports.py holds it).
from retx import checked, hw_trace, reproduce
from retx._native import PanicException, ScenarioError, last_panic
from retx.checked import EXECUTORS
from retx.output import OutputError, check_folder, check_target, staged
from retx.provenance import version
from retx.scenario import SWEEP_TABLE, Scenario
from retx.table import format_table, format_value

if TYPE_CHECKING:
    from retx.results import Results

USER_ERROR_STATUS = 2
INTERNAL_ERROR_STATUS = 3
# What `retx run` names its plots (retx.plots names the collective and fabric ones).
FCT_CDF_PLOT = "fct_cdf.png"
SLOWDOWN_BY_SIZE_PLOT = "slowdown_by_size.png"
QUEUES_PLOT = "queues.png"
CC_PLOT = "cc.png"
POOLS_PLOT = "pools.png"
FLOW_ROWS_SHOWN = 10
FLOW_COLUMNS_SHOWN = [
    "flow_id", "src", "dst", "size_bytes", "fct_us", "slowdown", "goodput_gbps",
    "retx_bytes", "notifications", "timeouts", "completed",
]

app = typer.Typer(
    name="retx",
    help="Packet-level simulator of loss recovery and congestion control for RDMA NICs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain click help: rich markup would eat "[default: ...]" and label flags "<bool>".
    rich_markup_mode=None,
)


class UserError(Exception):
    """A mistake on the command line: printed as one line, exit status 2."""


def _print_version(value: bool) -> None:
    if value:
        print(f"retx {version()}")
        raise typer.Exit()


MEMORY_BUDGET_ENV = "RETX_MEMORY_BUDGET"  # read by the core (crates/retx/src/config/budget.rs)
THREADS_ENV = checked.THREADS_ENV  # read by the core (crates/retx/src/config/run.rs), over [run] threads
MAX_THREADS = 1024


def _threads_option() -> Any:
    return typer.Option(None, "--threads", min=1, max=MAX_THREADS, show_default=False, metavar="N",
                        help="Split each run's network over N threads (docs/SCENARIO.md, \"Parallel runs\"): "
                             "the same results, sooner on several cores [default: [run] threads, else 1].")


def _use_threads(threads: Optional[int]) -> None:
    """`--threads N`: every run of this process (and of a sweep's workers, which inherit the
    environment) uses N threads, whatever its scenario says."""
    if threads is not None:
        os.environ[THREADS_ENV] = str(threads)
_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*(B|KB|kB|MB|GB|KiB|MiB|GiB)?\s*$")


@app.callback()
def _main_options(
    _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                  help="Print the retx version and exit."),
    memory_budget: Optional[str] = typer.Option(
        None, "--memory-budget", show_default=False, metavar="SIZE",
        help="Refuse a run whose estimated memory exceeds SIZE (e.g. 32GB) before it starts, in every "
             "command [default: $RETX_MEMORY_BUDGET, else half the machine's memory]."),
) -> None:
    """Packet-level simulator of loss recovery and congestion control for RDMA NICs."""
    if memory_budget is not None:
        if not _SIZE.match(memory_budget) or not any(c in "123456789" for c in memory_budget.split(".")[0]):
            raise typer.BadParameter(f"{memory_budget!r} is not a size above 0 (bytes, or e.g. 32GB)",
                                     param_hint="'--memory-budget'")
        # The core reads the budget from the environment, so sweep workers inherit it too.
        os.environ[MEMORY_BUDGET_ENV] = memory_budget.strip()


@app.command()
def run(
    file: Path = typer.Argument(..., help="Scenario TOML file, an HPCC ns-3 config, or an htsim connection "
                                          "matrix (.cm; see docs/SCENARIO.md)."),
    topology: Optional[Path] = typer.Option(None, "--topology", show_default=False,
                                            help="With a .cm file: the scenario TOML whose network runs it "
                                                 "[default: htsim_ndp's fat-tree for its Nodes]."),
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Output folder [default: results/<name>]."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Override the scenario's root seed."),
    set_: Optional[list[str]] = typer.Option(
        None, "--set", show_default=False, metavar="KEY=VALUE",
        help="Override a field: key=value (dotted key, e.g. transport.cc=hpcc; the value read as "
             "`retx sweep --set` reads it). Repeat for more keys."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no tables."),
    force: bool = typer.Option(False, "--force", help="Overwrite the results already in --out."),
    no_plots: bool = typer.Option(False, "--no-plots",
                                  help="Write the tables and summary.json but no .png plots (no matplotlib start-up "
                                       "and drawing: most of what a short run spends outside the simulator)."),
    threads: Optional[int] = _threads_option(),
) -> None:
    """Run one scenario and write its results.

    Writes flows, time series, summary.json (with FCT statistics and provenance), the resolved
    scenario and plots (unless --no-plots): throughput, and the slowdown CDF and slowdown by
    size when flows finished. A collective workload also writes collectives.parquet,
    collective_steps.parquet and collective_timeline.png."""
    if file.suffix == ".cm":
        scenario = Scenario.from_htsim_cm(file, topology)
    elif topology is not None:
        raise UserError("--topology: only with an htsim connection matrix (.cm)")
    else:
        scenario = _load_one(file)
    overrides = _single_values(set_ or [])
    if seed is not None:
        overrides["seed"] = seed
    if overrides:
        scenario = scenario.with_overrides(overrides)
    out_dir = out or Path("results") / scenario.name
    check_target(out_dir, force or out is None)
    printed = _print_warnings(scenario)
    if not no_plots:
        _import_plots_beside()
    _use_threads(threads)
    if threads and threads > 1:
        from retx.progress import labelled

        # The progress line says how many threads run it.
        with labelled(f"{scenario.name} on {threads} threads"):
            results = run_scenario(scenario, progress=not quiet)
    else:
        results = run_scenario(scenario, progress=not quiet)
    _print_engine(results.engine)
    # What only the built network shows (a setting far from its BDP, too few switch queues).
    for line in results.summary.get("warnings", [])[len(printed):]:
        print(f"retx: warning: {line}", file=sys.stderr)
    # Everything is written into a temporary folder beside the output folder, which replaces
    # it at the end: a failure part-way leaves the old results or none.
    with staged(out_dir) as folder:
        results.write(folder)
        if not no_plots:
            _write_plots(results, folder, scenario.name)
    if results.fct_txt is not None:
        print(f"wrote {results.fct_txt_target(out_dir)}")
    if results.pcap is not None:
        print(f"wrote {results.pcap_target(out_dir)}")
    if not quiet:
        print(_format_summary(results.summary, results.recovery))
        print()
        shown = [c for c in FLOW_COLUMNS_SHOWN if c in results.flows.columns]
        if "jobs" in results.summary:
            shown.append("job")
        print(format_table(results.flows.select(shown), max_rows=FLOW_ROWS_SHOWN))
        print()
    deadlock = results.summary.get("pfc_deadlock")
    if deadlock:
        links = ", ".join(port["link"] for port in deadlock["ports"])
        print(f"PFC deadlock at {deadlock['detected_at_us']:.3f} us, the run ended there: {links}")
    _warn_unfinished(results.summary)
    print(f"wrote {out_dir}/")


@app.command(name="uet-htsim", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def uet_htsim(
    ctx: typer.Context,
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Output folder [default: results/<matrix name>]."),
    force: bool = typer.Option(False, "--force", help="Overwrite the results already in --out."),
    threads: Optional[int] = _threads_option(),
) -> None:
    """Run an htsim_uec command line: `retx uet-htsim -tm FILE.cm [uet-htsim flags]`.

    uet-htsim's flags (-nodes, -tiers, -topo, -end, -seed, -paths, -cwnd, -sender_cc_only,
    -receiver_cc_only, -sender_cc, -receiver_cc, -load_balancing_algo, -q, -ecn, -failed,
    -linkspeed, -mtu, -hop_latency, -disable_trim, -trimsize, -sack_threshold, -target_q_delay,
    -qa_gate, ...) set up the network, switches and UET as uet-htsim's main_uec.cpp does; stdout
    is a line per finished flow and the packet summary in uet-htsim's format (its validate.py
    reads it), and the results are written as `retx run` writes them. A flag retx does not model
    is refused naming it. See docs/SCENARIO.md, "uet-htsim's command line"."""
    from retx import uet_htsim as uh

    flags = uh.parse(list(ctx.args))
    assert flags.tm is not None
    if flags.ignored:
        print(f"retx: ignored (uet-htsim's logging only): {' '.join(flags.ignored)}", file=sys.stderr)
    name = flags.tm.stem if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", flags.tm.stem) else "uet-htsim"
    scenario = uh.scenario(flags, name)
    out_dir = out or Path("results") / scenario.name
    check_target(out_dir, force or out is None)
    _print_warnings(scenario)
    _use_threads(threads)
    results = run_scenario(scenario, progress=False)
    _print_engine(results.engine)
    with staged(out_dir) as folder:
        results.write(folder)
    for line in uh.flow_lines(results.flows, flags.packet_size, results.summary):
        print(line)
    _warn_unfinished(results.summary)
    print(f"retx: wrote {out_dir}/", file=sys.stderr)


def _print_engine(engine: Optional[dict[str, Any]]) -> None:
    """How the run used the machine, on stderr: why one thread when more were asked for, or
    the partitions and the share of their time spent waiting for one another."""
    if not engine:
        return
    if engine.get("serial_because"):
        print(f"retx: ran on one thread: {engine['serial_because']}", file=sys.stderr)
    elif engine.get("threads", 1) > 1:
        busy, wait = sum(engine["busy_s"]), sum(engine["wait_s"])
        share = wait / (busy + wait) if busy + wait > 0 else 0.0
        print(f"retx: ran on {engine['threads']} threads: {engine['threads']} partitions, lookahead "
              f"{engine['lookahead_us']:g} us, {engine['windows']:,} windows, {share:.0%} of the threads' time "
              "waiting at barriers", file=sys.stderr)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if engine["threads"] > cores:
            print(f"retx: warning: {engine['threads']} threads on {cores} cores: the partitions take turns on the "
                  "cores and wait for one another at every window; use at most as many threads as cores",
                  file=sys.stderr)


def _single_values(options: list[str]) -> dict[str, Any]:
    """`--set key=value` of `retx run`: parsed as `retx sweep --set` parses its values, one each."""
    overrides: dict[str, Any] = {}
    for option in options:
        from retx.sweep import parse_set_option


        key, values = parse_set_option(option)
        if len(values) != 1:
            raise UserError(f"--set {option}: `retx run` takes one value per key; sweep several with `retx sweep`")
        if key in overrides:
            raise UserError(f"--set {key}: given twice")
        overrides[key] = values[0]
    return overrides


def _import_plots_beside() -> None:
    """Import retx.plots (matplotlib: a few tenths of a second) in a thread of its own while
    the simulator runs: the core releases the GIL, so on a second core the import is done by
    the time the plots are drawn. `_write_plots`' own import waits for it (the import lock);
    an import that fails here fails again there, with its message."""
    import threading

    def load() -> None:
        try:
            import retx.plots  # noqa: F401
        except Exception:  # noqa: BLE001 - raised again by _write_plots' import
            pass

    threading.Thread(target=load, name="retx-import-plots").start()


def run_scenario(scenario: Scenario, progress: bool) -> "Results":
    """`retx.runner.run`, imported when a run starts (with polars and rich)."""
    from retx.runner import run as run_one

    return run_one(scenario, progress=progress)


def _write_plots(results: "Results", folder: Path, title: str) -> None:
    from retx import plots

    plots.plot_throughput(results.timeseries, folder / "throughput.png", title=title)
    if results.fct_stats()["flows_finished"] > 0:
        # A line per job when the run has several (`[[workload]]`).
        by = "job" if "jobs" in results.summary else None
        plots.plot_fct_cdf(results.flows, folder / FCT_CDF_PLOT, title=title, by=by)
        plots.plot_slowdown_by_size(results.flows, folder / SLOWDOWN_BY_SIZE_PLOT, title=title, by=by)
    watched = {QUEUES_PLOT: (plots.plot_queues, results.queues), CC_PLOT: (plots.plot_cc, results.cc),
               POOLS_PLOT: (plots.plot_pools, results.pools)}
    for name, (draw, table) in watched.items():
        if table is not None and table.height:
            draw(table, folder / name, title=title)
    if results.collectives.height:
        plots.plot_collective_timeline(results.flows, results.collective_steps,
                                       folder / plots.COLLECTIVE_TIMELINE_PLOT, title=title)
    if results.tier_samples.height:
        plots.plot_tier_utilisation(results.tier_samples, folder / plots.TIER_UTILISATION_PLOT, title=title)
    if results.link_samples.height:
        plots.plot_link_heatmap(results.link_samples, results.links, folder / plots.LINK_HEATMAP_PLOT, title=title)


def _warn_unfinished(summary: dict[str, Any]) -> None:
    """A run whose finite flows did not all finish says so: its tables hold only the finished
    ones' FCTs, which alone would look like a complete result."""
    unfinished = summary.get("unfinished_flows")
    if not unfinished:
        return
    count, total = unfinished["count"], summary.get("flows", unfinished["count"])
    late = unfinished.get("never_started", 0)
    never = f", {late} of them never started" if late else ""
    print(f"retx: warning: {count} of {total} flows did not finish ({unfinished['reason']}{never}); "
          "their FCTs are missing from the results", file=sys.stderr)


def _print_warnings(scenario: Scenario) -> list[str]:
    lines = scenario.warnings()
    for line in lines:
        print(f"retx: warning: {line}", file=sys.stderr)
    return lines


@app.command()
def sweep(
    file: Path = typer.Argument(..., help="Scenario TOML file; its [sweep] table, if any, declares a grid."),
    set_: Optional[list[str]] = typer.Option(
        None, "--set", show_default=False, metavar="KEY=V1,V2",
        help="Sweep a field: key=v1,v2,... (dotted key, e.g. transport.cc=dcqcn,hpcc). Repeat for "
             "more keys; every combination runs. Overrides the same key in [sweep]."),
    seeds: Optional[int] = typer.Option(None, "--seeds", show_default=False,
                                        help="Seeds per point: seed, seed+1, ... [default: [sweep] seeds, else 1]."),
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Output folder [default: results/<name>-sweep]."),
    workers: Optional[int] = typer.Option(None, "--workers", show_default=False,
                                          help="Points run at once [default: one per core]."),
    executor: str = typer.Option("local", "--executor", help=f"Where points run: {' or '.join(EXECUTORS)}."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no table."),
    threads: Optional[int] = _threads_option(),
) -> None:
    """Run a grid of scenario variants x seeds in parallel; rerun to resume.

    Each point goes to OUT/points/<hash>/; OUT/runs.parquet indexes them (parameters, seed,
    hash, status, error, wall time), OUT/flows.parquet holds every point's flows and
    OUT/summary.parquet the mean and 95 % confidence interval across seeds. Finished points
    are skipped when the same sweep runs again; a failed point is recorded and the rest go on.
    Exit status 1 when some point failed."""
    from retx.report import MIN_SEEDS_FOR_INTERVALS
    from retx.sweep import parse_set_option, t_975
    from retx.sweep import sweep as run_sweep

    grid = dict(parse_set_option(option) for option in set_ or [])
    _use_threads(threads)  # points at once then default to cores / threads (checked.default_workers)
    result = run_sweep(file, grid, seeds, out, workers, executor, progress=not quiet)
    failed = result.failed
    if not quiet and result.summary.height:
        print(format_table(result.summary))
        print()
    fewest = min(result.summary["seeds"].to_list(), default=0) if "seeds" in result.summary.columns else 0
    if 2 <= fewest < MIN_SEEDS_FOR_INTERVALS:
        print(f"retx: warning: {fewest} seeds per point: the _ci95 half-widths (Student t, t = {t_975(fewest - 1):.3g}) "
              f"are too wide to mean much; run --seeds {MIN_SEEDS_FOR_INTERVALS} or more", file=sys.stderr)
    for error, count in failed.group_by("error", maintain_order=True).len().iter_rows():
        print(f"failed ({count} point{'s' if count > 1 else ''}): {error}", file=sys.stderr)
    print(f"{result.runs.height - failed.height} of {result.runs.height} points done; wrote {result.out_dir}/")
    if failed.height:
        raise typer.Exit(code=1)


@app.command()
def calibrate(
    spec: Path = typer.Argument(..., help="Calibration spec (TOML); see examples/calibrate/calibrate-demo.toml."),
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Output folder [default: results/<spec file name>]."),
    trials: Optional[int] = typer.Option(None, "--trials", show_default=False,
                                         help="Trials in all, counting those already in OUT [default: the spec's]."),
    workers: Optional[int] = typer.Option(None, "--workers", show_default=False,
                                          help="Runs at once [default: one per core; 1 for a reproduction]."),
    executor: str = typer.Option("local", "--executor", help=f"Where runs go: {' or '.join(EXECUTORS)}."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Search unknown parameters for the values under which a scenario's or a reproduction's
    numbers match a paper's (Optuna TPE, several seeds per trial); rerun to resume.

    The spec names a base scenario or a reproduction, the parameters with their ranges and the
    targets (a metric or a table cell, the paper's value and a tolerance). Writes OUT/trials.parquet
    (every trial), best.json, verdict.json (per target: reproduced, not reproduced with the closest
    value reached, or conflicting with another target; and what the search covered), targets.png
    and study.db, from which a killed calibration resumes without repeating a finished trial.
    `retx report OUT` renders it. Exit status 1 when no trial finished. Example:
    retx calibrate examples/calibrate/calibrate-demo.toml (about a minute on 2 cores)."""
    from retx.calibrate import calibrate as run_calibration

    result = run_calibration(spec, out, trials, workers, executor, progress=not quiet)
    for name, entry in result.verdict["targets"].items():
        print(f"{name}: {entry['statement']}")
    print(result.verdict["summary"])
    print(f"wrote {result.out_dir}/")
    if result.verdict["best_trial"] is None:
        raise typer.Exit(code=1)


@app.command()
def report(
    folder: Path = typer.Argument(..., help="A run folder (retx run), a sweep folder (retx sweep) or a "
                                            "calibration folder (retx calibrate)."),
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Where to write the page: a file, or a folder to hold report.html "
                                            "[default: FOLDER/report.html]."),
) -> None:
    """Write FOLDER/report.html (or --out): one self-contained page with provenance, the
    scenario, the summary tables and the plots, for sharing a result."""
    from retx.report import write_report

    checked.input_folder(folder, "report")
    print(f"wrote {write_report(folder, out)}")


@app.command()
def validate(file: Path = typer.Argument(..., help="Scenario TOML file, or an HPCC ns-3 config.")) -> None:
    """Check a scenario and print it with every default filled in (warnings go to stderr)."""
    scenario = _load_one(file)
    print(scenario.resolved(), end="")
    _print_warnings(scenario)


# The help lists every reproduction with its announced wall time, from the registry (a
# "\b" line keeps click from rewrapping the list into one paragraph).
REPRODUCE_HELP = f"""Reproduce a figure from a paper: run the grid, print the table, write table and plot.

Without a name, lists the reproductions. Typical wall time on 2 cores, full grid and --quick:

\b
{reproduce.listing()}
"""


@app.command(name="reproduce", help=REPRODUCE_HELP)
def reproduce_command(
    name: Optional[str] = typer.Argument(None, show_default=False,
                                         help="A reproduction listed above; without one, the list is printed."),
    out: Optional[Path] = typer.Option(None, "--out", show_default=False,
                                       help="Output folder [default: results/<name>]."),
    quick: bool = typer.Option(False, "--quick",
                               help="A coarser, shorter grid: faster, by as much as the list above says."),
    force: bool = typer.Option(False, "--force", help="Write over the files already in --out."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress (the table is still printed)."),
    threads: Optional[int] = _threads_option(),
) -> None:
    if name is None:
        print("Typical wall time on 2 cores, full grid and --quick:\n")
        print(reproduce.listing())
        return
    name = reproduce.canonical(name)
    reproduce.entry_of(name)
    default_dir = Path("results") / (f"{name}-quick" if quick else name)
    reproduce.lookup(name)
    # As `run`: a folder named with --out is refused when it holds anything, unless --force; the
    # default folder is the reproduction's own and is written over. A path below a file too.
    check_folder(checked.output_folder(out or default_dir), force or out is None)
    _use_threads(threads)
    reproduce.run(name, out or default_dir, quick, progress=not quiet)


@app.command(name="trace")
def trace_command(
    kind: str = typer.Argument(..., help="melo (MELO's receiver bitmap manager), stride (STRIDE's rate calculator), left (LEFT's dual-state pool) or left-gather (LEFT's scheduler and gather FIFOs)."),
    scenario: Optional[Path] = typer.Option(None, "--scenario", show_default=False,
                                            help="Scenario to run [default: melo-fig5a at 1 % loss, stride-fattree, or left-rtt-ratio at 32x]."),
    ops: int = typer.Option(hw_trace.DEFAULT_OPS, "--ops", help="Operations to record."),
    conns: Optional[int] = typer.Option(None, "--conns", show_default=False,
                                        help="Most connections to record [default: melo 4, stride 64, left 16]."),
    out: Path = typer.Option(..., "--out", help="Trace file to write."),
) -> None:
    """Write a trace of a run's operations on a hardware structure, with the model's answers
    (what the RTL in rtl/ is co-simulated against)."""
    # The trace file is checked before the run: an existing folder there is refused now.
    checked.output_file(out)
    base = _load_one(scenario) if scenario else None
    text = hw_trace.trace(kind, base, ops, conns)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    parsed = hw_trace.parse(text)
    print(f"{out}: {len(parsed.rows)} {parsed.kind} operations over {parsed.conns} connection(s)")


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
    from retx.memory import memory_table

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
    except (Exception, PanicException) as error:  # noqa: BLE001 - a bug: one line, never a traceback
        if isinstance(error, _user_errors()):
            print(f"retx: error: {_one_line(str(error))}", file=sys.stderr)
            sys.exit(USER_ERROR_STATUS)
        print(f"retx: internal error: {_one_line(_describe_bug(error))} (a bug in retx; please report it)", file=sys.stderr)
        sys.exit(INTERNAL_ERROR_STATUS)


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that are the user's mistake (one line, exit status 2). A report's
    ReportError counts when `retx.report` was imported: it cannot have been raised otherwise,
    and importing it here would cost every command its plotting libraries."""
    errors: tuple[type[BaseException], ...] = (ScenarioError, UserError, OutputError, reproduce.UnknownReproduction)
    report = sys.modules.get("retx.report")
    return errors + (report.ReportError,) if report is not None else errors


def _one_line(text: str) -> str:
    """Control characters (a newline in a quoted name) escaped: an error is always one line,
    whatever its message quotes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _describe_bug(error: BaseException) -> str:
    """One line for an unexpected exception: a Rust panic's place and message, or the Python
    exception's type, message and innermost frame."""
    if isinstance(error, PanicException):
        return f"panic at {last_panic() or error}"
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}{where}"


def _load_one(file: Path) -> Scenario:
    """A scenario for `run` or `validate`, which run one: a [sweep] table is for `retx sweep`."""
    scenario = Scenario.load(file)
    if SWEEP_TABLE in scenario.data:
        raise UserError(f"{SWEEP_TABLE}: {file} declares a grid; run it with `retx sweep {file}`")
    return scenario


# Shown whatever their value: what a run is, how long it took, and the delivery check.
SUMMARY_ALWAYS = ("name", "seed", "sim_time_us", "wall_seconds", "events", "events_per_sec", "packet_hops",
                  "flows", "flows_completed", "bad_deliveries")


def _format_summary(summary: dict[str, Any], recovery: str = "") -> str:
    """The run's summary on stdout: what is always shown, the counters that are not zero, and
    those of the run's own loss recovery scheme (`melo_*` for MELO) even at zero. Warnings went
    to stderr before the run and a deadlock has a line of its own; storms are counted here (the
    ports, FCT statistics and provenance are in summary.json)."""
    hidden = ("warnings", "pfc_deadlock", "fct", "provenance", "collectives", "jobs")
    shown = {key: value for key, value in summary.items() if key not in hidden}
    if "pfc_storms" in shown:
        shown["pfc_storms"] = len(shown["pfc_storms"])
    if isinstance(shown.get("drops_by_kind"), dict):
        # Only the kinds something was dropped of: "unscheduled_data 12, grants 3".
        kinds = {kind: n for kind, n in shown["drops_by_kind"].items() if n}
        shown["drops_by_kind"] = ", ".join(f"{kind} {format_value(n)}" for kind, n in kinds.items()) if kinds else 0
    for group in summary.get("collectives") or []:
        shown[f"collective {group['group']}"] = _collective_line(group)
    for job in summary.get("jobs") or []:
        shown[f"job {job['job']}"] = _job_line(job)

    def worth_showing(key: str, value: Any) -> bool:
        if key in SUMMARY_ALWAYS or (recovery and key.startswith(f"{recovery}_")):
            return True
        return value not in (0, 0.0, None, "", [], {})

    shown = {key: value for key, value in shown.items() if worth_showing(key, value)}
    width = max((len(key) for key in shown), default=0)
    return "\n".join(f"{key.ljust(width)}  {format_value(value)}" for key, value in shown.items())


def _job_line(job: dict[str, Any]) -> str:
    """One job of summary.json's "jobs": its flows finished, their mean and p99 FCT, and a
    collective job's mean CCT."""
    what = f"{format_value(job['flows_finished'])}/{format_value(job['flows'])} flows finished"
    if job["flows_finished"]:
        what += f", mean FCT {format_value(job['fct_us_mean'])} us, p99 {format_value(job['fct_us_p99'])} us"
    if job.get("iterations"):
        what += f"; {job['iterations_finished']}/{job['iterations']} collective iterations"
        if job["iterations_finished"]:
            what += f", mean CCT {format_value(job['cct_us_mean'])} us"
    return what


def _collective_line(group: dict[str, Any]) -> str:
    """One group of summary.json's "collectives": what ran, and its CCT, slowdown and busbw
    (means over its finished iterations)."""
    what = (f"{group['op']} {group['algorithm']}, {group['ranks']} ranks x {format_value(group['size_bytes'])} B, "
            f"{group['iterations_finished']}/{group['iterations']} iterations finished")
    if not group["iterations_finished"]:
        return what
    return (f"{what}: mean CCT {format_value(group['cct_us_mean'])} us (ideal {format_value(group['ideal_cct_us'])}), "
            f"mean slowdown {format_value(group['slowdown_mean'])}, "
            f"mean busbw {format_value(group['busbw_gbps_mean'])} Gbps")
