"""The report as Markdown that pastes into GitHub, GitLab, Reddit and forums: the tables as pipe tables
(report/formats/markdown.py), commands and job files in fenced blocks, and each chart as a PNG file beside
the .md (`REPORT-1-matrix.png`, `REPORT-2-latency.png`, ...), linked by its relative name.

User text outside code blocks is escaped (`*`, `_`, `[`, `<`, ...), so a label is shown as typed and never
becomes emphasis, a link or HTML.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from stackbench.report.document import Report
from stackbench.report.documents.contents import Contents, Document
from stackbench.report.documents.outline import Chart, Code, Heading, Table, Text, outline
from stackbench.report.formats.exporter import Screen
from stackbench.report.formats.markdown import MarkdownExporter, escape
from stackbench.base.usertext import shown


def chart_file_name(stem: str, chart: Chart) -> str:
    """`REPORT-3-compare.png`: the report's stem, the chart's number in the report, its kind."""
    kind = re.sub(r"[^a-z0-9]+", "-", chart.figure.kind.lower()).strip("-") or "chart"
    return f"{stem}-{chart.number}-{kind}.png"


def render(contents: Contents, stem: str) -> Document:
    """The Markdown text, and the charts as PNG files named after `stem` (the .md file's name without its
    suffix) to write beside it."""
    parts: list[str] = []
    images: list[tuple[str, bytes]] = []
    for block in outline(contents):
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {escape(block.text)}")
        elif isinstance(block, Text):
            parts.append(f"> **Warning:** {escape(block.text)}" if block.kind == "warning" else escape(block.text))
        elif isinstance(block, Table):
            parts.append(MarkdownExporter().render(Report(tables=(block.table,)), Screen(width=160)).rstrip())
        elif isinstance(block, Code):
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", block.text)), default=0))
            caption = f"*{escape(block.caption)}*\n\n" if block.caption else ""
            code = shown(block.text.rstrip(), keep="\n\t")  # a job file's lines kept, nothing else invisible
            parts.append(f"{caption}{fence}{block.language}\n{code}\n{fence}")
        elif isinstance(block, Chart):
            name = chart_file_name(stem, block)
            images.append((name, block.figure.render("png")))
            parts.append(f"![{escape(block.figure.alt)}]({quote(name)})\n\n*{escape(block.figure.title)}*")
    return ("\n\n".join(parts) + "\n").encode("utf-8"), images
