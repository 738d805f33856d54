"""What a report shows, gathered from a results store: `build_contents` for `stackbench report` and for the
server's report downloads (docs/reports.md, docs/server.md).

It loads the runs, redacts copies of them (report/redact.py) before anything else sees them, runs the
analysis the report shows (goals, compare, layers) on those copies and collects the charts. It sits above
`report` (which never reads the store) and `store`, and below `cli` and `web`, which both use it.
"""

from __future__ import annotations

import functools
import shlex
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from stackbench.analysis.compare import RunComparison
    from stackbench.analysis.layers import LayerGaps
    from stackbench.report.charts.figure import Figure
    from stackbench.report.charts.files import ChartFiles
    from stackbench.report.documents.contents import Contents, StoredPart
    from stackbench.model.results import Run


def build_contents(
    store: Any, refs: Sequence[str], *, compare: Sequence[str] | None = None, layers: Sequence[str] | None = None,
    names: Sequence[str] | None = None, keep_identifiers: bool = False, argv: Sequence[str] = (),
    figures: Callable[..., Sequence["Figure"]] | None = None, audits: Sequence[str] = (),
    charts: "ChartFiles | None" = None, tunes: Sequence[str] = (),
) -> "Contents":
    """Everything the report shows, from the store, redacted before any analysis, table or chart sees it.
    `tunes`: stored tune sessions, each shown as `show TUNE` shows it, its comparisons made again from its
    arms' redacted runs.

    `figures(runs, comparison, layers)` draws the charts from the redacted objects (default: the report's
    charts); tests pass their own to check that what a chart is given is redacted too. With `charts` (a chart
    directory), each run's charts are read from it, or drawn and kept there, as SVG (report/charts/stored.py).
    """
    from stackbench import __version__
    from stackbench.analysis.compare import compare_runs
    from stackbench.base.credentials import scrub_argv
    from stackbench.analysis.goals import evaluate
    from stackbench.analysis.layers import layer_gaps
    from stackbench.base.errors import StoreError
    from stackbench.report.documents.contents import Contents, FioJob, RunPart, fio_jobs, without_db
    from stackbench.report.redact import describe, redactor

    _check_options(compare, layers, names)
    loaded: dict[str, Run] = {}

    def load(ref: str) -> "Run":
        run = store.get_run(ref)
        return loaded.setdefault(run.id, run)

    shown, compared, layered = ([load(ref) for ref in group or ()] for group in (refs, compare, layers))
    if not shown:
        shown = list({run.id: run for run in [*compared, *layered]}.values())
    stored_tunes = [store.get_tune_session(ref) for ref in tunes]
    for run_id in _arm_run_ids(stored_tunes):  # learned and redacted with the rest; a removed one is left out
        try:
            load(run_id)
        except StoreError:
            continue
    jobs = {run.id: fio_jobs(run, store.fio_outputs(run.id)) for run in shown}

    redact = redactor(keep_identifiers)
    for run in loaded.values():
        job_texts = [text for job in jobs.get(run.id, ()) for text in (*job.command, job.job_file or "")]
        redact.learn_run(run, job_texts)
    stored_audits = [store.get_audit(store.resolve_any(ref, kinds=("audit",))[1]) for ref in audits]
    _learn_documents(redact, stored_audits, stored_tunes, [*(names or ()), *argv])
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
    drawn = (figures or functools.partial(_report_figures, store, [safe[run.id] for run in layered], charts))(
        [part.run for part in parts], comparison, gaps)
    return Contents(
        runs=tuple(parts),
        comparison=comparison,
        layers=gaps,
        layer_runs=tuple(safe[run.id] for run in layered) if gaps is not None else (),
        figures=tuple(drawn),
        redaction="identifiers kept as they are (--keep-identifiers)" if keep_identifiers else describe(redact.summary()),
        command=redact.text(shlex.join(["stackbench", *scrub_argv(without_db(argv))])) if argv else "",
        version=__version__,
        audits=tuple(_audit_part(audit, redact) for audit in stored_audits),
        tunes=tuple(_tune_part(tune, redact, safe) for tune in stored_tunes),
    )


def _learn_documents(redact: Any, stored_audits: Sequence[Any], stored_tunes: Sequence[Any],
                     texts: Sequence[str]) -> None:
    """Teach the redactor what the audits, tune sessions and the command line name (hosts, paths, labels)
    before anything is shown, so that a name is redacted alike wherever it appears."""
    from stackbench.report.redact import strings_of

    for audit in stored_audits:
        redact.learn("host", audit.subject_name)
        for text in strings_of(audit.document):
            redact.learn_text(text)
    for text in [text for tune in stored_tunes for text in strings_of([tune.label, tune.target, tune.document])]:
        redact.learn_text(text)
    for text in texts:
        redact.learn_text(text)


