"""Sync write latency and the SLOG shoot-out: the sync-latency runs the viewer may see, to check, and
`stackbench slog --run ID...` of the checked ones (its ranking table, and `chart --kind synclat` of the
sweeps among them)."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.model.results import Run
from stackbench.store.accounts import RunFilter, Viewer
from stackbench.web.access import Principal, RunView
from stackbench.web.charts import Chart, drawn_from
from stackbench.web.context import context_of
from stackbench.web.pages.listing import page_anchor, paged
from stackbench.web.pages.picked import picked_runs
from stackbench.web.pages.render import chart_image, page
from stackbench.web.sessions import current
from stackbench.web.views import html_table

router = APIRouter()


def _slog_runs(request: Request, principal: Principal, runs: list[str]) -> list[RunView]:
    """The SLOG page's candidates, each run once (a run checked in the list and kept from another page
    of it is one candidate), in the order given; every one through load."""
    views = picked_runs(request, principal, runs, "A SLOG page ranks")
    return list({v.run.id: v for v in views}.values())


@router.get("/slog")
def slog_page(request: Request, runs: list[str] = Query([]), page_number: int = 1, older_than: str = "",
              newer_than: str = "") -> Response:
    """The sync-latency runs the viewer may see, to check, and `stackbench slog --run ID...` of the
    checked ones: the ranking table, and `chart --kind synclat` of the sweeps among them."""
    from stackbench.analysis.slog import rank, stored_candidate
    from stackbench.report.slog import slog_table

    principal = current(request)
    views = _slog_runs(request, principal, runs)  # before anything else: an id not yours is the 404
    if principal.account is None:
        return RedirectResponse("/login", status_code=303)
    account = principal.account
    ids = [v.run.id for v in views]
    anchor = page_anchor(older_than, newer_than)
    viewer = Viewer(account.id, account.is_admin)
    ctx = context_of(request)
    values = paged(request, page_number,
                   lambda **at: ctx.accounts.visible_runs(viewer, RunFilter(sync_writes=True), whole=False, **at),
                   lambda n, **key: "/slog?" + urlencode({**({"runs": ",".join(ids)} if ids else {}),
                                                         "page_number": n, **key}),
                   anchor, key_of=lambda row: row[0].id)
    listed = {run.id for run, *_ in values["rows"]}
    values.update(picked=set(ids),
                  kept=[i for i in ids if i not in listed])  # checked on another page of the list: sent again
    if not views:
        return page(request, "slog.html", 200, principal, ranking=None, charts=[], left_out=[], advice=[],
                    **values)
    # the ranking's "best 1 s" reads every per-second sample (runs are loaded with those of their replicates)
    ranked = rank([stored_candidate(run) for run in ctx.store.with_samples([v.run for v in views])])
    _, left_out = _sweeps([v.run for v in views])
    query = urlencode({"runs": ",".join(ids)})
    return page(request, "slog.html", 200, principal, ranking=html_table(slog_table(ranked)),
                charts=_slog_charts(request, views), chart_src=f"/slog/chart.svg?{query}", left_out=left_out,
                advice=[str(w) for w in ranked.warnings], **values)


@router.get("/slog/chart.svg")
def slog_chart(request: Request, runs: list[str] = Query([]), n: int = 0) -> Response:
    return chart_image(_slog_charts(request, _slog_runs(request, current(request), runs)), n)


def _sweeps(runs: list[Run]) -> tuple[list[Run], list[str]]:
    """The runs the synclat chart draws (one line per sync-latency sweep), and why each other is left out:
    a `slog` run measures 4 KiB at two queue depths, not a sweep of write sizes."""
    from stackbench.report.charts.synclat import sweep_rows

    drawn, left_out = [], []
    for run in runs:
        try:
            if sweep_rows(run):
                drawn.append(run)
            else:
                left_out.append(f"{run.label or run.id[:12]}: no cell with a time per write")
        except StackbenchError as error:
            left_out.append(error.what)
    return drawn, left_out


def _slog_charts(request: Request, views: list[RunView]) -> list[Chart]:
    runs = [v.run for v in views]

    def draw() -> list:
        from stackbench.report.charts import synclat_figures

        drawn, _ = _sweeps(runs)
        return synclat_figures(drawn) if drawn else []

    return context_of(request).charts.charts(("slog", tuple(drawn_from(r) for r in runs)), draw)
