"""The FastAPI application: `create_app(store)` builds it with its routes.

Every route that names an object takes it through `access.load` (one authorization check) via a
parameter named in `access.OBJECT_PARAMS`; every state-changing route depends on `sessions.csrf_checked`.
Pages are rendered on the server from Jinja2 templates with autoescaping on; there is no JavaScript.
"""

from __future__ import annotations

from datetime import date, timedelta
from importlib import resources
from typing import Any, Callable
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Form, Query, Request
from fastapi.exceptions import RequestValidationError
from jinja2 import Environment, PackageLoader
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.model.results import Run
from stackbench.store.accounts import Accounts, RunFilter, ShareLink, Viewer, now
from stackbench.store.repository import Store
from stackbench.web.access import RUN_ID, ItemView, NotFound, Principal, RunView, TooManyMisses, load, load_runs
from stackbench.web.api import install as install_api
from stackbench.web.charts import Chart
from stackbench.web.context import ServerContext, client_address
from stackbench.web.origin import RequestOrigin
from stackbench.web.passwords import needs_rehash, verify_password
from stackbench.web.sessions import (
    CsrfRejected, csrf_checked, current, end_session, login_form as login_form_token, login_token_ok, set_login_cookie,
    start_session,
)
from stackbench.web.settings import Settings
from stackbench.base.usertext import refusal, shown_in_template
from stackbench.web.views import fact_rows, html_table, text_lines

ROBOTS = "User-agent: *\nDisallow: /s/\nDisallow: /\n"  # share links above all; nothing here is for indexing
NOTE_MAX = 500
LAST_PAGE_NUMBER = 10**9  # of a list's pages: beyond, (number - 1) x a page can pass a 64-bit offset
MAX_PICKED = 12  # runs on one layers or SLOG page: a stack is a handful of layers, a shoot-out of candidates


class NotAPageLink(Exception):
    """A runs list's `older_than` / `newer_than` that is not one run's id, or both at once (see `_paged`)."""


