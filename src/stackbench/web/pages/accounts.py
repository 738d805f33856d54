"""Logging in and out (web/sessions.py holds the sessions, the login form's token and the cookies)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import RedirectResponse, Response

from stackbench.web.access import Principal
from stackbench.web.context import client_address, context_of
from stackbench.web.pages.render import page
from stackbench.web.passwords import needs_rehash, verify_password
from stackbench.web.sessions import (
    csrf_checked, current, end_session, login_form as login_form_token, login_token_ok, set_login_cookie, start_session,
)

router = APIRouter()


@router.get("/login")
def login_form(request: Request) -> Response:
    principal = current(request)
    if principal.account is not None:
        return RedirectResponse("/runs", status_code=303)
    return _login_page(request, None, 200)


def _login_page(request: Request, message: str | None, status: int, name: str = "") -> Response:
    token, cookie = login_form_token(request)
    response = page(request, "login.html", status, login_csrf=token, message=message, name=name)
    if cookie is not None:
        set_login_cookie(request, response, cookie)
    return response


@router.post("/login")
def login(request: Request, name: str = Form(""), password: str = Form(""), login_csrf: str = Form("")) -> Response:
    """Log in with a name and password, behind the failed logins' limits per account name and per address."""
    if not login_token_ok(request, login_csrf):
        return _login_page(request, "The form was stale. Please try again.", 403, name)
    ctx = context_of(request)
    address = client_address(request)
    account_key = "account:" + name[:64]
    wait = max(ctx.login_by_account.retry_after(account_key) or 0,
               ctx.login_by_address.retry_after(address) or 0)
    if wait:
        response = _login_page(request, f"Too many failed logins. Try again in {wait} s.", 429, name)
        response.headers["Retry-After"] = str(wait)
        return response
    found = ctx.accounts.credentials(name) if 0 < len(name) <= 64 else None
    if not verify_password(found[1] if found else None, password):
        ctx.login_by_account.hit(account_key)
        ctx.login_by_address.hit(address)
        return _login_page(request, "Wrong name or password.", 401, name)
    account, stored_hash = found  # type: ignore[misc]
    if needs_rehash(stored_hash):
        from stackbench.web.passwords import hash_password

        ctx.accounts.set_password_hash(account.id, hash_password(password))
    ctx.login_by_account.reset(account_key)
    response = RedirectResponse("/runs", status_code=303)
    start_session(request, response, account, current(request))
    return response


@router.post("/logout")
def logout(request: Request, principal: Principal = Depends(csrf_checked)) -> Response:
    response = RedirectResponse("/login", status_code=303)
    end_session(request, response, principal)
    return response
