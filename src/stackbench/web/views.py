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
            if c in table.tree:  # the layers' indentation, which HTML would collapse
                classes.append("tree")
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


# A run page's fact groups, in reading order: (title, the fact_rows names it shows). Anything else is in the
# raw list only, which the page folds (`<details>`): boot ids, start ticks and the plan's JSON are there.
FACT_GROUPS = (
    ("File system", ("target.path", "target.kind", "target.fs_type", "target.mount_point", "target.mount_source",
                     "target.mount_options")),
    ("ZFS", ("target.zfs_*", "zfs.*")),  # a name ending in * is every fact it begins
    ("Machine and kernel", ("system.hostname", "system.os", "system.kernel", "system.arch", "system.cpu_model",
                            "system.cpu_count", "system.ram_bytes", "system.virtualization", "system.container")),
    ("fio", ("fio_version", "fio_path", "stackbench_version")),
)


def fact_groups(facts: dict[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The facts a reader looks for, grouped (`FACT_GROUPS`, each name shown without its section, and the
    target's devices one row each), the groups with no fact left out."""
    rows = dict(fact_rows(facts))
    devices = (facts.get("target") or {}).get("block_devices") if isinstance(facts.get("target"), dict) else None
    groups = []
    if isinstance(devices, list) and devices:
        groups.append(("Device", [(str(d.get("name") or d.get("path") or "?"), _device(d))
                                  for d in devices if isinstance(d, dict)]))
    for title, names in FACT_GROUPS:
        picked = [name for wanted in names for name in rows
                  if (name.startswith(wanted[:-1]) if wanted.endswith("*") else name == wanted)]
        shown = [(name.rsplit(".", 1)[-1].replace("_", " "), rows[name]) for name in picked
                 if rows[name] not in ("null", "")]
        if shown:
            groups.append((title, shown))
    return groups


def _device(device: dict[str, Any]) -> str:
    """One block device of the stack under the target, in one line: what it is and how it is driven."""
    from stackbench.base.units import format_size

    parts = [" ".join(str(device[k]).strip() for k in ("vendor", "model") if device.get(k))]
    if isinstance(device.get("size_bytes"), int):
        parts.append(format_size(device["size_bytes"]))
    if device.get("rotational") is not None:
        parts.append("rotational" if device["rotational"] else "non-rotational")
    for key in ("role", "scheduler", "dm_name"):
        if device.get(key):
            parts.append(f"{key.replace('_', ' ')} {device[key]}")
    return ", ".join(part for part in parts if part)


def shared_views(*runs: Run) -> list[Run]:
    """What a share link's holder sees of runs: redacted copies, as `stackbench report` makes them
    (report/redact.py: host names, serials, WWNs, MACs, user names in paths become placeholders), one
    redactor for all the runs of a page so that a host is the same placeholder in both runs of a compare."""
    from stackbench.report.redact import redactor

    redact = redactor()
    for run in runs:
        redact.learn_run(run)
    return [redact.run(run) for run in runs]
