"""JSON: the report's data, the documented shape of docs/json.md, never its tables."""

from __future__ import annotations

import json
from typing import Any

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen


class JsonExporter:
    name = "json"
    description = "the JSON of docs/json.md, for scripts; `--json` is short for it"

    def render(self, report: Report, screen: Screen) -> str:
        return dumps(report.data)


def dumps(data: Any) -> str:
    """The one JSON encoding stackbench prints: indented, datetimes and paths as text, and strict: NaN and
    Infinity are not JSON (a reader such as jq or a browser refuses the whole document), so a value that is
    not finite is a bug here (exit 70) rather than a document no one can read. Numbers are checked where
    they come in (engine/ranges.py); a statistic that cannot be computed is null."""
    return json.dumps(data, indent=2, default=str, allow_nan=False) + "\n"


EXPORTER = JsonExporter()  # what report/formats/__init__.py registers
