"""Sync latency: the time one synchronous write takes against the write size, log-log, several runs
overlaid (the SLOG shoot-out, FreeBSD's `diskinfo -wS` as a picture). The values are `synclat`'s rows
(report/synclat.py): wall time per write = 1e6 / IOPS."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.synclat import synclat_rows
from stackbench.model.results import Run

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest


def sweep_rows(run: Run) -> list[dict[str, Any]]:
    """The `synclat` rows of `run` this chart draws (those with a time per write), smallest write first.
    Refused when a write size has several cells (a `slog` run: 4 KiB at QD1 and QD16): one line per run
    needs one point per size. Without matplotlib, so a page can say which runs the chart leaves out."""
    rows = sorted((r for r in synclat_rows(run) if r["usec_per_io"]), key=lambda r: r["size_bytes"])
    if len({r["size_bytes"] for r in rows}) < len(rows):
        raise StackbenchError(
            f"run {style.run_name(run)} has several cells per write size: it is not a synclat sweep",
            "Chart runs made by `stackbench synclat` (or use --kind custom --x bs --where ...)",
        )
    return rows


def synclat_figure(runs: Sequence[Run]) -> Figure:
    gid = style.Gids()
    drawn: list[Run] = []
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.4)
        sizes: set[int] = set()
        for index, run in enumerate(runs):
            rows = sweep_rows(run)
            if not rows:
                continue
            drawn.append(run)
            sizes.update(r["size_bytes"] for r in rows)
            ax.plot([r["size_bytes"] for r in rows], [r["usec_per_io"] for r in rows], color=style.color(index),
                    marker=style.marker(index), linestyle=style.linestyle(index), linewidth=1.8, markersize=6,
                    label=style.run_name(run), gid=gid("series"))
        if not drawn:
            raise StackbenchError("no run has a cell with IOPS to draw",
                                  "Chart runs made by `stackbench synclat` or `stackbench slog`")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted(sizes)
        ax.set_xticks(ticks, [style.size_label(s) for s in ticks], rotation=45 if len(ticks) > 10 else 0)
        ax.minorticks_off()
        style.set_log_ticks(ax, "y")
        ax.set_xlabel(style.log_axis_note("write size (bytes, K = 1024)"))
        ax.set_ylabel(style.log_axis_note("time per synchronous write (µs)"))
        style.legend_below(ax, ncol=min(len(drawn), 3))
        legend = ax.get_legend()
        if legend is not None and len(ticks) > 10:
            legend.set_bbox_to_anchor((0.5, -0.24))
        drawing.suptitle("Synchronous write latency per write size", x=0.01, ha="left")
        style.footer(drawing, drawn)
    return Figure(
        kind="synclat",
        title="Time per synchronous write against write size: " + ", ".join(style.run_name(r) for r in drawn),
        alt=f"Log-log lines of microseconds per synchronous write against write size for {len(drawn)} run(s): "
            + ", ".join(style.run_name(r) for r in drawn) + ".",
        drawing=drawing,
    )


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind synclat` (report/charts/kinds.py)."""
    return synclat_figure(request.runs)
