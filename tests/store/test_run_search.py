"""The runs list's search as the store runs it (`Accounts.visible_runs` with `RunFilter.search`), on real
SQLite and PostgreSQL, whose LIKEs differ (SQLite's ignores ASCII case, PostgreSQL's does not: the search
is an ILIKE there): any case, wildcards as plain text, the host included."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackbench.store import Store
from stackbench.store.accounts import Accounts, RunFilter, Viewer
from web.site import _password_hash

LABELS = {"Baseline-EXT4": "db01", "50%_mix": "db02", "50a_mixx": "DB03", "back\\slash/2": "db04"}


def _check(url: str) -> None:
    store = Store(url)
    accounts = Accounts(store)
    owner = accounts.add_account("alice", _password_hash(), admin=False).id
    ids = {}
    for label, host in LABELS.items():
        ids[label] = store.create_run(source="measured", label=label, target="srv-x", plan_name="quick",
                                      planned_cells=1, facts={"system": {"hostname": host}})
    accounts.claim(owner, list(ids.values()))
    viewer = Viewer(owner, False)

    def found(text: str) -> set[str]:
        rows, total = accounts.visible_runs(viewer, RunFilter(search=text), offset=0, limit=50, whole=False)
        assert total == len(rows)
        return {run.label for run, *_ in rows}

    assert found("baseline-ext") == {"Baseline-EXT4"}
    assert found("50%_m") == {"50%_mix"}
    assert found("_") == {"50%_mix", "50a_mixx"}
    assert found("db03") == {"50a_mixx"}  # the host, in any case
    assert found("\\slash/") == {"back\\slash/2"}  # the escape character is text too
    assert found("/") == {"back\\slash/2"}
    store.dispose()


def test_the_search_on_sqlite(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_the_search_on_postgresql(pg_database: str) -> None:
    _check(pg_database)
