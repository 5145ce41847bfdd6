"""Is a change in a reproduction's numbers within run-to-run seed noise?

Used when a change to the engine moves results without changing any mechanism (e.g. a new
tie-breaking order for events at the same picosecond): the change is noise if the moved
numbers differ from the old ones by no more than the old numbers differ across seeds.

Step 1, with each build on PYTHONPATH in turn (the package's `retx._native` decides):

    python scripts/seed_noise.py run  --seeds 1 2 3 4 5 --out /tmp/noise/old
    python scripts/seed_noise.py run  --seeds 1         --out /tmp/noise/new

Step 2: compare. For every numeric cell of every reproduction's full table, the old seeds'
standard deviation s and the change d = new(seed 1) - old(seed 1); a cell is within noise when
|d| <= 2 s (or both are zero). Prints, per reproduction, the cells compared, how many are
within 2 s, and the largest |d| / s. For scale, the same count for a change of seed: old seed
k against old seed 1 (k = 2 ..), averaged; a change of order that is noise moves no more cells
beyond 2 s than a change of seed does.

    python scripts/seed_noise.py compare --old /tmp/noise/old --new /tmp/noise/new
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import tempfile
from pathlib import Path

import polars as pl


def run(seeds: list[int], out: Path, names: list[str]) -> None:
    from retx.reproduce import REPRODUCTIONS

    for name in names or list(REPRODUCTIONS):
        module = REPRODUCTIONS[name]
        for seed in seeds:
            module.BASE_SCENARIO["seed"] = seed
            with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
                table = module.run(Path(tmp), quick=False)
            dest = out / name
            dest.mkdir(parents=True, exist_ok=True)
            table.write_csv(dest / f"seed{seed}.csv")
            print(f"{name} seed {seed}: {table.height} rows", flush=True)


def compare(old: Path, new: Path) -> None:
    for dest in sorted(new.iterdir()):
        name = dest.name
        base = pl.read_csv(old / name / "seed1.csv")
        moved = pl.read_csv(dest / "seed1.csv")
        others = [pl.read_csv(p) for p in sorted((old / name).glob("seed*.csv"))]
        numeric = [c for c, t in base.schema.items() if t.is_numeric()]
        # Rows are matched by position: every seed runs the same grid in the same order.
        cells = within = 0
        seed_within = [0] * (len(others) - 1)
        worst = (0.0, "")
        for col in numeric:
            for row in range(base.height):
                values = [t[col][row] for t in others]
                if any(v is None for v in values) or moved[col][row] is None:
                    continue
                mean = sum(values) / len(values)
                s = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
                d = abs(moved[col][row] - base[col][row])
                cells += 1
                within += d <= 2 * s
                for k, v in enumerate(values[1:]):
                    seed_within[k] += abs(v - values[0]) <= 2 * s
                ratio = d / s if s > 0 else (0.0 if d == 0 else math.inf)
                if ratio > worst[0]:
                    worst = (ratio, f"{col} row {row}: old {base[col][row]:.6g} new {moved[col][row]:.6g} sd {s:.3g}")
        by_seed = sum(seed_within) / len(seed_within) if seed_within else float("nan")
        print(f"{name}: new order {within}/{cells} cells within 2 sd of {len(others)} old seeds "
              f"(a change of seed: {by_seed:.1f}/{cells}); largest |d|/sd {worst[0]:.2f} ({worst[1]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seeds", type=int, nargs="+", required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--only", nargs="*", default=[])
    c = sub.add_parser("compare")
    c.add_argument("--old", type=Path, required=True)
    c.add_argument("--new", type=Path, required=True)
    args = parser.parse_args()
    if args.cmd == "run":
        run(args.seeds, args.out, args.only)
    else:
        compare(args.old, args.new)


if __name__ == "__main__":
    main()
