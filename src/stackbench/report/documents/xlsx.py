"""The report as an Excel workbook (openpyxl): a summary sheet, a sheet per run, a compare and a layers sheet
when asked. Numbers are numbers (units in the headers, never in the cells), the same values `--json` prints
(report/run_json.py, the comparison's `to_json`), and the charts are native Excel charts over those cells,
so users can restyle them; no picture is pasted.

A run's sheet holds, top to bottom: its cells (with an IOPS and a p99 latency bar chart beside them), what
each layer of the stack did during each cell (report/layer_table.py's rows, where the run sampled them), goals,
warnings, facts, the commands to reproduce it, and the per-second samples (with a line chart of IOPS over
time per cell). Sheet names come from labels, which are user text: characters Excel forbids are dropped,
names are cut to 31 characters and made unique. Text that starts with `=` stays text, never a formula.
"""

from __future__ import annotations

import io
import re
from datetime import timezone
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from stackbench.report.compare import noisy_notes
from stackbench.report.documents.contents import Contents, Document, RunPart, StoredPart
from stackbench.report.facts import facts_table
from stackbench.report.layer_table import EXPORT_COLUMNS as LAYER_COLUMNS
from stackbench.report.layer_table import layer_export_rows
from stackbench.report.layers import layers_notes
from stackbench.report.layers import noisy_notes as layer_notes
from stackbench.report.run_json import cell_json
from stackbench.report.uncertainty import noisy_note, readable
from stackbench.base.usertext import shown

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet

SHEET_NAME_MAX = 31
_FORBIDDEN = re.compile(r"[\[\]:*?/\\\x00-\x1f\x7f]")
_RESERVED = {"history"}  # Excel keeps this name for itself

# (header with its unit, key in the cell's JSON, number format)
CELL_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("Pattern", "pattern", "@"),
    ("rw", "rw", "@"),
    ("Block size (bytes)", "bs_bytes", "#,##0"),
    ("Queue depth", "iodepth", "0"),
    ("Jobs", "numjobs", "0"),
    ("IOPS (geometric mean of runs)", "runs.iops", "#,##0.0"),
    ("IOPS 95% CI low", "runs.iops_ci_low", "#,##0.0"),
    ("IOPS 95% CI high", "runs.iops_ci_high", "#,##0.0"),
    ("Separate fio runs", "runs.n", "0"),
    ("Run-to-run spread (%)", "runs.spread_pct", "0.00"),
    ("MB/s (10^6 bytes/s)", "mb_per_s", "#,##0.000"),
    ("clat mean (µs)", "clat_mean_us", "#,##0.000"),
    ("p50 clat (µs)", "clat_p50_us", "#,##0.000"),
    ("p99 clat (µs)", "clat_p99_us", "#,##0.000"),
    ("p99.9 clat (µs)", "clat_p999_us", "#,##0.000"),
    ("p99 sync (µs)", "sync_lat_p99_us", "#,##0.000"),
    ("Note", "runs.note", "@"),
)
# Columns left empty when the runs are too noisy to tell (report/uncertainty.py): the note says so instead.
NOISY_COLUMNS = {"runs.iops_ci_low", "runs.iops_ci_high", "runs.spread_pct"}


def render(contents: Contents, stem: str) -> Document:
    """`report`'s workbook: one file."""
    return render_xlsx(contents), []


def render_xlsx(contents: Contents) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    summary = book.active
    taken = {"report"}
    summary.title = "Report"
    names = []
    if contents.comparison is not None:
        taken.add("compare")
    if contents.layers is not None:
        taken.add("layers")
    for part in contents.runs:
        name = sheet_name(part.name, taken)
        taken.add(name.lower())
        names.append(name)
    _summary(summary, contents, names)
    for part, name in zip(contents.runs, names):
        _run_sheet(book.create_sheet(name), part)
    if contents.comparison is not None:
        _compare_sheet(book.create_sheet("Compare"), contents)
    if contents.layers is not None:
        _layers_sheet(book.create_sheet("Layers"), contents)
    for number, tune in enumerate(contents.tunes, 1):
        _stored_sheet(book.create_sheet(sheet_name(f"Tune {number}", taken)), tune)
    for number, audit in enumerate(contents.audits, 1):
        _stored_sheet(book.create_sheet(sheet_name(f"Audit {number}", taken)), audit)
    book.properties.creator = "stackbench"
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def sheet_name(text: str, taken: Iterable[str] = ()) -> str:
    """A valid, unique sheet name for user text: no `[]:*?/\\`, no control characters, no apostrophe at
    either end, at most 31 characters, not `History`, and not equal (ignoring case) to one in `taken`."""
    taken = {t.lower() for t in taken}
    base = " ".join(_FORBIDDEN.sub(" ", shown(text)).split()).strip("'").strip() or "Run"
    if base.lower() in _RESERVED:
        base = f"{base} run"
    base = base[:SHEET_NAME_MAX].rstrip().strip("'") or "Run"
    name, number = base, 1
    while name.lower() in taken:
        number += 1
        suffix = f" ({number})"
        name = base[: SHEET_NAME_MAX - len(suffix)].rstrip() + suffix
    return name


