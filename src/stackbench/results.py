"""Runs and cells as the rest of the program sees them, and their JSON shape.

A `Run` is one invocation of `stackbench run` (or one imported file): its facts, warnings and the cells it
finished. A `Cell` is one direction of one fio job with the workload that produced it. The JSON produced
by `to_json()` is the documented `--json` shape (docs/json.md): keys carry their units, and keys are only
ever added, never renamed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stackbench.analysis.stats import Summary, summarize
from stackbench.engine.fio_logs import Sample
from stackbench.engine.result import DirectionResult
from stackbench.plan import Workload
from stackbench.units import format_size

JSON_FORMAT_VERSION = 1


def new_id() -> str:
    """128 random bits as 32 hex characters: run ids are never sequential or guessable."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Cell:
    """One measured (or imported) cell."""

    id: str
    seq: int
    workload: Workload
    result: DirectionResult
    fio_output_id: str | None = None
    samples: tuple[Sample, ...] = ()
    measurement: dict[str, Any] | None = None

    @property
    def measured_samples(self) -> list[Sample]:
        """The per-second samples the statistics use: everything but the ramp."""
        return [s for s in self.samples if not s.ramp]

    def iops_summary(self, confidence: float = 0.95) -> Summary | None:
        values = [s.iops for s in self.measured_samples]
        return summarize(values, confidence) if values else None

    @property
    def pattern(self) -> str:
        name = self.workload.name
        mixed = self.result.rw in ("randrw", "rw", "readwrite", "randrw")
        if mixed or self.result.direction not in ("read", "write"):
            name = f"{name} ({self.result.direction})"
        if self.result.host:
            name = f"{name} @{self.result.host}"
        return name

    def to_json(self) -> dict[str, Any]:
        r = self.result
        clat = r.clat
        sync = r.sync_lat
        return {
            "pattern": self.pattern,
            "key": self.workload.key,
            "bs": format_size(self.workload.bs).lower(),
            "bs_bytes": self.workload.bs,
            "iodepth": self.workload.iodepth,
            "numjobs": self.workload.numjobs,
            "rw": self.workload.rw,
            "direction": r.direction,
            "sync": self.workload.sync,
            "direct": self.workload.direct,
            "size_bytes": self.workload.size,
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
            **_stats_json(self.iops_summary()),
            "runs": _runs_json(self),
            "measurement": self.measurement,
        }


@dataclass(frozen=True)
class Run:
    id: str
    label: str | None
    status: str  # running | complete | incomplete | failed
    source: str  # measured | imported
    created_at: datetime
    finished_at: datetime | None
    target: str | None
    plan_name: str | None
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    cells: tuple[Cell, ...] = ()
    planned_cells: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": JSON_FORMAT_VERSION,
            "run_id": self.id,
            "label": self.label,
            "status": self.status,
            "source": self.source,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "target": self.target,
            "plan": self.plan_name,
            "planned_cells": self.planned_cells,
            "warnings": list(self.warnings),
            "facts": self.facts,
            "cells": [cell.to_json() for cell in self.cells],
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
    from stackbench.analysis.cells import cell_estimate, replicates_of

    replicates = replicates_of(cell)
    found = cell_estimate(cell)
    return {
        "n": len(replicates.values) if replicates.kind == "runs" else 1,
        "kind": replicates.kind,
        "iops": found.centre if found else None,
        "iops_ci_low": found.low if found else None,
        "iops_ci_high": found.high if found else None,
        "spread_pct": found.spread_rel * 100 if found and found.spread_rel is not None else None,
        "iops_per_run": list(replicates.values) if replicates.kind == "runs" else None,
    }


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0
