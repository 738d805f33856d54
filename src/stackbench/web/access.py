"""Authorization in one place: every object a route names is loaded through `load` (several runs of one
page together through `load_runs`, the same check in one query).

`load(request, principal, kind, object_id)` answers the object when the principal may see it, and raises
the same `NotFound` for an object that does not exist, one that is not the principal's, a malformed id,
and a dead share link, so the answer tells nothing about what exists. Lookups that find nothing are
counted per client address; past the limit every lookup from that address is refused with 429 until the
window passes, so ids and tokens cannot be enumerated. A route takes an object only through a parameter
named in `OBJECT_PARAMS`; tests/web/test_access_matrix.py walks the app's route table and checks every
such route for every kind of principal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Sequence

from starlette.requests import Request

from stackbench.analysis.cells import samples_needed
from stackbench.model.results import Run
from stackbench.store.accounts import Account, SessionRecord, ShareLink, Viewer, now
from stackbench.web.context import ServerContext, client_address, context_of

# Route parameter name -> the kind of object it names. Every id in a URL is one of these.
OBJECT_PARAMS = {"run_id": "run", "a": "run", "b": "run", "link_id": "share", "token": "token",
                 "scan_id": "scan", "audit_id": "audit", "tune_id": "tune",
                 "runs": "run"}  # the layers page: run ids, bottom layer first, loaded together (`load_runs`)

RUN_ID = re.compile(r"[0-9a-f]{32}")  # new_id(): 128 random bits
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32): 256 random bits
LAST_USE_STEP = timedelta(minutes=1)  # a share link's last use is written when it moved by more than this


class NotFound(Exception):
    """The one answer for "no such object" and "not yours": rendered as the same 404 page."""


class TooManyMisses(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Principal:
    """Who asks: a logged-in account (with its session), a share link's holder, or nobody."""

    account: Account | None = None
    session: SessionRecord | None = None
    session_hash: str | None = None
    share: ShareLink | None = None


@dataclass(frozen=True)
class RunView:
    """A run as a principal may see it, with what the page needs to offer the owner's controls. The run's
    cells carry per-second samples only where their replicates are made of them (`samples_needed`): what
    draws or ranks per-second samples reads the rest with `Store.with_samples`."""

    run: Run
    owner: str | None
    visibility: str
    mine: bool


def _load_runs(ctx: ServerContext, principal: Principal, run_ids: Sequence[str]) -> list[RunView] | None:
    """The runs `run_ids`, in order, if the principal may see every one of them; None otherwise. Read in
    one query with the visibility rule as its condition (`Accounts.runs_seen`), each run with the samples
    its tables need (`samples_needed`: pages that draw or rank per-second samples ask for the rest)."""
    if not run_ids or not all(RUN_ID.fullmatch(run_id) for run_id in run_ids):
        return None
    if principal.share is not None:
        # the link's runs, and only while the link's maker still owns them (a run moved to another
        # account with `user claim --take` is no longer the maker's to share; the store also deletes the
        # link in the move, migration 0011, so that moving the run back does not bring the link back)
        if not set(run_ids) <= set(principal.share.run_ids):
            return None
        viewer = Viewer(principal.share.owner, False)
    elif principal.account is not None:
        viewer = Viewer(principal.account.id, principal.account.is_admin)
    else:
        return None
    found = ctx.accounts.runs_seen(viewer, run_ids, samples_for=samples_needed)  # exact ids, never a prefix or a label
    if not set(run_ids) <= set(found):
        return None
    views = []
    for run_id in run_ids:
        owner, visibility, run = found[run_id]
        if principal.share is not None:
            if owner != principal.share.owner:
                return None
            visibility = "shared"
        mine = principal.account is not None and owner == principal.account.id
        views.append(RunView(run, owner, visibility, mine))
    return views


def _load_run(ctx: ServerContext, principal: Principal, run_id: str) -> RunView | None:
    views = _load_runs(ctx, principal, [run_id])
    return views[0] if views else None


