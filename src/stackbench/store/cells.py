"""A run's measurements: each fio output verbatim, the cells measured from it, their replicates (one more
fio run of a cell, arriving between other cells' runs) and per-second samples.

A measured cell is one transaction (its raw fio output and its values together), so a crash or Ctrl-C
keeps every finished cell and never a cell without its raw output.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Iterable, Sequence

from sqlalchemy import func, insert, select, update

from stackbench.model.fio_result import DirectionResult, Sample
from stackbench.model.plan import Workload
from stackbench.model.results import Cell, Run, new_id
from stackbench.store import schema
from stackbench.store.database import Database
from stackbench.store.reads import samples_by_cell, samples_of
from stackbench.store.rows import cell_row, now, sample_rows


@dataclass(frozen=True)
class OutputRecord:
    """One fio invocation's output as it is stored verbatim."""

    raw_text: str
    fio_version: str | None
    command: list[str] | None = None
    job_file: str | None = None
    exit_code: int | None = None
    source_name: str | None = None
    started_at: datetime | None = None


@dataclass(frozen=True)
class CellRecord:
    """A cell to store: its workload, the (merged) result, its samples and how it was measured."""

    workload: Workload
    result: DirectionResult
    samples: Sequence[Sample] = ()
    measurement: dict[str, Any] | None = None


class Cells(Database):
    """The cells of the store's runs, with the fio outputs they were measured from and their samples."""

    def add_measurement(
        self, run_id: str, outputs: Sequence[OutputRecord], cells: Sequence[CellRecord]
    ) -> list[str]:
        """Store the fio outputs of one measured cell (one per segment) and its cells in one transaction."""
        with self.engine.begin() as connection:
            return insert_measurement(connection, run_id, outputs, cells)

    def add_replicate(
        self, run_id: str, group_id: str, output: OutputRecord, cells: Sequence[CellRecord],
        conditions: dict[str, Any] | None = None,
    ) -> list[str]:
        """Store one more fio run of a cell the moment it finishes, in one transaction.

        `group_id` names the cell across its runs (rounds are interleaved, so a cell's runs arrive between
        other cells' runs). The first run creates the cell rows; later runs add their output and samples
        and replace the cells' merged result and `measurement` (which lists every run). An interruption
        therefore keeps every finished run, and a cell is never half-updated.
        """
        fo, cl = schema.fio_outputs, schema.cells
        output_id = new_id()
        ids: list[str] = []
        with self.engine.begin() as connection:
            seq_out = connection.execute(
                select(func.count()).select_from(fo).where(fo.c.run_id == run_id)
            ).scalar_one()
            segment = connection.execute(
                select(func.count()).select_from(fo).where(fo.c.group_id == group_id)
            ).scalar_one()
            connection.execute(insert(fo).values(**_output_row(output, output_id, run_id, seq_out, segment, group_id)))
            if conditions is not None:
                connection.execute(insert(schema.conditions).values(
                    fio_output_id=output_id, run_id=run_id, group_id=group_id, seconds=conditions))
            existing = {  # a fleet run's cell has one row per host (and one for the total) per direction
                (row.direction, row.host): (row.id, row.seq)
                for row in connection.execute(
                    select(cl.c.id, cl.c.seq, cl.c.direction, cl.c.host)
                    .join(fo, fo.c.id == cl.c.fio_output_id)
                    .where(fo.c.group_id == group_id)
                )
            }
            seq_cell = connection.execute(
                select(func.count()).select_from(cl).where(cl.c.run_id == run_id)
            ).scalar_one()
            for record in cells:
                direction = (record.result.direction, record.result.host)
                if direction in existing:
                    cell_id, seq = existing[direction]
                    first_output = connection.execute(
                        select(cl.c.fio_output_id).where(cl.c.id == cell_id)
                    ).scalar_one()
                else:
                    cell_id, seq, first_output = new_id(), seq_cell, output_id
                    seq_cell += 1
                cell = Cell(id=cell_id, seq=seq, workload=record.workload, result=record.result,
                            measurement=record.measurement)
                row = cell_row(run_id, first_output, cell)
                if direction in existing:
                    del row["id"]
                    connection.execute(update(cl).where(cl.c.id == cell_id).values(**row))
                else:
                    connection.execute(insert(cl).values(**row))
                start = connection.execute(
                    select(func.count()).select_from(schema.samples).where(schema.samples.c.cell_id == cell_id)
                ).scalar_one()
                if record.samples:
                    connection.execute(insert(schema.samples), sample_rows(cell_id, record.samples, start))
                ids.append(cell_id)
        return ids

    def add_cells(
        self,
        run_id: str,
        *,
        raw_text: str,
        fio_version: str | None,
        cells: Iterable[tuple[Workload, DirectionResult]],
        command: list[str] | None = None,
        job_file: str | None = None,
        exit_code: int | None = None,
        source_name: str | None = None,
        started_at: datetime | None = None,
    ) -> list[str]:
        """Store one fio output and the cells parsed from it (no samples): the import path."""
        output = OutputRecord(raw_text, fio_version, command, job_file, exit_code, source_name, started_at)
        return self.add_measurement(run_id, [output], [CellRecord(w, r) for w, r in cells])

    def conditions_of(self, run_id: str) -> list[dict[str, Any]]:
        """The machine's conditions during each fio process of a run, in the order they ran: each the
        sampler's record (probe/conditions.py) with the `group_id` of the cell it ran for."""
        fo, co = schema.fio_outputs, schema.conditions
        with self.reader.connect() as connection:
            rows = connection.execute(
                select(co.c.group_id, co.c.seconds).join(fo, fo.c.id == co.c.fio_output_id)
                .where(co.c.run_id == run_id).order_by(fo.c.seq)
            ).all()
        return [{**(row.seconds or {}), "group_id": row.group_id} for row in rows]

    def with_samples(self, runs: Sequence[Run]) -> list[Run]:
        """`runs` with every per-second sample of every cell (one query for all): for a run loaded with
        only the samples its replicates need (`read_runs`), where a page draws or ranks per-second samples.
        Cells are matched by id, so a redacted copy (report/redact.py) gets its samples too."""
        with self.reader.connect() as connection:
            samples = samples_by_cell(connection.execute(samples_of(sorted({run.id for run in runs}))).all())
        return [replace(run, cells=tuple(replace(c, samples=tuple(samples.get(c.id, ()))) for c in run.cells))
                for run in runs]

    def fio_outputs(self, run_id: str) -> list[dict[str, Any]]:
        with self.reader.connect() as connection:
            rows = connection.execute(
                select(schema.fio_outputs)
                .where(schema.fio_outputs.c.run_id == run_id)
                .order_by(schema.fio_outputs.c.seq)
            ).mappings().all()
        return [dict(row) for row in rows]


