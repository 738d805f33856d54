"""The docs' generated sections: every table in README.md and docs/*.md that lists a registry's entries is made
here from the registry, between `<!-- registry:NAME -->` and `<!-- /registry:NAME -->`.

`scripts/docs-tables` rewrites the sections in place; tests/test_registries.py fails when a section in the
docs differs from what `SECTIONS` gives, or when a registry's section is in no document. A table written
by hand once said what the code no longer did (docs/run.md, `run --runs`); a generated one cannot.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from stackbench.audit.rules import REGISTRY as AUDIT_RULES
from stackbench.base.units import format_duration, format_size, parse_size
from stackbench.engine.input_formats import FORMATS as INPUT_FORMATS
from stackbench.model.plan import AUTO_FREE_SHARE, build_plan
from stackbench.model.presets import DEFAULT_PRESET, PRESETS, Preset
from stackbench.model.warning import WarningCode
from stackbench.report.charts.kinds import KINDS as CHART_KINDS
from stackbench.report.documents import DOCUMENT_FORMATS
from stackbench.report.formats import EXPORTERS, FORMATS

SECTION = re.compile(
    r"(?P<open><!-- registry:(?P<name>[a-z-]+) -->)\n(?P<body>.*?)(?P<close><!-- /registry:(?P=name) -->)", re.DOTALL)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table; a `|` in a cell is escaped so that it stays in its cell."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(" ".join(str(c).split()).replace("|", "\\|") for c in cells) + " |\n"

    return line(headers) + "|" + "---|" * len(headers) + "\n" + "".join(line(row) for row in rows)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def preset_cells(preset: Preset) -> str:
    """The cells a preset measures, as `show` names them; a full matrix as its dimensions."""
    workloads = build_plan(preset.name).workloads
    sizes = _unique(format_size(w.bs) for w in workloads)
    depths = _unique(str(w.iodepth) for w in workloads)
    patterns = _unique(w.name.split(" ", 2)[2] for w in workloads)
    if len(workloads) > 4 and len(workloads) == len(sizes) * len(depths) * len(patterns):
        text = f"{'/'.join(sizes)} x QD{'/'.join(depths)} x {', '.join(patterns)} ({len(workloads)} cells)"
    else:
        text = ", ".join(w.name for w in workloads)
    io = {None: "O_DIRECT where honoured", True: "O_DIRECT", False: "buffered"}[preset.direct]
    engine = f"; ioengine {preset.ioengine}" if preset.ioengine else ""
    return f"{text}; {io}{engine}" + ("" if preset.time_based else "; the file written once, not for a time")


def preset_runs(preset: Preset) -> str:
    """How many separate fio runs a cell gets and how long each is."""
    runs = f"{preset.runs}-{preset.max_runs} runs" if preset.max_runs else \
        f"{preset.runs} run{'s' if preset.runs > 1 else ''}"
    if not preset.time_based:
        return f"{runs}, {'no ramp' if not preset.ramp else f'{preset.ramp:g} s ramp'}, until the file is written " \
               f"({format_duration(preset.runtime).removesuffix(' 00 min')} cap)"
    return f"{runs} of " + " / ".join(f"{preset.ramp:g} + {runtime:g} s"
                                       for runtime in _unique(preset.runtimes or (preset.runtime,)))


def _bytes(size: str) -> str:
    """`10G` as the docs write a file's size: `10 GiB`."""
    shown = format_size(parse_size(size))
    return f"{shown[:-1]} {shown[-1]}iB"


def presets() -> str:
    room = f"2x RAM, at most {AUTO_FREE_SHARE * 100:.0f} % of the room the free-space check leaves (or the device)"
    rows = [[f"`{p.name}`" + (" (default)" if p.name == DEFAULT_PRESET else ""), p.description, preset_cells(p),
             _bytes(p.size) if p.size else room, preset_runs(p)] for p in PRESETS.values()]
    return table(["preset", "for", "cells", "file", "fio runs per cell (ramp + measured seconds)"], rows)


def import_formats() -> str:
    rows = [[f"`{f.name}`", f.title, f.versions, f.detected_by, f.says, f.computes] for f in INPUT_FORMATS.values()]
    return table(["`--input-format`", "format", "versions", "detected by", "what the file says",
                  "what the import computes or cannot know"], rows)


def output_formats() -> str:
    return table(["format", "gives"], [[f"`{e.name}`" + (" (default)" if e.name == FORMATS[0] else ""), e.description]
                                       for e in EXPORTERS.values()])


def document_formats() -> str:
    first = next(iter(DOCUMENT_FORMATS))
    return table(["`--format`", "file names", "what it is"], [
        [" or ".join(f"`{name}`" for name in (f.name, *f.aliases)) + (" (default)" if f.name == first else ""),
         ", ".join(f"`{suffix}`" for suffix in f.suffixes), f.description] for f in DOCUMENT_FORMATS.values()])


def chart_kinds() -> str:
    first = next(iter(CHART_KINDS))
    rows = [[f"`{k.name}`" + (" (default)" if k.name == first else ""), k.summary, k.draws,
             ", ".join(f"`{o}`" + (" (needed)" if o in k.needs else "") for o in k.options)]
            for k in CHART_KINDS.values()]
    return table(["`--kind`", "draws", "from", "its own options"], rows)


def audit_rules() -> str:
    return table(["id", "severity", "status", "checks"],
                 [[r.id, "/".join(r.severities), r.status, r.checks] for r in AUDIT_RULES])


def warning_codes() -> str:
    return table(["code", "meaning", "fix"], [[f"`{code.value}`", code.meaning, code.fix] for code in WarningCode])


# Section name -> what it holds. A registry's section may appear in several documents; each must be in one.
SECTIONS: dict[str, Callable[[], str]] = {
    "presets": presets,
    "import-formats": import_formats,
    "output-formats": output_formats,
    "document-formats": document_formats,
    "chart-kinds": chart_kinds,
    "audit-rules": audit_rules,
    "warning-codes": warning_codes,
}


def rewrite(text: str) -> str:
    """`text` with every generated section made again from its registry; ValueError for a section name
    that `SECTIONS` does not know (a typo in a marker would otherwise leave a table that is never checked)."""
    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in SECTIONS:
            raise ValueError(f"no generated section {name!r}: use one of {', '.join(SECTIONS)}")
        return f"{match['open']}\n{SECTIONS[name]()}{match['close']}"

    return SECTION.sub(fill, text)


def sections_in(text: str) -> list[str]:
    """The names of the generated sections a document holds, in order."""
    return [match["name"] for match in SECTION.finditer(text)]
