"""What the charts read from a cell: its value in a metric, with the unit the axis shows.

The numbers come from analysis/ (the geometric mean over a cell's separate fio runs, as `show`, `compare`
and `layers` report them); the charts never compute a statistic of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.analysis.between_runs import Estimate, estimate
from stackbench.analysis.layers import cell_value, per_run_values
from stackbench.model.results import Cell


@dataclass(frozen=True)
class Metric:
    name: str  # as the options spell it: iops, mb_s, p99
    axis: str  # the axis label, with its unit


METRICS = {
    "iops": Metric("iops", "IOPS (I/O per second)"),
    "mb_s": Metric("mb_s", "MB/s (10^6 bytes per second)"),
    "p99": Metric("p99", "p99 completion latency (µs)"),
}


def value(cell: Cell, metric: str) -> float | None:
    """The cell's value in `metric`: IOPS or MB/s across its runs, or its p99 completion latency in µs."""
    if metric == "iops":
        return cell_value(cell, "iops")
    if metric == "mb_s":
        return cell_value(cell, "bw")
    if metric == "p99":
        clat = cell.result.clat
        return clat.p99_ns / 1000 if clat and clat.p99_ns is not None else None
    raise ValueError(f"unknown metric {metric!r}")


def runs(cell: Cell, metric: str) -> list[float]:
    """The cell's separate fio runs in `metric` (IOPS, or MB/s from each run's bandwidth), the dots a chart
    draws around the cell's value; [] for latency and for a cell without separate runs (an import)."""
    if metric in ("iops", "mb_s"):
        return per_run_values(cell, "iops" if metric == "iops" else "bw")
    return []


def spread(cell: Cell, metric: str) -> Estimate | None:
    """The cell's value across its runs with its 95 % interval (analysis' estimate of the same runs, so its
    centre is `value`); None below two runs, for latency, and for the blocks of seconds an old single run is
    cut into, which the tables give no interval either."""
    found = runs(cell, metric)
    return estimate(found) if len(found) >= 2 else None


def panel_name(cell: Cell) -> str:
    """The pattern a cell belongs to, without size and depth: `randwrite`, `randrw (read)`, `write sync`."""
    w, r = cell.workload, cell.result
    name = w.rw if w.knows("pattern") else f"{w.rw} (rnd/seq?)"  # an import that does not say it
    if r.rw in ("randrw", "rw", "readwrite") or r.direction not in ("read", "write"):
        name = f"{name} ({r.direction})"
    if w.sync:
        name += " sync"
    if r.host:
        name += f" @{r.host}"
    return name


def depth_name(cell: Cell) -> str:
    """QD and jobs as the practitioners write them: `QD4`, `QD4 x 4 jobs`."""
    w = cell.workload
    depth = f"QD{w.iodepth}" if w.knows("iodepth") else "QD?"
    if not w.knows("numjobs"):
        return f"{depth} x ? jobs"
    return depth + (f" x {w.numjobs} jobs" if w.numjobs > 1 else "")


def depth_key(cell: Cell) -> tuple[int, int]:
    """(iodepth, numjobs) to group and order cells by; 0 (never a real value) where an import does not say it,
    so that its placeholder never shares a bar group with a measured QD1 or one job."""
    w = cell.workload
    return (w.iodepth if w.knows("iodepth") else 0, w.numjobs if w.knows("numjobs") else 0)


def size_key(cell: Cell) -> int:
    """The block size to group by; 0 (labelled `?`) where an import does not say it."""
    return cell.workload.bs if cell.workload.knows("bs") else 0
