"""Markdown: a bold title, a pipe table with the columns' alignment, the notes as lines; ready to paste
into notes, issues and wikis.

Every text is escaped (`*`, `_`, `[`, `<`, `|`, ...): a label, a path or a note reads as typed where the
Markdown is shown, and never becomes a link, an image, HTML or a broken table.
"""

from __future__ import annotations

import re

from stackbench.report.document import Report
from stackbench.report.formats.exporter import Screen
from stackbench.report.tabular import Tabular
from stackbench.base.usertext import shown


class MarkdownExporter:
    name = "markdown"
    description = "Markdown to paste into notes: the terminal's tables and their notes"

    def render(self, report: Report, screen: Screen) -> str:
        return "\n".join(_table(tab) for tab in report.tables)


def _table(tab: Tabular) -> str:
    lines = []
    if tab.title:
        lines += [f"**{_cell(tab.title)}**", ""]
    lines.append("| " + " | ".join(_cell(h) for h in tab.headers) + " |")
    lines.append(
        "|" + "|".join("---:" if i in tab.right_aligned else ":---" for i in range(len(tab.headers))) + "|"
    )
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in tab.rows]
    if tab.notes:
        lines.append("")
        lines += [f"{_cell(note)}  " for note in tab.notes]  # two spaces: a line break, not one paragraph
    return "\n".join(lines) + "\n"


_SPECIAL = re.compile(r"([\\`*_\[\]<>#~!|])")


def escape(text: str) -> str:
    """Markdown's special characters backslash-escaped: the text reads as typed; invisible and control
    characters written as `\\u202e` first (usertext.shown), so they can neither reorder nor break it."""
    return _SPECIAL.sub(r"\\\1", shown(text))


def _cell(value: str) -> str:
    return escape(value).replace("\n", " ")


EXPORTER = MarkdownExporter()  # what report/formats/__init__.py registers
