"""A comparison whose B is less safe, and the two arms of a counterbalanced ab session, in every output format
of `compare`/`ab` and every document of `report`: the verdict's safety marking and the rounds' order are in
each (the web compare page renders the same table, tests/web/test_pages.py)."""

from __future__ import annotations

import io
import json

from stackbench.analysis.compare import compare_runs
from stackbench.report.compare import comparison_csv_table, comparison_table
from stackbench.report.document import Report
from stackbench.report.documents.contents import Contents, RunPart
from stackbench.report.documents.html import render_html
from stackbench.report.documents.markdown import render as render_markdown
from stackbench.report.documents.xlsx import render_xlsx
from stackbench.report.formats import EXPORTERS, Screen
from stackbench.model.round_order import round_orders
from plain_csv import tables
from synthetic import ab_arms

ORDERS = round_orders(4)
RISK = "without write barriers the journal is not flushed in order"


def _arms():
    return ab_arms(ORDERS, [1000.0, 1020.0, 990.0, 1005.0], [3000.0, 3050.0, 2990.0, 3010.0],
                   a_command="mount -o remount,barrier=1 /mnt", b_command="mount -o remount,barrier=0 /mnt",
                   label="bar")


def test_every_format_marks_the_verdict_and_shows_the_rounds_order() -> None:
    result = compare_runs(*_arms())
    assert result.verdict == "keep"
    report = Report(tables=(comparison_table(result),), data=result.to_json(),
                    csv_tables=(comparison_csv_table(result),))
    text = {name: " ".join(found.render(report, Screen(width=100)).split()) for name, found in EXPORTERS.items()}
    for name in ("table", "markdown"):
        assert "Safety: B is faster because it is less safe: " + RISK in text[name].replace("\\", "")
        assert "Round order: AB BA AB BA" in text[name]
    (header, *rows), = tables(EXPORTERS["csv"].render(report, Screen(width=100)))
    column = header.index("safety")
    assert rows[0][column].startswith("B is faster because it is less safe: " + RISK)
    data = json.loads(EXPORTERS["json"].render(report, Screen(width=100)))
    assert data["safety"]["marking"].startswith("B is faster because it is less safe: " + RISK)
    assert data["order_effect"]["orders"] == ORDERS and data["warnings"][0]["code"] == "LESS_SAFE"


def test_the_report_documents_mark_it_too() -> None:
    a, b = _arms()
    contents = Contents(runs=(RunPart(a, ()), RunPart(b, ())), comparison=compare_runs(a, b))
    assert "Safety: B is faster because it is less safe" in render_html(contents).decode()
    markdown, _ = render_markdown(contents, "report")
    assert "Safety: B is faster because it is less safe" in markdown.decode()
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(render_xlsx(contents)))
    lines = [str(c.value) for sheet in ("Report", "Compare") for row in book[sheet].iter_rows() for c in row if c.value]
    assert sum(line.startswith("Safety: B is faster because it is less safe") for line in lines) == 2
    assert any(line.startswith("Round order: AB BA AB BA") for line in lines)
