"""Layers: each layer's value per cell on a log axis (a VM can be 85x slower than its host: a linear axis
hides the top layers), the factor lost between neighbouring layers written over each pair (greyed and marked
`~` where the runs do not prove it), and the biggest proven gap (analysis.layers.LayerGaps.biggest_gap)
outlined and named; the factors' intervals are in `LayerRow.gaps` for a chart that draws them."""

from __future__ import annotations

from typing import Sequence

from stackbench.analysis.layers import METRICS, LayerGaps
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.results import Run

HIGHLIGHT = "#D55E00"
STAGGER = 1.6  # the factor labels of successive pairs sit this factor higher on the log axis


def layers_figure(gaps: LayerGaps, runs: Sequence[Run] = ()) -> Figure:
    """`runs`: the runs behind the layers, for the footer's fio versions and labels."""
    gap = gaps.biggest_gap()
    layers = len(gaps.names)
    unit = METRICS[gaps.metric]
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.6)
        width = 0.8 / layers
        top = max((v for row in gaps.rows for v in row.values if v), default=1.0)
        for index, name in enumerate(gaps.names):
            xs = [c - 0.4 + width * (index + 0.5) for c, row in enumerate(gaps.rows) if row.values[index]]
            ys = [row.values[index] for row in gaps.rows if row.values[index]]
            style.bars(ax, xs, ys, width * 0.92, color=style.color(index), hatch=style.hatch(index), edgecolor="white",
                   linewidth=0.5, label=name, gid=gid("series"))
        for c, row in enumerate(gaps.rows):
            highest = max(v for v in row.values if v)
            for i, factor in enumerate(row.factors):
                if factor is None:
                    continue
                x = c - 0.4 + width * (i + 1)
                biggest = gap is not None and row.pattern == gap[0] and gaps.names[i] == gap[1] and factor == gap[3]
                proven = bool(row.gaps) and row.gaps[i] is not None and row.gaps[i].proven  # type: ignore[union-attr]
                text = (f"×{factor:.3g}" if factor >= 1 else f"×{factor:.2g}") + ("" if proven else " ~")
                # one row of labels per pair of layers above the cell's highest bar: never on top of each other
                ax.text(x, highest * 1.15 * STAGGER**i, text, ha="center", va="bottom",
                        fontsize=10 if biggest else 9, fontweight="bold" if biggest else "normal",
                        color=HIGHLIGHT if biggest else "#333333" if proven else "#888888", gid=gid("factor"))
                if biggest:
                    for j in (i, i + 1):
                        style.bars(ax, [c - 0.4 + width * (j + 0.5)], [row.values[j]], width * 0.92, fill=False,
                               edgecolor=HIGHLIGHT, linewidth=2.5, gid=gid("biggest-gap"))
        ax.set_yscale("log")
        style.set_log_ticks(ax, "y")
        ax.set_ylim(top=top * 1.15 * STAGGER ** (layers - 1) * 1.6)
        ax.set_xticks(range(len(gaps.rows)), [row.pattern for row in gaps.rows],
                      rotation=20 if len(gaps.rows) > 4 else 0, ha="right" if len(gaps.rows) > 4 else "center")
        ax.set_ylabel(style.log_axis_note(unit + (" (10^6 bytes/s)" if unit == "MB/s" else " (I/O per second)")))
        ax.grid(axis="x", visible=False)
        style.legend_below(ax, title="layer, bottom first; ×N: the layer above gets N times less; ~: not proven",
                           ncol=min(layers, 5))
        legend = ax.get_legend()
        if legend is not None and len(gaps.rows) > 4:
            legend.set_bbox_to_anchor((0.5, -0.3))
        drawing.suptitle("Layers: where performance is lost", x=0.01, ha="left")
        if gap is not None:
            ax.set_title(f"biggest gap ×{gap[3]:.3g} from {gap[1]} to {gap[2]} ({gap[0]}), outlined",
                         loc="left", fontsize=10.5, color=HIGHLIGHT, wrap=True)
        else:  # a gap is named only when the runs prove it (analysis/layers.py)
            ax.set_title("no gap proven by the runs (~: within the noise)", loc="left", fontsize=10.5, wrap=True)
        style.footer(drawing, list(runs), extra="" if runs else "layers " + ", ".join(gaps.names))
    return Figure(
        kind="layers",
        title=f"{unit} per layer: {', '.join(gaps.names)}",
        alt=f"Bars of {unit} per cell for the layers {', '.join(gaps.names)} on a log axis with the factor lost "
            "between neighbours" + (f"; the biggest gap, ×{gap[3]:.3g} from {gap[1]} to {gap[2]} on {gap[0]}, "
                                    "is outlined." if gap else "; no gap is proven by the runs."),
        drawing=drawing,
    )
