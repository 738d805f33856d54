"""Server-side sessions and CSRF tokens.

The cookie holds a random 256-bit session id; the store holds only its keyed hash, the account and a
per-session CSRF secret. A session ends at logout, after `idle_timeout` without a request and
`absolute_timeout` after login; a login always starts a new session (the old id, if any, is ended).
Every state-changing form carries the session's CSRF secret (a synchronizer token), checked by the one
dependency `csrf_checked`. The login form, which has no session yet, carries a token bound to a
short-lived login cookie that only this server can make: the cookie is a random nonce, its time of issue
and a MAC of both under the server's key; the form's token is another MAC of the nonce. A cookie planted
by another page (cookie tossing: cookies are not separated by port, and over plain http any page of the
host can set them) is refused unless the server made it within the hour, and the form token it needs is
not the cookie's value. Before any of this, web/origin.py refuses a form posted from anywhere but our own
pages.

Cookie names: over https `__Host-stackbench_session` and `__Host-stackbench_login`. The `__Host-` prefix
makes the browser refuse such a cookie unless it is Secure, has Path=/ and no Domain, so neither a page
on plain http nor a sibling domain can plant or overwrite it. Over plain http (loopback, or a trusted
network without a proxy) browsers refuse `__Host-` cookies altogether, so the names are plain there:
what protects them is SameSite=Strict, HttpOnly, the Origin check and the signed login token. A request
that carries two cookies of one of our names (a planted one beside the real one, on a longer path) is
treated as carrying none.
"""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

from fastapi import Form, Request
from starlette.responses import Response

from stackbench.store.accounts import Account, now
from stackbench.web.access import NotFound, Principal
from stackbench.web.context import context_of

SESSION_COOKIE = "stackbench_session"
LOGIN_COOKIE = "stackbench_login"
HOST_PREFIX = "__Host-"  # the names over https (see the module)
LOGIN_TOKEN_S = 3600  # a login form is good for an hour


class CsrfRejected(Exception):
    """A state-changing request without the session's CSRF token: 403."""


def secure(request: Request) -> bool:
    """Whether the browser reached us over https (directly, or through a trusted TLS proxy)."""
    return request.url.scheme == "https"


def cookie_name(request: Request, name: str) -> str:
    """A cookie's name for this request: `__Host-NAME` over https, NAME over plain http (see the module)."""
    return HOST_PREFIX + name if secure(request) else name


def cookie(request: Request, name: str) -> str | None:
    """The value of our cookie `name` (SESSION_COOKIE, LOGIN_COOKIE) when the request carries exactly one
    cookie of that name; None for none, or for two (one of them planted)."""
    wanted = cookie_name(request, name)
    sent = [pair.split("=", 1)[0].strip() for header in request.headers.getlist("cookie") for pair in header.split(";")]
    return request.cookies.get(wanted) if sent.count(wanted) == 1 else None


def current(request: Request) -> Principal:
    """The principal of this request: the session's account, or nobody. An expired session is ended."""
    session_id = cookie(request, SESSION_COOKIE)
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
    response.set_cookie(cookie_name(request, SESSION_COOKIE), session_id, httponly=True, samesite="strict",
                        secure=secure(request), path="/")
    response.delete_cookie(cookie_name(request, LOGIN_COOKIE), path=_login_path(request), httponly=True,
                           samesite="strict", secure=secure(request))


def end_session(request: Request, response: Response, principal: Principal) -> None:
    if principal.session_hash is not None:
        context_of(request).accounts.end_session(principal.session_hash)
    response.delete_cookie(cookie_name(request, SESSION_COOKIE), path="/", httponly=True, samesite="strict",
                           secure=secure(request))


def _login_mac(request: Request, purpose: str, nonce: str, issued: str = "") -> str:
    return context_of(request).digest(f"login-{purpose}|{nonce}|{issued}")


def _login_nonce(request: Request, within_s: float = LOGIN_TOKEN_S) -> str | None:
    """The nonce of the request's login cookie when this server made it less than `within_s` ago."""
    value = cookie(request, LOGIN_COOKIE) or ""
    nonce, issued, mac = (value.split(".") + ["", ""])[:3] if len(value) < 200 else ("", "", "")
    if not (nonce and issued.isdigit() and mac):
        return None
    if not secrets.compare_digest(mac.encode(), _login_mac(request, "cookie", nonce, issued).encode()):
        return None  # not made by this server: planted
    return nonce if 0 <= time.time() - int(issued) < within_s else None


def login_form(request: Request) -> tuple[str, str | None]:
    """The login form's token, and the login cookie to set with it: None when the request's own login
    cookie is kept (this server made it within the last half hour, so that a form shown is good for half
    an hour at least, and two tabs share one cookie), else a new one."""
    nonce, new = _login_nonce(request, LOGIN_TOKEN_S / 2), None
    if nonce is None:
        nonce, issued = secrets.token_urlsafe(32), str(int(time.time()))
        new = f"{nonce}.{issued}.{_login_mac(request, 'cookie', nonce, issued)}"
    return _login_mac(request, "form", nonce), new


def set_login_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(cookie_name(request, LOGIN_COOKIE), value, httponly=True, samesite="strict",
                        secure=secure(request), path=_login_path(request), max_age=LOGIN_TOKEN_S)


def _login_path(request: Request) -> str:
    """The login cookie's path: `/` for its `__Host-` name (the prefix requires it), else only `/login`, as
    before (a browser holding the old cookie gets it replaced, not a second one beside it)."""
    return "/" if secure(request) else "/login"


def login_token_ok(request: Request, submitted: str) -> bool:
    """Whether the login form's token belongs to the request's login cookie, which this server made."""
    nonce = _login_nonce(request)
    return nonce is not None and secrets.compare_digest(submitted.encode(), _login_mac(request, "form", nonce).encode())
