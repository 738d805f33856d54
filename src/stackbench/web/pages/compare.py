"""Two runs compared: `stackbench compare A B` with its default options as a page, its chart and its report
download; a share link's holder sees the same page redacted (shares.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.model.results import Run
from stackbench.store.accounts import RunFilter, ShareLink, Viewer, now
from stackbench.web.access import Principal, RunView, load, load_runs
from stackbench.web.charts import Chart, drawn_from
from stackbench.web.context import context_of
from stackbench.web.pages.render import chart_image, page
from stackbench.web.pages.reports import report_download
from stackbench.web.sessions import current
from stackbench.web.views import html_table, shared_views

router = APIRouter()


CANDIDATES = 20  # the runs a one-run compare offers as the other run


@router.get("/compare")
def compare_pick(request: Request, a: str = "", b: str = "") -> Response:
    principal = current(request)
    if principal.account is not None and not (a and b):  # the list's form with one choice missing
        if not (a or b):
            return RedirectResponse("/runs", status_code=303)
        return _pick_the_other(request, principal, a or b)
    first, second = load_runs(request, principal, [a, b])
    return RedirectResponse(f"/compare/{first.run.id}/{second.run.id}", status_code=303)


def _pick_the_other(request: Request, principal: Principal, run_id: str) -> Response:
    """One run picked: the page that offers the newest runs of its plan the viewer may see as the other
    (each a link to the comparison), and the way back to the runs list."""
    view: RunView = load(request, principal, "run", run_id)
    account = principal.account
    assert account is not None
    where = RunFilter(plan=view.run.plan_name) if view.run.plan_name else RunFilter()
    rows, _ = context_of(request).accounts.visible_runs(Viewer(account.id, account.is_admin), where, whole=False,
                                                         offset=0, limit=CANDIDATES + 1)
    others = [row[0] for row in rows if row[0].id != view.run.id][:CANDIDATES]
    return page(request, "compare_pick.html", 200, principal, run=view.run, others=others)


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
    from stackbench.report.layer_table import comparison_layer_table

    from stackbench.analysis.compare import fact_differences, key_facts

    ctx = context_of(request)
    base, other = first.run, second.run
    if shared:
        base, other = shared_views(base, other)
    mine = first.mine and second.mine
    common = dict(base=base, other=other, shared=shared, mine=mine, verdict=None, verdict_line=None, problem=None, layers=None,
                  differences=[], warnings=[], charts=[], links=[], now=now(),
                  share_days=ctx.settings.share_default_days, share_max=ctx.settings.share_max_days)
    if base.id == other.id:
        return page(request, "compare.html", 200, principal, **{**common, "same": True})
    links = (ctx.accounts.share_links_of(principal.account.id, "compare", [base.id, other.id])
             if mine and principal.account and not shared else [])
    if fact_differences(base, other):  # what differs, fact by fact, rather than the CLI's "pass --force"
        a, b = key_facts(base), key_facts(other)
        differences = [(name, _fact(a[name]), _fact(b[name])) for name in a
                       if a[name] is not None and b[name] is not None and a[name] != b[name]]
        return page(request, "compare.html", 409, principal, **{**common, "links": links, "differences": differences})
    try:
        result = compare_runs(base, other)  # the CLI's defaults: alpha 0.05, --min-effect 5 %
    except StackbenchError as error:
        return page(request, "compare.html", 409, principal, **{**common, "links": links,
                                                                  "problem": error.one_line()})
    warnings = [f"compared despite a difference in key facts: {d}" for d in result.fact_differences]
    warnings += [str(w) for row in result.rows for w in row.warnings]
    warnings += [str(w) for w in result.drift]
    return page(request, "compare.html", 200, principal, **{
        **common, "links": links, "charts": compare_charts(request, base, other, shared=bool(shared)),
        "chart_src": chart_src, "report_href": chart_src.removesuffix("chart.svg") + "report.html",
        "verdict": html_table(comparison_table(result)), "warnings": warnings,
        "layers": html_table(layers) if (layers := comparison_layer_table(result)) is not None else None,
        "verdict_line": f"{result.verdict.upper()}: {result.reason}"})


def _fact(value: object) -> str:
    """A key fact as the differences table shows it: lists as their items."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)
