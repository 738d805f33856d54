"""Compare: the change of each cell from run A to run B, its 95 % interval as a whisker, the verdict as colour
and marker, and the --min-effect band shaded (analysis/compare.py decides every verdict; the chart only shows
it).

The axis is the ratio B / A on a log scale, labelled in % change: a halving and a doubling sit equally far
from 0 %, the interval (computed on log IOPS) is drawn as computed, and no change is too large to show:
+1953 %, which a linear axis cut off at ±400 % left without a marker, is as visible as -60 %. Each change is
written over its marker. A row whose interval is too wide to read (the tables' "too noisy to tell",
between_runs.too_noisy) gets no whisker and says so, rather than a bar across the whole chart, and the axis
is never stretched to such an interval; a row that could not be tested (fewer than two runs a side) says
"untested". The axis holds every marker; a ratio that cannot sit on a log axis (one side at 0 IOPS) is drawn
at the edge it lies beyond, with an arrowhead.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from stackbench.analysis.compare import RowComparison, RunComparison, compare_runs
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure
from stackbench.report.uncertainty import TOO_NOISY

if TYPE_CHECKING:
    from stackbench.report.charts.kinds import ChartRequest
    from matplotlib.axes import Axes

UNTESTED = "untested"
PAD = 0.1  # of the axis' log span, on each side, for the marker and its text
LEGEND_DROP_PT = 40  # the legend's top, under the axes' bottom edge: below the tick labels and the x label


def compare_figure(comparison: RunComparison) -> Figure:
    rows = comparison.rows
    band = comparison.min_effect * 100
    gid = style.Gids()
    low_end, high_end = _limits(comparison)
    with style.styled():
        drawing, (ax,) = style.new_drawing(2.9 + 0.46 * len(rows))
        ax.set_xscale("log")
        ax.set_xlim(low_end, high_end)
        ax.axvspan(1 - comparison.min_effect, 1 + comparison.min_effect, color=style.SHADE, alpha=0.7, linewidth=0,
                   label=f"±{band:g} % (--min-effect): too small to act on", gid="min-effect-band")
        ax.axvline(1, color="#333333", linewidth=0.9)
        for y, row in enumerate(rows):
            _row(ax, y, row, low_end, high_end, gid)
        ax.set_yticks(range(len(rows)), [row.pattern for row in rows])
        ax.set_ylim(len(rows) - 0.5, -0.85)  # room over the first row for its text
        _percent_ticks(ax)
        ax.set_xlabel(f"change of IOPS from A to B (%), log scale of B ÷ A; whisker: "
                      f"{100 * _confidence(comparison):g} % interval")
        ax.grid(axis="y", visible=False)
        _legend(ax, rows)
        drawing.suptitle(f"B against A: {comparison.verdict.upper()}", x=0.01, ha="left")
        ax.set_title(f"A = {style.run_name(comparison.base)}, B = {style.run_name(comparison.other)}",
                     loc="left", fontsize=10.5)
        style.footer(drawing, [comparison.base, comparison.other])
    return Figure(
        kind="compare",
        title=f"Change from {style.run_name(comparison.base)} to {style.run_name(comparison.other)}: "
              f"{comparison.verdict}",
        alt=f"The change of IOPS in % for each of {len(rows)} cells on a log scale with its interval (none where "
            f"{TOO_NOISY}), coloured by verdict (keep, revert, same, no evidence), the ±{band:g} % band shaded; "
            f"overall verdict {comparison.verdict}.",
        drawing=drawing,
    )


def readable_interval(row: RowComparison) -> tuple[float, float] | None:
    """The row's ratio interval where the tables print it; None where untested or too noisy to tell."""
    test = row.test
    if test is None or not test.testable or test.too_noisy:
        return None
    return test.low, test.high  # type: ignore[return-value]


def _limits(comparison: RunComparison) -> tuple[float, float]:
    """The axis' ends as ratios: every marker, every readable interval, the band twice over, then PAD."""
    held = [1 - 2 * comparison.min_effect, 1 + 2 * comparison.min_effect]
    for row in comparison.rows:
        if math.isfinite(row.ratio) and row.ratio > 0:
            held.append(row.ratio)
        held.extend(readable_interval(row) or ())
    low, high = math.log(max(min(held), 1e-9)), math.log(max(held))
    pad = PAD * (high - low)
    return math.exp(low - pad), math.exp(high + pad)


