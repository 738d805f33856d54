"""The FastAPI application: `create_app(store)` builds it from its parts.

The app's state is one `ServerContext` (web/context.py: the store, the settings, the server's key, the
limiters, the caches and the templates); its routes are the page groups' routers (web/pages/, one module
each, listed in `GROUPS`) and the API's (web/api.py). Every route that names an object takes it through
`access.load` (one authorization check) via a parameter named in `access.OBJECT_PARAMS`; every
state-changing route depends on `sessions.csrf_checked`. Before any route, `origin.RequestOrigin` answers
only the server's own host names and forms from its own pages.
"""

from __future__ import annotations

from functools import partial
from importlib import resources

from fastapi import FastAPI

from stackbench.store.accounts import Accounts
from stackbench.store.repository import Store
from stackbench.web import api
from stackbench.web.chart_warmer import ChartWarmer
from stackbench.web.context import ServerContext
from stackbench.web.origin import RequestOrigin
from stackbench.web.pages import (
    accounts, compare, errors, home, layers, run, runs_list, scans_audits, shares, slog, tunes,
)
from stackbench.web.pages.render import refusal_page
from stackbench.web.settings import Settings

# The page groups, each a module with a `router`: a new group is a module of web/pages/ and its place here.
# A request tries the groups in this order (no two routes match one path, so the order changes no answer),
# each group passed costing a few microseconds: the most requested first, a run's page and its chart images.
GROUPS = (run, runs_list, compare, shares, layers, slog, scans_audits, tunes, home, accounts)


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The server over `store`. Generates the server's random key on the first start."""
    people = Accounts(store)
    static = resources.files("stackbench.web").joinpath("static")
    stylesheet = static.joinpath("style.css").read_text(encoding="utf-8")
    script = static.joinpath("copy.js").read_text(encoding="utf-8")
    ctx = ServerContext(store=store, accounts=people, settings=settings or Settings(),
                        hash_key=people.server_secret(), stylesheet=stylesheet,
                        script=script)
    people.end_sessions_older_than(ctx.settings.idle_timeout, ctx.settings.absolute_timeout)  # refused anyway
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.server = ctx
    # before any route: the Host it is known by, and the Origin of every form (web/origin.py)
    app.add_middleware(RequestOrigin, allowed_hosts=ctx.settings.allowed_hosts,
                       page=partial(refusal_page, ctx.templates))
    errors.install(app)
    for group in GROUPS:
        app.include_router(group.router)
    api.install(app)  # POST /api/runs and GET /metrics, with API tokens (web/api.py)
    if ctx.settings.warm_runs:
        ctx.warmer = ChartWarmer(store, ctx.charts, ctx.settings.warm_runs, ctx.settings.warm_interval_s).start()
    return app
