"""The SLOG shoot-out as a table, best candidate first: QD1 latency decides (a SLOG serves one sync
write at a time), QD16 shows what it does under load. The terminal and Markdown show `slog_table`
("12,345", "85.2 µs"); CSV gets `slog_csv_table`, plain numbers with the unit in the header."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.units import format_iops, format_latency_ns

if TYPE_CHECKING:
    from stackbench.analysis.slog import Candidate


def slog_table(ranked: Sequence[Candidate], note: str) -> Tabular:
    rows = []
    for c in ranked:
        q1, q16 = c.qd1, c.qd16
        rows.append([
            c.name,
            format_iops(q1.iops) if q1 else "-",
            format_latency_ns(q1.median_ns) if q1 and q1.median_ns is not None else (
                f"{format_latency_ns(q1.mean_ns)} (mean)" if q1 else "-"),
            format_latency_ns(q1.mean_ns) if q1 else "-",
            format_latency_ns(q1.stdev_ns) if q1 else "-",
            format_iops(q1.best_1s_iops) if q1 and q1.best_1s_iops else "-",
            format_iops(q16.iops) if q16 else "-",
            format_latency_ns(q16.median_ns) if q16 else "-",
            format_iops(q16.best_1s_iops) if q16 and q16.best_1s_iops else "-",
            c.verdict,
        ])
    best = ranked[0].name if ranked and ranked[0].qd1_latency_ns is not None else None
    notes = [
        "QD1: 4K random O_SYNC writes for 5 s; QD16: the same for 10 s. Latencies are completion latencies "
        "(median, mean, standard deviation); best 1 s = highest one-second IOPS sample.",
        note,
    ]
    if best:
        notes.insert(0, f"Best candidate by QD1 latency: {best}.")
    return Tabular(
        headers=["Candidate", "QD1 IOPS", "QD1 median", "QD1 mean", "QD1 stdev", "QD1 best 1 s",
                 "QD16 IOPS", "QD16 median", "QD16 best 1 s", "Verdict"],
        rows=rows,
        title="SLOG shoot-out (sorted by QD1 median latency)",
        notes=notes,
        right_aligned=frozenset(range(1, 9)),
    )


def slog_csv_table(ranked: Sequence[Candidate]) -> Tabular:
    """The ranking for a spreadsheet, in the same order: IOPS to 0.1, completion latencies in microseconds
    to 0.001, an empty cell where a depth was not measured or has no such value (the display's "(mean)"
    stand-in for a missing median stays in the mean column)."""
    rows = []
    for c in ranked:
        q1, q16 = c.qd1, c.qd16
        rows.append([
            c.name,
            plain.iops(q1.iops if q1 else None),
            plain.microseconds(q1.median_ns if q1 else None),
            plain.microseconds(q1.mean_ns if q1 else None),
            plain.microseconds(q1.stdev_ns if q1 else None),
            plain.iops(q1.best_1s_iops if q1 else None),
            plain.iops(q16.iops if q16 else None),
            plain.microseconds(q16.median_ns if q16 else None),
            plain.iops(q16.best_1s_iops if q16 else None),
            c.verdict,
        ])
    return Tabular(
        headers=["Candidate", "QD1 IOPS", "QD1 median clat us", "QD1 mean clat us", "QD1 stdev clat us",
                 "QD1 best 1 s IOPS", "QD16 IOPS", "QD16 median clat us", "QD16 best 1 s IOPS", "Verdict"],
        rows=rows,
        title="SLOG shoot-out (sorted by QD1 median latency)",
        right_aligned=frozenset(range(1, 9)),
    )
