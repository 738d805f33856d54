"""`stackbench synclat TARGET`: synchronous random-write latency per write size (diskinfo -wS for Linux)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Collection, Iterable, Optional

import typer

from stackbench.cli.app import app, warn
from stackbench.cli.common import (
    DbOption, FormatOption, IntBetween, JsonOption, check_label, chosen_format, emit, open_store_from, target_path,
)
from stackbench.base.errors import UsageError
from stackbench.model.plan import MAX_RUNS
from stackbench.base.units import parse_duration, parse_size
from stackbench.measure.safety import check_target_text
from stackbench.measure.synclat import DEFAULT_RUNS, DEFAULT_RUNTIME_S
from stackbench.model.warning import Warning, WarningCode

# The run's per-cell warnings about the runs (one run; runs that differ) are said once for the whole sweep
# by SYNC_NOISE, with the --runs its spread calls for. Stored and in --json all the same.
NOT_PRINTED = frozenset({WarningCode.TOO_FEW_RUNS, WarningCode.HIGH_SPREAD})


@app.command("synclat")
def synclat_command(
    target: Path = typer.Argument(
        ..., help="Directory (scratch file created and removed), new file, or with --destroy-data a blank device.",
        show_default=False, parser=target_path,
    ),
    sizes: Optional[str] = typer.Option(
        None, "--sizes", help="Write sizes: comma list and doubling ranges, e.g. 512,4k..8m. "
        "Default: from the disk's logical sector size (512 B if unknown) to 8 MiB."
    ),
    runtime: Optional[str] = typer.Option(
        None, "--runtime", help=f"Measured time per size and run (fio runtime), default {DEFAULT_RUNTIME_S:g} s."
    ),
    runs: int = typer.Option(
        DEFAULT_RUNS, "--runs", "-n", click_type=IntBetween(1, MAX_RUNS), metavar="N",
        help=f"Separate runs (1-{MAX_RUNS}) of the whole sweep (one fio process each): the time per write gets a "
        "95 % interval.",
    ),
    min_time: Optional[str] = typer.Option(None, "--min-time", hidden=True, help="Old name of --runtime."),
    size: str = typer.Option("256M", "--size", help="Scratch file size; writes land at random offsets in it."),
    destroy_data: bool = typer.Option(False, "--destroy-data", help="Allow a blank block device (same guard as run)."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="A name for the stored run.", callback=check_label),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Measure synchronous random-write latency for each write size, like FreeBSD's `diskinfo -wS`.

    Each size is one fio job: random writes with O_DIRECT and O_DSYNC at queue depth 1 for --runtime.
    The sweep runs --runs times (one fio process each, the sizes one after the other), so every size's
    time per write has a 95 % interval across runs; a warning says how many runs a noisy sweep needs.
    The result is stored as a run (compare it like any other) and printed as
    `size | usec/IO | ± 95% CI | MB/s | p50 | p99 | p99.9 | writes`.

    Examples:

        stackbench synclat /mnt/optane

        stackbench synclat /dev/nvme1n1 --destroy-data --sizes 4k..1m --runtime 2 --runs 5
    """
    from stackbench.cli.progress import ProgressObserver
    from stackbench.cli.app import err
    from stackbench.analysis.synclat import sweep_noise, sweep_sizes
    from stackbench.measure.runner import RunRequest, execute_run
    from stackbench.report.run_json import run_json
    from stackbench.report.synclat import synclat_csv_table, synclat_rows, synclat_table
    from stackbench.measure.synclat import parse_sizes, synclat_plan

    if runtime is not None and min_time is not None:
        raise UsageError("--min-time is the old name of --runtime: give one of them", "Use --runtime")
    chosen = runtime if runtime is not None else min_time
    plan = synclat_plan(
        target,
        sizes=parse_sizes(sizes) if sizes else None,
        runtime=parse_duration(chosen, option="runtime") if chosen is not None else DEFAULT_RUNTIME_S,
        file_size=parse_size(size),
        runs=runs,
    )
    check_target_text(target)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt == "table", quiet=fmt != "table")
    with observer:
        run = execute_run(store, RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data), observer)
    rows = synclat_rows(run)
    noise = sweep_noise(sweep_sizes(run), command=f"stackbench synclat {shlex.quote(str(target))}")
    data = run_json(run)
    data["synclat"] = rows
    if noise is not None:
        data["warnings"] = [*data["warnings"], noise.to_json()]
    emit(fmt, synclat_table(run.id, rows), data, csv=synclat_csv_table(run.id, rows))
    for warning in [*warnings_to_print(run.warnings, observer.shown), *([noise] if noise else [])]:
        warn(str(warning))


def warnings_to_print(warnings: Iterable[Warning], shown: Collection[Warning]) -> list[Warning]:
    """The run's warnings not printed yet, less the codes that do not apply to a sweep (by code, never by
    text: the earlier filter on "per-second samples" stopped matching when that warning was reworded)."""
    return [w for w in warnings if w not in shown and w.code not in NOT_PRINTED]
