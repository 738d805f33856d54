"""The runs list's total comes from `run_tallies`, counts the database keeps with triggers (migration
0008). The tally must equal counting the runs after anything that stores, deletes, claims, shares or
unowns runs, on SQLite and PostgreSQL, and for every kind of viewer; a trigger that missed a path would
show a wrong "N run(s) you may see" and a wrong number of pages."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from stackbench.store import Store, schema
from stackbench.store.accounts import Accounts, RunFilter, Viewer, _visible
from store import run_steps
from store.run_steps import accounts_of, down_and_up, replay
from web import test_postgres

pg_database = test_postgres.pg_database
new_accounts = run_steps.new_accounts

OWNERS = ("alice", "bob", None)

# One step of what writes runs: ("store", owner, visibility), ("delete", i), ("claim", i, owner),
# ("visibility", i, visibility), ("remove", owner). `i` picks among the runs stored so far.
step = st.one_of(
    st.tuples(st.just("store"), st.sampled_from(OWNERS), st.sampled_from(schema.VISIBILITIES)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("claim"), st.integers(0, 50), st.sampled_from(OWNERS[:2])),
    st.tuples(st.just("visibility"), st.integers(0, 50), st.sampled_from(schema.VISIBILITIES)),
    st.tuples(st.just("remove"), st.sampled_from(OWNERS[:2])),
)


def _create(store: Store, stored: int) -> str:
    return store.create_run(source="imported", label=None, target=None, plan_name="import", planned_cells=0,
                            facts={})


def _assert_tallies_count(accounts: Accounts, viewers: list[Viewer]) -> None:
    runs = schema.runs
    with accounts.store.engine.connect() as connection:
        for viewer in viewers:
            counted = connection.execute(select(func.count()).select_from(runs).where(_visible(viewer))).scalar_one()
            rows, total = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=1000, whole=False)
            assert (total, len(rows)) == (counted, counted), viewer
            # a page past the end answers the total too, from the same tallies
            assert accounts.visible_runs(viewer, RunFilter(), offset=1000, limit=10)[1] == counted
        kept = {(o, v): n for o, v, n in connection.execute(select(schema.run_tallies)) if n}
        grouped = connection.execute(
            select(func.coalesce(runs.c.owner, ""), runs.c.visibility, func.count()).group_by(runs.c.owner, runs.c.visibility)
        ).all()
        assert kept == {(o, v): n for o, v, n in grouped}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=25))
def test_the_tallies_equal_counting_the_runs(new_accounts: Callable[[], Accounts], steps: list[tuple]) -> None:
    accounts = new_accounts()
    _assert_tallies_count(accounts, replay(accounts, steps, _create))


MIXED = [("store", "alice", "private"), ("store", "alice", "team"), ("store", "bob", "team"),
         ("store", None, "private"), ("store", "bob", "private"), ("claim", 3, "bob"), ("visibility", 0, "team"),
         ("delete", 1), ("store", None, "team"), ("remove", "alice"), ("visibility", 2, "private"),
         ("claim", 0, "bob"), ("store", "alice", "team"), ("delete", 5)]


@pytest.mark.postgres
def test_the_tallies_equal_counting_the_runs_on_postgresql(pg_database: str) -> None:
    with accounts_of(pg_database) as accounts:
        _assert_tallies_count(accounts, replay(accounts, MIXED, _create))


def test_the_migration_tallies_the_runs_already_stored_and_goes_back(tmp_path: Path) -> None:
    """A store at 0007 that holds runs gets their counts when it moves to 0008, and 0008 goes back."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with accounts_of(url) as accounts:
        viewers = replay(accounts, MIXED, _create)
    down_and_up(url, "0007_rate_events", "run_tallies", "%")
    with accounts_of(url) as accounts:
        _assert_tallies_count(accounts, viewers)

