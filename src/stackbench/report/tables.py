"""Terminal tables in the practitioners' shape: `Pattern | IOPS | MB/s | p50 | p99`.

Rows are named like `4K QD4 rnd write`; MB/s is decimal (10^6 bytes/s) and the header says so; latencies
carry their unit in each cell because they span ns to s.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from stackbench.analysis.between_runs import Estimate
from stackbench.analysis.cells import RUNS, SEGMENTS, cell_estimate, replicates_of, run_count
from stackbench.report.tabular import Tabular
from stackbench.results import Cell, Run
from stackbench.units import format_bytes, format_iops, format_latency_ns, format_mb_per_s


def cell_table(cells: Iterable[Cell], *, title: str | None = None, caption: str | None = None) -> Table:
    """One row per cell. IOPS is the geometric mean of the cell's separate fio runs ± the 95 % interval
    (hyperfine's `value ± error`), followed by the number of runs and their spread."""
    cells = list(cells)
    show_sync = any(c.result.sync_lat is not None for c in cells)
    # Only real separate runs (or an old --repeat's fio runs) earn an interval in a table; the batch means
    # a legacy single run is cut into for `compare` are not shown as if they were runs.
    estimates = {c.id: cell_estimate(c) if replicates_of(c).kind in (RUNS, SEGMENTS) else None for c in cells}
    show_stats = any(e is not None and e.n >= 2 for e in estimates.values())
    table = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    table.add_column("Pattern", no_wrap=True)
    table.add_column("IOPS (± 95% CI of runs)" if show_stats else "IOPS", justify="right", no_wrap=True)
    table.add_column("MB/s", justify="right", no_wrap=True)
    table.add_column("p50 clat", justify="right", no_wrap=True)
    table.add_column("p99 clat", justify="right", no_wrap=True)
    if show_sync:
        table.add_column("p99 sync", justify="right", no_wrap=True)
    if show_stats:
        table.add_column("runs", justify="right", no_wrap=True)
        table.add_column("spread", justify="right", no_wrap=True)
    for cell in cells:
        clat = cell.result.clat
        found = estimates[cell.id] if show_stats else None
        row = [
            Text(cell.pattern),
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
        table.add_row(*row)
    return table


def run_tabular(run: Run) -> Tabular:
    """The run's cells for Markdown/CSV export: plain numbers with units in the headers."""
    headers = ["Pattern", "IOPS", "IOPS CI low", "IOPS CI high", "runs", "spread %", "MB/s",
               "p50 clat us", "p99 clat us", "p99.9 clat us", "p99 sync us"]
    rows = []
    for cell in run.cells:
        found = cell_estimate(cell)
        clat, sync = cell.result.clat, cell.result.sync_lat

        def us(ns: float | None) -> str:
            return "" if ns is None else f"{ns / 1000:.3f}"

        rows.append([
            cell.pattern,
            f"{found.centre if found else cell.result.iops:.1f}",
            f"{found.low:.1f}" if found and found.low is not None else "",
            f"{found.high:.1f}" if found and found.high is not None else "",
            str(run_count(cell)),
            f"{found.spread_rel * 100:.2f}" if found and found.spread_rel is not None else "",
            f"{cell.result.bw_bytes / 1e6:.3f}",
            us(clat.p50_ns if clat else None),
            us(clat.p99_ns if clat else None),
            us(clat.p999_ns if clat else None),
            us(sync.p99_ns if sync else None),
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


def run_table(run: Run) -> RenderableType:
    facts = run.facts
    bits = [f"run {run.id[:12]}"]
    if run.label:
        bits.append(f"'{run.label}'")
    if run.target:
        bits.append(f"on {run.target}")
    title = " ".join(bits)
    details = []
    if facts.get("fio_version"):
        details.append(str(facts["fio_version"]))
    target = facts.get("target") or {}
    if target.get("fs_type"):
        details.append(f"fs {target['fs_type']}")
    size = _plan_size(run)
    if size:
        details.append(f"file {format_bytes(size)}")
    if run.status != "complete":
        done = len({c.fio_output_id for c in run.cells})
        details.append(f"status {run.status.upper()} ({done} of {run.planned_cells or '?'} cells)")
    notes = "MB/s = 10^6 bytes/s; clat = completion latency" + (f"; {', '.join(details)}" if details else "")
    return Group(
        Text(title, style="bold"),
        cell_table(run.cells),
        Text(notes, style="dim"),
    )


def runs_table(rows: list[tuple[Run, int]]) -> Table:
    table = Table(title_justify="left")
    for name, justify, no_wrap in (
        ("ID", "left", True),
        ("Created", "left", True),
        ("Label", "left", False),
        ("Status", "left", True),
        ("Cells", "right", True),
        ("Plan", "left", False),
        ("Target", "left", False),
    ):
        table.add_column(name, justify=justify, no_wrap=no_wrap, overflow="fold")  # type: ignore[arg-type]
    for run, count in rows:
        status = Text(run.status, style={"complete": "green", "incomplete": "yellow"}.get(run.status, "red"))
        cells = f"{count}" if run.planned_cells is None else f"{count}/{run.planned_cells}"
        table.add_row(
            run.id[:12],
            _local(run.created_at),
            run.label or "",
            status,
            cells,
            run.plan_name or run.source,
            run.target or "",
        )
    return table


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _plan_size(run: Run) -> int | None:
    workloads = (run.facts.get("plan") or {}).get("workloads") or []
    sizes = [w.get("size") for w in workloads if isinstance(w, dict) and w.get("size")]
    return max(sizes) if sizes else None


def goals_table(results: list) -> RenderableType:  # list[GoalResult]
    """PASS/FAIL per goal and matching cell, with the margin to the threshold."""
    table = Table(title="Goals", title_justify="left")
    for name, justify in (("Goal", "left"), ("Cell", "left"), ("Value", "right"), ("Result", "left"), ("Margin", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for result in results:
        goal = result.goal
        if result.value is None:
            value = "-"
        elif goal.metric == "iops":
            value = f"{format_iops(result.value)} IOPS"
        elif goal.metric == "bw":
            value = f"{format_mb_per_s(result.value)} MB/s"
        else:
            value = format_latency_ns(result.value)
        status = (
            Text("n/a", style="dim")
            if result.passed is None
            else Text("PASS", style="bold green") if result.passed else Text("FAIL", style="bold red")
        )
        margin = "-" if result.margin_pct is None else f"{result.margin_pct:+.1f}%"
        table.add_row(goal.text, result.cell.pattern if result.cell else "(no matching cell)", value, status, margin)
    return table
