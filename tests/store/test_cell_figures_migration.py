"""Migration 0009: cells stored with fio's pooled IOPS get their runs' geometric mean, the pooled figures kept
under names that say what they are, and the downgrade puts them back (real SQLite, and PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from stackbench.store import Store, schema
from stackbench.store.database_url import database_url
from stackbench.store.repository import CellRecord, OutputRecord
from conftest import alembic
from synthetic import cell


def _row(url: str) -> tuple:
    engine = create_engine(database_url(url))
    with engine.connect() as connection:
        found = connection.execute(select(schema.cells.c.iops, schema.cells.c.bw_bytes, schema.cells.c.result,
                                          schema.cells.c.measurement)).one()
    engine.dispose()
    return tuple(found)


def _stored_before_0009(url: str) -> None:
    """A cell as an older stackbench stored it: two runs of 1,000 and 4,000 IOPS, fio's pooled 2,500."""
    old = cell(runs=[1000.0, 4000.0])
    old = replace(old, result=replace(old.result, iops=2500.0, bw_bytes=2500.0 * 4096),
                  measurement={"mode": "fixed", "replicates": [
                      {"index": 0, "round": 0, "iops": 1000.0, "bw_bytes": 1000.0 * 4096},
                      {"index": 1, "round": 1, "iops": 4000.0, "bw_bytes": 4000.0 * 4096}]})
    store = Store(url)
    run_id = store.create_run(source="measured", label="old", target="/t", plan_name="quick", planned_cells=1,
                              facts={"fio_version": "fio-3.33"})
    store.add_measurement(run_id, [OutputRecord(raw_text="synthetic", fio_version="fio-3.33")],
                          [CellRecord(old.workload, old.result, (), old.measurement)])
    store.finish_run(run_id, "complete")
    store.dispose()
    alembic(url, "downgrade", "0008_run_tallies")


def _check(url: str) -> None:
    _stored_before_0009(url)
    before = _row(url)
    assert before[0] == 2500.0
    alembic(url, "upgrade", "head")
    iops, bw_bytes, result, measurement = _row(url)
    assert iops == pytest.approx(2000.0) and bw_bytes == pytest.approx(2000.0 * 4096)
    assert result["iops"] == pytest.approx(2000.0) and result["bw_bytes"] == pytest.approx(2000.0 * 4096)
    assert measurement["fio_pooled_iops"] == 2500.0 and measurement["fio_pooled_bw_bytes"] == 2500.0 * 4096
    store = Store(url)
    assert store.get_run("old").cells[0].result.iops == pytest.approx(2000.0)
    store.dispose()
    alembic(url, "downgrade", "0008_run_tallies")
    assert _row(url) == before


def test_0009_stores_the_runs_geometric_mean_and_goes_back(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_0009_on_postgresql(pg_url: str) -> None:
    store = Store(pg_url)
    with store.engine.begin() as connection:
        schema.metadata.drop_all(connection)
        connection.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
        connection.exec_driver_sql("DROP TABLE IF EXISTS run_tallies")
    store.dispose()
    _check(pg_url)
