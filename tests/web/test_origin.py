"""Which requests the server answers (web/origin.py), and the login form's cookie (web/sessions.py).

Found by hand: a page on another port of the same host planted the login cookie and posted its own
credentials (login CSRF by cookie tossing: cookies are not separated by port, and such a page is
"same-site", so SameSite=Strict let both through), and any Host was answered (DNS rebinding). Checked here
over real HTTP against the real server (raw sockets where a header must be missing or doubled); the
browser's side of the attack is in test_browser.py."""

from __future__ import annotations

import re
import secrets
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from stackbench.web.context import keyed_digest
from stackbench.web.sessions import LOGIN_COOKIE, SESSION_COOKIE
from stackbench.web.settings import Settings
from web.site import PASSWORD, Site, app_routes, csrf_of, free_port, login

ELSEWHERE = f"http://127.0.0.1:{free_port()}"  # another port of the same host: same-site, another origin


def _raw(site: Site, request: str) -> tuple[int, str]:
    """Send `request` (CRLF line ends added) as it is; the status and the body."""
    host, port = urlsplit(site.base).hostname, urlsplit(site.base).port
    with socket.create_connection((host, port), timeout=10) as connection:
        connection.sendall(request.replace("\n", "\r\n").encode("latin-1"))
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.decode("utf-8", "replace").partition("\r\n\r\n")
    return int(head.split()[1]), body


# -- Host -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/login", "/runs", "/static/style.css", "/no-such-page", "/s/" + "A" * 43])
def test_a_request_for_another_host_name_is_refused(web: Site, as_user: dict, path: str) -> None:
    """DNS rebinding: the attacker's name pointed at 127.0.0.1 reaches us with that name as Host; even a
    logged-in browser's cookie gets nothing back, on any path."""
    answer = as_user["alice"].get(path, headers={"Host": "rebound.example.org"})
    assert answer.status_code == 400
    assert "does not answer to that host name" in answer.text and "--allowed-host" in answer.text
    assert "alice" not in answer.text and answer.headers["content-security-policy"]  # the usual headers too


def test_the_address_it_listens_on_and_localhost_are_answered(web: Site) -> None:
    port = urlsplit(web.base).port
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST"):
        assert web.client().get("/login", headers={"Host": host}).status_code == 200, host
    for host in ("127.0.0.2", "[::1]", f"localhost.example.org:{port}", "localhost:abc", "", "a b"):
        assert web.client().get("/login", headers={"Host": host}).status_code == 400, host


def test_a_missing_or_doubled_host_is_refused(web: Site) -> None:
    port = urlsplit(web.base).port
    assert _raw(web, "GET /login HTTP/1.0\nConnection: close\n\n")[0] == 400
    doubled = f"GET /login HTTP/1.1\nHost: 127.0.0.1:{port}\nHost: rebound.example.org\nConnection: close\n\n"
    assert _raw(web, doubled)[0] == 400
    assert _raw(web, f"GET /login HTTP/1.1\nHost: 127.0.0.1:{port}\nConnection: close\n\n")[0] == 200


def test_an_ipv4_client_of_a_dual_stack_listener_may_name_the_address_it_reached() -> None:
    """`serve --host ::` takes IPv4 clients on IPv4-mapped addresses (the ASGI scope's server address is
    ::ffff:192.0.2.1 for a client that asked for 192.0.2.1): what it asked for is the address it reached."""
    from stackbench.web.origin import RefusedRequest, check_host

    def scope(host: str, server: str) -> dict:
        return {"headers": [(b"host", host.encode())], "server": (server, 8080)}

    assert check_host(scope("192.0.2.1:8080", "::ffff:192.0.2.1"), frozenset()) == ("192.0.2.1", "8080")
    assert check_host(scope("[::1]:8080", "::1"), frozenset()) == ("::1", "8080")
    with pytest.raises(RefusedRequest):
        check_host(scope("192.0.2.2:8080", "::ffff:192.0.2.1"), frozenset())


