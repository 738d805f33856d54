"""Output formats, one module each, found by name: `--format NAME` is `EXPORTERS[NAME]`.

A new format is a module here whose `EXPORTER` has a `name`, a one-line `description` and
`render(Report, Screen) -> str` (report/formats/exporter.py), and its name in `MODULES`: `--format`'s help,
its error and README.md's table of formats are made from the registry.
"""

from __future__ import annotations

from importlib import import_module

from stackbench.base.registry import by_name, unknown
from stackbench.report.formats.exporter import Exporter, Screen

# The modules here, one per format, each with its `EXPORTER`; the first is the default.
MODULES = (
    "table",
    "markdown",
    "csv",
    "json",
)
EXPORTERS: dict[str, Exporter] = by_name(*(import_module(f"{__name__}.{module}").EXPORTER for module in MODULES))
FORMATS = tuple(EXPORTERS)


def exporter(name: str) -> Exporter:
    """The exporter `--format NAME` asks for."""
    if name not in EXPORTERS:
        raise unknown("--format", name, EXPORTERS)
    return EXPORTERS[name]


__all__ = ["EXPORTERS", "FORMATS", "Exporter", "Screen", "exporter"]
