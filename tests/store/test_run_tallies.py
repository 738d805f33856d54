"""The runs list's total comes from `run_tallies`, counts the database keeps with triggers (migration
0008). The tally must equal counting the runs after anything that stores, deletes, claims, shares or
unowns runs, on SQLite and PostgreSQL, and for every kind of viewer; a trigger that missed a path would
show a wrong "N run(s) you may see" and a wrong number of pages."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable, Iterator

import pytest
from alembic import command
from alembic.config import Config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, func, inspect, select, text

from stackbench.store import Store, schema
from stackbench.store.accounts import Accounts, RunFilter, Viewer, _visible
from stackbench.store.database import MIGRATIONS
from web import test_postgres

pg_database = test_postgres.pg_database

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


def _replay(accounts: Accounts, steps: list[tuple]) -> list[Viewer]:
    """Carry out `steps` through the store's own API; the viewers to check (each account, an admin)."""
    store = accounts.store
    ids: dict[str | None, str] = {}

    def account(name: str | None) -> str | None:
        if name is not None and name not in ids:
            ids[name] = accounts.add_account(name, "h", admin=False).id
        return ids.get(name)

    runs: list[str] = []
    for kind, *args in steps:
        if kind == "store":
            run_id = store.create_run(source="imported", label=None, target=None, plan_name="import",
                                      planned_cells=0, facts={})
            owner = account(args[0])
            if owner is not None:
                accounts.claim(owner, [run_id])
            accounts.set_visibility(run_id, args[1])
            runs.append(run_id)
        elif kind == "remove" and args[0] in ids:
            accounts.remove_account(args[0])
            del ids[args[0]]
        elif runs and kind != "remove":
            run_id = runs[args[0] % len(runs)]
            if kind == "delete":
                store.delete_runs([run_id])
                runs.remove(run_id)
            elif kind == "claim":
                accounts.claim(account(args[1]), [run_id], take=True)
            else:
                accounts.set_visibility(run_id, args[1])
    admin = accounts.add_account("root", "h", admin=True)
    return [Viewer(i, False) for i in ids.values()] + [Viewer(admin.id, True), Viewer("no-such-account", False)]


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


@pytest.fixture(scope="module")
def new_accounts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Accounts]]:
    """Accounts on a new SQLite store, as often as a test asks: the migrations make a new store once, and
    each call puts a copy of that file under one engine, disposed first so that no connection holds the
    previous file. A new `Store` per example cost 0.5 s, most of it SQLAlchemy compiling the same queries
    again for a new engine; what the store holds is the same."""
    directory = tmp_path_factory.mktemp("new-store")
    template, db = directory / "template.db", directory / "r.db"
    Store(f"sqlite:///{template}").dispose()
    store = Store(f"sqlite:///{db}")

    def new() -> Accounts:
        store.dispose()
        for old in (db, *(db.with_name(db.name + suffix) for suffix in ("-journal", "-wal", "-shm"))):
            old.unlink(missing_ok=True)
        shutil.copyfile(template, db)
        return Accounts(store)

    yield new
    store.dispose()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=25))
def test_the_tallies_equal_counting_the_runs(new_accounts: Callable[[], Accounts], steps: list[tuple]) -> None:
    accounts = new_accounts()
    _assert_tallies_count(accounts, _replay(accounts, steps))


MIXED = [("store", "alice", "private"), ("store", "alice", "team"), ("store", "bob", "team"),
         ("store", None, "private"), ("store", "bob", "private"), ("claim", 3, "bob"), ("visibility", 0, "team"),
         ("delete", 1), ("store", None, "team"), ("remove", "alice"), ("visibility", 2, "private"),
         ("claim", 0, "bob"), ("store", "alice", "team"), ("delete", 5)]


@pytest.mark.postgres
def test_the_tallies_equal_counting_the_runs_on_postgresql(pg_database: str) -> None:
    accounts = Accounts(Store(pg_database))
    try:
        _assert_tallies_count(accounts, _replay(accounts, MIXED))
    finally:
        accounts.store.dispose()


def test_the_migration_tallies_the_runs_already_stored_and_goes_back(tmp_path: Path) -> None:
    """A store at 0007 that holds runs gets their counts when it moves to 0008, and 0008 goes back."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    accounts = Accounts(Store(url))
    viewers = _replay(accounts, MIXED)
    accounts.store.dispose()
    down_and_up(url, "0007_rate_events", "run_tallies", "%")
    accounts = Accounts(Store(url))
    try:
        _assert_tallies_count(accounts, viewers)
    finally:
        accounts.store.dispose()


def down_and_up(url: str, revision: str, table: str, triggers_like: str) -> None:
    """Take the SQLite store at `url` down to `revision`, check that `table` and the triggers named like
    `triggers_like` are gone, and bring it back to the head (which tallies the runs stored again)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)
        assert table not in inspect(connection).get_table_names()
        assert connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE :like"),
                                  {"like": triggers_like}).all() == []
        command.upgrade(config, "head")
    engine.dispose()
