"""Output formats, one module each, found by name: `--format NAME` is `EXPORTERS[NAME]`.

A new format is a module here with a class that has a `name`, a one-line `description` and
`render(Report, Screen) -> str` (report/formats/exporter.py), and its instance in `EXPORTERS`: `--format`'s
help, its error and README.md's table of formats are made from the registry.
"""

from __future__ import annotations

from stackbench.base.registry import by_name, unknown
from stackbench.report.formats.csv import CsvExporter
from stackbench.report.formats.exporter import Exporter, Screen
from stackbench.report.formats.json import JsonExporter
from stackbench.report.formats.markdown import MarkdownExporter
from stackbench.report.formats.table import TableExporter

# The first is the default.
EXPORTERS: dict[str, Exporter] = by_name(
    TableExporter(),
    MarkdownExporter(),
    CsvExporter(),
    JsonExporter(),
)
FORMATS = tuple(EXPORTERS)


def exporter(name: str) -> Exporter:
    """The exporter `--format NAME` asks for."""
    if name not in EXPORTERS:
        raise unknown("--format", name, EXPORTERS)
    return EXPORTERS[name]


__all__ = ["EXPORTERS", "FORMATS", "Exporter", "Screen", "exporter"]
