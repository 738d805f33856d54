"""The one protocol every output format implements, in the manner of hyperfine's exporters: a whole
`Report` in, the text to print out. Formats do not print and do not compute; adding one is a module here
with its `EXPORTER`, and its name in `MODULES` (report/formats/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from stackbench.report.document import Report


@dataclass(frozen=True)
class Screen:
    """Where the text will be shown. Only the terminal table reads it: the width it lays columns out in and
    the colours it may use (None: none, as in a pipe). The file formats are the same bytes everywhere."""

    width: int
    color_system: str | None = None  # Rich's names: "standard", "256", "truecolor", "windows"
    no_color: bool = False  # NO_COLOR: bold and dim stay, colours go
    # The width the tables' notes wrap at, where narrower than `width`: a pipe's 80 columns under a table
    # laid out in 160 to keep its rows whole (cli/app.py). None: `width`.
    notes_width: int | None = None


class Exporter(Protocol):
    name: str  # what --format calls it
    description: str  # what it gives, in one line: the docs' table of formats (README.md)

    def render(self, report: Report, screen: Screen) -> str:
        """The report as this format's text, ending in a newline."""
        ...
