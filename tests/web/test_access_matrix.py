"""The access-control matrix, generated from the app's route table (ASVS 5.0 8.2.2: data-level access).

Every route that takes an object (a parameter named in `access.OBJECT_PARAMS`) is requested by the
object's owner, by nobody, by another account and with dead share tokens: everyone but the owner gets
exactly the 404 a random id gets. A new route that takes an id without going through `access.load`
answers its object to someone and fails here; a parameter of a new name, wherever the route or one of
its dependencies reads it (path, query, form, header, cookie), fails the first test until the matrix
knows how to fill it. The routes are those of every router the app includes (web/pages/, web/api.py),
and the walk is checked against the routes the source declares.
"""

from __future__ import annotations

import ast
import re
import secrets
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from stackbench.store.accounts import now
from stackbench.web.access import OBJECT_PARAMS
from web.site import Site, app_routes, csrf_of

WEB = Path(__file__).resolve().parents[2] / "src" / "stackbench" / "web"
NOT_OBJECTS = {"q", "plan", "fs", "device", "status", "owner", "since", "until", "sort", "page_number",  # the runs list's
               # search, facets (an owner is an account's name, read under the visibility rule), order
               # a runs list's page anchor: a run's id read only through the visibility rule, so that one
               # the viewer may not see is a random id (test_pages.test_paging_links_name_runs_...)
               "older_than", "newer_than",
               "n",  # which chart of a page
               "names", "metric",  # how the layers page names its layers and what it compares
               "name", "password", "login_csrf",  # the login form
               "csrf",  # every other form's CSRF token (sessions.csrf_checked)
               "visibility", "days", "note",  # the owner's forms: who sees an object, a share link's life
               "authorization"}  # the API's token (api.bearer), looked up by its keyed hash, never an object


def routes(site: Site) -> list[tuple[str, str, list[str]]]:
    """(method, path, parameters) of every route."""
    return [(method, route.path, [name for name, _ in route.parameters])
            for route in app_routes(site.app) for method in sorted(route.methods)]


def declared_routes() -> set[tuple[str, str]]:
    """(method, path) of every route decorator in the web package's source (`@router.get("/runs")`)."""
    found = set()
    for path in WEB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and node.func.attr in ("get", "post", "put", "patch", "delete") \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in ("router", "app") \
                    and isinstance(node.args[0], ast.Constant):
                found.add((node.func.attr.upper(), node.args[0].value))
    return found


def test_the_route_table_walk_finds_every_route_the_source_declares(web: Site) -> None:
    """The matrix, the hostile parameters, the security headers and the Origin check walk the app's route
    table; a router the app does not include, or one the walk does not open (FastAPI keeps an included
    router behind one entry), would leave its routes out of every one of them."""
    walked = {(method, path) for method, path, _ in routes(web)}
    assert walked == declared_routes()
    assert {("POST", "/api/runs"), ("GET", "/metrics"), ("GET", "/runs/{run_id}"), ("GET", "/s/{token}")} <= walked


def object_routes(site: Site) -> list[tuple[str, str, list[str]]]:
    return [(m, p, [n for n in names if n in OBJECT_PARAMS]) for m, p, names in routes(site)
            if any(n in OBJECT_PARAMS for n in names)]


def test_every_route_parameter_is_a_known_object_or_a_list_filter(web: Site) -> None:
    unknown = {(m, p, n) for m, p, names in routes(web) for n in names if n not in OBJECT_PARAMS.keys() | NOT_OBJECTS}
    assert unknown == set()
    assert {name for route in app_routes(web.app) if route.path in ("/api/runs", "/metrics")
            for name, _ in route.parameters} == {"authorization"}  # the API names no stored object in its parameters
    objects_elsewhere = [(route.path, name, where) for route in app_routes(web.app) for name, where in route.parameters
                         if name in OBJECT_PARAMS and where not in ("path", "query")]
    assert objects_elsewhere == []  # `_request` fills ids into the path or the query
    # run (page, visibility), compare (pick, page), shares (3), revoke, shared page, charts (run, compare,
    # shared, scan), scans, audits and tune sessions (a page and a visibility form each), layers (page, chart), slog (page,
    # chart), report downloads (run, compare, shared)
    assert len(object_routes(web)) >= 25


def _share(web: Site, owner: str = "alice", *, revoked: bool = False, expired: bool = False) -> tuple[str, str]:
    """A share link of alice's run `a`, made through the store as the server would: (link id, token)."""
    ctx = web.app.state.server
    token = secrets.token_urlsafe(32)
    expires = now() - timedelta(seconds=1) if expired else now() + timedelta(days=1)
    link = web.accounts.add_share_link(token_hash=ctx.digest(token), kind="run", run_ids=[web.runs["a"]],
                                       owner=web.ids[owner], note="matrix", expires_at=expires)
    if revoked:
        web.accounts.revoke_share_link(link.id)
    return link.id, token


def _request(client: httpx.Client, method: str, path: str, values: dict[str, str], csrf: str) -> httpx.Response:
    url = path
    query = {}
    for name, value in values.items():
        if "{" + name + "}" in url:
            url = url.replace("{" + name + "}", value)
        else:
            query[name] = value
    if method == "GET":
        return client.get(url, params=query)
    return client.post(url, params=query, data={"csrf": csrf, "visibility": "private", "days": "7", "note": "m"})


