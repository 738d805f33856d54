"""Any axes: a metric of the cells of one or more runs against a field of theirs, one series per value of
another field, filtered by --where (fio-plot's most requested view; every choice is checked against what
the runs hold, and a bad one is a one-line usage error listing the valid ones).

Fields: bs (block size), iodepth, numjobs, rw (the pattern; a mixed cell's direction after a slash:
randrw/read), label (the run). Metrics: iops, mb_s, p99 (µs). Numeric fields on x give lines on a log2
axis; rw and label give grouped bars. Each point must be one cell: when several cells land on one point
(e.g. --x bs --series rw over several queue depths) the error names the field to fix with --where or
--series, instead of silently averaging them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from stackbench.base.errors import UsageError
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.charts.values import METRICS, value
from stackbench.model.results import Cell, Run
from stackbench.base.units import parse_size

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest

FIELDS = ("bs", "iodepth", "numjobs", "rw", "label")
NUMERIC = {"bs", "iodepth", "numjobs"}
FIELD_AXIS = {
    "bs": "block size (bytes, K = 1024)",
    "iodepth": "queue depth (fio iodepth, I/Os in flight)",
    "numjobs": "jobs (fio numjobs)",
    "rw": "pattern",
    "label": "run",
}

FIELD_NAMES = {"bs": "block size", "iodepth": "queue depth", "numjobs": "jobs", "rw": "pattern", "label": "run"}
METRIC_NAMES = {"iops": "IOPS", "mb_s": "MB/s", "p99": "p99 latency"}


@dataclass(frozen=True)
class Point:
    run: Run
    cell: Cell

    def field(self, name: str) -> int | str:
        w = self.cell.workload
        if name == "bs":
            return w.bs
        if name == "iodepth":
            return w.iodepth
        if name == "numjobs":
            return w.numjobs
        if name == "rw":
            mixed = self.cell.result.rw in ("randrw", "rw", "readwrite")
            return f"{w.rw}/{self.cell.result.direction}" if mixed else w.rw
        return style.run_name(self.run)


def shown(name: str, item: int | str) -> str:
    return style.size_label(int(item)) if name == "bs" else str(item)


def check_field(option: str, name: str) -> str:
    if name not in FIELDS:
        raise UsageError(f"--{option} {name!r} is not a field", f"Use one of: {', '.join(FIELDS)}")
    return name


def parse_where(specs: Sequence[str], points: Sequence[Point]) -> list[tuple[str, int | str]]:
    """`rw=randwrite`, `bs=4k`, `iodepth=4`: each checked against the fields and the values the runs hold."""
    filters = []
    for spec in specs:
        name, sep, text = spec.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not text:
            raise UsageError(f"cannot read --where {spec!r}", "Write FIELD=VALUE, e.g. --where rw=randwrite")
        check_field("where", name)
        present = sorted({p.field(name) for p in points}, key=lambda v: (isinstance(v, str), v))
        wanted: int | str
        if name == "bs":
            wanted = parse_size(text, option="where bs")
        elif name in NUMERIC:
            if not text.isdigit():
                raise UsageError(f"--where {name}={text!r} is not a whole number",
                                 f"Use one of: {', '.join(shown(name, v) for v in present)}")
            wanted = int(text)
        elif name == "label":  # the run's label or id prefix, as everywhere, or its name as the chart shows it
            named = [p.field("label") for p in points
                     if text in (p.run.label, p.field("label")) or (len(text) >= 4 and p.run.id.startswith(text))]
            wanted = named[0] if named else text
        else:
            wanted = text
        matches = [v for v in present if v == wanted or (name == "rw" and str(v).split("/")[0] == wanted)]
        if not matches:
            raise UsageError(f"no cell has {name}={text}",
                             f"The runs hold {name} = {', '.join(shown(name, v) for v in present)}")
        filters.append((name, wanted))
    return filters


def custom_figure(runs: Sequence[Run], *, x: str, y: str, series: str | None = None,
                  where: Sequence[str] = ()) -> Figure:
    check_field("x", x)
    if series is not None:
        check_field("series", series)
        if series == x:
            raise UsageError(f"--series {series} is also --x", "Choose another field for --series, or leave it out")
    if y not in METRICS:
        raise UsageError(f"--y {y!r} is not a metric", f"Use one of: {', '.join(METRICS)}")
    points = [Point(run, cell) for run in runs for cell in run.cells]
    filters = parse_where(where, points)
    for name, wanted in filters:
        points = [p for p in points if p.field(name) == wanted
                  or (name == "rw" and str(p.field(name)).split("/")[0] == wanted)]
    points = [p for p in points if value(p.cell, y) is not None]
    if not points:
        raise UsageError("no cell is left with a value to draw", "Loosen --where, or choose another --y")
    grouped: dict[int | str, dict[int | str, Point]] = {}
    for point in points:
        key_series = point.field(series) if series else ""
        key_x = point.field(x)
        slot = grouped.setdefault(key_series, {})
        if key_x in slot:
            varying = [f for f in FIELDS if f not in (x, series)
                       and len({p.field(f) for p in points}) > 1]
            raise UsageError(
                f"several cells fall on one point ({x}={shown(x, key_x)}"
                + (f", {series}={shown(series, key_series)}" if series else "") + "): they differ in "
                + (", ".join(varying) or "what these fields do not show (sync, host)"),
                f"Pick one with --where (e.g. --where {varying[0]}={shown(varying[0], points[0].field(varying[0]))}) "
                f"or draw them as --series {varying[0]}" if varying else "Choose other fields",
            )
        slot[key_x] = point
    gid = style.Gids()
    order = lambda v: (isinstance(v, str), v)  # noqa: E731 - numbers first, then names
    xs_all = sorted({p.field(x) for p in points}, key=order)
    with style.styled():
        drawing, (ax,) = style.new_drawing(5.4)
        names = sorted(grouped, key=order)
        width = 0.8 / max(len(names), 1)
        for index, name in enumerate(names):
            slot = grouped[name]
            keys = sorted(slot, key=order)
            label = f"{series} {shown(series, name)}" if series else METRICS[y].axis
            ys = [value(slot[k].cell, y) for k in keys]
            if x in NUMERIC:
                ax.plot(keys, ys, color=style.color(index), marker=style.marker(index),
                        linestyle=style.linestyle(index), linewidth=1.8, label=label, gid=gid("series"))
            else:
                positions = [xs_all.index(k) - 0.4 + width * (index + 0.5) for k in keys]
                style.bars(ax, positions, ys, width * 0.92, color=style.color(index), hatch=style.hatch(index),
                       edgecolor="white", linewidth=0.5, label=label, gid=gid("series"))
        if x in NUMERIC:
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs_all, [shown(x, v) for v in xs_all])
            ax.minorticks_off()
        else:
            ax.set_xticks(range(len(xs_all)), [shown(x, v) for v in xs_all],
                          rotation=20 if len(xs_all) > 5 else 0, ha="right" if len(xs_all) > 5 else "center")
            ax.grid(axis="x", visible=False)
        ax.set_xlabel(FIELD_AXIS[x] + (", log scale" if x in NUMERIC else ""))
        ax.set_ylabel(METRICS[y].axis)
        ax.set_ylim(bottom=0)
        style.thousands(ax)
        if series:
            style.legend_below(ax, ncol=min(len(names), 4))
        where_text = ", ".join(f"{n}={shown(n, v)}" for n, v in filters)
        title = (f"{METRIC_NAMES[y]} by {FIELD_NAMES[x]}" + (f", per {FIELD_NAMES[series]}" if series else "")
                 + (f" ({where_text})" if where_text else ""))
        drawing.suptitle(title, x=0.01, ha="left")
        style.footer(drawing, _runs(points))
    return Figure(kind="custom", title=title,
                  alt=f"{METRICS[y].axis} against {FIELD_AXIS[x]}" + (f", one series per {series}" if series else "")
                      + (f", where {where_text}" if where_text else "") + ".",
                  drawing=drawing)


def _runs(points: Sequence[Point]) -> list[Run]:
    seen: dict[str, Run] = {}
    for point in points:
        seen.setdefault(point.run.id, point.run)
    return list(seen.values())


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind custom` (report/charts/kinds.py)."""
    assert request.x is not None
    return custom_figure(request.runs, x=request.x, y=request.y, series=request.series, where=request.where)
