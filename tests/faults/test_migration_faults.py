"""Schema migrations are all or nothing: a failure at any statement of any migration, or a full disk at
any moment of one, leaves the store at its old version with its data, and the upgrade succeeds once the
cause is gone (store/migrate.py).

Three kinds of failure, on real SQLite files and a real PostgreSQL server (tests/pg_server.py):
- an error injected at every statement the migration's connection sends (a SQLAlchemy cursor hook raising
  the driver's own "disk full" error, as a full disk makes it): the one way to hit each statement exactly;
- SQLite's real SQLITE_FULL, from a page budget (PRAGMA max_page_count) swept over every size between the
  old store and the upgraded one;
- a real full file system: a small tmpfs under tmp_path filled to leave 0, 4, 8, ... KiB free.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import Pool

from conftest import alembic, fill
from stackbench.base.errors import StoreError
from stackbench.store import Store
from stackbench.store.database_url import database_url
from stackbench.store.database import MIGRATIONS, head_revision
from stored_runs import build_store

MIGRATING = "stackbench_migration"  # store/migrate.py MIGRATING: the mark on the migration's connection


def _revisions() -> list[str]:
    """Every revision, oldest first."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return [script.revision for script in reversed(list(ScriptDirectory.from_config(config).walk_revisions()))]


REVISIONS = _revisions()
# Every version a store can be upgraded from: none (a new store) to the last but one. From nothing, every
# statement of every migration is failed in turn; from each version, every statement from there on. The
# new store and the last version run in the quick suite, the versions between (the same statements again,
# with more data under them) in the full one.
STARTS = [pytest.param(start, id=start or "new", marks=() if start in (None, REVISIONS[-2]) else pytest.mark.slow)
          for start in [None, *REVISIONS[:-1]]]


def _store_at(url: str, revision: str | None) -> None:
    """A store at `revision` holding runs, cells, samples, a goal, a scan and an audit as far as that
    revision has tables for them (made at the head, then downgraded); None: an empty database."""
    if revision is None:
        return
    build_store(url)
    if revision != head_revision():
        alembic(url, "downgrade", revision)
    if url.startswith("sqlite:///"):  # no free pages left by the dropped tables: the upgrade must grow the file
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            connection.execute("VACUUM")


def _state(url: str) -> tuple[str | None, dict[str, list[tuple[str, ...]]]]:
    """The version and every row of every table, read without opening the store (which would upgrade it)."""
    engine = create_engine(database_url(url))
    try:
        with engine.connect() as connection:
            tables = sorted(inspect(connection).get_table_names())
            version = None
            if "alembic_version" in tables:
                version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            rows = {table: sorted(tuple(map(str, row)) for row in connection.execute(text(f'SELECT * FROM "{table}"')))
                    for table in tables if table != "alembic_version"}
            if engine.dialect.name == "sqlite":
                assert connection.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    finally:
        engine.dispose()
    return version, rows


def _disk_full(statement: str, dialect: str) -> OperationalError:
    """The error SQLAlchemy raises when the driver meets a full disk: SQLite's or PostgreSQL's own."""
    if dialect == "sqlite":
        return OperationalError(statement, None, sqlite3.OperationalError("database or disk is full"))
    import psycopg.errors

    return OperationalError(statement, None, psycopg.errors.DiskFull("could not extend file: No space left on device"))


