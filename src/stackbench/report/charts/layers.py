"""Layers: each layer's value per cell on a log axis (a VM can be 85x slower than its host: a linear axis
hides the top layers), the factor lost between neighbouring layers written over each pair (greyed and marked
`~` where the runs do not prove it), and the biggest proven gap (analysis.layers.LayerGaps.biggest_gap)
outlined and named.

Below, where the runs give the factors intervals (`LayerRow.gaps`: every layer with two runs or more), a
second panel draws each factor with its 95 % interval on a log axis of factors, under the pair it belongs
to: filled where the gap is proven, hollow where it is not, and with no whisker but "too noisy to tell"
where the interval is too wide to read (the tables' rule). The axis holds every factor and every interval
drawn. The value axis is numbered whatever its range (style.set_log_ticks), and its bars stand on a round
value below the lowest one, so that a bar's height is not decided by where matplotlib happened to cut.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from stackbench.analysis.layers import METRICS, LayerGap, LayerGaps, layer_gaps
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.uncertainty import TOO_NOISY
from stackbench.model.results import Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest
    from matplotlib.axes import Axes

HIGHLIGHT = "#D55E00"
PROVEN = "#333333"
STAGGER = 1.6  # the factor labels of successive pairs sit this factor higher on the log axis


def layers_figure(gaps: LayerGaps, runs: Sequence[Run] = ()) -> Figure:
    """`runs`: the runs behind the layers, for the footer's fio versions and labels."""
    gap = gaps.biggest_gap()
    layers = len(gaps.names)
    unit = METRICS[gaps.metric]
    gid = style.Gids()
    intervals = any(g is not None and g.test is not None and g.test.testable for row in gaps.rows for g in row.gaps)
    with style.styled():
        if intervals:
            drawing, _ = style.new_drawing(8.2, 0)
            ax, factor_ax = drawing.subplots(2, 1, sharex=True, height_ratios=(2.2, 1.0))
        else:
            drawing, (ax,) = style.new_drawing(5.6)
        width = 0.8 / layers
        values = [v for row in gaps.rows for v in row.values if v]
        top = max(values, default=1.0)
        bottom = style.nice_below(min(values, default=1.0) / 2)
        for index, name in enumerate(gaps.names):
            xs = [c - 0.4 + width * (index + 0.5) for c, row in enumerate(gaps.rows) if row.values[index]]
            ys = [row.values[index] - bottom for row in gaps.rows if row.values[index]]
            style.bars(ax, xs, ys, width * 0.92, bottom=bottom, color=style.color(index), hatch=style.hatch(index),
                       edgecolor="white", linewidth=0.5, label=name, gid=gid("series"))
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
                        color=HIGHLIGHT if biggest else PROVEN if proven else "#888888", gid=gid("factor"))
                if biggest:
                    for j in (i, i + 1):
                        style.bars(ax, [c - 0.4 + width * (j + 0.5)], [row.values[j] - bottom], width * 0.92,
                                   bottom=bottom, fill=False, edgecolor=HIGHLIGHT, linewidth=2.5,
                                   gid=gid("biggest-gap"))
        ax.set_yscale("log")
        ax.set_ylim(bottom, top * 1.15 * STAGGER ** (layers - 1) * 1.6)
        style.set_log_ticks(ax, "y")
        ax.set_ylabel(style.log_axis_note(unit + (" (10^6 bytes/s)" if unit == "MB/s" else " (I/O per second)")))
        ax.grid(axis="x", visible=False)
        lowest = factor_ax if intervals else ax
        lowest.set_xticks(range(len(gaps.rows)), [row.pattern for row in gaps.rows],
                          rotation=20 if len(gaps.rows) > 4 else 0, ha="right" if len(gaps.rows) > 4 else "center")
        if intervals:
            ax.tick_params(axis="x", labelbottom=False)
            _factor_panel(factor_ax, gaps, width, gap, gid)
        handles, labels = ax.get_legend_handles_labels()
        drawing.legend(handles, labels, loc="outside upper right", ncol=min(layers, 5), frameon=False,
                       title="layer, bottom first; ×N: the layer above gets N times less; ~: not proven")
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
            "between neighbours" + (" and, below, each factor with its 95 % interval" if intervals else "")
            + (f"; the biggest gap, ×{gap[3]:.3g} from {gap[1]} to {gap[2]} on {gap[0]}, "
               "is outlined." if gap else "; no gap is proven by the runs."),
        drawing=drawing,
    )


def readable_interval(found: LayerGap | None) -> tuple[float, float] | None:
    """A factor's interval where the tables print it; None where untested or too noisy to tell."""
    if found is None or found.test is None or not found.test.testable or found.too_noisy:
        return None
    return found.low, found.high  # type: ignore[return-value]


def _factor_panel(ax: "Axes", gaps: LayerGaps, width: float, gap: tuple[str, str, str, float] | None,
                  gid: style.Gids) -> None:
    """Each factor with its 95 % interval, under the pair of bars it is between."""
    from matplotlib.lines import Line2D

    held = [1.0]
    for c, row in enumerate(gaps.rows):
        for i, found in enumerate(row.gaps):
            if found is None:
                continue
            x = c - 0.4 + width * (i + 1)
            biggest = gap is not None and row.pattern == gap[0] and gaps.names[i] == gap[1] and found.factor == gap[3]
            colour = HIGHLIGHT if biggest else PROVEN if found.proven else style.GREY
            interval = readable_interval(found)
            if interval is not None:
                ax.plot([x, x], list(interval), color=colour, linewidth=1.8, gid=gid("factor-interval"))
                for end in interval:
                    ax.plot([x - 0.03, x + 0.03], [end, end], color=colour, linewidth=1.8)
                held.extend(interval)
            ax.plot([x], [found.factor], linestyle="none", marker="o", markersize=7, color=colour,
                    markerfacecolor=colour if found.proven else "white", markeredgewidth=1.5,
                    gid=gid("factor-point"), zorder=4)
            held.append(found.factor)
            if interval is None:
                why = TOO_NOISY if found.test is not None and found.test.testable else "untested"
                ax.annotate(why.replace(" to tell", "\nto tell"), (x, found.factor), xytext=(0, 7),
                            textcoords="offset points", ha="center", va="bottom", fontsize=8, color="#555555",
                            gid=gid("factor-note"))
    low, high = math.log(min(held)), math.log(max(held))
    pad = 0.25 * max(high - low, math.log(1.5))
    ax.set_yscale("log")
    ax.set_ylim(math.exp(low - pad), math.exp(high + pad * 1.6))  # room above a marker for its note
    ax.axhline(1.0, color="#333333", linewidth=0.9)
    style.set_log_ticks(ax, "y", fewest=2)  # 1 and 2 rather than 0.7, 0.8, 0.9, 1, 2
    ax.set_ylabel("factor lost (×), log scale")
    ax.grid(axis="x", visible=False)
    ax.legend([Line2D([], [], linestyle="none", marker="o", markersize=7, color=PROVEN),
               Line2D([], [], linestyle="none", marker="o", markersize=7, color=style.GREY, markerfacecolor="white",
                      markeredgewidth=1.5),
               Line2D([], [], color=PROVEN, linewidth=1.8)],
              ["proven gap", "not proven", "95 % interval"], loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=9, ncol=3,
              frameon=False)


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind layers` (report/charts/kinds.py)."""
    metric = "bw" if request.metric == "mb_s" else "iops"
    return layers_figure(layer_gaps(request.runs, request.names, metric), request.runs)