def _row(ax: "Axes", y: int, row: RowComparison, low_end: float, high_end: float, gid: style.Gids) -> None:
    colour, mark = style.VERDICT_STYLE.get(row.verdict, (style.GREY, "s"))
    slug = row.verdict.replace(" ", "-")
    interval = readable_interval(row)
    if interval is not None:
        low, high = interval
        ax.plot([low, high], [y, y], color=colour, linewidth=2, solid_capstyle="butt", gid=gid(f"whisker-{slug}"))
        for end in (low, high):
            ax.plot([end, end], [y - 0.18, y + 0.18], color=colour, linewidth=2)
    ratio = row.ratio
    clipped = not (math.isfinite(ratio) and ratio > 0)
    x = ratio if not clipped else (high_end if ratio > 1 else low_end)
    hollow = interval is None  # a point without an interval the tables would print
    ax.plot([x], [y], linestyle="none", marker=mark if not clipped else (">" if ratio > 1 else "<"), markersize=9,
            color=colour, markerfacecolor="white" if hollow else colour, markeredgecolor=colour if hollow else "#222222",
            markeredgewidth=1.6 if hollow else 0.6, clip_on=False, gid=gid(f"verdict-{slug}"), zorder=4)
    ax.text(x, y - 0.3, _words(row, interval), ha="center", va="bottom", fontsize=9, color="#333333",
            gid=gid("change"))


def _legend(ax: "Axes", rows: tuple[RowComparison, ...]) -> None:
    """The band, each verdict shown (filled, as with an interval), and what a hollow marker means."""
    from matplotlib.lines import Line2D
    from matplotlib.transforms import ScaledTranslation

    handles, labels = ax.get_legend_handles_labels()
    for verdict in dict.fromkeys(row.verdict for row in rows):
        colour, mark = style.VERDICT_STYLE.get(verdict, (style.GREY, "s"))
        handles.append(Line2D([], [], linestyle="none", marker=mark, markersize=9, color=colour,
                              markeredgecolor="#222222", markeredgewidth=0.6))
        labels.append(verdict)
    if any(readable_interval(row) is None for row in rows):
        handles.append(Line2D([], [], linestyle="none", marker="o", markersize=9, color=style.GREY,
                              markerfacecolor="white", markeredgewidth=1.6))
        labels.append("hollow: no interval to draw")
    # anchored a fixed distance under the axes (its tick labels and x label), however few rows make it tall
    below = ax.transAxes + ScaledTranslation(0, -LEGEND_DROP_PT / 72, ax.figure.dpi_scale_trans)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
              ncol=min(len(labels), 3), frameon=False)


def _words(row: RowComparison, interval: tuple[float, float] | None) -> str:
    """What is written over a row's marker: its change, or why it has no interval."""
    if row.test is None or not row.test.testable:
        change = f"{_percent(row.ratio)}, " if math.isfinite(row.ratio) and row.ratio > 0 else ""
        return f"{change}{UNTESTED}"
    if interval is None:
        return TOO_NOISY
    return _percent(row.ratio)


def _percent(ratio: float) -> str:
    change = (ratio - 1) * 100
    if change == 0:
        return "0 %"
    digits = 0 if abs(change) >= 10 else 1
    return f"{change:+,.{digits}f} %"


def _percent_ticks(ax: "Axes") -> None:
    """Ticks at round ratios (style.readable_log_ticks), labelled as the % change they are."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    low, high = ax.get_xlim()
    ticks = style.readable_log_ticks(low, high, fewest=4)
    if all(abs(t - 1) > 1e-9 for t in ticks):
        ticks = sorted([*ticks, 1.0])
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _percent(v)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _confidence(comparison: RunComparison) -> float:
    for row in comparison.rows:
        if row.test is not None:
            return row.test.confidence
    return 0.95


def draw(request: "ChartRequest") -> Figure:
    """`chart --kind compare` (report/charts/kinds.py)."""
    comparison = compare_runs(request.runs[0], request.runs[1], alpha=request.alpha,
                              min_effect=request.min_effect / 100, force=request.force)
    return compare_figure(comparison)
