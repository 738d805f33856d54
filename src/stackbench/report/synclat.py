"""`synclat` as `diskinfo -wS` prints it: per write size the time one synchronous write takes, the
throughput and the completion-latency percentiles; and the same rows in the JSON. The terminal and
Markdown show `synclat_table` ("4K", "1,234.5", "1.2 ms"); CSV gets `synclat_csv_table`, plain numbers."""

from __future__ import annotations

from typing import Any

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.results import Run
from stackbench.units import format_latency_ns, format_size


def synclat_rows(run: Run) -> list[dict[str, Any]]:
    """The `synclat` list of the JSON (docs/sync-writes.md): per write size, the time one write takes."""
    rows = []
    for cell in run.cells:
        r = cell.result
        clat = r.clat
        rows.append(
            {
                "size_bytes": cell.workload.bs,
                "usec_per_io": 1e6 / r.iops if r.iops else None,
                "iops": r.iops,
                "mb_per_s": r.bw_bytes / 1e6,
                "clat_p50_us": clat.p50_ns / 1000 if clat and clat.p50_ns is not None else None,
                "clat_p99_us": clat.p99_ns / 1000 if clat and clat.p99_ns is not None else None,
                "clat_p999_us": clat.p999_ns / 1000 if clat and clat.p999_ns is not None else None,
                "writes": r.total_ios,
            }
        )
    return rows


def synclat_table(run_id: str, rows: list[dict[str, Any]]) -> Tabular:
    def lat(us: float | None) -> str:
        return format_latency_ns(us * 1000 if us is not None else None)

    return Tabular(
        headers=["size", "usec/IO", "MB/s", "p50", "p99", "p99.9", "writes"],
        rows=[
            [
                format_size(row["size_bytes"]),
                f"{row['usec_per_io']:,.1f}" if row["usec_per_io"] else "-",
                f"{row['mb_per_s']:,.1f}",
                lat(row["clat_p50_us"]),
                lat(row["clat_p99_us"]),
                lat(row["clat_p999_us"]),
                f"{row['writes']:,}",
            ]
            for row in rows
        ],
        title=f"Synchronous random writes (O_DIRECT + O_DSYNC, QD1), run {run_id[:12]}",
        notes=["usec/IO = wall time per write (1e6 / IOPS); MB/s = 10^6 bytes/s; p50/p99/p99.9 = completion latency"],
        right_aligned=frozenset(range(1, 7)),
    )


def synclat_csv_table(run_id: str, rows: list[dict[str, Any]]) -> Tabular:
    """The rows of `synclat_rows` for a spreadsheet: the size in bytes, times in microseconds to 0.001,
    MB/s to 0.001, the writes counted."""
    return Tabular(
        headers=["size bytes", "usec per IO", "MB/s", "p50 clat us", "p99 clat us", "p99.9 clat us", "writes"],
        rows=[
            [
                plain.count(row["size_bytes"]),
                plain.number(row["usec_per_io"], 3),
                plain.number(row["mb_per_s"], 3),
                plain.number(row["clat_p50_us"], 3),
                plain.number(row["clat_p99_us"], 3),
                plain.number(row["clat_p999_us"], 3),
                plain.count(row["writes"]),
            ]
            for row in rows
        ],
        title=f"Synchronous random writes, run {run_id[:12]}",
        right_aligned=frozenset(range(7)),
    )
