"""Matrix bars: IOPS or MB/s per block size and queue depth, one panel per pattern (docs/method.md's matrix).

Bars are grouped by block size, one bar per queue depth (colour and hatch), with the 95 % interval across
the cell's separate fio runs as a whisker where the cell has two runs or more.
"""

from __future__ import annotations

from stackbench.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS, depth_name, interval, panel_name, value
from stackbench.results import Run


def matrix_figure(run: Run, metric: str = "iops") -> Figure:
    cells = [c for c in run.cells if (value(c, metric) or 0) > 0]
    if not cells:
        raise StackbenchError(f"run {run.id[:12]} has no cell with a value to draw",
                              "Chart a run with finished cells (`stackbench show RUN`)")
    panels: dict[str, list] = {}
    for cell in cells:
        panels.setdefault(panel_name(cell), []).append(cell)
    depths = sorted({(c.workload.iodepth, c.workload.numjobs) for c in cells})
    depth_labels = {d: depth_name(next(c for c in cells if (c.workload.iodepth, c.workload.numjobs) == d))
                    for d in depths}
    gid = style.Gids()
    unit = METRICS[metric].axis
    with style.styled():
        rows = (len(panels) + 1) // 2
        drawing, axes = style.new_drawing(2.2 + 2.9 * rows, len(panels))
        for ax, (name, members) in zip(axes, panels.items()):
            sizes = sorted({c.workload.bs for c in members})
            width = 0.8 / len(depths)
            for d_index, depth in enumerate(depths):
                xs, ys, errors = [], [], [[], []]
                for s_index, bs in enumerate(sizes):
                    cell = next((c for c in members if c.workload.bs == bs
                                 and (c.workload.iodepth, c.workload.numjobs) == depth), None)
                    if cell is None:
                        continue
                    y = value(cell, metric) or 0.0
                    low_high = interval(cell, metric)
                    xs.append(s_index - 0.4 + width * (d_index + 0.5))
                    ys.append(y)
                    errors[0].append(y - low_high[0] if low_high else 0.0)
                    errors[1].append(low_high[1] - y if low_high else 0.0)
                if not xs:
                    continue
                style.bars(ax, xs, ys, width * 0.92, color=style.color(d_index), hatch=style.hatch(d_index),
                       edgecolor="white", linewidth=0.5, label=depth_labels[depth], gid=gid("series"),
                       yerr=errors if any(errors[0]) or any(errors[1]) else None,
                       error_kw={"ecolor": "#333333", "elinewidth": 1, "capsize": 2})
            ax.set_xticks(range(len(sizes)), [style.size_label(b) for b in sizes])
            ax.set_xlabel("block size (bytes, K = 1024)")
            ax.set_ylabel(unit)
            ax.set_title(name)
            style.thousands(ax)
            ax.grid(axis="x", visible=False)
        handles, labels = [], []
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                if label not in labels:
                    handles.append(handle)
                    labels.append(label)
        order = sorted(range(len(labels)), key=lambda i: depths.index(
            next(d for d in depths if depth_labels[d] == labels[i])))
        drawing.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside upper right",
                       ncol=min(len(labels), 6), frameon=False,
                       title="queue depth (whisker: 95 % interval across runs)")
        drawing.suptitle(f"{'IOPS' if metric == 'iops' else 'Throughput'} per block size and queue depth",
                         x=0.01, ha="left")
        style.footer(drawing, [run])
    what = "IOPS" if metric == "iops" else "MB/s"
    return Figure(
        kind="matrix",
        title=f"{what} per block size and queue depth, run {style.run_name(run)}",
        alt=f"Grouped bars of {what} for each block size and queue depth, one panel per pattern "
            f"({', '.join(panels)}), run {style.run_name(run)}.",
        drawing=drawing,
    )