@contextmanager
def _failing_at(number: int | None, seen: list[str]) -> Iterator[None]:
    """Fail the migration's `number`-th statement (1-based; None: none) as a full disk would, noting every
    statement of the migration in `seen`."""
    counter = itertools.count(1)

    def before(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if conn.info.get(MIGRATING):
            seen.append(statement)
            if next(counter) == number:
                raise _disk_full(statement, conn.dialect.name)

    event.listen(Engine, "before_cursor_execute", before)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", before)


def _every_statement_fails_in_turn(url: str, start: str | None) -> int:
    """From a store at `start`: fail statement 1, 2, ... of the upgrade, each time checking the store is as
    it was, until an attempt has no statement left to fail and succeeds. Returns the number of failures."""
    _store_at(url, start)
    before = _state(url)
    for number in itertools.count(1):
        seen: list[str] = []
        try:
            with _failing_at(number, seen):
                Store(url).dispose()
        except StoreError as error:
            assert "is full" in str(error), (number, seen[-1], error)
            assert _state(url) == before, f"statement {number} ({seen[-1][:80]!r}) left the store changed"
            continue
        assert len(seen) < number, (number, seen)  # no statement was failed: the upgrade ran whole
        break
    version, rows = _state(url)
    assert version == head_revision()
    for table, old in before[1].items():  # every old row is still there (later migrations add columns)
        assert len(rows[table]) == len(old), table
    return number - 1


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.slow
def test_sqlite_every_statement_of_every_migration_fails_without_a_trace(tmp_path: Path, start: str | None) -> None:
    failures = _every_statement_fails_in_turn(f"sqlite:///{tmp_path / 'r.db'}", start)
    assert failures >= 3 * (len(REVISIONS) - REVISIONS.index(start or REVISIONS[0]) - (start is not None))


@pytest.mark.postgres
@pytest.mark.parametrize("start", [pytest.param(p.values[0], id=p.id, marks=() if p.values[0] == REVISIONS[-2] else
                                                pytest.mark.slow) for p in STARTS])  # a second each attempt
def test_postgresql_every_statement_of_every_migration_fails_without_a_trace(pg_database: str,
                                                                              start: str | None) -> None:
    _every_statement_fails_in_turn(pg_database, start)


@contextmanager
def _page_budget(pages: int) -> Iterator[None]:
    """SQLite refuses to grow its file past `pages` pages (PRAGMA max_page_count): its real SQLITE_FULL."""
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        if isinstance(dbapi_connection, sqlite3.Connection):
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(Pool, "connect", on_connect)
    try:
        yield
    finally:
        event.remove(Pool, "connect", on_connect)


@pytest.mark.parametrize("start", [None, "0004_scans_audits", "0007_rate_events"], ids=["new", "0004", "0007"])
@pytest.mark.slow
def test_sqlite_a_real_full_database_at_every_size_keeps_the_old_version(tmp_path: Path, start: str | None) -> None:
    db = tmp_path / "r.db"
    url = f"sqlite:///{db}"
    _store_at(url, start)
    before = _state(url)
    with sqlite3.connect(db) as connection:
        pages = max(1, connection.execute("PRAGMA page_count").fetchone()[0])
    failures = 0
    while True:
        try:
            with _page_budget(pages):
                Store(url).dispose()
        except StoreError as error:
            assert "is full" in str(error), error
            assert _state(url) == before, f"a budget of {pages} pages left the store changed"
            failures += 1
            pages += 1
            continue
        break
    assert failures and _state(url)[0] == head_revision()


def _free(mount: Path, free: int) -> None:
    """Leave `free` bytes of the tmpfs at `mount` free (it is full, its filler file `filler`)."""
    filler = mount / "filler"
    os.truncate(filler, max(0, filler.stat().st_size - free))


@pytest.mark.parametrize("start", [None, "0007_rate_events"], ids=["new", "0007"])
@pytest.mark.slow
def test_sqlite_a_full_file_system_at_every_step_keeps_the_old_version(tmp_path: Path, tmpfs_mount,
                                                                        start: str | None) -> None:
    """The issue's case (0007 -> 0008 on a full disk created run_tallies without the version, and every
    command afterwards failed with "table run_tallies already exists"), and a new store's creation: a real
    tmpfs with 0, 4, 8, ... KiB free, until the upgrade fits."""
    made = tmp_path / "made.db"
    _store_at(f"sqlite:///{made}", start)
    mount = tmpfs_mount("2M")
    db = mount / "r.db"
    if made.exists():
        shutil.copyfile(made, db)
    url = f"sqlite:///{db}"
    before = _state(url)
    fill(mount)
    full = (mount / "filler").stat().st_size
    failures = 0
    for free in range(0, 1024 * 1024, 4096):
        os.truncate(mount / "filler", full - free)
        try:
            Store(url).dispose()
        except StoreError as error:
            assert "is full" in str(error) or "could not be written" in str(error), error
            assert not (mount / "r.db-journal").exists()
            assert _state(url) == before, f"{free} bytes free left the store changed"
            failures += 1
            continue
        break
    assert failures, "the upgrade fitted in a full file system: fill() left space"
    (mount / "filler").unlink()
    version, rows = _state(url)
    assert version == head_revision()
    assert all(len(rows[table]) == len(old) for table, old in before[1].items())


def test_a_batch_migration_that_recreates_a_table_keeps_the_rows_that_reference_it(tmp_path: Path) -> None:
    """SQLite's batch mode recreates a table (copy, drop, rename). With foreign keys on, dropping `runs`
    would delete every cell, sample and output of every run (ON DELETE CASCADE); the migration's
    connection has them off and checks the references before committing."""
    from alembic.operations import Operations
    from alembic.runtime.migration import MigrationContext
    import sqlalchemy as sa

    from stackbench.store import migrate

    url = f"sqlite:///{tmp_path / 'r.db'}"
    build_store(url)
    cells_before = _state(url)[1]["cells"]
    store = Store(url)
    with migrate.one_transaction(store.engine) as connection:
        operations = Operations(MigrationContext.configure(connection))
        with operations.batch_alter_table("runs", recreate="always") as batch:
            batch.add_column(sa.Column("note", sa.Text))
        assert connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
    with store.engine.connect() as connection:  # the connection lent to the migration is as the others again
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    store.dispose()
    assert _state(url)[1]["cells"] == cells_before


def test_every_migration_runs_inside_the_one_transaction(tmp_path: Path) -> None:
    """No statement that changes the schema or its version commits on its own while a store is created:
    SQLite reports a transaction open at each one (sqlite3's own handling would run a CREATE TABLE that
    comes first outside any transaction, committed alone)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    outside: list[str] = []
    changes = ("CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE")

    def before(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        raw = conn.connection.driver_connection
        if statement.lstrip().upper().startswith(changes) and not raw.in_transaction:
            outside.append(statement)

    event.listen(Engine, "before_cursor_execute", before)
    try:
        Store(url).dispose()
    finally:
        event.remove(Engine, "before_cursor_execute", before)
    assert outside == []