def _values(names: list[str], runs: tuple[str, str], link: str, token: str,
            items: tuple[str, str, str] | None = None) -> dict[str, str]:
    """`items`: a scan, an audit and a tune session (default: random ids)."""
    scan, audit, tune = items or (secrets.token_hex(16), secrets.token_hex(16), secrets.token_hex(16))
    kinds = {"run_id": runs[0], "a": runs[0], "b": runs[1], "link_id": link, "token": token, "scan_id": scan,
             "audit_id": audit, "tune_id": tune, "runs": f"{runs[0]},{runs[1]}"}
    return {name: kinds[name] for name in names}


def _random(names: list[str]) -> dict[str, str]:
    return _values(names, (secrets.token_hex(16), secrets.token_hex(16)), secrets.token_hex(16),
                   secrets.token_urlsafe(32))


@pytest.mark.slow
def test_everyone_but_the_owner_gets_the_random_id_404(web: Site, as_user: dict) -> None:
    assert_matrix(web, as_user["alice"], as_user["bob"], as_user["carol"])


def assert_matrix(web: Site, alice: httpx.Client, bob: httpx.Client, carol: httpx.Client) -> None:
    """Every object route, for every principal: the owner gets the object, everyone else the random 404."""
    nobody = web.client()
    tokens = {client: csrf_of(client) for client in (alice, bob, carol)}
    tokens[nobody] = ""
    mine = (web.runs["a"], web.runs["b"])
    items = (web.runs["scan"], web.runs["audit-after"], web.runs["tune"])  # alice's, private
    checked = []
    for method, path, names in object_routes(web):
        link, token = _share(web)
        _, revoked = _share(web, revoked=True)
        _, expired = _share(web, expired=True)
        for who, client in (("nobody", nobody), ("bob", bob), ("admin carol", carol)):
            random_answer = _request(client, method, path, _random(names), tokens[client])
            assert random_answer.status_code == 404, (method, path, who, random_answer.text)
            if "token" in names:
                # the token is the principal: only dead tokens are refused, whoever holds them
                for dead in (revoked, expired):
                    answer = _request(client, method, path, _values(names, mine, link, dead, items), tokens[client])
                    assert (answer.status_code, answer.text) == (404, random_answer.text), (method, path, who)
                continue
            answer = _request(client, method, path, _values(names, mine, link, token, items), tokens[client])
            assert (answer.status_code, answer.text) == (404, random_answer.text), (method, path, who)
            checked.append((method, path, who))
        owner = _request(alice, method, path, _values(names, mine, link, token, items), tokens[alice])
        assert owner.status_code in (200, 201, 303), (method, path, owner.status_code, owner.text)
    assert len(checked) >= 3 * 18  # every object route but the three a token opens
    assert {p for _, p, _ in checked} >= {"/scans/{scan_id}", "/audits/{audit_id}", "/tunes/{tune_id}",
                                         "/tunes/{tune_id}/visibility", "/runs/{run_id}/chart.svg",
                                         "/scans/{scan_id}/chart.svg", "/compare/{a}/{b}/chart.svg",
                                         "/layers", "/layers/chart.svg", "/slog", "/slog/chart.svg"}


def test_team_members_see_team_runs_and_cannot_change_or_share_them(web: Site, as_user: dict) -> None:
    alice = as_user["alice"]
    csrf = csrf_of(alice)
    team = web.runs["team"]
    assert alice.get(f"/runs/{team}").status_code == 200
    assert alice.get(f"/compare/{web.runs['a']}/{team}").status_code in (200, 409)
    assert alice.post(f"/runs/{team}/visibility", data={"csrf": csrf, "visibility": "private"}).status_code == 403
    assert alice.post(f"/runs/{team}/shares", data={"csrf": csrf, "days": "7"}).status_code == 403
    assert alice.post(f"/compare/{web.runs['a']}/{team}/shares", data={"csrf": csrf, "days": "7"}).status_code == 403
    assert re.search(r"bob-team", alice.get("/runs", params={"q": "bob-team"}).text)


def test_unowned_runs_are_for_admins_only_and_private_means_private(web: Site, as_user: dict) -> None:
    alice, carol = as_user["alice"], as_user["carol"]
    assert alice.get(f"/runs/{web.runs['unowned']}").status_code == 404
    assert carol.get(f"/runs/{web.runs['unowned']}").status_code == 200
    assert carol.get(f"/runs/{web.runs['a']}").status_code == 404  # an admin does not read private runs
    assert ">from-the-cli</a>" in carol.get("/runs", params={"q": "from-the-cli"}).text
    assert ">bob-private</a>" not in carol.get("/runs", params={"q": "bob-private"}).text
    assert ">bob-private</a>" in as_user["bob"].get("/runs", params={"q": "bob-private"}).text


@pytest.mark.parametrize("bad", ["../etc/passwd", "A" * 32, "0" * 31, "%00", "' OR 1=1 --"])
def test_malformed_ids_get_the_same_404(web: Site, as_user: dict, bad: str) -> None:
    alice = as_user["alice"]
    reference = alice.get(f"/runs/{secrets.token_hex(16)}")
    answer = alice.get(f"/runs/{bad}")
    assert answer.status_code == 404
    if "/" not in bad:
        assert answer.text == reference.text
