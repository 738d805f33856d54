"""One run as a result: on the terminal in the practitioners' shape `Pattern | IOPS | MB/s | p50 | p99`,
in Markdown and CSV as plain numbers, in JSON as docs/json.md says, each with the stored goals checked.

Rows are named like `4K QD4 rnd write`; MB/s is decimal (10^6 bytes/s) and the header says so; on the
terminal latencies carry their unit in each cell because they span ns to s.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

from stackbench.analysis.between_runs import Estimate
from stackbench.analysis.cells import RUNS, SEGMENTS, cell_estimate, replicates_of, run_count
from stackbench.analysis.goals import GoalResult
from stackbench.report import plain
from stackbench.report.document import Report
from stackbench.report.facts import ab_round_order
from stackbench.report.goals import goals_table
from stackbench.report.run_json import run_json
from stackbench.report.tabular import Tabular
from stackbench.results import Cell, Run
from stackbench.units import format_bytes, format_iops, format_latency_ns, format_mb_per_s


def run_report(run: Run, goals: Sequence[GoalResult]) -> Report:
    """The run with its goals: the terminal shows the goals table under the run's; the exported cells
    stay one table of numbers; the JSON gets a `goals` list."""
    data = run_json(run)
    data["goals"] = [result.to_json() for result in goals]
    return Report(tables=(run_export_table(run),), data=data, display=tuple(run_display(run, goals)))


def run_display(run: Run, goals: Sequence[GoalResult]) -> list[Tabular]:
    """The tables the terminal shows of a run (and the server's run page): the run's cells, then its goals.
    They read a cell's per-second samples only where `analysis.cells.samples_needed` says so, unlike the
    JSON (per-second statistics of every cell), which the server's page does not build."""
    return [run_table(run), *([goals_table(goals)] if goals else [])]


def run_table(run: Run) -> Tabular:
    """The terminal's run table: the cells under a title naming the run, its notes the facts that matter
    when reading the numbers (fio version, file system, file size, an unfinished run's progress)."""
    facts = run.facts
    bits = [f"run {run.id[:12]}"]
    if run.label:
        bits.append(f"'{run.label}'")
    if run.target:
        bits.append(f"on {run.target}")
    details = []
    if facts.get("fio_version"):
        details.append(str(facts["fio_version"]))
    target = facts.get("target") or {}
    if target.get("fs_type"):
        details.append(f"fs {target['fs_type']}")
    size = _plan_size(run)
    if size:
        details.append(f"file {format_bytes(size)}")
    ab = facts.get("ab")
    if isinstance(ab, dict):
        details.append(f"ab arm {ab.get('arm', '?')}, rounds {ab_round_order(ab)}")
    if run.status != "complete":
        done = len({c.fio_output_id for c in run.cells})
        details.append(f"status {run.status.upper()} ({done} of {run.planned_cells or '?'} cells)")
    notes = "MB/s = 10^6 bytes/s; clat = completion latency" + (f"; {', '.join(details)}" if details else "")
    return replace(cell_table(run.cells), title=" ".join(bits), notes=[notes])


def cell_table(cells: Iterable[Cell]) -> Tabular:
    """One row per cell. IOPS is the geometric mean of the cell's separate fio runs ± the 95 % interval
    (hyperfine's `value ± error`), followed by the number of runs and their spread."""
    cells = list(cells)
    show_sync = any(c.result.sync_lat is not None for c in cells)
    # Only real separate runs (or an old --repeat's fio runs) earn an interval in a table; the batch means
    # a legacy single run is cut into for `compare` are not shown as if they were runs.
    estimates = {c.id: cell_estimate(c) if replicates_of(c).kind in (RUNS, SEGMENTS) else None for c in cells}
    show_stats = any(e is not None and e.n >= 2 for e in estimates.values())
    headers = ["Pattern", "IOPS (± 95% CI of runs)" if show_stats else "IOPS", "MB/s", "p50 clat", "p99 clat"]
    if show_sync:
        headers.append("p99 sync")
    if show_stats:
        headers += ["runs", "spread"]
    rows = []
    for cell in cells:
        clat = cell.result.clat
        found = estimates[cell.id] if show_stats else None
        row = [
            cell.pattern,
            format_estimate(found) if found else format_iops(cell.result.iops),
            format_mb_per_s(cell.result.bw_bytes),
            format_latency_ns(clat.p50_ns if clat else None),
            format_latency_ns(clat.p99_ns if clat else None),
        ]
        if show_sync:
            sync = cell.result.sync_lat
            row.append(format_latency_ns(sync.p99_ns if sync else None))
        if show_stats:
            spread = found.spread_rel if found else None
            row += [str(run_count(cell)), f"{spread:.1%}" if spread is not None else "-"]
        rows.append(row)
    every = frozenset(range(len(headers)))
    # No column wraps: a number broken over two lines misreads, and so does a pattern name.
    return Tabular(headers=headers, rows=rows, right_aligned=every - {0}, no_wrap=every)


def run_export_table(run: Run) -> Tabular:
    """The run's cells for Markdown and CSV: plain numbers a spreadsheet reads, units in the headers."""
    headers = ["Pattern", "IOPS", "IOPS CI low", "IOPS CI high", "runs", "spread %", "MB/s",
               "p50 clat us", "p99 clat us", "p99.9 clat us", "p99 sync us"]
    rows = []
    for cell in run.cells:
        found = cell_estimate(cell)
        clat, sync = cell.result.clat, cell.result.sync_lat
        rows.append([
            cell.pattern,
            plain.iops(found.centre if found else cell.result.iops),
            plain.iops(found.low if found else None),
            plain.iops(found.high if found else None),
            str(run_count(cell)),
            plain.percent(found.spread_rel if found else None),
            plain.mb_per_s(cell.result.bw_bytes),
            plain.microseconds(clat.p50_ns if clat else None),
            plain.microseconds(clat.p99_ns if clat else None),
            plain.microseconds(clat.p999_ns if clat else None),
            plain.microseconds(sync.p99_ns if sync else None),
        ])
    return Tabular(
        headers=headers,
        rows=rows,
        title=f"run {run.id[:12]}" + (f" '{run.label}'" if run.label else ""),
        notes=["MB/s = 10^6 bytes/s; IOPS = geometric mean of separate fio runs with its 95 % interval; "
               "spread = run-to-run standard deviation"],
        right_aligned=frozenset(range(1, len(headers))),
    )


def format_estimate(found: Estimate) -> str:
    """`152,456 ± 5.6%`; a wide interval, which is lopsided on the log scale it is computed on, as
    `12,216 -48%/+93%` (never a "± 146 %" that would reach below zero); `± ?` when one run gives none."""
    width = found.half_width_rel
    if width == float("inf") or found.low is None or found.high is None:
        return f"{format_iops(found.centre)} ± ?"
    down = (found.centre - found.low) / found.centre
    up = (found.high - found.centre) / found.centre
    if up > 1.1 * down and up >= 0.1:
        return f"{format_iops(found.centre)} -{down:.0%}/+{up:.0%}"
    return f"{format_iops(found.centre)} ± {width:.1%}"


def _plan_size(run: Run) -> int | None:
    workloads = (run.facts.get("plan") or {}).get("workloads") or []
    sizes = [w.get("size") for w in workloads if isinstance(w, dict) and w.get("size")]
    return max(sizes) if sizes else None