def insert_measurement(
    connection: Any, run_id: str, outputs: Sequence[OutputRecord], cells: Sequence[CellRecord]
) -> list[str]:
    """Insert fio outputs (the segments of one measurement, one group) and the cells measured from them,
    within the caller's transaction; the new cells' ids."""
    group_id = new_id()
    output_ids = [new_id() for _ in outputs]
    ids: list[str] = []
    seq_out = connection.execute(
        select(func.count()).select_from(schema.fio_outputs).where(schema.fio_outputs.c.run_id == run_id)
    ).scalar_one()
    seq_cell = connection.execute(
        select(func.count()).select_from(schema.cells).where(schema.cells.c.run_id == run_id)
    ).scalar_one()
    for segment, (output_id, output) in enumerate(zip(output_ids, outputs)):
        connection.execute(insert(schema.fio_outputs).values(
            **_output_row(output, output_id, run_id, seq_out + segment, segment, group_id)
        ))
    for offset, record in enumerate(cells):
        cell = Cell(
            id=new_id(),
            seq=seq_cell + offset,
            workload=record.workload,
            result=record.result,
            samples=tuple(record.samples),
            measurement=record.measurement,
        )
        connection.execute(insert(schema.cells).values(**cell_row(run_id, output_ids[0], cell)))
        if cell.samples:
            connection.execute(insert(schema.samples), sample_rows(cell.id, cell.samples))
        ids.append(cell.id)
    return ids


def _output_row(
    output: OutputRecord, output_id: str, run_id: str, seq: int, segment: int, group_id: str
) -> dict[str, Any]:
    """The row of a fio output: `seq` its place in the run, `segment` in its measurement (`group_id`)."""
    return dict(
        id=output_id, run_id=run_id, seq=seq, fio_version=output.fio_version, command=output.command,
        job_file=output.job_file, raw_text=output.raw_text, exit_code=output.exit_code,
        source_name=output.source_name, started_at=output.started_at, finished_at=now(), segment=segment,
        group_id=group_id,
    )
