"""`stackbench run`: the workload matrix through fio into the store, printed as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import DbOption, JsonOption, check_label, open_store_from, print_run, target_path
from stackbench.cli.plan_options import (
    BsOption,
    CiTargetOption,
    DirectOption,
    IoengineOption,
    JobsOption,
    MaxRunsOption,
    MaxTimeOption,
    PresetOption,
    QdOption,
    RampOption,
    RateIopsOption,
    RepeatOption,
    RunsOption,
    RuntimeOption,
    RwOption,
    SizeOption,
    SyncOption,
    UntilStableOption,
    plan_from_options,
)
from stackbench.plan import Plan, Workload
from stackbench.units import format_duration, format_iops, format_latency_ns, format_mb_per_s
from stackbench.safety import check_target_text


@app.command("run")
def run_command(
    target: Path = typer.Option(
        ...,
        "--target",
        "-t",
        help="Directory (a scratch file is created and removed), a new file path, or with --destroy-data an "
        "existing file or a blank block device.",
        show_default=False,
        parser=target_path,
    ),
    preset: Optional[str] = PresetOption,
    bs: Optional[list[str]] = BsOption,
    qd: Optional[list[str]] = QdOption,
    rw: Optional[list[str]] = RwOption,
    sync: Optional[bool] = SyncOption,
    direct: Optional[bool] = DirectOption,
    size: Optional[str] = SizeOption,
    runtime: Optional[str] = RuntimeOption,
    ramp: Optional[str] = RampOption,
    jobs: int = JobsOption,
    runs: Optional[int] = RunsOption,
    repeat: Optional[int] = RepeatOption,
    until_stable: Optional[bool] = UntilStableOption,
    ci_target: float = CiTargetOption,
    max_runs: Optional[int] = MaxRunsOption,
    max_time: Optional[str] = MaxTimeOption,
    ioengine: Optional[str] = IoengineOption,
    rate_iops: Optional[int] = RateIopsOption,
    destroy_data: bool = typer.Option(
        False, "--destroy-data", help="Allow writing to an existing file or a blank, unmounted block device."
    ),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="A name for this run, usable wherever a run id is.", callback=check_label),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and the first job file; run nothing."),
    db: Optional[str] = DbOption,
    json_output: bool = JsonOption,
) -> None:
    """Run a workload matrix with fio against TARGET and store every cell.

    Each cell is measured in several separate fio runs (--runs), interleaved round-robin across cells so
    that drift in the machine's load hits every cell alike; a cell's value is the geometric mean of its
    runs with a 95 % interval. Every fio run is stored the moment it finishes (output json+, verbatim), so
    Ctrl-C keeps them (the run is marked incomplete) and the scratch file is always removed.

    Examples:

        stackbench run --target /tmp/scratch --preset quick

        stackbench run -t /tank/bench --preset blog --qd 4 --label baseline

        stackbench run -t /tank/vm --bs 4k --qd 4 --rw randwrite --sync --runs 5 --json
    """
    plan = plan_from_options(
        preset, bs, qd, rw, sync, direct, size, runtime, ramp, jobs, runs, repeat, until_stable, ci_target,
        max_runs, max_time, ioengine, rate_iops,
    )
    if dry_run:
        _print_plan(plan, target)
        return

    from stackbench.runner import RunRequest, execute_run

    check_target_text(target)
    store = open_store_from(db)
    show_progress = err.is_terminal and not json_output
    observer = ProgressObserver(plan, enabled=show_progress, quiet=json_output)
    with observer:
        run = execute_run(store, RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data), observer)
    print_run(store, run, json_output)
    for text in run.warnings:
        if text not in observer.shown:
            warn(text)


def _print_plan(plan: Plan, target: Path) -> None:
    from stackbench.engine.fio import job_file
    from stackbench.units import format_bytes

    out.print(
        f"Plan {plan.name}: {len(plan.workloads)} cells x {_runs_text(plan)}, file {format_bytes(plan.size)}, "
        f"about {format_duration(plan.expected_seconds())} of fio time (at most "
        f"{format_duration(plan.estimated_seconds())}), target {target}",
        markup=False, highlight=False,
    )
    for index, workload in enumerate(plan.workloads, 1):
        out.print(
            f"  {index:>3}. {workload.name:<24} {workload.ramp_time:g}+{workload.runtime:g} s  ({workload.key})",
            highlight=False, markup=False,
        )
    out.print("\nFirst job file:\n")
    out.print(job_file(plan.workloads[0], str(target / "stackbench-<run id>.scratch")), highlight=False, markup=False)


def _runs_text(plan: Plan) -> str:
    if plan.stopping:
        return f"{plan.stopping.min_runs}-{plan.stopping.max_runs} runs (until ±{plan.stopping.ci_target:.0%})"
    return f"{plan.runs} run{'s' if plan.runs != 1 else ''}"


class ProgressObserver:
    """A progress bar over the plan's expected fio time (ETA) and a line per finished fio run.

    The total is the time when every cell stops at its minimum number of runs; an adaptive cell that needs
    more runs adds them to the total as they are scheduled, so the ETA never pretends to the worst case.
    """

    def __init__(self, plan: Plan, *, enabled: bool, quiet: bool, arms: int = 1, rounds: int | None = None) -> None:
        self.plan = plan
        self.quiet = quiet
        self.fixed_rounds = rounds  # `ab`: every cell runs `rounds` times per arm, no adaptive extras
        self.progress = Progress(
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
        self._runs = [0] * len(plan.workloads)
        self.shown: set[str] = set()

    def __enter__(self) -> "ProgressObserver":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def run_started(self, run_id: str, plan: Plan, target: object) -> None:
        if not self.quiet:
            err.print(
                f"Run {run_id[:12]}: {len(plan.workloads)} cells x {_runs_text(plan)}, about "
                f"{format_duration(plan.expected_seconds())}, file {getattr(target, 'fio_filename', target)}",
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
        self.progress.update(self.task, completed=self._done_seconds + min(elapsed, budget))

    def cell_finished(self, index: int, workload: Workload, results: list) -> None:
        self._runs[index] += 1
        self._done_seconds += self.plan.run_seconds(workload)
        self.progress.update(self.task, completed=self._done_seconds)
        if self.quiet:
            return
        for result in results:
            clat = result.clat
            err.print(
                f"  done {workload.name:<22} {self._runs[index]:>2} run(s) {format_iops(result.iops):>10} IOPS "
                f"{format_mb_per_s(result.bw_bytes):>8} MB/s  p99 {format_latency_ns(clat.p99_ns if clat else None)}",
                highlight=False,
                markup=False,
            )

    def warning(self, text: str) -> None:
        self.shown.add(text)
        warn(text)  # stderr, so even with --json a script's log shows it
