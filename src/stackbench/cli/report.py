"""`stackbench report RUN... [--compare A B] [--layers R1,R2,...] -o FILE`: a shareable document of stored runs
in HTML, Markdown (with PNG charts beside it) or XLSX, with identifiers replaced by placeholders unless
--keep-identifiers (docs/reports.md).

The command loads the runs from the store, redacts copies of them (report/redact.py) before anything else
sees them, runs the analysis the report shows (goals, compare, layers) on those copies, collects the charts,
and hands the result to the document format; the files are written all at once or not at all.
"""

from __future__ import annotations

import functools

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import typer

from stackbench.cli.app import app, out
from stackbench.cli.common import DbOption, JsonReplyOption, open_store_from, print_json, split_list

if TYPE_CHECKING:
    from stackbench.analysis.compare import RunComparison
    from stackbench.analysis.layers import LayerGaps
    from stackbench.report.charts.figure import Figure
    from stackbench.report.documents.contents import AuditPart, Contents
    from stackbench.results import Run


@app.command("report")
def report_command(
    runs: Optional[list[str]] = typer.Argument(
        None, help="Runs to report, each with its facts, warnings, goals, cells and commands: ids, id prefixes or "
        "labels. Default: the runs of --compare and --layers.", show_default=False,
    ),
    compare: Optional[tuple[str, str]] = typer.Option(
        None, "--compare", metavar="A B", help="Add the comparison of run B against run A, as `stackbench compare A B` "
        "with its defaults (differences in key facts are shown, not refused).", show_default=False,
    ),
    layers: Optional[list[str]] = typer.Option(
        None, "--layers", help="Add the layers table of these runs, bottom layer first: comma-separated or repeated "
        "(--layers host,vm,vm-luks).", show_default=False,
    ),
    names: Optional[str] = typer.Option(None, "--names", help="Layer names for --layers, comma-separated. Default: "
                                        "the runs' labels."),
    audits: Optional[list[str]] = typer.Option(
        None, "--audit", help="Add a stored audit (`audit --db`): its findings and what was fixed since the audit "
        "before it. Repeat for several.", show_default=False,
    ),
    output_format: Optional[str] = typer.Option(
        None, "--format", "-f", help="Document format: html, md (or markdown: Markdown with PNG charts beside it) or xlsx. "
        "Default: from -o's suffix (.html, .md, .xlsx), else html.", show_default=False,
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="The file to write. Default: stackbench-report-ID.FORMAT in the current directory, "
        "ID the first run's id prefix.", show_default=False, dir_okay=False,
    ),
    force: bool = typer.Option(False, "--force", help="Replace the file (and a Markdown report's PNG files) if it exists."),
    keep_identifiers: bool = typer.Option(
        False, "--keep-identifiers", help="Keep host names, disk serials, WWNs, MAC addresses, user names in paths "
        "and UUIDs as they are. Default: replaced by placeholders (host-1, disk-A, user-1, ...).",
    ),
    db: Optional[str] = DbOption,
    json_output: bool = JsonReplyOption,
) -> None:
    """Write stored runs as one shareable document: HTML (one self-contained file, inline charts, no network
    request), Markdown with PNG charts beside it, or an Excel workbook with native charts.

    Host names, disk serial numbers, WWNs, MAC addresses, user names in paths and UUIDs are replaced by
    stable placeholders (host-1, disk-A, user-1, ...) everywhere in the report, unless --keep-identifiers.
    An existing file is kept unless --force.

    Example:

        stackbench report baseline lz4 --compare baseline lz4 -o tuning.html

        stackbench report host-zfs vm --layers host-zfs,vm --names host,vm -o layers.md

        stackbench report baseline -o baseline.xlsx
    """
    from stackbench.cli.output_files import write_all
    from stackbench.errors import UsageError
    from stackbench.report.documents import document_format

    if not runs and not compare and not layers and not audits:
        raise UsageError("name at least one run to report", "e.g. stackbench report baseline -o baseline.html, "
                         "or --compare A B, or --layers R1,R2, or --audit AUDIT")
    fmt = document_format(output_format, output.suffix if output else "")
    store = open_store_from(db)
    contents = build_contents(
        store, runs or [], compare=compare, layers=split_list(layers), names=split_list([names]) if names else None,
        keep_identifiers=keep_identifiers, argv=sys.argv[1:], audits=audits or (),
    )
    if output is None:
        first = contents.runs[0].run.id[:12] if contents.runs else "layers" if layers else "audit"
        output = Path(f"stackbench-report-{first}{fmt.suffixes[0]}")
    stem = output.name[: -len(output.suffix)] if output.suffix else output.name
    main, beside = fmt.render(contents, stem)
    files = [(output, main), *((output.with_name(name), data) for name, data in beside)]
    write_all(files, force=force)
    if json_output:
        print_json({"format": fmt.name, "files": [str(path) for path, _ in files], "redacted": not keep_identifiers,
                    "redaction": contents.redaction, "runs": [part.run.id for part in contents.runs],
                    "charts": len(contents.figures)})
    else:
        more = f" and {len(beside)} chart file(s) beside it" if beside else ""
        out.print(f"Wrote {output}{more} ({fmt.name}; {contents.redaction}).", highlight=False)


