"""Progress on the terminal, shared by every command that waits: for a plan (run, ab, synclat, slog) a bar
over its expected fio time with its ETA and a line per finished fio run; for work of unknown length
(crypto's `cryptsetup benchmark`, smallblocks' walk) a spinner with the time elapsed.

Only Rich and base/ load with it: smallblocks imports it on a terminal just before its walk, so what the
plan's bar needs (the estimate, the plan) loads when a bar is made."""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator

from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from stackbench.cli.app import err, warn
from stackbench.base.units import count, format_iops, format_latency_ns, format_mb_per_s

if TYPE_CHECKING:
    from stackbench.analysis.estimate import PlanTime
    from stackbench.model.plan import Plan, Workload
    from stackbench.model.warning import Warning


@contextmanager
def spinner(description: str) -> Iterator[Callable[[str], None]]:
    """A spinner, `description` and the time elapsed on stderr while the block runs, gone after it; shown
    only on a terminal. Yields the function that changes the description (smallblocks' files seen)."""
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    task = progress.add_task(description, total=None)
    with progress:
        yield lambda text: progress.update(task, description=text)


def runs_text(plan: Plan) -> str:
    if plan.stopping:
        return f"{plan.stopping.min_runs}-{plan.stopping.max_runs} runs (until ±{plan.stopping.ci_target:.0%})"
    return count(plan.runs, "run")


class ProgressObserver:
    """A progress bar over the plan's expected fio time (ETA) and a line per finished fio run.

    The total is the estimate's (analysis/estimate.py, the model `run --dry-run` prints): laying out the
    file and each cell's expected runs. An adaptive cell's expectation follows its own runs as they come
    (`cell_outlook`: a cell whose runs differ more than assumed needs more), and a cell that gets more runs
    than expected adds them as they start, so the ETA neither pretends to the worst case nor to the best.
    """

    progress_class: type[Progress] = Progress

    def __init__(self, plan: Plan, *, enabled: bool, quiet: bool, arms: int = 1, rounds: int | None = None) -> None:
        self.plan = plan
        self.quiet = quiet
        self.fixed_rounds = rounds  # `ab`: every cell runs `rounds` times per arm, no adaptive extras
        self.progress = self.progress_class(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%", markup=False),
            TimeElapsedColumn(),
            TextColumn("ETA", markup=False),
            TimeRemainingColumn(),
            console=err,
            disable=not enabled,
            transient=True,
        )
        self._done_seconds = 0.0
        # cells being measured, and how far: several at once when a round is one fio process (`one_process`)
        self._in_flight: dict[int, float] = {}
        self._runs = [0] * len(plan.workloads)
        from stackbench.analysis.estimate import plan_time

        self._use(plan_time(plan))
        if rounds is not None:
            self._run_s = [plan.run_seconds(w) for w in plan.workloads]
            self._expected = [float(arms * rounds)] * len(plan.workloads)
        self.total = self._total()
        self.task = self.progress.add_task("starting", total=self.total)
        self.shown: set[Warning] = set()  # printed as they happened, so not again at the end

    def _use(self, estimate: PlanTime) -> None:
        self._layout_s = estimate.layout_s
        self._run_s = [c.run_seconds for c in estimate.cells]
        self._expected = [c.expected_runs for c in estimate.cells]

    def _total(self) -> float:
        return self._layout_s + sum(runs * seconds for runs, seconds in zip(self._expected, self._run_s))

    def _retotal(self) -> None:
        self.total = self._total()
        self.progress.update(self.task, total=self.total)

    def _this_run_s(self, index: int) -> float:
        """The wall time the next run of cell `index` counts for; the very first run lays out the file."""
        return self._run_s[index] + (self._layout_s if not any(self._runs) else 0.0)

    def __enter__(self) -> "ProgressObserver":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def run_started(self, run_id: str, plan: Plan, target: object, estimate: PlanTime | None = None) -> None:
        if estimate is not None and self.fixed_rounds is None:
            self._use(estimate)
            self._retotal()
        if estimate is None:
            from stackbench.analysis.estimate import plan_time

            estimate = plan_time(plan)
        if not self.quiet:
            err.print(
                f"Run {run_id[:12]}: {count(len(plan.workloads), 'cell')} x {runs_text(plan)}, "
                f"{estimate.headline()}, file {getattr(target, 'fio_filename', target)}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )

    def cell_started(self, index: int, workload: Workload) -> None:
        number = self._runs[index] + 1
        if number > math.ceil(self._expected[index] - 1e-9):  # a run beyond what was expected: add it
            self._expected[index] = float(number)
            self._retotal()
        self.progress.update(
            self.task,
            description=f"cell {index + 1}/{len(self.plan.workloads)} run {number} {workload.name}",
        )

    def cell_progress(self, index: int, elapsed: float) -> None:
        self._in_flight[index] = min(elapsed, self._this_run_s(index))
        self.progress.update(self.task, completed=self._done_seconds + sum(self._in_flight.values()))

    def cell_finished(self, index: int, workload: Workload, results: list) -> None:
        self._in_flight.pop(index, None)
        self._done_seconds += self._this_run_s(index)
        self._runs[index] += 1
        self.progress.update(self.task, completed=self._done_seconds + sum(self._in_flight.values()))
        if self.quiet:
            return
        for result in results:
            clat = result.clat
            where = f" @{result.host}" if getattr(result, "host", None) else ""
            err.print(
                f"  done {workload.name + where:<22} {self._runs[index]:>2} "
                f"{'run ' if self._runs[index] == 1 else 'runs'}"
                f" {format_iops(result.iops):>10} IOPS "
                f"{format_mb_per_s(result.bw_bytes):>8} MB/s  p99 {format_latency_ns(clat.p99_ns if clat else None)}",
                highlight=False,
                markup=False,
            )

    def cell_outlook(self, index: int, expected_runs: float) -> None:
        """The runner's new expectation of cell `index`'s runs (adaptive: from the spread of its runs)."""
        if self.fixed_rounds is None:
            self._expected[index] = max(expected_runs, float(self._runs[index]))
            self._retotal()

    def warning(self, warning: Warning) -> None:
        self.shown.add(warning)
        warn(str(warning))  # stderr, so even with --json a script's log shows it


class _HostLinesProgress(Progress):
    """The plan's bar with one status line per host under it."""

    host_lines: dict[str, str]

    def get_renderables(self):  # type: ignore[no-untyped-def]
        yield from super().get_renderables()
        for host, status in getattr(self, "host_lines", {}).items():
            yield Text(f"  {host}: {status}", no_wrap=True, overflow="ellipsis")


class FleetProgressObserver(ProgressObserver):
    """A fleet run's progress: the plan's bar with its ETA, and a line per host saying what it is doing."""

    progress_class = _HostLinesProgress

    def __init__(self, plan: Plan, hosts: list[str], *, enabled: bool, quiet: bool) -> None:
        super().__init__(plan, enabled=enabled, quiet=quiet)
        self.progress.host_lines = {host: "checking" for host in hosts}  # type: ignore[attr-defined]

    def host_status(self, host: str, status: str) -> None:
        self.progress.host_lines[host] = status  # type: ignore[attr-defined]
        self.progress.refresh()
