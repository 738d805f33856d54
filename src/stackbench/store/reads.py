"""The reads of every run and compare page, and of every command that shows a run: runs with their cells and
only the samples asked for (`read_runs`), and the goals, in a few statements built once per process.

Built once with their values as parameters: building a statement and the cache key SQLAlchemy derives
from every new one cost more than running it (a run page's reads 0.5 -> 0.2 ms on the bench machine).
tests/web/test_queries.py counts each page's statements.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from sqlalchemy import bindparam, select

from stackbench.model.fio_result import Sample
from stackbench.model.results import Cell, Run
from stackbench.store import schema
from stackbench.store.rows import cell_from_row, run_from_row

GOALS = select(schema.goals).order_by(schema.goals.c.created_at)
_CELLS_OF_RUNS = (
    select(schema.cells, select(schema.samples.c.cell_id).where(schema.samples.c.cell_id == schema.cells.c.id)
           .correlate(schema.cells).exists().label("has_samples"))
    .where(schema.cells.c.run_id.in_(bindparam("run_ids", expanding=True)))
    .order_by(schema.cells.c.run_id, schema.cells.c.seq)
)
_SAMPLE_COLUMNS = (schema.samples.c.cell_id, schema.samples.c.t_s, schema.samples.c.iops, schema.samples.c.bw_bytes,
                   schema.samples.c.clat_mean_ns, schema.samples.c.segment, schema.samples.c.ramp)


def read_runs(
    connection: Any, query: Any, params: dict[str, Any] | None = None, *,
    samples_for: Callable[[Cell], bool] | None = None,
) -> list[tuple[Any, Run]]:
    """The runs `query` selects (whole rows of the runs table: `select(schema.runs).where(...)`, with
    `params` for its bound parameters), each with its cells: (row, run) pairs, the row carrying the
    columns a Run does not (the server's owner and visibility).

    Two statements for any number of runs (their rows, then all their cells), and a third only when a
    cell that has samples wants them: every sample when `samples_for` is None, else the samples of the
    cells for which `samples_for(cell)` is true (the cell given without samples). A 48-cell run holds 8,640
    per-second samples; a page that shows only its tables needs them only where its replicates are made
    of samples (analysis/cells.py, `samples_needed`).
    """
    s = schema.samples
    rows = connection.execute(query, params or {}).mappings().all()
    if not rows:
        return []
    cell_rows = connection.execute(_CELLS_OF_RUNS, {"run_ids": [r["id"] for r in rows]}).mappings().all()
    made = [(r["run_id"], cell_from_row(r), bool(r["has_samples"])) for r in cell_rows]
    having = [cell for _, cell, has in made if has]
    wanted = [cell.id for cell in having if samples_for is None or samples_for(cell)]
    samples: dict[str, list[Sample]] = {}
    if wanted:
        # plain tuples of the columns Sample needs: a 48-cell run has thousands of samples, and building
        # a mapping per row cost more than the query (58 -> 23 ms for 8,640 samples)
        query = samples_of([r["id"] for r in rows])
        if len(wanted) < len(having):  # only some cells' (all of them: no list of every cell id to send)
            query = query.where(s.c.cell_id.in_(wanted))
        samples = samples_by_cell(connection.execute(query).all())
    by_run: dict[str, list[Cell]] = {}
    for run_id, cell, _ in made:
        by_run.setdefault(run_id, []).append(replace(cell, samples=tuple(samples.get(cell.id, ()))))
    return [(row, replace(run_from_row(row), cells=tuple(by_run.get(row["id"], ())))) for row in rows]


def samples_of(run_ids: Sequence[str]) -> Any:
    """The query of every per-second sample of these runs' cells (`_SAMPLE_COLUMNS`), in each cell's order."""
    s, cells = schema.samples, schema.cells
    return (select(*_SAMPLE_COLUMNS).join(cells, cells.c.id == s.c.cell_id)
            .where(cells.c.run_id.in_(run_ids)).order_by(s.c.cell_id, s.c.idx))


def samples_by_cell(rows: Iterable[Any]) -> dict[str, list[Sample]]:
    """Sample rows (`_SAMPLE_COLUMNS`, which unpack like tuples) by cell id, in the order given."""
    samples: dict[str, list[Sample]] = {}
    for cell_id, t_s, iops, bw_bytes, clat_mean_ns, segment, ramp in rows:
        samples.setdefault(cell_id, []).append(
            Sample(t_s=t_s, iops=iops, bw_bytes=bw_bytes, clat_mean_ns=clat_mean_ns, segment=segment, ramp=bool(ramp))
        )
    return samples
