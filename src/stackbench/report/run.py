"""One run as a result: on the terminal and in Markdown in the practitioners' shape
`Pattern | IOPS | MB/s | p50 | p99` with its goals, in CSV as plain numbers, in JSON as docs/json.md says.

Rows are named like `4K QD4 rnd write`; MB/s is decimal (10^6 bytes/s) and the header says so; on the
terminal latencies carry their unit in each cell because they span ns to s.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Iterable, Sequence

from stackbench.analysis.between_runs import Estimate
from stackbench.analysis.cells import RUNS, SEGMENTS, cell_estimate, replicates_of, run_count, runs_range
from stackbench.analysis.goals import GoalResult
from stackbench.report import plain
from stackbench.report.document import Report
from stackbench.report.facts import ab_round_order
from stackbench.report.goals import goals_table
from stackbench.report.layer_table import layer_export_table, layer_table
from stackbench.report.run_json import run_json
from stackbench.report.tabular import Tabular
from stackbench.report.uncertainty import SPREAD, TOO_NOISY, describe, noisy_note, readable
from stackbench.model.results import Cell, Run
from stackbench.base.units import count, format_bytes, format_iops, format_latency_ns, format_mb_per_s


def run_report(run: Run, goals: Sequence[GoalResult]) -> Report:
    """The run with its goals: the terminal and Markdown show the run's table, what each layer of the stack
    did during each cell where the run sampled them (report/layer_table.py) and the goals table, with
    units; CSV the cells as a table of plain numbers, and the layer rows as another where there are; the
    JSON gets a `goals` list."""
    data = run_json(run)
    data["goals"] = [result.to_json() for result in goals]
    layers = layer_export_table(run)
    return Report(tables=tuple(run_display(run, goals)), data=data,
                  csv_tables=(run_export_table(run), *([layers] if layers else [])))


def run_display(run: Run, goals: Sequence[GoalResult]) -> list[Tabular]:
    """The tables a reader is shown of a run (terminal, Markdown, the report's documents, the server's run
    page): the run's cells, what each layer of the stack did during each cell where the run sampled them,
    then its goals.
    They read a cell's per-second samples only where `analysis.cells.samples_needed` says so, unlike the
    JSON (per-second statistics of every cell), which the server's page does not build."""
    layers = layer_table(run)
    return [run_table(run), *([layers] if layers else []), *([goals_table(goals)] if goals else [])]


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
        details.append(f"status {run.status.upper()} ({done} of {_cells_planned(run.planned_cells)})")
    facts_said = f"; {', '.join(details)}" if details else ""
    table = cell_table(run.cells)
    return replace(table, title=" ".join(bits), notes=[f"MB/s = 10^6 bytes/s; clat = completion latency{facts_said}"],
                   short_notes=[f"{_short_legend(table.short_headers or ())}{facts_said}"])


def _short_legend(headers: Sequence[str]) -> str:
    """What the short headers of a narrow terminal mean, and their units."""
    said = ["IOPS ± 95% CI of the runs" if "runs" in headers else "IOPS", "MB/s = 10^6 bytes/s",
            "p50, p99 = completion latency"]
    if "sync" in headers:
        said.append("sync = p99 sync latency")
    if "spread" in headers:
        said.append("spread = run-to-run sd")
    return "; ".join(said)


