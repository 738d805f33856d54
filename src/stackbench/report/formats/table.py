"""The terminal table: Rich tables with a bold title above and dim notes below.

Rendered into a string through a Console given the output console's width and colour system, so the text
is exactly what printing the tables on that console would show, colours included on a terminal, and the
same bytes in a pipe.
"""

from __future__ import annotations

import io
from typing import Sequence

from rich.console import Console, Group, RenderableType
from rich.text import Text

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen
from stackbench.report.tabular import Tabular


class TableExporter:
    name = "table"
    description = "the terminal's table, in colour on a terminal and plain in a pipe"

    def render(self, report: Report, screen: Screen) -> str:
        buffer = io.StringIO()
        console = Console(
            file=buffer, width=screen.width, height=25, color_system=screen.color_system, no_color=screen.no_color,
            force_terminal=False, markup=False, highlight=False, emoji=False, legacy_windows=False,
        )
        console.print(renderable(report.terminal_tables))
        return buffer.getvalue()


def renderable(tables: Sequence[Tabular]) -> RenderableType:
    """The tables one under the other, as Rich renderables (for a live console, or a test's own)."""
    return Group(*(_tabular(tab) for tab in tables))


def _tabular(tab: Tabular) -> RenderableType:
    from rich.table import Table

    table = Table()
    for index, header in enumerate(tab.headers):
        table.add_column(
            header,
            justify="right" if index in tab.right_aligned else "left",
            no_wrap=index in tab.no_wrap,
            overflow="fold" if index in tab.fold else "ellipsis",
        )
    for row_index, row in enumerate(tab.rows):
        # Cells are Text, never markup: labels, paths and fio's messages are user data.
        cells = [Text(value, style=tab.cell_styles.get((row_index, column), "")) for column, value in enumerate(row)]
        table.add_row(*cells, style=tab.styles.get(row_index))
    parts: list[RenderableType] = []
    if tab.title:
        parts.append(Text(tab.title, style=tab.title_style))
    parts.append(table)
    parts.extend(Text(note, style="dim") for note in tab.notes)
    return Group(*parts)


EXPORTER = TableExporter()  # what report/formats/__init__.py registers
