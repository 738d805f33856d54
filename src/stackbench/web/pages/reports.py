"""A run's or a comparison's HTML report as a download (`/runs/ID/report.html`, `/compare/A/B/report.html`,
`/s/TOKEN/report.html`), of runs already authorized by `access.load`."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import Response

from stackbench.model.results import Run
from stackbench.web.charts import drawn_from
from stackbench.web.context import context_of


def report_download(request: Request, runs: list[Run], compared: list[Run] | None) -> Response:
    """The HTML report of `runs` (or of the comparison of `compared`) as a download. Always redacted (host
    names, serials, user names in paths become placeholders), for owners too: it is made to be passed on,
    and so it is the same document for whoever may see the runs, kept in a small cache (drawing one costs a
    second or two for a big run). A download, not a page: the report's inline styles and charts are its
    own, and the page CSP does not apply to a saved file."""
    from stackbench.load.report_contents import build_contents
    from stackbench.report.documents.html import render_html

    ctx = context_of(request)
    run_ids, compared_ids = [r.id for r in runs], [r.id for r in compared] if compared else None
    key = ("report", tuple(drawn_from(r) for r in runs), tuple(drawn_from(r) for r in compared or ()))
    body = ctx.reports.get(key, lambda: render_html(build_contents(ctx.store, run_ids, compare=compared_ids)))
    name = f"stackbench-report-{(compared_ids or run_ids)[0][:12]}.html"
    return Response(body, media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
