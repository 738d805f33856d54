"""A stored cell's IOPS and bandwidth become the geometric mean of its separate fio runs.

Revision ID: 0010_cell_figures_across_runs
Revises: 0008_run_tallies
Create Date: 2026-11-27

Cells measured in several separate fio runs stored fio's pooled IOPS and bandwidth (all I/Os of all runs
over all their seconds) while tables and verdicts showed the geometric mean of the runs: one cell, two
numbers. New cells store the geometric mean (analysis/across_runs.py); this brings the cells already
stored into line, from the per-run figures each keeps in `measurement.replicates`, and keeps the pooled
figures under `measurement.fio_pooled_iops` / `fio_pooled_bw_bytes`, from which the downgrade restores
them. Latencies of these cells stay those of all their I/Os together (their runs' p99.9 was not stored).

The geometric mean is written out here rather than imported: a migration must do the same thing for ever,
whatever later versions of the code do.
"""

import math

import sqlalchemy as sa
from alembic import op

revision = "0010_cell_figures_across_runs"
down_revision = "0009_scrub_credentials"
branch_labels = None
depends_on = None

_cells = sa.table(
    "cells",
    sa.column("id", sa.String),
    sa.column("iops", sa.Float),
    sa.column("bw_bytes", sa.Float),
    sa.column("result", sa.JSON),
    sa.column("measurement", sa.JSON),
)


def _geometric_mean(values: list) -> float | None:
    logs = [math.log(v) for v in values if isinstance(v, (int, float)) and v > 0 and math.isfinite(v)]
    return math.exp(math.fsum(logs) / len(logs)) if logs else None


def _measured_cells(connection: sa.engine.Connection) -> list:
    return connection.execute(
        sa.select(_cells.c.id, _cells.c.iops, _cells.c.bw_bytes, _cells.c.result, _cells.c.measurement)
        .where(_cells.c.measurement.is_not(None))
    ).all()


def upgrade() -> None:
    connection = op.get_bind()
    for cell_id, iops, bw_bytes, result, measurement in _measured_cells(connection):
        if not isinstance(measurement, dict) or "fio_pooled_iops" in measurement:
            continue
        runs = [r for r in measurement.get("replicates") or () if isinstance(r, dict) and (r.get("iops") or 0) > 0]
        if len(runs) < 2:
            continue  # one run: its figures are the pooled ones already
        new_iops = _geometric_mean([r["iops"] for r in runs])
        new_bw = _geometric_mean([r.get("bw_bytes") for r in runs]) if all(
            (r.get("bw_bytes") or 0) > 0 for r in runs) else bw_bytes
        connection.execute(
            sa.update(_cells).where(_cells.c.id == cell_id).values(
                iops=new_iops, bw_bytes=new_bw,
                result={**(result or {}), "iops": new_iops, "bw_bytes": new_bw},
                measurement={**measurement, "fio_pooled_iops": iops, "fio_pooled_bw_bytes": bw_bytes},
            )
        )


def downgrade() -> None:
    connection = op.get_bind()
    for cell_id, _iops, _bw, result, measurement in _measured_cells(connection):
        if not isinstance(measurement, dict) or "fio_pooled_iops" not in measurement:
            continue
        kept = dict(measurement)
        iops, bw_bytes = kept.pop("fio_pooled_iops"), kept.pop("fio_pooled_bw_bytes", None)
        bw_bytes = bw_bytes if bw_bytes is not None else (result or {}).get("bw_bytes")
        connection.execute(
            sa.update(_cells).where(_cells.c.id == cell_id).values(
                iops=iops, bw_bytes=bw_bytes, result={**(result or {}), "iops": iops, "bw_bytes": bw_bytes},
                measurement=kept,
            )
        )