def build_contents(
    store: Any, refs: Sequence[str], *, compare: Sequence[str] | None = None, layers: Sequence[str] | None = None,
    names: Sequence[str] | None = None, keep_identifiers: bool = False, argv: Sequence[str] = (),
    figures: Callable[..., Sequence["Figure"]] | None = None, audits: Sequence[str] = (),
) -> "Contents":
    """Everything the report shows, from the store, redacted before any analysis, table or chart sees it.

    `figures(runs, comparison, layers)` draws the charts from the redacted objects (default: the report's
    charts); tests pass their own to check that what a chart is given is redacted too.
    """
    from stackbench import __version__
    from stackbench.analysis.compare import compare_runs
    from stackbench.analysis.goals import evaluate
    from stackbench.analysis.layers import layer_gaps
    from stackbench.errors import UsageError
    from stackbench.report.documents.contents import Contents, FioJob, RunPart, fio_jobs, without_db
    from stackbench.report.redact import describe, redactor, strings_of

    if compare is not None and len(compare) != 2:
        raise UsageError(f"--compare takes two runs, A and B, not {len(compare)}", "e.g. --compare baseline lz4")
    if layers is not None and len(layers) < 2:
        raise UsageError("--layers needs at least two runs, bottom layer first", "e.g. --layers host-zfs,vm")
    if names is not None and layers is None:
        raise UsageError("--names names the layers of --layers, which is not given", "Add --layers R1,R2,...")
    loaded: dict[str, Run] = {}

    def load(ref: str) -> "Run":
        run = store.get_run(ref)
        return loaded.setdefault(run.id, run)

    shown = [load(ref) for ref in refs]
    compared = [load(ref) for ref in compare or ()]
    layered = [load(ref) for ref in layers or ()]
    if not shown:
        shown = list({run.id: run for run in [*compared, *layered]}.values())
    jobs = {run.id: fio_jobs(run, store.fio_outputs(run.id)) for run in shown}

    redact = redactor(keep_identifiers)
    for run in loaded.values():
        job_texts = [text for job in jobs.get(run.id, ()) for text in (*job.command, job.job_file or "")]
        redact.learn_run(run, job_texts)
    stored_audits = [store.get_audit(store.resolve_any(ref, kinds=("audit",))[1]) for ref in audits]
    for audit in stored_audits:
        redact.learn("host", audit.subject_name)
        for text in strings_of(audit.document):
            redact.learn_text(text)
    for text in [*(names or ()), *argv]:
        redact.learn_text(text)
    safe = {run_id: redact.run(run) for run_id, run in loaded.items()}
    goals = [replace_text(goal, redact.text(goal.text)) for _, goal in store.list_goals()]

    parts = []
    for run in shown:
        copy = safe[run.id]
        redacted_jobs = tuple(
            FioJob(job.cell and redact.text(job.cell), tuple(redact.text(a) for a in job.command),
                   redact.text(job.job_file) if job.job_file else None, job.runs)
            for job in jobs[run.id]
        )
        parts.append(RunPart(copy, tuple(evaluate(goals, copy)), redacted_jobs))
    comparison = None
    if compare:
        comparison = compare_runs(safe[compared[0].id], safe[compared[1].id], force=True)
    gaps = None
    if layers:
        gaps = layer_gaps([safe[run.id] for run in layered], [redact.text(n) for n in names] if names else None)
    drawn = (figures or functools.partial(_report_figures, store, [safe[run.id] for run in layered]))(
        [part.run for part in parts], comparison, gaps)
    return Contents(
        runs=tuple(parts),
        comparison=comparison,
        layers=gaps,
        figures=tuple(drawn),
        redaction="identifiers kept as they are (--keep-identifiers)" if keep_identifiers else describe(redact.summary()),
        command=redact.text(shlex.join(["stackbench", *without_db(argv)])) if argv else "",
        version=__version__,
        audits=tuple(_audit_part(audit, redact) for audit in stored_audits),
    )


def _report_figures(store: Any, layered: Sequence["Run"], runs: Sequence["Run"],
                    comparison: "RunComparison | None", gaps: "LayerGaps | None") -> list["Figure"]:
    """The report's charts, drawn from the redacted runs, comparison and layers, in the order shown: per
    run its matrix, percentiles, timeline and latency histogram (json+ buckets from the store, where
    the run has them), then the comparison, then the layers."""
    from stackbench.report.charts import compare_figures, layers_figures, representative_cell, run_figures
    from stackbench.store.latency_bins import bins_where_stored

    drawn: list["Figure"] = []
    for run in runs:
        drawn += run_figures(run, bins=bins_where_stored(store, run, [representative_cell(run)]))
    if comparison is not None:
        drawn += compare_figures(comparison)
    if gaps is not None:
        drawn += layers_figures(gaps, layered)
    return drawn


def _audit_part(audit: Any, redact: Any) -> "AuditPart":
    """A stored audit's tables, built as `show AUDIT` builds them, from its redacted document."""
    from stackbench.errors import StoreError
    from stackbench.report.audit import stored_audit_tables
    from stackbench.report.documents.contents import AuditPart

    document = redact.value(audit.document)
    try:
        tables, notes = stored_audit_tables(document)
    except (ValueError, KeyError, TypeError) as error:
        raise StoreError(f"the stored audit {audit.id[:12]} is damaged and cannot be reported ({error})",
                         f"Delete it with `stackbench rm {audit.id[:12]} --yes` and audit again") from None
    subject = redact.text(audit.subject_name) if audit.subject_name else audit.source
    name = redact.text(audit.label) if audit.label else audit.id[:12]
    title = f"Audit {name}: {subject}, {audit.created_at:%Y-%m-%d %H:%M} UTC ({audit.source})"
    return AuditPart(title, f"audit-{audit.id[:12]}", tuple(tables), tuple(notes))


def replace_text(goal: Any, text: str) -> Any:
    from dataclasses import replace

    return replace(goal, text=text)


__all__ = ["build_contents", "report_command"]
