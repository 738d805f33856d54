"""Shareable report documents, one module per format: `stackbench report` (docs/reports.md).

A document renders a `Contents` (contents.py): runs already redacted and analysed, charts already drawn by
the caller (report/charts), so the documents never load, compute, redact or draw. Each format gives the
bytes of the main file and of any files that sit beside it (Markdown's PNG charts); the command writes them
all or none.

A new format is a module here with `render(contents, stem) -> Document` and one `DocumentFormat(...)` in
`DOCUMENT_FORMATS`: `report --format`'s help, its errors and docs/reports.md's table are made from the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from stackbench.base.errors import UsageError
from stackbench.base.registry import by_name, one_of, unknown
from stackbench.report.documents.contents import Contents, Document


@dataclass(frozen=True)
class DocumentFormat:
    name: str  # what --format calls it
    suffixes: tuple[str, ...]  # file name endings that choose it; the first is the default
    module: str  # the module here whose `render` makes it, imported when a document is made (Jinja2, openpyxl)
    description: str  # what it is, in one line: help and docs
    aliases: tuple[str, ...] = ()  # other names --format takes for it (what the printed formats call it)

    def render(self, contents: Contents, stem: str) -> Document:
        """The document of `contents`; `stem` is the output file's name without its suffix."""
        return import_module(f"{__name__}.{self.module}").render(contents, stem)  # type: ignore[no-any-return]


# The first is the default.
DOCUMENT_FORMATS: dict[str, DocumentFormat] = by_name(
    DocumentFormat("html", (".html", ".htm"), "html", "one self-contained file: inline charts, no network request",
                   aliases=("htm",)),
    DocumentFormat("md", (".md", ".markdown"), "markdown", "Markdown with the charts as PNG files beside it",
                   aliases=("markdown",)),
    DocumentFormat("xlsx", (".xlsx",), "xlsx", "an Excel workbook with native charts"),
)


def document_format(name: str | None, suffix: str) -> DocumentFormat:
    """The format named by --format, else the one the output file's suffix names, else the first."""
    if name is not None:
        for fmt in DOCUMENT_FORMATS.values():
            if name.lower() in (fmt.name, *fmt.aliases):
                return fmt
        raise unknown("report --format", name, DOCUMENT_FORMATS)
    for fmt in DOCUMENT_FORMATS.values():
        if suffix.lower() in fmt.suffixes:
            return fmt
    if suffix:
        raise UsageError(f"cannot tell the report format from the file name ending {suffix!r}",
                         f"Name the file {one_of(f.suffixes[0] for f in DOCUMENT_FORMATS.values())}, or pass "
                         f"--format {'|'.join(DOCUMENT_FORMATS)}")
    return next(iter(DOCUMENT_FORMATS.values()))


__all__ = ["DOCUMENT_FORMATS", "Contents", "Document", "DocumentFormat", "document_format"]
