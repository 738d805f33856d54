"""Matrix bars: IOPS or MB/s per block size and queue depth, one panel per pattern (docs/method.md's matrix).

Bars are grouped by block size, one bar per queue depth (colour and hatch). A bar is the cell's value as
the tables give it (the geometric mean of its separate fio runs); each run is a dot on it, and the 95 %
interval across runs a whisker, left out where it is too wide to read (the tables' "too noisy to tell":
the dots show the runs' range instead).

The axis is scaled to the bars and the runs, never to an interval end: three runs of 4,000, 9,000 and
600,000 IOPS give an interval reaching 22,000,000, which flattened every bar of the panel. A whisker that
leaves the axis stops at its edge with an arrowhead. A panel whose highest run is more than LOG_WHEN times
its highest bar (one wild run) gets a log axis, on which the other bars and runs stay readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS, depth_key, depth_name, panel_name, runs, size_key, spread, value
from stackbench.report.uncertainty import TOO_NOISY
from stackbench.model.results import Cell, Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest
    from matplotlib.axes import Axes

LOG_WHEN = 3.0  # a run this many times the panel's highest bar would flatten the bars of a linear axis
HEADROOM = 1.12  # linear axis: room above the highest bar or run
RUN_DOT = "#222222"
WHISKER = "#333333"


def matrix_figure(run: Run, metric: str = "iops") -> Figure:
    cells = [c for c in run.cells if (value(c, metric) or 0) > 0]
    if not cells:
        raise StackbenchError(f"run {run.id[:12]} has no cell with a value to draw",
                              "Chart a run with finished cells (`stackbench show RUN`)")
    panels: dict[str, list[Cell]] = {}
    for cell in cells:
        panels.setdefault(panel_name(cell), []).append(cell)
    depths = sorted({depth_key(c) for c in cells})
    depth_labels = {d: depth_name(next(c for c in cells if depth_key(c) == d)) for d in depths}
    gid = style.Gids()
    unit = METRICS[metric].axis
    shown = _Shown()
    with style.styled():
        rows = (len(panels) + 1) // 2
        drawing, axes = style.new_drawing(2.4 + 2.9 * rows, len(panels))
        for ax, (name, members) in zip(axes, panels.items()):
            _panel(ax, name, members, depths, depth_labels, metric, unit, gid, shown)
        handles, labels = [], []
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                if label not in labels:
                    handles.append(handle)
                    labels.append(label)
        order = sorted(range(len(labels)), key=lambda i: depths.index(
            next(d for d in depths if depth_labels[d] == labels[i])))
        extra = shown.legend()
        drawing.legend([handles[i] for i in order] + [h for h, _ in extra],
                       [labels[i] for i in order] + [text for _, text in extra], loc="outside upper right",
                       ncol=min(len(labels), 6), frameon=False,
                       title="queue depth (bar: the cell's value, the geometric mean of its runs)")
        drawing.suptitle(f"{'IOPS' if metric == 'iops' else 'Throughput'} per block size and queue depth",
                         x=0.01, ha="left")
        style.footer(drawing, [run])
    what = "IOPS" if metric == "iops" else "MB/s"
    return Figure(
        kind="matrix",
        title=f"{what} per block size and queue depth, run {style.run_name(run)}",
        alt=f"Grouped bars of {what} for each block size and queue depth, one panel per pattern "
            f"({', '.join(panels)}), each bar the geometric mean of the cell's runs, its runs as dots, "
            f"run {style.run_name(run)}.",
        drawing=drawing,
    )


class _Shown:
    """What the panels drew, for the legend's entries beyond the queue depths."""

    def __init__(self) -> None:
        self.runs = self.whiskers = self.cut = self.noisy = False

    def legend(self) -> list[tuple[object, str]]:
        from matplotlib.lines import Line2D

        entries: list[tuple[object, str]] = []
        if self.runs:
            entries.append((Line2D([], [], linestyle="none", marker="o", markersize=4, color=RUN_DOT,
                                   markeredgecolor="white"), "one fio run"))
        if self.whiskers:
            entries.append((Line2D([], [], color=WHISKER, linewidth=1.1), "95 % interval across runs"))
        if self.cut:
            entries.append((Line2D([], [], linestyle="none", marker="^", markersize=6, color=WHISKER),
                            "interval goes on beyond the axis"))
        if self.noisy:
            entries.append((Line2D([], [], linestyle="none"), f"no whisker: {TOO_NOISY}"))
        return entries


