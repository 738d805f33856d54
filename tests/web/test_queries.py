"""How many SQL statements a page costs, against the real server and store (SQLite, and PostgreSQL in the
slow suite): every statement is a round trip to the database, and with PostgreSQL on the server's machine
a round trip is a wait on a process that needs the same cores (issue 14's goal of p95 <= 100 ms under 20
clients, bench/serve_bench.py). The limits are the counts the pages have now; a change that adds a query
to a page has to raise them here, on purpose.

The pages are viewed once before counting: the first view of a page draws its charts (web/charts.py), a
cost paid once, not per view."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import httpx
import pytest
from sqlalchemy import event

from web import test_postgres
from web.site import SHARED, Site, csrf_of, site

pg_database = test_postgres.pg_database  # a database of its own on the test PostgreSQL server

# Statements per view of each page, at most (a logged-in owner, or the holder of a share link).
LIMITS = {
    "runs list": 3,
    "run": 8,
    "compare": 11,
    "shared run": 8,
    "shared compare": 11,
}


@dataclass(frozen=True)
class Statement:
    sql: str
    in_transaction: bool  # whether the database connection was inside a transaction when it ran


@contextmanager
def recorded(web: Site) -> Iterator[list[Statement]]:
    """The statements the server sends to its store while the block runs (the server answers in a thread of
    this process, so its engine's events are ours to listen to)."""
    statements: list[Statement] = []

    def after(connection, _cursor, sql, _parameters, _context, _many) -> None:  # noqa: ANN001
        dbapi = connection.connection.dbapi_connection
        info = getattr(dbapi, "info", None)  # psycopg: the server's transaction status
        busy = (info.transaction_status != 0) if info is not None else dbapi.in_transaction  # 0: IDLE
        statements.append(Statement(" ".join(sql.split()), bool(busy)))

    engine = web.store.engine
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield statements
    finally:
        event.remove(engine, "after_cursor_execute", after)


def _share_link(client: httpx.Client, path: str) -> str:
    created = client.post(f"{path}/shares", data={"csrf": csrf_of(client, path), "days": "7", "note": "counted"})
    assert created.status_code == 201, created.text
    return re.search(r'value="http[^"]+(/s/[^"]+)"', created.text).group(1)


def page_statements(web: Site) -> dict[str, list[Statement]]:
    """The statements of one view of each page (after a first view), by page."""
    alice = web.login("alice")  # a fresh session: its last-seen time is recent, so it is not written
    a, b = web.runs["a"], web.runs["b"]
    pages = {"runs list": (alice, "/runs"), "run": (alice, f"/runs/{b}"), "compare": (alice, f"/compare/{a}/{b}"),
             "shared run": (web.client(), _share_link(alice, f"/runs/{b}")),
             "shared compare": (web.client(), _share_link(alice, f"/compare/{a}/{b}"))}
    counted = {}
    for name, (client, path) in pages.items():
        assert client.get(path).status_code == 200
        with recorded(web) as statements:
            assert client.get(path).status_code == 200
        counted[name] = statements
    return counted


def assert_few_statements(web: Site) -> None:
    for name, statements in page_statements(web).items():
        shown = "\n".join(s.sql[:120] for s in statements)
        assert len(statements) <= LIMITS[name], f"{name}: {len(statements)} statements\n{shown}"
        # reads run outside a transaction: on PostgreSQL a transaction costs a BEGIN and a ROLLBACK, two
        # round trips more per read (store/repository.py, `_reader`)
        assert not [s.sql for s in statements if s.sql.startswith("SELECT") and s.in_transaction], name


def test_pages_issue_few_statements_on_sqlite(fresh_site) -> None:  # noqa: ANN001
    with fresh_site(SHARED) as web:
        assert_few_statements(web)


@pytest.mark.postgres
@pytest.mark.slow
def test_pages_issue_few_statements_on_postgresql(pg_database: str) -> None:
    with site(pg_database, SHARED) as web:
        assert_few_statements(web)
