"""How far uet-htsim moves from itself when only its random seed changes.

uet-htsim draws its switches' hash salts, ECN marks, trimming choices and entropy values from
one global generator seeded by `-seed` (13 unless given; `main_uec.cpp:115, 399-401, 525-526`).
A reimplementation with its own random streams can at best match uet-htsim's *distribution* of
outcomes, not one draw of it. This script measures that distribution on the validation
experiments `retx reproduce uet-htsim-crosscheck` compares against: each experiment run at seed
13 (what the validation suites print) and at other seeds, recording per run the tail (the last
flow's finish, us) and how far each flow's finish time moved from the seed-13 run (the largest
relative deviation and the share within 5 %). It writes
python/retx/reproduce/data/uet_htsim_seeds.csv, which the cross-check reads.

Run from a uet-htsim checkout at 40ccb05 built as its README says (`htsim_uec` in
htsim/sim/datacenter), e.g.

    python scripts/uet_htsim_seeds.py --htsim ../peers/uet-htsim --seeds 1-9 --lines 3,4,6,8,10
    python scripts/uet_htsim_seeds.py --htsim ../peers/uet-htsim --seeds 1-3 --lines 5,11,13 --append

(the small experiments take under a second a run; the 1,024-host ones 6-25 s).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import subprocess
import tempfile
from pathlib import Path

PLANS = {"sender": "validate_uec_sender.txt", "rcv": "validate_uec_rcv.txt", "both": "validate_uec_both.txt"}
REFERENCE_SEED = 13
OUT = Path(__file__).resolve().parents[1] / "python" / "retx" / "reproduce" / "data" / "uet_htsim_seeds.csv"
FINISHED = re.compile(r"^Flow (\S+) flowId \d+ uecSrc \d+ finished at (\S+)")
HEADER = ("# uet-htsim 40ccb05 built on the 2-core development machine, its validation experiments run with their\n"
          "# plans' flags at -seed 13 (the suites' runs) and at other seeds (scripts/uet_htsim_seeds.py). Per run: the\n"
          "# tail (last finish, us, 6 significant digits as printed), the largest relative deviation of a flow's finish\n"
          "# time from the seed-13 run, and the share of flows within 5 % of it.\n")


def experiments(plan: Path) -> list[tuple[int, str, str, list[str]]]:
    """(line, name, connection matrix, flags) of each experiment of a validate*.txt plan."""
    out: list[tuple[int, str, str, list[str]]] = []
    for raw in plan.read_text().splitlines():
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("!"):
            out.append((len(out) + 1, "", line.split()[0], []))
            continue
        key, _, value = line[1:].partition(" ")
        if key == "Experiment":
            out[-1] = (out[-1][0], value, out[-1][2], out[-1][3])
        elif key == "Param":
            out[-1][3].extend(value.split())
    return out


def finishes(datacenter: Path, cm: str, flags: list[str], seed: int) -> dict[str, float]:
    """Each flow's finish time (us) as `htsim_uec` prints it."""
    with tempfile.TemporaryDirectory() as scratch:
        stdout = subprocess.run([str(datacenter / "htsim_uec"), "-tm", cm, *flags, "-seed", str(seed),
                                 "-o", os.path.join(scratch, "log")],
                                cwd=datacenter, capture_output=True, text=True, check=True).stdout
    return {m.group(1): float(m.group(2)) for m in map(FINISHED.match, stdout.splitlines()) if m}


def seed_list(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--htsim", type=Path, required=True, help="the uet-htsim checkout")
    parser.add_argument("--seeds", type=seed_list, required=True, help="e.g. 1-9 or 1,2,5")
    parser.add_argument("--lines", required=True, help="the plans' experiment numbers, e.g. 3,4,6")
    parser.add_argument("--plans", default="sender,rcv,both")
    parser.add_argument("--append", action="store_true", help="add to the CSV instead of replacing it")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    datacenter = args.htsim / "htsim" / "sim" / "datacenter"
    lines = {int(x) for x in args.lines.split(",")}
    new = not (args.append and args.out.exists())
    # Rows already recorded (mode, line, seed): an appended run adds only the others.
    have: set[tuple[str, int, int]] = set()
    if not new:
        with args.out.open() as f:
            have = {(r["mode"], int(r["line"]), int(r["seed"]))
                    for r in csv.DictReader(line for line in f if not line.startswith("#"))}
    with args.out.open("w" if new else "a", newline="") as f:
        if new:
            f.write(HEADER)
        writer = csv.writer(f)
        if new:
            writer.writerow(["mode", "line", "seed", "flows", "tail_us", "max_dev", "within_5pct"])
        for mode in args.plans.split(","):
            for line, name, cm, flags in experiments(datacenter / PLANS[mode]):
                if line not in lines:
                    continue
                reference = finishes(datacenter, cm, flags, REFERENCE_SEED)
                for seed in [REFERENCE_SEED, *args.seeds]:
                    if (mode, line, seed) in have:
                        continue
                    run = reference if seed == REFERENCE_SEED else finishes(datacenter, cm, flags, seed)
                    devs = [abs(run.get(k, math.inf) / v - 1.0) for k, v in reference.items()]
                    writer.writerow([mode, line, seed, len(run), max(run.values()), round(max(devs), 4),
                                     round(sum(d <= 0.05 for d in devs) / len(devs), 4)])
                    f.flush()
                    print(f"{mode} {line} {name}: seed {seed}: tail {max(run.values())} us, largest deviation "
                          f"{max(devs):.3f}", flush=True)


if __name__ == "__main__":
    main()
