"""The server's front door and its fixed files: `/` (the latest runs and what to do next), the stylesheet, the
copy buttons' script and robots.txt."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import PlainTextResponse, Response

from stackbench.base.errors import StackbenchError
from stackbench.store.accounts import RunFilter, Viewer
from stackbench.store.repository import Store
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
LATEST_AUDITS = 5  # audits on the home page
LATEST_TUNES = 5  # tune sessions on the home page


@router.get("/")
def home(request: Request) -> Response:
    """The latest runs the viewer may see, each with its headline, the latest audits with what is new in
    them, the latest tune sessions with how they ended, and the ways on (find, compare, layers, SLOG); with no run yet, the commands that store one."""
    principal = logged_in(request)
    if isinstance(principal, Response):
        return principal
    account = principal.account
    assert account is not None
    ctx, viewer = context_of(request), Viewer(account.id, account.is_admin)
    rows, total = ctx.accounts.visible_runs(viewer, RunFilter(), whole=False, offset=0, limit=LATEST)
    audits, audit_total = ctx.accounts.visible_items(viewer, "audit", offset=0, limit=LATEST_AUDITS)
    for audit in audits:
        audit["new"] = _new_findings(ctx.store, audit)
    tunes, tune_total = ctx.accounts.visible_items(viewer, "tune", offset=0, limit=LATEST_TUNES)
    return page(request, "home.html", 200, principal, latest=[row[0] for row in rows], total=total,
                headline=headline, audits=audits, audit_total=audit_total, tunes=tunes, tune_total=tune_total)


def _new_findings(store: Store, audit: dict[str, Any]) -> int | None:
    """How many of an audit's findings its subject's previous stored audit did not have (its document's
    `changes`, audit/history.py); None for a subject's first audit, where every finding is new."""
    if not audit.get("previous_id"):
        return None
    try:
        document = store.get_audit(audit["id"]).document
    except StackbenchError:  # deleted since the list was read
        return None
    changes = document.get("changes") if isinstance(document, dict) else None
    new = changes.get("new") if isinstance(changes, dict) else None
    return len(new) if isinstance(new, list) else None
