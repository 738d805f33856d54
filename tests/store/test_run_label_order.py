"""The runs list sorted by label descending reads `ix_runs_label_order` (migration 0017) in its order, on
SQLite: SQLite's own plan of the statement `visible_runs` sends says so, rather than a sort of every
visible run's lower(label) to show 50 (~4 ms at 10,000 runs). The order itself is the finder's tests'
(tests/web/test_runs_finder.py); this checks only that the index serves it."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import event

from stackbench.store import Store
from stackbench.store.accounts import Accounts, RunFilter, Viewer


def test_the_list_sorted_by_label_descending_reads_the_label_index(tmp_path: Path) -> None:
    accounts = Accounts(Store(f"sqlite:///{tmp_path / 'r.db'}"))
    owner = accounts.add_account("alice", "h", admin=False).id
    for label in ("b", "A", None, "c"):
        run_id = accounts.store.create_run(source="imported", label=label, target=None, plan_name="import",
                                           planned_cells=0, facts={})
        accounts.claim(owner, [run_id])
    sent: list[tuple[str, object]] = []

    def record(connection, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        sent.append((statement, parameters))

    engine = accounts.reader
    event.listen(engine, "before_cursor_execute", record)
    try:
        rows, total = accounts.visible_runs(Viewer(owner, False), RunFilter(), offset=0, limit=2, whole=False,
                                            sort="-label")
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert [run.label for run, *_ in rows] == ["c", "b"] and total == 4
    statement, parameters = next((s, p) for s, p in sent if "lower(runs.label) DESC" in s)
    with engine.connect() as connection:
        plan = [row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    accounts.store.dispose()
    # the page's ids (the subquery, materialized) from the index in order, no sort of their own; the
    # page's 50 rows are put in order again afterwards, which is cheap
    picked = plan[plan.index("MATERIALIZE anon_1") + 1:plan.index("SCAN anon_1")]
    assert picked == ["SCAN runs USING INDEX ix_runs_label_order"], plan