# -- sheets ----------------------------------------------------------------------------------------

def _summary(ws: "Worksheet", contents: Contents, names: Sequence[str]) -> None:
    row = _title(ws, 1, contents.title)
    row = _line(ws, row, f"Made by stackbench {contents.version}. {contents.redaction[:1].upper()}{contents.redaction[1:]}.")
    if contents.command:
        row = _line(ws, row, f"Made with: {contents.command}")
    row += 1
    rows = []
    for part, name in zip(contents.runs, names):
        run = part.run
        rows.append([name, run.id, run.label or "", run.status, run.source, _naive(run.created_at), run.target or "",
                     len(run.cells), len(run.warnings)])
    row = _block(ws, row, "Runs", ["Sheet", "Run id", "Label", "Status", "Source", "Created (UTC)", "Target", "Cells",
                                   "Warnings"], rows, {5: "yyyy-mm-dd hh:mm"})
    if contents.comparison is not None:
        result = contents.comparison
        row = _line(ws, row, f"Compare: {result.verdict.upper()} — {result.reason} (sheet Compare)")
        if result.safety.differences:
            row = _line(ws, row, f"Safety: {result.safety.marking(result.verdict)}")
    _widths(ws, {1: 24, 2: 34, 3: 24, 7: 30})


def _run_sheet(ws: "Worksheet", part: RunPart) -> None:
    run = part.run
    row = _title(ws, 1, f"Run {part.name}")
    row = _line(ws, row, f"Run id {run.id}, {run.source}, status {run.status}, plan {run.plan_name or '-'}, "
                         f"target {run.target or '-'}")
    row += 1
    data = [cell_json(cell) for cell in run.cells]
    cells_top = row
    rows = [[_cell_value(item, key) for _, key, _ in CELL_COLUMNS] for item in data]
    formats = {i: fmt for i, (_, _, fmt) in enumerate(CELL_COLUMNS) if fmt != "@"}
    row = _block(ws, row, "Cells", [h for h, _, _ in CELL_COLUMNS], rows, formats)
    if data:
        first, last = cells_top + 2, cells_top + 1 + len(data)
        anchor = len(CELL_COLUMNS) + 2
        # The geometric mean of the separate runs where every cell has one; an imported run has fio's IOPS only.
        iops = "runs.iops" if all(_get(item, "runs.iops") is not None for item in data) else "iops"
        _bar(ws, "IOPS per cell", "IOPS", _col(CELL_COLUMNS, iops), first, last, f"{_letter(anchor)}{cells_top}")
        _bar(ws, "p99 completion latency per cell", "p99 clat (µs)", _col(CELL_COLUMNS, "clat_p99_us"), first, last,
             f"{_letter(anchor)}{cells_top + 16}")
    layer_rows = layer_export_rows(run)
    if layer_rows:
        formats = {i: "#,##0" + ("." + "0" * decimals if decimals else "")
                   for i, (_, decimals) in enumerate(LAYER_COLUMNS) if decimals is not None}
        row = _block(ws, row, "Layers during each cell", [h for h, _ in LAYER_COLUMNS], layer_rows, formats)
    if part.goals:
        goals = []
        for result in part.goals:
            status = "n/a" if result.passed is None else "PASS" if result.passed else "FAIL"
            goals.append([result.goal.text, result.cell.pattern if result.cell else "(no matching cell)",
                          result.value, _goal_unit(result.goal.metric), status, result.margin_pct])
        row = _block(ws, row, "Goals", ["Goal", "Cell", "Value", "Unit", "Result", "Margin (%)"], goals,
                     {2: "#,##0.0", 5: "0.0"})
    if run.warnings:
        row = _block(ws, row, "Warnings", ["Code", "About", "Warning", "Fix"],
                     [[w.code.value, w.subject or "the run", w.text, w.fix] for w in run.warnings], {})
    facts = facts_table(run)
    row = _block(ws, row, "Facts", list(facts.headers), [list(r) for r in facts.rows], {})
    commands = []
    if part.stackbench_command:
        commands.append(["stackbench", "", part.stackbench_command, ""])
    for job in part.fio_jobs:
        commands.append([job.cell or "fio job", job.runs, job.command_line, job.job_file or ""])
    if commands:
        row = _block(ws, row, "To reproduce", ["For", "fio runs", "Command", "Job file"], commands, {1: "0"})
    _samples(ws, row, run)
    _widths(ws, {1: 26, 2: 14, 3: 40, 4: 40})


