"""`/runs`: the runs the viewer may see, newest first, filtered and paged (docs/server.md, Pages)."""

from __future__ import annotations

from datetime import date
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.responses import Response

from stackbench.store.accounts import RunFilter, Viewer
from stackbench.web.context import context_of
from stackbench.web.pages.listing import page_anchor, paged
from stackbench.web.pages.render import logged_in, page

router = APIRouter()


@router.get("/runs")
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
    anchor = page_anchor(older_than, newer_than)
    filters = {k: v for k, v in (("label", label), ("target", target), ("plan", plan), ("since", since),
                                 ("until", until)) if v}
    viewer = Viewer(account.id, account.is_admin)
    accounts = context_of(request).accounts
    listing = paged(request, page_number, lambda **at: accounts.visible_runs(viewer, where, whole=False, **at),
                    lambda n, **key: "/runs?" + urlencode({**filters, "page_number": n, **key}),
                    anchor, key_of=lambda row: row[0].id)
    return page(request, "runs.html", 200, principal, filters=filters, **listing)
