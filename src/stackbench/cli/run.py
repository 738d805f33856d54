"""`stackbench run`: the workload matrix through fio into the store, printed as a table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import typer

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import (
    OUTPUT_PANEL, DbOption, FormatOption, JsonOption, check_label, chosen_format, open_store_from, print_json,
    print_run, target_path,
)
from stackbench.cli.fleet_options import FleetOptions, with_fleet_options
from stackbench.cli.plan_options import PlanOptions, with_plan_options
from stackbench.cli.progress import ProgressObserver, runs_text
from stackbench.model.plan import Plan
from stackbench.base.units import count, format_duration
from stackbench.measure.safety import check_target_text

if TYPE_CHECKING:
    from stackbench.analysis.estimate import PlanTime
    from stackbench.measure.preparation import DryRun, RunRequest

TARGET_PANEL = "Target"


@app.command("run")
@with_fleet_options
@with_plan_options(repeats=True)
def run_command(
    *,
    target: Path = typer.Option(
        ..., "--target", "-t", metavar="PATH", rich_help_panel=TARGET_PANEL, show_default=False, parser=target_path,
        help="Directory (a scratch file is created and removed), a new file path, or with --destroy-data an "
        "existing file or a blank block device.",
    ),
    destroy_data: bool = typer.Option(
        False, "--destroy-data", rich_help_panel=TARGET_PANEL,
        help="Allow writing to an existing file or a blank, unmounted block device.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", rich_help_panel=TARGET_PANEL,
        help="Print the plan, the time estimate and every job file after the run's own checks; run nothing.",
    ),
    plan_options: PlanOptions,
    label: Optional[str] = typer.Option(
        None, "--label", "-l", metavar="NAME", rich_help_panel=OUTPUT_PANEL, callback=check_label,
        help="A name for this run, usable wherever a run id is.",
    ),
    push: Optional[str] = typer.Option(
        None, "--push", metavar="URL", rich_help_panel=OUTPUT_PANEL, show_default=False,
        help="After the run is stored, push it to this stackbench server (token: $STACKBENCH_TOKEN; see "
        "`stackbench push`).",
    ),
    charts: Optional[bool] = typer.Option(
        None, "--charts/--no-charts", rich_help_panel=OUTPUT_PANEL, show_default=False,
        help="Draw the run's report charts once it is stored, so that its first `stackbench report` reads them "
        "(2-3 s of CPU). Default: only after a minute or more of measuring.",
    ),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
    fleet: FleetOptions,
) -> None:
    """Run a workload matrix with fio against TARGET and store every cell.

    Each cell is measured in several separate fio runs (--runs), interleaved round-robin across cells so
    that drift in the machine's load hits every cell alike; a cell's value is the geometric mean of its
    runs with a 95 % interval. Every fio run is stored the moment it finishes (output json+, verbatim), so
    Ctrl-C keeps them (the run is marked incomplete) and the scratch file is always removed.

    Examples:

        stackbench run --target /tmp/scratch --preset quick

        stackbench run -t /tank/bench --preset blog --qd 4 --label baseline

        stackbench run -t /tank/vm --bs 4k --qd 4 --rw randwrite --sync --json

        stackbench run --hosts node1,node2,node3 -t /srv/bench --preset quick
    """
    began = time.monotonic()  # the estimate counts the command's own start-up from here
    plan = plan_options.plan()
    fmt = chosen_format(output_format, json_output)
    if fleet.asked:
        if dry_run:
            _print_fleet_plan(plan, target, fleet)
            return
        from stackbench.cli.fleet import run_fleet

        run_fleet(plan=plan, target=target, fleet=fleet, label=label, destroy_data=destroy_data, db=db, fmt=fmt)
        return
    from stackbench.measure.preparation import RunRequest

    request = RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data, started=began)
    check_target_text(target)
    token = _push_token(push)
    if dry_run:
        from stackbench.measure.preparation import dry_run as prepare_dry_run
        from stackbench.store import open_store_to_read

        shown = prepare_dry_run(request, open_store_to_read(db))  # the run's own checks; writes nothing
        _print_dry_run(shown, target, fmt)
        return
    _measure(request, db=db, fmt=fmt, push=push, token=token, charts=charts)


def _push_token(push: Optional[str]) -> Optional[str]:
    """With --push, the URL checked and the token read before the run: a bad URL or a missing token must
    not cost a whole run."""
    if not push:
        return None
    from stackbench.cli.push import base_url, read_token

    base_url(push)
    return read_token(None)


def _measure(request: "RunRequest", *, db: Optional[str], fmt: str, push: Optional[str], token: Optional[str],
             charts: Optional[bool] = None) -> None:
    """Measure, draw its report's charts (`charts`; None: cli/report_charts.charts_ahead decides), print the
    run and its warnings, and push it when asked."""
    import time

    from stackbench.measure.runner import execute_run

    store = open_store_from(db)
    observer = ProgressObserver(request.plan, enabled=err.is_terminal and fmt == "table", quiet=fmt == "json")
    started = time.monotonic()
    with observer:
        run = execute_run(store, request, observer)
    from stackbench.cli.report_charts import charts_ahead, draw_report_charts

    if charts_ahead(charts, time.monotonic() - started):
        draw_report_charts(store, [run.id])
    print_run(store, run, fmt)
    for warning in run.warnings:
        if warning not in observer.shown:
            warn(str(warning))
    if push:
        from stackbench.cli.push import push_runs

        assert token is not None
        answer = push_runs(store, [run.id], push, token)[0]  # the run is stored: a failed push loses nothing
        (err if fmt == "json" else out).print(f"Pushed {answer['id'][:12]} {answer['url']}", markup=False,
                                              highlight=False, soft_wrap=True)


def _print_dry_run(shown: "DryRun", target: Path, fmt: str) -> None:
    """The run as it will be measured: the plan after the checks, the estimate and every cell's job file."""
    from stackbench.measure.preparation import DRY_RUN_SCRATCH_ID

    prepared = shown.prepared
    for warning in prepared.warnings:
        warn(str(warning))
    if fmt == "json":
        from stackbench.measure.preparation import plan_facts

        print_json({
            "dry_run": True,
            "target": {"path": str(target), "kind": prepared.target.kind, "file": prepared.target.fio_filename},
            "plan": plan_facts(prepared.plan),
            "estimate": shown.estimate.to_json(),
            "cells": [{"pattern": w.name, "key": w.key, "job_file": text}
                      for w, text in zip(prepared.plan.workloads, shown.job_files)],
            "warnings": [w.to_json() for w in prepared.warnings],
        })
        return
    where = {
        "directory": f" (a directory): fio writes {prepared.target.fio_filename} ({DRY_RUN_SCRATCH_ID} is chosen when "
                     "the run starts), and the run removes it",
        "file": " (a new file): fio writes it, and the run removes it" if prepared.target.remove_after
                else " (an existing file, --destroy-data): fio overwrites it",
        "device": " (a blank block device, --destroy-data): fio overwrites it",
    }[prepared.target.kind]
    _print_plan(prepared.plan, shown.estimate, f"Target {target}{where}", shown.job_files)


