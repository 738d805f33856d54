"""Logging in and out against the real server: throttling (ASVS 6.3.1), session rotation, logout and
timeouts (7.2.4, 7.4.1, 7.3.1/7.3.2), CSRF on every state-changing form, cookie attributes (3.3.x)."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import httpx
import pytest

from stackbench.web.sessions import LOGIN_COOKIE, SESSION_COOKIE
from stackbench.web.settings import Settings
from web.site import PASSWORD, Site, csrf_of, login


def test_wrong_passwords_for_an_account_are_throttled_with_retry_after(fresh_site) -> None:
    with fresh_site(Settings(login_failures_per_account=2, login_window_s=60)) as site:
        client = site.client()
        for _ in range(2):
            assert login(client, "alice", "wrong password, try again").status_code == 401
        refused = login(client, "alice", PASSWORD)  # even the right password waits now
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert SESSION_COOKIE not in refused.cookies
        assert login(site.client(), "bob", PASSWORD).status_code == 303  # another account is not locked out


@pytest.mark.slow
def test_failures_from_one_address_are_throttled_across_names(fresh_site) -> None:
    with fresh_site(Settings(login_failures_per_address=3, login_window_s=60)) as site:
        client = site.client()
        for name in ("alice", "bob", "nobody-at-all"):
            assert login(client, name, "not the password at all").status_code == 401
        refused = login(client, "someone-else", "not the password either")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1


def test_unknown_names_and_wrong_passwords_answer_alike(web: Site) -> None:
    wrong_password = login(web.client(), "alice", "not the password at all")
    no_such_name = login(web.client(), "mallory", "not the password at all")
    assert wrong_password.status_code == no_such_name.status_code == 401
    strip = re.compile(r'value="[^"]*"')
    assert strip.sub("", wrong_password.text).replace("alice", "X") == strip.sub("", no_such_name.text).replace("mallory", "X")


def test_session_cookie_is_httponly_samesite_strict_and_rotated_at_login(web: Site) -> None:
    client = web.client()
    response = login(client, "alice", PASSWORD)
    header = response.headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=strict" in header and "secure" not in header  # plain http here
    first = client.cookies[SESSION_COOKIE]
    assert len(first) >= 43  # 256 random bits, URL-safe base64
    form = web.client()  # a logged-in browser is sent away from /login: take the form in another
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.get("/login").text).group(1)
    client.cookies.set(LOGIN_COOKIE, form.cookies[LOGIN_COOKIE], path="/login")
    assert client.post("/login", data={"name": "alice", "password": PASSWORD, "login_csrf": token}).status_code == 303
    second = client.cookies[SESSION_COOKIE]
    assert second != first
    stale = web.client()
    stale.cookies.set(SESSION_COOKIE, first)
    assert stale.get("/runs").status_code == 303  # the old id ended at the new login


def test_logout_ends_the_session_on_the_server(web: Site) -> None:
    client = web.login("alice")
    cookie = client.cookies[SESSION_COOKIE]
    assert client.get(f"/runs/{web.runs['a']}").status_code == 200
    assert client.post("/logout", data={"csrf": csrf_of(client)}).status_code == 303
    replay = web.client()
    replay.cookies.set(SESSION_COOKIE, cookie)  # a copied cookie is worthless after logout
    assert replay.get("/runs").status_code == 303
    assert replay.get(f"/runs/{web.runs['a']}").status_code == 404


def test_idle_timeout_ends_a_session(fresh_site) -> None:
    with fresh_site(Settings(idle_timeout=timedelta(seconds=0.6))) as site:
        client = site.login("alice")
        assert client.get("/runs").status_code == 200
        time.sleep(0.8)
        assert client.get("/runs").status_code == 303


@pytest.mark.slow
def test_absolute_timeout_ends_a_busy_session(fresh_site) -> None:
    with fresh_site(Settings(idle_timeout=timedelta(seconds=30), absolute_timeout=timedelta(seconds=1))) as site:
        client = site.login("alice")
        deadline = time.monotonic() + 0.7
        while time.monotonic() < deadline:  # busy: never idle
            assert client.get("/runs").status_code == 200
            time.sleep(0.1)
        time.sleep(0.5)
        assert client.get("/runs").status_code == 303


def test_state_changing_forms_need_the_sessions_csrf_token(web: Site, as_user: dict) -> None:
    alice, bob = as_user["alice"], as_user["bob"]
    target = f"/runs/{web.runs['b']}/visibility"
    for data in ({"visibility": "team"}, {"visibility": "team", "csrf": ""}, {"visibility": "team", "csrf": "x" * 43},
                 {"visibility": "team", "csrf": csrf_of(bob)}):
        assert alice.post(target, data=data).status_code == 403
    assert alice.post(f"/runs/{web.runs['b']}/shares", data={"days": "7"}).status_code == 403
    assert alice.post("/logout", data={}).status_code == 403
    assert "private" in alice.get(f"/runs/{web.runs['b']}").text  # nothing changed
    assert alice.get("/runs").status_code == 200  # and alice is still logged in


def test_login_form_needs_its_own_token(web: Site) -> None:
    client = web.client()
    client.get("/login")
    answer = client.post("/login", data={"name": "alice", "password": PASSWORD})
    assert answer.status_code == 403 and SESSION_COOKIE not in answer.cookies
    cross_site = httpx.Client(base_url=web.base)  # no login cookie, as from another site's form
    assert cross_site.post("/login", data={"name": "alice", "password": PASSWORD, "login_csrf": "a" * 43}).status_code == 403


def test_removing_an_account_ends_its_sessions_at_once(fresh_site) -> None:
    with fresh_site(Settings()) as site:
        bob = site.login("bob")
        assert bob.get(f"/runs/{site.runs['bob']}").status_code == 200
        site.accounts.remove_account("bob")  # what `stackbench user remove bob` does
        assert bob.get(f"/runs/{site.runs['bob']}").status_code == 404
        assert bob.get("/runs").status_code == 303


def test_a_new_password_ends_every_session(fresh_site) -> None:
    from stackbench.web.passwords import hash_password

    with fresh_site(Settings()) as site:
        bob = site.login("bob")
        site.accounts.set_password_hash(site.ids["bob"], hash_password("another long passphrase"), end_sessions=True)
        assert bob.get("/runs").status_code == 303  # what `stackbench user passwd bob` does
        assert login(site.client(), "bob", PASSWORD).status_code == 401
        assert login(site.client(), "bob", "another long passphrase").status_code == 303