def _second(sample: Any) -> list[Any]:
    """A sample's fio run, time, IOPS, MB/s and mean latency (µs); a second fio logged no bandwidth or
    latency for is left empty there."""
    return [sample.segment + 1, sample.t_s, sample.iops, None if sample.bw_bytes is None else sample.bw_bytes / 1e6,
            None if sample.clat_mean_ns is None else sample.clat_mean_ns / 1000]


def _samples(ws: "Worksheet", row: int, run: Any) -> None:
    """Every stored per-second sample, one row each, and a line chart of IOPS against the sample number with
    one series per cell (ramp samples are listed, marked, and left out of the chart as the statistics do)."""
    rows, spans = [], []
    for cell in run.cells:
        start = len(rows)
        for number, sample in enumerate([s for s in cell.samples if not s.ramp], 1):
            rows.append([cell.pattern, number, *_second(sample), "no"])
        spans.append((cell.pattern, start, len(rows)))
        rows += [[cell.pattern, None, *_second(s), "yes"] for s in cell.samples if s.ramp]
    if not rows:
        _line(ws, row, "Per-second samples: none stored (an imported run, or fio runs shorter than two seconds).")
        return
    top = row
    _block(ws, row, "Per-second samples", ["Cell", "Sample #", "fio run", "t in fio run (s)", "IOPS",
                                           "MB/s (10^6 bytes/s)", "clat mean (µs)", "Ramp (not used)"],
           rows, {1: "0", 2: "0", 3: "0.0", 4: "#,##0.0", 5: "#,##0.000", 6: "#,##0.000"})
    from openpyxl.chart import Reference, ScatterChart, Series

    chart = ScatterChart(scatterStyle="line")
    chart.title = "Per-second IOPS of each cell"
    chart.x_axis.title = "sample (s of measurement)"
    chart.y_axis.title = "IOPS"
    chart.height, chart.width = 9, 18
    for pattern, start, end in spans:
        if end > start:
            x = Reference(ws, min_col=2, min_row=top + 2 + start, max_row=top + 1 + end)
            y = Reference(ws, min_col=5, min_row=top + 2 + start, max_row=top + 1 + end)
            series = Series(y, x, title=_clean(pattern)[:250])
            series.marker.symbol = "none"
            series.smooth = False
            chart.series.append(series)
    _axes_visible(chart)
    ws.add_chart(chart, f"{_letter(10)}{top}")


