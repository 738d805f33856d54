"""`stackbench runs`, `show`, `rm` and `import`: reading the store (runs, smallblocks scans, audits, tune
sessions) and adding fio outputs made elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import (
    DbOption, FormatOption, IntBetween, JsonOption, JsonReplyOption, check_label, chosen_format, emit_report,
    open_store_from, print_json, print_run,
)
from stackbench.base.registry import one_of
from stackbench.engine.input_formats import AUTO, FORMATS, titles

if TYPE_CHECKING:
    from stackbench.store import Store

KINDS = ("run", "scan", "audit", "tune")


def _kinds(value: Optional[list[str]]) -> Optional[list[str]]:
    from stackbench.cli.common import split_list

    kinds = split_list(value)
    for kind in kinds or ():
        if kind not in KINDS:
            raise typer.BadParameter(f"unknown kind {kind!r}: use run, scan, audit or tune")
    return kinds


@app.command("runs")
def runs_command(
    limit: int = typer.Option(50, "--limit", "-n", click_type=IntBetween(1), metavar="N",
                              help="Show at most this many items (1 or more), newest first."),
    label: Optional[str] = typer.Option(None, "--label", help="Only items with this label."),
    kind: Optional[list[str]] = typer.Option(
        None, "--kind", help="Only these kinds: run, scan (smallblocks --db), audit (audit --db) or tune (tune "
        "--apply sessions); comma-separated or repeated. Default: all.", callback=_kinds,
    ),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """List stored runs, smallblocks scans, audits and tune sessions, newest first; the Kind column says which.

    Any unique prefix of an ID (4+ characters) or a label names an item in `show`, `rm` and later commands.

    Example:

        stackbench runs -n 10

        stackbench runs --kind scan,audit
    """
    from stackbench.report.runs import runs_report

    kinds = kind or list(KINDS)
    store = open_store_from(db)
    rows = store.list_runs(limit=limit, label=label) if "run" in kinds else []
    scans = store.list_scans(limit=limit, label=label) if "scan" in kinds else []
    audits = store.list_audits(limit=limit, label=label) if "audit" in kinds else []
    tunes = store.list_tune_sessions(limit=limit, label=label) if "tune" in kinds else []
    fmt = chosen_format(output_format, json_output)
    if not (rows or scans or audits or tunes) and fmt == "table":
        out.print("Nothing stored yet. Start with: stackbench run --target DIR --preset quick")
        return
    emit_report(fmt, runs_report(rows, scans, audits, limit=limit, tunes=tunes))


@app.command("rm")
def rm_command(
    refs: list[str] = typer.Argument(
        ..., help="What to delete: ids, unique id prefixes or labels of runs, scans, audits or tune sessions.",
        show_default=False
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Delete without asking."),
    force: bool = typer.Option(False, "--force", help="Also delete runs still marked running."),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Delete stored runs (with their cells, per-second samples and fio outputs), smallblocks scans, audits
    (with their findings) and tune sessions (the runs of their arms stay, as runs).

    Lists what will go and asks first; without a terminal to ask on, --yes is required. All named items
    are deleted in one transaction, or none (an unknown name deletes nothing).

    Example:

        stackbench rm 3f2a9c old-server --yes
    """
    from stackbench.base.errors import StackbenchError, UsageError
    from stackbench.base.units import count
    from stackbench.store.repository import NOUNS

    store = open_store_from(db)
    chosen: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
    lines = []
    for ref in refs:
        kind, item_id = store.resolve_any(ref)
        holders = _labelled(store, ref) if item_id != ref else []
        if len(holders) > 1:
            raise UsageError(
                f"the label {ref!r} names {len(holders)} stored items ({', '.join(holders)}); rm deletes only what "
                "a name names exactly, and a label names the newest of them",
                f"Name them by id (`stackbench runs --label {ref}` lists them)",
            )
        if item_id in chosen[kind]:
            continue
        if kind == "run":
            stored = store.get_run(item_id)
            if stored.status == "running" and not force:
                raise UsageError(
                    f"run {stored.id[:12]} is still marked running (another stackbench may be measuring it)",
                    "Wait for it to finish, or pass --force if its process is gone",
                )
            line = (f"  {stored.id[:12]}  run    {stored.created_at:%Y-%m-%d %H:%M}  {stored.status:<10} "
                    f"{count(len(stored.cells), 'cell'):>9}  {stored.label or ''}")
        elif kind == "scan":
            scan = next((s for s in store.list_scans() if s.id == item_id))
            line = (f"  {scan.id[:12]}  scan   {scan.created_at:%Y-%m-%d %H:%M}  {scan.status:<10} "
                    f"{count(scan.files, 'file')}  {scan.label or ''}")
        elif kind == "audit":
            audit = next((a for a in store.list_audits() if a.id == item_id))
            line = (f"  {audit.id[:12]}  audit  {audit.created_at:%Y-%m-%d %H:%M}  {count(audit.findings_count, 'finding')}  "
                    f"{audit.subject_name or ''}  {audit.label or ''}")
        else:
            tune = store.tune_session_by_id(item_id)
            line = (f"  {tune.id[:12]}  tune   {tune.created_at:%Y-%m-%d %H:%M}  {tune.status:<10} "
                    f"{count(tune.knobs, 'knob')}  {tune.target or ''}  {tune.label or ''}")
        chosen[kind][item_id] = line
        lines.append(line)
    for line in lines:  # with --json, stdout holds the JSON document alone (docs/json.md)
        (err if json_output else out).print(line, markup=False, highlight=False)
    items = count(sum(len(ids) for ids in chosen.values()), "item")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(f"not deleting {items} without confirmation (no terminal to ask on)", "Pass --yes")
        if not typer.confirm(f"Delete {'this' if items.startswith('1 ') else 'these'} {items}?", default=False):
            raise StackbenchError("nothing deleted", "Answer y to delete, or pass --yes")
    store.delete_stored(runs=list(chosen["run"]), scans=list(chosen["scan"]), audits=list(chosen["audit"]),
                        tunes=list(chosen["tune"]))
    if json_output:
        print_json({"deleted": [item for ids in chosen.values() for item in ids]})
    else:
        out.print("Deleted " + ", ".join(count(len(ids), NOUNS[kind]) for kind, ids in chosen.items() if ids) + ".")


