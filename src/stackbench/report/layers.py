"""`layers` as a table: each layer's value per cell and, between neighbours, the factor lost going up;
the note names the biggest gap, the layer to work on first (docs/method.md section 3).

The terminal and Markdown show `layers_table` ("3,008", "24.8x", "0.83x (gain)"); CSV gets
`layers_csv_table`, the same rows with plain numbers, the factors in "ratio" columns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops

if TYPE_CHECKING:
    from stackbench.analysis.layers import LayerGaps


def layers_table(gaps: LayerGaps) -> Tabular:
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"

    def value(v: float | None) -> str:
        return "-" if v is None else (format_iops(v) if gaps.metric == "iops" else f"{v:,.1f}")

    headers, rows = _grid(gaps, value, _factor, "{lower}→{upper}")
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


def layers_csv_table(gaps: LayerGaps) -> Tabular:
    """Each layer's value (IOPS to 0.1, MB/s to 0.001) and, between neighbours, the ratio lower ÷ upper
    (above 1: lost going up; below 1: a gain) to 0.001; the last row the ratios' geometric means. An empty
    cell: the layer has no such cell."""
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    decimals = 1 if gaps.metric == "iops" else 3
    headers, rows = _grid(gaps, lambda v: plain.number(v, decimals), lambda f: plain.number(f, 3),
                          "{lower}/{upper} ratio")
    return Tabular(headers=headers, rows=rows, title=f"layers ({unit})", right_aligned=frozenset(range(1, len(headers))))


def _grid(gaps: LayerGaps, value: Callable[[float | None], str], factor: Callable[[float | None], str],
          pair: str) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of both tables: per cell each layer's `value` with the `factor` to the next layer
    between them (its header `pair` formatted with the lower and upper names), then the geomean row."""
    unit = "IOPS" if gaps.metric == "iops" else "MB/s"
    headers = ["Pattern"]
    for i, name in enumerate(gaps.names):
        headers.append(f"{name} {unit}")
        if i + 1 < len(gaps.names):
            headers.append(pair.format(lower=name, upper=gaps.names[i + 1]))
    rows = []
    for row in gaps.rows:
        cells = [row.pattern]
        for i, v in enumerate(row.values):
            cells.append(value(v))
            if i < len(row.factors):
                cells.append(factor(row.factors[i]))
        rows.append(cells)
    geo = ["geomean"]
    for f in gaps.pair_geomeans():
        geo += ["", factor(f)]
    rows.append([*geo, ""])
    return headers, rows


def _factor(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}x" if value >= 0.995 else f"{value:.2f}x (gain)"
