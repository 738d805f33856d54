"""The owner's private/team form of a run, scan, audit or tune session: who sees it besides its owner."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import RedirectResponse, Response

from stackbench.web.access import Principal
from stackbench.web.context import context_of
from stackbench.web.pages.render import page


NOUNS = {"tune": "tune session"}  # a kind's name as a reader says it, where it is not the kind itself


def change_visibility(request: Request, principal: Principal, kind: str, object_id: str, mine: bool,
                      visibility: str) -> Response:
    """Set the visibility of an object already loaded through `load` (`mine`: the principal owns it), and
    back to its page; 403 for anyone but its owner."""
    if not mine:
        return page(request, "error.html", 403, principal, title="Forbidden",
                    message=f"Only the {NOUNS.get(kind, kind)}'s owner can change who sees it.")
    if visibility not in ("private", "team"):
        return page(request, "error.html", 400, principal, title="Bad request",
                    message="Visibility is private or team.")
    context_of(request).accounts.set_visibility(object_id, visibility, kind=kind)
    return RedirectResponse(f"/{kind}s/{object_id}", status_code=303)
