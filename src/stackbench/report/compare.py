"""`compare A B` as a table in the manner of benchstat: each cell's IOPS in A and B, the change with its
interval and p-value, the row's verdict; the overall verdict and how the test was made below it.

The terminal and Markdown show `comparison_table` ("3,008 ± 1.1%", "+19.9% [+18.5%, +21.4%] (p=0.000
n=5+5)"); CSV gets `comparison_csv_table`, the same rows with one plain number per cell."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops

if TYPE_CHECKING:  # the statistics are imported by whoever computed them, not to format them
    from stackbench.analysis.between_runs import Estimate
    from stackbench.analysis.compare import RunComparison


def comparison_table(result: RunComparison) -> Tabular:
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
    if result.safety.differences:  # the verdict stays true; this says what it was bought with
        notes.append(f"Safety: {result.safety.marking(result.verdict)}")
    if result.only_in_base or result.only_in_other:
        notes.append(
            "Not compared (in one run only): " + ", ".join([*result.only_in_base, *result.only_in_other])
        )
    test = "paired t-test on log IOPS by ab round" if result.paired else "Welch t-test on log IOPS of separate runs"
    if result.order_effect is not None:
        notes.append(result.order_effect.summary())
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


def comparison_csv_table(result: RunComparison) -> Tabular:
    """The comparison for a spreadsheet: each run's IOPS with its 95 % interval and number of runs, the
    change in % with its 95 % interval, the Holm-adjusted p-value, the weight and the verdict, one value
    per cell, and `safety`: the row's verdict marked with what it trades ("B is faster because it is less
    safe: ..."), empty when neither side is less safe. The change and its interval are given where the display writes `~` (not significant) too:
    the p-value and the verdict say what they are worth. A row that could not be tested (fewer than two
    runs on a side) has its change and no interval and no p (the display's "(untested)")."""
    a = result.base.label or result.base.id[:12]
    b = result.other.label or result.other.id[:12]
    rows = []
    for row in result.rows:
        t = row.test
        tested = t is not None and t.testable
        change = (row.ratio - 1) if math.isfinite(row.ratio) else None
        rows.append([
            row.pattern,
            *_estimate_cells(row.base_estimate, row.base.result.iops),
            *_estimate_cells(row.other_estimate, row.other.result.iops),
            plain.percent(change),
            plain.percent(t.low - 1 if tested and t.low is not None else None),
            plain.percent(t.high - 1 if tested and t.high is not None else None),
            plain.number(row.p_holm, 6) if tested else "",
            str(t.n_base) if t is not None else "",
            str(t.n_other) if t is not None else "",
            f"{row.weight:g}",
            row.verdict,
            "yes" if row.weak else "no",
            result.safety.marking(row.verdict),
        ])
    return Tabular(
        headers=["Pattern", f"A: {a} IOPS", "A IOPS CI low", "A IOPS CI high",
                 f"B: {b} IOPS", "B IOPS CI low", "B IOPS CI high",
                 "change %", "change CI low %", "change CI high %", "p", "runs A", "runs B", "weight", "verdict",
                 "weak", "safety"],
        rows=rows,
        title=f"compare A={a} B={b}",
        right_aligned=frozenset(range(1, 14)),
    )


def _estimate_cells(estimate: Estimate | None, fallback: float) -> list[str]:
    """IOPS, CI low, CI high: the geometric mean of the runs and its interval, or the one result."""
    if estimate is None:
        return [plain.iops(fallback), "", ""]
    return [plain.iops(estimate.centre), plain.iops(estimate.low), plain.iops(estimate.high)]


def _estimate(estimate: Estimate | None, fallback: float) -> str:
    if estimate is None:
        return format_iops(fallback)
    width = estimate.half_width_rel
    return f"{format_iops(estimate.centre)} ± {width:.1%}" if math.isfinite(width) else f"{format_iops(estimate.centre)} ± ?"
