"""JSON: the report's data, the documented shape of docs/json.md, never its tables."""

from __future__ import annotations

import json
from typing import Any

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen


class JsonExporter:
    name = "json"

    def render(self, report: Report, screen: Screen) -> str:
        return dumps(report.data)


def dumps(data: Any) -> str:
    """The one JSON encoding stackbench prints: indented, datetimes and paths as text."""
    return json.dumps(data, indent=2, default=str) + "\n"
