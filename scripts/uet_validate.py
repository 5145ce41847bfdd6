#!/usr/bin/env python3
"""uet-htsim's validation plans run by its own validate.py with retx as the binary, beside what
uet-htsim printed for them (its committed `validate_outputs/*.out`, which our build reproduces).

    scripts/uet_validate.py validate_load_balancing_snd [--retx-out FILE] [--markdown]

For each plan (`htsim/sim/datacenter/PLAN.txt` of the uet-htsim checkout, ../peers/uet-htsim or
$RETX_UET_HTSIM_DIR) it writes a copy whose `!Binary ./htsim_uec` lines name `retx uet-htsim`,
runs validate.py on it from the plan's folder (unless --retx-out gives that output already),
and prints per experiment: the plan's tail target, uet-htsim's tail and verdict, retx's tail and
verdict, their ratio and whether the verdicts agree. Issue 44: the load-balancing plans
(oblivious, bitmap, REPS and mixed spraying, large queues, 8 failed core links) were not in
`retx reproduce uet-htsim-crosscheck`; this runs them as their authors run them.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def checkout() -> Path:
    env = os.environ.get("RETX_UET_HTSIM_DIR")
    return Path(env) if env else REPO.parent / "peers" / "uet-htsim"


def experiments(output: str) -> list[dict[str, object]]:
    """validate.py's output, experiment by experiment: name, tail (us), verdict, summary."""
    rows: list[dict[str, object]] = []
    for line in output.splitlines():
        if line.startswith("Experiment:"):
            rows.append({"experiment": line.split(":", 1)[1].strip(), "tail_us": None, "verdict": "error",
                         "summary": ""})
        elif rows and (m := re.match(r"\[(PASS|FAIL)\] Tail FCT (\S+) us", line)):
            rows[-1]["verdict"], rows[-1]["tail_us"] = m.group(1), float(m.group(2))
        elif rows and line.startswith("Summary:"):
            rows[-1]["summary"] = line.split(":", 1)[1].strip()
    return rows


def targets(plan: Path) -> list[float]:
    return [float(line.split()[1]) for line in plan.read_text().splitlines() if line.startswith("!tailFCT")]


def run_retx(plan: Path, out_dir: Path) -> str:
    binary = (f"env PYTHONPATH={REPO / 'python'} {sys.executable} -m retx uet-htsim --force "
              f"--out {out_dir}/run")
    text = plan.read_text().replace("!Binary ./htsim_uec", f"!Binary {binary}")
    copy = out_dir / plan.name
    copy.write_text(text)
    done = subprocess.run([sys.executable, "validate.py", str(copy)], cwd=plan.parent, capture_output=True,
                          text=True, check=True)
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plans", nargs="+", help="plan names, e.g. validate_load_balancing_snd")
    ap.add_argument("--retx-out", type=Path, help="validate.py's output for retx, if already run (one plan)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args()
    folder = checkout() / "htsim" / "sim" / "datacenter"
    agree = total = 0
    for name in args.plans:
        plan = folder / f"{name}.txt"
        reference = folder / "validate_outputs" / f"{name}.out"
        if not plan.is_file() or not reference.is_file():
            print(f"uet_validate: {plan} or {reference} is missing (the uet-htsim checkout)", file=sys.stderr)
            return 2
        if args.retx_out:
            ours = args.retx_out.read_text()
        else:
            with tempfile.TemporaryDirectory() as tmp:
                ours = run_retx(plan, Path(tmp))
        theirs_rows, ours_rows = experiments(reference.read_text()), experiments(ours)
        goals = targets(plan)
        if args.markdown:
            print(f"\n`{name}`\n")
            print("| experiment | target us | uet-htsim us | retx us | retx / uet-htsim | verdicts |")
            print("|---|---|---|---|---|---|")
        for i, (t, o) in enumerate(zip(theirs_rows, ours_rows)):
            total += 1
            same = t["verdict"] == o["verdict"]
            agree += same
            ratio = (o["tail_us"] / t["tail_us"]) if t["tail_us"] and o["tail_us"] else float("nan")
            goal = goals[i] if i < len(goals) else float("nan")
            cells = [str(t["experiment"]), f"{goal:g}", f"{t['tail_us']} {t['verdict']}", f"{o['tail_us']} {o['verdict']}",
                     f"{ratio:.3f}", "agree" if same else "differ"]
            print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))
    print(f"\nverdicts agree on {agree} of {total} experiments", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
