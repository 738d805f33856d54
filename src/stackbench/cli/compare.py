"""`stackbench compare A B`: did the change help? A benchstat-style table and a keep/revert verdict."""

from __future__ import annotations

from typing import Optional

import typer

from stackbench.cli.app import app, warn
from stackbench.cli.common import (
    AlphaOption, DbOption, FormatOption, JsonOption, MinEffectOption, chosen_format, emit_report, open_store_from,
)


@app.command("compare")
def compare_command(
    base: str = typer.Argument(..., help="Run A (before the change): id, id prefix or label.", show_default=False),
    other: str = typer.Argument(..., help="Run B (after the change).", show_default=False),
    weight: Optional[list[str]] = typer.Option(
        None,
        "--weight",
        "-w",
        help='Mark a row as important: "PATTERN=WEIGHT", e.g. "4K QD4 rnd write=3". When given, rows not named '
        "count 0 towards the overall verdict.",
    ),
    min_effect: float = MinEffectOption,
    alpha: float = AlphaOption,
    force: bool = typer.Option(False, "--force", help="Compare even when key facts (fio version, size, device) differ."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = JsonOption,
) -> None:
    """Compare run B against run A cell by cell and say keep, revert, same or no evidence.

    The unit is a separate fio run: each matching cell's per-run IOPS are compared with Welch's t-test on
    log values (paired by round for runs of one `stackbench ab`), p-values Holm-adjusted over the rows. A
    row says `keep` only when B is significantly better by at least --min-effect, `revert` when
    significantly worse by at least that much, `same` when the whole interval lies within ±--min-effect,
    `~` (no evidence) otherwise. The overall verdict weighs the rows (--weight). Runs measured with
    --runs 5 or more per cell give useful verdicts (docs/statistics.md).

    Example:

        stackbench compare baseline lz4-off -w "4K QD4 rnd write=3" -w "1M QD4 seq write=1"
    """
    from stackbench.analysis.compare import compare_runs, parse_weights
    from stackbench.report.compare import comparison_report

    store = open_store_from(db)
    result = compare_runs(
        store.get_run(base),
        store.get_run(other),
        alpha=alpha,
        min_effect=min_effect / 100,
        weights=parse_weights(weight or []),
        force=force,
    )
    fmt = chosen_format(output_format, json_output)
    emit_report(fmt, comparison_report(result))  # then what each layer did, both sides: shown, never tested
    if fmt == "table":
        for difference in result.fact_differences:
            warn(f"compared despite a difference in key facts (--force): {difference}")
        for row in result.rows:
            for warning in row.warnings:
                warn(str(warning))  # names the row: its subject is the row's pattern
        for warning in result.warnings:  # the comparison's own: a side less safe, an ab session's order effect
            warn(str(warning))


__all__ = ["compare_command"]