class TooManyRuns(Exception):
    """More runs than MAX_PICKED on a layers or SLOG page: refused before any is loaded (says nothing about
    them). `what` names the page's runs in the message ("A layers page shows ...")."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def _drawn_from(run: Run) -> tuple:
    """What a run's charts depend on that can change, for the charts cache's key: a relabelled run, or one
    still measuring (cells added, status changed), is drawn again."""
    return run.id, run.label, run.status, len(run.cells)


def _is_synclat(run: Run) -> bool:
    """A `stackbench synclat` run (its plan is named so): its page adds the diskinfo -wS style table."""
    return run.plan_name == "synclat"


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The server over `store`. Generates the server's random key on the first start."""
    accounts = Accounts(store)
    ctx = ServerContext(store=store, accounts=accounts, settings=settings or Settings(),
                        hash_key=accounts.server_secret())
    accounts.end_sessions_older_than(ctx.settings.idle_timeout, ctx.settings.absolute_timeout)  # refused anyway
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.server = ctx
    install_api(app)  # POST /api/runs and GET /metrics, with API tokens (web/api.py)
    # auto_reload off: the templates are files of the installed package, compiled once per process; with
    # it on, every page checked the modification time of each template it uses (3 stat calls for the runs list)
    # finalize: every text a page prints with its invisible and control characters escaped (usertext.py)
    env = Environment(loader=PackageLoader("stackbench.web", "templates"), autoescape=True, auto_reload=False,
                      finalize=shown_in_template)

    def refusal_page(status: int, title: str, message: str) -> str:
        return env.get_template("error.html").render(account=None, csrf=None, title=title, message=message)

    # before any route: the Host it is known by, and the Origin of every form (web/origin.py)
    app.add_middleware(RequestOrigin, allowed_hosts=ctx.settings.allowed_hosts, page=refusal_page)
    stylesheet = resources.files("stackbench.web").joinpath("static/style.css").read_text(encoding="utf-8")

    def page(request: Request, template: str, status: int = 200, principal: Principal | None = None,
             **values: Any) -> HTMLResponse:
        account = principal.account if principal else None
        csrf = principal.session.csrf_secret if principal and principal.session else None
        html = env.get_template(template).render(account=account, csrf=csrf, **values)
        return HTMLResponse(html, status_code=status)

    # -- errors: one 404 for everything that is absent or not yours ------------------------------

    @app.exception_handler(NotFound)
    def not_found(request: Request, _error: NotFound) -> HTMLResponse:
        return page(request, "error.html", 404, title="Not found", message="There is nothing here.")

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> Response:
        if error.status_code == 404:
            return not_found(request, NotFound())
        return page(request, "error.html", error.status_code, title="Error", message=str(error.detail))

    @app.exception_handler(RequestValidationError)
    def bad_request(request: Request, _error: RequestValidationError) -> HTMLResponse:
        return page(request, "error.html", 400, title="Bad request", message="The request was not understood.")

    @app.exception_handler(TooManyMisses)
    def too_many(request: Request, error: TooManyMisses) -> HTMLResponse:
        response = page(request, "error.html", 429, title="Too many requests",
                        message="Too many requests for things that do not exist. Try again later.")
        response.headers["Retry-After"] = str(error.retry_after)
        return response

    @app.exception_handler(TooManyRuns)
    def too_many_runs(request: Request, error: TooManyRuns) -> HTMLResponse:
        return page(request, "error.html", 400, current(request), title="Too many runs",
                    message=f"{error.what} at most {MAX_PICKED} runs. Check fewer runs.")

    @app.exception_handler(NotAPageLink)
    def not_a_page_link(request: Request, _error: NotAPageLink) -> HTMLResponse:
        return page(request, "error.html", 400, current(request), title="Bad request",
                    message="That is not a page link of this list: open the list from its first page.")

    @app.exception_handler(CsrfRejected)
    def csrf_rejected(request: Request, _error: CsrfRejected) -> HTMLResponse:
        return page(request, "error.html", 403, title="Forbidden",
                    message="The form was stale or not ours. Go back, reload the page and try again.")

    # -- fixed files -----------------------------------------------------------------------------

    @app.get("/static/style.css")
    def style() -> Response:
        return Response(stylesheet, media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    @app.get("/robots.txt")
    def robots() -> PlainTextResponse:
        return PlainTextResponse(ROBOTS)

    # -- logging in and out ----------------------------------------------------------------------

    @app.get("/")
    def home() -> RedirectResponse:
        return RedirectResponse("/runs", status_code=303)

    @app.get("/login")
    def login_form(request: Request) -> Response:
        principal = current(request)
        if principal.account is not None:
            return RedirectResponse("/runs", status_code=303)
        return _login_page(request, None, 200)

    def _login_page(request: Request, message: str | None, status: int, name: str = "") -> Response:
        token, cookie = login_form_token(request)
        response = page(request, "login.html", status, login_csrf=token, message=message, name=name)
        if cookie is not None:
            set_login_cookie(request, response, cookie)
        return response

    @app.post("/login")
    def login(request: Request, name: str = Form(""), password: str = Form(""),
              login_csrf: str = Form("")) -> Response:
        if not login_token_ok(request, login_csrf):
            return _login_page(request, "The form was stale. Please try again.", 403, name)
        address = client_address(request)
        account_key = "account:" + name[:64]
        wait = max(ctx.login_by_account.retry_after(account_key) or 0,
                   ctx.login_by_address.retry_after(address) or 0)
        if wait:
            response = _login_page(request, f"Too many failed logins. Try again in {wait} s.", 429, name)
            response.headers["Retry-After"] = str(wait)
            return response
        found = ctx.accounts.credentials(name) if 0 < len(name) <= 64 else None
        if not verify_password(found[1] if found else None, password):
            ctx.login_by_account.hit(account_key)
            ctx.login_by_address.hit(address)
            return _login_page(request, "Wrong name or password.", 401, name)
        account, stored_hash = found  # type: ignore[misc]
        if needs_rehash(stored_hash):
            from stackbench.web.passwords import hash_password

            ctx.accounts.set_password_hash(account.id, hash_password(password))
        ctx.login_by_account.reset(account_key)
        response = RedirectResponse("/runs", status_code=303)
        start_session(request, response, account, current(request))
        return response

    @app.post("/logout")
    def logout(request: Request, principal: Principal = Depends(csrf_checked)) -> Response:
        response = RedirectResponse("/login", status_code=303)
        end_session(request, response, principal)
        return response

    # -- runs ------------------------------------------------------------------------------------

    def logged_in(request: Request) -> Principal | Response:
        principal = current(request)
        return principal if principal.account is not None else RedirectResponse("/login", status_code=303)

    @app.get("/runs")
    def runs_page(request: Request, label: str = "", target: str = "", plan: str = "", since: str = "",
                  until: str = "", page_number: int = 1, older_than: str = "", newer_than: str = "") -> Response:
        principal = logged_in(request)
        if isinstance(principal, Response):
            return principal
        account = principal.account
        assert account is not None
        try:
            where = RunFilter(label=label or None, target=target or None, plan=plan or None,
                              since=date.fromisoformat(since) if since else None,
                              until=date.fromisoformat(until) if until else None)
        except ValueError:
            return page(request, "error.html", 400, principal, title="Bad request",
                        message="Dates are written YYYY-MM-DD.")
        anchor = _anchor(older_than, newer_than)
        filters = {k: v for k, v in (("label", label), ("target", target), ("plan", plan), ("since", since),
                                     ("until", until)) if v}
        viewer = Viewer(account.id, account.is_admin)
        listing = _paged(page_number, lambda **at: ctx.accounts.visible_runs(viewer, where, whole=False, **at),
                         lambda n, **key: "/runs?" + urlencode({**filters, "page_number": n, **key}),
                         anchor, key_of=lambda row: row[0].id)
        return page(request, "runs.html", 200, principal, filters=filters, **listing)

    def _paged(page_number: int, fetch: Callable[..., tuple[list, int]], link: Callable[..., str],
               anchor: dict[str, str] | None = None, key_of: Callable[[Any], str] | None = None) -> dict[str, Any]:
        """One page of a list (runs, SLOG candidates, scans, audits), `runs_per_page` long: `fetch(offset=,
        limit=)` answers its rows and the total; the template values of the page and its pager.

        A list whose rows have a key (`key_of`: the runs lists) links its Older and Newer pages by the
        last and first run shown (`older_than=ID`, `newer_than=ID`: `anchor`), so that paging deep
        reads from that run on rather than skipping every run before it; `page_number` then only numbers
        the page. A page number without an anchor (typed, or a bookmark) still skips to that page, and so
        does an anchor that no longer finds a page (its run deleted or hidden since)."""
        size = ctx.settings.runs_per_page
        # A number past any list is past its end, not an offset the database cannot hold (500 before)
        number = min(max(1, page_number), LAST_PAGE_NUMBER)
        rows, total = fetch(offset=0, limit=size, **anchor) if anchor else ([], 0)
        if anchor and "newer_than" in anchor and len(rows) < size:
            rows, number = [], 1  # fewer newer runs than a page: the top of the list, shown whole
        if not rows:
            rows, total = fetch(offset=(number - 1) * size, limit=size)
        pages = (total + size - 1) // size
        previous = link(min(number - 1, pages)) if number > 1 and pages else None  # past the end: to the last
        following = link(number + 1) if number < pages else None
        if key_of is not None and rows:
            previous = previous if number <= 2 else link(number - 1, newer_than=key_of(rows[0]))
            following = following and link(number + 1, older_than=key_of(rows[-1]))
        return dict(rows=rows, total=total, page_number=number, pages=pages, previous=previous, next=following)

    def _anchor(older_than: str, newer_than: str) -> dict[str, str] | None:
        """The runs list's page anchor from its query (see `_paged`); a value that is not one run's id, or
        both at once, is refused (the 400 of NotAPageLink) before any query."""
        given = {name: value for name, value in (("older_than", older_than), ("newer_than", newer_than)) if value}
        if len(given) > 1 or not all(RUN_ID.fullmatch(value) for value in given.values()):
            raise NotAPageLink()
        return given or None

    @app.get("/runs/{run_id}")
    def run_page(request: Request, run_id: str) -> Response:
        principal = current(request)
        view: RunView = load(request, principal, "run", run_id)
        return _run_response(request, principal, view, shared=None, chart_src=f"/runs/{view.run.id}/chart.svg")

    @app.get("/runs/{run_id}/chart.svg")
    def run_chart(request: Request, run_id: str, n: int = 0) -> Response:
        view: RunView = load(request, current(request), "run", run_id)
        return _svg(_run_charts(view.run, shared=False), n)

    def _run_charts(run: Run, shared: bool) -> list[Chart]:
        """The run's charts as `stackbench report` draws them (`shared`: `run` is the redacted copy)."""
        def draw() -> list:
            from stackbench.report.charts import representative_cell, run_figures
            from stackbench.store.latency_bins import bins_where_stored

            whole = ctx.store.with_samples([run])[0]  # the timeline draws per-second samples (see access.load)
            figures = run_figures(whole, bins=bins_where_stored(ctx.store, whole, [representative_cell(whole)]))
            if _is_synclat(whole):
                from stackbench.report.charts import synclat_figures

                try:
                    figures += synclat_figures([whole])
                except StackbenchError:
                    pass  # no finished write size to draw: the table says what there is
            return figures

        return ctx.charts.charts(("run", _drawn_from(run), shared), draw)

    def _run_response(request: Request, principal: Principal, view: RunView, shared: ShareLink | None,
                      chart_src: str) -> Response:
        from stackbench.analysis.goals import evaluate
        from stackbench.report.run import run_display

        run = _shared_views(view.run)[0] if shared else view.run
        tables = run_display(run, evaluate([goal for _, goal in ctx.store.list_goals()], run))
        synclat = None
        if _is_synclat(run):
            from stackbench.report.synclat import synclat_rows, synclat_table

            synclat = html_table(synclat_table(run.id, synclat_rows(run)))
        links = (ctx.accounts.share_links_of(principal.account.id, "run", [run.id])
                 if view.mine and principal.account else [])
        return page(request, "run.html", 200, principal, view=view, run=run, shared=shared,
                    charts=_run_charts(run, shared=bool(shared)), chart_src=chart_src, synclat=synclat,
                    report_href=chart_src.removesuffix("chart.svg") + "report.html",
                    tables=[html_table(t) for t in tables], facts=fact_rows(run.facts),
                    warnings=[str(w) for w in run.warnings], links=links, now=now(),
                    share_days=ctx.settings.share_default_days, share_max=ctx.settings.share_max_days)

    @app.post("/runs/{run_id}/visibility")
    def set_visibility(request: Request, run_id: str, visibility: str = Form(...),
                       principal: Principal = Depends(csrf_checked)) -> Response:
        view: RunView = load(request, principal, "run", run_id)
        return _change_visibility(request, principal, "run", view.run.id, view.mine, visibility)

    @app.post("/runs/{run_id}/shares")
    def share_run(request: Request, run_id: str, days: int = Form(7), note: str = Form(""),
                  principal: Principal = Depends(csrf_checked)) -> Response:
        view: RunView = load(request, principal, "run", run_id)
        return _create_link(request, principal, "run", [view], days, note)

    # -- compare ---------------------------------------------------------------------------------

    @app.get("/compare")
    def compare_pick(request: Request, a: str = "", b: str = "") -> Response:
        principal = current(request)
        if principal.account is not None and not (a and b):  # the list's form with one choice missing
            return page(request, "error.html", 400, principal, title="Pick two runs",
                        message="Choose run A and run B in the runs list, then compare.")
        first, second = load_runs(request, principal, [a, b])
        return RedirectResponse(f"/compare/{first.run.id}/{second.run.id}", status_code=303)

    @app.get("/compare/{a}/{b}")
    def compare_page(request: Request, a: str, b: str) -> Response:
        principal = current(request)
        first, second = load_runs(request, principal, [a, b])
        return _compare_response(request, principal, first, second, shared=None,
                                 chart_src=f"/compare/{first.run.id}/{second.run.id}/chart.svg")

    @app.get("/runs/{run_id}/report.html")
    def run_report_download(request: Request, run_id: str) -> Response:
        view: RunView = load(request, current(request), "run", run_id)
        return _report_download([view.run], None)

    @app.get("/compare/{a}/{b}/report.html")
    def compare_report_download(request: Request, a: str, b: str) -> Response:
        first, second = load_runs(request, current(request), [a, b])
        return _report_download([], [first.run, second.run])

    @app.get("/compare/{a}/{b}/chart.svg")
    def compare_chart(request: Request, a: str, b: str, n: int = 0) -> Response:
        first, second = load_runs(request, current(request), [a, b])
        return _svg(_compare_charts(first.run, second.run, shared=False), n)

    def _compare_charts(base: Run, other: Run, shared: bool) -> list[Chart]:
        """The comparison's chart (none when the runs cannot be compared: the page says why)."""
        def draw() -> list:
            from stackbench.analysis.compare import compare_runs
            from stackbench.report.charts import compare_figures

            try:
                return compare_figures(compare_runs(base, other))
            except StackbenchError:
                return []

        return ctx.charts.charts(("compare", _drawn_from(base), _drawn_from(other), shared), draw)

    def _compare_response(request: Request, principal: Principal, first: RunView, second: RunView,
                          shared: ShareLink | None, chart_src: str) -> Response:
        from stackbench.analysis.compare import compare_runs
        from stackbench.report.compare import comparison_table

        base, other = first.run, second.run
        if shared:
            base, other = _shared_views(base, other)
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
        return page(request, "compare.html", 200, principal, base=base, other=other,
                    charts=_compare_charts(base, other, shared=bool(shared)), chart_src=chart_src,
                    report_href=chart_src.removesuffix("chart.svg") + "report.html",
                    verdict=html_table(comparison_table(result)), problem=None, warnings=warnings, shared=shared,
                    mine=mine, links=links, now=now(), share_days=ctx.settings.share_default_days,
                    share_max=ctx.settings.share_max_days)

    @app.post("/compare/{a}/{b}/shares")
    def share_compare(request: Request, a: str, b: str, days: int = Form(7), note: str = Form(""),
                      principal: Principal = Depends(csrf_checked)) -> Response:
        first, second = load_runs(request, principal, [a, b])
        return _create_link(request, principal, "compare", [first, second], days, note)

    # -- layers ----------------------------------------------------------------------------------

    def _picked_runs(request: Request, principal: Principal, runs: list[str], what: str) -> list[RunView]:
        """The runs of a layers or SLOG page, in order: `runs` values, each one id or several comma-separated
        (the runs list's checkboxes send one value each, the page's own form one list), each through load."""
        ids = [i.strip() for value in runs for i in value.split(",") if i.strip()]
        if len(ids) > MAX_PICKED:
            raise TooManyRuns(what)
        return load_runs(request, principal, ids) if ids else []

    def _layer_runs(request: Request, principal: Principal, runs: list[str]) -> list[RunView]:
        return _picked_runs(request, principal, runs, "A layers page shows")

    @app.get("/layers")
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
                    charts=_layers_charts(views, names, metric), chart_src=f"/layers/chart.svg?{query}", **values)

    @app.get("/layers/chart.svg")
    def layers_chart(request: Request, runs: list[str] = Query([]), names: str = "", metric: str = "iops",
                     n: int = 0) -> Response:
        principal = current(request)
        return _svg(_layers_charts(_layer_runs(request, principal, runs), names, metric), n)

    def _names(names: str) -> list[str] | None:
        return [n.strip() for n in names.split(",")] if names.strip() else None

    def _layers_charts(views: list[RunView], names: str, metric: str) -> list[Chart]:
        runs = [v.run for v in views]

        def draw() -> list:
            from stackbench.analysis.layers import layer_gaps
            from stackbench.report.charts import layers_figures

            try:
                return layers_figures(layer_gaps(runs, _names(names), metric), runs)
            except StackbenchError:
                return []

        return ctx.charts.charts(("layers", tuple(_drawn_from(r) for r in runs), names, metric), draw)

    # -- sync latency / SLOG ----------------------------------------------------------------------

    def _slog_runs(request: Request, principal: Principal, runs: list[str]) -> list[RunView]:
        """The SLOG page's candidates, each run once (a run checked in the list and kept from another page
        of it is one candidate), in the order given; every one through load."""
        views = _picked_runs(request, principal, runs, "A SLOG page ranks")
        return list({v.run.id: v for v in views}.values())

    @app.get("/slog")
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
        anchor = _anchor(older_than, newer_than)
        viewer = Viewer(account.id, account.is_admin)
        values = _paged(page_number,
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
                    charts=_slog_charts(views), chart_src=f"/slog/chart.svg?{query}", left_out=left_out,
                    advice=[str(w) for w in ranked.warnings], **values)

    @app.get("/slog/chart.svg")
    def slog_chart(request: Request, runs: list[str] = Query([]), n: int = 0) -> Response:
        return _svg(_slog_charts(_slog_runs(request, current(request), runs)), n)

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

    def _slog_charts(views: list[RunView]) -> list[Chart]:
        runs = [v.run for v in views]

        def draw() -> list:
            from stackbench.report.charts import synclat_figures

            drawn, _ = _sweeps(runs)
            return synclat_figures(drawn) if drawn else []

        return ctx.charts.charts(("slog", tuple(_drawn_from(r) for r in runs)), draw)

    # -- smallblocks scans and audits -------------------------------------------------------------

    def _items_page(request: Request, kind: str, page_number: int) -> Response:
        principal = logged_in(request)
        if isinstance(principal, Response):
            return principal
        account = principal.account
        assert account is not None
        viewer = Viewer(account.id, account.is_admin)
        listing = _paged(page_number, lambda **at: ctx.accounts.visible_items(viewer, kind, **at),
                         lambda n: f"/{kind}s?page_number={n}")
        return page(request, f"{kind}s.html", 200, principal, **listing)

    @app.get("/scans")
    def scans_page(request: Request, page_number: int = 1) -> Response:
        return _items_page(request, "scan", page_number)

    @app.get("/audits")
    def audits_page(request: Request, page_number: int = 1) -> Response:
        return _items_page(request, "audit", page_number)

    def _damaged(request: Request, principal: Principal, view: ItemView) -> Response:
        return page(request, "error.html", 409, principal, title="Damaged",
                    message=f"The stored {view.kind} {view.item.id[:12]} is damaged and cannot be shown. Delete it "
                    f"with `stackbench rm {view.item.id[:12]} --yes`.")

    @app.get("/scans/{scan_id}")
    def scan_page(request: Request, scan_id: str) -> Response:
        """A stored scan as `stackbench show SCAN` prints it: the size histogram, the usage estimates and
        the recommendation, and the special vdev chart (`chart SCAN --kind special`)."""
        from stackbench.report.smallblocks import histogram_table, recommendation_text
        from stackbench.scan.document import scan_from_json

        principal = current(request)
        view: ItemView = load(request, principal, "scan", scan_id)
        try:
            result, recommendation, estimates = scan_from_json(view.item.document)
        except ValueError:
            return _damaged(request, principal, view)
        return page(request, "scan.html", 200, principal, view=view, scan=view.item,
                    histogram=html_table(histogram_table(result)),
                    lines=text_lines(recommendation_text(result, recommendation, estimates)),
                    charts=_scan_charts(view), chart_src=f"/scans/{view.item.id}/chart.svg")

    @app.get("/scans/{scan_id}/chart.svg")
    def scan_chart(request: Request, scan_id: str, n: int = 0) -> Response:
        return _svg(_scan_charts(load(request, current(request), "scan", scan_id)), n)

    def _scan_charts(view: ItemView) -> list[Chart]:
        def draw() -> list:
            from stackbench.report.charts import scan_figures
            from stackbench.scan.document import scan_from_json

            try:
                result, recommendation, _ = scan_from_json(view.item.document)
            except ValueError:
                return []
            return scan_figures(result.histogram, recommendation, source=", ".join(view.item.paths))

        return ctx.charts.charts(("scan", view.item.id, view.item.label), draw)

    @app.get("/audits/{audit_id}")
    def audit_page(request: Request, audit_id: str) -> Response:
        """A stored audit as `report --audit` shows it: the findings (new or still, when compared) and what
        the previous audit of the same machine had that is gone (fixed, or not rechecked)."""
        from stackbench.report.audit import stored_audit_tables

        principal = current(request)
        view: ItemView = load(request, principal, "audit", audit_id)
        audit = view.item
        try:
            tables, notes = stored_audit_tables(audit.document)
        except (ValueError, KeyError, TypeError):
            return _damaged(request, principal, view)
        assert principal.account is not None
        previous = (audit.previous_id if audit.previous_id and ctx.accounts.access(
            Viewer(principal.account.id, principal.account.is_admin), "audit", audit.previous_id) else None)
        return page(request, "audit.html", 200, principal, view=view, audit=audit, notes=notes,
                    tables=[html_table(t) for t in tables], previous=previous)

    @app.post("/scans/{scan_id}/visibility")
    def set_scan_visibility(request: Request, scan_id: str, visibility: str = Form(...),
                            principal: Principal = Depends(csrf_checked)) -> Response:
        return _set_item_visibility(request, principal, load(request, principal, "scan", scan_id), visibility)

    @app.post("/audits/{audit_id}/visibility")
    def set_audit_visibility(request: Request, audit_id: str, visibility: str = Form(...),
                             principal: Principal = Depends(csrf_checked)) -> Response:
        return _set_item_visibility(request, principal, load(request, principal, "audit", audit_id), visibility)

    def _set_item_visibility(request: Request, principal: Principal, view: ItemView, visibility: str) -> Response:
        return _change_visibility(request, principal, view.kind, view.item.id, view.mine, visibility)

    def _change_visibility(request: Request, principal: Principal, kind: str, object_id: str, mine: bool,
                           visibility: str) -> Response:
        """The owner's private/team form of a run, scan or audit (already loaded through `load`)."""
        if not mine:
            return page(request, "error.html", 403, principal, title="Forbidden",
                        message=f"Only the {kind}'s owner can change who sees it.")
        if visibility not in ("private", "team"):
            return page(request, "error.html", 400, principal, title="Bad request",
                        message="Visibility is private or team.")
        ctx.accounts.set_visibility(object_id, visibility, kind=kind)
        return RedirectResponse(f"/{kind}s/{object_id}", status_code=303)

    # -- share links -----------------------------------------------------------------------------

    def _create_link(request: Request, principal: Principal, kind: str, views: list[RunView], days: int,
                     note: str) -> Response:
        import secrets

        if not all(view.mine for view in views):
            return page(request, "error.html", 403, principal, title="Forbidden",
                        message="Only the owner of every run shown can share it.")
        if not 1 <= days <= ctx.settings.share_max_days or len(note) > NOTE_MAX:
            return page(request, "error.html", 400, principal, title="Bad request",
                        message=f"A link lasts 1 to {ctx.settings.share_max_days} days; a note has at most "
                        f"{NOTE_MAX} characters.")
        reason = refusal("A note", note)
        if reason is not None:
            return page(request, "error.html", 400, principal, title="Bad request", message=f"{reason}. Type it without them.")
        assert principal.account is not None
        token = secrets.token_urlsafe(32)
        link = ctx.accounts.add_share_link(
            token_hash=ctx.digest(token), kind=kind, run_ids=[v.run.id for v in views], owner=principal.account.id,
            note=note, expires_at=now() + timedelta(days=days),
        )
        back = f"/runs/{views[0].run.id}" if kind == "run" else f"/compare/{views[0].run.id}/{views[1].run.id}"
        url = str(request.base_url).rstrip("/") + f"/s/{token}"
        return page(request, "share_created.html", 201, principal, link=link, url=url, back=back)

    @app.post("/shares/{link_id}/revoke")
    def revoke(request: Request, link_id: str, principal: Principal = Depends(csrf_checked)) -> Response:
        link: ShareLink = load(request, principal, "share", link_id)
        ctx.accounts.revoke_share_link(link.id)
        back = f"/runs/{link.object_id}" if link.kind == "run" else f"/compare/{link.object_id}/{link.other_id}"
        return RedirectResponse(back, status_code=303)

    @app.get("/s/{token}")
    def shared(request: Request, token: str) -> Response:
        link: ShareLink = load(request, Principal(), "token", token)
        holder = Principal(share=link)  # the token is the principal: it sees the link's runs, nothing else
        views = load_runs(request, holder, link.run_ids)
        if link.kind == "run":
            return _run_response(request, holder, views[0], shared=link, chart_src=f"/s/{token}/chart.svg")
        return _compare_response(request, holder, views[0], views[1], shared=link, chart_src=f"/s/{token}/chart.svg")

    @app.get("/s/{token}/report.html")
    def shared_report(request: Request, token: str) -> Response:
        """The shared run's or comparison's report, as `stackbench report` writes it (redacted)."""
        link: ShareLink = load(request, Principal(), "token", token)
        holder = Principal(share=link)
        runs = [view.run for view in load_runs(request, holder, link.run_ids)]
        return _report_download(runs, None) if link.kind == "run" else _report_download([], runs)

    def _report_download(runs: list[Run], compared: list[Run] | None) -> Response:
        """The HTML report of runs already authorized by `load`, as a download. Always redacted (host names,
        serials, user names in paths become placeholders), for owners too: it is made to be passed on, and
        so it is the same document for whoever may see the runs, kept in a small cache (drawing one costs a
        second or two for a big run). A download, not a page: the report's inline styles and charts are
        its own, and the page CSP does not apply to a saved file."""
        from stackbench.report.documents.html import render_html
        from stackbench.load.report_contents import build_contents

        run_ids, compared_ids = [r.id for r in runs], [r.id for r in compared] if compared else None
        key = ("report", tuple(_drawn_from(r) for r in runs), tuple(_drawn_from(r) for r in compared or ()))
        body = ctx.reports.get(key, lambda: render_html(build_contents(ctx.store, run_ids, compare=compared_ids)))
        name = f"stackbench-report-{(compared_ids or run_ids)[0][:12]}.html"
        return Response(body, media_type="text/html; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/s/{token}/chart.svg")
    def shared_chart(request: Request, token: str, n: int = 0) -> Response:
        """A shared page's charts, drawn from the redacted runs as the page shows them."""
        link: ShareLink = load(request, Principal(), "token", token)
        holder = Principal(share=link)
        runs = _shared_views(*(view.run for view in load_runs(request, holder, link.run_ids)))
        if link.kind == "run":
            return _svg(_run_charts(runs[0], shared=True), n)
        return _svg(_compare_charts(runs[0], runs[1], shared=True), n)

    def _svg(charts: list[Chart], n: int) -> Response:
        if not 0 <= n < len(charts):
            raise NotFound()
        return Response(charts[n].svg, media_type="image/svg+xml")

    return app


def _shared_views(*runs: Run) -> list[Run]:
    """What a share link's holder sees of runs: redacted copies, as `stackbench report` makes them
    (report/redact.py: host names, serials, WWNs, MACs, user names in paths become placeholders), one
    redactor for all the runs of a page so that a host is the same placeholder in both runs of a compare."""
    from stackbench.report.redact import redactor

    redact = redactor()
    for run in runs:
        redact.learn_run(run)
    return [redact.run(run) for run in runs]
