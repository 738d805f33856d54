"""The terminal table: Rich tables with a bold title above and dim notes below, fitted to the width.

Rendered into a string through a Console given the output console's width and colour system, so the text
is exactly what printing the tables on that console would show, colours included on a terminal, and the
same bytes in a pipe.

A table takes the layout that fits the width it is printed in: boxed, with its full headers, where every
cell fits whole (its no-wrap columns on one line); otherwise a compact one (a rule under the headers, no
borders), with the table's short headers and the notes that explain them, whose cells may wrap between
words. No number is ever cut to "…": a word wider than what is left of a too-narrow terminal folds onto
the next line whole.

Each note is wrapped between words at the width (or the screen's `notes_width`, narrower in a pipe), its
second and later lines indented by two spaces, so that one note reads as one and the next starts at the
margin; every word of it is printed.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Sequence

from rich.console import Console, Group, RenderableType
from rich.text import Text

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen
from stackbench.report.tabular import Tabular

if TYPE_CHECKING:
    from rich.console import ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.table import Table


class TableExporter:
    name = "table"
    description = "the terminal's table, in colour on a terminal and plain in a pipe"

    def render(self, report: Report, screen: Screen) -> str:
        buffer = io.StringIO()
        console = Console(
            file=buffer, width=screen.width, height=25, color_system=screen.color_system, no_color=screen.no_color,
            force_terminal=False, markup=False, highlight=False, emoji=False, legacy_windows=False,
        )
        console.print(renderable(report.tables, notes_width=screen.notes_width))
        return buffer.getvalue()


def renderable(tables: Sequence[Tabular], *, notes_width: int | None = None) -> RenderableType:
    """The tables one under the other, as Rich renderables (for a live console, or a test's own); their notes
    wrapped at `notes_width` where it is narrower than the console."""
    return Group(*(FittedTable(tab, notes_width) for tab in tables))


class FittedTable:
    """One `Tabular` as a Rich renderable that chooses its layout when it is rendered, for the width it
    gets: the boxed table if it fits whole, else the compact one."""

    def __init__(self, tab: Tabular, notes_width: int | None = None) -> None:
        self.tab = tab
        self.notes_width = notes_width

    def __rich_console__(self, console: Console, options: "ConsoleOptions") -> "RenderResult":
        tab = self.tab
        width = min(options.max_width, self.notes_width or options.max_width)
        if _boxed_width(tab) <= options.max_width:
            yield _titled(tab, _table(tab, _boxed_widths(tab, options.max_width)), _notes(tab.notes, width))
            return
        headers = tab.short_headers if tab.short_headers is not None else tab.headers
        widths = _compact_widths(tab, headers, options.max_width)
        notes = _notes(tab.short_notes if tab.short_notes is not None else tab.notes, width)
        yield _titled(tab, _compact_table(tab, headers, widths) if widths is not None else _cards(tab, headers), notes)

    def __rich_measure__(self, console: Console, options: "ConsoleOptions") -> "Measurement":
        from rich.measure import Measurement

        return Measurement.get(console, options, _table(self.tab))


def _words(texts: Sequence[str], *, whole_lines: bool) -> list[int]:
    """The widths of the parts of `texts` that must stay on one line: their lines, or their words."""
    from rich.cells import cell_len

    return [cell_len(part) for text in texts for part in (text.splitlines() if whole_lines else text.split())]


def _boxed_width(tab: Tabular) -> int:
    """The narrowest the boxed table can be without cutting a cell: a no-wrap column as wide as its widest
    line, another as its longest word, each with a space either side and a border between (Rich's own
    measure does not count no-wrap columns as such)."""
    widths = [max(_words([header, *(row[index] for row in tab.rows)], whole_lines=index in tab.no_wrap), default=0)
              for index, header in enumerate(tab.headers)]
    return sum(widths) + 3 * len(widths) + 1


def _compact_widths(tab: Tabular, headers: Sequence[str], width: int) -> list[int] | None:
    """Column widths that fit `width` with two spaces between columns (`_narrowed`; the first column's lines
    kept whole). None where even that does not fit."""
    return _narrowed(tab, headers, width - 2 * (len(headers) - 1), frozenset({0}))


def _boxed_widths(tab: Tabular, width: int) -> list[int] | None:
    """The boxed table's column widths at `width` (`_narrowed`, its no-wrap columns' lines kept whole), where
    its cells' widest lines do not fit; None where they do (Rich lays it out). Rich's own narrowing takes the
    widest columns down together, past a word's width where it must, and cuts that word to "…" (a run's
    label in a compare header at 160 columns) although every word could have fitted."""
    natural = sum(max(_words([header, *(row[index] for row in tab.rows)], whole_lines=True), default=0)
                  for index, header in enumerate(tab.headers))
    room = width - 3 * len(tab.headers) - 1
    return None if natural <= room else _narrowed(tab, tab.headers, room, tab.no_wrap, tab.fold, widest_first=True)


def _narrowed(tab: Tabular, headers: Sequence[str], room: int, whole: frozenset[int],
              folded: frozenset[int] = frozenset(), *, widest_first: bool = False) -> list[int] | None:
    """Column widths whose sum fits `room`: every column as wide as its widest line, then narrowed one
    character at a time where that wraps the fewest cells not wrapped yet (then the fewest cells, then the
    widest column), or with `widest_first` the widest column (as Rich narrows a boxed table, which keeps a
    number and its interval together where a wide remark can wrap instead), never below its longest word (a
    column in `whole`: its widest line; one in `folded`, whose long words break across lines: 1). None where
    even that does not fit."""
    columns = [[header, *(row[index] for row in tab.rows)] for index, header in enumerate(headers)]
    lines = [[max(_words([text], whole_lines=True), default=0) for text in texts] for texts in columns]
    narrowest = [1 if index in folded else max(_words(texts, whole_lines=index in whole), default=0)
                 for index, texts in enumerate(columns)]
    widths = [max(column, default=0) for column in lines]
    while sum(widths) > room:
        slack = [index for index, w in enumerate(widths) if w > narrowest[index]]
        if not slack:
            break

        def wrapped(index: int) -> tuple[int, int, int]:
            now = widths[index]
            return sum(line == now for line in lines[index]), sum(line >= now for line in lines[index]), -now

        widths[max(slack, key=lambda index: (widths[index], index)) if widest_first else min(slack, key=wrapped)] -= 1
    return widths if sum(widths) <= room else None


def _table(tab: Tabular, widths: Sequence[int] | None = None) -> "Table":
    """The boxed table: the `no_wrap` columns on one line, the others wrapping between words; its columns
    `widths` wide where given (`_boxed_widths`), else as Rich lays them out."""
    from rich.table import Table

    table = Table()
    for index, header in enumerate(tab.headers):
        table.add_column(
            header,
            justify="right" if index in tab.right_aligned else "left",
            no_wrap=index in tab.no_wrap,
            overflow="fold" if index in tab.fold else "ellipsis",
            width=None if widths is None else widths[index],
        )
    return _filled(tab, table)


def _compact_table(tab: Tabular, headers: Sequence[str], widths: Sequence[int]) -> "Table":
    """The compact table: the short headers, a rule under them and no borders, columns of the widths
    `_compact_widths` chose, whose cells wrap between words."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for index, (header, column_width) in enumerate(zip(headers, widths)):
        table.add_column(header, justify="right" if index in tab.right_aligned else "left", width=column_width,
                         overflow="fold")
    return _filled(tab, table)


