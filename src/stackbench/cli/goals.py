"""`stackbench goal add|list|rm`: success criteria that `run` and `show` check with PASS/FAIL."""

from __future__ import annotations

from typing import Optional

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import (
    DbOption, FormatOption, JsonOption, JsonReplyOption, check_label, chosen_format, emit_report, open_store_from,
    print_json,
)
from stackbench.report.document import Report

goal_app = typer.Typer(
    help="Success criteria, e.g. \"seq write 1M >= 117 MB/s\", checked by run and show against the runs they "
    "are for.", no_args_is_help=True
)
app.add_typer(goal_app, name="goal")


def _check_plan(value: Optional[str]) -> Optional[str]:
    """A plan's name as runs store it: a preset (blog, which covers blog+custom), custom, import, ..."""
    from stackbench.base.usertext import refusal

    if value is None:
        return None
    if not value.strip() or value != value.strip() or len(value) > 200:
        raise typer.BadParameter("a plan is a preset's name as `stackbench runs` shows it, e.g. blog or quick")
    reason = refusal("a plan", value)
    if reason is not None:
        raise typer.BadParameter(reason)
    return value


@goal_app.command("add")
def goal_add(
    text: str = typer.Argument(..., help='The goal, e.g. "seq write 1M >= 117 MB/s" or "p99 <= 1 ms".', show_default=False),
    label: Optional[str] = typer.Option(
        None, "--label", "-l", metavar="LABEL", callback=check_label, show_default=False,
        help="Check the goal only against runs with this label (an ab session's arms are LABEL-a and LABEL-b).",
    ),
    plan: Optional[str] = typer.Option(
        None, "--plan", "-p", metavar="PLAN", callback=_check_plan, show_default=False,
        help="Check the goal only against runs of this plan, as `runs` shows it: a preset's name covers its "
        "runs with changed cells too (blog covers blog+custom).",
    ),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Store a goal. Words before the comparison select cells (seq/rnd, read/write, block size, QDn, Tn,
    sync); p50/p99/p99.9/mean pick the latency statistic; the unit (IOPS, MB/s, GB/s, ms, us, ns) picks the
    metric. Without a selector the goal applies to every cell.

    A goal set for a label or a plan is checked against those runs only, and says n/a where such a run
    lacks its cell; a goal for every run is checked wherever a run has a matching cell.

    Examples:

        stackbench goal add "seq write 1M >= 117 MB/s" --label vm

        stackbench goal add "4K QD4 rnd write >= 3000 IOPS" --plan blog

        stackbench goal add "sync write p99 <= 1 ms"
    """
    from stackbench.analysis.goals import describe_runs, describe_selector, parse_goal

    goal = parse_goal(text, label=label, plan=plan)
    goal_id = open_store_from(db).add_goal(goal)
    if json_output:
        print_json({"goal_id": goal_id, **goal.to_dict()})
    else:
        out.print(f"Added goal {goal_id[:8]}: {goal.text}  (cells: {describe_selector(goal)}; runs: "
                  f"{describe_runs(goal)})", highlight=False)


@goal_app.command("list")
def goal_list(
    db: Optional[str] = DbOption, output_format: str = FormatOption, json_output: bool = JsonOption
) -> None:
    """List stored goals."""
    from stackbench.report.goals import goal_list_table

    goals = open_store_from(db).list_goals()
    fmt = chosen_format(output_format, json_output)
    if not goals and fmt == "table":
        out.print('No goals yet. Add one: stackbench goal add "seq write 1M >= 117 MB/s"')
        return
    data = {"goals": [{"goal_id": gid, **goal.to_dict()} for gid, goal in goals]}
    emit_report(fmt, Report(tables=(goal_list_table(goals),), data=data))


@goal_app.command("rm")
def goal_rm(
    goal: str = typer.Argument(..., help="Goal id prefix (from goal list) or its exact text.", show_default=False),
    db: Optional[str] = DbOption,
) -> None:
    """Remove a goal."""
    removed = open_store_from(db).remove_goal(goal)
    out.print(f"Removed goal: {removed.text}", highlight=False)
