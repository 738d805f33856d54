"""`stackbench slog CANDIDATE...`: the SLOG shoot-out, one table, ranked by QD1 sync-write latency."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import DbOption, FormatOption, emit, open_store_from
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops, format_latency_ns
from stackbench.safety import check_target_text


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
    size: str = typer.Option("1G", "--size", help="Scratch file size per candidate."),
    destroy_data: bool = typer.Option(False, "--destroy-data", help="Allow blank block devices (same guard as run)."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
) -> None:
    """Run the slog preset (4K random O_SYNC writes, QD1 for 5 s and QD16 for 10 s) on each candidate and
    rank them by QD1 median latency, with a verdict on which is fit for a ZFS SLOG.

    Runs are kept short on purpose: ZFS flushes a transaction group every 5 s, and longer runs measure the
    pool's data disks absorbing the flush rather than the log device.

    Examples:

        stackbench slog /mnt/optane /mnt/sata-ssd --pool-dataset /tank/slogtest

        stackbench slog --run optane-diskinfo --run old-ssd
    """
    from stackbench.analysis.slog import PLP_NOTE, candidate_from_run, rank
    from stackbench.cli.progress import ProgressObserver
    from stackbench.errors import StackbenchError
    from stackbench.plan import build_plan
    from stackbench.runner import RunRequest, execute_run

    targets = [(str(p), p) for p in candidates or []]
    if pool_dataset is not None:
        targets.append((f"pool dataset {pool_dataset}", pool_dataset))
    if not targets and not run_refs:
        raise StackbenchError("no SLOG candidates given", "Name directories or devices, or stored runs with --run")
    for _, path in targets:
        check_target_text(path)
    store = open_store_from(db)
    fmt = "json" if json_output else output_format
    results = []
    plan = build_plan("slog", until_stable=False, size=size)
    for name, path in targets:
        if fmt == "table":
            err.print(f"SLOG candidate {name}", highlight=False)
        observer = ProgressObserver(plan, enabled=err.is_terminal and fmt == "table", quiet=fmt != "table")
        with observer:
            run = execute_run(
                store, RunRequest(target=path, plan=plan, label=f"slog:{name}", destroy_data=destroy_data), observer
            )
        results.append(candidate_from_run(name, run))
    for ref in run_refs or []:
        run = store.get_run(ref)
        results.append(candidate_from_run(run.label or run.id[:12], run))
    ranked = rank(results)
    emit(fmt, slog_table(ranked, PLP_NOTE), {"candidates": [c.to_json() for c in ranked], "note": PLP_NOTE})


def slog_table(ranked, note: str) -> Tabular:  # noqa: ANN001 - list[Candidate]
    rows = []
    for c in ranked:
        q1, q16 = c.qd1, c.qd16
        rows.append([
            c.name,
            format_iops(q1.iops) if q1 else "-",
            format_latency_ns(q1.median_ns) if q1 and q1.median_ns is not None else (
                f"{format_latency_ns(q1.mean_ns)} (mean)" if q1 else "-"),
            format_latency_ns(q1.mean_ns) if q1 else "-",
            format_latency_ns(q1.stdev_ns) if q1 else "-",
            format_iops(q1.best_1s_iops) if q1 and q1.best_1s_iops else "-",
            format_iops(q16.iops) if q16 else "-",
            format_latency_ns(q16.median_ns) if q16 else "-",
            format_iops(q16.best_1s_iops) if q16 and q16.best_1s_iops else "-",
            c.verdict,
        ])
    best = ranked[0].name if ranked and ranked[0].qd1_latency_ns is not None else None
    notes = [
        "QD1: 4K random O_SYNC writes for 5 s; QD16: the same for 10 s. Latencies are completion latencies "
        "(median, mean, standard deviation); best 1 s = highest one-second IOPS sample.",
        note,
    ]
    if best:
        notes.insert(0, f"Best candidate by QD1 latency: {best}.")
    return Tabular(
        headers=["Candidate", "QD1 IOPS", "QD1 median", "QD1 mean", "QD1 stdev", "QD1 best 1 s",
                 "QD16 IOPS", "QD16 median", "QD16 best 1 s", "Verdict"],
        rows=rows,
        title="SLOG shoot-out (sorted by QD1 median latency)",
        notes=notes,
        right_aligned=frozenset(range(1, 9)),
    )
