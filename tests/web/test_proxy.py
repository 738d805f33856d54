"""Behind a TLS reverse proxy: forwarded headers are believed only from --forwarded-allow-ips. Then the
session cookie is Secure, responses carry HSTS, and the rate limits count the real client; from anyone
else the same headers change nothing (a client cannot claim https or a fresh address)."""

from __future__ import annotations

import re

from stackbench.web.sessions import HOST_PREFIX, LOGIN_COOKIE, SESSION_COOKIE
from stackbench.web.settings import Settings
from web.site import PASSWORD, login

HTTPS = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7"}


def test_a_trusted_proxy_makes_cookies_secure_and_sends_hsts(fresh_site) -> None:
    with fresh_site(Settings(), "127.0.0.1") as site:
        client = site.client()
        client.headers.update({**HTTPS, "Origin": site.base.replace("http://", "https://")})  # the browser's
        form = client.get("/login")
        login_cookie = form.headers["set-cookie"]
        # the login form's cookie too: Secure, and named __Host- so that no http page or sibling domain can
        # plant one (the prefix needs Secure, Path=/ and no Domain)
        assert login_cookie.startswith(f"{HOST_PREFIX}{LOGIN_COOKIE}=")
        assert {"secure", "path=/"} <= set(login_cookie.lower().split("; ")) and "domain" not in login_cookie.lower()
        token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
        # the client speaks http to us, so it would not send a Secure cookie back: send it as the browser
        # behind the proxy (on https) would
        value = form.cookies[HOST_PREFIX + LOGIN_COOKIE]
        answer = client.post("/login", data={"name": "alice", "password": PASSWORD, "login_csrf": token},
                             headers={"Cookie": f"{HOST_PREFIX}{LOGIN_COOKIE}={value}"})
        assert answer.status_code == 303
        cookie = [v for k, v in answer.headers.multi_items() if k == "set-cookie" and SESSION_COOKIE in v][0]
        assert cookie.startswith(f"{HOST_PREFIX}{SESSION_COOKIE}=")
        assert {"secure", "path=/"} <= set(cookie.lower().split("; ")) and "domain" not in cookie.lower()
        assert answer.headers["strict-transport-security"].startswith("max-age=")
        # a plain-named login cookie (one an http page of this host could plant) is not read over https
        planted = client.post("/login", data={"name": "alice", "password": PASSWORD, "login_csrf": token},
                              headers={"Cookie": f"{LOGIN_COOKIE}={value}"})
        assert planted.status_code == 403


def test_without_trust_forwarded_headers_change_nothing(fresh_site) -> None:
    with fresh_site(Settings(login_failures_per_address=2, login_window_s=60)) as site:
        client = site.client()
        client.headers.update(HTTPS)
        answer = login(client, "alice", PASSWORD)
        assert answer.status_code == 303
        cookie = [v for k, v in answer.headers.multi_items() if k == "set-cookie" and SESSION_COOKIE in v][0]
        assert "secure" not in cookie.lower().split("; ")
        assert "strict-transport-security" not in answer.headers
        for address in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):  # a new claimed address each time
            spoofing = site.client()
            spoofing.headers.update({"X-Forwarded-For": address})
            last = login(spoofing, "bob", "not the password at all")
        assert last.status_code == 429  # all counted against 127.0.0.1


def test_a_trusted_proxys_clients_are_limited_one_by_one(fresh_site) -> None:
    with fresh_site(Settings(login_failures_per_address=2, login_window_s=60), "127.0.0.1") as site:
        for _ in range(2):
            attacker = site.client()
            attacker.headers.update({"X-Forwarded-For": "203.0.113.66"})
            login(attacker, "nobody-at-all", "not the password at all")
        attacker = site.client()
        attacker.headers.update({"X-Forwarded-For": "203.0.113.66"})
        assert login(attacker, "nobody-at-all", "not the password at all").status_code == 429
        someone = site.client()
        someone.headers.update({"X-Forwarded-For": "198.51.100.7"})
        assert login(someone, "alice", PASSWORD).status_code == 303  # another client is not locked out
