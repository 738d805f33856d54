"""`layers` as a table: each layer's value per cell and, between neighbours, the factor lost going up with
its 95 % interval; the note names the biggest *proven* gap, the layer to work on first (docs/method.md
section 3), or says that no gap is proven and what would prove one.

The terminal and Markdown show `layers_table` ("3,008", "24.8x [22.1, 27.9]", "~ 1.10x [0.90, 1.30]",
"too noisy to tell (runs 9,120 to 1,000,000)"; written by report/uncertainty.py); CSV gets `layers_csv_table`, the same rows
with plain numbers, the factors in "ratio" columns with their bounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from stackbench.analysis.stats import format_p
from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.report.uncertainty import FACTOR, TOO_NOISY, describe, noisy_note, readable
from stackbench.base.units import format_iops, plural

if TYPE_CHECKING:
    from stackbench.analysis.layers import LayerGap, LayerGaps, LayerRow
    from stackbench.model.results import Run
    from stackbench.report.document import Report


def layers_table(gaps: LayerGaps) -> Tabular:
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    number = format_iops if gaps.metric == "iops" else _mb_per_s

    def value(row: LayerRow, i: int) -> list[str]:
        v = row.values[i]
        estimate = row.estimates[i] if row.estimates else None
        if v is None:
            return ["-"]
        if estimate is None or estimate.n < 2 or not estimate.too_noisy:
            return [number(v)]  # the factors carry the intervals; a value only says when its runs are too noisy
        return [describe(v, estimate.low, estimate.high, number=number, runs=row.runs_ranges[i], n=estimate.n)]

    def factor(gap: LayerGap | None, f: float | None, interval: tuple[float, float] | None) -> list[str]:
        if f is None:
            return ["-"]
        if gap is None:  # the geomean row
            return [describe(f, *interval, style=FACTOR) if interval else _factor(f)]
        if gap.test is None or not gap.test.testable:
            return [f"{_factor(f)} (untested)"]
        text = describe(f, gap.low, gap.high, style=FACTOR)
        return [text if gap.proven or gap.too_noisy else f"~ {text}"]

    headers, rows = _grid(gaps, value, factor, lambda lower, upper: [f"{lower}→{upper}"])
    return Tabular(
        headers=headers,
        rows=rows,
        title=f"layers ({unit}, geometric mean of separate fio runs where available)",
        notes=layers_notes(gaps),
        right_aligned=frozenset(range(1, len(headers))),
    )


def layers_notes(gaps: LayerGaps) -> list[str]:
    """The claim and how to read the table: the biggest proven gap with its interval, or "no gap proven"
    with what would decide it; then the legend. Every document that shows layers prints these lines."""
    tested = gaps.tested
    family = f"Holm over {plural(tested, 'factor')}"
    gap, detail = gaps.biggest_gap(), gaps.biggest_gap_detail()
    if gap is not None and detail is not None:
        pattern, lower, upper, _ = gap
        claim = (f"The biggest gap opens between {lower} and {upper}: "
                 f"{describe(detail.factor, detail.low, detail.high, style=FACTOR)} on {pattern} "
                 f"({format_p(detail.p_holm)}, {family}).")
    elif tested == 0:
        claim = ("No gap proven: no layer has separate fio runs to test (imported results?); measure each "
                 "layer with `stackbench run --runs 5`.")
    else:
        claim = f"No gap proven: no factor lost going up is significant at alpha {gaps.alpha:g} ({family})."
        seen = gaps.largest_unproven()
        if seen is not None:
            pattern, lower, upper, unproven = seen
            shown = describe(unproven.factor, unproven.low, unproven.high, style=FACTOR)
            claim += (f" The largest seen, {lower}→{upper} on {pattern}, is "
                      + (f"{TOO_NOISY}" if unproven.too_noisy else f"{shown}, within the noise") + ".")
        advice = gaps.undecided()
        if advice:
            claim += f" To tell a gap that size from none: {advice}."
    legend = ("→ columns: factor lost going up (lower ÷ upper) [95% CI of the runs]; 85x means the upper layer does "
              f"1/85 of the lower; ~ = not proven ({family}); {TOO_NOISY} = an interval wider than a factor of 4.")
    return [claim, legend]


def layers_csv_table(gaps: LayerGaps) -> Tabular:
    """Each layer's value (IOPS to 0.1, MB/s to 0.001) and, between neighbours, the ratio lower ÷ upper
    (above 1: lost going up; below 1: a gain) to 0.001 with its 95 % interval (empty when untested or too
    wide to read) and whether it is proven; the last row the ratios' geometric means. An empty value: the
    layer has no such cell. The `note` column says which intervals are too noisy to tell."""
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    decimals = 1 if gaps.metric == "iops" else 3

    def value(row: LayerRow, i: int) -> list[str]:
        return [plain.number(row.values[i], decimals)]

    def factor(gap: LayerGap | None, f: float | None, interval: tuple[float, float] | None) -> list[str]:
        low, high = (gap.low, gap.high) if gap is not None else (interval or (None, None))
        shown = readable(low, high)
        proven = "" if gap is None or f is None else ("yes" if gap.proven else "no")
        return [plain.number(f, 3), plain.number(low if shown else None, 3), plain.number(high if shown else None, 3),
                proven]

    def pair(lower: str, upper: str) -> list[str]:
        return [f"{lower}/{upper} ratio", f"{lower}/{upper} CI low", f"{lower}/{upper} CI high",
                f"{lower}/{upper} proven"]

    headers, rows = _grid(gaps, value, factor, pair)
    headers.append("note")
    for row, cells in zip(gaps.rows, rows):
        cells.append(noisy_notes(gaps, row, lambda v: plain.number(v, decimals)))
    rows[-1].append("")
    return Tabular(headers=headers, rows=rows, title=f"layers ({unit})",
                   right_aligned=frozenset(range(1, len(headers) - 1)))


def noisy_notes(gaps: LayerGaps, row: LayerRow, number: Callable[[float], str]) -> str:
    """What a spreadsheet row says in place of the bounds it leaves empty: each layer too noisy to tell
    with its runs' range (written by `number`), and each factor."""
    notes = []
    for i, name in enumerate(gaps.names):
        estimate = row.estimates[i] if row.estimates else None
        if estimate is not None and estimate.n >= 2 and estimate.too_noisy:
            notes.append(noisy_note(name, row.runs_ranges[i], number))
    for i, gap in enumerate(row.gaps):
        if gap is not None and gap.test is not None and gap.test.testable and gap.too_noisy:
            notes.append(f"{gaps.names[i]}/{gaps.names[i + 1]}: {TOO_NOISY}")
    return "; ".join(notes)


