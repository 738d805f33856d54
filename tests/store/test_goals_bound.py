"""Goals set for some runs, in a real store: a goal keeps the label and the plan it was set for (in its spec,
beside the criterion); a goal stored before they existed reads as a goal for every run, checked where a run
has a matching cell and never shown as n/a on a run without one (real SQLite, and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import insert

from stackbench.analysis.goals import evaluate, parse_goal
from stackbench.base.errors import UsageError
from stackbench.store import Store, schema
from synthetic import cell, run

GOAL = "4K QD4 rnd write >= 3000 IOPS"
# A goal's row as stackbench wrote it before goals had runs: the criterion's fields, nothing else.
OLDER_SPEC = {"text": GOAL, "metric": "iops", "statistic": None, "op": ">=", "threshold": 3000.0,
              "rw": ["randwrite"], "bs": 4096, "iodepth": 4, "numjobs": None, "sync": None}


def _check(url: str) -> None:
    store = Store(url)
    try:
        with store.engine.begin() as connection:
            connection.execute(insert(schema.goals).values(
                id="a" * 32, text=GOAL, spec=OLDER_SPEC, created_at=datetime(2024, 5, 1, tzinfo=timezone.utc)))
        [(goal_id, older)] = store.list_goals()
        assert goal_id == "a" * 32 and (older.label, older.plan) == (None, None) and not older.bound
        store.add_goal(parse_goal(GOAL, label="host", plan="blog"))
        bound = next(goal for gid, goal in store.list_goals() if gid != goal_id)
        assert (bound.label, bound.plan) == ("host", "blog")
        goals = [goal for _, goal in store.list_goals()]
    finally:
        store.dispose()
    matching, other_cells = run([cell(iops=5000)], label="vm"), run([cell(rw="read", bs=1024**2)], label="vm")
    assert [r.goal for r in evaluate(goals, matching)] == [older]  # for every run: checked where it matches
    assert evaluate(goals, other_cells) == []  # and no n/a row where it does not


def test_older_goals_are_for_every_run_and_a_new_one_keeps_its_runs(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_on_postgresql(pg_database: str) -> None:
    _check(pg_database)


def test_a_goal_refuses_a_label_no_run_could_have() -> None:
    with pytest.raises(UsageError, match="a label cannot contain"):
        parse_goal(GOAL, label="host\u202e")
