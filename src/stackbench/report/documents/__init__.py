"""Shareable report documents, one module per format: `stackbench report` (docs/reports.md).

A document renders a `Contents` (contents.py): runs already redacted and analysed, charts already drawn by
the caller (report/charts), so the documents never load, compute, redact or draw. Each format gives the
bytes of the main file and of any files that sit beside it (Markdown's PNG charts); the command writes them
all or none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stackbench.base.errors import UsageError
from stackbench.report.documents.contents import Contents

# The main file's bytes, and the files beside it: (file name in the main file's directory, bytes).
Document = tuple[bytes, list[tuple[str, bytes]]]


@dataclass(frozen=True)
class DocumentFormat:
    name: str  # what --format calls it
    suffixes: tuple[str, ...]  # file name endings that choose it; the first is the default
    render: Callable[[Contents, str], Document]  # (contents, the output file's stem) -> document


def _html(contents: Contents, stem: str) -> Document:
    from stackbench.report.documents.html import render_html

    return render_html(contents), []


def _markdown(contents: Contents, stem: str) -> Document:
    from stackbench.report.documents.markdown import render_markdown

    return render_markdown(contents, stem)


def _xlsx(contents: Contents, stem: str) -> Document:
    from stackbench.report.documents.xlsx import render_xlsx

    return render_xlsx(contents), []


DOCUMENT_FORMATS: dict[str, DocumentFormat] = {
    f.name: f for f in (
        DocumentFormat("html", (".html", ".htm"), _html),
        DocumentFormat("md", (".md", ".markdown"), _markdown),
        DocumentFormat("xlsx", (".xlsx",), _xlsx),
    )
}


_ALIASES = {"markdown": "md", "htm": "html"}  # what the other commands' --format says, and the other suffix


def document_format(name: str | None, suffix: str) -> DocumentFormat:
    """The format named by --format, else the one the output file's suffix names, else HTML."""
    if name is not None:
        try:
            return DOCUMENT_FORMATS[_ALIASES.get(name.lower(), name.lower())]
        except KeyError:
            raise UsageError(f"unknown --format {name!r} for a report",
                             f"Use one of: {', '.join(DOCUMENT_FORMATS)}") from None
    for fmt in DOCUMENT_FORMATS.values():
        if suffix.lower() in fmt.suffixes:
            return fmt
    if suffix:
        raise UsageError(f"cannot tell the report format from the file name ending {suffix!r}",
                         f"Name the file .html, .md or .xlsx, or pass --format {'|'.join(DOCUMENT_FORMATS)}")
    return DOCUMENT_FORMATS["html"]


__all__ = ["DOCUMENT_FORMATS", "Contents", "Document", "DocumentFormat", "document_format"]