def _panel(ax: "Axes", name: str, members: list[Cell], depths: list, depth_labels: dict, metric: str,
           unit: str, gid: style.Gids, shown: _Shown) -> None:
    sizes = sorted({size_key(c) for c in members})
    width = 0.8 / len(depths)
    placed: list[tuple[float, Cell, int]] = []  # (x, cell, depth index)
    for d_index, depth in enumerate(depths):
        for s_index, bs in enumerate(sizes):
            cell = next((c for c in members if size_key(c) == bs and depth_key(c) == depth), None)
            if cell is not None:
                placed.append((s_index - 0.4 + width * (d_index + 0.5), cell, d_index))
    bars = [value(cell, metric) or 0.0 for _, cell, _ in placed]
    dots = [v for _, cell, _ in placed for v in runs(cell, metric)]
    log = max(dots, default=0.0) > LOG_WHEN * max(bars)
    if log:
        bottom = style.nice_below(min(bars + dots) / 2)
        top = max(bars + dots) * 1.6
        ax.set_yscale("log")
    else:
        bottom, top = 0.0, max(bars + dots) * HEADROOM
    ax.set_ylim(bottom, top)
    for d_index, depth in enumerate(depths):
        mine = [(x, cell) for x, cell, d in placed if d == d_index]
        if not mine:
            continue
        heights = [(value(cell, metric) or 0.0) - bottom for _, cell in mine]
        style.bars(ax, [x for x, _ in mine], heights, width * 0.92, bottom=bottom, color=style.color(d_index),
                   hatch=style.hatch(d_index), edgecolor="white", linewidth=0.5, label=depth_labels[depth],
                   gid=gid("series"))
    for x, cell, _ in placed:
        _whisker(ax, x, cell, metric, bottom, top, gid, shown)
        _runs(ax, x, width, runs(cell, metric), gid, shown)
    ax.set_xticks(range(len(sizes)), [style.size_label(b) if b else "?" for b in sizes])
    ax.set_xlabel("block size (bytes, K = 1024)")
    ax.set_ylabel(style.log_axis_note(unit) if log else unit)
    ax.set_title(name)
    if log:
        style.set_log_ticks(ax, "y")
    else:
        style.thousands(ax)
    ax.grid(axis="x", visible=False)


def _whisker(ax: "Axes", x: float, cell: Cell, metric: str, bottom: float, top: float, gid: style.Gids,
             shown: _Shown) -> None:
    """The 95 % interval, cut at the axis with an arrowhead where it leaves it; none where too noisy."""
    found = spread(cell, metric)
    if found is None or found.low is None or found.high is None:
        return
    if found.too_noisy:
        shown.noisy = True
        return
    low, high = max(found.low, bottom), min(found.high, top)
    shown.whiskers = True
    ax.plot([x, x], [low, high], color=WHISKER, linewidth=1.1, gid=gid("interval"), zorder=3)
    for end, cut, mark in ((found.low, found.low < bottom, "v"), (found.high, found.high > top, "^")):
        if cut:
            ax.plot([x], [low if mark == "v" else high], linestyle="none", marker=mark, markersize=6,
                    color=WHISKER, clip_on=False, gid=gid("interval-cut"), zorder=4)
            shown.cut = True
        else:
            ax.plot([x - 0.035, x + 0.035], [end, end], color=WHISKER, linewidth=1.1, zorder=3)


def _runs(ax: "Axes", x: float, width: float, values: list[float], gid: style.Gids, shown: _Shown) -> None:
    """Each separate fio run as a dot, spread across the bar so that equal runs do not hide each other."""
    if not values:
        return
    spread_x = width * 0.55
    xs = [x] if len(values) == 1 else [x - spread_x / 2 + spread_x * i / (len(values) - 1) for i in range(len(values))]
    ax.plot(xs, values, linestyle="none", marker="o", markersize=4, color=RUN_DOT, markeredgecolor="white",
            markeredgewidth=0.6, gid=gid("runs"), zorder=5)
    shown.runs = True


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind matrix` (report/charts/kinds.py)."""
    return matrix_figure(request.runs[0], request.metric)