def _grid(gaps: LayerGaps, value: Callable[[LayerRow, int], list[str]],
          factor: Callable[[LayerGap | None, float | None, tuple[float, float] | None], list[str]],
          pair: Callable[[str, str], list[str]]) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of both tables: per cell each layer's `value` with the `factor` to the next layer
    between them (its headers from `pair`, given the lower and upper names), then the geomean row."""
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    headers = ["Pattern"]
    for i, name in enumerate(gaps.names):
        headers.append(f"{name} {unit}")
        if i + 1 < len(gaps.names):
            headers += pair(name, gaps.names[i + 1])
    rows = []
    for row in gaps.rows:
        cells = [row.pattern]
        for i in range(len(row.values)):
            cells += value(row, i)
            if i < len(row.factors):  # a gap exists wherever a factor does (analysis.layers.layer_gaps)
                cells += factor(row.gaps[i], row.factors[i], None)
        rows.append(cells)
    geo = ["geomean"]
    for f, interval in zip(gaps.pair_geomeans(), gaps.pair_geomean_intervals()):
        geo += ["", *factor(None, f, interval)]
    rows.append([*geo, ""])
    return headers, rows


def _factor(value: float) -> str:
    return f"{value:.1f}x" if value >= 0.995 else f"{value:.2f}x (gain)"


def _mb_per_s(value: float) -> str:
    return f"{value:,.1f}"


def proposal_table(layer_plan: Any) -> Tabular:
    """`layers --auto`'s proposal (a measure/layer_plan.LayerPlan, read by its fields: report/ sits below
    measure/): one row per layer, top down: how it would be measured, where, which cells, and why that is safe."""
    rows = []
    for step in layer_plan.steps:
        cells = ", ".join(dict.fromkeys(w.name for w in step.cells)) or "-"
        rows.append([step.name, step.how, step.where or "-", cells, step.why])
    measured = len(layer_plan.measured())
    notes = [f"{measured} of {len(layer_plan.steps)} layers can be measured safely; chain: {layer_plan.stack.chain()}",
             "Add --run to make these runs (one stored run per layer, bottom first) and show the layers table."]
    return Tabular(headers=["layer", "how", "where", "cells", "why it is safe (or refused)"], rows=rows,
                   title=f"layers --auto {layer_plan.stack.target}: plan {layer_plan.plan.name}", notes=notes,
                   styles={i: "dim" for i, step in enumerate(layer_plan.steps) if step.refused}, fold=frozenset({2, 4}))


def layers_report(gaps: LayerGaps, runs: Sequence[Run], data: dict[str, Any] | None = None) -> Report:
    """What `layers` prints: the gaps (the verdicts), then what every device under each run's target did
    during each cell (report/layer_table.py: shown, never tested), and in `--json` both, with `data` first."""
    from stackbench.report.document import Report
    from stackbench.report.layer_table import layers_runs_json, layers_runs_table

    activity = layers_runs_table(runs, gaps.names)
    return Report(tables=(layers_table(gaps), *([activity] if activity is not None else [])),
                  data=(data or {}) | gaps.to_json() | {"layer_activity": layers_runs_json(runs, gaps.names)},
                  csv_tables=(layers_csv_table(gaps),))
