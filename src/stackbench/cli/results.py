"""`stackbench runs`, `show`, `rm` and `import`: reading the store and adding fio outputs made elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, fail, out, warn
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, JsonReplyOption, check_label, chosen_format, emit_report, open_store_from,
    print_json, print_run,
)


@app.command("runs")
def runs_command(
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="Show at most this many runs, newest first."),
    label: Optional[str] = typer.Option(None, "--label", help="Only runs with this label."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """List stored runs, newest first.

    Any unique prefix of an ID (4+ characters) or a label names a run in `show` and later commands.

    Example:

        stackbench runs -n 10
    """
    from stackbench.report.runs import runs_report

    rows = open_store_from(db).list_runs(limit=limit, label=label)
    fmt = chosen_format(output_format, json_output)
    if not rows and fmt == "table":
        out.print("No runs stored yet. Start with: stackbench run --target DIR --preset quick")
        return
    emit_report(fmt, runs_report(rows))


@app.command("rm")
def rm_command(
    refs: list[str] = typer.Argument(..., help="Runs to delete: ids, unique id prefixes or labels.", show_default=False),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking."),
    force: bool = typer.Option(False, "--force", help="Also delete runs still marked running."),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Delete stored runs with their cells, per-second samples and fio outputs.

    Lists what will go and asks first; without a terminal to ask on, --yes is required. All named runs
    are deleted in one transaction, or none (an unknown name deletes nothing).

    Example:

        stackbench rm 3f2a9c old-server --yes
    """
    from stackbench.errors import UsageError

    store = open_store_from(db)
    runs = {}
    for ref in refs:
        stored = store.get_run(ref)
        runs[stored.id] = stored
    running = [run for run in runs.values() if run.status == "running"]
    if running and not force:
        raise UsageError(
            f"run {running[0].id[:12]} is still marked running (another stackbench may be measuring it)",
            "Wait for it to finish, or pass --force if its process is gone",
        )
    for run in runs.values():
        out.print(
            f"  {run.id[:12]}  {run.created_at:%Y-%m-%d %H:%M}  {run.status:<10} {len(run.cells):>3} cells  "
            f"{run.label or ''}",
        )
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                f"not deleting {len(runs)} run(s) without confirmation (no terminal to ask on)", "Pass --yes"
            )
        if not typer.confirm(f"Delete these {len(runs)} run(s)?", default=False):
            fail("nothing deleted", exit_code=1)
    deleted = store.delete_runs(list(runs))
    if json_output:
        print_json({"deleted": list(runs)})
    else:
        out.print(f"Deleted {deleted} run(s).")


@app.command("show")
def show_command(
    run: str = typer.Argument(..., help="Run id, unique id prefix or label.", show_default=False),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Print a stored run again: its table, or with --json its cells, facts and warnings.

    --format markdown or csv exports the cells with plain numbers (units in the headers).

    Example:

        stackbench show baseline --json

        stackbench show baseline --format markdown >> notes.md
    """
    store = open_store_from(db)
    stored = store.get_run(run)
    fmt = chosen_format(output_format, json_output)
    print_run(store, stored, fmt)
    from stackbench.cli.fleet import print_spread

    print_spread(stored, fmt)
    if fmt == "table":
        for warning in stored.warnings:
            warn(str(warning))


@app.command("import")
def import_command(
    files: list[Path] = typer.Argument(
        ..., help="fio output files (json, json+, normal or terse) or FreeBSD diskinfo -wS output.", show_default=False
    ),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="Label for the imported run(s).", callback=check_label),
    input_format: str = typer.Option(
        "auto", "--input-format", help="auto (detect), json, normal, terse or diskinfo."
    ),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Store fio outputs (JSON, json+, normal text, terse) and FreeBSD `diskinfo -wS` outputs as runs,
    one run per file; the format is detected.

    Every file is parsed before anything is stored: one bad file stores nothing and names the file and line.
    Text formats are rounded by fio: normal output gives exact IOPS (from the issued I/O count and the
    runtime) but percentiles to 3 significant digits; terse gives IOPS to the unit, no rw/bs/iodepth.

    Example:

        stackbench import results/*.json --label old-server

        stackbench import optane-diskinfo.txt --label optane
    """
    from stackbench.importer import import_files
    from stackbench.report.run_json import run_json

    store = open_store_from(db)
    runs = import_files(store, files, label=label, fmt=input_format)
    fmt = chosen_format(output_format, json_output)
    if fmt == "json":
        print_json({"runs": [run_json(r) for r in runs]})
        return
    for stored in runs:
        print_run(store, stored, fmt)
        if fmt == "table":
            for warning in stored.warnings:
                warn(str(warning))
