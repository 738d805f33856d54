"""The error pages: one 404 for everything that is absent or not yours (`access.NotFound`, an unknown path),
and the pages of the other refusals a route raises."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse, Response

from stackbench.web.access import NotFound, TooManyMisses
from stackbench.web.pages.listing import NotAPageLink
from stackbench.web.pages.picked import MAX_PICKED, TooManyRuns
from stackbench.web.pages.render import page
from stackbench.web.sessions import CsrfRejected, current


def not_found(request: Request, _error: NotFound) -> HTMLResponse:
    """The one 404, with the viewer's navigation; to a visitor who is not logged in it offers the login, since
    a teammate's link to a team run is a 404 until they log in (the page says nothing of whether it exists)."""
    principal = current(request)
    if request.url.path.startswith("/s/"):  # a share link's pages: every dead or unknown token alike
        return page(request, "error.html", 404, principal, title="Not found",
                    message="This share link does not exist, has expired or was revoked: ask its sender for a new one.")
    if principal.account is None:
        return page(request, "error.html", 404, principal, title="Not found", login=True,
                    message="There is nothing here that you may see without logging in. If a teammate sent you "
                            "this link, log in and open it again.")
    return page(request, "error.html", 404, principal, title="Not found", message="There is nothing here.")


def http_error(request: Request, error: StarletteHTTPException) -> Response:
    if error.status_code == 404:
        return not_found(request, NotFound())
    return page(request, "error.html", error.status_code, current(request), title="Error", message=str(error.detail))


def bad_request(request: Request, _error: RequestValidationError) -> HTMLResponse:
    return page(request, "error.html", 400, current(request), title="Bad request",
                message="The request was not understood.")


def too_many(request: Request, error: TooManyMisses) -> HTMLResponse:
    response = page(request, "error.html", 429, current(request), title="Too many requests",
                    message="Too many requests for things that do not exist. Try again later.")
    response.headers["Retry-After"] = str(error.retry_after)
    return response


def too_many_runs(request: Request, error: TooManyRuns) -> HTMLResponse:
    return page(request, "error.html", 400, current(request), title="Too many runs",
                message=f"{error.what} at most {MAX_PICKED} runs. Check fewer runs.")


def not_a_page_link(request: Request, _error: NotAPageLink) -> HTMLResponse:
    return page(request, "error.html", 400, current(request), title="Bad request",
                message="That is not a page link of this list: open the list from its first page.")


def csrf_rejected(request: Request, _error: CsrfRejected) -> HTMLResponse:
    return page(request, "error.html", 403, current(request), title="Forbidden",
                message="The form was stale or not ours. Go back, reload the page and try again.")


HANDLERS = {NotFound: not_found, StarletteHTTPException: http_error, RequestValidationError: bad_request,
            TooManyMisses: too_many, TooManyRuns: too_many_runs, NotAPageLink: not_a_page_link,
            CsrfRejected: csrf_rejected}


def install(app: FastAPI) -> None:
    """Answer the exceptions of `HANDLERS` with their error pages."""
    for exception, handler in HANDLERS.items():
        app.add_exception_handler(exception, handler)
