"""Runs: a run's row when it starts, its final status, the record of its fio processes, its deletion with
everything it holds, and reading runs back.

Writes are small transactions: a run row when the run starts, then one transaction per finished cell
(store/cells.py), then the final status.
"""

from __future__ import annotations

from typing import Any, Sequence

from sqlalchemy import delete, func, insert, select, update

from stackbench import __version__
from stackbench.base.usertext import check
from stackbench.model.fio_result import DirectionResult
from stackbench.model.plan import Workload
from stackbench.model.results import Run, new_id
from stackbench.model.warning import Warning
from stackbench.store import schema
from stackbench.store.cells import CellRecord, OutputRecord, insert_measurement
from stackbench.store.database import Database
from stackbench.store.reads import read_runs
from stackbench.store.rows import listed_columns, now, run_from_row


class Runs(Database):
    """The store's runs: their rows, and each run read back whole with its cells."""

    def create_run(
        self,
        *,
        source: str,
        label: str | None,
        target: str | None,
        plan_name: str | None,
        planned_cells: int | None,
        facts: dict[str, Any],
        warnings: Sequence[Warning] = (),
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or new_id()
        with self.engine.begin() as connection:
            _insert_run(connection, run_id, source=source, label=label, target=target, plan_name=plan_name,
                        planned_cells=planned_cells, facts=facts, warnings=warnings, status="running")
        return run_id

    def import_run(
        self,
        *,
        label: str | None,
        facts: dict[str, Any],
        output: OutputRecord,
        cells: Sequence[tuple[Workload, DirectionResult]],
        run_id: str | None = None,
        warnings: Sequence[Warning] = (),
    ) -> str:
        """Store an imported fio output as one complete run in one transaction: all of it or nothing.

        The caller may choose `run_id` so that, interrupted, it can ask `has_run` whether the commit landed."""
        run_id = run_id or new_id()
        with self.engine.begin() as connection:
            _insert_run(connection, run_id, source="imported", label=label, target=None, plan_name="import",
                        planned_cells=len(cells), facts=facts, warnings=warnings, status="complete")
            insert_measurement(connection, run_id, [output], [CellRecord(w, r) for w, r in cells])
        return run_id

    def finish_run(self, run_id: str, status: str, warnings: Sequence[Warning] | None = None) -> None:
        values: dict[str, Any] = {"status": status, "finished_at": now()}
        if warnings is not None:
            values["warnings"] = [w.to_json() for w in warnings]
        with self.engine.begin() as connection:
            connection.execute(update(schema.runs).where(schema.runs.c.id == run_id).values(**values))

    def delete_runs(self, run_ids: Sequence[str]) -> int:
        """Delete whole runs (samples, cells, fio outputs, the run) in one transaction: all or none.

        Rows are deleted child first rather than through ON DELETE CASCADE, so a PostgreSQL or SQLite
        store that was created without enforced foreign keys is cleaned up just the same.
        """
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return 0
        with self.engine.begin() as connection:
            return delete_run_rows(connection, ids)

    def running_runs(self) -> list[tuple[str, dict[str, Any]]]:
        """`(id, facts)` of every run still marked running: for finding the abandoned ones."""
        runs = schema.runs
        with self.reader.connect() as connection:
            rows = connection.execute(select(runs.c.id, runs.c.facts).where(runs.c.status == "running")).all()
        return [(row[0], row[1] or {}) for row in rows]

    def record_process(self, run_id: str, key: str, value: dict[str, Any]) -> None:
        """Set `facts.process[key]` of a running run: the fio process it is starting, recorded before fio
        has its job so that a cleanup after SIGKILL knows it (abandoned.py)."""
        runs = schema.runs
        with self.engine.begin() as connection:
            row = connection.execute(select(runs.c.facts).where(runs.c.id == run_id)).first()
            if row is None:
                return
            facts = dict(row[0] or {})
            facts["process"] = {**(facts.get("process") or {}), key: value}
            connection.execute(update(runs).where(runs.c.id == run_id).values(facts=facts))

    def mark_abandoned(self, run_id: str, note: Warning) -> bool:
        """Mark a running run abandoned with `note` among its warnings; False if another process was first."""
        runs = schema.runs
        with self.engine.begin() as connection:
            row = connection.execute(
                select(runs.c.warnings).where(runs.c.id == run_id, runs.c.status == "running")
            ).first()
            if row is None:
                return False
            done = connection.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.status == "running")
                .values(status="abandoned", finished_at=now(), warnings=[*(row[0] or []), note.to_json()])
            )
            return bool(done.rowcount)

    def has_run(self, run_id: str) -> bool:
        """Whether a run with exactly this id is stored (no prefix or label lookup)."""
        with self.reader.connect() as connection:
            return connection.execute(select(schema.runs.c.id).where(schema.runs.c.id == run_id)).first() is not None

    def run_by_id(self, run_id: str) -> Run:
        """The run with this exact id, with all its samples, without resolving prefixes and labels as
        `get_run` does."""
        with self.reader.connect() as connection:
            return read_runs(connection, select(schema.runs).where(schema.runs.c.id == run_id))[0][1]

    def list_runs(self, limit: int | None = None, label: str | None = None) -> list[tuple[Run, int]]:
        """Runs newest first, each with its number of stored cells."""
        runs, cells = schema.runs, schema.cells
        counts = (
            select(cells.c.run_id, func.count().label("n")).group_by(cells.c.run_id).subquery()
        )
        query = (
            select(runs, func.coalesce(counts.c.n, 0).label("cell_count"))
            .select_from(runs.outerjoin(counts, counts.c.run_id == runs.c.id))
            .order_by(runs.c.created_at.desc())
        )
        if label is not None:
            query = query.where(runs.c.label == label)
        if limit:
            query = query.limit(limit)
        with self.reader.connect() as connection:
            rows = connection.execute(query).mappings().all()
        return [(run_from_row(row), int(row["cell_count"])) for row in rows]

    def measured_runs_on(self, target: str, limit: int = 5) -> list[Run]:
        """The newest runs measured on `target` (as the run recorded it) with their cells but no samples:
        what an estimate learns from (analysis/estimate.py, Priors)."""
        runs = schema.runs
        query = (select(runs).where(runs.c.target == target, runs.c.source == "measured",
                                    runs.c.status.in_(("complete", "incomplete")))
                 .order_by(runs.c.created_at.desc()).limit(limit))
        with self.reader.connect() as connection:
            return [run for _, run in read_runs(connection, query, samples_for=lambda cell: False)]


