"""Every parameter of every route of the app, one at a time, with values no form sends: no answer is a 5xx.

Generated from the app's route table like the access matrix, so a new route or parameter is fuzzed without
being listed. It found `?page_number=99999999999999999999` answering 500 (an offset past 64 bits); each
value here is one a person can type into a URL or a proxy can forward."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
import pytest
from fastapi.routing import APIRoute

from web.site import Site, csrf_of

HOSTILE_VALUES = ["99999999999999999999", "-99999999999999999999", "-1", "0", "nan", "inf", "1e308", "A" * 5000,
                  "../../etc/passwd", "<script>alert(1)</script>", "ü" * 10, "0" * 32, "f" * 32, "0" * 33, ",",
                  "a,b,c", "%00", " ", ""]
NOT_FUZZED = {"/logout",  # ends the session the other requests use (tests/web/test_sessions.py)
              "/api/runs", "/metrics"}  # API tokens and upload bodies: tests/web/test_api.py


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
             "audit_id": web.runs["audit-after"], "link_id": link_id, "token": token,
             "runs": f"{web.runs['a']},{web.runs['b']}", "csrf": csrf_of(alice)}
    errors, tried = [], 0
    for route in web.app.routes:
        if not isinstance(route, APIRoute) or route.path in NOT_FUZZED:
            continue
        path_names = [p.name for p in route.dependant.path_params]
        others = [(p.name, "query") for p in route.dependant.query_params] + \
                 [(p.name, "form") for p in route.dependant.body_params]
        for method in sorted(route.methods):
            for name, where in [(n, "path") for n in path_names] + others:
                for value in HOSTILE_VALUES:
                    given = {**{n: valid.get(n, "1") for n in path_names}, name: value}
                    path = route.path.format(**{n: quote(given[n], safe="") or "x" for n in path_names})
                    query = {name: value} if where == "query" else {}
                    form = {"csrf": valid["csrf"]} if method == "POST" else {}
                    if where == "form":
                        form[name] = value
                    tried += 1
                    try:
                        status = alice.request(method, path, params=query, data=form or None).status_code
                    except httpx.TransportError as error:  # the server dropped the connection: worse than a 500
                        status = type(error).__name__
                    if not isinstance(status, int) or status >= 500:
                        errors.append((method, route.path, where, name, value[:40], status))
    assert tried > 500
    assert errors == []
