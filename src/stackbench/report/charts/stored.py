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
from typing import TYPE_CHECKING, Mapping

from stackbench.report.charts.files import Chart, ChartFiles, renderer

if TYPE_CHECKING:
    from stackbench.model.results import Run


def report_run_key(run: "Run", bins: Mapping[str, Counter[int]] | None) -> tuple[str, str, str]:
    """The key of a (redacted) run's report charts: what they are drawn from, hashed."""
    shown = repr((run, sorted((cell, sorted(counts.items())) for cell, counts in (bins or {}).items())))
    return "report run charts", renderer(), hashlib.sha256(shown.encode()).hexdigest()


def stored_run_figures(files: ChartFiles, run: "Run",
                       bins: Mapping[str, Counter[int]] | None) -> list[Chart]:
    """`run_figures(run, bins=bins)` as SVG: read from `files`, else drawn and kept there. A Chart renders
    its SVG as a Figure does, so a document embeds either."""
    key = report_run_key(run, bins)
    found = files.read(key)
    if found is None:
        from stackbench.report.charts import run_figures

        found = [Chart.of(figure) for figure in run_figures(run, bins=bins)]
        files.write(key, found)
    return found


__all__ = ["report_run_key", "stored_run_figures"]
