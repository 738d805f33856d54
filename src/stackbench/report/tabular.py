"""The one table model every output format renders: headers, rows of text, a title and notes.

Commands build a `Tabular` from what analysis returned; the formats in `report/formats/` turn it into text.
The fields after `notes` are hints for the terminal (alignment, colours, wrapping); the file formats read
only what they can express (Markdown keeps the alignment) and ignore the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence


@dataclass(frozen=True)
class Tabular:
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    title: str | None = None
    notes: Sequence[str] = field(default_factory=tuple)
    right_aligned: frozenset[int] = frozenset()
    styles: Mapping[int, str] = field(default_factory=dict)  # row index -> Rich style of the whole row
    # (row index, column index) -> Rich style of one cell: a status word coloured, not its whole row.
    cell_styles: Mapping[tuple[int, int], str] = field(default_factory=dict)
    # Columns kept on one line in a narrow terminal; by default the first, which names the row.
    no_wrap: frozenset[int] = frozenset({0})
    # Columns whose words longer than the column (ids, paths) break across lines instead of ending in "…".
    fold: frozenset[int] = frozenset()
    title_style: str = "bold"
