"""Goals as tables: the stored goals (`stackbench goal list`), and PASS/FAIL per goal under a run."""

from __future__ import annotations

from typing import Sequence

from stackbench.analysis.goals import GoalResult, describe_runs, describe_selector
from stackbench.model.goal import Goal
from stackbench.report.tabular import Tabular
from stackbench.base.units import format_iops, format_latency_ns, format_mb_per_s

RESULT_STYLES = {"PASS": "bold green", "FAIL": "bold red", "n/a": "dim"}


def goals_table(results: Sequence[GoalResult]) -> Tabular:
    """PASS/FAIL per goal and matching cell, with the margin to the threshold."""
    rows = []
    for result in results:
        goal = result.goal
        if result.value is None:
            value = "-"
        elif goal.metric == "iops":
            value = f"{format_iops(result.value)} IOPS"
        elif goal.metric == "bw":
            value = f"{format_mb_per_s(result.value)} MB/s"
        else:
            value = format_latency_ns(result.value)
        status = "n/a" if result.passed is None else "PASS" if result.passed else "FAIL"
        margin = "-" if result.margin_pct is None else f"{result.margin_pct:+.1f}%"
        rows.append([goal.text, result.cell.pattern if result.cell else "(no matching cell)", value, status, margin])
    return Tabular(
        headers=["Goal", "Cell", "Value", "Result", "Margin"],
        rows=rows,
        title="Goals",
        right_aligned=frozenset({2, 4}),
        cell_styles={(index, 3): RESULT_STYLES[row[3]] for index, row in enumerate(rows)},
        no_wrap=frozenset(),
        title_style="italic",  # a heading under the run's table, not a run's title
    )


def goal_list_table(goals: Sequence[tuple[str, Goal]]) -> Tabular:
    """`goals`: (goal id, goal) as the store lists them; ids are shown as the 8-character prefix
    `goal rm` takes."""
    return Tabular(["ID", "Goal", "Cells", "Runs"],
                   [[gid[:8], g.text, describe_selector(g), describe_runs(g)] for gid, g in goals])
