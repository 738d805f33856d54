"""Stack: what every layer under the target did during each cell, from fio down to the disks: a panel per
cell, a bar per layer (IOPS or MB/s, on a log axis: a cache under a layer can make two layers 1,000x apart)
with, beside it, the layer's amplification against fio's bytes and its utilisation.

The figures are the layer table's (analysis/layer_activity.cell_layers over the run's saved stack, as
report/layer_table.py shows them): nothing is computed here. fio's own bar is the cell's result, the
number `show` prints for it. The busiest layer (as the table names it: where the saturated layers' time is
spent) is drawn in vermillion, hatched and outlined, and says so in words; another saturated layer is hatched. A layer of the
saved stack that has no counts in a cell gets a row that says so, and figures the runs did not record are
named in the panel's title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from stackbench.analysis.layer_activity import BUSIEST_MEANS, SATURATED_UTIL, CellLayers, LayerActivity, cell_layers
from stackbench.base.errors import StackbenchError
from stackbench.model.results import Cell, Run
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS
from stackbench.report.layer_table import places_of
from stackbench.stack.layer import CountedLayer

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.font_manager import FontProperties
    from matplotlib.figure import Figure as Drawing

    from stackbench.report.charts.kinds import ChartRequest

MAX_CELLS = 8  # panels drawn at most: more would not read at 800 px; --cell draws any other
FIO_COLOUR = style.PALETTE[5]
LAYER_COLOUR = style.PALETTE[0]
BUSIEST = style.PALETTE[3]  # vermillion
SATURATED = style.PALETTE[1]
ROW_IN = 0.34  # height of one bar's row
PANEL_IN = 1.25  # a panel's title and axis label
# The layout is fixed, in inches (no constrained layout: measuring every panel's ticks to place 8 panels cost
# a third of the chart's drawing): the chart's title; above each panel its title, a line more for each line it
# wraps to; below it its numbers and axis label; under the last the legend and the footer. A panel's bars get
# the rest of its PANEL_IN.
TOP_IN = 0.5
ABOVE_IN = 0.3
BELOW_IN = 0.55
TITLE_PT = 10.5
TITLE_LINE_IN = TITLE_PT * 1.25 / 72
BOTTOM_IN = 0.8
FOOTER_IN = 0.3
EDGE_IN = 0.1  # left of the layers' names and right of the longest figures
NOTE_AT = 1.02  # where a row's figures start, in the panel's widths
NO_BREAK_SPACE = "\u00a0"


@dataclass(frozen=True)
class Row:
    """One bar of a panel: fio's or a layer's, None where the layer has no counts in the cell."""

    label: str
    value: float | None
    note: str
    look: str  # fio, layer, saturated, busiest or missing


def no_layers_error(run: Run) -> StackbenchError:
    return StackbenchError(
        f"run {run.id[:12]} has no layer activity to draw: it was stored before layer telemetry (or imported "
        "from fio's output), so no cell recorded what the layers under its target did",
        "Run it again with `stackbench run`, which records every layer's counts during each cell",
    )


def layered_cells(run: Run) -> list[tuple[Cell, CellLayers]]:
    """Every cell with layer activity, with its layers; none for a run from before layer telemetry or an
    import."""
    places = places_of(run)
    return [(c, layers) for c in run.cells if (layers := cell_layers(c, places)) is not None]


def chosen_cells(run: Run, cell: Cell | None) -> list[tuple[Cell, CellLayers]]:
    """The cell asked for, or every cell with layer activity (the first `MAX_CELLS`), with its layers."""
    found = layered_cells(run)
    if not found:
        raise no_layers_error(run)
    if cell is None:
        return found
    picked = [(c, layers) for c, layers in found if c is cell]
    if not picked:
        raise StackbenchError(f"cell {cell.pattern} of run {run.id[:12]} recorded no layer activity",
                              "Choose a cell that did with --cell: " + "; ".join(c.pattern for c, _ in found))
    return picked


def rows_of(cell: Cell, layers: CellLayers, places: Sequence[CountedLayer] | None, metric: str) -> list[Row]:
    """fio's bar, then each layer top down as the table lists them, with the saved stack's layers that have
    no counts in this cell put where the stack has them."""
    unit = "IOPS" if metric == "iops" else "MB/s"
    fio = cell.result.iops if metric == "iops" else cell.result.bw_bytes / 1e6
    rows = [Row("fio", fio, f"{style.plain_number(fio)} {unit} submitted", "fio")]
    counted = {layer.device: layer for layer in layers.layers}
    order: list[tuple[str, LayerActivity | None, int]] = [
        (place.device, counted.get(place.device), place.depth) for place in places or ()]
    order += [(layer.device, layer, layer.depth) for layer in layers.layers if layer.device not in
              {device for device, _, _ in order}]
    direction = cell.result.direction
    for device, layer, depth in order:
        if layer is None:
            kind = next(place.kind for place in places or () if place.device == device)
            rows.append(Row(_label(device, kind, depth), None, "no counts recorded in this cell", "missing"))
            continue
        value = layer.iops if metric == "iops" else layer.mb_per_s
        amplification = layer.amplification.get(direction)
        note = [f"{style.plain_number(value)} {unit}",
                f"ampl. {amplification:.2f}x" if amplification is not None else "ampl. not recorded",
                f"util {layer.util_pct:.0f} %"]
        look = "busiest" if layer.device == layers.busiest else "saturated" if layer.saturated else "layer"
        text = " · ".join(note)
        if look == "busiest" and layer.throttle:
            # the table's reason names the limits, the cgroup and the layer above: too long for a line beside
            # the bar, which says on a line of its own where the time went (the table says the rest)
            text += ("\nBUSIEST (saturated, and a cgroup throttle on it)" if layer.saturated else
                     "\nBUSIEST: its cgroup throttle held the layer above")
        elif look == "busiest":
            text += f" · BUSIEST ({layers.busiest_reason})"
        elif look == "saturated":
            text += " · saturated"
        rows.append(Row(_label(layer.device, layer.kind, depth), value, text, look))
    return rows


def _label(device: str, kind: str, depth: int) -> str:
    """`└ vda (disk)`, indented by its depth: the tree's shape down the panel. No-break spaces: a browser
    showing the SVG collapses a text's leading spaces, which drew every layer at the tree's root."""
    named = device if kind == "device" else f"{device} ({kind})"
    return f"{NO_BREAK_SPACE * 3 * depth}└ {named}"


def _title(cell: Cell, layers: CellLayers) -> str:
    """The cell, its runs, the bottom layers' sum, the ARC and what was not recorded."""
    parts = [f"{cell.pattern}: {layers.runs} fio run{'s' if layers.runs != 1 else ''}"]
    bottom = layers.bottom_amplification.get(cell.result.direction)
    if layers.several_bottom and bottom is not None:
        parts.append(f"bottom layers, summed: {bottom:.2f}x fio's bytes")
    if layers.arc_hit_pct is not None:
        parts.append(f"ARC hit ratio {layers.arc_hit_pct:.1f} %")
    if layers.not_recorded:
        parts.append("not recorded: " + ", ".join(layers.not_recorded))
    return "; ".join(parts)


