# Type stubs for the compiled module built from crates/retx-py.
from typing import Any, Callable, Optional

class ScenarioError(ValueError):
    """A scenario failed validation; str() is one line naming the field."""

def resolve(toml_text: str, base_dir: str) -> str:
    """Validate a scenario and return it as TOML with every default filled."""

def run(
    toml_text: str,
    base_dir: str,
    progress: Optional[Callable[[float, float], None]] = None,
) -> dict[str, Any]:
    """Simulate a scenario with the GIL released.

    `progress(sim_time_us, duration_us)` is called about every 0.2 s of wall time; an exception
    it raises aborts the run. Returns {"flows", "timeseries", "summary", "resolved"}.
    """
