"""One table model, several renderings: terminal (Rich), Markdown, CSV. JSON comes from the domain objects.

Commands build a `Tabular` from what analysis returned and hand it to `render`; nothing here computes.
"""

from __future__ import annotations

import csv
import io

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from stackbench.report.tabular import Tabular

FORMATS = ("table", "markdown", "csv", "json")


def to_rich(tab: Tabular) -> RenderableType:
    table = Table()
    for index, header in enumerate(tab.headers):
        table.add_column(header, justify="right" if index in tab.right_aligned else "left", no_wrap=index == 0)
    for index, row in enumerate(tab.rows):
        table.add_row(*row, style=tab.styles.get(index))
    parts: list[RenderableType] = []
    if tab.title:
        parts.append(Text(tab.title, style="bold"))
    parts.append(table)
    parts.extend(Text(note, style="dim") for note in tab.notes)
    return Group(*parts)


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def to_markdown(tab: Tabular) -> str:
    lines = []
    if tab.title:
        lines += [f"**{tab.title}**", ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in tab.headers) + " |")
    lines.append(
        "|" + "|".join("---:" if i in tab.right_aligned else ":---" for i in range(len(tab.headers))) + "|"
    )
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in tab.rows]
    if tab.notes:
        lines.append("")
        lines += [f"{note}  " for note in tab.notes]
    return "\n".join(lines) + "\n"


def to_csv(tab: Tabular) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(tab.headers)
    writer.writerows(tab.rows)
    return buffer.getvalue()