LOOKS = {  # colour, hatch, edge colour, edge width
    "fio": (FIO_COLOUR, "", "white", 0.5),
    "layer": (LAYER_COLOUR, "", "white", 0.5),
    "saturated": (SATURATED, "..", "#000000", 1.0),
    "busiest": (BUSIEST, "//", "#000000", 2.2),
}


def _panel(ax: "Axes", rows: list[Row], metric: str, gid: style.Gids) -> float:
    """Draw one cell's rows; how far left of the panel its layers' names start, in points."""
    values = [row.value for row in rows if row.value]
    foot = style.nice_below(min(values, default=1.0) / 2)
    top = max(values, default=1.0)
    positions = list(range(len(rows)))
    for position, row in zip(positions, rows):
        if row.value is None:  # no bar, and the words say why
            ax.text(foot, position, "  no counts recorded in this cell", va="center", ha="left", fontsize=9,
                    color="#555555", style="italic", gid=gid("missing"))
        elif row.value > 0:  # a layer that did nothing has no bar: its figures say 0
            colour, hatch, edge, width = LOOKS[row.look]
            bar = ax.barh(position, row.value - foot, 0.7, left=foot, color=colour, hatch=hatch, edgecolor=edge,
                          linewidth=width)
            bar.patches[0].set_gid(gid(row.look))
        if row.value is not None:  # the figures beside the axes, one column for every row
            ax.text(NOTE_AT, position, row.note, transform=ax.get_yaxis_transform(), va="center", ha="left",
                    fontsize=9.5, fontweight="bold" if row.look == "busiest" else "normal",
                    color=BUSIEST if row.look == "busiest" else "#222222", gid=gid("note"))
    ax.set_xscale("log")
    ax.set_xlim(foot, top * 1.3)
    style.set_log_ticks(ax, "x")
    ax.set_xlabel(style.log_axis_note(METRICS[metric].axis), fontsize=10.5)
    ax.set_yticks(positions, [row.label for row in rows])
    longest = max(len(row.label) for row in rows)
    for label in ax.get_yticklabels():  # left-aligned, so that the indentation draws the tree
        label.set_horizontalalignment("left")
    pad = longest * 6.3 + 4
    ax.tick_params(axis="y", pad=pad, length=0)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # fio on top, the disks at the bottom
    ax.grid(axis="y", visible=False)
    return pad


