"""The results store on SQLite and on a real PostgreSQL server, with real fio output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stackbench.engine.fio import job_file, run_fio
from stackbench.engine.fio_json import parse_fio_json
from stackbench.base.errors import StoreError, UsageError
from stackbench.model.plan import Workload
from stackbench.store import Store, open_store
from stackbench.store.database_url import database_url
from stackbench.model.warning import Warning, WarningCode

A_WARNING = Warning(WarningCode.PAGE_CACHE, "", "a warning", "a fix")


@pytest.fixture(scope="module")
def real_result(fio_path: str, tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("fio")
    workload = Workload(rw="randwrite", bs=4096, iodepth=4, size=16 * 1024**2, runtime=1.0)
    invocation = run_fio(fio_path, job_file(workload, str(directory / "f.scratch")))
    assert invocation.exit_code == 0, invocation.stderr
    return workload, invocation, parse_fio_json(invocation.stdout)


def _round_trip(url: str, real_result) -> None:
    workload, invocation, parsed = real_result
    store = Store(url)
    run_id = store.create_run(
        source="measured",
        label="roundtrip",
        target="/somewhere",
        plan_name="custom",
        planned_cells=1,
        facts={"fio_version": parsed.fio_version, "system": {"ram_bytes": 123}},
        warnings=[A_WARNING],
    )
    store.add_cells(
        run_id,
        raw_text=invocation.stdout,
        fio_version=parsed.fio_version,
        cells=[(workload, d) for d in parsed.directions],
        command=invocation.command,
        job_file=invocation.job_file,
        exit_code=0,
    )
    store.finish_run(run_id, "complete")

    again = Store(url)  # a second open must not re-run migrations or lose data
    run = again.get_run("roundtrip")
    assert run.id == run_id
    assert run.status == "complete"
    assert run.facts["system"]["ram_bytes"] == 123
    assert run.warnings == (A_WARNING,)
    assert len(run.cells) == 1
    cell = run.cells[0]
    assert cell.workload == workload
    assert cell.result == parsed.directions[0]
    outputs = again.fio_outputs(run_id)
    assert outputs[0]["raw_text"] == invocation.stdout
    assert outputs[0]["job_file"] == invocation.job_file
    assert parse_fio_json(outputs[0]["raw_text"]).directions == parsed.directions
    assert again.resolve(run_id[:8]) == run_id
    listed = again.list_runs()
    assert [(r.id, n) for r, n in listed] == [(run_id, 1)]
    assert run.created_at.tzinfo is not None


def test_sqlite_round_trip_keeps_every_value_and_the_raw_output(tmp_path: Path, real_result) -> None:
    _round_trip(f"sqlite:///{tmp_path / 'r.db'}", real_result)


@pytest.mark.postgres
def test_postgresql_round_trip_keeps_every_value_and_the_raw_output(pg_url: str, real_result) -> None:
    store = Store(pg_url)
    with store.engine.begin() as connection:  # a clean schema for this test
        from stackbench.store.schema import metadata

        metadata.drop_all(connection)
        connection.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
    _round_trip(pg_url, real_result)


def test_plain_path_means_sqlite_file(tmp_path: Path) -> None:
    assert database_url(str(tmp_path / "x.db")) == f"sqlite:///{tmp_path / 'x.db'}"
    assert database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"


def test_unknown_run_names_the_command_that_lists_runs(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(StoreError, match="stackbench runs"):
        store.get_run("nope")


def test_unwritable_database_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="--db"):
        Store(f"sqlite:///{blocker / 'sub' / 'r.db'}")


def test_garbage_database_url_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="sqlite:///PATH"):
        Store("nosuchdriver://x/y")


def test_a_method_of_every_aggregate_reports_a_database_failure_as_one_line(tmp_path: Path) -> None:
    """`Store` is one mixin per aggregate (store/repository.py): the methods each mixin defines, not only
    those on `Store` itself, turn a database failure into the one-line StoreError with the fix."""
    import inspect

    path = tmp_path / "r.db"
    store = Store(str(path))
    store.dispose()
    path.write_bytes(b"not a database " * 512)
    ref = "ab" * 16
    # runs, cells, goals, scans, audits, and what spans them
    for call in (store.has_run, store.fio_outputs, store.remove_goal, store.get_scan, store.get_audit, store.resolve):
        with pytest.raises(StoreError, match="is not an SQLite database"):
            call(ref)
    unguarded = [name for name in dir(Store) if not name.startswith("_") and inspect.isfunction(getattr(Store, name))
                 and not hasattr(getattr(Store, name), "__wrapped__")]
    assert unguarded == []


def test_schema_is_created_by_the_alembic_migration(tmp_path: Path) -> None:
    Store(f"sqlite:///{tmp_path / 'r.db'}")
    tables = subprocess.run(
        ["python3", "-c", f"import sqlite3;print(sorted(r[0] for r in sqlite3.connect('{tmp_path / 'r.db'}').execute(\"select name from sqlite_master where type='table'\")))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "alembic_version" in tables and "cells" in tables and "fio_outputs" in tables


def test_head_revision_read_from_the_scripts_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from stackbench.store.database import MIGRATIONS, head_revision

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert head_revision() == ScriptDirectory.from_config(config).get_current_head()


def test_opening_a_current_store_does_not_import_alembic(tmp_path) -> None:
    """The schema check on every command is one query; Alembic is imported only to migrate (issue 12)."""
    import subprocess
    import sys

    db = tmp_path / "runs.db"
    probe = ("import sys; from stackbench.store import open_store; open_store(sys.argv[1]); "
             "print('alembic' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True, check=True)
    assert (first.stdout.strip(), second.stdout.strip()) == ("True", "False")


def test_the_migrations_build_exactly_the_tables_of_schema_py(tmp_path: Path) -> None:
    """schema.py and migrations/versions must change together (schema.py's docstring): a column, an
    index or a table in one and not the other is a difference Alembic's comparison reports. SQLite's FTS5
    search index (migration 0018, `schema.SEARCH_INDEX_TABLES`) is made only where SQLite can, so schema.py
    cannot hold it: tests/store/test_run_search_index.py checks it."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlalchemy import create_engine

    from stackbench.store import schema

    url = f"sqlite:///{tmp_path / 'migrated.db'}"
    open_store(url).dispose()
    engine = create_engine(url)
    with engine.connect() as connection:
        def ours(name, type_, _parent) -> bool:  # noqa: ANN001
            return not (type_ == "table" and name in schema.SEARCH_INDEX_TABLES)

        context = MigrationContext.configure(connection, opts={"include_name": ours})
        assert compare_metadata(context, schema.metadata) == []
    engine.dispose()
