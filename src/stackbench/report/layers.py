"""`layers` as a table: each layer's value per cell and, between neighbours, the factor lost going up;
the note names the biggest gap, the layer to work on first (docs/method.md section 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.report.tabular import Tabular
from stackbench.units import format_iops

if TYPE_CHECKING:
    from stackbench.analysis.layers import LayerGaps


def layers_table(gaps: LayerGaps) -> Tabular:
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    headers = ["Pattern"]
    for i, name in enumerate(gaps.names):
        headers.append(f"{name} {unit}")
        if i + 1 < len(gaps.names):
            headers.append(f"{name}→{gaps.names[i + 1]}")
    rows = []
    for row in gaps.rows:
        cells = [row.pattern]
        for i, value in enumerate(row.values):
            cells.append("-" if value is None else (format_iops(value) if gaps.metric == "iops" else f"{value:,.1f}"))
            if i < len(row.factors):
                cells.append(_factor(row.factors[i]))
        rows.append(cells)
    geo = ["geomean"]
    for i, factor in enumerate(gaps.pair_geomeans()):
        geo += ["", _factor(factor)]
    geo.append("")
    rows.append(geo)
    notes = ["→ columns: factor lost going up (lower ÷ upper); 85x means the upper layer does 1/85 of the lower."]
    gap = gaps.biggest_gap()
    if gap:
        pattern, lower, upper, factor = gap
        notes.insert(0, f"The biggest gap opens between {lower} and {upper}: {factor:.1f}x on {pattern}.")
    return Tabular(
        headers=headers,
        rows=rows,
        title=f"layers ({unit}, geometric mean of separate fio runs where available)",
        notes=notes,
        right_aligned=frozenset(range(1, len(headers))),
    )


def _factor(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}x" if value >= 0.995 else f"{value:.2f}x (gain)"
