"""A `Report`: everything one command prints as its result, ready for any output format.

A command's JSON comes from its domain objects (`to_json()`, docs/json.md), not from a table, so a report
carries both: the tables that the text formats render and the data that JSON prints. Every exporter in
`report/formats/` takes a whole `Report` and uses the part its format needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from stackbench.report.tabular import Tabular


@dataclass(frozen=True)
class Report:
    # The result as tables, main table first: what Markdown and CSV export (plain numbers where a
    # spreadsheet reads them, units in the headers).
    tables: Sequence[Tabular] = field(default_factory=tuple)
    # The JSON document (docs/json.md).
    data: Any = None
    # What the terminal shows instead of `tables` when the two differ: units in every cell, a value and
    # its interval in one column, a goals table under the run. None: the terminal shows `tables`.
    display: Sequence[Tabular] | None = None

    @property
    def terminal_tables(self) -> Sequence[Tabular]:
        return self.tables if self.display is None else self.display
