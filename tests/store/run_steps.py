"""What the tally tests share (test_run_tallies.py, test_run_facet_tallies.py): carrying out a list of steps
that write runs through the store's own API, and taking a store down a migration and back up."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from typing import Callable, Iterator

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect, text

from stackbench.store import Store
from stackbench.store.accounts import Accounts, Viewer
from stackbench.store.database import MIGRATIONS

# Makes the run of a ("store", owner, visibility, *rest) step: (store, how many runs stored so far, *rest) -> id.
CreateRun = Callable[..., str]


def replay(accounts: Accounts, steps: list[tuple], create: CreateRun) -> list[Viewer]:
    """Carry out `steps` through the store's own API; the viewers to check (each account, an admin, none).

    Steps: ("store", owner, visibility, *rest), ("finish", i, status), ("delete", i), ("claim", i, owner),
    ("visibility", i, visibility), ("remove", owner); `i` picks among the runs stored so far."""
    store = accounts.store
    ids: dict[str | None, str] = {}

    def account(name: str | None) -> str | None:
        if name is not None and name not in ids:
            ids[name] = accounts.add_account(name, "h", admin=False).id
        return ids.get(name)

    runs: list[str] = []
    for kind, *args in steps:
        if kind == "store":
            owner_name, visibility, *rest = args
            run_id = create(store, len(runs), *rest)
            owner = account(owner_name)
            if owner is not None:
                accounts.claim(owner, [run_id])
            accounts.set_visibility(run_id, visibility)
            runs.append(run_id)
        elif kind == "remove" and args[0] in ids:
            accounts.remove_account(args[0])
            del ids[args[0]]
        elif runs and kind != "remove":
            run_id = runs[args[0] % len(runs)]
            if kind == "delete":
                store.delete_runs([run_id])
                runs.remove(run_id)
            elif kind == "finish":
                store.finish_run(run_id, args[1])
            elif kind == "claim":
                accounts.claim(account(args[1]), [run_id], take=True)
            else:
                accounts.set_visibility(run_id, args[1])
    admin = accounts.add_account("root", "h", admin=True)
    return [Viewer(i, False) for i in ids.values()] + [Viewer(admin.id, True), Viewer("no-such-account", False)]


@contextmanager
def accounts_of(url: str) -> Iterator[Accounts]:
    """The accounts of the store at `url`, its engine disposed afterwards (a PostgreSQL database is dropped
    after the test, which waits for no open connection)."""
    accounts = Accounts(Store(url))
    try:
        yield accounts
    finally:
        accounts.store.dispose()


@pytest.fixture(scope="module")
def new_accounts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Accounts]]:
    """Accounts on a new SQLite store, as often as a test asks: the migrations make a new store once, and
    each call puts a copy of that file under one engine, disposed first so that no connection holds the
    previous file. A new `Store` per Hypothesis example cost 0.6 s of CPU, most of it SQLAlchemy compiling
    the same queries again for a new engine (0.34 s this way); what the store holds is the same."""
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
