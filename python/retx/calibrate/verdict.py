"""Statistics over a calibration's trials: the verdict per target (what the trials show, and no
more), the best points (best.json), how strongly each parameter moves a target (`influence`),
the spread of the parameters over the trials that fit, and `loss_term`, a target's share of the
objective.

Each reads a trials table (`retx.calibrate.search.trials_table`, or one made by hand: `trial`,
`status`, a column per parameter, per target its mean over seeds), so it can be recomputed
from trials.parquet without the study.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import polars as pl

from retx.calibrate.spec import Param, Target, value_text

REPRODUCED, NOT_REPRODUCED, CONFLICTING = "reproduced", "not reproduced", "conflicting"
# Points listed in best.json.
BEST_POINTS = 5


# --- the objective's terms -----------------------------------------------------------------------

def loss_term(target: Target, value: float) -> float:
    """A target's term of the objective (`retx.calibrate.search`): weight x ln(1 + e^2),
    e = |value - paper| / tolerance; inf when the value is not finite."""
    error = target.error(value)
    return target.weight * math.log1p(error * error) if math.isfinite(error) else math.inf


# --- the verdict -------------------------------------------------------------------------------------

def verdict(trials: pl.DataFrame, targets: Sequence[Target], params: Sequence[Union[Param, str]],
            seeds: Optional[Sequence[int]] = None, interrupted: int = 0, sampler: str = "",
            what: str = "") -> dict[str, Any]:
    """Per target, what the trials show, and no more. `trials` needs `trial`, `status` ("done"
    for a finished trial), a column per parameter, and per target `<name>` (the mean over seeds)
    and optionally `<name>_per_seed` (each seed's value).

    The best point is the finished trial that satisfies the most targets (its mean within
    tolerance), then the lowest loss, then the lowest number. A target is
    - "reproduced" when the best point satisfies it and no trial satisfying another target
      excludes it (see conflicting): its mean there and how many seeds were individually within;
    - "conflicting" when some trial satisfies it but no trial satisfies it together with some
      other target that a trial satisfies (`conflicts_with`; when no single other target does,
      but it is never satisfied together with those met at the best point, all of those);
    - "not reproduced" when no trial's mean is within tolerance: the closest mean reached, at
      which trial and parameters.
    `coverage` says what was searched: trials run (and failed, interrupted), seeds per trial,
    each parameter's range, and the sampler; a search samples its ranges, so "not reproduced"
    means not found in these trials, never unreachable."""
    keys = [p.key if isinstance(p, Param) else p for p in params]
    done = trials.filter(pl.col("status") == "done").sort("trial")
    failed = trials.filter(pl.col("status") == "failed").height
    rows = list(done.iter_rows(named=True))
    means = {t.name: [_none_nan(r.get(t.name)) for r in rows] for t in targets}
    ok = {t.name: [t.within(v) for v in means[t.name]] for t in targets}
    losses = [sum(loss_term(t, means[t.name][i]) for t in targets) for i in range(len(rows))]
    coverage: dict[str, Any] = {
        "trials": len(rows), "failed": failed, "interrupted": interrupted,
        "seeds_per_trial": len(seeds) if seeds is not None else None, "seeds": list(seeds) if seeds is not None else None,
        "params": {p.key: p.describe() for p in params if isinstance(p, Param)} or {k: "(not given)" for k in keys},
        "sampler": sampler or "(not given)",
        "note": "the search sampled these ranges in these trials; a target not reproduced was not found "
                "within them, which does not show it unreachable there, and nothing is claimed outside them",
    }
    result: dict[str, Any] = {"calibrating": what or None, "coverage": coverage, "best_trial": None,
                              "best_params": None, "targets": {}}
    if not rows:
        for t in targets:
            result["targets"][t.name] = {"verdict": NOT_REPRODUCED, "paper": t.value, "tolerance": t.tolerance_text(),
                                         "statement": "not reproduced: no trial finished"}
        result["summary"] = f"no trial finished ({failed} failed); nothing is reproduced"
        return result
    order = sorted(range(len(rows)), key=lambda i: (-sum(ok[t.name][i] for t in targets), losses[i], rows[i]["trial"]))
    best = order[0]
    met = {t.name for t in targets if ok[t.name][best]}
    satisfying = {t.name: {i for i in range(len(rows)) if ok[t.name][i]} for t in targets}
    reachable = [t.name for t in targets if satisfying[t.name]]
    pairwise = {n: sorted((m for m in reachable if m != n and not satisfying[n] & satisfying[m]),
                          key=[t.name for t in targets].index) for n in reachable}
    result["best_trial"] = rows[best]["trial"]
    result["best_params"] = {k: rows[best].get(k) for k in keys}
    result["best_loss"] = losses[best]

    def point(i: int, t: Target) -> dict[str, Any]:
        per_seed = rows[i].get(f"{t.name}_per_seed")
        within = sum(t.within(_none_nan(v)) for v in per_seed) if per_seed is not None else None
        return {"trial": rows[i]["trial"], "params": {k: rows[i].get(k) for k in keys}, "value": means[t.name][i],
                "per_seed": list(per_seed) if per_seed is not None else None, "seeds_within": within,
                "seeds": len(per_seed) if per_seed is not None else None}

    def seeds_text(p: dict[str, Any]) -> str:
        return f", {p['seeds_within']} of {p['seeds']} seeds individually within" if p["seeds"] is not None else ""

    for t in targets:
        entry: dict[str, Any] = {"paper": t.value, "tolerance": t.tolerance_text()}
        if not satisfying[t.name]:
            finite = [i for i in range(len(rows)) if math.isfinite(means[t.name][i])]
            entry["verdict"] = NOT_REPRODUCED
            if finite:
                closest = min(finite, key=lambda i: (t.error(means[t.name][i]), rows[i]["trial"]))
                entry["closest"] = point(closest, t)
                entry["statement"] = (f"not reproduced: no trial's mean came within {t.describe()}; the closest was "
                                      f"{value_text(means[t.name][closest])} at trial {rows[closest]['trial']} "
                                      f"({params_text(entry['closest']['params'])})")
            else:
                entry["statement"] = "not reproduced: no trial gave a finite value"
        else:
            conflicts = pairwise[t.name]
            if t.name not in met and not conflicts:
                conflicts = sorted(met, key=[x.name for x in targets].index)
            if conflicts:
                alone = min(satisfying[t.name], key=lambda i: (losses[i], rows[i]["trial"]))
                entry.update(verdict=CONFLICTING, conflicts_with=conflicts, alone=point(alone, t))
                joint = "any of" if pairwise[t.name] else "all of"
                entry["statement"] = (f"conflicting: reproduced alone (e.g. {value_text(means[t.name][alone])} "
                                      f"at trial {rows[alone]['trial']}), but no trial also satisfies {joint} "
                                      f"{', '.join(conflicts)}")
            else:
                at = point(best, t)
                entry.update(verdict=REPRODUCED, at=at)
                entry["statement"] = (f"reproduced: mean {value_text(means[t.name][best])} over seeds at trial "
                                      f"{rows[best]['trial']} ({params_text(at['params'])}){seeds_text(at)}")
        result["targets"][t.name] = entry
    counts = {v: sum(e["verdict"] == v for e in result["targets"].values())
              for v in (REPRODUCED, CONFLICTING, NOT_REPRODUCED)}
    seeds_part = f" x {len(seeds)} seed{'s' if len(seeds) != 1 else ''}" if seeds is not None else ""
    reproduced = [t.name for t in targets if result["targets"][t.name]["verdict"] == REPRODUCED]
    fits_text = ""
    if reproduced:
        # Which other trials meet the same targets: a reproduction that many settings give
        # does not pin the parameters down, and the verdict says so.
        fits = [i for i in range(len(rows)) if all(ok[n][i] for n in reproduced)]
        spread = {k: _spread([rows[i].get(k) for i in fits]) for k in keys}
        result["fits"] = {"targets": reproduced, "trials": [rows[i]["trial"] for i in fits], "spread": spread}
        fits_text = (f"; {len(fits)} trial{'s' if len(fits) != 1 else ''} meet{'s' if len(fits) == 1 else ''} "
                     f"the reproduced target{'s' if len(reproduced) != 1 else ''}"
                     + (", with " + "; ".join(f"{k} {_spread_text(v)}" for k, v in spread.items()) if len(fits) > 1 else ""))
    where = f"at trial {rows[best]['trial']}" if counts[REPRODUCED] else f"(the best point: trial {rows[best]['trial']})"
    result["summary"] = (f"{counts[REPRODUCED]} of {len(targets)} targets reproduced {where}, "
                         f"{counts[CONFLICTING]} conflicting, {counts[NOT_REPRODUCED]} not reproduced{fits_text}; "
                         f"searched {len(rows)} finished trials{seeds_part} ({failed} failed) over "
                         + "; ".join(f"{k} {v}" for k, v in coverage["params"].items()))
    result["all_reproduced"] = counts[REPRODUCED] == len(targets)
    return result


def _spread(values: list[Any]) -> Any:
    """[min, max] of numbers, else the distinct values (as text, sorted)."""
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [min(values), max(values)]
    return sorted({value_text(v) for v in values})


def _spread_text(spread: Any) -> str:
    if len(spread) == 2 and all(isinstance(v, (int, float)) for v in spread):
        return f"from {value_text(spread[0])} to {value_text(spread[1])}"
    return "in {" + ", ".join(spread) + "}"


def best_points(trials: pl.DataFrame, targets: Sequence[Target], keys: Sequence[str],
                count: int = BEST_POINTS) -> dict[str, Any]:
    """best.json: the `count` best finished trials (most targets satisfied, then lowest loss)
    with the targets each satisfies, and per target the trial whose mean came closest."""
    done = trials.filter(pl.col("status") == "done")
    rows = list(done.iter_rows(named=True))

    def describe(row: dict[str, Any]) -> dict[str, Any]:
        loss = sum(loss_term(t, _none_nan(row.get(t.name))) for t in targets)
        return {"trial": row["trial"], "params": {k: row.get(k) for k in keys}, "loss": loss,
                "satisfies": [t.name for t in targets if t.within(_none_nan(row.get(t.name)))],
                "targets": {t.name: {"mean": row.get(t.name), "sd": row.get(f"{t.name}_sd"),
                                     "per_seed": row.get(f"{t.name}_per_seed"),
                                     "seeds_within": row.get(f"{t.name}_seeds_within"),
                                     "within": t.within(_none_nan(row.get(t.name))),
                                     "paper": t.value, "tolerance": t.tolerance_text()} for t in targets}}

    described = sorted((describe(r) for r in rows), key=lambda d: (-len(d["satisfies"]), d["loss"], d["trial"]))
    closest = {}
    for t in targets:
        finite = [r for r in rows if math.isfinite(_none_nan(r.get(t.name)))]
        if finite:
            row = min(finite, key=lambda r: (t.error(r[t.name]), r["trial"]))
            closest[t.name] = {"trial": row["trial"], "mean": row[t.name], "within": t.within(row[t.name]),
                               "params": {k: row.get(k) for k in keys}}
    return {"objective": "sum over targets of weight x ln(1 + ((mean over seeds - paper) / tolerance)^2)",
            "best": described[:count], "closest_per_target": closest}


def _none_nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {value_text(v)}" for k, v in params.items())



# --- influence -----------------------------------------------------------------------------------

def influence(trials: pl.DataFrame, params: Sequence[Param], target: Target) -> dict[str, float]:
    """How strongly each parameter moves a target over the finished trials: |Spearman's rank
    correlation| for a numeric parameter, the correlation ratio (eta) for a categorical one;
    NaN with fewer than 3 usable trials or no variation. Sorted, strongest first."""
    done = trials.filter((pl.col("status") == "done") & pl.col(target.name).is_not_null()
                         & pl.col(target.name).is_finite())
    y = done[target.name].to_numpy().astype(float) if done.height else np.array([])
    scores: dict[str, float] = {}
    for param in params:
        if done.height < 3 or np.ptp(y) == 0:
            scores[param.key] = math.nan
            continue
        column = done[param.key]
        if param.kind == "categorical":
            labels = column.cast(pl.String).to_list()
            total = float(((y - y.mean()) ** 2).sum())
            between = sum(len(g) * (g.mean() - y.mean()) ** 2
                          for g in (y[[i for i, l in enumerate(labels) if l == label]] for label in set(labels)))
            scores[param.key] = math.sqrt(between / total)
        else:
            x = column.cast(pl.Float64).to_numpy()
            if np.ptp(x) == 0:
                scores[param.key] = math.nan
                continue
            rx = pl.Series(x).rank("average").to_numpy()
            ry = pl.Series(y).rank("average").to_numpy()
            scores[param.key] = abs(float(np.corrcoef(rx, ry)[0, 1]))
    return dict(sorted(scores.items(), key=lambda kv: -kv[1] if math.isfinite(kv[1]) else 1.0))
