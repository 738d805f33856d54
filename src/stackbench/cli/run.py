"""`stackbench run`: the workload matrix through fio into the store, printed as a table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import typer

from stackbench.cli.app import app, err, out, warn
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, check_label, chosen_format, open_store_from, print_json, print_run,
    target_path,
)
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
from stackbench.cli.progress import ProgressObserver, runs_text
from stackbench.model.plan import Plan
from stackbench.base.units import count, format_duration
from stackbench.measure.safety import check_target_text

if TYPE_CHECKING:
    from stackbench.analysis.estimate import PlanTime
    from stackbench.measure.runner import DryRun


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
    hosts: Optional[str] = typer.Option(
        None, "--hosts", help="Run the plan on these hosts at once over ssh: comma-separated [user@]host names "
        "(your ~/.ssh/config and keys apply; fio and python3 must be on each). TARGET is then a path on every "
        "host (a directory or a new file). See docs/fleet.md.", show_default=False,
    ),
    hosts_file: Optional[Path] = typer.Option(
        None, "--hosts-file", help="A file with one host per line (# starts a comment), added to --hosts.",
        show_default=False,
    ),
    ssh_config: Optional[str] = typer.Option(
        None, "--ssh-config", help="With --hosts: an ssh config file, passed as ssh -F [default: "
        "$STACKBENCH_SSH_CONFIG, else ssh's own ~/.ssh/config].", show_default=False,
    ),
    connect_timeout: int = typer.Option(
        10, "--connect-timeout", min=1, max=300, help="With --hosts: seconds ssh waits for a host to answer "
        "(ssh ConnectTimeout).",
    ),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="A name for this run, usable wherever a run id is.", callback=check_label),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and the first job file; run nothing."),
    push: Optional[str] = typer.Option(
        None, "--push", help="After the run is stored, push it to this stackbench server URL (token: "
        "$STACKBENCH_TOKEN; see `stackbench push`).", show_default=False),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
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

        stackbench run --hosts node1,node2,node3 -t /srv/bench --preset quick
    """
    began = time.monotonic()  # the estimate counts the command's own start-up from here
    plan = plan_from_options(
        preset, bs, qd, rw, sync, direct, size, runtime, ramp, jobs, runs, repeat, until_stable, ci_target,
        max_runs, max_time, ioengine, rate_iops,
    )
    fmt = chosen_format(output_format, json_output)
    if hosts is not None or hosts_file is not None:
        if dry_run:
            _print_fleet_plan(plan, target, hosts, hosts_file)
            return
        from stackbench.cli.fleet import run_fleet

        run_fleet(plan, target, hosts, hosts_file, ssh_config, connect_timeout, label, destroy_data, db, fmt)
        return

    from stackbench.measure.runner import RunRequest, execute_run

    request = RunRequest(target=target, plan=plan, label=label, destroy_data=destroy_data, started=began)
    check_target_text(target)
    token = None
    if push:
        from stackbench.cli.push import base_url, read_token

        base_url(push)  # before the run: a bad URL or a missing token must not cost a whole run
        token = read_token(None)
    if dry_run:
        from stackbench.measure.runner import dry_run as prepare_dry_run
        from stackbench.store import open_store_to_read

        shown = prepare_dry_run(request, open_store_to_read(db))  # the run's own checks; writes nothing
        _print_dry_run(shown, target, fmt)
        return
    store = open_store_from(db)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt == "table", quiet=fmt == "json")
    with observer:
        run = execute_run(store, request, observer)
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
    from stackbench.measure.runner import DRY_RUN_SCRATCH_ID

    prepared = shown.prepared
    for warning in prepared.warnings:
        warn(str(warning))
    if fmt == "json":
        from stackbench.measure.runner import plan_facts

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


def _print_fleet_plan(plan: Plan, target: Path, hosts: Optional[str], hosts_file: Optional[Path]) -> None:
    """A fleet run's plan without contacting the hosts: their checks and sizes are made when they answer."""
    from stackbench.analysis.estimate import plan_time
    from stackbench.engine.fio import job_file
    from stackbench.fleet.hosts import parse_hosts
    from stackbench.measure.runner import DRY_RUN_SCRATCH_ID

    names = parse_hosts(hosts, hosts_file)
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