def _labelled(store: "Store", label: str) -> list[str]:
    """`run 3f2a9c1b7e04`, ... for every stored run, scan, audit and tune session with this label, newest first."""
    return ([f"run {r.id[:12]}" for r, _ in store.list_runs(label=label)]
            + [f"scan {s.id[:12]}" for s in store.list_scans(label=label)]
            + [f"audit {a.id[:12]}" for a in store.list_audits(label=label)]
            + [f"tune session {t.id[:12]}" for t in store.list_tune_sessions(label=label)])


@app.command("show")
def show_command(
    run: str = typer.Argument(..., help="Id, unique id prefix or label of a run, scan, audit or tune session.",
                              show_default=False),
    per_run: bool = typer.Option(
        False, "--per-run", help="List every cell's separate fio runs (IOPS, MB/s, latencies of each) instead of "
        "the cells."
    ),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Print a stored run again: its table, or with --json its cells, facts and warnings. A stored
    smallblocks scan, audit or tune session is printed as `smallblocks`, `audit` or `tune --apply` printed
    it, in any format.

    --format markdown gives the tables as the terminal shows them, units in the cells and the goals under
    the cells, to paste into notes; --format csv the cells with plain numbers (units in the headers).
    --per-run lists each cell's separate fio runs, whose geometric mean is the cell's figure.

    Example:

        stackbench show baseline --json

        stackbench show baseline --per-run

        stackbench show baseline --format markdown >> notes.md
    """
    store = open_store_from(db)
    kind, item_id = store.resolve_any(run)
    fmt = chosen_format(output_format, json_output)
    if per_run and kind != "run":
        from stackbench.base.errors import UsageError

        raise UsageError(f"--per-run lists the fio runs of a run's cells, and {run!r} is a stored {kind}",
                         "Leave out --per-run, or name a run")
    if kind == "scan":
        from stackbench.cli.smallblocks import show_scan

        show_scan(store.get_scan(item_id), fmt)
        return
    if kind == "audit":
        from stackbench.cli.audit import show_audit

        show_audit(store.get_audit(item_id), fmt)
        return
    if kind == "tune":
        from stackbench.cli.tune import show_tune_session

        show_tune_session(store, store.tune_session_by_id(item_id), fmt)
        return
    stored = store.get_run(item_id)
    holders = _labelled(store, run) if item_id != run else []
    if len(holders) > 1:  # said on stderr: a script's --json or csv on stdout stays what it was
        warn(f"the label {run!r} names {len(holders)} stored items; this is the newest, run {stored.id[:12]} "
             f"(`stackbench runs --label {run}` lists them)")
    if per_run:
        from stackbench.report.run import per_run_report

        emit_report(fmt, per_run_report(stored))
        return
    print_run(store, stored, fmt)
    from stackbench.cli.fleet import print_spread

    print_spread(stored, fmt)
    if fmt == "table":
        for warning in stored.warnings:
            warn(str(warning))


@app.command("import")
def import_command(
    files: list[Path] = typer.Argument(..., help=f"Files to import: {titles()}.", show_default=False),
    label: Optional[str] = typer.Option(
        None, "--label", "-l", callback=check_label,
        help="Label for the imported run; with several files, LABEL-1 to LABEL-N in the order given, one per run.",
    ),
    input_format: str = typer.Option(
        AUTO, "--input-format", help=f"{AUTO} (detect each file's), {one_of(FORMATS)}."
    ),
    charts: bool = typer.Option(
        False, "--charts", help="Draw each run's report charts once it is stored, so that its first `stackbench "
        "report` reads them (2-3 s of CPU a run; an import is otherwise quick).",
    ),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Store outputs of fio and other tools, in the formats FILES lists, as runs, one run per file; the format is
    detected unless --input-format names it. With --label and several files, each run gets its own label,
    LABEL-1 to LABEL-N in the order the files are given, so that each can be shown and removed by it.

    Every file is parsed before anything is stored: one bad file stores nothing and names the file and line.
    Text formats are rounded by fio: normal output gives exact IOPS (from the issued I/O count and the
    runtime) but percentiles to 3 significant digits; terse gives IOPS to the unit, no rw/bs/iodepth.

    Example:

        stackbench import results/*.json --label old-server

        stackbench import optane-diskinfo.txt --label optane
    """
    from stackbench.cli.app import say_kept
    from stackbench.load.importer import import_files, interrupted
    from stackbench.report.run_json import run_json

    kept: list[tuple[Path, str]] = []
    say_kept(lambda cause: interrupted(cause, kept, len(files)))  # also once every file is stored, while printing
    store = open_store_from(db)
    runs = import_files(store, files, label=label, fmt=input_format, stored=kept)
    if charts:
        from stackbench.cli.report_charts import draw_report_charts

        draw_report_charts(store, [r.id for r in runs])
    fmt = chosen_format(output_format, json_output)
    if fmt == "json":
        print_json({"runs": [run_json(r) for r in runs]})
        return
    for stored in runs:
        print_run(store, stored, fmt)
        if fmt == "table":
            for warning in stored.warnings:
                warn(str(warning))
