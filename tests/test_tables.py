"""Terminal tables: the practitioners' columns, statistics columns only when they mean something."""

from __future__ import annotations

from rich.console import Console

from stackbench.report.tables import cell_table
from synthetic import cell


def _render(cells) -> str:
    console = Console(width=200, record=True)
    console.print(cell_table(cells))
    return console.export_text()


def test_cells_with_too_few_samples_get_the_plain_practitioners_table() -> None:
    text = _render([cell(samples=[1000.0, 1010.0]), cell(rw="randread", samples=[5.0, 6.0, 7.0])])
    assert "Pattern" in text and "IOPS" in text and "MB/s" in text and "p50 clat" in text and "p99 clat" in text
    assert "CV" not in text and "±" not in text
    assert "4K QD4 rnd write" in text


def test_cells_with_enough_samples_show_median_ci_cv_and_n() -> None:
    text = _render([cell(samples=[1000.0 + i for i in range(12)])])
    assert "IOPS (median ± 95% CI)" in text and "CV" in text
    assert "1,006 ± " in text and "12" in text
