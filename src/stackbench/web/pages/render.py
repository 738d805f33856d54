"""How a page is answered: its template rendered with the viewer's account and CSRF token, a chart image of
a page, and the redirect of a page that needs a login. Pages are rendered on the server from Jinja2
templates with autoescaping on (context.page_templates); there is no JavaScript."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from jinja2 import Environment
from starlette.responses import HTMLResponse, RedirectResponse, Response

from stackbench.web.access import NotFound, Principal
from stackbench.web.charts import Chart
from stackbench.web.context import context_of
from stackbench.web.sessions import current


def page(request: Request, template: str, status: int = 200, principal: Principal | None = None,
         **values: Any) -> HTMLResponse:
    """The page `template` with `values`; a logged-in `principal`'s account and CSRF token go to every page
    (the header's account and logout form)."""
    account = principal.account if principal else None
    csrf = principal.session.csrf_secret if principal and principal.session else None
    html = context_of(request).templates.get_template(template).render(account=account, csrf=csrf, **values)
    return HTMLResponse(html, status_code=status)


def refusal_page(templates: Environment, status: int, title: str, message: str) -> str:
    """The page of a request refused before any route (web/origin.py: an unknown host, a foreign form),
    which has no principal: no account shown, no form."""
    return templates.get_template("error.html").render(account=None, csrf=None, title=title, message=message)


def logged_in(request: Request) -> Principal | Response:
    """The request's logged-in principal, or the redirect to the login page of a page that needs one."""
    principal = current(request)
    return principal if principal.account is not None else RedirectResponse("/login", status_code=303)


def chart_image(charts: list[Chart], n: int) -> Response:
    """The page's chart number `n` as an SVG image (web/charts.py); the 404 of a number it does not have."""
    if not 0 <= n < len(charts):
        raise NotFound()
    return Response(charts[n].svg, media_type="image/svg+xml")
