"""The list of stored runs (`stackbench runs`): on the terminal short ids and local times, in Markdown and
CSV full ids and UTC times a script can join on, in JSON the fields of docs/json.md."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from stackbench.report.document import Report
from stackbench.report.tabular import Tabular
from stackbench.results import Run

STATUS_STYLES = {"complete": "green", "incomplete": "yellow"}  # any other status (failed, abandoned): red


def runs_report(rows: Sequence[tuple[Run, int]]) -> Report:
    """`rows`: each run with its number of stored cells, newest first, as the store lists them."""
    return Report(tables=(runs_export_table(rows),), data=runs_json(rows), display=(runs_table(rows),))


def runs_table(rows: Sequence[tuple[Run, int]]) -> Tabular:
    headers = ["ID", "Created", "Label", "Status", "Cells", "Plan", "Target"]
    return Tabular(
        headers=headers,
        rows=[
            [
                run.id[:12],
                _local(run.created_at),
                run.label or "",
                run.status,
                f"{count}" if run.planned_cells is None else f"{count}/{run.planned_cells}",
                run.plan_name or run.source,
                run.target or "",
            ]
            for run, count in rows
        ],
        right_aligned=frozenset({4}),
        cell_styles={(index, 3): STATUS_STYLES.get(run.status, "red") for index, (run, _) in enumerate(rows)},
        no_wrap=frozenset({0, 1, 3, 4}),
        fold=frozenset(range(len(headers))),  # a long label, plan or path breaks, it is never cut short
    )


def runs_export_table(rows: Sequence[tuple[Run, int]]) -> Tabular:
    return Tabular(
        ["ID", "Created (UTC)", "Label", "Status", "Cells", "Planned", "Plan", "Target"],
        [
            [run.id, run.created_at.isoformat(), run.label or "", run.status, str(count),
             str(run.planned_cells or ""), run.plan_name or run.source, run.target or ""]
            for run, count in rows
        ],
    )


def runs_json(rows: Sequence[tuple[Run, int]]) -> dict[str, Any]:
    return {
        "runs": [
            {
                "run_id": run.id,
                "label": run.label,
                "status": run.status,
                "source": run.source,
                "created_at": run.created_at.isoformat(),
                "plan": run.plan_name,
                "target": run.target,
                "cells": count,
                "planned_cells": run.planned_cells,
            }
            for run, count in rows
        ]
    }


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")
