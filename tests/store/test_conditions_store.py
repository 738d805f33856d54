"""The machine's conditions of each fio process (probe/conditions.py, as a real sampler records them) are
stored with the fio run's output in its transaction, read back in the run's order, and deleted with the
run, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from stackbench.model.fio_result import DirectionResult
from stackbench.model.plan import Workload
from stackbench.model.results import new_id
from stackbench.probe.conditions import ConditionSampler
from stackbench.store import Store
from stackbench.store.repository import CellRecord, OutputRecord


def _recorded() -> dict:
    with ConditionSampler(["vda", "no-such-device"], interval=0.05) as sampler:
        time.sleep(0.2)
    return sampler.result()


def _keeps_and_deletes(url: str) -> None:
    store = Store(url)
    run_id = store.create_run(source="measured", label=None, target="/t", plan_name="custom", planned_cells=1,
                              facts={}, warnings=[])
    workload = Workload(rw="randread", bs=4096, iodepth=1)
    result = DirectionResult(job_name="j", direction="read", rw="randread", bs=4096, iodepth=1, numjobs=1,
                             iops=100.0, bw_bytes=409600.0, io_bytes=409600, total_ios=100, runtime_ms=1000,
                             usr_cpu=None, sys_cpu=None, clat=None)
    group = new_id()
    first, second = _recorded(), _recorded()
    for conditions in (first, second, None):
        store.add_replicate(run_id, group, OutputRecord(raw_text="{}", fio_version="fio-3.33"),
                            [CellRecord(workload, result)], conditions=conditions)
    stored = store.conditions_of(run_id)
    assert stored == [{**first, "group_id": group}, {**second, "group_id": group}]
    assert stored[0]["samples"] and "diskstats:no-such-device" in stored[0]["samples"][0]["unavailable"]
    store.delete_stored(runs=[run_id])
    assert store.conditions_of(run_id) == []


def test_sqlite_keeps_the_seconds_and_deletes_them_with_the_run(tmp_path: Path) -> None:
    _keeps_and_deletes(f"sqlite:///{tmp_path / 'r.db'}")


@pytest.mark.postgres
def test_postgresql_keeps_the_seconds_and_deletes_them_with_the_run(pg_database: str) -> None:
    _keeps_and_deletes(pg_database)
