"""CSV: the header row and the rows, nothing else (a title or notes would break a spreadsheet import).
A report with several tables gives them one after the other, an empty line between.

It exports the report's spreadsheet tables (`Report.spreadsheet_tables`): plain numbers with their unit
in the header, never the "3,008 ± 1.1%" a reader is shown."""

from __future__ import annotations

import csv
import io

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen


class CsvExporter:
    name = "csv"
    description = "for a spreadsheet: one plain value per cell, the unit in the header, no title or notes"

    def render(self, report: Report, screen: Screen) -> str:
        parts = []
        for tab in report.spreadsheet_tables:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(tab.headers)
            writer.writerows(tab.rows)
            parts.append(buffer.getvalue())
        return "\n".join(parts)


EXPORTER = CsvExporter()  # what report/formats/__init__.py registers
