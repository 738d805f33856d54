"""What the charts read from a cell: its value in a metric, with the unit the axis shows.

The numbers come from analysis/ (the geometric mean over a cell's separate fio runs, as `show`, `compare`
and `layers` report them); the charts never compute a statistic of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.analysis.cells import cell_estimate
from stackbench.analysis.layers import cell_value
from stackbench.results import Cell


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


def interval(cell: Cell, metric: str) -> tuple[float, float] | None:
    """The 95 % interval of the cell's IOPS across runs, scaled to MB/s for `mb_s` (one block size per
    cell, so MB/s is IOPS times a constant); None below two runs or for latency."""
    if metric not in ("iops", "mb_s"):
        return None
    found = cell_estimate(cell)
    if found is None or found.low is None or found.high is None or not found.centre:
        return None
    scale = (value(cell, metric) or 0.0) / found.centre
    return found.low * scale, found.high * scale


def panel_name(cell: Cell) -> str:
    """The pattern a cell belongs to, without size and depth: `randwrite`, `randrw (read)`, `write sync`."""
    w, r = cell.workload, cell.result
    name = w.rw
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
    return f"QD{w.iodepth}" + (f" x {w.numjobs} jobs" if w.numjobs > 1 else "")
