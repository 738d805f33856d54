"""Rows and the model's objects, both ways: a run's row and its `Run`, a cell's row and its `Cell`, a
cell's samples and their rows, and the times in them (always UTC)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from stackbench.model.fio_result import DirectionResult, Latency, Sample
from stackbench.model.plan import Workload
from stackbench.model.results import Cell, Run
from stackbench.model.warning import Warning


def now() -> datetime:
    return datetime.now(timezone.utc)


def aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)  # SQLite drops the zone; we always store UTC
    return value


def run_from_row(row: Any) -> Run:
    return Run(
        id=row["id"],
        label=row["label"],
        status=row["status"],
        source=row["source"],
        created_at=aware(row["created_at"]),
        finished_at=aware(row["finished_at"]),
        target=row["target"],
        plan_name=row["plan_name"],
        planned_cells=row["planned_cells"],
        facts=row["facts"] or {},
        warnings=tuple(Warning.from_json(w) for w in row["warnings"] or ()),  # dicts; plain strings before codes
    )


def listed_columns(facts: dict[str, Any]) -> dict[str, Any]:
    """The facts the runs list searches (the host) and counts (the file system, the device model), as the
    `runs` columns every write of a run's row sets from its facts (migrations 0012 and 0014): the list
    reads them without parsing facts. The device model is the first non-empty one of the target's block
    devices (a partition has none, the disk under it has)."""

    def fact(section: str, name: str, length: int) -> str | None:
        value = (facts.get(section) or {}).get(name) if isinstance(facts.get(section), dict) else None
        return value[:length] if isinstance(value, str) and value else None

    devices = (facts.get("target") or {}).get("block_devices") if isinstance(facts.get("target"), dict) else None
    models = [d["model"].strip() for d in devices if isinstance(d, dict) and isinstance(d.get("model"), str)] \
        if isinstance(devices, list) else []
    model = next((m[:255] for m in models if m), None)
    return {"host": fact("system", "hostname", 255), "fs_type": fact("target", "fs_type", 64), "device_model": model}


def cell_row(run_id: str, output_id: str, cell: Cell) -> dict[str, Any]:
    result, workload = cell.result, cell.workload
    clat, sync = result.clat, result.sync_lat
    return {
        "id": cell.id,
        "run_id": run_id,
        "fio_output_id": output_id,
        "seq": cell.seq,
        "key": workload.key,
        "pattern": cell.pattern,
        "rw": workload.rw,
        "direction": result.direction,
        "bs": workload.bs,
        "iodepth": workload.iodepth,
        "numjobs": workload.numjobs,
        "sync": workload.sync,
        "direct": workload.direct,
        "host": result.host,
        "iops": result.iops,
        "bw_bytes": result.bw_bytes,
        "clat_mean_ns": clat.mean_ns if clat else None,
        "clat_p50_ns": clat.p50_ns if clat else None,
        "clat_p99_ns": clat.p99_ns if clat else None,
        "clat_p999_ns": clat.p999_ns if clat else None,
        "sync_lat_mean_ns": sync.mean_ns if sync else None,
        "sync_lat_p99_ns": sync.p99_ns if sync else None,
        "usr_cpu": result.usr_cpu,
        "sys_cpu": result.sys_cpu,
        "workload": workload.to_dict(),
        "result": result.to_dict(),
        "measurement": cell.measurement,
    }


def cell_from_row(row: Any, samples: tuple[Sample, ...] = ()) -> Cell:
    data = dict(row["result"])
    for key in ("clat", "sync_lat"):
        if data.get(key) is not None:
            data[key] = Latency(**data[key])
    return Cell(
        id=row["id"],
        seq=row["seq"],
        workload=Workload.from_dict(row["workload"]),
        result=DirectionResult(**data),
        fio_output_id=row["fio_output_id"],
        samples=samples,
        measurement=row["measurement"],
    )


def sample_rows(cell_id: str, samples: Iterable[Sample], start: int = 0) -> list[dict[str, Any]]:
    """The rows of a cell's per-second samples, numbered from `start` (the samples it already has)."""
    return [
        {
            "cell_id": cell_id, "idx": start + index, "segment": sample.segment, "t_s": sample.t_s,
            "iops": sample.iops, "bw_bytes": sample.bw_bytes, "clat_mean_ns": sample.clat_mean_ns, "ramp": sample.ramp,
        }
        for index, sample in enumerate(samples)
    ]
