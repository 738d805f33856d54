"""A share link is bound to its maker's ownership of its runs (migration 0009): once a run leaves its
maker, by whichever path, every link naming it is gone, and moving the run back does not bring a link
back. Checked through the store's own API for every path that changes a run's owner or removes the run,
on SQLite and on PostgreSQL, and on a store migrated from 0008 that already held such dead links."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Callable

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, insert, update

from stackbench.store import Store, schema
from stackbench.store.accounts import Accounts, ShareLink, Viewer, now
from stackbench.store.database import MIGRATIONS
from stackbench.store.uploads import add_uploaded_run, run_document
from web import test_postgres

pg_database = test_postgres.pg_database


def _run(store: Store) -> str:
    run_id = store.create_run(source="imported", label=None, target=None, plan_name="import", planned_cells=0,
                              facts={})
    store.finish_run(run_id, "complete")
    return run_id


def _link(accounts: Accounts, owner: str, run_ids: list[str], token: str) -> ShareLink:
    return accounts.add_share_link(token_hash=token.ljust(64, "x"), kind="run" if len(run_ids) == 1 else "compare",
                                   run_ids=run_ids, owner=owner, note="", expires_at=now() + timedelta(days=7))


def _moves(accounts: Accounts, alice: str, bob: str) -> dict[str, Callable[[str], None]]:
    """Ways a run leaves alice and, where the path allows it, comes back to her."""
    store = accounts.store

    def taken_and_given_back(run_id: str) -> None:  # `user claim bob RUN --take`, then alice takes it back
        accounts.claim(bob, [run_id], take=True)
        accounts.claim(alice, [run_id], take=True)

    def unowned_and_claimed_again(run_id: str) -> None:  # an owner set to none by hand, then `user claim alice`
        with store.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == run_id).values(owner=None))
        accounts.claim(alice, [run_id])

    def deleted_and_pushed_again(run_id: str) -> None:  # `rm`, then the same run pushed again by alice
        document = run_document(store, run_id)
        store.delete_runs([run_id])
        add_uploaded_run(store, alice, document)

    return {"taken and given back": taken_and_given_back, "unowned and claimed again": unowned_and_claimed_again,
            "deleted and pushed again": deleted_and_pushed_again}


def _assert_links_stay_dead(url: str) -> None:
    accounts = Accounts(Store(url))
    try:
        alice = accounts.add_account("alice", "h", admin=False).id
        bob = accounts.add_account("bob", "h", admin=False).id
        for number, (name, move) in enumerate(_moves(accounts, alice, bob).items()):
            run, other, untouched = (_run(accounts.store) for _ in range(3))
            accounts.claim(alice, [run, other, untouched])
            alone = _link(accounts, alice, [run], f"{number}a")
            compared = _link(accounts, alice, [other, run], f"{number}b")  # the run as B of a comparison
            kept = _link(accounts, alice, [untouched], f"{number}c")
            move(run)
            assert accounts.access(Viewer(alice, False), "run", run)[0] == alice, name  # back with its maker ...
            assert accounts.share_link(alone.id) is None, name  # ... and its links still gone
            assert accounts.share_link(compared.id) is None, name
            assert accounts.share_link_by_hash(f"{number}a".ljust(64, "x")) is None, name
            assert accounts.share_link(kept.id) is not None, name  # other runs' links are untouched
        # a change that is not a move (claiming what one owns, making it team) ends nothing
        run = _run(accounts.store)
        accounts.claim(alice, [run])
        link = _link(accounts, alice, [run], "z")
        accounts.claim(alice, [run])
        accounts.set_visibility(run, "team")
        assert accounts.share_link(link.id) is not None
        accounts.remove_account("alice")  # and the account's removal, as before
        assert accounts.share_link(link.id) is None
    finally:
        accounts.store.dispose()


def test_links_stay_dead_after_every_ownership_move(tmp_path: Path) -> None:
    _assert_links_stay_dead(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_links_stay_dead_after_every_ownership_move_on_postgresql(pg_database: str) -> None:
    _assert_links_stay_dead(pg_database)


def test_the_migration_ends_links_already_dead_and_goes_back(tmp_path: Path) -> None:
    """A store at 0008 with a link whose run had moved away (dead, until the run came back) loses that link
    when it moves to 0009, keeps the live one, and 0009 goes back to 0008."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    accounts = Accounts(Store(url))
    alice = accounts.add_account("alice", "h", admin=False).id
    bob = accounts.add_account("bob", "h", admin=False).id
    moved, kept = _run(accounts.store), _run(accounts.store)
    accounts.claim(alice, [moved, kept])
    accounts.store.dispose()
    engine = create_engine(url)
    with engine.begin() as connection:  # at 0008: links made, then a run moved, as 0008 allowed
        config.attributes["connection"] = connection
        command.downgrade(config, "0010_cell_figures_across_runs")
        for link_id, run_id in (("d" * 32, moved), ("l" * 32, kept)):
            connection.execute(insert(schema.share_links).values(
                id=link_id, token_hash=link_id * 2, kind="run", object_id=run_id, owner=alice, note="",
                created_at=now(), expires_at=now() + timedelta(days=7)))
        connection.execute(update(schema.runs).where(schema.runs.c.id == moved).values(owner=bob))
        command.upgrade(config, "head")
    engine.dispose()
    accounts = Accounts(Store(url))
    try:
        assert accounts.share_link("d" * 32) is None and accounts.share_link("l" * 32) is not None
    finally:
        accounts.store.dispose()
    engine = create_engine(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0010_cell_figures_across_runs")
        command.upgrade(config, "head")
    engine.dispose()
