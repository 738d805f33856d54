"""A run's page (`stackbench show RUN` and the charts of `stackbench report`), its chart images, its report
download and its owner's visibility form; a share link's holder sees the same page redacted (shares.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from stackbench.model.results import Run
from stackbench.store.accounts import ShareLink, now
from stackbench.web.access import Principal, RunView, load
from stackbench.web.charts import Chart, draw_run_charts, run_charts_key
from stackbench.web.context import context_of
from stackbench.web.pages.render import chart_image, page
from stackbench.web.pages.reports import report_download
from stackbench.web.pages.visibility import change_visibility
from stackbench.web.sessions import csrf_checked, current
from stackbench.web.views import fact_groups, fact_rows, html_table, shared_views

router = APIRouter()


def _is_synclat(run: Run) -> bool:
    """A `stackbench synclat` run (its plan is named so): its page adds the diskinfo -wS style table."""
    return run.plan_name == "synclat"


@router.get("/runs/{run_id}")
def run_page(request: Request, run_id: str) -> Response:
    principal = current(request)
    view: RunView = load(request, principal, "run", run_id)
    return run_response(request, principal, view, shared=None, chart_src=f"/runs/{view.run.id}/chart.svg")


@router.get("/runs/{run_id}/chart.svg")
def run_chart(request: Request, run_id: str, n: int = 0) -> Response:
    view: RunView = load(request, current(request), "run", run_id)
    return chart_image(run_charts(request, view.run, shared=False), n)


@router.get("/runs/{run_id}/report.html")
def run_report_download(request: Request, run_id: str) -> Response:
    view: RunView = load(request, current(request), "run", run_id)
    return report_download(request, [view.run], None)


@router.post("/runs/{run_id}/visibility")
def set_visibility(request: Request, run_id: str, visibility: str = Form(...),
                   principal: Principal = Depends(csrf_checked)) -> Response:
    view: RunView = load(request, principal, "run", run_id)
    return change_visibility(request, principal, "run", view.run.id, view.mine, visibility)


def run_charts(request: Request, run: Run, shared: bool) -> list[Chart]:
    """The run's charts as `stackbench report` draws them (`shared`: `run` is the redacted copy)."""
    ctx = context_of(request)
    return ctx.charts.charts(run_charts_key(run, shared), lambda: draw_run_charts(ctx.store, run))


def summary_sentence(run: Run) -> str:
    """What the run says, in one sentence at the top of its page: what was measured where, its key cell's
    figures (the runs list's headline) and how many warnings follow."""
    from stackbench.base.units import format_iops, format_mb_per_s, plural
    from stackbench.model.results import TOTAL_HOST

    facts = run.facts if isinstance(run.facts, dict) else {}
    target = facts.get("target") if isinstance(facts.get("target"), dict) else {}
    system = facts.get("system") if isinstance(facts.get("system"), dict) else {}
    where = f" on {run.target}" if run.target else ""
    about = ", ".join(str(v) for v in (target.get("fs_type"), system.get("hostname")) if v)
    sentence = f"A {run.status} {run.plan_name or run.source} run{where}{f' ({about})' if about else ''}"
    cells = sorted(run.cells, key=lambda c: (c.seq, c.result.host != TOTAL_HOST))
    if cells:
        key = cells[0]
        sentence += (f": {plural(len(run.cells), 'cell')}, the first {key.pattern} at "
                     f"{format_iops(key.result.iops)} IOPS and {format_mb_per_s(key.result.bw_bytes)} MB/s")
    else:
        sentence += ": no cell measured"
    if run.warnings:
        sentence += ("; the warning below says" if len(run.warnings) == 1
                     else f"; the {len(run.warnings)} warnings below say") + " what not to trust"
    return sentence + "."


def run_response(request: Request, principal: Principal, view: RunView, shared: ShareLink | None,
                 chart_src: str) -> Response:
    """The run's page for its viewer, or redacted for a share link's holder (`shared`)."""
    from stackbench.analysis.goals import evaluate
    from stackbench.report.run import run_display

    ctx = context_of(request)
    run = shared_views(view.run)[0] if shared else view.run
    tables = run_display(run, evaluate([goal for _, goal in ctx.store.list_goals()], run))
    synclat = None
    if _is_synclat(run):
        from stackbench.report.synclat import synclat_rows, synclat_table

        synclat = html_table(synclat_table(run.id, synclat_rows(run)))
    links = (ctx.accounts.share_links_of(principal.account.id, "run", [run.id])
             if view.mine and principal.account else [])
    return page(request, "run.html", 200, principal, view=view, run=run, shared=shared,
                charts=run_charts(request, run, shared=bool(shared)), chart_src=chart_src, synclat=synclat,
                report_href=chart_src.removesuffix("chart.svg") + "report.html",
                tables=[html_table(t) for t in tables], facts=fact_rows(run.facts),
                fact_groups=fact_groups(run.facts), summary=summary_sentence(run),
                warnings=[str(w) for w in run.warnings], links=links, now=now(),
                share_days=ctx.settings.share_default_days, share_max=ctx.settings.share_max_days)
