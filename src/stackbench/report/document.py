"""A `Report`: everything one command prints as its result, ready for any output format.

A command's JSON comes from its domain objects (`to_json()`, docs/json.md), not from a table, so a report
carries both: the tables that the text formats render and the data that JSON prints. Every exporter in
`report/formats/` takes a whole `Report` and uses the part its format needs.

One result has two shapes of table: the reader's (`tables`: units in every cell, a value and its interval in
one column, a run's goals under its cells), which the terminal shows and Markdown pastes into notes and
forum posts, and the spreadsheet's (`csv_tables`: one plain number per cell, '.' as the decimal point, no
thousands separator, the unit in the header, an empty cell for a missing value). A report gives
`csv_tables` only where the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from stackbench.report.tabular import Tabular


@dataclass(frozen=True)
class Report:
    # The result as tables, main table first: what the terminal and Markdown show, and CSV unless
    # `csv_tables` is given.
    tables: Sequence[Tabular] = field(default_factory=tuple)
    # The JSON document (docs/json.md).
    data: Any = None
    # What CSV exports instead of `tables` when those are formatted for reading ("3,008 ± 1.1%", "24.8x"):
    # the same rows as values a spreadsheet reads as numbers. None: CSV exports `tables`, already plain.
    csv_tables: Sequence[Tabular] | None = None

    @property
    def spreadsheet_tables(self) -> Sequence[Tabular]:
        return self.tables if self.csv_tables is None else self.csv_tables
