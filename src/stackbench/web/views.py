"""What the pages show, built from the same report builders as the CLI (report/run.py, compare.py,
goals.py): a `Tabular` becomes an HTML table cell for cell, so the numbers and their units are the
terminal's. Nothing here formats a number. A share link's holder sees the runs redacted (`shared_views`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from stackbench.model.results import Run
from stackbench.report.tabular import Tabular


@dataclass(frozen=True)
class HtmlTable:
    title: str | None
    headers: Sequence[str]
    rows: Sequence[Sequence[tuple[str, str]]]  # (text, css classes) per cell
    notes: Sequence[str]


def _classes(style: str) -> str:
    """A Rich style ("bold green") as CSS classes ("s-bold s-green"); only plain words pass."""
    return " ".join(f"s-{word}" for word in style.split() if re.fullmatch(r"[a-z]+", word))


def html_table(table: Tabular) -> HtmlTable:
    rows = []
    for r, row in enumerate(table.rows):
        cells = []
        for c, text in enumerate(row):
            classes = ["num"] if c in table.right_aligned else []
            style = table.cell_styles.get((r, c)) or table.styles.get(r) or ""
            if style:
                classes.append(_classes(style))
            cells.append((str(text), " ".join(classes)))
        rows.append(cells)
    return HtmlTable(table.title, list(table.headers), rows, list(table.notes))


def text_lines(group: Any) -> list[tuple[str, str]]:
    """Lines of Rich text (a Group of `Text`, as report/smallblocks.recommendation_text builds them for the
    terminal) as (plain text, CSS classes): the words are the terminal's, the style only a class."""
    return [(line.plain, _classes(str(line.style or ""))) for line in group.renderables]


def fact_rows(facts: dict[str, Any], limit: int = 400) -> list[tuple[str, str]]:
    """A run's facts as (name, value) rows: nested objects one level deep as `target.fs_type`, anything
    deeper or a list as compact JSON, cut at `limit` characters."""
    rows: list[tuple[str, str]] = []

    def text(value: Any) -> str:
        shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        return shown if len(shown) <= limit else shown[:limit] + " …"

    for key in sorted(facts):
        value = facts[key]
        if isinstance(value, dict) and value:
            for sub in sorted(value):
                rows.append((f"{key}.{sub}", text(value[sub])))
        else:
            rows.append((key, text(value)))
    return rows


def shared_views(*runs: Run) -> list[Run]:
    """What a share link's holder sees of runs: redacted copies, as `stackbench report` makes them
    (report/redact.py: host names, serials, WWNs, MACs, user names in paths become placeholders), one
    redactor for all the runs of a page so that a host is the same placeholder in both runs of a compare."""
    from stackbench.report.redact import redactor

    redact = redactor()
    for run in runs:
        redact.learn_run(run)
    return [redact.run(run) for run in runs]
