"""Layer gaps: the same cells measured at each layer of a stack, and the factor lost between neighbours.

docs/method.md section 3 is the worked example: 10644 IOPS of 4K random writes on ZFS on the host against 124
inside the VM is an 85x gap, and it told the practitioner which layer to work on first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from stackbench.analysis.compare import fleet_hosts, match_key, no_common_cells
from stackbench.errors import StackbenchError
from stackbench.results import Cell, Run

METRICS = {"iops": "IOPS", "bw": "MB/s"}


def cell_value(cell: Cell, metric: str) -> float:
    """The geometric mean over the cell's separate fio runs (the unit of replication, as in `compare`);
    fio's overall number for cells without per-run results (imports, cells stored before runs existed)."""
    key = "iops" if metric == "iops" else "bw_bytes"
    per_run = [r[key] for r in (cell.measurement or {}).get("replicates") or () if r.get(key)]
    if per_run:
        value = math.exp(sum(math.log(v) for v in per_run) / len(per_run))
    else:
        value = cell.result.iops if metric == "iops" else cell.result.bw_bytes
    return value if metric == "iops" else value / 1e6


@dataclass(frozen=True)
class LayerRow:
    pattern: str
    values: tuple[float | None, ...]
    factors: tuple[float | None, ...]  # factors[i] = values[i] / values[i+1]: >1 means lost going up


@dataclass(frozen=True)
class LayerGaps:
    names: tuple[str, ...]
    run_ids: tuple[str, ...]
    metric: str
    rows: tuple[LayerRow, ...]

    def pair_geomeans(self) -> list[float | None]:
        result = []
        for i in range(len(self.names) - 1):
            factors = [r.factors[i] for r in self.rows if r.factors[i] is not None and r.factors[i] > 0]
            result.append(math.exp(sum(math.log(f) for f in factors) / len(factors)) if factors else None)
        return result

    def biggest_gap(self) -> tuple[str, str, str, float] | None:
        """(pattern, lower layer, upper layer, factor) of the largest loss between neighbouring layers."""
        best: tuple[str, str, str, float] | None = None
        for row in self.rows:
            for i, factor in enumerate(row.factors):
                if factor is not None and (best is None or factor > best[3]):
                    best = (row.pattern, self.names[i], self.names[i + 1], factor)
        return best

    def to_json(self) -> dict[str, Any]:
        gap = self.biggest_gap()
        return {
            "layers": [{"name": n, "run_id": r} for n, r in zip(self.names, self.run_ids)],
            "metric": self.metric,
            "unit": METRICS[self.metric],
            "rows": [
                {"pattern": r.pattern, "values": list(r.values), "factors_lost": list(r.factors)} for r in self.rows
            ],
            "pair_geomean_factors": self.pair_geomeans(),
            "biggest_gap": None
            if gap is None
            else {"pattern": gap[0], "from": gap[1], "to": gap[2], "factor": gap[3]},
        }


def layer_gaps(runs: list[Run], names: list[str] | None = None, metric: str = "iops") -> LayerGaps:
    if len(runs) < 2:
        raise StackbenchError("layers needs at least two runs, bottom layer first", "e.g. stackbench layers host vm")
    if metric not in METRICS:
        raise StackbenchError(f"unknown --metric {metric!r}", f"Use one of: {', '.join(METRICS)}")
    names = names or [run.label or run.id[:12] for run in runs]
    if len(names) != len(runs):
        raise StackbenchError(
            f"--names gives {len(names)} names for {len(runs)} runs", "Give one name per run, comma-separated"
        )
    by_run = [{match_key(c): c for c in run.cells} for run in runs]
    rows = []
    for key, cell in by_run[0].items():
        values = tuple(cell_value(cells[key], metric) if key in cells else None for cells in by_run)
        factors = tuple(
            values[i] / values[i + 1] if values[i] and values[i + 1] else None for i in range(len(values) - 1)
        )
        rows.append(LayerRow(cell.pattern, values, factors))
    if not any(any(f is not None for f in row.factors) for row in rows):
        if any(fleet_hosts(run) for run in runs):
            raise no_common_cells(runs)
        raise StackbenchError("the runs have no cells in common", "Measure the same --bs/--qd/--rw cells at every layer")
    return LayerGaps(tuple(names), tuple(run.id for run in runs), metric, tuple(rows))
