"""The report as an ordered list of blocks (headings, tables, text, code, charts) that HTML and Markdown both
render, so the two say the same things in the same order. The tables come from the builders the commands
use (`run_report`, `comparison_table`, `layers_table`, ...), never from table code of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from stackbench.report.compare import comparison_table
from stackbench.report.documents.contents import Contents, RunPart
from stackbench.report.facts import facts_table
from stackbench.report.layer_table import comparison_layer_table, layers_runs_table
from stackbench.report.layers import layers_table
from stackbench.report.run import run_report
from stackbench.report.tabular import Tabular
from stackbench.report.warnings import warnings_table
from stackbench.base.units import plural

if TYPE_CHECKING:
    from stackbench.report.charts.figure import Figure


@dataclass(frozen=True)
class Heading:
    level: int  # 1 the report, 2 a part, 3 a section of a part
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Table:
    table: Tabular


@dataclass(frozen=True)
class Text:
    text: str
    kind: str = "note"  # note | warning | lead


@dataclass(frozen=True)
class Code:
    text: str
    caption: str = ""
    language: str = ""  # sh or ini, for Markdown's fence


@dataclass(frozen=True)
class Chart:
    number: int  # 1-based, over the whole report: the Markdown PNG's file name uses it
    figure: "Figure"


Block = Union[Heading, Table, Text, Code, Chart]


def outline(contents: Contents) -> list[Block]:
    """Everything the report shows, top to bottom."""
    blocks: list[Block] = [Heading(1, contents.title, "top")]
    summary = f"Made by stackbench {contents.version}" if contents.version else "Made by stackbench"
    blocks.append(Text(f"{summary}. {contents.redaction[:1].upper()}{contents.redaction[1:]}.", "lead"))
    for part in contents.runs:
        blocks += _run_blocks(part)
    for part in (*contents.tunes, *contents.audits):
        blocks.append(Heading(2, part.title, part.anchor))
        blocks += [Table(table) for table in part.tables]
        blocks += [Text(note) for note in part.notes]
    if contents.comparison is not None:
        result = contents.comparison
        blocks += [Heading(2, "Comparison", "compare"), Table(comparison_table(result))]
        layers = comparison_layer_table(result)  # what each layer did in both runs: shown, never tested
        blocks += [Table(layers)] if layers is not None else []
        blocks += [Text(f"Compared despite a difference in key facts: {d}", "warning") for d in result.fact_differences]
        blocks += [Text(str(w), "warning") for row in result.rows for w in row.warnings]
    if contents.layers is not None:
        blocks += [Heading(2, "Layers", "layers"), Table(layers_table(contents.layers))]
        activity = layers_runs_table(contents.layer_runs, contents.layers.names) if contents.layer_runs else None
        blocks += [Table(activity)] if activity is not None else []  # what each device did: shown, never tested
    if contents.figures:
        blocks.append(Heading(2, "Charts", "charts"))
        blocks += [Chart(number, figure) for number, figure in enumerate(contents.figures, 1)]
    if contents.command:
        blocks += [Heading(2, "This report", "this-report"), Code(contents.command, "made with", "sh")]
    return blocks


def _run_blocks(part: RunPart) -> list[Block]:
    run = part.run
    status = run.status
    if run.status != "complete":  # as the run table says it: fio outputs done of the cells planned
        planned = plural(run.planned_cells, "cell") if run.planned_cells else "? cells"
        status = f"{run.status.upper()} ({len({c.fio_output_id for c in run.cells})} of {planned})"
    when = run.created_at.strftime("%Y-%m-%d %H:%M UTC") if run.created_at else "?"
    blocks: list[Block] = [
        Heading(2, f"Run {part.name}", part.anchor),
        Text(f"Run id {run.id}, {run.source} {when}, status {status}, plan {run.plan_name or '-'}, "
             f"{plural(len(run.cells), 'cell')}."),
    ]
    blocks += [Table(table) for table in run_report(run, part.goals).tables]  # the cells, then goals
    if run.warnings:
        blocks.append(Table(warnings_table(run)))
    blocks.append(Table(facts_table(run)))
    command = part.stackbench_command
    if command or part.fio_jobs:
        blocks.append(Heading(3, "To reproduce", f"{part.anchor}-reproduce"))
    if command:
        blocks.append(Code(command, "stackbench command", "sh"))
    for job in part.fio_jobs:
        about = f"{job.cell or 'fio job'}" + (f", run {job.runs} times" if job.runs > 1 else "") + \
            (": the command, then the job file" if job.job_file else "")
        text = f"$ {job.command_line}" + (f"\n\n{job.job_file.rstrip()}" if job.job_file else "")
        blocks.append(Code(text, about, "ini"))
    return blocks
