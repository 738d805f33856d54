"""The store's database: where it is, its engines (one for writes, one for reads), its schema brought to this
release's head, and every public method's failure reported as one line.

`Database` is the base of each of the store's aggregates (runs, cells, goals, scans, audits) and so of the
`Store` they make together (store/repository.py): they share its `engine`, `reader` and `where`.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from pathlib import Path
from typing import Any, Callable, TypeVar

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from stackbench.base.credentials import scrub_text
from stackbench.base.errors import StoreError
from stackbench.store.database_url import database_url
from stackbench.store.failures import describe

MIGRATIONS = Path(__file__).with_name("migrations")

_REVISION = re.compile(r"""^(down_)?revision\s*(?::[^=]*)?=\s*(?:["']([^"']*)["']|None)\s*$""", re.MULTILINE)


def default_db_url() -> str:
    """`$STACKBENCH_DB`, else an SQLite file under the XDG data directory."""
    env = os.environ.get("STACKBENCH_DB")
    if env:
        return env
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'stackbench' / 'results.db'}"


@functools.cache
def head_revision() -> str:
    """The newest migration's revision id, read from the migration scripts' own `revision` and
    `down_revision` lines: the one no other script names as its parent. A test holds it equal to
    Alembic's answer."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("*.py"):
        for down, value in _REVISION.findall(script.read_text(encoding="utf-8")):
            if value:
                (parents if down else revisions).add(value)
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"the migration scripts have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def _no_such_table(error: SQLAlchemyError) -> bool:
    original = getattr(error, "orig", None)
    return getattr(original, "sqlstate", None) == "42P01" or "no such table" in str(original)


class Database:
    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = database_url(url)
        if self.url.startswith("sqlite:///"):
            path = Path(self.url.removeprefix("sqlite:///").split("?", 1)[0])
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(
                    f"cannot create the database directory {path.parent}: {error.strerror}",
                    "Pass a writable location with --db or STACKBENCH_DB",
                ) from None
        try:
            self.engine: Engine = create_engine(self.url, future=True)
        except (ArgumentError, ImportError, SQLAlchemyError) as error:
            raise StoreError(
                f"cannot use database URL {scrub_text(url)!r}: {error}",
                "Use sqlite:///PATH or postgresql://USER@HOST/DB (pip install 'stackbench[postgres]')",
            ) from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        elif self.engine.dialect.name == "postgresql":
            event.listen(self.engine, "do_execute", _planned_per_execution)
        self.reader: Engine = _reader(self.engine)
        if migrate:
            self._migrate()
        elif not self._at_head():
            raise StoreError(f"the results database {self.where} is not at this release's schema", "Open it with "
                             "any stackbench command that writes, which migrates it")

    @property
    def where(self) -> str:
        """The store as a user names it: the SQLite file's path, or the URL without its password."""
        if self.url.startswith("sqlite:///"):
            return self.url.removeprefix("sqlite:///")
        return scrub_text(self.url)

    def _migrate(self) -> None:
        """Bring the schema to this release's head, all of it in one transaction (store/migrate.py);
        refuse stores we must not or cannot change: a newer schema (its revision is not in our scripts:
        an older stackbench would corrupt it), and a database that holds tables of its own and none of
        ours (stackbench never mixes its tables into someone else's database)."""
        if self._at_head():
            return
        from stackbench.store.migrate import upgrade

        upgrade(self.engine, self.where, str(MIGRATIONS))

    def _at_head(self) -> bool:
        """Whether the store's schema is this release's head, answered without importing Alembic.

        The question every command asks on opening, so it is one query (Alembic's own start-up cost a
        tenth of a second, issue 12). No version table, or another version, answers False and leaves the
        decision to the full check in `_migrate`; a store that cannot be read at all (locked, not a database) is
        one line with the fix here, not a second wait in Alembic.
        """
        try:
            with self.reader.connect() as connection:
                versions = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
        except SQLAlchemyError as error:
            if _no_such_table(error):
                return False
            raise describe(error, self.where) from None
        return versions == {head_revision()}

    def dispose(self) -> None:
        self.engine.dispose()


def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` (of an object with a `where`) reporting a database failure as one line: a full disk, a
    lock, a read-only or garbage file."""
    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except SQLAlchemyError as error:
            raise describe(error, self.where) from None

    return guarded


Guarded = TypeVar("Guarded", bound=type)


def guard_public_methods(cls: Guarded) -> Guarded:
    """`cls` with every public method, its own and its bases', `guarded`: no database failure of a store
    object reaches its caller as a traceback."""
    for name in dir(cls):
        method = getattr(cls, name)
        if not name.startswith("_") and inspect.isfunction(method):
            setattr(cls, name, guarded(method))
    return cls


def _reader(engine: Engine) -> Engine:
    """The engine of the store's reads (`Store.reader`): on PostgreSQL outside a transaction.

    psycopg opens a transaction before a connection's first statement (a BEGIN of its own, one round trip)
    and the pool ends it when the connection is returned (a ROLLBACK, another): two round trips to the
    database server per read for nothing, since under PostgreSQL's READ COMMITTED every statement takes a
    snapshot of its own either way. A server page makes several reads, and each round trip is a wait on
    a process that shares the machine's cores (bench/RESULTS.md, "Server pages under load"). Writes keep
    `engine.begin()`: their transactions are what makes them all-or-nothing. SQLite's driver starts no
    transaction for a SELECT, so its reads are unchanged (the same engine)."""
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="AUTOCOMMIT")
    return engine


# The execution option of a statement whose plan must be made for its values every time (`_planned_per_execution`)
PLANNED_PER_EXECUTION = "planned_per_execution"


def _planned_per_execution(cursor: Any, statement: str, parameters: Any, context: Any) -> bool | None:
    """A statement with the execution option PLANNED_PER_EXECUTION sent unprepared, so that PostgreSQL plans it for
    its values each time; any other as SQLAlchemy sends it (None).

    psycopg prepares a statement on a connection after its fifth execution, and PostgreSQL's plan cache then
    may switch it to a generic plan, made without the values. That is right for most of the store's reads
    (the plan is the same, and planning is saved), not for the page of a runs list's search: its generic plan
    walks `ix_runs_listing` checking the ILIKE on every run it passes instead of reading `ix_runs_search`
    (10,000 runs: 2.0 against 1.3 ms of PostgreSQL's CPU for a search that matches 111 runs), and whether the
    switch happens depends on the first searches on that connection: after searches that matched many runs,
    one that matches none reads all 10,000 entries (6.4 ms against 0.5-0.7 planned for its value)."""
    if context is not None and context.execution_options.get(PLANNED_PER_EXECUTION):
        cursor.execute(statement, parameters, prepare=False)
        return True
    return None


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
