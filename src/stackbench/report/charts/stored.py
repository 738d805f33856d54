"""A report run's charts kept as drawn, by what they show, so that `report` embeds them without matplotlib
(issue 34: importing matplotlib and rendering a 48-cell run's four charts cost more than the 1 s the
whole HTML report may take).

The key is the redacted run itself (its repr: every field a chart is drawn from, the placeholders
included), its json+ latency buckets and the renderer's version (files.renderer): a chart of another run,
of the same run redacted otherwise or relabelled, or drawn by another renderer has another key and is never
reused; a run whose repr is not the same in every process (none today) would only be drawn every time.
`run` and `import` draw a new run's charts into the directory (load/report_contents.store_report_charts), so
that its first report finds them. A kept chart is its SVG only: a document that needs PNG (Markdown) draws.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from stackbench.report.charts.files import Chart, ChartFiles, renderer

if TYPE_CHECKING:
    from stackbench.model.results import Run
    from stackbench.report.charts.figure import ImageFormat


@dataclass(frozen=True)
class StoredFigure:
    """A chart as `Figure` renders it as SVG, read from the chart directory instead of drawn."""

    kind: str
    title: str
    alt: str
    svg: bytes

    def render(self, fmt: "ImageFormat") -> bytes:
        if fmt != "svg":
            raise ValueError(f"a kept chart has no {fmt}: only its SVG is kept")
        return self.svg


def report_run_key(run: "Run", bins: Mapping[str, Counter[int]] | None) -> tuple[str, str, str]:
    """The key of a (redacted) run's report charts: what they are drawn from, hashed."""
    shown = repr((run, sorted((cell, sorted(counts.items())) for cell, counts in (bins or {}).items())))
    return "report run charts", renderer(), hashlib.sha256(shown.encode()).hexdigest()


def stored_run_figures(files: ChartFiles, run: "Run",
                       bins: Mapping[str, Counter[int]] | None) -> list["StoredFigure"]:
    """`run_figures(run, bins=bins)` as SVG: read from `files`, else drawn and kept there."""
    key = report_run_key(run, bins)
    found = files.read(key)
    if found is None:
        from stackbench.report.charts import run_figures

        found = [Chart(f.title, f.alt, f.render("svg"), f.kind) for f in run_figures(run, bins=bins)]
        files.write(key, found)
    return [StoredFigure(chart.kind, chart.title, chart.alt, chart.svg) for chart in found]


__all__ = ["StoredFigure", "report_run_key", "stored_run_figures"]