def delete_run_rows(connection: Any, ids: list[str]) -> int:
    """Delete these runs and everything they hold, child first, within the caller's transaction; how many
    runs were deleted."""
    cells, samples = schema.cells, schema.samples
    cell_ids = select(cells.c.id).where(cells.c.run_id.in_(ids)).scalar_subquery()
    connection.execute(delete(samples).where(samples.c.cell_id.in_(cell_ids)))
    connection.execute(delete(cells).where(cells.c.run_id.in_(ids)))
    connection.execute(delete(schema.conditions).where(schema.conditions.c.run_id.in_(ids)))
    connection.execute(delete(schema.fio_outputs).where(schema.fio_outputs.c.run_id.in_(ids)))
    return connection.execute(delete(schema.runs).where(schema.runs.c.id.in_(ids))).rowcount


def _insert_run(connection: Any, run_id: str, *, status: str, warnings: Sequence[Warning], **values: Any) -> None:
    check("a label", values.get("label"))  # every entry checks first; this is the store's own backstop
    connection.execute(
        insert(schema.runs).values(
            id=run_id,
            status=status,
            created_at=now(),
            finished_at=now() if status != "running" else None,
            warnings=[w.to_json() for w in warnings],
            stackbench_version=__version__,
            **listed_columns(values.get("facts") or {}),
            **values,
        )
    )
