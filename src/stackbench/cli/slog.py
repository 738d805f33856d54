"""`stackbench slog CANDIDATE...`: the SLOG shoot-out, one table, ranked by QD1 sync-write latency."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from stackbench.cli.app import app, err, warn
from stackbench.cli.common import DbOption, FormatOption, IntBetween, JsonOption, chosen_format, emit, open_store_from
from stackbench.model.plan import MAX_RUNS
from stackbench.measure.safety import check_target_text

if TYPE_CHECKING:
    from stackbench.model.plan import Plan
    from stackbench.model.results import Run
    from stackbench.store import Store


@app.command("slog")
def slog_command(
    candidates: Optional[list[Path]] = typer.Argument(
        None, help="Candidate log devices: directories on them, new file paths, or blank devices with --destroy-data.",
        show_default=False,
    ),
    pool_dataset: Optional[Path] = typer.Option(
        None, "--pool-dataset", help="Also measure this dataset (sync=always, recordsize=4k) as the baseline row."
    ),
    run_refs: Optional[list[str]] = typer.Option(
        None, "--run", help="Add stored runs (measured or imported) as candidates, by id or label."
    ),
    runs: Optional[int] = typer.Option(
        None, "--runs", "-n", click_type=IntBetween(1, MAX_RUNS), metavar="N",
        help=f"Separate runs (1-{MAX_RUNS}) of every candidate, interleaved round by round (default 5): the "
        "intervals and the tests between candidates count them.",
    ),
    runtime: Optional[str] = typer.Option(
        None, "--runtime", help="Measured seconds of each run at both depths (default: QD1 5 s, QD16 10 s), e.g. 2."
    ),
    ramp: Optional[str] = typer.Option(None, "--ramp", help="Seconds each run writes before it measures (default 1)."),
    sizes: Optional[str] = typer.Option(
        None, "--sizes", help="Write sizes, comma list and doubling ranges (default 4k; the classes are for 4 KiB): "
        "each is ranked on its own.",
    ),
    size: str = typer.Option("1G", "--size", help="Scratch file size per candidate."),
    destroy_data: bool = typer.Option(False, "--destroy-data", help="Allow blank block devices (same guard as run)."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Run the slog preset (4K random O_SYNC writes, QD1 for 5 s and QD16 for 10 s) on each candidate, in
    rounds that measure every candidate once (5 by default), and rank them by QD1 median latency, with a
    verdict on which is fit for a ZFS SLOG.

    A class is named only where the 95 % interval of the QD1 median across runs lies in one class, and a
    best candidate only where it is proven better than the second (compare's test, Holm over the pairs);
    a warning says how many --runs would decide what the runs left open. A target that is not a device
    (tmpfs, the page cache, a network file system) is never the best.

    Runs are kept short on purpose: ZFS flushes a transaction group every 5 s, and longer runs measure the
    pool's data disks absorbing the flush rather than the log device. --runtime 2 --runs 3 gives a first
    look in about a fifth of the time.

    Examples:

        stackbench slog /mnt/optane /mnt/sata-ssd --pool-dataset /tank/slogtest

        stackbench slog /mnt/a /mnt/b --runtime 2 --runs 3

        stackbench slog --run optane-diskinfo --run old-ssd
    """
    import shlex

    from stackbench.analysis.slog import candidate_from_run, rank, stored_candidate
    from stackbench.cli.plan_options import parse_ramp
    from stackbench.model.plan import slog_plan
    from stackbench.report.slog import slog_csv_table, slog_table
    from stackbench.measure.synclat import parse_sizes
    from stackbench.base.units import parse_duration

    targets = _targets(candidates or [], pool_dataset, has_runs=bool(run_refs))
    chosen_sizes = parse_sizes(sizes) if sizes else [4096]
    seconds = parse_duration(runtime, option="runtime") if runtime is not None else None
    plan = slog_plan(sizes=chosen_sizes, runtime=seconds, ramp=parse_ramp(ramp), runs=runs, size=size)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    results = []
    if targets:
        measured = _measure(store, plan, targets, destroy_data=destroy_data, fmt=fmt)
        for (name, _), run in zip(targets, measured):
            results += [candidate_from_run(name, run, bs) for bs in chosen_sizes]
    for ref in run_refs or []:
        stored = store.get_run(ref)
        results += [stored_candidate(stored, bs) for bs in chosen_sizes]
    named = [shlex.quote(str(p)) for p in candidates or []] or ["CANDIDATE..."]
    ranking = rank(results, command=" ".join(["stackbench slog", *named]))
    emit(fmt, slog_table(ranking), ranking.to_json(), csv=slog_csv_table(ranking))
    for warning in ranking.warnings:
        warn(str(warning))


def _measure(store: "Store", plan: "Plan", targets: list[tuple[str, Path]], *, destroy_data: bool,
             fmt: str) -> list["Run"]:
    """The candidates measured in interleaved rounds (one run of each per round), their runs stored; on the
    terminal with the session's size and time first and a line per turn."""
    from stackbench.cli.progress import ProgressObserver
    from stackbench.measure.slog import execute_slog
    from stackbench.base.units import count, format_duration

    if fmt == "table":
        from stackbench.analysis.estimate import plan_time

        estimate = plan_time(plan)  # one candidate's rounds; every candidate runs as many
        seconds = estimate.setup_s + len(targets) * estimate.fio_seconds + estimate.finish_s
        err.print(f"SLOG shoot-out: {count(len(targets), 'candidate')} x {count(len(plan.workloads), 'cell')} x "
                  f"{plan.runs} interleaved runs, about {format_duration(seconds)}", highlight=False, markup=False)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt == "table", quiet=True,
                                arms=len(targets), rounds=plan.runs)

    def turn(name: str, round_index: int) -> None:
        if fmt == "table":
            err.print(f"  round {round_index + 1}/{plan.runs}: {name}", highlight=False, markup=False)

    with observer:
        return execute_slog(store, plan, targets, destroy_data=destroy_data, observer=observer, on_turn=turn).runs


def _targets(candidates: list[Path], pool_dataset: Optional[Path], *, has_runs: bool) -> list[tuple[str, Path]]:
    """The paths to measure, each with its name in the ranking; refused before anything runs when there is
    nothing to rank or a path cannot go into a job file."""
    from stackbench.base.errors import StackbenchError

    targets = [(str(p), p) for p in candidates]
    if pool_dataset is not None:
        targets.append((f"pool dataset {pool_dataset}", pool_dataset))
    if not targets and not has_runs:
        raise StackbenchError("no SLOG candidates given", "Name directories or devices, or stored runs with --run")
    for _, path in targets:
        check_target_text(path)
    return _unique_names(targets)


def _unique_names(targets: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Candidates named by their path; a path given twice (an A/A check) is `PATH #2` the second time."""
    seen: dict[str, int] = {}
    named = []
    for name, path in targets:
        seen[name] = seen.get(name, 0) + 1
        named.append((name if seen[name] == 1 else f"{name} #{seen[name]}", path))
    return named
