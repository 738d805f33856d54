"""The `--json` shape of runs and cells (docs/json.md): statistics from analysis/, formatted, never computed here."""

from __future__ import annotations

from typing import Any, Sequence

from stackbench.analysis.cells import cell_estimate, replicates_of, runs_range
from stackbench.analysis.stats import Summary, sample_summary
from stackbench.report.layer_table import CountedLayer, VdevPlace, cell_layers_json, places_of, vdev_places_of
from stackbench.model.results import Cell, Run
from stackbench.base.units import format_size

JSON_FORMAT_VERSION = 3  # 2: warnings are {code, subject, text, fix} objects, were strings; 3: a cell's iops,
# bw_bytes, mb_per_s and latencies are its figures across its separate runs (geometric means), were fio's pooled ones


def run_json(run: Run) -> dict[str, Any]:
    """A run as `--json` prints it (docs/json.md)."""
    places, vdev_places = places_of(run), vdev_places_of(run.facts.get("stack"))
    return {
        "format_version": JSON_FORMAT_VERSION,
        "run_id": run.id,
        "label": run.label,
        "status": run.status,
        "source": run.source,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "target": run.target,
        "plan": run.plan_name,
        "planned_cells": run.planned_cells,
        "warnings": [w.to_json() for w in run.warnings],
        "facts": run.facts,
        "cells": [cell_json(cell, places, vdev_places) for cell in run.cells],
    }


def cell_json(cell: Cell, places: Sequence[CountedLayer] | None = None,
              vdev_places: Sequence[VdevPlace] | None = None) -> dict[str, Any]:
    """One cell in the documented shape: keys carry their units, and are only ever added, never renamed.
    `places` are the devices of the run's saved stack, for the cell's layer table, `vdev_places` its pools'
    `zpool iostat -v` rows."""
    r = cell.result
    clat = r.clat
    sync = r.sync_lat
    w = cell.workload
    return {
        "pattern": cell.pattern,
        "key": w.key,
        "bs": format_size(w.bs).lower() if w.knows("bs") else None,
        "bs_bytes": w.bs if w.knows("bs") else None,
        "iodepth": w.iodepth if w.knows("iodepth") else None,
        "numjobs": w.numjobs if w.knows("numjobs") else None,
        "rw": w.rw if w.knows("pattern") else None,
        "unknown": list(w.unknown),  # what an imported output does not say: the fields above that are null
        "direction": r.direction,
        "sync": cell.workload.sync,
        "direct": cell.workload.direct,
        "size_bytes": cell.workload.size,
        "runtime_s": r.runtime_ms / 1000 if r.runtime_ms else None,
        "host": r.host,
        "iops": r.iops,
        "bw_bytes": r.bw_bytes,
        "mb_per_s": r.bw_bytes / 1e6,
        "clat_mean_us": _us(clat.mean_ns if clat else None),
        "clat_stddev_us": _us(clat.stddev_ns if clat else None),
        "clat_p50_us": _us(clat.p50_ns if clat else None),
        "clat_p99_us": _us(clat.p99_ns if clat else None),
        "clat_p999_us": _us(clat.p999_ns if clat else None),
        "clat_max_us": _us(clat.max_ns if clat else None),
        "sync_lat_mean_us": _us(sync.mean_ns if sync else None),
        "sync_lat_p50_us": _us(sync.p50_ns if sync else None),
        "sync_lat_p99_us": _us(sync.p99_ns if sync else None),
        "sync_lat_p999_us": _us(sync.p999_ns if sync else None),
        "usr_cpu_pct": r.usr_cpu,
        "sys_cpu_pct": r.sys_cpu,
        **_stats_json(sample_summary(cell)),
        "runs": _runs_json(cell),
        "measurement": cell.measurement,
        "layers": cell_layers_json(cell, places, vdev_places),
    }


def _stats_json(summary: Summary | None) -> dict[str, Any]:
    """Per-second-sample statistics of IOPS (null when the cell has no samples, e.g. an import)."""
    if summary is None:
        return {"samples_n": 0, "iops_median": None, "iops_ci_low": None, "iops_ci_high": None, "iops_cv": None}
    finite = summary.ci_half_width_rel != float("inf")
    return {
        "samples_n": summary.n,
        "iops_median": summary.median,
        "iops_ci_low": summary.ci_low if finite else None,
        "iops_ci_high": summary.ci_high if finite else None,
        "iops_cv": summary.cv,
    }


def _runs_json(cell: Cell) -> dict[str, Any]:
    """The cell across its separate fio runs: the numbers verdicts use (docs/json.md, docs/statistics.md)."""
    replicates = replicates_of(cell)
    found = cell_estimate(cell)
    spread = runs_range(cell)
    return {
        "n": len(replicates.values) if replicates.kind == "runs" else 1,
        "kind": replicates.kind,
        "iops": found.centre if found else None,
        "iops_ci_low": found.low if found else None,
        "iops_ci_high": found.high if found else None,
        "spread_pct": found.spread_rel * 100 if found and found.spread_rel is not None else None,
        "iops_per_run": list(replicates.values) if replicates.kind == "runs" else None,
        # the presenters' rule (between_runs.too_noisy): no interval, or one wider than a factor of 4
        "too_noisy": found.too_noisy if found else True,
        "spread_too_noisy": found.spread_too_noisy if found else True,
        "iops_range": list(spread) if spread else None,
    }


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0
