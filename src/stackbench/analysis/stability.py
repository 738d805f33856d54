"""Warnings about cells whose numbers should not be trusted yet, each naming what to do about it.

Modelled on pyperf's stability check: a warning says what was seen and ends with the option that fixes it.
The unit is a separate fio run: too few runs for an interval, an adaptive cell that missed its target, and
runs that differ a lot from each other are what make a number untrustworthy. Second-to-second variation
inside one run is reported only as a diagnostic (a cache filling, ZFS txg flushes), never as the error bar.
"""

from __future__ import annotations

from typing import Any

from stackbench.analysis.advice import AB, RUN, more_runs, runs_to_decide
from stackbench.analysis.cells import RUNS, cell_estimate, replicates_of
from stackbench.analysis.conditions import disturbance_warnings
from stackbench.analysis.stats import sample_summary
from stackbench.model.results import Cell
from stackbench.base.units import plural
from stackbench.model.warning import Warning, WarningCode

SPREAD_LIMIT = 0.10  # run-to-run variation (sd of log IOPS) above which a warning says so
CV_LIMIT = 0.25  # second-to-second variation inside runs worth a diagnostic
DEFAULT_MIN_EFFECT = 0.05  # compare's default --min-effect: what the runs-needed advice aims to resolve

# What makes IOPS swing second to second on each file system (the run's facts say which it was): the cause
# a warning names must be one that can happen there, never ZFS's txg flushes on ext4.
SWING_CAUSES = {
    "zfs": "ZFS transaction group (txg) flushes, every 5 s by default",
    "ext4": "ext4 journal commits (every 5 s by default) and dirty-page writeback",
    "ext3": "ext3 journal commits (every 5 s by default) and dirty-page writeback",
    "xfs": "XFS log flushes and dirty-page writeback",
    "btrfs": "btrfs transaction commits (every 30 s by default) and dirty-page writeback",
    "tmpfs": "other load on the machine (tmpfs is memory: nothing is flushed)",
    "block-device": "the device's own cache filling or its garbage collection",
    "nfs": "the network or the NFS server",
    "nfs4": "the network or the NFS server",
}
UNKNOWN_SWING_CAUSE = "dirty-page writeback and other load"


def swing_cause(fs_type: str | None) -> str:
    """The likely cause of second-to-second swings on this file system (facts.target.fs_type)."""
    return SWING_CAUSES.get((fs_type or "").lower(), UNKNOWN_SWING_CAUSE)


def run_warnings(cells: list[Cell], facts: dict[str, Any] | None = None) -> list[Warning]:
    """The warnings of all cells; cells measured in a single run share one warning. `facts` (the run's)
    say the file system, for the cause a warning names, and whether the run is an arm of `ab`, whose
    advice is `--rounds`, not `--runs`."""
    facts = facts or {}
    how = AB if isinstance(facts.get("ab"), dict) else RUN
    fs_type = (facts.get("target") or {}).get("fs_type") if isinstance(facts.get("target"), dict) else None
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
        names = ", ".join(c.pattern for c in single) if len(single) <= 3 else plural(len(single), "cell")
        warnings.append(Warning(
            WarningCode.TOO_FEW_RUNS, names,
            "measured in one fio run, so there is no interval and no verdict can use it",
            f"use {more_runs(how, 3)} or more (5 before comparing runs)",
        ))
    for cell in cells:
        warnings.extend(cell_warnings(cell, how=how, fs_type=fs_type))
    return warnings + disturbance_warnings(cells)


def cell_warnings(cell: Cell, *, how: str = RUN, fs_type: str | None = None) -> list[Warning]:
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
        low, high = min(replicates.values), max(replicates.values)
        seen = (f"runs ranged from {low:,.0f} to {high:,.0f} IOPS, too noisy to tell the cell's value"
                if found.spread_too_noisy else
                f"sd {found.spread_rel:.0%} between runs, {low:,.0f} to {high:,.0f} IOPS")
        advice = more_runs(how, runs_to_decide(found.log_sd or 0.0, DEFAULT_MIN_EFFECT))
        warnings.append(Warning(
            WarningCode.HIGH_SPREAD, name,
            f"separate runs differ a lot ({seen}): other load, a cache filling or a file system still laying "
            "out the file",
            f"keep the machine quiet; to tell a {DEFAULT_MIN_EFFECT:.0%} change at this spread: {advice}",
        ))
    summary = sample_summary(cell)
    if summary is not None and summary.n >= 4 and summary.cv >= CV_LIMIT:
        warnings.append(Warning(
            WarningCode.HIGH_CV, name,
            f"IOPS vary a lot second to second inside runs (CV {summary.cv:.0%}): a cache filling, or "
            f"{swing_cause(fs_type)}",
            "longer runs (--runtime) show whether it settles",
        ))
    return warnings
