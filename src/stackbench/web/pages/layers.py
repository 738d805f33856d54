"""`stackbench layers RUN...` as a page: the layers table and chart of the checked runs, bottom first."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.web.access import Principal, RunView
from stackbench.web.charts import Chart, drawn_from
from stackbench.web.context import context_of
from stackbench.web.pages.picked import picked_runs
from stackbench.web.pages.render import chart_image, page
from stackbench.web.sessions import current
from stackbench.web.views import html_table

router = APIRouter()


def _layer_runs(request: Request, principal: Principal, runs: list[str]) -> list[RunView]:
    return picked_runs(request, principal, runs, "A layers page shows")


@router.get("/layers")
def layers_page(request: Request, runs: list[str] = Query([]), names: str = "", metric: str = "iops") -> Response:
    """`stackbench layers RUN...` as a page: the layers table and chart of the runs, bottom first."""
    from stackbench.analysis.layers import layer_gaps
    from stackbench.report.layers import layers_table

    principal = current(request)
    views = _layer_runs(request, principal, runs)  # before anything else: an id not yours is the 404
    if principal.account is None:
        return RedirectResponse("/login", status_code=303)
    ids = ",".join(v.run.id for v in views)
    values = dict(ids=ids, names=names, metric=metric, runs=[v.run for v in views])
    try:
        gaps = layer_gaps([v.run for v in views], _names(names), metric)
    except StackbenchError as error:
        return page(request, "layers.html", 409 if views else 200, principal, problem=error.one_line(),
                    layers=None, charts=[], **values)
    query = urlencode({"runs": ids, "names": names, "metric": metric})
    return page(request, "layers.html", 200, principal, problem=None, layers=html_table(layers_table(gaps)),
                charts=_layers_charts(request, views, names, metric), chart_src=f"/layers/chart.svg?{query}",
                **values)


@router.get("/layers/chart.svg")
def layers_chart(request: Request, runs: list[str] = Query([]), names: str = "", metric: str = "iops",
                 n: int = 0) -> Response:
    principal = current(request)
    return chart_image(_layers_charts(request, _layer_runs(request, principal, runs), names, metric), n)


def _names(names: str) -> list[str] | None:
    return [n.strip() for n in names.split(",")] if names.strip() else None


def _layers_charts(request: Request, views: list[RunView], names: str, metric: str) -> list[Chart]:
    runs = [v.run for v in views]

    def draw() -> list:
        from stackbench.analysis.layers import layer_gaps
        from stackbench.report.charts import layers_figures

        try:
            return layers_figures(layer_gaps(runs, _names(names), metric), runs)
        except StackbenchError:
            return []

    return context_of(request).charts.charts(("layers", tuple(drawn_from(r) for r in runs), names, metric), draw)
