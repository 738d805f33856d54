"""`stackbench compare A B`: did the change help? A benchstat-style table and a keep/revert verdict."""

from __future__ import annotations

import math
from typing import Optional

import typer

from stackbench.cli.app import app, warn
from stackbench.cli.common import DbOption, FormatOption, emit, open_store_from
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops


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
    min_effect: float = typer.Option(
        5.0, "--min-effect", min=0.1, max=100, help="Smallest change, in % (0.1-100), that can earn keep/revert."
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", min=0.0001, max=0.5, help="Significance level, 0.0001-0.5 (family-wise over the rows, Holm)."
    ),
    force: bool = typer.Option(False, "--force", help="Compare even when key facts (fio version, size, device) differ."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
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

    store = open_store_from(db)
    result = compare_runs(
        store.get_run(base),
        store.get_run(other),
        alpha=alpha,
        min_effect=min_effect / 100,
        weights=parse_weights(weight or []),
        force=force,
    )
    fmt = "json" if json_output else output_format
    emit(fmt, comparison_table(result), result.to_json())
    if fmt == "table":
        for difference in result.fact_differences:
            warn(f"compared despite a difference in key facts (--force): {difference}")
        for row in result.rows:
            for warning in row.warnings:
                warn(str(warning))  # names the row: its subject is the row's pattern


def comparison_table(result) -> Tabular:  # noqa: ANN001 - RunComparison, imported lazily
    a = result.base.label or result.base.id[:12]
    b = result.other.label or result.other.id[:12]
    rows = []
    styles = {}
    for index, row in enumerate(result.rows):
        t = row.test
        base_text = _estimate(row.base_estimate, row.base.result.iops)
        other_text = _estimate(row.other_estimate, row.other.result.iops)
        if t is None or not t.testable:
            vs = f"{(row.ratio - 1) * 100:+.1f}% (untested)" if math.isfinite(row.ratio) else "? (untested)"
        elif row.significant or row.verdict == "same":
            vs = (
                f"{(t.ratio - 1) * 100:+.1f}% [{(t.low - 1) * 100:+.1f}%, {(t.high - 1) * 100:+.1f}%] "
                f"(p={row.p_holm:.3f} n={t.n_base}+{t.n_other})"
            )
        else:
            vs = f"~ (p={row.p_holm:.3f} n={t.n_base}+{t.n_other})"
        verdict = row.verdict + (" (weak)" if row.weak and row.verdict != "no evidence" else "")
        rows.append([row.pattern, base_text, other_text, vs, f"{row.weight:g}", verdict])
        styles[index] = {"keep": "green", "revert": "red"}.get(row.verdict, "")
    geomean = result.geomean_ratio
    notes = []
    if geomean is not None:
        faster = "more" if geomean >= 1 else "fewer"
        factor = geomean if geomean >= 1 else 1 / geomean
        interval = result.geomean_ratio_ci()
        error = ""
        if interval is not None:
            low, high = interval if geomean >= 1 else (1 / interval[1], 1 / interval[0])
            error = f" ± {(high - low) / 2:.2f}"  # hyperfine's `1.8 ± 0.1 times faster`
        notes.append(
            f"{b} did {factor:.2f}{error} x {faster} IOPS than {a} (geometric mean of {len(result.rows)} cells)"
        )
    notes.append(f"Verdict: {result.verdict.upper()} — {result.reason}")
    if result.only_in_base or result.only_in_other:
        notes.append(
            "Not compared (in one run only): " + ", ".join([*result.only_in_base, *result.only_in_other])
        )
    test = "paired t-test on log IOPS by ab round" if result.paired else "Welch t-test on log IOPS of separate runs"
    notes.append(
        f"IOPS = geometric mean of separate fio runs ± 95% CI; vs A = change [95% CI], {test}, p Holm-adjusted "
        f"over {len(result.rows)} rows; ~ = not significant at alpha {result.alpha:g}; keep/revert need "
        f">= {result.min_effect:.0%}; same = whole {1 - 2 * result.alpha:.0%} interval within ±{result.min_effect:.0%}"
    )
    return Tabular(
        headers=["Pattern", f"A: {a} IOPS", f"B: {b} IOPS", "vs A", "weight", "verdict"],
        rows=rows,
        title=f"compare A={a} B={b}",
        notes=notes,
        right_aligned=frozenset({1, 2, 3, 4}),
        styles=styles,
    )


def _estimate(estimate, fallback: float) -> str:  # noqa: ANN001 - Estimate | None
    if estimate is None:
        return format_iops(fallback)
    width = estimate.half_width_rel
    return f"{format_iops(estimate.centre)} ± {width:.1%}" if math.isfinite(width) else f"{format_iops(estimate.centre)} ± ?"


__all__ = ["compare_command", "comparison_table"]
