"""Cache exhaustion: MB/s against GB written for a sequential-write cell, with the fall (if any) marked and
measured (analysis.cache_exhaustion.find_fall decides whether there is one; the chart says so either way).

The x axis is the data written so far (the sum of the per-second bandwidths), because a drive's cache is a
size, not a time: a review says "falls after 40 GB". A cell of several fio runs is drawn run after run, as
the data keeps being written to the same file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackbench.analysis.cache_exhaustion import CacheFall, find_fall
from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.model.results import Cell, Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest


def cache_samples(cell: Cell) -> list[float]:
    """The measured per-second bandwidths (bytes/s) of the cell, its runs in order."""
    return [bw for bw, _ in _windows(cell)]


def data_written(cell: Cell) -> list[float]:
    """Bytes written by the end of each sample: bandwidth times the time the sample covers, summed."""
    written, total = [], 0.0
    for value, seconds in _windows(cell):
        total += value * seconds
        written.append(total)
    return written


def _windows(cell: Cell) -> list[tuple[float, float]]:
    """(bandwidth, seconds the sample covers) in order: a second each, except the one sample of a run
    shorter than fio's first window (engine/fio_logs.whole_run_sample), which covers the run."""
    ordered = sorted(cell.measured_samples, key=lambda s: (s.segment, s.t_s))
    windows = []
    for index, sample in enumerate(ordered):
        if sample.bw_bytes is None:
            continue
        previous = ordered[index - 1].t_s if index and ordered[index - 1].segment == sample.segment else 0.0
        windows.append((sample.bw_bytes, min(1.0, sample.t_s - previous) if sample.t_s > previous else 1.0))
    return windows


def cache_figure(run: Run, cell: Cell) -> Figure:
    bandwidth = cache_samples(cell)
    if not bandwidth:
        raise StackbenchError(f"cell {cell.pattern} of run {run.id[:12]} has no per-second bandwidth samples",
                             "Chart a cell measured by `stackbench run` (imported runs have no samples)")
    fall: CacheFall = find_fall(bandwidth)
    written = [total / 1e9 for total in data_written(cell)]
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.2)
        ax.plot(written, [v / 1e6 for v in bandwidth], color=style.color(0), marker="o", markersize=3.5,
                linewidth=1.4, label="per-second throughput", gid=gid("series"))
        if fall.fell and fall.index is not None:
            at = (fall.bytes_before or 0.0) / 1e9
            ax.axvline(at, color=style.color(3), linestyle="--", linewidth=2,
                       label=f"falls after {at:,.3g} GB written ({fall.seconds:g} s)", gid="fall")
            ax.hlines([fall.before_bytes_s / 1e6], written[0], at, color=style.color(1), linewidth=2.2,
                      label=f"median before: {fall.before_bytes_s / 1e6:,.0f} MB/s", gid="before")
            ax.hlines([fall.after_bytes_s / 1e6], at, written[-1], color=style.color(2), linewidth=2.2,
                      linestyle="-.", label=f"median after: {fall.after_bytes_s / 1e6:,.0f} MB/s "
                      f"({-100 * (fall.drop or 0):.0f} %)", gid="after")
            headline = (f"throughput falls {100 * (fall.drop or 0):.0f} % after {at:,.3g} GB: "
                        f"{fall.before_bytes_s / 1e6:,.0f} -> {fall.after_bytes_s / 1e6:,.0f} MB/s")
        else:
            headline = fall.reason
            ax.text(0.99, 0.04, headline, transform=ax.transAxes, ha="right", va="bottom", fontsize=10,
                    color="#333333", gid="no-fall", wrap=True)
        ax.set_xlabel("data written (GB, 10^9 bytes)")
        ax.set_ylabel("throughput (MB/s, 10^6 bytes per second)")
        ax.set_ylim(bottom=0)
        style.thousands(ax)
        style.legend_below(ax, ncol=2)
        drawing.suptitle(f"Cache exhaustion: {cell.pattern}", x=0.01, ha="left")
        ax.set_title(headline, loc="left", fontsize=10.5)
        style.footer(drawing, [run])
    return Figure(
        kind="cache",
        title=f"Throughput against data written, {cell.pattern}, run {style.run_name(run)}",
        alt=f"Line of MB/s against GB written for {cell.pattern}; {headline}.",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind cache` (report/charts/kinds.py)."""
    assert request.cell is not None
    return cache_figure(request.runs[0], request.cell)
