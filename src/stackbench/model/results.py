"""Runs and cells as the rest of the program sees them: data only.

A `Run` is one invocation of `stackbench run` (or one imported file): its facts, warnings and the cells it
finished. A `Cell` is one direction of one fio job with the workload that produced it. Statistics over
them are in analysis/, their `--json` shape in report/run_json.py.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stackbench.model.fio_result import DirectionResult, Sample
from stackbench.model.plan import Workload
from stackbench.model.warning import Warning

# The host of a fleet run's total cells (computed by stackbench from the per-host cells): parentheses are
# never part of a host name, so it cannot collide with one.
TOTAL_HOST = "(total)"


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

    @property
    def pattern(self) -> str:
        name = self.workload.name
        mixed = self.result.rw in ("randrw", "rw", "readwrite", "randrw")
        if mixed or self.result.direction not in ("read", "write"):
            name = f"{name} ({self.result.direction})"
        if self.result.host:
            name = f"{name} @{self.result.host}"
        return name


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
    warnings: tuple[Warning, ...] = ()
    cells: tuple[Cell, ...] = ()
    planned_cells: int | None = None


def is_fleet(run: Run) -> bool:
    """A `run --hosts` run: its cells name their host. Here rather than in analysis/fleet.py so that `show`
    asks it without importing the analysis (a tenth of its start-up: issue 34)."""
    return any(c.result.host for c in run.cells)
