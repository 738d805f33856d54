"""The matrix and timeline charts of a cell whose runs did 4,000, 9,000 and 600,000 IOPS (issue 27, a busy
2-core machine): the axis is scaled to the bars and the runs, never to an interval's end, a bar is the
table's number, and the per-second chart's reference line is the cell's value as the table gives it. Read
from the drawn figure itself (matplotlib's artists, found by their SVG ids).

The runs are synthetic (tests/synthetic.py): per-run IOPS and per-second samples chosen to be those numbers,
analysed by the real analysis and drawn by the real charts.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from report.charts.conftest import NOISY, drawn, inside, lines
from stackbench.analysis.layers import cell_value
from stackbench.model.fio_result import Sample
from stackbench.report.charts.matrix import matrix_figure
from stackbench.report.charts.timeline import timeline_figure
from stackbench.report.run import run_export_table
from synthetic import cell, run


def _busy_run():  # noqa: ANN202
    seconds = [4100, 3900, 4000, 4200, 3800, 9100, 8900, 9000, 9200, 8800, 600000, 590000, 610000, 20000, 22347]
    noisy = cell("randread", 4096, 1, runs=NOISY)
    noisy = replace(noisy, samples=tuple(Sample(t_s=i % 5 + 1.0, iops=v, segment=i // 5)
                                         for i, v in enumerate(seconds)))
    return run([noisy, cell("randread", 4096, 4, runs=[8000, 8500, 9000]),
                cell("randread", 65536, 1, runs=[4200, 4400, 4100]),
                cell("randwrite", 4096, 1, runs=[3000, 3100, 2900]),
                cell("randwrite", 4096, 4, runs=[7000, 9000, 11000])], label="busy", run_id="a" * 32)


def test_matrix_scales_to_the_runs_and_bars_and_cuts_the_interval_with_a_mark() -> None:
    """A whisker to 22,000,000 IOPS (runs of 4,000, 9,000 and 600,000) scaled the axis over bars of 4,000."""
    busy = _busy_run()
    drawing = drawn(matrix_figure(busy))
    numbers = {row[0]: float(row[1]) for row in run_export_table(busy).rows}  # the table's IOPS of each cell
    for ax in drawing.axes[:2]:
        limits = ax.get_ylim()
        bars = [p for p in ax.patches if (p.get_gid() or "").startswith("series-")]
        dots = lines(ax, "runs-")
        assert len(dots) == len(bars)  # every cell's runs drawn
        for dot in dots:
            assert all(inside(v, limits) for v in dot.get_ydata())
        tops = sorted(round(p.get_y() + p.get_height(), 1) for p in bars)
        for line in lines(ax, "interval"):
            assert all(inside(v, limits) for v in line.get_ydata())
        panel = ax.get_title()
        expected = sorted(round(v, 1) for name, v in numbers.items() if ("rnd read" in name) == (panel == "randread"))
        assert tops == pytest.approx(expected, abs=0.1)  # the bar is the table's number
        assert limits[1] < 2 * max(v for dot in dots for v in dot.get_ydata())  # never an interval's end
    read, write = drawing.axes[:2]
    assert read.get_yscale() == "log" and write.get_yscale() == "linear"  # one 600,000 run: log
    assert not lines(read, "interval-cut")  # the noisy cell gets no whisker at all
    (cut,) = lines(write, "interval-cut")  # 7,000/9,000/11,000: readable, and past the axis
    assert cut.get_marker() == "^" and cut.get_ydata()[0] == write.get_ylim()[1]
    legend = [t.get_text() for t in drawing.legends[0].get_texts()]
    assert {"one fio run", "interval goes on beyond the axis", "no whisker: too noisy to tell"} <= set(legend)


def test_timeline_draws_the_cells_value_as_the_table_gives_it() -> None:
    """The dashed "median 9,000" was the median of seconds, not the cell's IOPS of the table, and did not
    say so."""
    busy = _busy_run()
    noisy = busy.cells[0]
    ax = drawn(timeline_figure(busy, noisy)).axes[0]
    (line,) = lines(ax, "cell-value")
    table = float(run_export_table(busy).rows[0][1])
    assert line.get_ydata()[0] == pytest.approx(table, abs=0.05)
    assert line.get_ydata()[0] == pytest.approx(cell_value(noisy, "iops"))
    labels = ax.get_legend_handles_labels()[1]
    assert any(label.startswith("the cell's IOPS, 27,850 (geometric mean of its 3 runs") for label in labels)
    assert any(label.startswith("median of the seconds") for label in labels)
