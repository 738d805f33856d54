"""Share links (docs/server.md, Share links): an owner makes one for a run or a comparison and revokes it;
its holder, with no account, sees that page redacted (`/s/TOKEN`), its charts and its report. The token is
the holder's principal: it opens the link's runs, nothing else."""

from __future__ import annotations

import secrets
from datetime import timedelta

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import RedirectResponse, Response

from stackbench.base.usertext import refusal
from stackbench.store.accounts import ShareLink, now
from stackbench.web.access import Principal, RunView, load, load_runs
from stackbench.web.context import context_of
from stackbench.web.pages.compare import compare_charts, compare_response
from stackbench.web.pages.render import chart_image, page
from stackbench.web.pages.reports import report_download
from stackbench.web.pages.run import run_charts, run_response
from stackbench.web.sessions import csrf_checked
from stackbench.web.views import shared_views

NOTE_MAX = 500

router = APIRouter()


@router.post("/runs/{run_id}/shares")
def share_run(request: Request, run_id: str, days: int = Form(7), note: str = Form(""),
              principal: Principal = Depends(csrf_checked)) -> Response:
    view: RunView = load(request, principal, "run", run_id)
    return _create_link(request, principal, "run", [view], days, note)


@router.post("/compare/{a}/{b}/shares")
def share_compare(request: Request, a: str, b: str, days: int = Form(7), note: str = Form(""),
                  principal: Principal = Depends(csrf_checked)) -> Response:
    first, second = load_runs(request, principal, [a, b])
    return _create_link(request, principal, "compare", [first, second], days, note)


def _create_link(request: Request, principal: Principal, kind: str, views: list[RunView], days: int,
                 note: str) -> Response:
    """A new link to the page of `views` (one run, or the two of a comparison), shown once: the store
    keeps only its keyed hash. Only the owner of every run shown may make one."""
    ctx = context_of(request)
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


@router.post("/shares/{link_id}/revoke")
def revoke(request: Request, link_id: str, principal: Principal = Depends(csrf_checked)) -> Response:
    link: ShareLink = load(request, principal, "share", link_id)
    context_of(request).accounts.revoke_share_link(link.id)
    back = f"/runs/{link.object_id}" if link.kind == "run" else f"/compare/{link.object_id}/{link.other_id}"
    return RedirectResponse(back, status_code=303)


@router.get("/s/{token}")
def shared(request: Request, token: str) -> Response:
    link: ShareLink = load(request, Principal(), "token", token)
    holder = Principal(share=link)  # the token is the principal: it sees the link's runs, nothing else
    views = load_runs(request, holder, link.run_ids)
    if link.kind == "run":
        return run_response(request, holder, views[0], shared=link, chart_src=f"/s/{token}/chart.svg")
    return compare_response(request, holder, views[0], views[1], shared=link, chart_src=f"/s/{token}/chart.svg")


@router.get("/s/{token}/report.html")
def shared_report(request: Request, token: str) -> Response:
    """The shared run's or comparison's report, as `stackbench report` writes it (redacted)."""
    link: ShareLink = load(request, Principal(), "token", token)
    holder = Principal(share=link)
    runs = [view.run for view in load_runs(request, holder, link.run_ids)]
    return report_download(request, runs, None) if link.kind == "run" else report_download(request, [], runs)


@router.get("/s/{token}/chart.svg")
def shared_chart(request: Request, token: str, n: int = 0) -> Response:
    """A shared page's charts, drawn from the redacted runs as the page shows them."""
    link: ShareLink = load(request, Principal(), "token", token)
    holder = Principal(share=link)
    runs = shared_views(*(view.run for view in load_runs(request, holder, link.run_ids)))
    if link.kind == "run":
        return chart_image(run_charts(request, runs[0], shared=True), n)
    return chart_image(compare_charts(request, runs[0], runs[1], shared=True), n)
