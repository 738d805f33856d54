"""A stored cell seen as replicates: one value per separate fio run, and how trustworthy that view is.

Cells measured since replicates exist carry `measurement["replicates"]`: one entry per fio run with its
post-ramp IOPS as fio reported it. Older cells have only per-second samples. For those the best available
stand-in is used and labelled, never silently mixed with real replicates:

- "runs": separate fio runs (the real unit);
- "segments": an old `--repeat N` cell, whose N fio runs can be told apart by their samples' segment
  number (separate runs, but without their own ramp, so weaker);
- "batches": one old fio run cut into consecutive blocks of seconds (batch means), which understates the
  run-to-run variation: any verdict on it is weak;
- "none": an imported summary without samples: nothing to test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stackbench.analysis.between_runs import Estimate, batch_means, estimate
from stackbench.model.results import Cell

RUNS, SEGMENTS, BATCHES, NONE = "runs", "segments", "batches", "none"

WEAK_KINDS = {SEGMENTS: (  # (what a compared row on these replicates says, its fix)
    "measured before stackbench counted separate runs: its fio runs are continuation segments of one "
    "measurement, so the verdict on this row is weak", ""
), BATCHES: (
    "measured before stackbench counted separate runs: only the seconds of one fio run exist, cut into "
    "blocks that understate run-to-run variation (separate runs differed by 14-40 % here), so the verdict "
    "on this row is weak", "measure again with `stackbench run --runs 5`"
)}


@dataclass(frozen=True)
class Replicates:
    """The per-run IOPS of one cell and what kind of replicate they are."""

    values: tuple[float, ...]
    kind: str
    rounds: tuple[int, ...] = ()  # the round of each value (ab pairs runs by round)

    @property
    def weak(self) -> bool:
        return self.kind in WEAK_KINDS


def samples_needed(cell: Cell) -> bool:
    """Whether `replicates_of(cell)` reads the cell's per-second samples: only when the cell has no stored
    replicates (measured before replicates existed, or imported). The server loads a run's samples for
    these cells only (a 48-cell run measured with replicates holds 8,640 samples its tables never read);
    what draws or ranks per-second samples asks for all of them (`Store.with_samples`)."""
    return not (cell.measurement or {}).get("replicates")


def replicates_of(cell: Cell) -> Replicates:
    measurement: dict[str, Any] = cell.measurement or {}
    if not samples_needed(cell):
        stored = measurement["replicates"]
        values = tuple(float(r["iops"]) for r in stored if r.get("iops") and r["iops"] > 0)
        rounds = tuple(int(r.get("round", i)) for i, r in enumerate(stored) if r.get("iops") and r["iops"] > 0)
        return Replicates(values, RUNS, rounds)
    measured = cell.measured_samples
    if not measured:
        if cell.result.iops > 0:
            return Replicates((cell.result.iops,), NONE)
        return Replicates((), NONE)
    segments: dict[int, list[float]] = {}
    for sample in measured:
        segments.setdefault(sample.segment, []).append(sample.iops)
    if len(segments) >= 2 and measurement.get("mode") == "fixed":
        values = tuple(sum(v) / len(v) for _, v in sorted(segments.items()) if v and sum(v) > 0)
        return Replicates(values, SEGMENTS)
    return Replicates(tuple(batch_means([s.iops for s in measured])), BATCHES)


def cell_estimate(cell: Cell, confidence: float = 0.95) -> Estimate | None:
    """The cell's IOPS across its runs (geometric mean and interval); None when it has no usable value."""
    replicates = replicates_of(cell)
    if not replicates.values:
        return None
    if replicates.kind == NONE:
        return estimate(replicates.values[:1], confidence)
    return estimate(replicates.values, confidence)


def runs_range(cell: Cell) -> tuple[float, float] | None:
    """The lowest and highest IOPS of the cell's separate runs (or an old --repeat's fio runs): what "too
    noisy to tell" shows instead of an interval. None without separate runs (an import, or the blocks of
    seconds one old run is cut into, which are not runs)."""
    replicates = replicates_of(cell)
    if replicates.kind not in (RUNS, SEGMENTS) or not replicates.values:
        return None
    return min(replicates.values), max(replicates.values)


def run_count(cell: Cell) -> int:
    """Separate fio runs behind the cell (1 for anything measured before replicates)."""
    stored = (cell.measurement or {}).get("replicates")
    return len(stored) if stored else 1
