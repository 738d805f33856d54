"""A cell's figures from its separate fio runs: the one IOPS (and MB/s, and latencies) every output shows.

A cell measured in N separate runs used to carry fio's pooled figures (all I/Os of all runs over all their
seconds) while its table row and every verdict used the geometric mean of the runs: one cell, two numbers
(3,246 IOPS in the progress line and `--json`, 1,079 in the table, on a busy machine). Pooling weights a
fast run by its many I/Os, so a run at 1,000,000 IOPS among runs at 10,000 decides the pooled figure
alone. The cell's figures are now the run-level estimate everywhere (docs/statistics.md, "One number per
cell"):

- IOPS and bandwidth: the geometric mean of the runs' own figures (the centre of `between_runs.estimate`);
- latency mean and percentiles: the geometric mean of each run's own (each from its own histogram), so a
  QD1 cell's p50 stays near 1/IOPS; the largest latency is the largest of any run, the smallest the
  smallest, the standard deviation that of all I/Os;
- I/O counts, bytes, runtime and CPU: the runs' totals (CPU weighted by runtime), as before.

fio's pooled IOPS and bandwidth are kept in the cell's `measurement` as `fio_pooled_iops` and
`fio_pooled_bw_bytes`, under names that say what they are.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

from stackbench.model.fio_result import DirectionResult, Latency


def geometric_mean(values: Sequence[float | None]) -> float | None:
    """The geometric mean of the positive values (None when there is none)."""
    logs = [math.log(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(math.fsum(logs) / len(logs)) if logs else None


def across_runs(runs: Sequence[DirectionResult], pooled: DirectionResult) -> DirectionResult:
    """The cell's result from its runs' results (one per separate fio run, in order) and `pooled`, fio's
    figures over all of them (`engine.merge.merge_segments`, or the fleet's summed total)."""
    if len(runs) < 2:
        return pooled

    def rate(pick: Callable[[DirectionResult], float]) -> float:
        found = geometric_mean([pick(r) for r in runs])
        return 0.0 if found is None else found

    return replace(
        pooled,
        iops=rate(lambda r: r.iops),
        bw_bytes=rate(lambda r: r.bw_bytes),
        clat=_latency([r.clat for r in runs], pooled.clat),
        sync_lat=_latency([r.sync_lat for r in runs], pooled.sync_lat),
    )


def _latency(runs: list[Latency | None], pooled: Latency | None) -> Latency | None:
    """Each statistic the geometric mean of the runs' own, where every run has it; else the pooled one."""
    if pooled is None or any(lat is None for lat in runs):
        return pooled

    def centre(name: str) -> float | None:
        values = [getattr(lat, name) for lat in runs]
        if any(v is None or v <= 0 for v in values):
            return getattr(pooled, name)
        return geometric_mean(values)

    return replace(pooled, mean_ns=centre("mean_ns") or pooled.mean_ns, p50_ns=centre("p50_ns"),
                   p99_ns=centre("p99_ns"), p999_ns=centre("p999_ns"))


def pooled_figures(pooled: DirectionResult) -> dict[str, float]:
    """fio's pooled figures, as the cell's `measurement` keeps them (never shown as the cell's value)."""
    return {"fio_pooled_iops": pooled.iops, "fio_pooled_bw_bytes": pooled.bw_bytes}