def _compare_sheet(ws: "Worksheet", contents: Contents) -> None:
    result = contents.comparison
    a = result.base.label or result.base.id[:12]
    b = result.other.label or result.other.id[:12]
    row = _title(ws, 1, f"Compare A = {a}, B = {b}")
    row = _line(ws, row, f"Verdict: {result.verdict.upper()} — {result.reason}")
    if result.safety.differences:
        row = _line(ws, row, f"Safety: {result.safety.marking(result.verdict)}")
    if result.order_effect is not None:
        row = _line(ws, row, result.order_effect.summary())
    for difference in result.fact_differences:
        row = _line(ws, row, f"Compared despite a difference in key facts: {difference}")
    row += 1
    top = row
    rows = []
    for compared in result.rows:
        item = compared.to_json()
        base_ci, other_ci = _bounds(item["base_ci"]), _bounds(item["other_ci"])
        test = compared.test
        delta_ci = item["delta_ci_pct"] if test is not None and not test.too_noisy else [None, None]
        rows.append([item["pattern"], item["base_iops"], *base_ci, item["other_iops"], *other_ci, item["delta_pct"],
                     *delta_ci, item["p_holm"], item["n"][0], item["n"][1], item["weight"], item["verdict"],
                     noisy_notes(compared, lambda v: f"{v:,.0f}") or None])
    headers = ["Pattern", "A IOPS", "A 95% CI low", "A 95% CI high", "B IOPS", "B 95% CI low", "B 95% CI high",
               "Change B vs A (%)", "Change 95% CI low (%)", "Change 95% CI high (%)", "p (Holm-adjusted)",
               "A runs", "B runs", "Weight", "Verdict", "Note"]
    formats = {i: "#,##0.0" for i in range(1, 7)} | {7: "0.00", 8: "0.00", 9: "0.00", 10: "0.0000", 11: "0", 12: "0",
                                                     13: "0.##"}
    row = _block(ws, row, "Cells", headers, rows, formats)
    if rows:
        _bar(ws, "Change per cell, B vs A", "change (%)", 8, top + 2, top + 1 + len(rows),
             f"{_letter(len(headers) + 2)}{top}")
        _bar(ws, "IOPS per cell, A and B", "IOPS", 2, top + 2, top + 1 + len(rows),
             f"{_letter(len(headers) + 2)}{top + 16}", extra_cols=(5,))
    _widths(ws, {1: 26})


def _layers_sheet(ws: "Worksheet", contents: Contents) -> None:
    gaps = contents.layers
    unit = "IOPS" if gaps.metric == "iops" else "MB/s (10^6 bytes/s)"
    row = _title(ws, 1, "Layers, bottom up: " + " / ".join(gaps.names))
    for note in layers_notes(gaps)[:1]:  # the claim: the biggest proven gap, or none and what would prove one
        row = _line(ws, row, note)
    row += 1
    top = row
    pairs = list(zip(gaps.names, gaps.names[1:]))
    headers = ["Pattern", *(f"{name} ({unit})" for name in gaps.names),
               *(f"{low} to {high} (factor lost)" for low, high in pairs),
               *(f"{low} to {high} 95% CI {end}" for low, high in pairs for end in ("low", "high")),
               *(f"{low} to {high} proven" for low, high in pairs), "Note"]
    rows = []
    for r in gaps.rows:
        bounds = [x for g in r.gaps for x in (_bounds([g.low, g.high]) if g is not None else [None, None])]
        proven = [("yes" if g.proven else "no") if g is not None else None for g in r.gaps]
        rows.append([r.pattern, *r.values, *r.factors, *bounds, *proven,
                     layer_notes(gaps, r, lambda v: f"{v:,.1f}") or None])
    n = len(gaps.names)
    formats = {i: "#,##0.0" for i in range(1, n + 1)} | {i: "0.00" for i in range(n + 1, 2 * n + 2 * len(pairs))}
    row = _block(ws, row, "Cells", headers, rows, formats)
    if rows:
        chart = _bar(ws, f"{unit} per cell and layer (log scale)", unit, 2, top + 2, top + 1 + len(rows),
                     f"{_letter(len(headers) + 2)}{top}", extra_cols=tuple(range(3, n + 2)))
        chart.y_axis.scaling.logBase = 10
    _widths(ws, {1: 26})


def _bounds(bounds: Sequence[float | None] | None) -> list[float | None]:
    """An interval's two ends, or two empty cells where there is none or it is too noisy to tell (the
    note says so; report/uncertainty.py)."""
    if not bounds or not readable(bounds[0], bounds[1]):
        return [None, None]
    return list(bounds)


def _stored_sheet(ws: "Worksheet", part: "StoredPart") -> None:
    """A stored audit's or tune session's tables, each under its title."""
    row = _title(ws, 1, part.title)
    for note in part.notes:
        row = _line(ws, row, note)
    row += 1
    for table in part.tables:
        row = _block(ws, row, table.title or "", table.headers, table.rows, {})
    _widths(ws, {1: 28, 2: 12, 3: 40})


# -- building blocks -------------------------------------------------------------------------------

def _title(ws: "Worksheet", row: int, text: str) -> int:
    from openpyxl.styles import Font

    cell = _put(ws, row, 1, text)
    cell.font = Font(bold=True, size=14)
    return row + 1