@dataclass(frozen=True)
class ItemView:
    """A stored smallblocks scan, audit or tune session (`StoredScan`, `StoredAudit`, `StoredTuneSession`) as
    a principal may see it."""

    kind: str  # scan | audit | tune
    item: Any
    owner: str | None
    visibility: str
    mine: bool


def _load_item(kind: str) -> Callable[[ServerContext, Principal, str], ItemView | None]:
    """The loader of scans, audits or tune sessions: an account's only, by the visibility rule of runs
    (store/accounts.py `_visible`); share links do not reach them."""

    def load_item(ctx: ServerContext, principal: Principal, object_id: str) -> ItemView | None:
        if principal.account is None or principal.share is not None or not RUN_ID.fullmatch(object_id):
            return None
        found = ctx.accounts.access(Viewer(principal.account.id, principal.account.is_admin), kind, object_id)
        if found is None:
            return None
        read = {"scan": ctx.store.get_scan, "audit": ctx.store.get_audit, "tune": ctx.store.tune_session_by_id}[kind]
        item = read(object_id)
        return ItemView(kind, item, found[0], found[1], found[0] == principal.account.id)

    return load_item


def _load_share(ctx: ServerContext, principal: Principal, link_id: str) -> ShareLink | None:
    """A share link to manage (list, revoke): its owner's only."""
    if principal.account is None or not RUN_ID.fullmatch(link_id):
        return None
    link = ctx.accounts.share_link(link_id)
    return link if link is not None and link.owner == principal.account.id else None


def _load_token(ctx: ServerContext, principal: Principal, token: str) -> ShareLink | None:
    """A share token presented by anyone: its link while neither revoked nor expired."""
    if not TOKEN.fullmatch(token):
        return None
    link = ctx.accounts.share_link_by_hash(ctx.digest(token))
    moment = now()
    if link is None or not link.live(moment):
        return None
    if link.last_used_at is None or moment - link.last_used_at > LAST_USE_STEP:
        # one write a minute at most (the list shows the minute), not a transaction per view of a shared page
        ctx.accounts.touch_share_link(link.id, moment)
    return link


LOADERS: dict[str, Callable[[ServerContext, Principal, str], Any]] = {
    "run": _load_run,
    "share": _load_share,
    "token": _load_token,
    "scan": _load_item("scan"),
    "audit": _load_item("audit"),
    "tune": _load_item("tune"),
}


def load(request: Request, principal: Principal, kind: str, object_id: str) -> Any:
    """The object `object_id` of `kind` if `principal` may see it; NotFound otherwise (see the module)."""
    return _checked(request, lambda ctx: LOADERS[kind](ctx, principal, object_id))


def load_runs(request: Request, principal: Principal, run_ids: Sequence[str]) -> list[RunView]:
    """The runs `run_ids`, in order, each as `load(request, principal, "run", id)` answers it, read together
    (a compare page's two runs in one query, not two); NotFound if any of them is not the principal's to
    see, counted as one miss as `load` would count the first."""
    return _checked(request, lambda ctx: _load_runs(ctx, principal, run_ids))


def _checked(request: Request, find: Callable[[ServerContext], Any]) -> Any:
    """What `find` finds, behind the limit on misses; NotFound (and one miss counted) when it finds None."""
    ctx = context_of(request)
    address = client_address(request)
    # The limit is a query on the store: asked once per request, not once per object of a page that loads
    # several (a compare page two runs, a layers page up to twelve); a miss ends the request anyway.
    if not getattr(request.state, "misses_checked", False):
        wait = ctx.misses.retry_after(address)
        if wait is not None:
            raise TooManyMisses(wait)
        request.state.misses_checked = True
    found = find(ctx)
    if found is None:
        ctx.misses.hit(address)
        request.state.misses_checked = False
        raise NotFound()
    return found
