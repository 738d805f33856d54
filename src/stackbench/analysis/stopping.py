"""When to stop measuring a cell: a fixed number of separate fio runs, or runs added until the estimate is tight.

The practitioners ran every cell for 300 s, so the 48-cell matrix took four hours. The old adaptive rule
added seconds to one run until the median of its seconds looked stable; but seconds of one run are not
replicates (analysis/between_runs.py), and it stopped at its 15 s cap in 44 of 48 cells anyway. This rule
adds *runs*: after `min_runs` separate runs it stops a cell once the between-run interval of its geometric
mean is within `ci_target`, and otherwise at `max_runs` or when the cell's fio time reaches `max_seconds`,
saying plainly when the target is out of reach with the run-to-run variation it saw.
"""

from __future__ import annotations

from typing import Sequence

from stackbench.model.plan import StoppingRule
from stackbench.base.units import count

__all__ = ["StoppingRule", "decide"]


def decide(rule: StoppingRule, values: Sequence[float], seconds: float, next_run_seconds: float) -> tuple[bool, str]:
    """(stop?, why) for a cell with these per-run IOPS after `seconds` of fio time."""
    from stackbench.analysis.between_runs import estimate, runs_needed  # SciPy: imported only when measuring

    n = len(values)
    if n < rule.min_runs:
        if rule.max_seconds is not None and seconds + next_run_seconds > rule.max_seconds:
            return True, f"time cap {rule.max_seconds:g} s reached after {count(n, 'run')}, fewer than {rule.min_runs}"
        return False, ""
    found = estimate(values, rule.confidence)
    width = found.half_width_rel
    if width <= rule.ci_target:
        return True, f"stable: ±{width:.1%} after {n} runs"
    capped = n >= rule.max_runs or (
        rule.max_seconds is not None and seconds + next_run_seconds > rule.max_seconds
    )
    if not capped:
        return False, ""
    limit = f"{rule.max_runs} runs" if n >= rule.max_runs else f"time cap {rule.max_seconds:g} s"
    spread = found.spread_rel or 0.0
    needed = runs_needed(found.log_sd or 0.0, rule.ci_target, rule.confidence)
    return True, (
        f"target ±{rule.ci_target:.0%} out of reach on this machine: {limit} reached with ±{width:.1%}; "
        f"runs differed by {spread:.0%} (sd), which would need about {needed} runs"
    )
