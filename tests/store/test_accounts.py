"""The server's tables in the store: the one visibility rule, claiming, removing an account, the server
secret, share links, and migration 0005 on a store that already holds runs."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from stackbench.base.errors import StoreError
from stackbench.store import Store
from stackbench.store.accounts import Accounts, RunFilter, Viewer, now
from stackbench.store.database import MIGRATIONS
from web import test_postgres

pg_database = test_postgres.pg_database  # a database of its own on the test PostgreSQL server

FACTS = {"fio_version": "fio-3.33"}


def _run(store: Store, label: str) -> str:
    return store.create_run(source="imported", label=label, target=None, plan_name="import", planned_cells=0,
                            facts=FACTS)


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts(Store(f"sqlite:///{tmp_path / 'r.db'}"))


def _visible(accounts: Accounts, viewer: Viewer) -> set[str]:
    rows, total = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=100)
    assert total == len(rows)
    return {run.label for run, _, _, _ in rows}


def test_the_visibility_rule(accounts: Accounts) -> None:
    store = accounts.store
    alice = accounts.add_account("alice", "h", admin=False)
    bob = accounts.add_account("bob", "h", admin=False)
    admin = accounts.add_account("root", "h", admin=True)
    ids = {label: _run(store, label) for label in ("alice-private", "bob-private", "bob-team", "nobodys")}
    accounts.claim(alice.id, [ids["alice-private"]])
    accounts.claim(bob.id, [ids["bob-private"], ids["bob-team"]])
    accounts.set_visibility(ids["bob-team"], "team")
    as_alice, as_admin = Viewer(alice.id, False), Viewer(admin.id, True)
    assert _visible(accounts, as_alice) == {"alice-private", "bob-team"}
    assert _visible(accounts, Viewer(bob.id, False)) == {"bob-private", "bob-team"}
    assert _visible(accounts, as_admin) == {"bob-team", "nobodys"}  # unowned yes, others' private no
    # the single-run check is the same rule
    assert {label for label, i in ids.items() if accounts.access(as_alice, "run", i)} == {"alice-private", "bob-team"}
    assert {label for label, i in ids.items() if accounts.access(as_admin, "run", i)} == {"bob-team", "nobodys"}
    assert {r.label for _, _, r in accounts.runs_seen(as_alice, list(ids.values())).values()} == {"alice-private", "bob-team"}
    assert {r.label for _, _, r in accounts.runs_seen(as_admin, list(ids.values())).values()} == {"bob-team", "nobodys"}
    with pytest.raises(StoreError, match="visibility"):
        accounts.set_visibility(ids["bob-team"], "public")
    # a page of the list carries the list's total; a page past the end has none to carry and still counts
    pages = [accounts.visible_runs(as_alice, RunFilter(), offset=offset, limit=1) for offset in (0, 1, 2, 9)]
    assert [(len(rows), total) for rows, total in pages] == [(1, 2), (1, 2), (0, 2), (0, 2)]


def test_a_run_made_team_without_an_owner_stays_hidden(accounts: Accounts) -> None:
    run = _run(accounts.store, "loose")
    accounts.set_visibility(run, "team")
    alice = accounts.add_account("alice", "h", admin=False)
    assert accounts.access(Viewer(alice.id, False), "run", run) is None


def test_claiming_never_moves_someone_elses_run_silently(accounts: Accounts) -> None:
    alice = accounts.add_account("alice", "h", admin=False)
    bob = accounts.add_account("bob", "h", admin=False)
    run = _run(accounts.store, "r")
    assert accounts.claim(alice.id, [run]) == 1
    with pytest.raises(StoreError, match="--take"):
        accounts.claim(bob.id, [run])
    assert accounts.claim(bob.id, [run], take=True) == 1
    with pytest.raises(StoreError, match="no run"):
        accounts.claim(bob.id, ["0" * 32])


def test_removing_an_account_ends_its_sessions_and_links_and_unowns_its_runs(accounts: Accounts) -> None:
    alice = accounts.add_account("alice", "h", admin=False)
    run = _run(accounts.store, "r")
    accounts.claim(alice.id, [run])
    accounts.set_visibility(run, "team")
    accounts.create_session(alice.id, "s" * 64, "c")
    link = accounts.add_share_link(token_hash="t" * 64, kind="run", run_ids=[run], owner=alice.id, note="",
                                   expires_at=now() + timedelta(days=1))
    removed, owned = accounts.remove_account("alice")
    assert (removed.name, owned) == ("alice", {"run": 1, "scan": 0, "audit": 0, "tune": 0})
    assert accounts.session("s" * 64) is None and accounts.share_link(link.id) is None
    assert accounts.unowned_run_ids() == [run]
    admin = accounts.add_account("root", "h", admin=True)
    assert accounts.access(Viewer(admin.id, True), "run", run) == (None, "private")  # back to private
    with pytest.raises(StoreError, match="user list"):
        accounts.remove_account("alice")


def test_account_names_are_unique(accounts: Accounts) -> None:
    accounts.add_account("alice", "h", admin=False)
    with pytest.raises(StoreError, match="exists already"):
        accounts.add_account("alice", "h2", admin=True)


def test_the_server_secret_is_random_and_kept(tmp_path: Path) -> None:
    first = Accounts(Store(f"sqlite:///{tmp_path / 'a.db'}")).server_secret()
    assert len(first) == 32
    assert Accounts(Store(f"sqlite:///{tmp_path / 'a.db'}")).server_secret() == first
    assert Accounts(Store(f"sqlite:///{tmp_path / 'b.db'}")).server_secret() != first


def test_share_links_expire_and_revoke(accounts: Accounts) -> None:
    alice = accounts.add_account("alice", "h", admin=False)
    run = _run(accounts.store, "r")
    link = accounts.add_share_link(token_hash="t" * 64, kind="run", run_ids=[run], owner=alice.id, note="n",
                                   expires_at=now() + timedelta(hours=1))
    assert accounts.share_link_by_hash("t" * 64).live(now())
    assert not link.live(now() + timedelta(hours=2))
    accounts.revoke_share_link(link.id)
    assert not accounts.share_link(link.id).live(now())
    assert [x.id for x in accounts.share_links_of(alice.id, "run", [run])] == [link.id]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in (link.id, alice.id, run))  # 128 random bits
    with pytest.raises(StoreError):
        accounts.add_share_link(token_hash="u" * 64, kind="compare", run_ids=[run], owner=alice.id, note="",
                                expires_at=now())


def test_migration_0005_on_a_store_with_runs_and_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    engine = create_engine(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0003_goals")
        connection.execute(text(
            "INSERT INTO runs (id, label, status, source, created_at, facts, warnings, stackbench_version) "
            "VALUES ('" + "a" * 32 + "', 'old', 'complete', 'imported', '2026-01-01 00:00:00', '{}', '[]', '0.1')"
        ))
    store = Store(url)  # migrates to the head
    accounts = Accounts(store)
    admin = accounts.add_account("root", "h", admin=True)
    assert accounts.access(Viewer(admin.id, True), "run", "a" * 32) == (None, "private")
    store.dispose()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0003_goals")
        columns = [row[1] for row in connection.execute(text("PRAGMA table_info(runs)"))]
        assert "owner" not in columns and "visibility" not in columns
        assert connection.execute(text("SELECT label FROM runs")).scalar() == "old"
    engine.dispose()


def _series(accounts: Accounts) -> Viewer:
    """Runs of several series (report/openmetrics.py `series_of`: facts' hostname, target, preset) for an
    account `metrics`: older and newer complete runs, a newer failed one, hostnames that are not strings
    (the report takes them as ""), another account's newer private run. Returns the account as a Viewer."""
    from datetime import datetime, timezone

    from sqlalchemy import update

    from stackbench.store import schema
    from stackbench.store.repository import CellRecord, OutputRecord
    from synthetic import cell

    store = accounts.store
    mine = accounts.add_account("metrics", "h", admin=False)
    theirs = accounts.add_account("other", "h", admin=False)
    alpha, five = {"system": {"hostname": "alpha"}}, {"system": {"hostname": "5"}}
    made = [(alpha, "/a", "p", "complete", mine), (alpha, "/a", "p", "complete", mine), (alpha, "/a", "p", "failed", mine),
            (alpha, "/a", "p", "complete", theirs), (alpha, "/b", "p", "complete", mine),
            ({"system": {"hostname": "beta"}}, "/a", "p", "complete", mine), (five, "/a", "p", "complete", mine),
            ({"system": {"hostname": 5}}, "/a", "p", "complete", mine), ({"system": "up"}, "/a", "p", "complete", mine),
            ({"system": {"hostname": None}}, "/a", "p", "complete", mine), ({}, None, None, "complete", mine)]
    for minute, (facts, target, plan, status, owner) in enumerate(made):
        run_id = store.create_run(source="measured", label=f"m{minute}", target=target, plan_name=plan,
                                  planned_cells=1, facts={"fio_version": "fio-3.33", **facts})
        store.add_measurement(run_id, [OutputRecord("synthetic", "fio-3.33")],
                              [CellRecord(w.workload, w.result) for w in (cell(iops=100.0 + minute),)])
        store.finish_run(run_id, status)
        with store.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == run_id)
                               .values(created_at=datetime(2026, 1, 1, 0, minute, tzinfo=timezone.utc)))
        accounts.claim(owner.id, [run_id])
    return Viewer(mine.id, False)