def cell_table(cells: Iterable[Cell]) -> Tabular:
    """One row per cell. IOPS is the geometric mean of the cell's separate fio runs ± the 95 % interval
    (hyperfine's `value ± error`), or their range and "too noisy to tell" (report/uncertainty.py),
    followed by the number of runs and their spread. MB/s and latencies are the cell's figures across the
    same runs (analysis/across_runs.py)."""
    cells = list(cells)
    show_sync = any(c.result.sync_lat is not None for c in cells)
    # Only real separate runs (or an old --repeat's fio runs) earn an interval in a table; the batch means
    # a legacy single run is cut into for `compare` are not shown as if they were runs.
    estimates = {c.id: cell_estimate(c) if replicates_of(c).kind in (RUNS, SEGMENTS) else None for c in cells}
    show_stats = any(e is not None and e.n >= 2 for e in estimates.values())
    headers = ["Pattern", "IOPS (± 95% CI of runs)" if show_stats else "IOPS", "MB/s", "p50 clat", "p99 clat"]
    short = ["Pattern", "IOPS", "MB/s", "p50", "p99"]
    if show_sync:
        headers.append("p99 sync")
        short.append("sync")
    if show_stats:
        headers += ["runs", "spread"]
        short += ["runs", "spread"]
    rows = []
    for cell in cells:
        clat = cell.result.clat
        found = estimates[cell.id] if show_stats else None
        row = [
            cell.pattern,
            format_estimate(found, runs_range(cell)) if found else format_iops(cell.result.iops),
            format_mb_per_s(cell.result.bw_bytes),
            format_latency_ns(clat.p50_ns if clat else None),
            format_latency_ns(clat.p99_ns if clat else None),
        ]
        if show_sync:
            sync = cell.result.sync_lat
            row.append(format_latency_ns(sync.p99_ns if sync else None))
        if show_stats:
            row += [str(run_count(cell)), format_spread(found)]
        rows.append(row)
    every = frozenset(range(len(headers)))
    # No column wraps: a number broken over two lines misreads, and so does a pattern name. Only the words
    # "too noisy to tell (runs 9,120 to 1,000,000)" may wrap, between the numbers, rather than squeeze
    # the other columns into "…".
    noisy = any(e is not None and e.n >= 2 and e.too_noisy for e in estimates.values()) and show_stats
    wraps = frozenset({1, len(headers) - 1}) if noisy else frozenset()
    return Tabular(headers=headers, rows=rows, right_aligned=every - {0}, no_wrap=every - wraps, short_headers=short)


def run_export_table(run: Run) -> Tabular:
    """The run's cells for CSV: plain numbers a spreadsheet reads, units in the headers. An
    interval or spread too wide to read (report/uncertainty.py) leaves its cells empty and the `note`
    column says "too noisy to tell" with the runs' range."""
    headers = ["Pattern", "IOPS", "IOPS CI low", "IOPS CI high", "runs", "spread %", "MB/s",
               "p50 clat us", "p99 clat us", "p99.9 clat us", "p99 sync us", "note"]
    rows = []
    for cell in run.cells:
        found = cell_estimate(cell)
        clat, sync = cell.result.clat, cell.result.sync_lat
        bounds = found is not None and readable(found.low, found.high)
        spread = found is not None and found.spread_rel is not None and not found.spread_too_noisy
        noisy = found is not None and found.n >= 2 and found.too_noisy
        rows.append([
            cell.pattern,
            plain.iops(found.centre if found else cell.result.iops),
            plain.iops(found.low if bounds else None),
            plain.iops(found.high if bounds else None),
            str(run_count(cell)),
            plain.percent(found.spread_rel if spread else None),
            plain.mb_per_s(cell.result.bw_bytes),
            plain.microseconds(clat.p50_ns if clat else None),
            plain.microseconds(clat.p99_ns if clat else None),
            plain.microseconds(clat.p999_ns if clat else None),
            plain.microseconds(sync.p99_ns if sync else None),
            noisy_note("IOPS", runs_range(cell), plain.iops) if noisy else "",
        ])
    return Tabular(
        headers=headers,
        rows=rows,
        title=f"run {run.id[:12]}" + (f" '{run.label}'" if run.label else ""),
        notes=["MB/s = 10^6 bytes/s; IOPS = geometric mean of separate fio runs with its 95 % interval; "
               "spread = run-to-run standard deviation; MB/s and latencies summarised over the same runs"],
        right_aligned=frozenset(range(1, len(headers) - 1)),
    )