def _cards(tab: Tabular, headers: Sequence[str]) -> RenderableType:
    """Too many columns for the width: each row as a card, its first cell as a heading and every other cell
    under it beside its header, wrapped between words (a word wider than the terminal folds)."""
    from rich.table import Table

    cards: list[RenderableType] = []
    for row_index, row in enumerate(tab.rows):
        grid = Table.grid(padding=(0, 2), pad_edge=False)
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for column, (header, value) in enumerate(zip(headers[1:], row[1:]), 1):
            grid.add_row(Text(f"  {header}", style="dim"),
                         Text(value, style=tab.cell_styles.get((row_index, column), "")))
        cards += [Text(row[0], style=tab.cell_styles.get((row_index, 0), "bold")), grid]
    return Group(*cards)


def _filled(tab: Tabular, table: "Table") -> "Table":
    for row_index, row in enumerate(tab.rows):
        # Cells are Text, never markup: labels, paths and fio's messages are user data.
        cells = [Text(value, style=tab.cell_styles.get((row_index, column), "")) for column, value in enumerate(row)]
        table.add_row(*cells, style=tab.styles.get(row_index))
    return table


def _titled(tab: Tabular, table: RenderableType, notes: Sequence[Text]) -> RenderableType:
    parts: list[RenderableType] = []
    if tab.title:
        parts.append(Text(tab.title, style=tab.title_style))
    parts.append(table)
    parts.extend(notes)
    return Group(*parts)


NOTE_INDENT = 2  # the spaces before a note's second and later lines
# A unit after a number ("256.0 MiB", "74 %", "63.0 µs", "2,188 MB/s"), perhaps with the punctuation that
# ends its clause: kept on the number's line, never the first word of the next.
_UNIT = re.compile(r"(?:[KMGTPE]i?B|[kMGTPE]?B|MB/s|IOPS|[mµn]?s|%|x)[,;:.)\]]*")


def _note_words(text: str) -> list[str]:
    """A note's words, a number and its unit as one."""
    words: list[str] = []
    for word in text.split():
        if words and words[-1][-1:].isdigit() and _UNIT.fullmatch(word):
            words[-1] += " " + word
        else:
            words.append(word)
    return words


def _notes(notes: Sequence[str], width: int) -> list[Text]:
    """Each note as its lines (`hanging`), dim."""
    return [Text("\n".join(hanging(note, width)), style="dim") for note in notes]


def hanging(text: str, width: int, indent: int = NOTE_INDENT) -> list[str]:
    """`text` in lines of at most `width` cells, broken between words, every line after the first indented
    by `indent` spaces: where one note ends and the next begins shows (Rich's own wrapping starts every line
    at the margin, and a page of notes ran together). A word wider than a line (a long path) is cut across
    lines rather than shortened: every character but the spaces between words is printed."""
    from rich.cells import cell_len, chop_cells

    indent = indent if width > 4 * indent else 0
    lines: list[str] = []
    line = ""
    for word in _note_words(text):
        room = width - (indent if lines else 0)
        if line and cell_len(line) + 1 + cell_len(word) <= room:
            line += " " + word
            continue
        if line:
            lines.append(line)
            room = width - indent
        while cell_len(word) > room:
            head = chop_cells(word, room)[0] or word[0]  # a character wider than the room still moves on
            lines.append(head)
            word, room = word[len(head):], width - indent
        line = word
    lines.append(line)
    return [lines[0], *(" " * indent + rest for rest in lines[1:])]


EXPORTER = TableExporter()  # what report/formats/__init__.py registers
