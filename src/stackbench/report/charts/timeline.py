"""The per-second samples of one cell over time, its separate fio runs one after another.

Each fio run starts with its ramp (fio's ramp_time): I/O that is done but not measured, so fio logs no
sample for it; the chart shades that time, and draws any sample stored with the ramp flag hollow and grey.
The solid line is the cell's value as the tables give it (the geometric mean of its separate runs: every
run weighs the same, however many I/Os it did). The dashed line and band are something else, said so in the
legend: the median of the seconds drawn with its distribution-free 95 % interval (analysis.stats.summarize,
the within-run diagnostics `show` uses), where a fast run's many seconds can pull the median away from the
cell's value; a cell whose seconds wander far outside the band is not steady.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math

from stackbench.analysis.stats import summarize
from stackbench.model.fio_result import Sample
from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS, runs, value
from stackbench.model.results import Cell, Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest


def sample_value(sample: Sample, metric: str) -> float | None:
    """The sample in `metric`: IOPS, or MB/s (10^6 bytes/s; None where fio logged no bandwidth)."""
    if metric == "iops":
        return sample.iops
    return sample.bw_bytes / 1e6 if sample.bw_bytes is not None else None


def timeline_figure(run: Run, cell: Cell, metric: str = "iops") -> Figure:
    if not cell.samples:
        raise StackbenchError(f"cell {cell.pattern} of run {run.id[:12]} has no per-second samples",
                             "Chart a cell measured by `stackbench run` (imported runs have no samples)")
    segments: dict[int, list] = {}
    for sample in cell.samples:
        segments.setdefault(sample.segment, []).append(sample)
    ramp = float(cell.workload.ramp_time or 0.0)
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.0)
        offset = 0.0
        measured: list[float] = []
        for index, (segment, samples) in enumerate(sorted(segments.items())):
            if ramp > 0:
                ax.axvspan(offset, offset + ramp, facecolor=style.SHADE, edgecolor=style.GREY, hatch="//",
                           linewidth=0, label="ramp (discarded)" if index == 0 else None, gid=gid("ramp"))
            start = offset + ramp
            kept = [(start + s.t_s, sample_value(s, metric)) for s in samples if not s.ramp]
            kept = [(t, v) for t, v in kept if v is not None]
            flagged = [(start + s.t_s, sample_value(s, metric)) for s in samples if s.ramp]
            flagged = [(t, v) for t, v in flagged if v is not None]
            if kept:
                ax.plot([t for t, _ in kept], [v for _, v in kept], color=style.color(0), marker="o", markersize=4,
                        linewidth=1.4, label="per-second samples" if index == 0 else None, gid=gid("samples"))
                measured.extend(v for _, v in kept)
            if flagged:
                ax.plot([t for t, _ in flagged], [v for _, v in flagged], linestyle="none", marker="o",
                        markerfacecolor="none", markeredgecolor=style.GREY, label="ramp samples (not used)",
                        gid=gid("ramp-samples"))
            end = start + max([s.t_s for s in samples] or [0.0])
            if len(segments) > 1:
                ax.text((offset + end) / 2, 1.0, f"run {index + 1}", transform=ax.get_xaxis_transform(),
                        ha="center", va="bottom", fontsize=9, color="#555555")
                if index:
                    ax.axvline(offset, color=style.GREY, linewidth=0.8)
            offset = end
        if measured:
            summary = summarize(measured)
            if math.isfinite(summary.ci_low):
                ax.axhspan(summary.ci_low, summary.ci_high, color=style.color(1), alpha=0.25, linewidth=0,
                           label="95 % interval of the median", gid="ci-band")
            ax.axhline(summary.median, color=style.color(1), linestyle="--", linewidth=1.6,
                       label=f"median of the seconds, {style.plain_number(summary.median)}", gid="median")
        cell_value = value(cell, metric)
        if cell_value:
            count = len(runs(cell, metric))
            what = "IOPS" if metric == "iops" else "MB/s"
            source = f"geometric mean of its {count} runs, " if count > 1 else ""
            ax.axhline(cell_value, color="#000000", linestyle="-", linewidth=1.4,
                       label=f"the cell's {what}, {style.plain_number(cell_value)} ({source}as the tables give it)",
                       gid="cell-value")
        ax.set_xlabel("time (s), the cell's fio runs one after another")
        ax.set_ylabel(METRICS[metric].axis)
        ax.set_ylim(0, (max([*measured, cell_value or 0.0]) or 1.0) * 1.15)
        ax.set_xlim(0, max(offset, 1.0))
        style.thousands(ax)
        style.legend_below(ax, ncol=2)
        drawing.suptitle(f"Per-second samples: {cell.pattern}", x=0.01, ha="left")
        style.footer(drawing, [run])
    return Figure(
        kind="timeline",
        title=f"Per-second samples of {cell.pattern}, run {style.run_name(run)}",
        alt=f"Line of the per-second {'IOPS' if metric == 'iops' else 'MB/s'} of {cell.pattern} over its "
            f"{len(segments)} fio run(s), ramps shaded, the cell's value as the tables give it as a line, and the "
            "median of the seconds with its 95 % interval as a band.",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind timeline` (report/charts/kinds.py)."""
    assert request.cell is not None
    return timeline_figure(request.runs[0], request.cell, request.metric)
