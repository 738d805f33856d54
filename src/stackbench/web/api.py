"""The server's API for scripts: `POST /api/runs` (`stackbench push`) and `GET /metrics` (Prometheus).

Both authenticate with an API token (store/tokens.py) sent as `Authorization: Bearer TOKEN`, checked in
one dependency, `bearer(scope)`: an unknown, malformed, revoked or expired token gets the same 401 (the
answer tells nothing about which tokens exist), a live token of the wrong scope gets 403. Failed token
lookups count against the client address like other misses (access.py), so tokens cannot be guessed at
speed. Nothing here accepts a session cookie, and no route at all manages tokens: they are made and
revoked with `stackbench token` on the server's machine, so a token can never mint another.

Answers are JSON `{"error": ..., "fix": ...}` on failure (one line each, for the CLI to print).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from fastapi import APIRouter, Depends, FastAPI, Header, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from stackbench.store.accounts import Account, Viewer, now
from stackbench.store.tokens import ApiToken, Tokens
from stackbench.web.context import ServerContext, client_address, context_of
from stackbench.web.upload import MAX_BYTES, Refused, parse

TOKEN = re.compile(r"sbt_[A-Za-z0-9_-]{43}")  # "sbt_" + secrets.token_urlsafe(32): 256 random bits
NO_TOKEN = ("no valid API token", "Send `Authorization: Bearer TOKEN` with a live token from `stackbench token create`")


class ApiRefused(Exception):
    def __init__(self, status: int, error: str, fix: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status, self.error, self.fix, self.headers = status, error, fix, headers or {}


def bearer(scope: str) -> Callable[..., tuple[ApiToken, Account]]:
    """A dependency: the live token of the request and its account, if its scope is `scope`. The header is
    a parameter of the route, so that the tests that walk the route table (tests/web) send it their values."""

    def check(request: Request, authorization: str = Header("")) -> tuple[ApiToken, Account]:
        ctx = context_of(request)
        address = client_address(request)
        wait = ctx.misses.retry_after(address)
        if wait is not None:
            raise ApiRefused(429, "too many requests with unknown tokens or ids", f"Wait {wait} s",
                             {"Retry-After": str(wait)})
        kind, _, value = authorization.partition(" ")
        found = None
        if kind.lower() == "bearer" and TOKEN.fullmatch(value.strip()):
            found = Tokens(ctx.store).holder(ctx.digest(value.strip()))
        moment = now()
        if found is None or not found[0].live(moment):
            ctx.misses.hit(address)
            raise ApiRefused(401, *NO_TOKEN, {"WWW-Authenticate": "Bearer"})
        token, account = found
        if token.scope != scope:
            raise ApiRefused(403, f"this token has scope {token.scope}, this needs {scope}",
                             f"Create a token with `stackbench token create --scope {scope}`")
        Tokens(ctx.store).touch(token.id, moment)
        return token, account

    return check


router = APIRouter()


@router.post("/api/runs")
async def push_run(request: Request, holder: tuple[ApiToken, Account] = Depends(bearer("push"))) -> Response:
    """Store an uploaded run under the token's owner, private. 201 with its id and URL; pushing a run
    the owner has already pushed answers 200 with the same id and URL (idempotent); an id stored for
    another account answers 409; a push while `uploads_at_once` others are being read answers 503."""
    ctx = context_of(request)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BYTES:
        raise Refused(413, f"the upload is larger than {MAX_BYTES // 1024**2} MiB")
    if ctx.upload_slots.locked():  # bounded memory: never more than uploads_at_once bodies held at once
        raise ApiRefused(503, "the server is storing other uploads", "Push again in a few seconds",
                         {"Retry-After": "5"})
    async with ctx.upload_slots:
        return await _store_upload(request, ctx, holder)


async def _store_upload(request: Request, ctx: ServerContext, holder: tuple[ApiToken, Account]) -> Response:
    from stackbench.store.uploads import RunExists, add_uploaded_run

    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BYTES:
            raise Refused(413, f"the upload is larger than {MAX_BYTES // 1024**2} MiB")
    # parsing and storing block: in the thread pool, so that other requests go on meanwhile
    document = await run_in_threadpool(parse, bytes(body))
    _, account = holder
    base = str(request.base_url).rstrip("/")
    try:
        run_id = await run_in_threadpool(add_uploaded_run, ctx.store, account.id, document)
    except RunExists as exists:
        run_id = document["run"]["id"]
        if exists.owner != account.id:
            raise ApiRefused(409, "a run with this id is stored on the server for another account",
                             "Push it with the account that stored it first") from None
        return JSONResponse({"id": run_id, "url": f"{base}/runs/{run_id}", "created": False}, status_code=200)
    if ctx.warmer is not None:
        ctx.warmer.wake()  # its charts drawn now, before anyone opens its page
    return JSONResponse({"id": run_id, "url": f"{base}/runs/{run_id}", "created": True}, status_code=201)


@router.get("/metrics")
def metrics(request: Request, holder: tuple[ApiToken, Account] = Depends(bearer("metrics"))) -> Response:
    """The latest complete run of each series that the token's owner may see, as OpenMetrics text."""
    from stackbench.report.openmetrics import CONTENT_TYPE, latest_complete, openmetrics_text

    ctx = context_of(request)
    _, account = holder
    chosen = latest_complete(ctx.accounts.latest_complete_runs(Viewer(account.id, account.is_admin)))
    return Response(openmetrics_text(chosen), media_type=CONTENT_TYPE)


def _refused(_request: Request, error: Any) -> JSONResponse:
    if isinstance(error, Refused):
        status, body, headers = error.status, {"error": error.reason, "fix": _FIX.get(error.status, "")}, {}
    else:
        status, body, headers = error.status, {"error": error.error, "fix": error.fix}, error.headers
    return JSONResponse(body, status_code=status, headers=headers)


_FIX = {413: "Push fewer runs at a time, or runs with fewer cells",
        400: "Send a run document as `stackbench push` makes it (docs/server.md, Pushing runs)"}


def install(app: FastAPI) -> None:
    """Add the API's routes and its JSON error answers to the server's app."""
    app.include_router(router)
    app.add_exception_handler(ApiRefused, _refused)
    app.add_exception_handler(Refused, _refused)
