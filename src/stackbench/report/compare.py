"""`compare A B` as a table in the manner of benchstat: each cell's IOPS in A and B, the change with its
interval and p-value, the row's verdict; the overall verdict and how the test was made below it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

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


def _estimate(estimate: Estimate | None, fallback: float) -> str:
    if estimate is None:
        return format_iops(fallback)
    width = estimate.half_width_rel
    return f"{format_iops(estimate.centre)} ± {width:.1%}" if math.isfinite(width) else f"{format_iops(estimate.centre)} ± ?"
