"""The progress bar over a plan whose rounds are one fio process each (synclat, slog): several cells are in
flight at once, and the bar moves through them by their planned times without ever going back."""

from __future__ import annotations

import pytest

from stackbench.cli.progress import ProgressObserver
from stackbench.model.plan import Plan, Workload


def test_a_round_of_stonewalled_jobs_moves_the_bar_forward_only() -> None:
    cells = tuple(Workload(rw="randwrite", bs=bs, iodepth=1, runtime=1.0) for bs in (4096, 8192, 16384))
    plan = Plan(name="synclat", workloads=cells, runs=2, one_process=True)
    observer = ProgressObserver(plan, enabled=False, quiet=True)
    budget = plan.run_seconds(cells[0])
    seen = []

    def completed() -> float:
        return observer.progress.tasks[0].completed

    # what the runner's round does while fio runs: the first job, then the second once its time has come
    for index, elapsed in ((0, 0.5), (0, budget), (1, 0.2), (1, 0.9), (2, 0.1)):
        observer.cell_progress(index, elapsed)
        seen.append(completed())
    assert _forward(seen) and seen[-1] == pytest.approx(budget + 0.9 + 0.1)
    for index, cell in enumerate(cells):  # fio ends: every cell's run is done
        observer.cell_finished(index, cell, [])
        seen.append(completed())
    assert _forward(seen) and completed() == pytest.approx(3 * budget)
    assert observer.total == pytest.approx(2 * 3 * budget)  # two runs of three cells


def _forward(values: list[float]) -> bool:
    return all(later >= earlier - 1e-9 for earlier, later in zip(values, values[1:]))  # sums in another order
