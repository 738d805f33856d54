"""A goal as stored: a success criterion (`seq write 1M >= 117 MB/s`) parsed into a selector, a metric and
a threshold, and the runs it is for (a label, a plan, or with neither every run that has a matching cell).
Data the store persists; parsing and checking live in analysis/goals.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from stackbench.model.results import Cell, Run


@dataclass(frozen=True)
class Goal:
    text: str
    metric: str  # iops | bw (bytes/s) | lat (ns)
    statistic: str | None  # for latency: p50 | p99 | p999 | mean
    op: str
    threshold: float  # in the metric's base unit (IOPS, bytes/s, ns)
    rw: tuple[str, ...] = ()
    bs: int | None = None
    iodepth: int | None = None
    numjobs: int | None = None
    sync: bool | None = None
    # The runs the goal is for: those with this label, those of this plan (its preset, changed cells or
    # not: blog covers blog+custom), both if both are given. Neither: every run, where a cell matches (as
    # every goal stored before they existed: a spec without them reads as None).
    label: str | None = None
    plan: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rw"] = list(self.rw)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Goal":
        return cls(**{**data, "rw": tuple(data.get("rw") or ())})

    @property
    def bound(self) -> bool:
        """Whether the goal was set for some runs (a label or a plan) rather than for every run."""
        return self.label is not None or self.plan is not None

    def applies_to(self, run: Run) -> bool:
        """Whether the run is one the goal was set for."""
        plan = run.plan_name or ""
        return ((self.label is None or run.label == self.label)
                and (self.plan is None or self.plan in (plan, plan.split("+", 1)[0])))

    def matches(self, cell: Cell) -> bool:
        """Whether the goal is about this cell; a field an import does not know never matches a goal's."""
        w = cell.workload
        return (
            (not self.rw or (w.rw in self.rw and w.knows("pattern")))
            and (self.bs is None or (w.bs == self.bs and w.knows("bs")))
            and (self.iodepth is None or (w.iodepth == self.iodepth and w.knows("iodepth")))
            and (self.numjobs is None or (w.numjobs == self.numjobs and w.knows("numjobs")))
            and (self.sync is None or w.sync == self.sync)
        )

    def value(self, cell: Cell) -> float | None:
        r = cell.result
        if self.metric == "iops":
            return r.iops
        if self.metric == "bw":
            return r.bw_bytes
        lat = r.sync_lat if (self.sync and r.sync_lat) else r.clat
        if lat is None:
            return None
        return {"p50": lat.p50_ns, "p99": lat.p99_ns, "p999": lat.p999_ns, "mean": lat.mean_ns}[self.statistic or "mean"]
