"""Ranking SLOG candidates (docs/method.md section 4).

A ZFS log device only serves synchronous writes, so what matters is the latency of a 4 KiB sync write at
queue depth 1 and how it holds up at QD16, measured in short runs: ZFS flushes a transaction group every
5 s, and a longer run measures how fast the data disks absorb the flush, not the log device. Classes from
the practitioners' measurements: Optane 45-63 µs median at QD1; enterprise SAS/SATA SSD 0.3-0.5 ms;
consumer SATA SSD ~1.9 ms; HDD mirror ~12 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stackbench.results import Cell, Run

# (upper bound of the QD1 median completion latency in ns, verdict)
CLASSES = (
    (100_000, "excellent: Optane class"),
    (600_000, "fit: enterprise-SSD class"),
    (2_500_000, "marginal: consumer-SSD class; gains little over the pool's own ZIL on SSDs"),
    (float("inf"), "unfit: HDD class"),
)
PLP_NOTE = "power-loss protection cannot be measured: check the datasheet before trusting a SLOG with data"


@dataclass(frozen=True)
class DepthResult:
    iops: float
    median_ns: float | None
    mean_ns: float | None
    stdev_ns: float | None
    best_1s_iops: float | None


@dataclass(frozen=True)
class Candidate:
    name: str
    run_id: str
    qd1: DepthResult | None
    qd16: DepthResult | None
    fs_type: str | None = None

    @property
    def qd1_latency_ns(self) -> float | None:
        """The QD1 median, or the mean where the source has no percentiles (diskinfo -wS imports)."""
        if self.qd1 is None:
            return None
        return self.qd1.median_ns if self.qd1.median_ns is not None else self.qd1.mean_ns

    @property
    def verdict(self) -> str:
        latency = self.qd1_latency_ns
        if self.fs_type == "tmpfs":
            return "not a device: tmpfs is RAM and loses every write on power loss"
        if latency is None:
            return "unknown: no 4K QD1 sync-write result"
        return next(text for bound, text in CLASSES if latency <= bound)

    def to_json(self) -> dict[str, Any]:
        def depth(d: DepthResult | None) -> dict[str, Any] | None:
            if d is None:
                return None
            return {
                "iops": d.iops,
                "clat_median_us": d.median_ns / 1000 if d.median_ns is not None else None,
                "clat_mean_us": d.mean_ns / 1000 if d.mean_ns is not None else None,
                "clat_stdev_us": d.stdev_ns / 1000 if d.stdev_ns is not None else None,
                "best_1s_iops": d.best_1s_iops,
            }

        return {"candidate": self.name, "run_id": self.run_id, "qd1": depth(self.qd1), "qd16": depth(self.qd16),
                "verdict": self.verdict}


def _depth(cell: Cell | None) -> DepthResult | None:
    if cell is None:
        return None
    clat = cell.result.clat
    samples = [s.iops for s in cell.measured_samples]
    return DepthResult(
        iops=cell.result.iops,
        median_ns=clat.p50_ns if clat else None,
        mean_ns=clat.mean_ns if clat else None,
        stdev_ns=clat.stddev_ns if clat else None,
        best_1s_iops=max(samples) if samples else None,
    )


def _find(run: Run, depth: int) -> Cell | None:
    """The 4 KiB random-write cell at this depth; sync cells first, the largest depth <= 4 for QD1 imports."""
    cells = [c for c in run.cells if c.workload.rw == "randwrite" and c.workload.bs == 4096 and c.result.direction == "write"]
    exact = [c for c in cells if c.workload.iodepth == depth]
    exact.sort(key=lambda c: not c.workload.sync)
    return exact[0] if exact else None


def candidate_from_run(name: str, run: Run) -> Candidate:
    fs_type = ((run.facts or {}).get("target") or {}).get("fs_type")
    return Candidate(name=name, run_id=run.id, qd1=_depth(_find(run, 1)), qd16=_depth(_find(run, 16)), fs_type=fs_type)


def stored_candidate(run: Run) -> Candidate:
    """A stored run as a candidate (`slog --run`, the server's SLOG page), named by its label, else its
    short id."""
    return candidate_from_run(run.label or run.id[:12], run)


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Lowest QD1 median latency first; candidates without a QD1 result last."""
    return sorted(candidates, key=lambda c: (c.qd1_latency_ns is None, c.qd1_latency_ns or 0.0))
