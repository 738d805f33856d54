"""Terminal tables: the practitioners' columns, statistics columns only when they mean something."""

from __future__ import annotations

from rich.console import Console

from stackbench.report.formats.table import renderable
from stackbench.report.run import cell_table
from synthetic import cell


def _render(cells) -> str:
    console = Console(width=200, record=True)
    console.print(renderable([cell_table(cells)]))
    return console.export_text()


def test_cells_with_one_run_or_only_seconds_get_the_plain_practitioners_table() -> None:
    text = _render([cell(samples=[1000.0 + i for i in range(12)]), cell(rw="randread", runs=[5.0])])
    assert "Pattern" in text and "IOPS" in text and "MB/s" in text and "p50 clat" in text and "p99 clat" in text
    assert "runs" not in text and "±" not in text
    assert "4K QD4 rnd write" in text


def test_cells_with_several_runs_show_the_geometric_mean_its_interval_runs_and_spread() -> None:
    text = _render([cell(runs=[1000.0, 1010.0, 990.0, 1005.0, 995.0])])
    assert "IOPS (± 95% CI of runs)" in text and "runs" in text and "spread" in text
    assert "1,000 ± 1.0%" in text and " 5 " in text
