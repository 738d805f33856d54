"""Creating and upgrading a store's schema all or nothing.

A migration is several statements (CREATE TABLE, ALTER TABLE, CREATE INDEX, rows copied, triggers) and
then the version row. Committed one by one, a failure in the middle (a full disk, a kill) leaves a table
without the version that owns it: every later command then fails with "table run_tallies already exists",
and a store whose creation was killed holds a few of our tables and an empty version table, which the
next start took for someone else's database. Here every statement of every migration from the store's
version to the head, and the version, is one transaction, committed together or not at all:

- SQLite: Python's sqlite3 driver (3.11) opens a transaction only before INSERT, UPDATE and DELETE, so a
  CREATE TABLE that comes first runs outside any transaction and is committed alone. The migration's
  connection turns the driver's transaction handling off (isolation_level None) and sends BEGIN
  IMMEDIATE itself: SQLite's DDL is transactional, and the write lock taken before the version is read
  makes a second process opening the same new store wait and then find it made, instead of racing it.
  Foreign keys are off on this connection (the pragma cannot change inside a transaction): a batch
  migration recreates a table by copy, drop and rename, and dropping a parent table with foreign keys on
  would delete every row that references it (ON DELETE CASCADE). `PRAGMA foreign_key_check` before the
  commit refuses a broken reference instead.
- PostgreSQL: DDL is transactional; the upgrade is one transaction that first takes a transaction-level
  advisory lock, so two processes never migrate at once.

Alembic joins the transaction it is handed (env.py; an external transaction makes its own begin a no-op)
and commits nothing itself. tests/faults/test_migration_faults.py fails every statement of every migration,
and fills the disk, and checks that the store is still at its old version with its data.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import Engine, inspect
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from stackbench.base.errors import StoreError
from stackbench.store import schema
from stackbench.store.failures import describe

# The key in Connection.info that marks the connection of a migration (the fault tests fail its statements).
MIGRATING = "stackbench_migration"
_LOCK = 0x5374_6B62_656E_6368  # PostgreSQL advisory lock key: "Stkbench"
VERSION_TABLE = "alembic_version"


def upgrade(engine: Engine, where: str, migrations: str) -> None:
    """Bring the store of `engine` to the head revision of the scripts in `migrations`, in one transaction;
    refuse a newer schema and a database of someone else's tables. `where` names the store in errors."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", migrations)
    scripts = ScriptDirectory.from_config(config)
    head = scripts.get_current_head()
    sqlite = engine.dialect.name == "sqlite"
    try:
        with one_transaction(engine) as connection:
            current = MigrationContext.configure(connection).get_current_revision()
            if current == head:
                return
            if current is not None and current not in {r.revision for r in scripts.walk_revisions()}:
                raise StoreError(
                    f"the results database {where} was written by a newer stackbench (schema revision {current})",
                    "Upgrade stackbench (pip install -U stackbench), or pass another --db",
                )
            if current is None:
                _refuse_or_clear(connection, where, sqlite)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            if sqlite:
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise StoreError(f"upgrading the results database {where} would break {len(broken)} "
                                     f"reference(s) (first in table {broken[0][0]}); nothing was changed",
                                     "Report this with the output of `stackbench --version`")
    except SQLAlchemyError as error:
        raise describe(error, where) from None


@contextmanager
def one_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection of `engine` in one transaction that holds DDL too, committed when the block ends and
    rolled back if it raises; marked with MIGRATING while it lasts. On SQLite the driver's transaction
    handling and foreign keys are off on it for that time, and back as the store's other connections have
    them afterwards (an in-memory store has only this one connection, so it is lent, not replaced)."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        raw = connection.connection.driver_connection
        saved = raw.isolation_level if sqlite else None
        if sqlite:
            raw.isolation_level = None  # no BEGIN and no COMMIT of the driver's own: ours only
            raw.execute("PRAGMA foreign_keys=OFF")  # only outside a transaction does it take effect
        connection.info[MIGRATING] = True
        try:
            with connection.begin():
                connection.exec_driver_sql("BEGIN IMMEDIATE" if sqlite else f"SELECT pg_advisory_xact_lock({_LOCK})")
                yield connection
        finally:
            connection.info.pop(MIGRATING, None)
            if sqlite:
                try:
                    raw.isolation_level = saved
                    raw.execute("PRAGMA foreign_keys=ON")
                except Exception:  # noqa: BLE001 - a connection not as the others must not go back to the pool
                    connection.invalidate()


def _refuse_or_clear(connection: Connection, where: str, sqlite: bool) -> None:
    """A database without our version: refuse one that holds someone else's tables; clear what an
    interrupted creation by an earlier stackbench left (it committed each table on its own: some of our
    tables and Alembic's version table, all empty), so that the store is created now."""
    tables = set(inspect(connection).get_table_names())
    ours = set(schema.metadata.tables)
    foreign = sorted(tables - ours - {VERSION_TABLE})
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise StoreError(
            f"{where} is a database with other tables ({shown}) and no stackbench schema; "
            "stackbench never adds its tables to a database that holds someone else's",
            "Pass a new file or an empty database with --db",
        )
    if not tables:
        return
    if VERSION_TABLE not in tables or not all(_empty(connection, table) for table in tables):
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{where} holds tables named like stackbench's ({shown}) with rows but no schema version, so it is "
            "not a store stackbench made", "Pass a new file or an empty database with --db")
    for table in sorted(tables):  # foreign keys are off on SQLite's migration connection; CASCADE elsewhere
        connection.exec_driver_sql(f'DROP TABLE "{table}"' + ("" if sqlite else " CASCADE"))


def _empty(connection: Connection, table: str) -> bool:
    return connection.exec_driver_sql(f'SELECT 1 FROM "{table}" LIMIT 1').first() is None


__all__ = ["MIGRATING", "one_transaction", "upgrade"]
