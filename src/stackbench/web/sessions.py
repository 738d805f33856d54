"""Server-side sessions and CSRF tokens.

The cookie holds a random 256-bit session id; the store holds only its keyed hash, the account and a
per-session CSRF secret. A session ends at logout, after `idle_timeout` without a request and
`absolute_timeout` after login; a login always starts a new session (the old id, if any, is ended).
Every state-changing form carries the session's CSRF secret (a synchronizer token), checked by the one
dependency `csrf_checked`. The login form, which has no session yet, carries a double-submit token bound
to a short-lived cookie.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from fastapi import Form, Request
from starlette.responses import Response

from stackbench.store.accounts import Account, now
from stackbench.web.access import NotFound, Principal
from stackbench.web.context import context_of

SESSION_COOKIE = "stackbench_session"
LOGIN_COOKIE = "stackbench_login"


class CsrfRejected(Exception):
    """A state-changing request without the session's CSRF token: 403."""


def secure(request: Request) -> bool:
    """Whether the browser reached us over https (directly, or through a trusted TLS proxy)."""
    return request.url.scheme == "https"


def current(request: Request) -> Principal:
    """The principal of this request: the session's account, or nobody. An expired session is ended."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id or len(session_id) > 64:
        return Principal()
    ctx = context_of(request)
    id_hash = ctx.digest(session_id)
    record = ctx.accounts.session(id_hash)
    if record is None:
        return Principal()
    moment = now()
    if moment - record.last_seen_at > ctx.settings.idle_timeout or moment - record.created_at > ctx.settings.absolute_timeout:
        ctx.accounts.end_session(id_hash)
        return Principal()
    if moment - record.last_seen_at > min(ctx.settings.idle_timeout / 10, timedelta(minutes=1)):
        ctx.accounts.touch_session(id_hash, moment)  # one write a minute at most, not one per request
    return Principal(account=record.account, session=record, session_hash=id_hash)


def csrf_checked(request: Request, csrf: str = Form("")) -> Principal:
    """The dependency of every state-changing route: a logged-in principal whose form carries its
    session's CSRF token. No session answers like a missing object (404); a session with a wrong or
    missing token answers 403."""
    principal = current(request)
    if principal.session is None:
        raise NotFound()
    if not secrets.compare_digest(csrf.encode(), principal.session.csrf_secret.encode()):
        raise CsrfRejected()
    return principal


def start_session(request: Request, response: Response, account: Account, old: Principal) -> None:
    """Log `account` in: end the old session, create a new one and set its cookie."""
    ctx = context_of(request)
    if old.session_hash is not None:
        ctx.accounts.end_session(old.session_hash)
    session_id = secrets.token_urlsafe(32)
    ctx.accounts.create_session(account.id, ctx.digest(session_id), secrets.token_urlsafe(32))
    response.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="strict", secure=secure(request),
                        path="/")
    response.delete_cookie(LOGIN_COOKIE, path="/login")


def end_session(request: Request, response: Response, principal: Principal) -> None:
    if principal.session_hash is not None:
        context_of(request).accounts.end_session(principal.session_hash)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure(request))


def login_token(request: Request) -> str:
    """The login form's double-submit token: the one in its cookie, or a new one."""
    token = request.cookies.get(LOGIN_COOKIE)
    return token if token and len(token) == 43 else secrets.token_urlsafe(32)


def set_login_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", secure=secure(request),
                        path="/login", max_age=3600)


def login_token_ok(request: Request, submitted: str) -> bool:
    cookie = request.cookies.get(LOGIN_COOKIE) or ""
    return bool(cookie) and secrets.compare_digest(cookie.encode(), submitted.encode())