def _check_options(compare: Sequence[str] | None, layers: Sequence[str] | None, names: Sequence[str] | None) -> None:
    """The report's run options that only make sense together, refused before the store is read."""
    from stackbench.base.errors import UsageError

    if compare is not None and len(compare) != 2:
        raise UsageError(f"--compare takes two runs, A and B, not {len(compare)}", "e.g. --compare baseline lz4")
    if layers is not None and len(layers) < 2:
        raise UsageError("--layers needs at least two runs, bottom layer first", "e.g. --layers host-zfs,vm")
    if names is not None and layers is None:
        raise UsageError("--names names the layers of --layers, which is not given", "Add --layers R1,R2,...")


def _report_figures(store: Any, layered: Sequence["Run"], charts: "ChartFiles | None", runs: Sequence["Run"],
                    comparison: "RunComparison | None", gaps: "LayerGaps | None") -> list[Any]:
    """The report's charts, drawn from the redacted runs, comparison and layers, in the order shown: per
    run its matrix, percentiles, timeline, latency histogram (json+ buckets from the store, where
    the run has them) and stack (where its cells recorded their layers), kept in `charts` when given; then
    the comparison, then the layers."""
    from stackbench.report.charts import compare_figures, layers_figures, representative_cell, run_figures
    from stackbench.report.charts.stored import stored_run_figures
    from stackbench.store.latency_bins import bins_where_stored

    drawn: list[Any] = []
    for run in runs:
        bins = bins_where_stored(store, run, [representative_cell(run)])
        drawn += run_figures(run, bins=bins) if charts is None else stored_run_figures(charts, run, bins)
    if comparison is not None:
        drawn += compare_figures(comparison)
    if gaps is not None:
        drawn += layers_figures(gaps, layered)
    return drawn


def store_report_charts(store: Any, run_id: str, charts: "ChartFiles") -> None:
    """Draw a stored run's charts as its report (`report RUN`, redacted) will want them, into `charts`, so
    that the first report of the run reads them instead of drawing (`run` and `import` call it)."""
    build_contents(store, [run_id], charts=charts)


def _arm_run_ids(sessions: Sequence[Any]) -> list[str]:
    """The runs each stored tune session compared (its knobs' arms, its confirmation's), in order, once."""
    from stackbench.report.tune import session_comparisons, stored_session_document

    ids = [compare[side]["run_id"] for session in sessions
           for _, compare in session_comparisons(stored_session_document(session.id, session.document))
           for side in ("base", "other")]
    return list(dict.fromkeys(ids))


def _tune_part(session: Any, redact: Any, runs: dict[str, "Run"]) -> "StoredPart":
    """A stored tune session's tables as `show TUNE` builds them, from its redacted document and its arms'
    redacted runs; a comparison whose runs were removed since is left out and said in a note."""
    from stackbench.report.documents.contents import StoredPart
    from stackbench.report.tune import stored_session_tables

    def arm_runs(base: str, other: str) -> "tuple[Run, Run] | str":
        return (runs[base], runs[other]) if base in runs and other in runs else "are no longer stored"

    shown = stored_session_tables(session.id, redact.value(session.document), arm_runs)
    name = redact.text(session.label) if session.label else session.id[:12]
    target = redact.text(session.target) if session.target else "?"
    title = f"Tune session {name}: {target}, {session.created_at:%Y-%m-%d %H:%M} UTC ({session.status})"
    notes = tuple(f"The comparison of {what}: its runs {why}, so its table is left out."
                  for what, why in shown.left_out)
    return StoredPart(title, f"tune-{session.id[:12]}", shown.tables, notes)


def _audit_part(audit: Any, redact: Any) -> "StoredPart":
    """A stored audit's tables, built as `show AUDIT` builds them, from its redacted document."""
    from stackbench.base.errors import StoreError
    from stackbench.report.audit import stored_audit_tables
    from stackbench.report.documents.contents import StoredPart

    document = redact.value(audit.document)
    try:
        tables, notes = stored_audit_tables(document)
    except (ValueError, KeyError, TypeError) as error:
        raise StoreError(f"the stored audit {audit.id[:12]} is damaged and cannot be reported ({error})",
                         f"Delete it with `stackbench rm {audit.id[:12]} --yes` and audit again") from None
    subject = redact.text(audit.subject_name) if audit.subject_name else audit.source
    name = redact.text(audit.label) if audit.label else audit.id[:12]
    title = f"Audit {name}: {subject}, {audit.created_at:%Y-%m-%d %H:%M} UTC ({audit.source})"
    return StoredPart(title, f"audit-{audit.id[:12]}", tuple(tables), tuple(notes))


def replace_text(goal: Any, text: str) -> Any:
    from dataclasses import replace

    return replace(goal, text=text)


__all__ = ["build_contents"]
