"""The runs list's statements are built once per shape of request and compiled once (store/accounts.py,
`_page_query`, `_count_query`, `_facets_query`): a second request of the same shape with other values sends
the very statement objects of the first, SQLAlchemy finds their compiled form in the engine's cache, and
the answers are those of the new values, not the first request's (the values are bound parameters). On
real SQLite and PostgreSQL. Building the statements again on every request cost about 3 ms of a list page
at 10,000 runs (bench/RESULTS.md, "The finder at 10,000 runs")."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Iterator

import pytest
from sqlalchemy import event
from sqlalchemy.engine.default import CACHE_HIT

from stackbench.store import Store
from stackbench.store.accounts import Accounts, RunFilter, Viewer
from web.site import _password_hash


class Sent:
    """The statement objects the store executed and whether each was found compiled in the engine's cache."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.statements, self.cached = engine, [], []

    def __enter__(self) -> Sent:
        event.listen(self.engine, "before_execute", self._statement)
        event.listen(self.engine, "before_cursor_execute", self._compiled)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self.engine, "before_execute", self._statement)
        event.remove(self.engine, "before_cursor_execute", self._compiled)

    def _statement(self, _connection, statement, *_rest) -> None:  # noqa: ANN001
        self.statements.append(statement)

    def _compiled(self, _connection, _cursor, _sql, _parameters, context, _many) -> None:  # noqa: ANN001
        self.cached.append(context.cache_hit is CACHE_HIT)


def _stored(url: str) -> Iterator[tuple[Accounts, str, dict[str, str]]]:
    store = Store(url)
    accounts = Accounts(store)
    alice = accounts.add_account("alice", _password_hash(), admin=False).id
    bob = accounts.add_account("bob", _password_hash(), admin=False).id
    ids = {}
    for label, plan, owner in (("alpha-1", "quick", alice), ("alpha-2", "blog", alice), ("beta-1", "quick", alice),
                               ("beta-2", "quick", bob)):
        ids[label] = store.create_run(source="measured", label=label, target="/srv", plan_name=plan,
                                      planned_cells=1, facts={})
        accounts.claim(owner, [ids[label]])
    accounts.set_visibility(ids["beta-2"], "team")
    yield accounts, alice, ids
    store.dispose()


def _check(url: str) -> None:
    for accounts, alice, ids in _stored(url):
        viewer = Viewer(alice, False)
        engine = accounts.reader

        def listed(where: RunFilter, **at: Any) -> tuple[list[str], int, dict[str, Any], int]:
            rows, total = accounts.visible_runs(viewer, where, whole=False, limit=50, **{"offset": 0, **at})
            facets, tallied = accounts.run_facets(viewer, where)
            return sorted(run.label for run, *_ in rows), total, dict(facets), tallied

        shapes = [
            (RunFilter(search="alpha"), RunFilter(search="BETA")),
            (RunFilter(plan="quick"), RunFilter(plan="blog")),
            (RunFilter(owner="alice", plan="quick"), RunFilter(owner="bob", plan="quick")),
            (RunFilter(until=date(2000, 1, 1)), RunFilter(until=date(2999, 1, 1))),  # an empty page counts apart
        ]
        expected = [
            (["alpha-1", "alpha-2"], ["beta-1", "beta-2"]),
            (["alpha-1", "beta-1", "beta-2"], ["alpha-2"]),
            (["alpha-1", "beta-1"], ["beta-2"]),
            ([], ["alpha-1", "alpha-2", "beta-1", "beta-2"]),
        ]
        for (first, second), (first_labels, second_labels) in zip(shapes, expected):
            with Sent(engine) as one:
                assert listed(first)[:2] == (first_labels, len(first_labels))
            with Sent(engine) as two:
                labels, total, facets, tallied = listed(second)
            assert (labels, total, tallied) == (second_labels, len(second_labels), len(second_labels)), second
            assert sum(count for _, count in facets["plan"]) == len(second_labels)
            # the same statement objects, not built again, and not compiled again
            assert {id(s) for s in two.statements} <= {id(s) for s in one.statements}, second
            assert two.cached and all(two.cached), (second, two.cached)
        # a page anchored at a run (the Older link), with another anchor the second time
        newest = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=50, whole=False)[0]
        older = [run.id for run, *_ in newest]
        with Sent(engine) as one:
            after_first = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=1, older_than=older[0])[0]
        with Sent(engine) as two:
            after_second = accounts.visible_runs(viewer, RunFilter(), offset=0, limit=1, older_than=older[1])[0]
        assert [r.id for r, *_ in after_first] == [older[1]] and [r.id for r, *_ in after_second] == [older[2]]
        assert [id(s) for s in two.statements] == [id(s) for s in one.statements] and all(two.cached)


def test_the_list_statements_are_built_and_compiled_once_per_shape_on_sqlite(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_the_list_statements_are_built_and_compiled_once_per_shape_on_postgresql(pg_database: str) -> None:
    _check(pg_database)