def test_an_allowed_name_is_answered_and_others_are_not(fresh_site) -> None:
    with fresh_site(Settings(allowed_hosts=("bench.example.org", "[2001:db8::1]"))) as site:
        client = site.client()
        for host in ("bench.example.org", "Bench.Example.Org:443", "[2001:db8::1]:8080"):
            assert client.get("/login", headers={"Host": host}).status_code == 200, host
        assert client.get("/login", headers={"Host": "evil.example.org"}).status_code == 400
        # a form from the proxied name is that name's origin (https behind a TLS proxy is in test_proxy.py)
        client.headers.update({"Host": "bench.example.org", "Origin": "http://bench.example.org"})
        assert login(client, "alice", PASSWORD).status_code == 303


def test_serve_takes_allowed_hosts_from_its_option_and_the_environment(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from conftest import cli_here

    served = []
    monkeypatch.setattr("stackbench.web.server.serve", served.append)
    db = str(tmp_path / "r.db")
    monkeypatch.setenv("STACKBENCH_ALLOWED_HOSTS", "from-env.example.org")
    assert cli_here("serve", "--db", db).returncode == 0
    assert cli_here("serve", "--db", db, "--allowed-host", "A.example.org,b.example.org",
                    "--allowed-host", "[::1]").returncode == 0

    def allowed(config) -> tuple[str, ...]:  # noqa: ANN001 - uvicorn's Config: ThreadLimit(SecurityHeaders(app))
        return config.app.app.app.state.server.settings.allowed_hosts

    assert [allowed(config) for config in served] == [("from-env.example.org",),
                                                      ("a.example.org", "b.example.org", "::1")]
    monkeypatch.delenv("STACKBENCH_ALLOWED_HOSTS")
    for bad in ("https://bench.example.org/", "bench.example.org:8443", "a b", "*.example.org"):
        refused = cli_here("serve", "--db", db, "--allowed-host", bad)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith("Error: --allowed-host:") and "bench.example.org" in refused.stderr


# -- Origin ---------------------------------------------------------------------------------------------

def _post_routes(site: Site) -> list[str]:
    return sorted({route.path for route in app_routes(site.app) if "POST" in route.methods})


def test_every_post_from_another_origin_is_refused(web: Site, as_user: dict) -> None:
    """Every POST route of the app, found in its route table (so a new one is covered), sent from another
    port of the same host with everything else right (alice's session and CSRF token): the 403 page, and
    nothing changed."""
    alice = as_user["alice"]
    csrf = csrf_of(alice)
    routes = _post_routes(web)
    assert {"/login", "/logout", "/runs/{run_id}/shares", "/api/runs"} <= set(routes)
    for path in routes:
        url = re.sub(r"\{[a-z_]+\}", web.runs["b"], path)
        for origin in (ELSEWHERE, "null", web.base.replace("http://", "https://"), "http://rebound.example.org"):
            answer = alice.post(url, data={"csrf": csrf, "visibility": "team", "days": "7"}, headers={"Origin": origin})
            assert answer.status_code == 403, (path, origin, answer.status_code)
            assert "was refused" in answer.text, path
    assert "private" in alice.get(f"/runs/{web.runs['b']}").text and alice.get("/runs").status_code == 200


def test_a_browser_that_sends_no_origin_is_judged_by_sec_fetch_site(web: Site) -> None:
    client = web.client()
    del client.headers["Origin"]
    form = client.get("/login")
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
    data = {"name": "alice", "password": PASSWORD, "login_csrf": token}
    for site in ("same-site", "cross-site", "none"):
        assert client.post("/login", data=data, headers={"Sec-Fetch-Site": site}).status_code == 403, site
    assert client.post("/login", data=data).status_code == 403  # neither header, and cookies: refused
    # `Origin: null` is what our own forms send (every page says Referrer-Policy: no-referrer): judged alike
    for site in ("same-site", "cross-site", "none"):
        assert client.post("/login", data=data, headers={"Origin": "null", "Sec-Fetch-Site": site}).status_code == 403
    assert client.post("/login", data=data, headers={"Origin": "null"}).status_code == 403
    # an Origin that names another origin is refused whatever Sec-Fetch-Site says
    assert client.post("/login", data=data, headers={"Origin": ELSEWHERE, "Sec-Fetch-Site": "same-origin"}).status_code == 403
    assert client.post("/login", data=data, headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"}).status_code == 303
    other = web.client()
    del other.headers["Origin"]
    token = re.search(r'name="login_csrf" value="([^"]+)"', other.get("/login").text).group(1)
    assert other.post("/login", data={**data, "login_csrf": token}, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 303


def test_a_script_without_cookies_is_not_asked_for_an_origin(web: Site) -> None:
    """The token API: a request with neither Origin nor Sec-Fetch-Site and no cookie has nothing ambient
    to abuse, and reaches its route (here the 401 of a token that does not exist)."""
    plain = httpx.Client(base_url=web.base, timeout=30)
    answer = plain.post("/api/runs", json={}, headers={"Authorization": "Bearer sbt_" + "B" * 43})
    assert answer.status_code == 401
    assert plain.post("/api/runs", json={}, headers={"Origin": ELSEWHERE}).status_code == 403


def test_login_from_another_port_leaves_the_browser_logged_out(web: Site) -> None:
    """The attack found by hand, over HTTP: the attacker's valid login form (cookie and token, fetched
    from the server himself) posted with his credentials from a page on another port."""
    attacker = web.client()
    form = attacker.get("/login")
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
    victim = web.client()
    victim.cookies.set(LOGIN_COOKIE, form.cookies[LOGIN_COOKIE])  # tossed into the victim's browser
    answer = victim.post("/login", data={"name": "bob", "password": PASSWORD, "login_csrf": token},
                         headers={"Origin": ELSEWHERE})
    assert answer.status_code == 403 and SESSION_COOKIE not in answer.cookies
    assert victim.get("/runs").status_code == 303  # not logged in as anyone


def test_logout_from_another_port_is_refused(web: Site) -> None:
    alice = web.login("alice")
    assert alice.post("/logout", data={"csrf": csrf_of(alice)}, headers={"Origin": ELSEWHERE}).status_code == 403
    assert alice.get("/runs").status_code == 200


# -- the login form's cookie ----------------------------------------------------------------------------

def _login_with_cookie(site: Site, cookie_header: str, token: str) -> httpx.Response:
    client = site.client()
    return client.post("/login", data={"name": "alice", "password": PASSWORD, "login_csrf": token},
                       headers={"Cookie": cookie_header})


def test_a_login_cookie_the_server_did_not_make_is_refused(web: Site) -> None:
    """A planted cookie of the attacker's choosing, posted with itself as the form's token (the
    double-submit token that was the cookie's value), a forged signature, an expired one, and two login
    cookies at once (one planted beside the real one)."""
    planted = secrets.token_urlsafe(32)
    assert _login_with_cookie(web, f"{LOGIN_COOKIE}={planted}", planted).status_code == 403
    form = web.client().get("/login")
    real = form.cookies[LOGIN_COOKIE]
    assert "path=/login" in form.headers["set-cookie"].lower()  # over http, as before: replaced, not doubled
    token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
    assert token not in real  # the form's token is not the cookie's value
    nonce, issued, mac = real.split(".")
    forged = f"{nonce}.{issued}.{'0' * len(mac)}"
    assert _login_with_cookie(web, f"{LOGIN_COOKIE}={forged}", token).status_code == 403
    key = web.accounts.server_secret()
    old = str(int(time.time()) - 3 * 3600)
    expired = f"{nonce}.{old}.{keyed_digest(key, f'login-cookie|{nonce}|{old}')}"  # signed, but 3 h old
    assert _login_with_cookie(web, f"{LOGIN_COOKIE}={expired}", token).status_code == 403
    assert _login_with_cookie(web, f"{LOGIN_COOKIE}={planted}; {LOGIN_COOKIE}={real}", token).status_code == 403
    assert _login_with_cookie(web, f"{LOGIN_COOKIE}={real}", token).status_code == 303


def test_two_session_cookies_are_no_session(web: Site) -> None:
    alice = web.login("alice")
    session = alice.cookies[SESSION_COOKIE]
    planted = web.login("bob").cookies[SESSION_COOKIE]
    both = web.client().get("/runs", headers={"Cookie": f"{SESSION_COOKIE}={planted}; {SESSION_COOKIE}={session}"})
    assert both.status_code == 303  # neither: a planted session cannot shadow (or be shadowed by) the real one
    assert web.client().get("/runs", headers={"Cookie": f"{SESSION_COOKIE}={session}"}).status_code == 200