def assert_metrics_runs_are_the_reports(accounts: Accounts) -> None:
    """The runs `latest_complete_runs` reads, in two statements, give /metrics the text that reading every
    visible run and choosing in Python gave."""
    from sqlalchemy import event

    from stackbench.report.openmetrics import latest_complete, openmetrics_text

    viewer = _series(accounts)
    statements: list[str] = []
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(accounts.store.engine, "before_cursor_execute", listen)
    candidates = accounts.latest_complete_runs(viewer)
    event.remove(accounts.store.engine, "before_cursor_execute", listen)
    assert len(statements) == 2  # the chosen runs, their cells
    rows, _ = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=1000)
    expected = latest_complete(run for run, _, _, _ in rows)
    chosen = latest_complete(candidates)
    assert [r.label for r in chosen] == [r.label for r in expected]
    assert {r.label for r in expected} == {"m1", "m4", "m5", "m6", "m10"} | {"m9"}  # m9: host "" of /a p
    assert openmetrics_text(chosen) == openmetrics_text(accounts.store.get_run(r.id) for r in expected)


def test_metrics_read_only_the_latest_complete_run_of_each_series(accounts: Accounts) -> None:
    assert_metrics_runs_are_the_reports(accounts)


@pytest.mark.postgres
def test_metrics_read_only_the_latest_complete_run_of_each_series_on_postgresql(pg_database: str) -> None:
    store = Store(pg_database)
    try:
        assert_metrics_runs_are_the_reports(Accounts(store))
    finally:
        store.dispose()