def _print_fleet_plan(plan: Plan, target: Path, fleet: FleetOptions) -> None:
    """A fleet run's plan without contacting the hosts: their checks and sizes are made when they answer."""
    from stackbench.analysis.estimate import plan_time
    from stackbench.engine.fio import job_file
    from stackbench.fleet.hosts import parse_hosts
    from stackbench.measure.preparation import DRY_RUN_SCRATCH_ID

    names = parse_hosts(fleet.hosts, fleet.hosts_file)
    scratch = str(target / f"stackbench-{DRY_RUN_SCRATCH_ID}.scratch")
    sized = ("; the file size is chosen when the hosts answer: 2x the largest host's RAM, at most 90 % of "
             "the tightest host's free space") if plan.size_from_target else ""
    _print_plan(plan, plan_time(plan), f"Target {target} on every host. On {count(len(names), 'host')} at once (not "
                f"contacted by --dry-run): {', '.join(names)}; each host's job file names its own scratch file and "
                f"per-second logs and adds unlink=1{sized}", [job_file(w, scratch) for w in plan.workloads])


def _print_plan(plan: Plan, estimate: "PlanTime", where: str, job_files: "Sequence[str]") -> None:
    from stackbench.base.units import format_bytes

    out.print(
        f"Plan {plan.name}: {count(len(plan.workloads), 'cell')} x {runs_text(plan)}, file "
        f"{format_bytes(plan.size)}, {estimate.headline()}", markup=False, highlight=False, soft_wrap=True,
    )
    out.print(where, markup=False, highlight=False, soft_wrap=True)
    for line in estimate.details():
        out.print(f"  time: {line}", markup=False, highlight=False, soft_wrap=True)
    for index, workload in enumerate(plan.workloads, 1):
        how_long = (f"{workload.ramp_time:g}+{workload.runtime:g} s" if workload.time_based
                    else f"the file once (cap {format_duration(workload.runtime)})")
        out.print(f"  {index:>3}. {workload.name:<24} {how_long}  ({workload.key})", highlight=False, markup=False)
    out.print("\nJob files (fio gets each one for every run of its cell):", markup=False, highlight=False)
    for text in job_files:
        out.print("\n" + text.rstrip("\n"), highlight=False, markup=False, soft_wrap=True)
