"""A stored run as one JSON document, and back: what `stackbench push` sends and `POST /api/runs` stores.

The document (docs/server.md, "Pushing runs") carries everything the store holds of a run: its row
(facts, warnings), every raw fio output verbatim, every cell with its workload, result, measurement and
per-second samples. `run_document` reads it from a store; `add_uploaded_run` writes an already validated
document (web/upload.py checks every field and type first) as one transaction, under an owner, private.
The run keeps its id: pushing the same run again finds it (ids are 128 random bits, so only a copy of the
run knows its id).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from stackbench import __version__
from stackbench.model.fio_result import DirectionResult, Latency
from stackbench.model.plan import Workload
from stackbench.model.results import Cell, new_id
from stackbench.store import schema
from stackbench.store.database import guarded
from stackbench.store.repository import Store
from stackbench.store.rows import aware, cell_row, listed_columns
from stackbench.base.usertext import check

DOCUMENT_FORMAT = "stackbench-push"
DOCUMENT_VERSION = 1
PUSHABLE = ("complete", "incomplete", "failed", "abandoned")  # not `running`: it is still being written
OUTPUT_FIELDS = ("seq", "segment", "group_id", "fio_version", "command", "job_file", "raw_text", "exit_code",
                 "source_name", "started_at", "finished_at")


def run_document(store: Store, ref: str) -> dict[str, Any]:
    """The run `ref` (id, prefix or label) as the push document."""
    run = store.get_run(ref)
    outputs = store.fio_outputs(run.id)
    seq_of = {row["id"]: row["seq"] for row in outputs}
    return {
        "format": DOCUMENT_FORMAT,
        "format_version": DOCUMENT_VERSION,
        "run": {
            "id": run.id, "label": run.label, "status": run.status, "source": run.source,
            "created_at": run.created_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "target": run.target, "plan": run.plan_name, "planned_cells": run.planned_cells,
            "facts": run.facts, "warnings": [w.to_json() for w in run.warnings],
        },
        "fio_outputs": [{name: _json_value(row[name]) for name in OUTPUT_FIELDS} for row in outputs],
        "cells": [
            {
                "seq": cell.seq,
                "fio_output_seq": seq_of.get(cell.fio_output_id) if cell.fio_output_id else None,
                "workload": cell.workload.to_dict(),
                "result": cell.result.to_dict(),
                "measurement": cell.measurement,
                "samples": [{"t_s": s.t_s, "iops": s.iops, "bw_bytes": s.bw_bytes, "clat_mean_ns": s.clat_mean_ns,
                             "segment": s.segment, "ramp": s.ramp} for s in cell.samples],
            }
            for cell in run.cells
        ],
    }


def _json_value(value: Any) -> Any:
    return aware(value).isoformat() if isinstance(value, datetime) else value  # SQLite drops the zone: UTC


class RunExists(Exception):
    """The pushed run's id is stored already; `owner` is whose it is (None: no owner)."""

    def __init__(self, owner: str | None) -> None:
        super().__init__(owner)
        self.owner = owner


def existing_owner(store: Store, run_id: str) -> tuple[bool, str | None]:
    """(whether a run with this exact id is stored, its owner)."""
    with store.reader.connect() as connection:
        row = connection.execute(select(schema.runs.c.owner).where(schema.runs.c.id == run_id)).first()
    return (row is not None, row[0] if row else None)


def add_uploaded_run(store: Store, owner: str, document: dict[str, Any]) -> str:
    """Store a validated push document as a private run of `owner`, all of it or nothing; its id.

    Raises RunExists when the id is taken (a push of the same run again, or a collision)."""
    run = document["run"]
    check("a label", run["label"])  # validated by web/upload.py first; the store's own backstop
    found, who = existing_owner(store, run["id"])
    if found:
        raise RunExists(who)
    output_ids = {out["seq"]: new_id() for out in document["fio_outputs"]}
    groups: dict[str, str] = {}
    try:
        with store.engine.begin() as connection:
            connection.execute(insert(schema.runs).values(
                id=run["id"], label=run["label"], status=run["status"], source=run["source"],
                created_at=datetime.fromisoformat(run["created_at"]),
                finished_at=datetime.fromisoformat(run["finished_at"]) if run["finished_at"] else None,
                target=run["target"], plan_name=run["plan"], planned_cells=run["planned_cells"],
                facts=run["facts"], warnings=run["warnings"], stackbench_version=__version__,
                owner=owner, visibility="private", **listed_columns(run["facts"]),
            ))
            for out in document["fio_outputs"]:
                group = out["group_id"]
                connection.execute(insert(schema.fio_outputs).values(
                    id=output_ids[out["seq"]], run_id=run["id"], seq=out["seq"], segment=out["segment"],
                    group_id=groups.setdefault(group, new_id()) if group else None,
                    fio_version=out["fio_version"], command=out["command"], job_file=out["job_file"],
                    raw_text=out["raw_text"], exit_code=out["exit_code"], source_name=out["source_name"],
                    started_at=datetime.fromisoformat(out["started_at"]) if out["started_at"] else None,
                    finished_at=datetime.fromisoformat(out["finished_at"]) if out["finished_at"] else None,
                ))
            for item in document["cells"]:
                cell = Cell(id=new_id(), seq=item["seq"], workload=Workload.from_dict(item["workload"]),
                            result=result_from_dict(item["result"]), measurement=item["measurement"])
                output_seq = item["fio_output_seq"]
                row = cell_row(run["id"], output_ids[output_seq] if output_seq is not None else None, cell)
                connection.execute(insert(schema.cells).values(**row))
                if item["samples"]:
                    connection.execute(insert(schema.samples), [
                        {"cell_id": cell.id, "idx": index, **sample} for index, sample in enumerate(item["samples"])
                    ])
    except IntegrityError:
        raise RunExists(existing_owner(store, run["id"])[1]) from None  # another push of it won the race
    return run["id"]


def result_from_dict(data: dict[str, Any]) -> DirectionResult:
    """A cell's result from its stored or pushed dict (latencies as nested dicts)."""
    values = dict(data)
    for key in ("clat", "sync_lat"):
        if values.get(key) is not None:
            values[key] = Latency(**values[key])
    return DirectionResult(**values)


add_uploaded_run = guarded(add_uploaded_run)  # type: ignore[assignment]
existing_owner = guarded(existing_owner)  # type: ignore[assignment]
run_document = guarded(run_document)  # type: ignore[assignment]
