"""`stackbench ab`: apply A, measure, apply B, measure, for N rounds; then compare paired by round."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stackbench.cli.app import app, err, warn
from stackbench.cli.common import (
    AlphaOption, DbOption, FormatOption, JsonOption, MinEffectOption, check_label, chosen_format, emit, open_store_from,
    target_path,
)
from stackbench.safety import check_target_text
from stackbench.cli.plan_options import (
    BsOption,
    DirectOption,
    IoengineOption,
    JobsOption,
    PresetOption,
    QdOption,
    RampOption,
    RateIopsOption,
    RuntimeOption,
    RwOption,
    SizeOption,
    SyncOption,
    plan_from_options,
)


@app.command("ab")
def ab_command(
    target: Path = typer.Option(
        ..., "--target", "-t", help="Directory on the storage under test (a scratch file is created and removed).",
        show_default=False, parser=target_path,
    ),
    command_a: str = typer.Option(
        ..., "--a", help='Shell command that applies configuration A, e.g. "zfs set compression=off tank/vm".',
        show_default=False,
    ),
    command_b: str = typer.Option(
        ..., "--b", help='Shell command that applies configuration B, e.g. "zfs set compression=lz4 tank/vm".',
        show_default=False,
    ),
    rounds: int = typer.Option(5, "--rounds", "-r", min=2, max=100, help="ABAB rounds: one fio run per cell and arm each."),
    prepare_command: Optional[str] = typer.Option(
        None, "--prepare", help='Shell command run before every measurement, e.g. "sync; echo 3 > /proc/sys/vm/drop_caches".'
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
    ioengine: Optional[str] = IoengineOption,
    rate_iops: Optional[int] = RateIopsOption,
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    label: Optional[str] = typer.Option(None, "--label", "-l", help="Session name; the runs are stored as NAME-a and NAME-b.", callback=check_label),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Prove a tuning change: apply A, measure, apply B, measure, alternating for --rounds rounds.

    The drift-proof way to compare two configurations: each round measures every cell of the plan once
    under A and once under B, so slow drift of the machine hits both arms alike, and the compare at the end
    pairs the runs by round. A and B are stored as two runs (their facts carry the commands) that
    `stackbench compare` can show again. The commands run with /bin/sh exactly as given. Ctrl-C says which
    command was applied last, so you know the state the system was left in.

    Example:

        stackbench ab -t /tank/vm/bench --a "zfs set compression=off tank/vm" --b "zfs set compression=lz4 tank/vm" --bs 4k,1m --rw randwrite,write
    """
    from stackbench.ab_session import AbRequest, execute_ab
    from stackbench.analysis.compare import compare_runs
    from stackbench.report.compare import comparison_csv_table, comparison_table
    from stackbench.cli.progress import ProgressObserver
    from stackbench.runner import RunRequest

    plan = plan_from_options(
        preset, bs, qd, rw, sync, direct, size, runtime, ramp, jobs, 1, None, False, 5.0, None, None, ioengine,
        rate_iops,
    )
    check_target_text(target)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt != "json", quiet=True, arms=2, rounds=rounds)

    from stackbench.credentials import scrub_text

    def announce(arm: str, command: str) -> None:  # printed as the runs store them: credentials masked
        if fmt != "json" and not err.is_terminal:
            err.print(f"applying {arm}: {scrub_text(command)}", markup=False, highlight=False, soft_wrap=True)

    with observer:
        result = execute_ab(
            store,
            AbRequest(RunRequest(target=target, plan=plan, label=label), command_a, command_b, rounds, prepare_command),
            observer,
            on_command=announce,
        )
    comparison = compare_runs(result.a, result.b, alpha=alpha, min_effect=min_effect / 100)
    data = comparison.to_json()
    data["ab"] = {"session": result.session, "rounds": rounds, "a": scrub_text(command_a), "b": scrub_text(command_b),
                  "prepare": prepare_command and scrub_text(prepare_command)}
    emit(fmt, comparison_table(comparison), data, csv=comparison_csv_table(comparison))
    if fmt == "table":
        err.print(
            f"The system is now in configuration B ({scrub_text(command_b)}). Runs: {result.a.id[:12]} (A), {result.b.id[:12]} (B).",
            markup=False, highlight=False, soft_wrap=True,
        )
        for arm, run in (("A", result.a), ("B", result.b)):
            for warning in run.warnings:
                warn(f"{arm}: {warning}")
