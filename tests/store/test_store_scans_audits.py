"""Scans and audits in the results store (migration 0004_scans_audits), on SQLite and on a real PostgreSQL
server: the upgrade of a store that already holds runs, the round trip, the id lookup across kinds, one
transaction for `rm`, and damaged rows."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, select

from stackbench.model.fio_result import Sample
from stackbench.base.errors import StoreError
from stackbench.model.results import new_id
from stackbench.store import Store, schema
from stackbench.store.database_url import database_url
from stackbench.store.repository import CellRecord, OutputRecord
from stackbench.store.database import head_revision
from conftest import alembic
from stored_runs import build_store, runs

OLD_TABLES = ("runs", "fio_outputs", "cells", "samples", "goals")
NEW_TABLES = {"scans", "audits", "audit_findings"}
WHEN = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def _contents(url: str, columns: dict[str, list[str]] | None = None) -> tuple[dict[str, list[str]], dict[str, list[tuple]]]:
    """Every row of the old tables, in the columns they have now (or in `columns`: later migrations add some)."""
    engine = create_engine(database_url(url))
    with engine.connect() as connection:
        columns = columns or {name: [c["name"] for c in inspect(connection).get_columns(name)] for name in OLD_TABLES}
        found = {name: sorted(tuple(map(str, row)) for row in connection.execute(
                     select(*(schema.metadata.tables[name].c[c] for c in columns[name]))))
                 for name in OLD_TABLES}
    engine.dispose()
    return columns, found


def _version_and_tables(url: str) -> tuple[str, set[str]]:
    engine = create_engine(database_url(url))
    with engine.connect() as connection:
        version = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one()
        tables = set(inspect(connection).get_table_names())
    engine.dispose()
    return version, tables


def _upgrade_keeps_every_run(url: str) -> None:
    build_store(url)  # six runs with cells, fio outputs and a goal
    store = Store(url)  # and one with per-second samples
    run_id = store.create_run(source="measured", label="with-samples", target="/t", plan_name="quick",
                              planned_cells=1, facts={"fio_version": "fio-3.33"})
    cell = runs()[0].cells[0]
    samples = [Sample(t_s=float(t), iops=1000.0 + t, bw_bytes=4096e3 + t, clat_mean_ns=900.0, ramp=t == 1)
               for t in range(1, 6)]
    store.add_measurement(run_id, [OutputRecord(raw_text="synthetic", fio_version="fio-3.33")],
                          [CellRecord(cell.workload, cell.result, samples, cell.measurement)])
    store.finish_run(run_id, "complete")
    store.dispose()
    alembic(url, "downgrade", "0003_goals")
    version, tables = _version_and_tables(url)
    assert version == "0003_goals" and not tables & NEW_TABLES
    columns, before = _contents(url)
    assert all(before[name] for name in OLD_TABLES)
    store = Store(url)  # opening a 0003 store upgrades it
    version, tables = _version_and_tables(url)
    assert version == head_revision() and NEW_TABLES <= tables
    store.dispose()
    # 0009 recomputes the figures of cells with several runs (keeping fio's pooled ones beside them) and
    # puts them back on the way down: every row is as it was once back before it
    alembic(url, "downgrade", "0008_run_tallies")
    assert _contents(url, columns)[1] == before
    alembic(url, "upgrade", "head")
    store = Store(url)
    assert [run.label for run, _ in store.list_runs()] == ["with-samples", "sata-ssd", "optane", "vm-luks", "vm", "lz4",
                                                            "baseline"]
    assert [s.iops for s in store.get_run("with-samples").cells[0].samples] == [1001.0, 1002.0, 1003.0, 1004.0, 1005.0]
    _round_trip(store)
    store.dispose()


def test_a_0003_store_with_runs_upgrades_to_the_head_with_nothing_lost(tmp_path: Path) -> None:
    _upgrade_keeps_every_run(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_a_0003_postgresql_store_with_runs_upgrades_to_the_head_with_nothing_lost(pg_url: str) -> None:
    store = Store(pg_url)
    with store.engine.begin() as connection:  # a clean schema for this test
        schema.metadata.drop_all(connection)
        connection.exec_driver_sql("DROP TABLE IF EXISTS alembic_version")
    store.dispose()
    _upgrade_keeps_every_run(pg_url)


def _scan_document(scan_id: str, paths: list[str]) -> dict:
    return {"bins": {"1024": {"count": 2, "bytes": 100}, "4096": {"count": 1, "bytes": 5000}}, "files": 3,
            "bytes": 5100, "seconds": 0.5, "files_per_s": 6.0, "workers": 2, "unreadable_dirs": 0, "partial": False,
            "recommendation": {"special_small_blocks": 0, "special_size": None, "usable_bytes": None,
                               "estimated_usage_bytes": 15, "metadata_bytes": 15, "metadata_share": 0.003,
                               "fits": True, "reason": "give --special-size"},
            "special_usage": [], "unreadable_examples": [], "scan_id": scan_id, "label": None,
            "created_at": WHEN.isoformat(), "paths": paths, "settings": {"recordsize_bytes": 131072},
            "stackbench_version": "test"}


def _round_trip(store: Store) -> None:
    scan_id, audit_id = new_id(), new_id()
    document = _scan_document(scan_id, ["/tank/ü data"])
    store.add_scan(scan_id=scan_id, label="tank-scan", created_at=WHEN, status="complete", document=document)
    finding = {"rule": "DS-SYNC-DISABLED", "severity": "crit", "subject": "tank/vm", "vm": None, "disks": [],
               "evidence": "sync=disabled", "fix": "zfs set sync=standard tank/vm"}
    store.add_audit(audit_id=audit_id, label="pve", created_at=WHEN + timedelta(seconds=1), subject_key="machine:ab",
                    subject_name="pve", source="capture", source_detail="--from /x", zfs_version="zfs-2.3.2",
                    previous_id=None, facts={"files": ["arcstats.txt"]}, document={"findings": [finding]},
                    findings=[finding])
    scan = store.get_scan(scan_id)
    assert (scan.label, scan.status, scan.paths, scan.files, scan.bytes, scan.document) == \
        ("tank-scan", "complete", ["/tank/ü data"], 3, 5100, document)
    assert scan.created_at == WHEN
    audit = store.get_audit(audit_id)
    assert audit.findings == (finding,) and audit.worst_severity == "crit" and audit.facts == {"files": ["arcstats.txt"]}
    assert store.latest_audit("machine:ab").id == audit_id and store.latest_audit("machine:zz") is None
    assert store.resolve_any("tank-scan") == ("scan", scan_id)
    assert store.resolve_any(audit_id[:6]) == ("audit", audit_id)
    assert [s.id for s in store.list_scans(label="tank-scan")] == [scan_id]
    assert [a.id for a in store.list_audits()] == [audit_id]
    assert store.delete_stored(scans=[scan_id], audits=[audit_id]) == 2
    assert store.list_scans() == [] and store.list_audits() == []
    with store.engine.connect() as connection:
        assert connection.execute(select(schema.audit_findings)).all() == []


def test_scans_and_audits_round_trip_on_sqlite(tmp_path: Path) -> None:
    _round_trip(Store(f"sqlite:///{tmp_path / 'r.db'}"))


@pytest.mark.postgres
def test_scans_and_audits_round_trip_on_postgresql(pg_url: str) -> None:
    store = Store(pg_url)
    with store.engine.begin() as connection:
        for table in ("audit_findings", "audits", "scans"):
            connection.exec_driver_sql(f"DELETE FROM {table}")
    _round_trip(store)


def test_a_label_on_two_kinds_and_an_unknown_name_are_one_line_errors(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run(source="imported", label="nightly", target=None, plan_name="import", planned_cells=0,
                              facts={})
    scan_id = new_id()
    store.add_scan(scan_id=scan_id, label="nightly", created_at=WHEN, status="partial",
                   document=_scan_document(scan_id, ["/a"]))
    with pytest.raises(StoreError, match="names a run and a scan") as caught:
        store.resolve_any("nightly")
    assert "Give the id" in caught.value.fix
    assert store.resolve_any("nightly", kinds=("run",)) == ("run", run_id)
    assert store.resolve("nightly") == run_id  # compare, layers and the others name runs only, as before
    with pytest.raises(StoreError, match="no run, scan, audit or tune session with id or label 'nope'"):
        store.resolve_any("nope")
    with pytest.raises(StoreError, match="no scan with id"):
        store.get_scan("0" * 32)
    assert store.list_scans()[0].status == "partial"


def test_a_damaged_row_is_a_store_error_naming_it_and_rm_still_removes_it(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = Store(f"sqlite:///{path}")
    scan_id, audit_id = new_id(), new_id()
    store.add_scan(scan_id=scan_id, label=None, created_at=WHEN, status="complete",
                   document=_scan_document(scan_id, ["/a"]))
    store.add_audit(audit_id=audit_id, label=None, created_at=WHEN, subject_key="k", subject_name=None,
                    source="host", source_detail=None, zfs_version=None, previous_id=None, facts={},
                    document={"findings": []}, findings=[])
    with sqlite3.connect(path) as connection:  # a disk error, a hand edit: JSON that is not JSON any more
        connection.execute("UPDATE scans SET document = 'not json {' WHERE id = ?", (scan_id,))
        connection.execute("UPDATE audits SET facts = '[1, 2' WHERE id = ?", (audit_id,))
    with pytest.raises(StoreError, match=f"stored scan {scan_id[:12]} is damaged") as caught:
        store.get_scan(scan_id)
    assert f"stackbench rm {scan_id[:12]}" in caught.value.fix
    with pytest.raises(StoreError, match=f"stored audit {audit_id[:12]} is damaged"):
        store.latest_audit("k")
    assert [s.id for s in store.list_scans()] == [scan_id]  # listing does not read the damaged documents
    assert [a.id for a in store.list_audits()] == [audit_id]
    assert store.delete_stored(scans=[scan_id], audits=[audit_id]) == 2
    assert json.loads(json.dumps([s.id for s in store.list_scans()])) == []
