"""A fleet cell is one group of fio runs holding a row per host (and the total) per direction: each row is
created by the first run and updated by the next, never mixed with another host's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stackbench.model.fio_result import DirectionResult, Latency
from stackbench.model.plan import Workload
from stackbench.model.results import TOTAL_HOST, new_id
from stackbench.store import Store
from stackbench.store.repository import CellRecord, OutputRecord

WORKLOAD = Workload(rw="randread", bs=4096, iodepth=1, size=8 * 1024**2, runtime=1.0)


def _result(host: str, iops: float) -> DirectionResult:
    return DirectionResult(
        job_name="j", direction="read", rw="randread", bs=4096, iodepth=1, numjobs=1, iops=iops,
        bw_bytes=iops * 4096, io_bytes=int(iops * 4096), total_ios=int(iops), runtime_ms=1000, usr_cpu=None,
        sys_cpu=None, clat=Latency(mean_ns=1000.0, p99_ns=2000.0), host=host,
    )


def test_rows_per_host_are_kept_apart_across_runs(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run(source="measured", label=None, target="a,b:/x", plan_name="custom",
                              planned_cells=1, facts={})
    group = new_id()
    for number, scale in enumerate((1.0, 2.0)):
        records = [CellRecord(WORKLOAD, _result(host, iops * scale), (), {"runs": number + 1})
                   for host, iops in (("a", 100.0), ("b", 300.0), (TOTAL_HOST, 400.0))]
        store.add_replicate(run_id, group, OutputRecord(raw_text="{}", fio_version="fio-3.33"), records)
    cells = store.get_run(run_id).cells
    assert sorted((c.result.host, c.result.iops, c.measurement["runs"]) for c in cells) == [
        (TOTAL_HOST, 800.0, 2), ("a", 200.0, 2), ("b", 600.0, 2)]
    assert len(store.fio_outputs(run_id)) == 2  # one fio --client output per run, not one per host
    assert len({c.seq for c in cells}) == 3


def test_a_one_machine_cell_is_updated_as_before(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run(source="measured", label=None, target="/x", plan_name="custom", planned_cells=1,
                              facts={})
    group = new_id()
    for iops in (100.0, 150.0):
        record = CellRecord(WORKLOAD, replace(_result("x", iops), host=None), (), {})
        store.add_replicate(run_id, group, OutputRecord(raw_text="{}", fio_version="fio-3.33"), [record])
    [cell] = store.get_run(run_id).cells
    assert cell.result.iops == 150.0 and cell.result.host is None
