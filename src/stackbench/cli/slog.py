"""`stackbench slog CANDIDATE...`: the SLOG shoot-out, one table, ranked by QD1 sync-write latency."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, err
from stackbench.cli.common import DbOption, FormatOption, JsonOption, chosen_format, emit, open_store_from
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
    json_output: bool = JsonOption,
) -> None:
    """Run the slog preset (4K random O_SYNC writes, QD1 for 5 s and QD16 for 10 s) on each candidate and
    rank them by QD1 median latency, with a verdict on which is fit for a ZFS SLOG.

    Runs are kept short on purpose: ZFS flushes a transaction group every 5 s, and longer runs measure the
    pool's data disks absorbing the flush rather than the log device.

    Examples:

        stackbench slog /mnt/optane /mnt/sata-ssd --pool-dataset /tank/slogtest

        stackbench slog --run optane-diskinfo --run old-ssd
    """
    from stackbench.analysis.slog import PLP_NOTE, candidate_from_run, rank, stored_candidate
    from stackbench.cli.progress import ProgressObserver
    from stackbench.errors import StackbenchError
    from stackbench.plan import build_plan
    from stackbench.report.slog import slog_csv_table, slog_table
    from stackbench.runner import RunRequest, execute_run

    targets = [(str(p), p) for p in candidates or []]
    if pool_dataset is not None:
        targets.append((f"pool dataset {pool_dataset}", pool_dataset))
    if not targets and not run_refs:
        raise StackbenchError("no SLOG candidates given", "Name directories or devices, or stored runs with --run")
    for _, path in targets:
        check_target_text(path)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
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
        results.append(stored_candidate(store.get_run(ref)))
    ranked = rank(results)
    emit(fmt, slog_table(ranked, PLP_NOTE), {"candidates": [c.to_json() for c in ranked], "note": PLP_NOTE},
         csv=slog_csv_table(ranked))