def stack_figure(run: Run, metric: str = "iops", cell: Cell | None = None) -> Figure:
    """The run's layers per cell; `cell` draws that one only. StackbenchError where nothing was recorded."""
    found = chosen_cells(run, cell)
    shown, total = found[:MAX_CELLS], len(found)
    places = places_of(run)
    panels = [(c, layers, rows_of(c, layers, places, metric)) for c, layers in shown]
    what = "IOPS" if metric == "iops" else "MB/s"
    gid = style.Gids()
    busiest = [f"{c.pattern}: {layers.busiest}" for c, layers, _ in panels if layers.busiest]
    with style.styled():
        heights = [len(rows) * ROW_IN + PANEL_IN for _, _, rows in panels]
        drawing, _ = style.new_drawing(TOP_IN + sum(heights) + BOTTOM_IN, 0, layout=None)
        axes = [drawing.add_axes((0, 0, 1, 1)) for _ in panels]
        pads = [_panel(ax, rows, metric, gid) for ax, (_, _, rows) in zip(axes, panels)]
        _place(drawing, axes, [(_title(c, layers), len(rows)) for c, layers, rows in panels], max(pads))
        _legend(drawing, panels)
        drawing.suptitle(f"{what} of each layer under the target; ampl. = the layer's bytes / fio's",
                         x=0.01, ha="left")
        extra = [f"{len(shown)} of {total} cells with layer counts (--cell draws another)"] \
            if total > len(shown) else []
        style.footer(drawing, [run], extra="; ".join([f"target {run.target}", *extra]))
    return Figure(
        kind="stack",
        title=f"{what} per layer under {run.target}, run {style.run_name(run)}",
        alt=f"Bars of {what} per layer, from fio down to the disks, for {len(shown)} cell(s) of run "
            f"{style.run_name(run)}, each with its amplification against fio's bytes and its utilisation; "
            + (f"busiest layer ({BUSIEST_MEANS}): {'; '.join(busiest)}." if busiest else "no layer saturated."),
        drawing=drawing,
    )


def _place(drawing: "Drawing", axes: list["Axes"], panels: list[tuple[str, int]], pad_pt: float) -> None:
    """Each panel (its title and number of rows) where the fixed layout puts it, under the one above: as wide
    as the layers' names on its left and the longest row of figures on its right leave it, its title
    wrapped to the chart's width; both measured as the PNG draws them (its hinted text is the widest), so
    that no name, figure or title is cut. The drawing grows by a line for each line a title wraps to."""
    from matplotlib.font_manager import FontProperties

    width = drawing.get_figwidth()
    renderer = drawing.canvas.get_renderer()
    notes = [text for ax in axes for text in ax.texts if text.get_transform() is not ax.transData]
    widest = max((text.get_window_extent(renderer).width for text in notes), default=0.0) / drawing.dpi
    left = pad_pt / 72 + EDGE_IN
    panel = (width - EDGE_IN - widest - left) / NOTE_AT
    font = FontProperties(size=TITLE_PT)
    titles = [_wrapped(title, font, (width - EDGE_IN - left) * drawing.dpi, renderer) for title, _ in panels]
    height = TOP_IN + sum(rows * ROW_IN + PANEL_IN + (len(lines) - 1) * TITLE_LINE_IN
                          for lines, (_, rows) in zip(titles, panels)) + BOTTOM_IN
    drawing.set_size_inches(width, height)
    top = height - TOP_IN
    for ax, lines, (_, rows) in zip(axes, titles, panels):
        ax.set_title("\n".join(lines), loc="left", fontsize=TITLE_PT)
        top -= ABOVE_IN + (len(lines) - 1) * TITLE_LINE_IN
        tall = rows * ROW_IN + PANEL_IN - ABOVE_IN - BELOW_IN
        ax.set_position((left / width, (top - tall) / height, panel / width, tall / height))
        top -= tall + BELOW_IN


def _wrapped(title: str, font: "FontProperties", room_px: float, renderer: "RendererBase") -> list[str]:
    """The title's words in lines no wider than `room_px`, measured once here (matplotlib's own wrapping
    measures them again on every draw)."""
    lines: list[str] = []
    for word in title.split(" "):
        line = f"{lines[-1]} {word}" if lines else word
        if lines and renderer.get_text_width_height_descent(line, font, ismath=False)[0] <= room_px:
            lines[-1] = line
        else:
            lines.append(word)
    return lines


def _legend(drawing: "Drawing", panels: list[tuple[Cell, CellLayers, list[Row]]]) -> None:
    """A key for the looks the chart uses: fio, a layer, and a saturated and the busiest layer where any."""
    from matplotlib.patches import Patch

    used = {row.look for _, _, rows in panels for row in rows}
    words = {"fio": "fio (the cell's result)", "layer": "a layer",
             "saturated": f"saturated (util >= {SATURATED_UTIL:.0f} % or queue growing)",
             "busiest": f"busiest layer: {BUSIEST_MEANS}"}
    handles = [Patch(facecolor=LOOKS[look][0], hatch=LOOKS[look][1], edgecolor=LOOKS[look][2],
                     linewidth=LOOKS[look][3], label=words[look]) for look in LOOKS if look in used]
    # keys of more than about 100 characters side by side run off an 800 px chart: then two rows, which the
    # space under the last panel (BOTTOM_IN less FOOTER_IN) holds
    wide = sum(len(handle.get_label()) for handle in handles) > 100
    drawing.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, FOOTER_IN / drawing.get_figheight()),
                   ncol=2 if wide else len(handles), frameon=False)


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind stack` (report/charts/kinds.py)."""
    return stack_figure(request.runs[0], request.metric, request.cell)
