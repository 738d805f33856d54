"""`stackbench layers RUN1 RUN2 ...`: where in the stack performance is lost."""

from __future__ import annotations

from typing import Optional

import typer

from stackbench.cli.app import app
from stackbench.cli.common import DbOption, FormatOption, emit, open_store_from, split_list
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops


@app.command("layers")
def layers_command(
    runs: list[str] = typer.Argument(..., help="Runs from the bottom layer up (ids, prefixes or labels).", show_default=False),
    names: Optional[str] = typer.Option(None, "--names", help="Layer names, comma-separated: host,vm,vm+luks."),
    metric: str = typer.Option("iops", "--metric", help="iops or bw (MB/s)."),
    db: Optional[str] = DbOption,
    output_format: str = FormatOption,
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
) -> None:
    """Show each layer's result per cell, the factor lost between neighbouring layers, and where the
    biggest gap opens.

    Measure the same cells at every layer (host pool, zvol, inside the VM, with LUKS ...), then compare them.

    Example:

        stackbench layers host-zfs vm-virtio vm-luks --names host,vm,vm+luks
    """
    from stackbench.analysis.layers import layer_gaps

    store = open_store_from(db)
    gaps = layer_gaps([store.get_run(r) for r in runs], split_list([names]) if names else None, metric)
    emit("json" if json_output else output_format, layers_table(gaps), gaps.to_json())


def layers_table(gaps) -> Tabular:  # noqa: ANN001 - LayerGaps
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
