"""Completion-latency percentiles p50, p99 and p99.9 per cell, on a log axis (a tail 100x the median is
common, and a linear axis would flatten the median to nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.model.results import Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest

PERCENTILES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p999_ns"))


def percentiles_figure(run: Run) -> Figure:
    cells = [c for c in run.cells if c.result.clat is not None and c.result.clat.p50_ns is not None]
    if not cells:
        raise StackbenchError(f"the cells of run {run.id[:12]} have no completion-latency percentiles",
                             "Chart a run measured with percentiles on (fio's default), or choose --kind matrix")
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(2.6 + 0.32 * len(cells))
        ys = list(range(len(cells)))
        for index, (name, field) in enumerate(PERCENTILES):
            points = [(getattr(c.result.clat, field), y) for c, y in zip(cells, ys)
                      if getattr(c.result.clat, field) is not None]
            if not points:
                continue
            ax.scatter([p[0] / 1000 for p in points], [p[1] for p in points], s=42, color=style.color(index),
                       marker=style.marker(index), label=name, zorder=3, gid=gid("series"))
        spans = [[getattr(c.result.clat, f) / 1000 for _, f in PERCENTILES if getattr(c.result.clat, f)] for c in cells]
        ax.hlines(ys, [min(v) for v in spans], [max(v) for v in spans], color=style.GREY, linewidth=1, zorder=2)
        ax.set_yticks(ys, [c.pattern for c in cells])
        ax.set_ylim(len(cells) - 0.5, -0.5)  # first cell on top, no empty margin
        ax.set_xscale("log")
        style.set_log_ticks(ax, "x")
        ax.set_xlabel(style.log_axis_note("completion latency (µs)"))
        ax.grid(axis="y", visible=False)
        drawing.legend(loc="outside upper right", ncol=3, frameon=False)
        drawing.suptitle("Completion latency percentiles per cell", x=0.01, ha="left")
        style.footer(drawing, [run])
    return Figure(
        kind="percentiles",
        title=f"Completion latency p50/p99/p99.9 per cell, run {style.run_name(run)}",
        alt=f"Dot plot of the p50, p99 and p99.9 completion latency in microseconds of each of the "
            f"{len(cells)} cells on a log axis, run {style.run_name(run)}.",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind percentiles` (report/charts/kinds.py)."""
    return percentiles_figure(request.runs[0])
