"""The layers chart (issues 27 and 28): its log axis numbered when every value lies within one decade, and
each factor drawn with its 95 % interval (LayerRow.gaps) on an axis that holds them. Read from the drawn
figure itself (matplotlib's artists, found by their SVG ids).

The runs are synthetic (tests/synthetic.py): per-run IOPS chosen for the case, analysed by the real
analysis (analysis/layers.py) and drawn by the real chart.
"""

from __future__ import annotations

from report.charts.conftest import NOISY, drawn, inside, lines
from stackbench.analysis.layers import LayerGaps, layer_gaps
from stackbench.report.charts import layers_figures
from synthetic import cell, run


def _layers_within_a_decade() -> LayerGaps:
    host = run([cell("randread", 4096, 1, runs=[5200, 5300, 5100]), cell("randwrite", 4096, 1, runs=[6100, 6000, 6200])],
               label="host", run_id="d" * 32)
    vm = run([cell("randread", 4096, 1, runs=[3900, 4000, 4100]), cell("randwrite", 4096, 1, runs=[4600, 4500, 4700])],
             label="vm", run_id="e" * 32)
    luks = run([cell("randread", 4096, 1, runs=[3300, 3400, 3500]), cell("randwrite", 4096, 1, runs=[3000, 3900, 4200])],
               label="luks", run_id="f" * 32)
    return layer_gaps([host, vm, luks], ["host", "vm", "vm+luks"])


def test_layers_log_axis_is_numbered_within_one_decade() -> None:
    """Issue 28: values of 3,400 to 6,100 IOPS left one number (10,000) on the log axis."""
    ax = drawn(layers_figures(_layers_within_a_decade())[0]).axes[0]
    limits = ax.get_ylim()
    numbered = [t.get_text() for t in ax.get_yticklabels() if t.get_text() and inside(t.get_position()[1], limits)]
    assert len(numbered) >= 3, numbered
    assert all(t.replace(",", "").isdigit() for t in numbered)
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("series-")]
    assert all(inside(p.get_y(), limits) for p in bars)  # they stand on the axis' foot, inside it


def test_layers_draw_each_factor_with_its_interval() -> None:
    """The factors' 95 % intervals (LayerRow.gaps) on their own axis: proven filled, not proven hollow, too
    noisy to tell said so without a whisker; every point and interval inside the axis."""
    host = run([cell("randread", 4096, 1, runs=[52000, 53000, 51000]), cell("randwrite", 4096, 1, runs=NOISY)],
               label="host", run_id="1" * 32)
    vm = run([cell("randread", 4096, 1, runs=[3900, 4000, 4100]), cell("randwrite", 4096, 1, runs=[3000, 3100, 2900])],
             label="vm", run_id="2" * 32)
    gaps = layer_gaps([host, vm], ["host", "vm"])
    proven, noisy = gaps.rows[0].gaps[0], gaps.rows[1].gaps[0]
    assert proven.proven and noisy.too_noisy
    drawing = drawn(layers_figures(gaps, [host, vm])[0])
    factor_ax = drawing.axes[1]
    limits = factor_ax.get_ylim()
    points = lines(factor_ax, "factor-point")
    assert [p.get_ydata()[0] for p in points] == [proven.factor, noisy.factor]
    assert points[0].get_markerfacecolor() != "white" and points[1].get_markerfacecolor() == "white"
    (interval,) = lines(factor_ax, "factor-interval")
    assert list(interval.get_ydata()) == [proven.low, proven.high]
    assert all(inside(v, limits) for p in points for v in p.get_ydata())
    assert all(inside(v, limits) for v in interval.get_ydata())
    assert [t.get_text() for t in factor_ax.texts] == ["too noisy\nto tell"]
    assert len([t for t in factor_ax.get_yticklabels() if t.get_text() and inside(t.get_position()[1], limits)]) >= 2
