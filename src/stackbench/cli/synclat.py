"""`stackbench synclat TARGET`: synchronous random-write latency per write size (diskinfo -wS for Linux)."""

from __future__ import annotations

from pathlib import Path
from typing import Collection, Iterable, Optional

import typer

from stackbench.cli.app import app, warn
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, check_label, chosen_format, emit, open_store_from, target_path,
)
from stackbench.units import parse_duration, parse_size
from stackbench.safety import check_target_text
from stackbench.warning import Warning, WarningCode

# Each size is one fio run by design and synclat has no --runs: "measured in one fio run; use --runs 3"
# names an option this command does not offer. Stored and in --json all the same.
NOT_PRINTED = frozenset({WarningCode.TOO_FEW_RUNS})


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
    min_time: str = typer.Option("1s", "--min-time", help="Time per size (fio runtime)."),
    size: str = typer.Option("256M", "--size", help="Scratch file size; writes land at random offsets in it."),
    destroy_data: bool = typer.Option(False, "--destroy-data", help="Allow a blank block device (same guard as run)."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="A name for the stored run.", callback=check_label),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Measure synchronous random-write latency for each write size, like FreeBSD's `diskinfo -wS`.

    Each size is one fio job: random writes with O_DIRECT and O_DSYNC at queue depth 1 for --min-time.
    The result is stored as a run (compare it like any other) and printed as
    `size | usec/IO | MB/s | p50 | p99 | p99.9`.

    Examples:

        stackbench synclat /mnt/optane

        stackbench synclat /dev/nvme1n1 --destroy-data --sizes 4k..1m --min-time 5s
    """
    from stackbench.cli.progress import ProgressObserver
    from stackbench.cli.app import err
    from stackbench.runner import RunRequest, execute_run
    from stackbench.report.run_json import run_json
    from stackbench.report.synclat import synclat_csv_table, synclat_rows, synclat_table
    from stackbench.synclat import parse_sizes, synclat_plan

    plan = synclat_plan(
        target,
        sizes=parse_sizes(sizes) if sizes else None,
        min_time=parse_duration(min_time, option="min-time"),
        file_size=parse_size(size),
    )
    check_target_text(target)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt == "table", quiet=fmt != "table")
    with observer:
        run = execute_run(store, RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data), observer)
    rows = synclat_rows(run)
    data = run_json(run)
    data["synclat"] = rows
    emit(fmt, synclat_table(run.id, rows), data, csv=synclat_csv_table(run.id, rows))
    for warning in warnings_to_print(run.warnings, observer.shown):
        warn(str(warning))


def warnings_to_print(warnings: Iterable[Warning], shown: Collection[Warning]) -> list[Warning]:
    """The run's warnings not printed yet, less the codes that do not apply to a sweep (by code, never by
    text: the earlier filter on "per-second samples" stopped matching when that warning was reworded)."""
    return [w for w in warnings if w not in shown and w.code not in NOT_PRINTED]
