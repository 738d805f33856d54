"""Migrations 0012 and 0014: runs stored before them get their host, file system and device model copied
from their facts into the columns the runs list searches and counts, the finder index is made, and the
downgrade takes them away without rebuilding `runs` (whose triggers, 0008 and 0011, must stay): real
SQLite, and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, select

from stackbench.store import Store, schema
from stackbench.store.database_url import database_url
from conftest import alembic

FACTS = {"fio_version": "fio-3.33", "system": {"hostname": "db09"}, "target": {"fs_type": "btrfs", "block_devices": [
    {"name": "sda1", "model": None}, {"name": "sda", "model": "  "}, "garbage", {"name": "sdb", "model": 7},
    {"name": "sdc", "model": " Samsung SSD 870 "}, {"name": "sdd", "model": "second"}]}}
ODD = {"fio_version": "fio-3.33", "target": {"block_devices": {"not": "a list"}}}


def _columns(url: str) -> tuple[list[tuple], set[str], set[str]]:
    """The runs' labels with their host and file system columns, and what `_schema` answers."""
    engine = create_engine(database_url(url))
    with engine.connect() as connection:
        rows = connection.execute(select(schema.runs.c.label, schema.runs.c.host, schema.runs.c.fs_type,
                                         schema.runs.c.device_model).order_by(schema.runs.c.label)).all()
    engine.dispose()
    return [tuple(row) for row in rows], *_schema(url)


def _check(url: str) -> None:
    store = Store(url)
    store.create_run(source="measured", label="probed", target="/t", plan_name="quick", planned_cells=1, facts=FACTS)
    store.create_run(source="imported", label="no-facts", target=None, plan_name="import", planned_cells=1,
                     facts={"fio_version": "fio-3.33"})
    store.create_run(source="imported", label="odd", target=None, plan_name="import", planned_cells=1, facts=ODD)
    store.dispose()
    expected = [("no-facts", None, None, None), ("odd", None, None, None),
                ("probed", "db09", "btrfs", "Samsung SSD 870")]
    assert _columns(url)[0] == expected  # stored with them
    alembic(url, "downgrade", "0013_conditions")
    names, indexes = _schema(url)
    assert "device_model" not in names and "ix_runs_finder" in indexes and "host" in names
    alembic(url, "downgrade", "0011_share_links_bound")
    names, indexes = _schema(url)
    assert "host" not in names and "ix_runs_finder" not in indexes
    alembic(url, "upgrade", "head")
    rows, names, indexes = _columns(url)
    assert rows == expected
    assert {"host", "fs_type", "device_model"} <= names and "ix_runs_finder" in indexes


def _schema(url: str) -> tuple[set[str], set[str]]:
    """The names of the columns and indexes of `runs` as the database has them."""
    engine = create_engine(database_url(url))
    found = inspect(engine)
    names = {column["name"] for column in found.get_columns("runs")}
    indexes = {index["name"] for index in found.get_indexes("runs")}
    engine.dispose()
    return names, indexes


def test_0012_and_0014_fill_host_file_system_and_device_model_from_the_facts_and_go_back(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_0012_and_0014_on_postgresql(pg_database: str) -> None:
    _check(pg_database)
