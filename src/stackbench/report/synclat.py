"""`synclat` as `diskinfo -wS` prints it: per write size the time one synchronous write takes (across the
separate runs, with its 95 % interval), the throughput and the completion-latency percentiles; and the same
rows in the JSON. The terminal and Markdown show `synclat_table` ("4K", "1,234.5", "± 3.1%", "1.2 ms");
CSV gets `synclat_csv_table`, plain numbers."""

from __future__ import annotations

from typing import Any

from stackbench.report import plain
from stackbench.report.tabular import Tabular
from stackbench.model.results import Run
from stackbench.base.units import format_latency_ns, format_size


def synclat_rows(run: Run) -> list[dict[str, Any]]:
    """The `synclat` list of the JSON (docs/sync-writes.md): per write size, the time one write takes, the
    geometric mean over the separate runs (`usec_per_io_ci` its 95 % interval, None from one run); IOPS and
    MB/s are the same mean's; the percentiles and the writes are those of all runs together."""
    from stackbench.analysis.synclat import sweep_sizes

    rows = []
    for size in sweep_sizes(run):
        cell, found = size.cell, size.usec_per_io
        r = cell.result
        clat = r.clat
        across = found is not None and found.n >= 2  # else the one result, as fio (or diskinfo) gave it
        iops = 1e6 / found.centre if across else r.iops  # type: ignore[union-attr]
        rows.append(
            {
                "size_bytes": cell.workload.bs,
                "usec_per_io": 1e6 / iops if iops else None,
                "usec_per_io_ci": [found.low, found.high] if across else None,  # type: ignore[union-attr]
                "runs": size.runs,
                "iops": iops,
                "mb_per_s": iops * cell.workload.bs / 1e6 if across else r.bw_bytes / 1e6,
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
        headers=["size", "usec/IO", "± 95% CI", "MB/s", "p50", "p99", "p99.9", "writes"],
        rows=[
            [
                format_size(row["size_bytes"]),
                f"{row['usec_per_io']:,.1f}" if row["usec_per_io"] else "-",
                _interval(row),
                f"{row['mb_per_s']:,.1f}",
                lat(row["clat_p50_us"]),
                lat(row["clat_p99_us"]),
                lat(row["clat_p999_us"]),
                f"{row['writes']:,}",
            ]
            for row in rows
        ],
        title=f"Synchronous random writes (O_DIRECT + O_DSYNC, QD1), run {run_id[:12]}",
        notes=[f"usec/IO = wall time per write (1e6 / IOPS), the geometric mean of {_runs_text(rows)} with its 95 % "
               "interval; MB/s = 10^6 bytes/s; p50/p99/p99.9 = completion latency of all runs together"],
        right_aligned=frozenset(range(1, 8)),
    )


def _interval(row: dict[str, Any]) -> str:
    """`± 3.1%`, or `-8%/+12%` when the interval is lopsided; `± ?` from one run. Plain wording: truth's
    shared formatting of intervals replaces it at merge."""
    interval, centre = row.get("usec_per_io_ci"), row["usec_per_io"]
    if not interval or not centre:
        return "± ?"
    down, up = (centre - interval[0]) / centre, (interval[1] - centre) / centre
    if up > 1.1 * down and up >= 0.1:
        return f"-{down:.0%}/+{up:.0%}"
    return f"± {max(down, up):.1%}"


def _runs_text(rows: list[dict[str, Any]]) -> str:
    least, most = min((row["runs"] for row in rows), default=0), max((row["runs"] for row in rows), default=0)
    if most <= 1:
        return "one fio run per size"
    return f"{least if least == most else f'{least}-{most}'} separate fio runs per size"


def synclat_csv_table(run_id: str, rows: list[dict[str, Any]]) -> Tabular:
    """The rows of `synclat_rows` for a spreadsheet: the size in bytes, times in microseconds to 0.001 (the
    interval's ends empty from one run), MB/s to 0.001, the runs and the writes counted."""
    return Tabular(
        headers=["size bytes", "usec per IO", "usec per IO CI low", "usec per IO CI high", "runs", "MB/s",
                 "p50 clat us", "p99 clat us", "p99.9 clat us", "writes"],
        rows=[
            [
                plain.count(row["size_bytes"]),
                plain.number(row["usec_per_io"], 3),
                plain.number(row["usec_per_io_ci"][0] if row["usec_per_io_ci"] else None, 3),
                plain.number(row["usec_per_io_ci"][1] if row["usec_per_io_ci"] else None, 3),
                plain.count(row["runs"]),
                plain.number(row["mb_per_s"], 3),
                plain.number(row["clat_p50_us"], 3),
                plain.number(row["clat_p99_us"], 3),
                plain.number(row["clat_p999_us"], 3),
                plain.count(row["writes"]),
            ]
            for row in rows
        ],
        title=f"Synchronous random writes, run {run_id[:12]}",
        right_aligned=frozenset(range(10)),
    )
