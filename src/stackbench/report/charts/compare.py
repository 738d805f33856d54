"""Compare: the change of each cell from run A to run B in %, its 95 % interval as a whisker, the verdict
as colour and marker, and the --min-effect band shaded (analysis/compare.py decides every verdict; the chart
only shows it)."""

from __future__ import annotations

import math

from stackbench.analysis.compare import RunComparison
from stackbench.report.charts import style
from stackbench.report.charts.figure import Figure


def compare_figure(comparison: RunComparison) -> Figure:
    rows = comparison.rows
    band = comparison.min_effect * 100
    gid = style.Gids()
    with style.styled():
        drawing, (ax,) = style.new_drawing(2.8 + 0.36 * len(rows))
        ax.axvspan(-band, band, color=style.SHADE, alpha=0.7, linewidth=0,
                   label=f"±{band:g} % (--min-effect): too small to act on", gid="min-effect-band")
        ax.axvline(0, color="#333333", linewidth=0.9)
        seen: set[str] = set()
        extent = band * 2
        for y, row in enumerate(rows):
            ratio = row.ratio
            if not math.isfinite(ratio) or ratio <= 0:
                continue
            change = (ratio - 1) * 100
            colour, mark = style.VERDICT_STYLE.get(row.verdict, (style.GREY, "s"))
            test = row.test
            if test is not None and test.testable:
                low, high = (test.low - 1) * 100, (test.high - 1) * 100  # type: ignore[operator]
                ax.plot([low, high], [y, y], color=colour, linewidth=2, solid_capstyle="butt",
                        gid=gid(f"whisker-{row.verdict.replace(' ', '-')}"))
                ax.plot([low, low], [y - 0.18, y + 0.18], color=colour, linewidth=2)
                ax.plot([high, high], [y - 0.18, y + 0.18], color=colour, linewidth=2)
                extent = max(extent, abs(low), abs(high))
            extent = max(extent, abs(change))
            label = row.verdict if row.verdict not in seen else None
            seen.add(row.verdict)
            ax.plot([change], [y], linestyle="none", marker=mark, markersize=9, color=colour,
                    markeredgecolor="#222222", markeredgewidth=0.6, label=label,
                    gid=gid(f"verdict-{row.verdict.replace(' ', '-')}"))
        ax.set_yticks(range(len(rows)), [row.pattern for row in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        limit = min(extent * 1.1, 400.0)
        ax.set_xlim(-limit, limit)
        ax.set_xlabel(f"change of IOPS from A to B (%), whisker: {100 * _confidence(comparison):g} % interval")
        ax.grid(axis="y", visible=False)
        style.legend_below(ax, ncol=5)
        drawing.suptitle(f"B against A: {comparison.verdict.upper()}", x=0.01, ha="left")
        ax.set_title(f"A = {style.run_name(comparison.base)}, B = {style.run_name(comparison.other)}",
                     loc="left", fontsize=10.5)
        style.footer(drawing, [comparison.base, comparison.other])
    return Figure(
        kind="compare",
        title=f"Change from {style.run_name(comparison.base)} to {style.run_name(comparison.other)}: "
              f"{comparison.verdict}",
        alt=f"The change of IOPS in % for each of {len(rows)} cells with its interval, coloured by verdict "
            f"(keep, revert, same, no evidence), the ±{band:g} % band shaded; overall verdict {comparison.verdict}.",
        drawing=drawing,
    )


def _confidence(comparison: RunComparison) -> float:
    for row in comparison.rows:
        if row.test is not None:
            return row.test.confidence
    return 0.95
