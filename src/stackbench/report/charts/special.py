"""Special vdev sizing from a `smallblocks` scan: files and bytes per power-of-two size bin, the cumulative
share of bytes, the recommended special_small_blocks cut-off, and the special device's capacity.

scan/ is not imported by report/ (docs/architecture.md): `histogram` is a scan.histogram.SizeHistogram and
`recommendation` a scan.special_vdev.Recommendation, used through their documented fields. With
special_small_blocks=P every file smaller than P goes to the special vdev: the bins left of the cut-off
line. The capacity lines are on the cumulative axis, in % of the scanned bytes, so where the cumulative line
crosses "usable for small blocks" is where the device is full.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stackbench.base.errors import StackbenchError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.base.units import format_bytes

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest

FAR = 300.0  # a capacity line above this % of the scanned bytes is written as text, not drawn


def special_figure(histogram: Any, recommendation: Any, *, source: str = "") -> Figure:
    rows = histogram.rows()
    if not rows:
        raise StackbenchError("the scan found no files to chart", "Scan a directory that holds files")
    total = histogram.total_bytes
    gid = style.Gids()
    positions = range(len(rows))
    labels = [style.size_label(r["bin"]) for r in rows]
    with style.styled():
        drawing, (files_ax, bytes_ax) = style.new_drawing(7.2, 2, columns=1)
        style.bars(files_ax, positions, [r["count"] for r in rows], 0.8, color=style.color(0), label="files",
                     gid=gid("series"))
        files_ax.set_yscale("log")
        style.set_log_ticks(files_ax, "y")
        files_ax.set_ylabel(style.log_axis_note("files (count)"))
        unit, factor = _unit(max(r["bytes"] for r in rows))
        style.bars(bytes_ax, positions, [r["bytes"] / factor for r in rows], 0.8, color=style.color(1), hatch="//",
                     edgecolor="white", linewidth=0.5, label=f"bytes in the bin ({unit})", gid=gid("series"))
        bytes_ax.set_ylabel(f"bytes ({unit})")
        style.thousands(bytes_ax)
        share = bytes_ax.twinx()
        share.plot(positions, [r["cumulative_pct"] for r in rows], color=style.color(2), marker="o", linewidth=2,
                   label="cumulative bytes (% of all)", gid=gid("series"))
        share.set_ylabel("cumulative bytes (% of all scanned)")
        share.grid(False)
        share.spines["right"].set_visible(True)
        top = 105.0
        notes = []
        cut = recommendation.special_small_blocks
        for ax in (files_ax, bytes_ax):
            if cut:
                edge = _edge(rows, cut)
                ax.axvline(edge, color=style.color(3), linestyle="--", linewidth=2,
                           label=f"special_small_blocks={style.size_label(cut)}: "
                                 "files left of it go to the special vdev",
                           gid=gid("cutoff"))
        if recommendation.special_size:
            small_budget = max((recommendation.usable_bytes or 0) - recommendation.metadata_bytes, 0)
            for index, (what, nbytes, dash) in enumerate((
                (f"special vdev {format_bytes(recommendation.special_size)}", recommendation.special_size, "-"),
                (f"usable for small blocks {format_bytes(small_budget)} (75 %, less metadata)", small_budget, ":"),
            )):
                pct = nbytes / total * 100 if total else FAR + 1
                if pct > FAR:
                    notes.append(f"{what} = {pct:,.0f} % of the scanned bytes")
                    continue
                top = max(top, pct * 1.1)
                share.axhline(pct, color="#000000", linestyle=dash, linewidth=1.4, label=what, gid=gid("capacity"))
        share.set_ylim(0, top)
        bytes_ax.set_xticks(positions, labels, rotation=45 if len(rows) > 14 else 0)
        files_ax.set_xticks(positions, labels, rotation=45 if len(rows) > 14 else 0)
        bytes_ax.set_xlabel("file size bin (bytes, K = 1024): files from this size up to the next bin")
        for ax in (files_ax, bytes_ax):
            ax.grid(axis="x", visible=False)
        handles, names = [], []
        for ax in (files_ax, bytes_ax, share):
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
        bytes_ax.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, -0.3 if len(rows) > 14 else -0.22),
                        ncol=2, frameon=False)
        title = f"Special vdev sizing: {histogram.files:,} files, {format_bytes(total)}"
        if cut:
            title += f"; special_small_blocks={style.size_label(cut)}"
        drawing.suptitle(title, x=0.01, ha="left")
        if notes:
            files_ax.set_title("; ".join(notes), loc="left", fontsize=10)
        style.footer(drawing, (), extra=f"scan of {source}" if source else "smallblocks scan")
    return Figure(
        kind="special",
        title=title,
        alt="Files and bytes per file-size bin with the cumulative share of bytes, "
            + (f"the special_small_blocks={style.size_label(cut)} cut-off" if cut else "no cut-off recommended")
            + (f" and the special vdev's {format_bytes(recommendation.special_size)} capacity."
               if recommendation.special_size else "."),
        drawing=drawing,
    )


def _edge(rows: list[dict[str, Any]], cut: int) -> float:
    """The x position between the last bin below `cut` and the first at or above it."""
    below = [i for i, r in enumerate(rows) if r["bin"] < cut]
    return (below[-1] + 0.5) if below else -0.5


def _unit(largest: float) -> tuple[str, float]:
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if largest >= factor:
            return unit, float(factor)
    return "B", 1.0


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind special` (report/charts/kinds.py)."""
    assert request.scan is not None
    histogram, recommendation, source = request.scan
    return special_figure(histogram, recommendation, source=source)
