"""`compare A B` as a table in the manner of benchstat: each cell's IOPS in A and B, the change with its
interval and p-value, the row's verdict; the overall verdict and how the test was made below it.

The terminal and Markdown show `comparison_table` ("3,008 ± 1.1%", "+19.9% [+18.5%, +21.4%] (p<0.001
n=5+5)", written by report/uncertainty.py); CSV gets `comparison_csv_table`, the same rows with one plain
number per cell."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from stackbench.analysis.cells import runs_range
from stackbench.analysis.stats import format_p
from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.report.uncertainty import CHANGE, FACTOR, TOO_NOISY, describe, noisy_note, readable
from stackbench.base.units import format_iops, plural

if TYPE_CHECKING:  # the statistics are imported by whoever computed them, not to format them
    from stackbench.analysis.between_runs import Estimate
    from stackbench.analysis.compare import RowComparison, RunComparison
    from stackbench.model.results import Cell
    from stackbench.report.document import Report


def comparison_table(result: RunComparison) -> Tabular:
    a = result.base.label or result.base.id[:12]
    b = result.other.label or result.other.id[:12]
    rows = []
    styles = {}
    for index, row in enumerate(result.rows):
        verdict = row.verdict + (" (weak)" if row.weak and row.verdict != "no evidence" else "")
        rows.append([row.pattern, _estimate(row.base_estimate, row.base), _estimate(row.other_estimate, row.other),
                     change_text(row), f"{row.weight:g}", verdict])
        styles[index] = {"keep": "green", "revert": "red"}.get(row.verdict, "")
    notes = [summary_line(result, a, b)] if result.geomean_ratio is not None else []
    notes.append(f"Verdict: {result.verdict.upper()} — {result.reason}")
    notes.append(f"Design: {result.design}")
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
        f"over {plural(len(result.rows), 'row')}; ~ = not significant at alpha {result.alpha:g}; keep/revert need "
        f">= {result.min_effect:.0%}; same = whole {1 - 2 * result.alpha:.0%} interval within "
        f"±{result.min_effect:.0%}; {TOO_NOISY} = an interval wider than a factor of 4"
    )
    return Tabular(
        headers=["Pattern", f"A: {a} IOPS", f"B: {b} IOPS", "vs A", "weight", "verdict"],
        rows=rows,
        title=f"compare A={a} B={b}",
        notes=notes,
        right_aligned=frozenset({1, 2, 3, 4}),
        styles=styles,
    )


def change_text(row: RowComparison) -> str:
    """The row's `vs A`: the change with its interval on every tested row (`~` first when it is not
    significant), "too noisy to tell" where that interval is too wide to read, `(untested)` below two
    runs a side; then the Holm-adjusted p and the runs."""
    t = row.test
    if t is None or not t.testable:
        return f"{(row.ratio - 1) * 100:+.1f}% (untested)" if math.isfinite(row.ratio) else "? (untested)"
    change = describe(t.ratio, t.low, t.high, style=CHANGE)
    if not (row.significant or row.verdict == "same" or t.too_noisy):
        change = f"~ {change}"
    return f"{change} ({format_p(row.p_holm)} n={t.n_base}+{t.n_other})"


def summary_line(result: RunComparison, a: str, b: str) -> str:
    """`lz4 did 1.20x [1.18, 1.22] more IOPS than baseline (geometric mean of 3 cells)`."""
    geomean = result.geomean_ratio
    assert geomean is not None
    cells = plural(len(result.rows), "cell")
    interval = result.geomean_ratio_ci()
    low, high = interval if interval is not None else (None, None)
    if interval is not None and not readable(low, high):
        return f"{b} against {a}: {TOO_NOISY} (geometric mean of {cells})"
    more = geomean >= 1
    factor = geomean if more else 1 / geomean
    if low is not None and high is not None and not more:
        low, high = 1 / high, 1 / low
    shown = describe(factor, low, high, style=FACTOR) if interval is not None else f"{factor:.2f}x"
    return f"{b} did {shown} {'more' if more else 'fewer'} IOPS than {a} (geometric mean of {cells})"


def comparison_csv_table(result: RunComparison) -> Tabular:
    """The comparison for a spreadsheet: each run's IOPS with its 95 % interval and number of runs, the
    change in % with its 95 % interval, the Holm-adjusted p-value, the weight and the verdict, one value
    per cell, and `safety`: the row's verdict marked with what it trades ("B is faster because it is less
    safe: ..."), empty when neither side is less safe. The change and its interval are given where the display writes `~` (not significant) too:
    the p-value and the verdict say what they are worth. A row that could not be tested (fewer than two
    runs on a side) has its change and no interval and no p (the display's "(untested)"). An interval too
    wide to read (report/uncertainty.py) is left empty and the `note` column says so with the runs' range;
    `--json` keeps its bounds."""
    a = result.base.label or result.base.id[:12]
    b = result.other.label or result.other.id[:12]
    rows = []
    for row in result.rows:
        t = row.test
        tested = t is not None and t.testable
        shown = tested and t is not None and readable(t.low, t.high)
        change = (row.ratio - 1) if math.isfinite(row.ratio) else None
        rows.append([
            row.pattern,
            *_estimate_cells(row.base_estimate, row.base.result.iops),
            *_estimate_cells(row.other_estimate, row.other.result.iops),
            plain.percent(change),
            plain.percent(t.low - 1 if shown and t is not None and t.low is not None else None),
            plain.percent(t.high - 1 if shown and t is not None and t.high is not None else None),
            plain.number(row.p_holm, 6) if tested else "",
            str(t.n_base) if t is not None else "",
            str(t.n_other) if t is not None else "",
            f"{row.weight:g}",
            row.verdict,
            "yes" if row.weak or result.drift else "no",
            result.safety.marking(row.verdict),
            noisy_notes(row, plain.iops),
        ])
    return Tabular(
        headers=["Pattern", f"A: {a} IOPS", "A IOPS CI low", "A IOPS CI high",
                 f"B: {b} IOPS", "B IOPS CI low", "B IOPS CI high",
                 "change %", "change CI low %", "change CI high %", "p", "runs A", "runs B", "weight", "verdict",
                 "weak", "safety", "note"],
        rows=rows,
        title=f"compare A={a} B={b}",
        right_aligned=frozenset(range(1, 14)),
    )


def noisy_notes(row: RowComparison, number: Callable[[float], str]) -> str:
    """What a spreadsheet row says in place of the bounds it leaves empty: each side too noisy to tell with
    its runs' range (written by `number`), and the change."""
    notes = [noisy_note(side, runs_range(cell), number)
             for side, found, cell in (("A", row.base_estimate, row.base), ("B", row.other_estimate, row.other))
             if found is not None and found.n >= 2 and found.too_noisy]
    if row.test is not None and row.test.testable and row.test.too_noisy:
        notes.append(f"change: {TOO_NOISY}")
    return "; ".join(notes)


def _estimate_cells(estimate: Estimate | None, fallback: float) -> list[str]:
    """IOPS, CI low, CI high: the geometric mean of the runs and its interval (empty when too wide to
    read), or the one result."""
    if estimate is None:
        return [plain.iops(fallback), "", ""]
    bounds = readable(estimate.low, estimate.high)
    return [plain.iops(estimate.centre), plain.iops(estimate.low if bounds else None),
            plain.iops(estimate.high if bounds else None)]


def _estimate(estimate: Estimate | None, cell: Cell) -> str:
    if estimate is None:
        return format_iops(cell.result.iops)
    return describe(estimate.centre, estimate.low, estimate.high, runs=runs_range(cell), n=estimate.n)


def comparison_report(result: RunComparison, data: dict[str, Any] | None = None) -> Report:
    """What `compare` and `ab` print: the comparison, then what each layer did in both runs (shown, never
    tested: report/layer_table.py); in `--json` the comparison's document, `data`'s keys and `layers`."""
    from stackbench.report.document import Report
    from stackbench.report.layer_table import comparison_layer_table, comparison_layers_json

    layers = comparison_layer_table(result)
    return Report(tables=(comparison_table(result), *([layers] if layers is not None else [])),
                  data=result.to_json() | (data or {}) | {"layers": comparison_layers_json(result)},
                  csv_tables=(comparison_csv_table(result),))
