"""`stackbench layers RUN...` as a page: the layers table and chart of the checked runs, bottom first, and
the stack chart of each run that recorded its layers' activity."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.store.accounts import RunFilter, Viewer
from stackbench.web.access import Principal, RunView
from stackbench.web.charts import Chart, drawn_from
from stackbench.web.context import context_of
from stackbench.web.pages.picked import picked_runs
from stackbench.web.pages.render import chart_image, page
from stackbench.web.sessions import current
from stackbench.web.views import html_table

router = APIRouter()
PICKER_RUNS = 50  # the newest runs the layers page offers when it is opened without any


def _layer_runs(request: Request, principal: Principal, runs: list[str]) -> list[RunView]:
    return picked_runs(request, principal, runs, "A layers page shows")


@router.get("/layers")
def layers_page(request: Request, runs: list[str] = Query([]), names: str = "", metric: str = "iops") -> Response:
    """`stackbench layers RUN...` as a page: the layers table and chart of the runs, bottom first."""
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.layer_table import layers_runs_table
    from stackbench.report.layers import layers_table

    principal = current(request)
    views = _layer_runs(request, principal, runs)  # before anything else: an id not yours is the 404
    if principal.account is None:
        return RedirectResponse("/login", status_code=303)
    ids = ",".join(v.run.id for v in views)
    values = dict(ids=ids, names=names, metric=metric, runs=[v.run for v in views],
                  moves=_moves([v.run.id for v in views], names, metric))
    if not views:  # opened from the menu: pick the runs here rather than a refusal
        account = principal.account
        rows, _ = context_of(request).accounts.visible_runs(Viewer(account.id, account.is_admin), RunFilter(),
                                                             whole=False, offset=0, limit=PICKER_RUNS)
        return page(request, "layers.html", 200, principal, problem=None, layers=None, charts=[],
                    candidates=[row[0] for row in rows], **values)
    try:
        gaps = layer_gaps([v.run for v in views], _names(names), metric)
    except StackbenchError as error:
        return page(request, "layers.html", 409 if views else 200, principal, problem=error.one_line(),
                    layers=None, charts=[], **values)
    query = urlencode({"runs": ids, "names": names, "metric": metric})
    activity = layers_runs_table([v.run for v in views], gaps.names)
    return page(request, "layers.html", 200, principal, problem=None, layers=html_table(layers_table(gaps)),
                activity=html_table(activity) if activity is not None else None, charts=_layers_charts(request, views, names, metric), chart_src=f"/layers/chart.svg?{query}",
                **values)


@router.get("/layers/chart.svg")
def layers_chart(request: Request, runs: list[str] = Query([]), names: str = "", metric: str = "iops",
                 n: int = 0) -> Response:
    principal = current(request)
    return chart_image(_layers_charts(request, _layer_runs(request, principal, runs), names, metric), n)


def _moves(ids: list[str], names: str, metric: str) -> list[dict[str, str | None]]:
    """Each run's links that move it one place down or up the stack (towards the bottom layer, first, or
    away from it), the names following their runs: reordering without JavaScript or typing ids."""
    given = _names(names) or []
    moves = []
    for index in range(len(ids)):
        links: dict[str, str | None] = {"down": None, "up": None}
        for direction, other in (("down", index - 1), ("up", index + 1)):
            if 0 <= other < len(ids):
                order = list(range(len(ids)))
                order[index], order[other] = order[other], order[index]
                query = {"runs": ",".join(ids[i] for i in order), "metric": metric}
                if len(given) == len(ids):
                    query["names"] = ",".join(given[i] for i in order)
                elif names:
                    query["names"] = names
                links[direction] = "/layers?" + urlencode(query)
        moves.append(links)
    return moves


def _names(names: str) -> list[str] | None:
    return [n.strip() for n in names.split(",")] if names.strip() else None


def _layers_charts(request: Request, views: list[RunView], names: str, metric: str) -> list[Chart]:
    runs = [v.run for v in views]

    def draw() -> list:
        from stackbench.analysis.layers import layer_gaps
        from stackbench.report.charts import layers_figures, stack_figures

        try:
            gaps = layer_gaps(runs, _names(names), metric)  # which also refuses a metric it does not know
        except StackbenchError:
            return []
        # then what the devices under each run's target did, for the runs that recorded it, bottom first
        stack_metric = "iops" if metric == "iops" else "mb_s"  # layers' "bw" is the charts' "mb_s"
        return layers_figures(gaps, runs) + [figure for run in runs for figure in stack_figures(run, stack_metric)]

    return context_of(request).charts.charts(("layers", tuple(drawn_from(r) for r in runs), names, metric), draw)
