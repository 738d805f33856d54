"""The compare chart's axis holds every row (issue 27): changes of +931 % and +1953 % beside -60 % and a row
too noisy to tell, read from the drawn figure itself (matplotlib's artists, found by their SVG ids).

The runs are synthetic (tests/synthetic.py): per-run IOPS chosen to give those changes, compared by the real
analysis and drawn by the real chart; no fio is needed to know where a point lies.
"""

from __future__ import annotations

import math

from report.charts.conftest import NOISY, drawn, inside, lines
from stackbench.analysis.compare import compare_runs
from stackbench.report.charts import compare_figures
from stackbench.report.charts.style import VERDICT_STYLE
from stackbench.report.compare import comparison_table
from stackbench.report.uncertainty import TOO_NOISY
from synthetic import cell, run


def _comparison():  # noqa: ANN202
    base = run([cell("randread", 4096, 1, runs=[1000, 1020, 980]), cell("randwrite", 4096, 1, runs=[500, 510, 490]),
                cell("randread", 65536, 1, runs=[5000, 5100, 4900]), cell("randwrite", 65536, 1, runs=NOISY)],
               label="before", run_id="b" * 32)
    other = run([cell("randread", 4096, 1, runs=[10310, 10300, 10320]),
                 cell("randwrite", 4096, 1, runs=[10265, 10260, 10270]),
                 cell("randread", 65536, 1, runs=[2000, 2040, 1960]),
                 cell("randwrite", 65536, 1, runs=[5000, 8000, 20000])], label="after", run_id="c" * 32)
    return compare_runs(base, other)


def test_compare_shows_every_change_and_says_which_are_too_noisy() -> None:
    """+931 % and +1953 % had no marker on an axis cut at ±400 %; the noisy row was a bar across the chart."""
    comparison = _comparison()
    changes = [round((row.ratio - 1) * 100) for row in comparison.rows]
    assert changes[:3] == [931, 1953, -60] and comparison.rows[3].too_noisy  # the case of the issue
    drawing = drawn(compare_figures(comparison)[0])
    ax = drawing.axes[0]
    limits = ax.get_xlim()
    markers = lines(ax, "verdict-")
    assert len(markers) == len(comparison.rows)
    table = comparison_table(comparison)
    for row, marker, printed in zip(comparison.rows, markers, table.rows):
        assert inside(marker.get_xdata()[0], limits), (row.pattern, marker.get_xdata(), limits)
        assert math.isclose(marker.get_xdata()[0], row.ratio)
        assert marker.get_gid().startswith(f"verdict-{row.verdict.replace(' ', '-')}-")
        assert printed[-1] == row.verdict  # the table's verdict, and its colour on the chart
        assert marker.get_color() == VERDICT_STYLE[row.verdict][0]
    whiskers = lines(ax, "whisker-")
    assert len(whiskers) == 3  # the three readable rows; none for the row too noisy to tell
    for whisker, row in zip(whiskers, comparison.rows[:3]):
        assert all(inside(x, limits) for x in whisker.get_xdata())
        assert list(whisker.get_xdata()) == [row.test.low, row.test.high]
    assert limits[1] < comparison.rows[3].test.high  # the axis is not stretched to the noisy interval
    words = [t.get_text() for t in ax.texts]
    assert words == ["+931 %", "+1,953 %", "-60 %", TOO_NOISY]
    ticks = [t.get_text() for t in ax.get_xticklabels() if inside(t.get_position()[0], limits)]
    assert "0 %" in ticks and len(ticks) >= 4


def test_compare_puts_an_untested_row_on_the_axis() -> None:
    """One run a side: no interval to draw, and the row says untested rather than vanishing."""
    one = run([cell("randread", runs=[1000])], label="one", run_id="3" * 32)
    two = run([cell("randread", runs=[1500])], label="two", run_id="4" * 32)
    comparison = compare_runs(one, two)
    ax = drawn(compare_figures(comparison)[0]).axes[0]
    (marker,) = lines(ax, "verdict-no-evidence-")
    assert inside(marker.get_xdata()[0], ax.get_xlim()) and not lines(ax, "whisker-")
    assert [t.get_text() for t in ax.texts] == ["+50 %, untested"]
