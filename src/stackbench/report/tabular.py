"""The one table model every output format renders: headers, rows of text, a title and notes.

Commands build a `Tabular` from what analysis returned; the formats in `report/formats/` turn it into text.
The fields after `notes` are hints for the terminal (alignment, colours, wrapping, the short headers of a
narrow terminal); the file formats read only what they can express (Markdown keeps the alignment) and
ignore the rest.

Its text is escaped when it is made (usertext.shown): a control, separator or invisible format character
in a label, path or fact (a store written before labels refused them, a file imported as it was) is
written `\u202e`, `\x0a`, ... in every format and page that shows the table, so that it can neither
reverse the text around it nor break a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from stackbench.base.usertext import shown


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
    # Columns whose leading spaces draw a tree (a layer indented under the one it sits on): HTML keeps them
    # (`white-space: pre`), which would otherwise collapse them and draw every layer at the root.
    tree: frozenset[int] = frozenset()
    title_style: str = "bold"
    # For a terminal too narrow for `headers` (report/formats/table.py): shorter ones, and the notes that
    # then say what they mean and their units. None: the same headers and notes.
    short_headers: Sequence[str] | None = None
    short_notes: Sequence[str] | None = None

    def __post_init__(self) -> None:
        def text(value: Any) -> Any:
            return shown(value) if isinstance(value, str) else value

        object.__setattr__(self, "headers", [text(h) for h in self.headers])
        object.__setattr__(self, "rows", [[text(cell) for cell in row] for row in self.rows])
        object.__setattr__(self, "title", text(self.title))
        object.__setattr__(self, "notes", [text(note) for note in self.notes])
        if self.short_headers is not None:
            object.__setattr__(self, "short_headers", [text(h) for h in self.short_headers])
        if self.short_notes is not None:
            object.__setattr__(self, "short_notes", [text(note) for note in self.short_notes])
