"""A run's stored warnings as a table: code (for scripts, docs/json.md), what it is about, what was seen and
what fixes it."""

from __future__ import annotations

from stackbench.report.tabular import Tabular
from stackbench.model.results import Run


def warnings_table(run: Run) -> Tabular:
    rows = [[w.code.value, w.subject or "the run", w.text, w.fix or "-"] for w in run.warnings]
    return Tabular(headers=["Code", "About", "Warning", "Fix"], rows=rows, title="Warnings", fold=frozenset({2, 3}))
