"""A synchronous-write sweep (`stackbench synclat`) across its separate runs: per write size the time one
write takes, with its 95 % interval, and whether the runs were steady enough to quote it.

The unit is a separate fio run (analysis/between_runs.py says why): a size's time per write is the geometric
mean of 1e6 / IOPS over its runs, with the t-interval on the logs. A sweep measured once, or one whose
intervals are wider than NOISE_LIMIT, earns one warning that says how many runs the measured spread calls
for, in synclat's own option (`--runs N`): the advice comes from the data, not from a rule of thumb.
Runs stored before synclat measured separate runs (one run per size, or per-second samples only) are read
as one value per size, never cut into batches of seconds that would pass for runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.analysis.between_runs import Estimate, estimate, runs_needed
from stackbench.analysis.cells import RUNS, replicates_of
from stackbench.model.plan import MAX_RUNS
from stackbench.model.results import Cell, Run
from stackbench.base.units import format_size
from stackbench.model.warning import Warning, WarningCode

NOISE_LIMIT = 0.10  # a time per write whose 95 % interval is wider than ±10 % is too noisy to quote


@dataclass(frozen=True)
class SweepSize:
    """One write size of a sweep: the cell and its time per write across runs (None: no I/O measured)."""

    cell: Cell
    usec_per_io: Estimate | None

    @property
    def runs(self) -> int:
        return self.usec_per_io.n if self.usec_per_io else 0

    @property
    def noisy(self) -> bool:
        """Runs that give an interval wider than ±NOISE_LIMIT (one run gives none: see `sweep_noise`)."""
        found = self.usec_per_io
        return found is not None and found.n >= 2 and found.half_width_rel > NOISE_LIMIT


def sweep_sizes(run: Run) -> list[SweepSize]:
    """The sweep's sizes in the run's order, each with its time per write across its separate runs."""
    return [SweepSize(cell, _usec_per_io(cell)) for cell in run.cells]


def _usec_per_io(cell: Cell) -> Estimate | None:
    replicates = replicates_of(cell)
    values = replicates.values if replicates.kind == RUNS else ()
    if not values:
        values = (cell.result.iops,) if cell.result.iops > 0 else ()
    return estimate([1e6 / v for v in values]) if values else None


def sweep_noise(sizes: list[SweepSize], command: str = "stackbench synclat") -> Warning | None:
    """One warning for the sizes whose time per write the runs could not pin down, with the `--runs` that
    the largest spread seen calls for; None when every size has an interval within ±NOISE_LIMIT."""
    measured = [s for s in sizes if s.usec_per_io is not None]
    once = [s for s in measured if s.runs < 2]
    if once:
        return Warning(
            WarningCode.SYNC_NOISE, _names(once),
            "measured in one fio run: no interval, so nothing says how far the time per write would move in "
            "the next run",
            f"run `{command}` with --runs 3 or more",
        )
    noisy = [s for s in measured if s.noisy]
    if not noisy:
        return None
    worst = max(noisy, key=lambda s: s.usec_per_io.log_sd or 0.0)  # type: ignore[union-attr]
    spread = worst.usec_per_io.spread_rel or 0.0  # type: ignore[union-attr]
    needed = runs_needed(worst.usec_per_io.log_sd or 0.0, NOISE_LIMIT)  # type: ignore[union-attr]
    # Plain wording; truth's shared formatting of intervals and advice replaces it at merge.
    text = (f"the time per write varied between runs by up to {spread:.0%} (sd of {worst.runs} runs), so its "
            f"95 % interval is wider than ±{NOISE_LIMIT:.0%}")
    if needed > MAX_RUNS:
        fix = (f"no practical number of runs narrows that (more than {MAX_RUNS}): keep the machine quiet, or give "
               f"`{command}` a longer --runtime")
    else:
        fix = (f"about {needed} runs per size would bring every interval within ±{NOISE_LIMIT:.0%}: run `{command}` "
               f"with --runs {needed}, on a quiet machine")
    return Warning(WarningCode.SYNC_NOISE, _names(noisy), text, fix)


def _names(sizes: list[SweepSize]) -> str:
    return ", ".join(format_size(s.cell.workload.bs) for s in sizes)
