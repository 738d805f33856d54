"""The server over PostgreSQL: the same access matrix, a share link's life and the SLOG page's list, in a database of its own
on the test PostgreSQL server (tests/pg_server.py)."""

from __future__ import annotations

import re

import conftest
import pytest

from stackbench.load.importer import import_files
from web.site import DISKINFO, SHARED, assert_slog_page_is_the_clis, csrf_of, site
from web.test_access_matrix import assert_matrix

pg_database = conftest.pg_database  # the shared fixture; test_api and test_queries take it from here


@pytest.mark.postgres
@pytest.mark.slow
def test_the_server_on_postgresql(pg_database: str) -> None:
    with site(pg_database, SHARED) as web:
        alice = web.login("alice")
        assert_matrix(web, alice, web.login("bob"), web.login("carol"))
        created = alice.post(f"/runs/{web.runs['b']}/shares",
                             data={"csrf": csrf_of(alice), "days": "90", "note": "pg"})
        link = re.search(r'value="http[^"]+(/s/[^"]+)"', created.text).group(1)
        assert web.client().get(link).status_code == 200
        listing = alice.get(f"/runs/{web.runs['b']}").text
        link_id = re.search(r'action="/shares/([0-9a-f]{32})/revoke"', listing).group(1)
        assert alice.post(f"/shares/{link_id}/revoke", data={"csrf": csrf_of(alice)}).status_code == 303
        assert web.client().get(link).status_code == 404
        # the SLOG page's list: runs with a 4 KiB sync-write cell (an SQL EXISTS over cells), ranked as the CLI
        sweep = import_files(web.store, [DISKINFO / "optane-4k-start.txt"], label="optane")[0]
        web.accounts.claim(web.ids["alice"], [sweep.id])
        assert set(re.findall(r'name="runs" value="([0-9a-f]{32})"', alice.get("/slog").text)) == {sweep.id}
        assert_slog_page_is_the_clis(alice, pg_database, [web.runs["b"], sweep.id])
