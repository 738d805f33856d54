"""How many SQL statements a page costs, against the real server and store (SQLite, and PostgreSQL in the
slow suite): every statement is a round trip to the database, and with PostgreSQL on the server's machine
a round trip is a wait on a process that needs the same cores (issue 14's goal of p95 <= 100 ms under 20
clients, bench/serve_bench.py). The limits are the counts the pages have now; a change that adds a query
to a page has to raise them here, on purpose.

The pages are viewed once before counting: the first view of a page draws its charts (web/charts.py), a
cost paid once, not per view."""

from __future__ import annotations

import html
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
    "runs list": 3,  # session, the page of runs with the number of runs, the facets' counts (one UNION ALL)
    "run": 6,  # session, misses, the run (checked and read in one), its cells, goals, the owner's share links
    "compare": 5,  # session, misses, both runs, their cells, share links
    "shared run": 5,  # misses, the token, the run, its cells, goals (its last use written once a minute)
    "shared compare": 4,
}


@dataclass(frozen=True)
class Statement:
    sql: str
    in_transaction: bool  # whether the database connection was inside a transaction when it ran
    parameters: object


@contextmanager
def recorded(web: Site) -> Iterator[list[Statement]]:
    """The statements the server sends to its store while the block runs (the server answers in a thread of
    this process, so its engine's events are ours to listen to)."""
    statements: list[Statement] = []

    def after(connection, _cursor, sql, parameters, _context, _many) -> None:  # noqa: ANN001
        dbapi = connection.connection.dbapi_connection
        info = getattr(dbapi, "info", None)  # psycopg: the server's transaction status
        busy = (info.transaction_status != 0) if info is not None else dbapi.in_transaction  # 0: IDLE
        statements.append(Statement(" ".join(sql.split()), bool(busy), parameters))

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
        # round trips more per read (store/database.py, `_reader`)
        assert not [s.sql for s in statements if s.sql.startswith("SELECT") and s.in_transaction], name


def test_a_run_page_reads_no_samples_its_tables_do_not_need_and_its_chart_draws_them(fresh_site) -> None:  # noqa: ANN001
    """A run measured with separate fio runs: its tables are made of the stored replicates, so a view of its
    page reads none of its per-second samples; its timeline chart, drawn once, reads them all."""
    from stackbench.report.charts import run_figures
    from store.test_run_reading import _mixed_run
    from stored_runs import store_run

    with fresh_site(SHARED) as web:
        measured = _mixed_run("d" * 32, 1.0)
        store_run(web.store, measured)
        web.accounts.claim(web.ids["alice"], [measured.id])
        alice = web.login("alice")
        first = alice.get(f"/runs/{measured.id}").text
        assert "Per-second samples of" in first  # the timeline of the first cell with samples
        expected = run_figures(web.store.get_run(measured.id))
        assert [html.unescape(a) for a in re.findall(r'<img [^>]*alt="([^"]*)"', first)] == [f.alt for f in expected]
        with recorded(web) as statements:
            again = alice.get(f"/runs/{measured.id}")
        assert again.text == first
        legacy = [c.id for c in web.store.get_run(measured.id).cells if c.workload.rw == "randwrite"]
        read = [s.parameters for s in statements if s.sql.startswith("SELECT samples")]
        assert read == [(measured.id, *legacy)]  # the run's samples of its legacy cell only, whose replicates they are


def test_a_share_links_last_use_is_written_once_a_minute(fresh_site) -> None:  # noqa: ANN001
    from datetime import timedelta

    from sqlalchemy import update

    from stackbench.store import schema

    with fresh_site(SHARED) as web:
        path = _share_link(web.login("alice"), f"/runs/{web.runs['b']}")
        [link] = web.accounts.share_links_of(web.ids["alice"], "run", [web.runs["b"]])
        assert link.last_used_at is None
        reader = web.client()
        with recorded(web) as statements:
            assert reader.get(path).status_code == 200  # the first use is written
            assert reader.get(path).status_code == 200  # a second within the minute is not
        assert len([s for s in statements if s.sql.startswith("UPDATE share_links")]) == 1
        [link] = web.accounts.share_links_of(web.ids["alice"], "run", [web.runs["b"]])
        with web.store.engine.begin() as connection:  # as if that use were two minutes ago
            connection.execute(update(schema.share_links).where(schema.share_links.c.id == link.id)
                               .values(last_used_at=link.last_used_at - timedelta(minutes=2)))
        assert reader.get(path).status_code == 200
        [again] = web.accounts.share_links_of(web.ids["alice"], "run", [web.runs["b"]])
        assert again.last_used_at > link.last_used_at


def test_pages_issue_few_statements_on_sqlite(fresh_site) -> None:  # noqa: ANN001
    with fresh_site(SHARED) as web:
        assert_few_statements(web)


@pytest.mark.postgres
@pytest.mark.slow
def test_pages_issue_few_statements_on_postgresql(pg_database: str) -> None:
    with site(pg_database, SHARED) as web:
        assert_few_statements(web)
