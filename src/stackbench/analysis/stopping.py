"""When to stop measuring a cell: a fixed number of separate fio runs, or runs added until the estimate is tight.

The practitioners ran every cell for 300 s, so the 48-cell matrix took four hours. The old adaptive rule
added seconds to one run until the median of its seconds looked stable; but seconds of one run are not
replicates (analysis/between_runs.py), and it stopped at its 15 s cap in 44 of 48 cells anyway. This rule
adds *runs*: after `min_runs` separate runs it stops a cell once the between-run interval of its geometric
mean is within `ci_target`, and otherwise at `max_runs` or when the cell's fio time reaches `max_seconds`,
saying plainly when the target is out of reach with the run-to-run variation it saw.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class StoppingRule:
    ci_target: float = 0.05  # relative half-width of the geometric mean's interval across runs
    confidence: float = 0.95
    min_runs: int = 5
    max_runs: int = 10
    max_seconds: float | None = None  # cap on one cell's fio time (all its runs), None: runs cap only

    def decide(self, values: Sequence[float], seconds: float, next_run_seconds: float) -> tuple[bool, str]:
        """(stop?, why) for a cell with these per-run IOPS after `seconds` of fio time."""
        from stackbench.analysis.between_runs import estimate, runs_needed  # SciPy: imported only when measuring

        n = len(values)
        if n < self.min_runs:
            if self.max_seconds is not None and seconds + next_run_seconds > self.max_seconds:
                return True, f"time cap {self.max_seconds:g} s reached after {n} run(s), fewer than {self.min_runs}"
            return False, ""
        found = estimate(values, self.confidence)
        width = found.half_width_rel
        if width <= self.ci_target:
            return True, f"stable: ±{width:.1%} after {n} runs"
        capped = n >= self.max_runs or (
            self.max_seconds is not None and seconds + next_run_seconds > self.max_seconds
        )
        if not capped:
            return False, ""
        limit = f"{self.max_runs} runs" if n >= self.max_runs else f"time cap {self.max_seconds:g} s"
        spread = found.spread_rel or 0.0
        needed = runs_needed(found.log_sd or 0.0, self.ci_target, self.confidence)
        return True, (
            f"target ±{self.ci_target:.0%} out of reach on this machine: {limit} reached with ±{width:.1%}; "
            f"runs differed by {spread:.0%} (sd), which would need about {needed} runs"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
