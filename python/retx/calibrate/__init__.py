"""Calibration: find the parameter values under which a run's numbers match a paper's, or show
that none in the searched ranges do (`retx calibrate SPEC.toml`, `retx.calibrate(spec)`).

A spec (TOML) names what runs (a scenario, or a registered reproduction), the unknowns (a
range or choices per dotted key, `[params]`), what is set in every run (`[fixed]`) and the
targets (`[[target]]`: a number from a run, the paper's value and a tolerance). Optuna's TPE
sampler searches the unknowns, each trial run once per seed through the sweep executors, its
study kept in the output folder so that a calibration killed and run again resumes there. Per
target the verdict is "reproduced", "not reproduced" or "conflicting", and claims no more than
the trials covered. docs/USAGE.md ("Calibration") describes it for users.

- `spec`: the spec's types (`Param`, `Cell`, `Target`, `Spec`), `load_spec` and its checks;
  the spec's format in full.
- `search`: `calibrate`: evaluating a point, the Optuna-driven search, resuming, the folder's
  lock, `trials_table` and `CalibrationResult`; what the output folder holds.
- `verdict`: statistics over the trials: `verdict`, `best_points`, `influence`, spreads.
- `report`: the plot (`plot_targets`, targets.png) and the page `retx report OUT` renders.

The public API is importable from here (`from retx.calibrate import load_spec`). As an
attribute of the `retx` package, `retx.calibrate` is the function, so a submodule's names are
imported with `from retx.calibrate.spec import ...` (`import retx.calibrate.spec as m` looks
`spec` up on the function, and fails).
"""

from retx.calibrate.report import (BEST_FILE, LOG_Y_RATIO, PLOT_FILE, PLOTTED_PARAMS, SPEC_FILE, TRIALS_FILE,
                                   VERDICT_FILE, is_calibration, plot_targets, report_page)
from retx.calibrate.search import (LOCK_FILE, REPRODUCTION_SEED_STRIDE, RESULT_ATTR, STUDY_FILE, STUDY_NAME,
                                   TEMP_PREFIX, CalibrationResult, TargetError, calibrate, evaluate, trials_table)
from retx.calibrate.spec import (REDUCERS, SLACK, SPEC_TABLE, Cell, Param, Spec, Target, load_spec,
                                 metric_functions)
# Last: binding the function `verdict` here, after its module (also `verdict`) was first imported.
from retx.calibrate.verdict import (BEST_POINTS, CONFLICTING, NOT_REPRODUCED, REPRODUCED, best_points, influence,
                                    verdict)

__all__ = [
    "BEST_FILE", "BEST_POINTS", "CONFLICTING", "LOCK_FILE", "LOG_Y_RATIO", "NOT_REPRODUCED",
    "PLOTTED_PARAMS", "PLOT_FILE", "REDUCERS", "REPRODUCED", "REPRODUCTION_SEED_STRIDE", "RESULT_ATTR", "SLACK",
    "SPEC_FILE", "SPEC_TABLE", "STUDY_FILE", "STUDY_NAME", "TEMP_PREFIX", "TRIALS_FILE", "VERDICT_FILE",
    "CalibrationResult", "Cell", "Param", "Spec", "Target", "TargetError", "best_points", "calibrate", "evaluate",
    "influence", "is_calibration", "load_spec", "metric_functions", "plot_targets", "report_page", "trials_table",
    "verdict",
]
