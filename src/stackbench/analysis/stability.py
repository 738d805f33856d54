"""Warnings about cells whose numbers should not be trusted yet, each naming what to do about it.

Modelled on pyperf's stability check: a warning says what was seen and ends with the option that fixes it.
The unit is a separate fio run: too few runs for an interval, an adaptive cell that missed its target, and
runs that differ a lot from each other are what make a number untrustworthy. Second-to-second variation
inside one run is reported only as a diagnostic (a cache filling, ZFS txg flushes), never as the error bar.
"""

from __future__ import annotations

from stackbench.analysis.cells import RUNS, cell_estimate, replicates_of
from stackbench.analysis.stats import sample_summary
from stackbench.results import Cell
from stackbench.warning import Warning, WarningCode

SPREAD_LIMIT = 0.10  # run-to-run variation (sd of log IOPS) above which a warning says so
CV_LIMIT = 0.25  # second-to-second variation inside runs worth a diagnostic


def run_warnings(cells: list[Cell]) -> list[Warning]:
    """The warnings of all cells; cells measured in a single run share one warning."""
    single = [c for c in cells if replicates_of(c).kind == RUNS and len(replicates_of(c).values) < 2]
    # A cell that writes its file once (cache-exhaustion) is one run by design: a second run would start
    # with the cache the first one filled, so "use --runs 3" would be advice against the method.
    once = [c for c in single if not c.workload.time_based]
    single = [c for c in single if c.workload.time_based]
    warnings = []
    if once:
        names = ", ".join(c.pattern for c in once) if len(once) <= 3 else f"{len(once)} cells"
        warnings.append(Warning(
            WarningCode.TOO_FEW_RUNS, names,
            "written once by design (a second run would start with the cache the first one filled), so there "
            "is no interval and no verdict can use it",
            "read it as a curve (`stackbench chart RUN --kind cache`); to compare drives, let each idle first",
        ))
    if single:
        names = ", ".join(c.pattern for c in single) if len(single) <= 3 else f"{len(single)} cells"
        warnings.append(Warning(
            WarningCode.TOO_FEW_RUNS, names,
            "measured in one fio run, so there is no interval and no verdict can use it",
            "use --runs 3 or more (5 before comparing runs)",
        ))
    for cell in cells:
        warnings.extend(cell_warnings(cell))
    return warnings


def cell_warnings(cell: Cell) -> list[Warning]:
    """Warnings about one cell other than too few runs (see `run_warnings`)."""
    replicates = replicates_of(cell)
    if replicates.kind != RUNS or len(replicates.values) < 2:
        return []
    found = cell_estimate(cell)
    if found is None:
        return []
    name = cell.pattern
    measurement = cell.measurement or {}
    warnings: list[Warning] = []
    reason = str(measurement.get("stop_reason") or "")
    if measurement.get("mode") == "adaptive" and "out of reach" in reason:
        warnings.append(Warning(
            WarningCode.CI_ABOVE_TARGET, name, reason, "keep the machine quiet, or accept the wider interval"
        ))
    elif (found.spread_rel or 0) >= SPREAD_LIMIT:
        warnings.append(Warning(
            WarningCode.HIGH_SPREAD, name,
            f"separate runs differ a lot (sd {found.spread_rel:.0%} between runs, "
            f"{min(replicates.values):,.0f} to {max(replicates.values):,.0f} IOPS): other load, a cache filling "
            "or a file system still laying out the file",
            "keep the machine quiet and use more --runs",
        ))
    summary = sample_summary(cell)
    if summary is not None and summary.n >= 4 and summary.cv >= CV_LIMIT:
        warnings.append(Warning(
            WarningCode.HIGH_CV, name,
            f"IOPS vary a lot second to second inside runs (CV {summary.cv:.0%}): a cache filling or ZFS txg "
            "flushes",
            "longer runs (--runtime) show whether it settles",
        ))
    return warnings
