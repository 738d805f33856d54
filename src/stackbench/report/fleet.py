"""The fleet table under a fleet run: per cell, the total, the slowest and fastest host and the spread."""

from __future__ import annotations

from typing import Sequence

from stackbench.analysis.fleet import HostSpread
from stackbench.report.tabular import Tabular
from stackbench.base.units import format_iops


def spread_table(spreads: Sequence[HostSpread]) -> Tabular:
    rows = []
    for s in spreads:
        slow, fast = s.slowest, s.fastest
        rows.append([
            s.pattern,
            str(len(s.hosts)),
            f"{format_iops(s.total.result.iops)} IOPS" if s.total else "n/a",
            f"{slow.result.host} {format_iops(slow.result.iops)} IOPS",
            f"{fast.result.host} {format_iops(fast.result.iops)} IOPS",
            f"{s.spread * 100:.1f} %",
        ])
    return Tabular(
        headers=["Pattern", "Hosts", "Total", "Slowest host", "Fastest host", "Spread"],
        rows=rows,
        title="Across hosts",
        notes=["Total = sum of the hosts' IOPS, computed by stackbench (not fio's \"All clients\"); "
               "spread = 1 - slowest/fastest"],
        right_aligned=frozenset({1, 2, 5}),
    )
