"""Warnings about cells whose numbers should not be trusted yet, each naming what to do about it.

Modelled on pyperf's stability check: a warning says what was seen and ends with the option that fixes it,
tailored to how the cell was measured.
"""

from __future__ import annotations

from stackbench.analysis.stats import min_samples_for_ci
from stackbench.results import Cell

CV_LIMIT = 0.10


def run_warnings(cells: list[Cell]) -> list[str]:
    """The warnings of all cells; cells with too few samples for an interval share one warning."""
    short = [c for c in cells if (s := c.iops_summary()) is not None and s.n < min_samples_for_ci(s.confidence)]
    warnings = []
    if short:
        names = ", ".join(c.pattern for c in short) if len(short) <= 3 else f"{len(short)} cells"
        fewest = min(c.iops_summary().n for c in short)  # type: ignore[union-attr]
        warnings.append(
            f"{names}: {fewest} or fewer per-second samples, too few for a confidence interval; "
            "use --until-stable, a longer --runtime or --repeat 3 before comparing runs"
        )
    for cell in cells:
        warnings.extend(cell_warnings(cell))
    return warnings


def cell_warnings(cell: Cell) -> list[str]:
    """Warnings about one cell other than too few samples (see `run_warnings`)."""
    summary = cell.iops_summary()
    if summary is None or summary.n < min_samples_for_ci(summary.confidence):
        return []
    name = cell.pattern
    measurement = cell.measurement or {}
    warnings = []
    if measurement.get("mode") == "adaptive":
        rule = measurement.get("rule") or {}
        target = rule.get("ci_target", 0.05)
        if summary.ci_half_width_rel > target:
            cap = rule.get("max_seconds", 60)
            warnings.append(
                f"{name}: CI ±{summary.ci_half_width_rel:.1%} after {measurement.get('seconds', 0):.0f} s, above the "
                f"±{target:.0%} target; rerun with --max-time {2 * cap:g}"
            )
    if summary.cv >= CV_LIMIT:
        warnings.append(
            f"{name}: IOPS vary a lot second to second (CV {summary.cv:.0%}, min {summary.minimum:,.0f}, "
            f"max {summary.maximum:,.0f}): a cache filling, ZFS txg flushes or other load; measure longer "
            "(--max-time) and keep the machine quiet"
        )
    return warnings
