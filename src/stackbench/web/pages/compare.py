"""Two runs compared: `stackbench compare A B` with its default options as a page, its chart and its report
download; a share link's holder sees the same page redacted (shares.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.model.results import Run
from stackbench.store.accounts import ShareLink, now
from stackbench.web.access import Principal, RunView, load_runs
from stackbench.web.charts import Chart, drawn_from
from stackbench.web.context import context_of
from stackbench.web.pages.render import chart_image, page
from stackbench.web.pages.reports import report_download
from stackbench.web.sessions import current
from stackbench.web.views import html_table, shared_views

router = APIRouter()


@router.get("/compare")
def compare_pick(request: Request, a: str = "", b: str = "") -> Response:
    principal = current(request)
    if principal.account is not None and not (a and b):  # the list's form with one choice missing
        return page(request, "error.html", 400, principal, title="Pick two runs",
                    message="Choose run A and run B in the runs list, then compare.")
    first, second = load_runs(request, principal, [a, b])
    return RedirectResponse(f"/compare/{first.run.id}/{second.run.id}", status_code=303)


@router.get("/compare/{a}/{b}")
def compare_page(request: Request, a: str, b: str) -> Response:
    principal = current(request)
    first, second = load_runs(request, principal, [a, b])
    return compare_response(request, principal, first, second, shared=None,
                            chart_src=f"/compare/{first.run.id}/{second.run.id}/chart.svg")


@router.get("/compare/{a}/{b}/report.html")
def compare_report_download(request: Request, a: str, b: str) -> Response:
    first, second = load_runs(request, current(request), [a, b])
    return report_download(request, [], [first.run, second.run])


@router.get("/compare/{a}/{b}/chart.svg")
def compare_chart(request: Request, a: str, b: str, n: int = 0) -> Response:
    first, second = load_runs(request, current(request), [a, b])
    return chart_image(compare_charts(request, first.run, second.run, shared=False), n)


def compare_charts(request: Request, base: Run, other: Run, shared: bool) -> list[Chart]:
    """The comparison's chart (none when the runs cannot be compared: the page says why)."""
    def draw() -> list:
        from stackbench.analysis.compare import compare_runs
        from stackbench.report.charts import compare_figures

        try:
            return compare_figures(compare_runs(base, other))
        except StackbenchError:
            return []

    return context_of(request).charts.charts(("compare", drawn_from(base), drawn_from(other), shared), draw)


def compare_response(request: Request, principal: Principal, first: RunView, second: RunView,
                     shared: ShareLink | None, chart_src: str) -> Response:
    """The comparison's page for its viewer, or redacted for a share link's holder (`shared`); 409 with
    the reason when the runs cannot be compared."""
    from stackbench.analysis.compare import compare_runs
    from stackbench.report.compare import comparison_table

    ctx = context_of(request)
    base, other = first.run, second.run
    if shared:
        base, other = shared_views(base, other)
    mine = first.mine and second.mine
    links = (ctx.accounts.share_links_of(principal.account.id, "compare", [base.id, other.id])
             if mine and principal.account and not shared else [])
    try:
        result = compare_runs(base, other)  # the CLI's defaults: alpha 0.05, --min-effect 5 %
    except StackbenchError as error:
        return page(request, "compare.html", 409, principal, base=base, other=other, verdict=None,
                    problem=error.one_line(), warnings=[], shared=shared, mine=mine, links=links, now=now(),
                    share_days=ctx.settings.share_default_days, share_max=ctx.settings.share_max_days)
    warnings = [f"compared despite a difference in key facts: {d}" for d in result.fact_differences]
    warnings += [str(w) for row in result.rows for w in row.warnings]
    warnings += [str(w) for w in result.drift]
    return page(request, "compare.html", 200, principal, base=base, other=other,
                charts=compare_charts(request, base, other, shared=bool(shared)), chart_src=chart_src,
                report_href=chart_src.removesuffix("chart.svg") + "report.html",
                verdict=html_table(comparison_table(result)), problem=None, warnings=warnings, shared=shared,
                mine=mine, links=links, now=now(), share_days=ctx.settings.share_default_days,
                share_max=ctx.settings.share_max_days)
