"""The server's front door and its fixed files: `/` (the latest runs and what to do next), the stylesheet, the
copy buttons' script and robots.txt."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from stackbench.store.accounts import RunFilter, Viewer
from stackbench.web.context import context_of
from stackbench.web.pages.render import logged_in, page
from stackbench.web.pages.runs_list import headline

ROBOTS = "User-agent: *\nDisallow: /s/\nDisallow: /\n"  # share links above all; nothing here is for indexing

router = APIRouter()


@router.get("/static/style.css")
def style(request: Request) -> Response:
    return Response(context_of(request).stylesheet, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


@router.get("/static/copy.js")
def script(request: Request) -> Response:
    return Response(context_of(request).script, media_type="text/javascript",
                    headers={"Cache-Control": "max-age=3600"})


@router.get("/robots.txt")
def robots() -> PlainTextResponse:
    return PlainTextResponse(ROBOTS)


LATEST = 8  # runs on the home page


@router.get("/")
def home(request: Request) -> Response:
    """The latest runs the viewer may see, each with its headline, and the ways on (find, compare, layers,
    SLOG); with no run yet, the commands that store one."""
    principal = logged_in(request)
    if isinstance(principal, Response):
        return principal
    account = principal.account
    assert account is not None
    rows, total = context_of(request).accounts.visible_runs(Viewer(account.id, account.is_admin), RunFilter(),
                                                            whole=False, offset=0, limit=LATEST)
    return page(request, "home.html", 200, principal, latest=[row[0] for row in rows], total=total,
                headline=headline)
