"""`stackbench run`: the workload matrix through fio into the store, printed as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import DbOption, JsonOption, open_store_from, print_run, split_list
from stackbench.errors import StackbenchError
from stackbench.plan import PRESETS, Plan, Workload, build_plan
from stackbench.units import format_duration, format_iops, format_latency_ns, format_mb_per_s, parse_duration

_PRESET_HELP = "; ".join(f"{p.name}: {p.description}" for p in PRESETS.values())


@app.command("run")
def run_command(
    target: Path = typer.Option(
        ...,
        "--target",
        "-t",
        help="Directory (a scratch file is created and removed), a new file path, or with --destroy-data an "
        "existing file or a blank block device.",
        show_default=False,
    ),
    preset: Optional[str] = typer.Option(None, "--preset", "-p", help=f"Named plan (default quick). {_PRESET_HELP}."),
    bs: Optional[list[str]] = typer.Option(None, "--bs", help="Block sizes, comma-separated: 4k,64k,1m."),
    qd: Optional[list[str]] = typer.Option(None, "--qd", help="Queue depths (fio iodepth): 1,4,8,16."),
    rw: Optional[list[str]] = typer.Option(
        None, "--rw", help="Patterns: randread,randwrite,read,write (also randrw, rw)."
    ),
    sync: Optional[bool] = typer.Option(
        None, "--sync/--no-sync", help="O_SYNC writes (fio sync=1), as the SLOG and VM tests need.", show_default=False
    ),
    direct: Optional[bool] = typer.Option(
        None, "--direct/--buffered", help="O_DIRECT (fio direct=1). Refused by tmpfs before Linux 6.6; ZFS < 2.3 still caches in ARC.", show_default=False
    ),
    size: Optional[str] = typer.Option(None, "--size", help="Test file size, e.g. 1G (default from the preset)."),
    runtime: Optional[str] = typer.Option(None, "--runtime", help="Seconds per cell, e.g. 30 or 2m."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="fio numjobs per cell."),
    repeat: Optional[int] = typer.Option(
        None, "--repeat", min=1, help="Run each cell N times for --runtime (fixed mode); samples are pooled."
    ),
    until_stable: Optional[bool] = typer.Option(
        None,
        "--until-stable/--fixed",
        help="Adaptive: sample each cell until its IOPS median's 95 % CI is within --ci-target, or --max-time. "
        "Default for presets other than quick when neither --repeat nor --runtime is given.",
        show_default=False,
    ),
    ci_target: float = typer.Option(5.0, "--ci-target", help="Adaptive mode: CI half-width to reach, in % of the median."),
    max_time: Optional[str] = typer.Option(
        None, "--max-time", help="Adaptive mode: cap per cell (default: the preset's runtime, at least 15 s)."
    ),
    ioengine: str = typer.Option("libaio", "--ioengine", help="fio ioengine: libaio, io_uring, psync, posixaio."),
    destroy_data: bool = typer.Option(
        False, "--destroy-data", help="Allow writing to an existing file or a blank, unmounted block device."
    ),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="A name for this run, usable wherever a run id is."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and the first job file; run nothing."),
    db: Optional[str] = DbOption,
    json_output: bool = JsonOption,
) -> None:
    """Run a workload matrix with fio against TARGET and store every cell.

    Each cell is one fio job (output json+, kept verbatim). Cells are stored as they finish, so Ctrl-C keeps
    the finished ones (the run is marked incomplete) and the scratch file is always removed.

    Examples:

        stackbench run --target /tmp/scratch --preset quick

        stackbench run -t /tank/bench --preset blog --qd 4 --runtime 30 --label baseline

        stackbench run -t /tank/vm --bs 4k --qd 4 --rw randwrite --sync --json
    """
    plan = build_plan(
        preset,
        bs=split_list(bs),
        qd=_depths(split_list(qd)),
        rw=split_list(rw),
        sync=sync,
        direct=direct,
        size=size,
        runtime=parse_duration(runtime) if runtime else None,
        numjobs=jobs,
        ioengine=ioengine,
        repeat=repeat,
        until_stable=until_stable,
        ci_target=ci_target / 100,
        max_time=parse_duration(max_time, option="max-time") if max_time else None,
    )
    if dry_run:
        _print_plan(plan, target)
        return

    from stackbench.runner import RunRequest, execute_run

    store = open_store_from(db)
    show_progress = err.is_terminal and not json_output
    observer = ProgressObserver(plan, enabled=show_progress, quiet=json_output)
    with observer:
        run = execute_run(store, RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data), observer)
    print_run(store, run, json_output)
    for text in run.warnings:
        if text not in observer.shown:
            warn(text)


def _depths(values: list[str] | None) -> list[int] | None:
    if values is None:
        return None
    depths = []
    for value in values:
        if not value.isdigit() or int(value) < 1:
            raise StackbenchError(f"--qd needs whole numbers of at least 1, got {value!r}", "Use e.g. --qd 1,4,16")
        depths.append(int(value))
    return depths


def _print_plan(plan: Plan, target: Path) -> None:
    from stackbench.engine.fio import job_file
    from stackbench.units import format_bytes

    out.print(
        f"Plan [bold]{plan.name}[/]: {len(plan.workloads)} cells, file {format_bytes(plan.size)}, "
        f"about {format_duration(plan.estimated_seconds())} of fio time, target {target}"
    )
    for index, workload in enumerate(plan.workloads, 1):
        out.print(f"  {index:>3}. {workload.name:<24} {workload.runtime:g} s  ({workload.key})", highlight=False)
    out.print("\nFirst job file:\n")
    out.print(job_file(plan.workloads[0], str(target / "stackbench-<run id>.scratch")), highlight=False, markup=False)


class ProgressObserver:
    """A progress bar over the whole plan's estimated time (ETA) and a line per finished cell."""

    def __init__(self, plan: Plan, *, enabled: bool, quiet: bool) -> None:
        self.plan = plan
        self.quiet = quiet
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
        self.task = self.progress.add_task("starting", total=plan.estimated_seconds())
        self._done_seconds = 0.0
        self.shown: set[str] = set()

    def __enter__(self) -> "ProgressObserver":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _budget(self, workload: Workload) -> float:
        return self.plan.cell_budget(workload)

    def run_started(self, run_id: str, plan: Plan, target: object) -> None:
        if not self.quiet:
            err.print(
                f"Run {run_id[:12]}: {len(plan.workloads)} cells, about "
                f"{format_duration(plan.estimated_seconds())}, file {getattr(target, 'fio_filename', target)}",
                highlight=False,
                soft_wrap=True,
            )

    def cell_started(self, index: int, workload: Workload) -> None:
        self.progress.update(
            self.task, description=f"cell {index + 1}/{len(self.plan.workloads)} {workload.name}"
        )

    def cell_progress(self, index: int, elapsed: float) -> None:
        budget = self._budget(self.plan.workloads[index])
        self.progress.update(self.task, completed=self._done_seconds + min(elapsed, budget))

    def cell_finished(self, index: int, workload: Workload, results: list) -> None:
        # An adaptive cell that stopped early takes its unused budget off the total, so the ETA shrinks.
        self._done_seconds += self._budget(workload)
        self.progress.update(self.task, completed=self._done_seconds)
        if self.quiet:
            return
        for result in results:
            clat = result.clat
            err.print(
                f"  [green]✓[/] {workload.name:<22} {format_iops(result.iops):>10} IOPS "
                f"{format_mb_per_s(result.bw_bytes):>8} MB/s  p99 {format_latency_ns(clat.p99_ns if clat else None)}",
                highlight=False,
            )

    def warning(self, text: str) -> None:
        self.shown.add(text)
        warn(text)  # stderr, so even with --json a script's log shows it
