"""The runs list's facets and their total come from `run_facet_tallies`, counts the database keeps with
triggers (migration 0016), when the list's filter is made only of facet values. The tallies must equal a
GROUP BY of the runs after anything that stores, finishes, deletes, claims, shares or unowns runs, on
SQLite and PostgreSQL, and the facets and totals read from them must be what counting the runs answers
(the same filter plus a date range that holds every run, which counts the runs), for every kind of viewer;
a trigger that missed a path would show wrong counts beside the filters."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from stackbench.store import Store, schema
from stackbench.store.accounts import Accounts, RunFilter, Viewer
from store import run_steps
from store.run_steps import accounts_of, down_and_up, replay
from web import test_postgres

pg_database = test_postgres.pg_database
new_accounts = run_steps.new_accounts

OWNERS = ("alice", "bob", None)
PLANS = ("quick", "slog", "", None)  # an upload may carry an empty plan name: not the same as none
TARGETS = ({}, {"target": {"fs_type": "ext4"}}, {"target": {"fs_type": "zfs", "block_devices": [{"model": "SSD 1"}]}},
           {"target": {"block_devices": [{"model": ""}, {"model": "SSD 2"}]}})

# ("store", owner, visibility, plan, target), ("finish", i, status), ("delete", i), ("claim", i, owner),
# ("visibility", i, visibility), ("remove", owner). `i` picks among the runs stored so far.
step = st.one_of(
    st.tuples(st.just("store"), st.sampled_from(OWNERS), st.sampled_from(schema.VISIBILITIES),
              st.sampled_from(PLANS), st.integers(0, len(TARGETS) - 1)),
    st.tuples(st.just("finish"), st.integers(0, 50), st.sampled_from(("complete", "failed", "incomplete"))),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("claim"), st.integers(0, 50), st.sampled_from(OWNERS[:2])),
    st.tuples(st.just("visibility"), st.integers(0, 50), st.sampled_from(schema.VISIBILITIES)),
    st.tuples(st.just("remove"), st.sampled_from(OWNERS[:2])),
)

# The facet-only filters the tallies answer (each also asked with a date range, which counts the runs), and
# searches, whose facets count the runs and answer the list's total.
FILTERS = [RunFilter(), RunFilter(plan="quick"), RunFilter(status="complete"), RunFilter(fs_type="zfs"),
           RunFilter(device_model="SSD 2"), RunFilter(visibility="team"), RunFilter(owner="bob"),
           RunFilter(owner="alice", status="running", plan="slog"), RunFilter(owner="nobody"),
           RunFilter(search="RUN-1"), RunFilter(search="run-2", plan="quick")]  # counted, total from the facets


def _create(store: Store, stored: int, plan: str | None, target: int) -> str:
    return store.create_run(source="imported", label=f"run-{stored}", target=None, plan_name=plan, planned_cells=0,
                            facts=TARGETS[target])


def _assert_tallies_count(accounts: Accounts, viewers: list[Viewer]) -> None:
    runs, tallies = schema.runs, schema.run_facet_tallies
    with accounts.store.engine.connect() as connection:
        kept = {tuple(row[:-1]): row[-1] for row in connection.execute(select(tallies)) if row[-1]}
        grouped: dict[tuple, int] = {}
        for owner, visibility, status, *values in connection.execute(
                select(runs.c.owner, runs.c.visibility, runs.c.status, runs.c.plan_name, runs.c.fs_type,
                       runs.c.device_model)):
            absent = sum(bit for bit, value in zip((1, 2, 4), values) if value is None)
            key = (owner or "", visibility, status, *(value or "" for value in values), absent)
            grouped[key] = grouped.get(key, 0) + 1
    assert kept == grouped
    every_day = {"since": date(2000, 1, 1)}  # every run: a filter the tallies cannot answer
    for viewer in viewers:
        for where in FILTERS:
            counting = RunFilter(**{**where.__dict__, **every_day})
            assert accounts.run_facets(viewer, where) == accounts.run_facets(viewer, counting), (viewer, where)
            rows, total = accounts.visible_runs(viewer, where, offset=0, limit=1000, whole=False)
            counted = accounts.visible_runs(viewer, counting, offset=0, limit=1)[1]
            # the facets' total (which the runs list passes on instead of counting again) is the same
            assert (total, len(rows), accounts.run_facets(viewer, where)[1]) == (counted, counted, counted)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=25))
def test_the_facet_tallies_equal_counting_the_runs(new_accounts: Callable[[], Accounts], steps: list[tuple]) -> None:
    accounts = new_accounts()
    _assert_tallies_count(accounts, replay(accounts, steps, _create))


MIXED = [("store", "alice", "private", "quick", 1), ("store", "alice", "team", "slog", 2),
         ("store", "bob", "team", "", 3), ("store", None, "private", None, 0), ("store", "bob", "private", "quick", 2),
         ("finish", 0, "complete"), ("claim", 3, "bob"), ("visibility", 0, "team"), ("delete", 1),
         ("store", None, "team", "slog", 1), ("finish", 2, "failed"), ("remove", "alice"),
         ("visibility", 2, "private"), ("claim", 0, "bob"), ("store", "alice", "team", "quick", 3), ("delete", 5),
         ("finish", 1, "complete")]


@pytest.mark.postgres
def test_the_facet_tallies_equal_counting_the_runs_on_postgresql(pg_database: str) -> None:
    with accounts_of(pg_database) as accounts:
        _assert_tallies_count(accounts, replay(accounts, MIXED, _create))


def test_the_migration_tallies_the_runs_already_stored_and_goes_back(tmp_path: Path) -> None:
    """A store at 0015 that holds runs gets their counts when it moves to 0016, and 0016 goes back."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with accounts_of(url) as accounts:
        viewers = replay(accounts, MIXED, _create)
    down_and_up(url, "0015_tune_sessions", "run_facet_tallies", "run_facet%")
    with accounts_of(url) as accounts:
        _assert_tallies_count(accounts, viewers)
