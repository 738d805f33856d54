"""Output formats, one module each, found by name: `--format NAME` is `EXPORTERS[NAME]`.

A new format is a module here with a class that has a `name` and `render(Report, Screen) -> str`
(report/formats/exporter.py), and its instance in `EXPORTERS`.
"""

from __future__ import annotations

from stackbench.base.errors import UsageError
from stackbench.report.formats.csv import CsvExporter
from stackbench.report.formats.exporter import Exporter, Screen
from stackbench.report.formats.json import JsonExporter
from stackbench.report.formats.markdown import MarkdownExporter
from stackbench.report.formats.table import TableExporter

EXPORTERS: dict[str, Exporter] = {
    exporter.name: exporter for exporter in (TableExporter(), MarkdownExporter(), CsvExporter(), JsonExporter())
}
FORMATS = tuple(EXPORTERS)  # the first is the default


def exporter(name: str) -> Exporter:
    try:
        return EXPORTERS[name]
    except KeyError:
        raise UsageError(f"unknown --format {name!r}", f"Use one of: {', '.join(FORMATS)}") from None


__all__ = ["EXPORTERS", "FORMATS", "Exporter", "Screen", "exporter"]
