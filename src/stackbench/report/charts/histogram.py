"""The completion-latency histogram of one cell from fio's json+ buckets.

fio's json+ output holds every I/O's completion latency in about 1,900 log-linear buckets (bucket value in
ns -> count); buckets of all the cell's fio runs add exactly (engine/merge.py). The chart regroups them into
log-spaced bars (20 per decade) so the shape reads at 800 px, with the share of I/Os on a log axis so the
tail stays visible, and marks p50, p99 and p99.9 computed from the same buckets by fio's rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
from collections import Counter

from stackbench.engine.merge import percentile_from_bins
from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.model.results import Cell, Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest

BARS_PER_DECADE = 20


def histogram_figure(run: Run, cell: Cell, bins: Counter[int]) -> Figure:
    """`bins` are the json+ clat buckets of the cell (all its fio runs added), as engine.merge.bins_of
    returns them for each stored fio output."""
    total = sum(bins.values())
    if total == 0:
        raise StackbenchError(f"the latency histogram of {cell.pattern} is empty",
                              "Choose a cell that did I/O with --cell")
    grouped: Counter[int] = Counter()
    for ns, count in bins.items():
        grouped[math.floor(math.log10(max(ns, 1)) * BARS_PER_DECADE)] += count
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.2)
        keys = sorted(grouped)
        lefts = [10 ** (k / BARS_PER_DECADE) / 1000 for k in keys]
        widths = [10 ** ((k + 1) / BARS_PER_DECADE) / 1000 - left for k, left in zip(keys, lefts)]
        style.bars(ax, lefts, [grouped[k] / total * 100 for k in keys], widths, align="edge", color=style.color(0),
               edgecolor="white", linewidth=0.3, label="share of I/Os", gid=gid("series"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        style.set_log_ticks(ax, "x")
        style.set_log_ticks(ax, "y")
        for index, (name, percent) in enumerate((("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9))):
            at = percentile_from_bins(bins, percent)
            if at is None:
                continue
            ax.axvline(at / 1000, color=style.color(index + 1), linestyle=style.linestyle(index + 1), linewidth=1.6,
                       label=f"{name} = {style.plain_number(at / 1000)} µs", gid=gid("percentile"))
        ax.set_xlabel(style.log_axis_note("completion latency (µs)"))
        ax.set_ylabel(style.log_axis_note("share of I/Os (%)"))
        ax.legend(loc="upper right", frameon=True, framealpha=0.9)
        drawing.suptitle(f"Latency histogram: {cell.pattern}", x=0.01, ha="left")
        style.footer(drawing, [run], extra=f"{total:,} I/Os from fio json+ buckets")
    return Figure(
        kind="histogram",
        title=f"Completion latency histogram of {cell.pattern}, run {style.run_name(run)}",
        alt=f"Histogram of the completion latency of {total:,} I/Os of {cell.pattern} on log axes, with p50, "
            f"p99 and p99.9 marked, run {style.run_name(run)}.",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind histogram` (report/charts/kinds.py)."""
    assert request.cell is not None
    return histogram_figure(request.runs[0], request.cell, request.bins or Counter())
