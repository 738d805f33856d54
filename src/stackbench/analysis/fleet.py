"""How far apart the hosts of a fleet run are, cell by cell, and which host is the slowest.

A fleet's total hides a slow host: ten nodes at 10 k IOPS and one at 2 k sum to a fine-looking number.
So each cell's per-host IOPS are set side by side: the spread is how much less the slowest host did than
the fastest (1 - slowest / fastest), and the slowest host is named.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackbench.analysis.compare import match_key
from stackbench.model.results import TOTAL_HOST, Cell, Run


@dataclass(frozen=True)
class HostSpread:
    """One cell of a fleet run across its hosts."""

    pattern: str  # the cell's name without the host
    hosts: tuple[Cell, ...]
    total: Cell | None

    @property
    def slowest(self) -> Cell:
        return min(self.hosts, key=lambda c: c.result.iops)

    @property
    def fastest(self) -> Cell:
        return max(self.hosts, key=lambda c: c.result.iops)

    @property
    def spread(self) -> float:
        """1 - slowest/fastest IOPS: 0 when the hosts are equal, 0.5 when the slowest did half."""
        top = self.fastest.result.iops
        return 1.0 - self.slowest.result.iops / top if top > 0 else 0.0


def host_spread(run: Run) -> list[HostSpread]:
    """Per cell of a fleet run (in the run's order): its host cells, the total, the spread."""
    groups: dict[str, list[Cell]] = {}
    for cell in run.cells:
        if cell.result.host is None:
            continue
        key = match_key(cell).rsplit("/host=", 1)[0]
        groups.setdefault(key, []).append(cell)
    spreads = []
    for cells in groups.values():
        hosts = tuple(c for c in cells if c.result.host != TOTAL_HOST)
        total = next((c for c in cells if c.result.host == TOTAL_HOST), None)
        if hosts:
            pattern = hosts[0].pattern.rsplit(" @", 1)[0]
            spreads.append(HostSpread(pattern, hosts, total))
    return spreads
