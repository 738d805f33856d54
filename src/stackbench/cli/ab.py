"""`stackbench ab`: apply A, measure, apply B, measure, for N rounds; then compare paired by round."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from stackbench.cli.app import app, err, warn
from stackbench.cli.common import (
    OUTPUT_PANEL, AlphaOption, DbOption, FormatOption, IntBetween, JsonOption, MinEffectOption, check_label,
    chosen_format, emit_report, open_store_from, target_path,
)
from stackbench.cli.plan_options import PlanOptions, with_plan_options
from stackbench.measure.safety import check_target_text

if TYPE_CHECKING:
    from stackbench.analysis.compare import RunComparison
    from stackbench.measure.ab import AbResult
    from stackbench.model.plan import Plan
    from stackbench.store import Store

COMMANDS_PANEL = "Commands"


@app.command("ab")
@with_plan_options(repeats=False)
def ab_command(
    *,
    target: Path = typer.Option(
        ..., "--target", "-t", metavar="DIR", rich_help_panel="Target", show_default=False, parser=target_path,
        help="Directory on the storage under test (a scratch file is created and removed).",
    ),
    command_a: str = typer.Option(
        ..., "--a", metavar="COMMAND", rich_help_panel=COMMANDS_PANEL, show_default=False,
        help='Shell command that applies configuration A, e.g. "zfs set compression=off tank/vm".',
    ),
    command_b: str = typer.Option(
        ..., "--b", metavar="COMMAND", rich_help_panel=COMMANDS_PANEL, show_default=False,
        help='Shell command that applies configuration B, e.g. "zfs set compression=lz4 tank/vm".',
    ),
    prepare_command: Optional[str] = typer.Option(
        None, "--prepare", metavar="COMMAND", rich_help_panel=COMMANDS_PANEL,
        help='Shell command run before every measurement, e.g. "sync; sysctl vm.drop_caches=3".',
    ),
    command_timeout: int = typer.Option(
        600, "--command-timeout", click_type=IntBetween(1, 86400), metavar="SECONDS", rich_help_panel=COMMANDS_PANEL,
        help="How long each command may take (1-86400 s); then it is stopped with everything it started in its "
             "process group.",
    ),
    rounds: int = typer.Option(
        6, "--rounds", "-r", click_type=IntBetween(2, 100), metavar="N", rich_help_panel=COMMANDS_PANEL,
        help="Rounds (2-100), A first and B first in turn (AB, BA, ...): one fio run per cell and arm each. An odd "
             "number is raised by one, so that each arm goes first as often.",
    ),
    plan_options: PlanOptions,
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    label: Optional[str] = typer.Option(
        None, "--label", "-l", metavar="NAME", rich_help_panel=OUTPUT_PANEL, callback=check_label,
        help="Session name; the runs are stored as NAME-a and NAME-b.",
    ),
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

        stackbench ab -t /tank/vm/bench --bs 4k,1m --rw randwrite,write \\
            --a "zfs set compression=off tank/vm" \\
            --b "zfs set compression=lz4 tank/vm"
    """
    from stackbench.analysis.compare import compare_runs
    from stackbench.model.round_order import even_rounds

    plan = replace(plan_options, runs=1, until_stable=False).plan()  # the rounds are the runs
    check_target_text(target)
    store = open_store_from(db)
    fmt = chosen_format(output_format, json_output)
    if rounds != even_rounds(rounds):
        rounds = even_rounds(rounds)
        if fmt != "json":
            err.print(f"Note: {rounds} rounds, not {rounds - 1}: with an even number each arm goes first in as many "
                      "rounds as the other", markup=False, highlight=False, soft_wrap=True)
    started = time.monotonic()
    result = _measure(store, plan, target=target, label=label, commands=(command_a, command_b, prepare_command),
                      command_timeout=command_timeout, rounds=rounds, fmt=fmt)
    from stackbench.cli.report_charts import charts_ahead, draw_report_charts

    if charts_ahead(None, time.monotonic() - started):  # the arms' reports (docs/reports.md, "Charts kept")
        draw_report_charts(store, [result.a.id, result.b.id])
    comparison = compare_runs(result.a, result.b, alpha=alpha, min_effect=min_effect / 100)
    _print(comparison, result, fmt=fmt, commands=(command_a, command_b, prepare_command), rounds=rounds)


def _measure(store: "Store", plan: "Plan", *, target: Path, label: Optional[str], commands: tuple[str, str, Optional[str]],
             command_timeout: int, rounds: int, fmt: str) -> "AbResult":
    """The rounds, with the progress display and, without a terminal, a line per command applied."""
    from stackbench.base.credentials import scrub_text
    from stackbench.cli.progress import ProgressObserver
    from stackbench.measure.ab import AbRequest, execute_ab
    from stackbench.measure.preparation import RunRequest

    observer = ProgressObserver(plan, enabled=err.is_terminal and fmt != "json", quiet=True, arms=2, rounds=rounds)

    def announce(arm: str, command: str) -> None:  # printed as the runs store them: credentials masked
        if fmt != "json" and not err.is_terminal:
            err.print(f"applying {arm}: {scrub_text(command)}", markup=False, highlight=False, soft_wrap=True)

    command_a, command_b, prepare_command = commands
    request = AbRequest(RunRequest(target=target, plan=plan, label=label), command_a, command_b, rounds,
                        prepare_command, command_timeout)
    with observer:
        return execute_ab(store, request, observer, on_command=announce)


def _print(comparison: "RunComparison", result: "AbResult", *, fmt: str, commands: tuple[str, str, Optional[str]],
           rounds: int) -> None:
    """The comparison in the chosen format, its JSON with the session (commands as stored: credentials
    masked); on the terminal, the state the system is left in and the warnings."""
    from stackbench.base.credentials import scrub_text
    from stackbench.report.compare import comparison_report

    session = {"session": result.session, "rounds": rounds, "orders": list(result.orders),
               "a": scrub_text(commands[0]), "b": scrub_text(commands[1]),
               "prepare": commands[2] and scrub_text(commands[2])}
    emit_report(fmt, comparison_report(comparison, {"ab": session}))  # then each layer in both arms' runs
    if fmt != "table":
        return
    last = result.orders[-1][-1]
    err.print(
        f"The system is now in configuration {last} ({scrub_text(commands[0] if last == 'A' else commands[1])}). "
        f"Runs: {result.a.id[:12]} (A), {result.b.id[:12]} (B).",
        markup=False, highlight=False, soft_wrap=True,
    )
    for warning in comparison.warnings:
        warn(str(warning))
    for arm, run in (("A", result.a), ("B", result.b)):
        for warning in run.warnings:
            warn(f"{arm}: {warning}")
