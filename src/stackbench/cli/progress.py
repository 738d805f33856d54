"""Progress of a plan on the terminal, shared by every command that measures (run, ab, synclat, slog):
a bar over the plan's expected fio time with its ETA, and a line per finished fio run."""

from __future__ import annotations

from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from stackbench.cli.app import err, warn
from stackbench.plan import Plan, Workload
from stackbench.units import format_duration, format_iops, format_latency_ns, format_mb_per_s
from stackbench.warning import Warning


def runs_text(plan: Plan) -> str:
    if plan.stopping:
        return f"{plan.stopping.min_runs}-{plan.stopping.max_runs} runs (until ±{plan.stopping.ci_target:.0%})"
    return f"{plan.runs} run{'s' if plan.runs != 1 else ''}"


class ProgressObserver:
    """A progress bar over the plan's expected fio time (ETA) and a line per finished fio run.

    The total is the time when every cell stops at its minimum number of runs; an adaptive cell that needs
    more runs adds them to the total as they are scheduled, so the ETA never pretends to the worst case.
    """

    progress_class: type[Progress] = Progress

    def __init__(self, plan: Plan, *, enabled: bool, quiet: bool, arms: int = 1, rounds: int | None = None) -> None:
        self.plan = plan
        self.quiet = quiet
        self.fixed_rounds = rounds  # `ab`: every cell runs `rounds` times per arm, no adaptive extras
        self.progress = self.progress_class(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            disable=not enabled,
            transient=True,
        )
        self.total = (
            plan.expected_seconds() if rounds is None
            else arms * rounds * sum(plan.run_seconds(w) for w in plan.workloads)
        )
        self.task = self.progress.add_task("starting", total=self.total)
        self._done_seconds = 0.0
        # cells being measured, and how far: several at once when a round is one fio process (`one_process`)
        self._in_flight: dict[int, float] = {}
        self._runs = [0] * len(plan.workloads)
        self.shown: set[Warning] = set()  # printed as they happened, so not again at the end

    def __enter__(self) -> "ProgressObserver":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def run_started(self, run_id: str, plan: Plan, target: object) -> None:
        if not self.quiet:
            # a cell that writes its file once ends when the file is written: its time is only a cap
            when = ("at most " if any(not w.time_based for w in plan.workloads) else "about ") + \
                format_duration(plan.expected_seconds())
            err.print(
                f"Run {run_id[:12]}: {len(plan.workloads)} cells x {runs_text(plan)}, {when}, "
                f"file {getattr(target, 'fio_filename', target)}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )

    def cell_started(self, index: int, workload: Workload) -> None:
        number = self._runs[index] + 1
        if self.fixed_rounds is None and number > self.plan.least_runs:  # an adaptive extra run: not in the total
            self.total += self.plan.run_seconds(workload)
            self.progress.update(self.task, total=self.total)
        self.progress.update(
            self.task,
            description=f"cell {index + 1}/{len(self.plan.workloads)} run {number} {workload.name}",
        )

    def cell_progress(self, index: int, elapsed: float) -> None:
        budget = self.plan.run_seconds(self.plan.workloads[index])
        self._in_flight[index] = min(elapsed, budget)
        self.progress.update(self.task, completed=self._done_seconds + sum(self._in_flight.values()))

    def cell_finished(self, index: int, workload: Workload, results: list) -> None:
        self._in_flight.pop(index, None)
        self._runs[index] += 1
        self._done_seconds += self.plan.run_seconds(workload)
        self.progress.update(self.task, completed=self._done_seconds + sum(self._in_flight.values()))
        if self.quiet:
            return
        for result in results:
            clat = result.clat
            where = f" @{result.host}" if getattr(result, "host", None) else ""
            err.print(
                f"  done {workload.name + where:<22} {self._runs[index]:>2} run(s) {format_iops(result.iops):>10} IOPS "
                f"{format_mb_per_s(result.bw_bytes):>8} MB/s  p99 {format_latency_ns(clat.p99_ns if clat else None)}",
                highlight=False,
                markup=False,
            )

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
