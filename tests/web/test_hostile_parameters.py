"""Every parameter of every route of the app, one at a time, with values no form sends: no answer is a 5xx.

Generated from the app's route table like the access matrix (every router's routes, the API's included, and
the parameters their dependencies read: a form's CSRF token, the API's Authorization header), so a new
route or parameter is fuzzed without being listed. It found `?page_number=99999999999999999999` answering
500 (an offset past 64 bits); each value here is one a person can type into a URL or a proxy can forward."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
import pytest

from web.site import Site, app_routes, csrf_of

HOSTILE_VALUES = ["99999999999999999999", "-99999999999999999999", "-1", "0", "nan", "inf", "1e308", "A" * 5000,
                  "../../etc/passwd", "<script>alert(1)</script>", "ü" * 10, "0" * 32, "f" * 32, "0" * 33, ",",
                  "a,b,c", "%00", " ", ""]
NOT_FUZZED = {"/logout"}  # ends the session the other requests use (tests/web/test_sessions.py)


def _share(client: httpx.Client, run_id: str) -> tuple[str, str]:
    """A share link of `run_id`: (its id, its token)."""
    made = client.post(f"/runs/{run_id}/shares", data={"csrf": csrf_of(client), "days": "7", "note": "fuzz"})
    token = re.search(r'value="http[^"]+/s/([A-Za-z0-9_-]{43})"', made.text).group(1)
    link_id = re.findall(r'action="/shares/([0-9a-f]{32})/revoke"', client.get(f"/runs/{run_id}").text)[0]
    return link_id, token


@pytest.mark.slow
def test_no_parameter_of_any_route_makes_a_server_error(web: Site, as_user: dict) -> None:
    alice = web.login("alice")  # its own session: a fuzzed form must not disturb the shared clients
    link_id, token = _share(alice, web.runs["a"])
    valid = {"run_id": web.runs["a"], "a": web.runs["a"], "b": web.runs["b"], "scan_id": web.runs["scan"],
             "audit_id": web.runs["audit-after"], "tune_id": web.runs["tune"], "link_id": link_id, "token": token,
             "runs": f"{web.runs['a']},{web.runs['b']}", "csrf": csrf_of(alice)}
    errors, tried, fuzzed = [], 0, set()
    for route in app_routes(web.app):
        if route.path in NOT_FUZZED:
            continue
        path_names = route.named("path")
        for method in sorted(route.methods):
            for name, where in route.parameters:
                assert where in ("path", "query", "form", "header"), (route.path, name, where)  # sent below
                for value in HOSTILE_VALUES:
                    given = {**{n: valid.get(n, "1") for n in path_names}, name: value}
                    path = route.path.format(**{n: quote(given[n], safe="") or "x" for n in path_names})
                    query = {name: value} if where == "query" else {}
                    form = {"csrf": valid["csrf"]} if method == "POST" else {}
                    if where == "form":
                        form[name] = value
                    # a header's value as the bytes a client sends (latin-1, as servers decode them)
                    headers = {name: value.encode("latin-1", "replace")} if where == "header" else {}
                    try:
                        status = alice.request(method, path, params=query, data=form or None,
                                               headers=headers).status_code
                    except httpx.LocalProtocolError:  # not sent: HTTP allows no header value with a leading blank
                        assert where == "header" and value.startswith(" "), (route.path, name, value)
                        continue
                    except httpx.TransportError as error:  # the server dropped the connection: worse than a 500
                        status = type(error).__name__
                    tried += 1
                    fuzzed.add(route.path)
                    if not isinstance(status, int) or status >= 500:
                        errors.append((method, route.path, where, name, value[:40], status))
    assert tried > 500
    assert {"/api/runs", "/metrics", "/runs/{run_id}", "/s/{token}/chart.svg"} <= fuzzed
    assert errors == []
