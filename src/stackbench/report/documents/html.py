"""The report as one self-contained HTML file: inline CSS, charts as inline SVG, no request of any kind.

The page forbids itself every fetch with a Content-Security-Policy meta tag (`default-src 'none'`; inline
styles allowed; images only from data: URIs, which a chart may embed), so even a chart or a label that
tried to load something could not. Jinja2 renders it with autoescape on: labels, paths and facts are text,
never markup. The layout reads on a 1366 px laptop without sideways scrolling (tables take the whole column,
text keeps a width that reads; a number keeps its unit and interval on one line and only its remark in
brackets may wrap below it; a long label in a header breaks), on a phone (tables scroll sideways inside their
box, the page never does), and prints (no navigation, no shadows, tables not split mid-row).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from stackbench.report.documents.contents import Contents, Document
from stackbench.report.documents.outline import Chart, Code, Heading, Table, Text, outline
from stackbench.base.usertext import shown, shown_in_template

if TYPE_CHECKING:
    import jinja2

    from stackbench.report.charts.figure import Figure

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
_STYLE_CLASSES = (("green", "good"), ("red", "bad"), ("yellow", "warn"), ("dim", "dim"))


def render(contents: Contents, stem: str) -> Document:
    """`report`'s HTML document: one self-contained file."""
    return render_html(contents), []


def render_html(contents: Contents) -> bytes:
    """The whole page, UTF-8."""
    blocks = outline(contents)
    page = _template().render(
        title=contents.title,
        csp=CSP,
        blocks=[_view(block) for block in blocks],
        toc=[block for block in blocks if isinstance(block, Heading) and block.level == 2],
    )
    return page.encode("utf-8")


@lru_cache(maxsize=1)
def _template() -> "jinja2.Template":
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("stackbench.report.documents", "templates"),
        autoescape=True,  # always: the template is .j2, which select_autoescape would not recognise
        finalize=shown_in_template,  # labels, paths, facts with their invisible characters escaped (usertext)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template("report.html.j2")


def _view(block: Any) -> dict[str, Any]:
    """A block as the template reads it: plain values, and the one piece of trusted markup (a chart's SVG)."""
    if isinstance(block, Heading):
        return {"type": "heading", "level": block.level, "text": block.text, "anchor": block.anchor}
    if isinstance(block, Table):
        tab = block.table
        rows = []
        for r, row in enumerate(tab.rows):
            cells = []
            for c, text in enumerate(row):
                parts = _pieces(text) if c in tab.right_aligned else [text]
                classes = (_column(tab, c), "pieces" if len(parts) > 1 else "", _css(tab.cell_styles.get((r, c), "")))
                cells.append({"text": text, "parts": parts, "cls": " ".join(filter(None, classes))})
            rows.append({"cells": cells, "cls": _css(tab.styles.get(r, ""))})
        headers = [{"text": text, "cls": " ".join(filter(None, ("num" if c in tab.right_aligned else "",
                                                                "long" if _long_word(text) else "")))}
                   for c, text in enumerate(tab.headers)]
        return {"type": "table", "title": tab.title or "", "headers": headers, "rows": rows, "notes": list(tab.notes)}
    if isinstance(block, Text):
        return {"type": "text", "text": block.text, "kind": block.kind}
    if isinstance(block, Code):
        return {"type": "code", "text": block.text, "caption": block.caption}
    if isinstance(block, Chart):
        return {"type": "chart", "number": block.number, "title": block.figure.title, "alt": block.figure.alt,
                "svg": inline_svg(block.figure, f"c{block.number}-")}
    raise TypeError(f"no HTML view for {type(block).__name__}")


def _column(tab: Any, column: int) -> str:
    """The table's hints as classes: numbers right-aligned, row names kept on one line, long words broken,
    a tree's indentation kept."""
    hints = [("num", tab.right_aligned), ("nowrap", tab.no_wrap), ("fold", tab.fold), ("tree", tab.tree)]
    return " ".join(name for name, columns in hints if column in columns)


# A right-aligned cell is a number with its unit and interval ("3,008 ± 1.1%", "+19.9% [+18.5%, +21.4%]"),
# which never breaks; the remark in brackets after it ("(p<0.001 n=5+5)", "(runs 14,465 to 96,135)",
# "(untested)") may take a line of its own, so that the column is as wide as its widest piece, not as the
# whole text on one line (compare's `vs A` was 40 characters wide and pushed the verdict out of the page).
_REMARK = re.compile(r" (?=\()")
# A header word longer than this (an arm's label in compare's `A: tune-1a2b3c4d-zfs.module.zfs_arc_max-a
# IOPS`) may break anywhere: the column's cells, not its name, set its width.
_LONG_WORD = 20


def _pieces(text: str) -> list[str]:
    """A right-aligned cell's text in the pieces that each stay on one line."""
    return _REMARK.split(text) if isinstance(text, str) else [text]


def _long_word(text: str) -> bool:
    return isinstance(text, str) and any(len(word) > _LONG_WORD for word in text.split())


def _css(style: str) -> str:
    return " ".join(cls for word, cls in _STYLE_CLASSES if word in style)


def inline_svg(figure: "Figure", prefix: str) -> Any:
    """The chart's SVG ready to sit inside HTML: no XML prolog or DOCTYPE, ids prefixed so two charts in one
    page cannot share one, and its alt text as the accessible name."""
    from markupsafe import Markup, escape

    svg = figure.render("svg").decode("utf-8")
    start = svg.find("<svg")
    if start < 0:
        raise ValueError(f"chart {figure.title!r} did not render as SVG")
    svg = svg[start:]
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{escape(shown(figure.alt))}"', 1)
    return Markup(svg)  # matplotlib escapes every text it writes; nothing of ours is spliced in unescaped