def per_run_report(run: Run) -> Report:
    """`show RUN --per-run`: every cell's separate fio runs, the values its figures summarise (the
    terminal and Markdown with units in the cells, CSV with plain numbers, JSON the run's own document,
    whose `measurement.replicates` hold the same runs)."""
    return Report(tables=(per_run_table(run, plain_numbers=False),), data=run_json(run),
                  csv_tables=(per_run_table(run, plain_numbers=True),))


def per_run_table(run: Run, *, plain_numbers: bool) -> Tabular:
    """One row per separate fio run of each cell, in the cell's order: its round and place in the run's
    interleaved order, its IOPS, MB/s and latencies, its fio seconds; then the cell's figure across them."""
    headers = ["Pattern", "run", "round", "order", "IOPS", "MB/s", "p50 clat", "p99 clat", "p99.9 clat", "seconds"]
    if plain_numbers:
        headers = [*headers[:5], "MB/s", "p50 clat us", "p99 clat us", "p99.9 clat us", "seconds"]
    rows = []
    for cell in run.cells:
        stored = (cell.measurement or {}).get("replicates") or []
        for number, entry in enumerate(stored, 1):
            values = [entry.get("iops"), entry.get("bw_bytes"), entry.get("clat_p50_ns"), entry.get("clat_p99_ns"),
                      entry.get("clat_p999_ns")]
            if plain_numbers:
                shown = [plain.iops(values[0]), plain.mb_per_s(values[1]), *(plain.microseconds(v) for v in values[2:]),
                         plain.number(entry.get("seconds"), 3)]
            else:
                shown = [format_iops(values[0]), format_mb_per_s(values[1]), *(format_latency_ns(v) for v in values[2:]),
                         f"{entry['seconds']:.1f}" if entry.get("seconds") is not None else "-"]
            rows.append([cell.pattern, str(number), str(entry.get("round", "")), str(entry.get("order", "")), *shown])
        if len(stored) > 1:
            found = cell_estimate(cell)
            centre = found.centre if found else cell.result.iops
            if plain_numbers:
                summary = plain.iops(centre)
            elif found is not None and not found.too_noisy:
                summary = format_estimate(found)
            else:  # the runs' range is in the rows just above
                summary = f"{format_iops(centre)} ({TOO_NOISY})"
            mbs = plain.mb_per_s(cell.result.bw_bytes) if plain_numbers else format_mb_per_s(cell.result.bw_bytes)
            rows.append([cell.pattern, "all", "", "", summary, mbs, "", "", "", ""])
    every = frozenset(range(len(headers)))
    return Tabular(
        headers=headers, rows=rows, title=f"runs of each cell of run {run.id[:12]}" + (f" '{run.label}'" if run.label else ""),
        notes=["all = the cell's figure: the geometric mean of its runs (IOPS, MB/s), as every table and verdict uses"],
        right_aligned=every - {0}, no_wrap=every,
    )


def format_estimate(found: Estimate, runs: tuple[float, float] | None = None) -> str:
    """`152,456 ± 5.6%`, `12,216 -48%/+93%`, or with an interval too wide to read the runs' range and
    "too noisy to tell" (report/uncertainty.describe)."""
    return describe(found.centre, found.low, found.high, runs=runs, n=found.n)


def format_spread(found: Estimate | None) -> str:
    """The run-to-run spread (`0.9%`), or "too noisy to tell" where it passes 100 %."""
    if found is None or found.log_sd is None:
        return "-"
    return describe(found.spread_rel, math.exp(-found.log_sd), math.exp(found.log_sd), style=SPREAD)


def _cells_planned(planned: int | None) -> str:
    """`3 cells`, `1 cell`, or `? cells` when the run did not say how many it planned."""
    return count(planned, "cell") if planned else "? cells"


def _plan_size(run: Run) -> int | None:
    workloads = (run.facts.get("plan") or {}).get("workloads") or []
    sizes = [w.get("size") for w in workloads if isinstance(w, dict) and w.get("size")]
    return max(sizes) if sizes else None