def test_paging_by_anchor_gives_the_pages_of_paging_by_offset(accounts: Accounts) -> None:
    _walk_pages_by_anchor(accounts)


@pytest.mark.postgres
def test_paging_by_anchor_gives_the_pages_of_paging_by_offset_on_postgresql(pg_database: str) -> None:
    accounts = Accounts(Store(pg_database))
    try:
        _walk_pages_by_anchor(accounts)
    finally:
        accounts.store.dispose()


def _walk_pages_by_anchor(accounts: Accounts) -> None:
    """The runs list's Older and Newer links name the last and first run shown (`older_than`,
    `newer_than`) instead of an offset. Walking them must show every run the viewer may see exactly once,
    in the list's order, also where runs share a creation time (the id breaks the tie, as in ORDER BY)
    and where runs the viewer may not see lie between."""
    store = accounts.store
    alice = accounts.add_account("alice", "h", admin=False)
    bob = accounts.add_account("bob", "h", admin=False)
    ids = []
    for n in range(11):
        run_id = _run(store, f"run-{n}")
        accounts.claim(bob.id if n % 3 == 0 else alice.id, [run_id])  # bob's private runs in between
        ids.append(run_id)
    with store.engine.begin() as connection:  # ties across a page's end: runs 4-9 created in the same microsecond
        connection.execute(text("UPDATE runs SET created_at = (SELECT created_at FROM runs WHERE id = :a) "
                                "WHERE id IN (:b, :c, :d, :e, :f)"),
                           dict(a=ids[4], b=ids[5], c=ids[6], d=ids[7], e=ids[8], f=ids[9]))
    viewer = Viewer(alice.id, False)

    def page(**at: object) -> list[str]:
        rows, total = accounts.visible_runs(viewer, RunFilter(), limit=3, whole=False, **{"offset": 0, **at})
        assert total == 7
        return [run.id for run, *_ in rows]

    by_offset = [page(offset=k) for k in range(0, 7, 3)]
    assert sorted(sum(by_offset, [])) == sorted(i for n, i in enumerate(ids) if n % 3)
    walked = [page()]
    while len(walked) < 3:
        walked.append(page(older_than=walked[-1][-1]))
    assert walked == by_offset
    assert page(older_than=walked[-1][-1]) == []  # past the end
    assert page(newer_than=walked[2][0]) == walked[1]
    assert page(newer_than=walked[1][0]) == walked[0]
    # an anchor the viewer may not see finds nothing, like one that does not exist
    assert page(older_than=ids[0]) == [] and page(newer_than=ids[3]) == [] and page(older_than="f" * 32) == []
