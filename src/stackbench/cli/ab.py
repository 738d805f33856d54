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
from stackbench.measure.safety import check_target_text
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
    rounds: int = typer.Option(
        6, "--rounds", "-r", min=2, max=100,
        help="Rounds, A first and B first in turn (AB, BA, ...): one fio run per cell and arm each. An odd number "
             "is raised by one, so that each arm goes first as often.",
    ),
    prepare_command: Optional[str] = typer.Option(
        None, "--prepare", help='Shell command run before every measurement, e.g. "sync; echo 3 > /proc/sys/vm/drop_caches".'
    ),
    command_timeout: int = typer.Option(
        600, "--command-timeout", min=1, max=86400, metavar="SECONDS",
        help="How long each command may take; then it is stopped with everything it started in its process group.",
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
    pairs the runs by round. The arm measured first alternates (AB, BA, AB, ...), so an advantage of going
    second cannot pass for a gain; the compare shows that order effect. A verdict bought with safety
    (sync=disabled, barrier=0, cache=unsafe ...) says so. A and B are stored as two runs (their facts carry
    the commands and the rounds' order) that `stackbench compare` can show again. The commands run with
    /bin/sh exactly as given, each in a process group of its own; a command that is still running at
    --command-timeout, Ctrl-C or SIGTERM is stopped with everything it started there. The system is left as
    the last round ends (in A after an even number of rounds); Ctrl-C says which command was running and
    which was applied last, so you know the state the system was left in.

    Example:

        stackbench ab -t /tank/vm/bench --a "zfs set compression=off tank/vm" --b "zfs set compression=lz4 tank/vm" --bs 4k,1m --rw randwrite,write
    """
    from stackbench.measure.ab import AbRequest, execute_ab
    from stackbench.analysis.compare import compare_runs
    from stackbench.report.compare import comparison_csv_table, comparison_table
    from stackbench.cli.progress import ProgressObserver
    from stackbench.model.round_order import even_rounds
    from stackbench.measure.runner import RunRequest

    plan = plan_from_options(
        preset, bs, qd, rw, sync, direct, size, runtime, ramp, jobs, 1, None, False, 5.0, None, None, ioengine,
        rate_iops,
    )
    check_target_text(target)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    if rounds != even_rounds(rounds):
        rounds = even_rounds(rounds)
        if fmt != "json":
            err.print(f"Note: {rounds} rounds, not {rounds - 1}: with an even number each arm goes first in as many "
                      "rounds as the other", markup=False, highlight=False, soft_wrap=True)
    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt != "json", quiet=True, arms=2, rounds=rounds)

    from stackbench.base.credentials import scrub_text

    def announce(arm: str, command: str) -> None:  # printed as the runs store them: credentials masked
        if fmt != "json" and not err.is_terminal:
            err.print(f"applying {arm}: {scrub_text(command)}", markup=False, highlight=False, soft_wrap=True)

    with observer:
        result = execute_ab(
            store,
            AbRequest(RunRequest(target=target, plan=plan, label=label), command_a, command_b, rounds, prepare_command,
                      command_timeout),
            observer,
            on_command=announce,
        )
    comparison = compare_runs(result.a, result.b, alpha=alpha, min_effect=min_effect / 100)
    data = comparison.to_json()
    data["ab"] = {"session": result.session, "rounds": rounds, "orders": list(result.orders),
                  "a": scrub_text(command_a), "b": scrub_text(command_b),
                  "prepare": prepare_command and scrub_text(prepare_command)}
    emit(fmt, comparison_table(comparison), data, csv=comparison_csv_table(comparison))
    if fmt == "table":
        last = result.orders[-1][-1]
        err.print(
            f"The system is now in configuration {last} "
            f"({scrub_text(command_a if last == 'A' else command_b)}). "
            f"Runs: {result.a.id[:12]} (A), {result.b.id[:12]} (B).",
            markup=False, highlight=False, soft_wrap=True,
        )
        for warning in comparison.warnings:
            warn(str(warning))
        for arm, run in (("A", result.a), ("B", result.b)):
            for warning in run.warnings:
                warn(f"{arm}: {warning}")