def _line(ws: "Worksheet", row: int, text: str) -> int:
    _put(ws, row, 1, text)
    return row + 1


def _block(ws: "Worksheet", row: int, title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]],
           formats: dict[int, str]) -> int:
    """A titled table at `row`: the title, a bold header row, the rows; returns the row after a blank one."""
    from openpyxl.styles import Alignment, Font, PatternFill

    _put(ws, row, 1, title).font = Font(bold=True, size=12)
    fill = PatternFill("solid", fgColor="F2F4F7")
    for c, header in enumerate(headers, 1):
        cell = _put(ws, row + 1, c, header)
        cell.font = Font(bold=True)
        cell.fill = fill
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    for r, values in enumerate(rows, row + 2):
        for c, value in enumerate(values):
            cell = _put(ws, r, c + 1, value)
            if c in formats and isinstance(value, (int, float)):
                cell.number_format = formats[c]
            if isinstance(value, str) and "\n" in value:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
    return row + 2 + len(rows) + 1


def _put(ws: "Worksheet", row: int, col: int, value: Any) -> Any:
    """Write one value: text is cleaned of characters XML cannot hold and is never read as a formula."""
    cell = ws.cell(row=row, column=col)
    if isinstance(value, str):
        cell.value = _clean(value)
        cell.data_type = "s"  # a label like "=HYPERLINK(...)" stays text
    elif isinstance(value, float) and value != value:  # NaN: an empty cell, not an error
        cell.value = None
    else:
        cell.value = value
    return cell


def _bar(ws: "Worksheet", title: str, y_title: str, col: int, first: int, last: int, anchor: str,
         extra_cols: tuple[int, ...] = ()) -> Any:
    """A native clustered bar chart of column `col` (and `extra_cols`) over rows first..last, categories from
    column A, series named by the header row above `first`."""
    from openpyxl.chart import BarChart, Reference

    chart = BarChart()
    chart.type = "bar"  # horizontal: long pattern names stay readable
    chart.title = title
    chart.x_axis.title = "cell"
    chart.y_axis.title = y_title
    chart.height = max(7.5, 0.5 * (last - first + 1) + 3)
    chart.width = 18
    for column in (col, *extra_cols):
        chart.add_data(Reference(ws, min_col=column, min_row=first - 1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.x_axis.scaling.orientation = "maxMin"  # first cell on top, as in the table
    _axes_visible(chart)
    ws.add_chart(chart, anchor)
    return chart


def _axes_visible(chart: Any) -> None:
    # openpyxl 3.1 writes axes with delete=1 unless told otherwise; Excel then draws no axis labels
    chart.x_axis.delete = False
    chart.y_axis.delete = False


def _widths(ws: "Worksheet", widths: dict[int, float]) -> None:
    for column, width in widths.items():
        ws.column_dimensions[_letter(column)].width = width


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(column)


def _col(columns: Sequence[tuple[str, str, str]], key: str) -> int:
    return 1 + [k for _, k, _ in columns].index(key)


def _cell_value(item: dict[str, Any], key: str) -> Any:
    """A run sheet's cell: the JSON's value, but no bounds for runs too noisy to tell (their note says so)."""
    runs = item.get("runs") or {}
    noisy = bool(runs.get("too_noisy")) and (runs.get("n") or 0) >= 2
    if key == "runs.note":
        return noisy_note("IOPS", runs.get("iops_range"), lambda v: f"{v:,.0f}") if noisy else None
    if key in NOISY_COLUMNS and (noisy or (key == "runs.spread_pct" and runs.get("spread_too_noisy"))):
        return None
    return _get(item, key)


def _get(item: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        item = item.get(part) if isinstance(item, dict) else None
    return item


def _goal_unit(metric: str) -> str:
    return {"iops": "IOPS", "bw": "bytes/s"}.get(metric, "ns")


def _naive(moment: Any) -> Any:
    """Excel has no time zones: times are written as UTC without one (the header says UTC)."""
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def _clean(text: str) -> str:
    """Text as a cell holds it: invisible and control characters escaped as everywhere (usertext.shown;
    newlines and tabs kept, a cell wraps them), and what XML cannot hold at all left out."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    return ILLEGAL_CHARACTERS_RE.sub("", shown(text, keep="\n\t"))
