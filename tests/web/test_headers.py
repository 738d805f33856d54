"""The security headers of every route of the app (every page group's and the API's, found in its route
table), no inline style or script on any page (one script file, the copy buttons'), no API explorer, and
robots.txt."""

from __future__ import annotations

from stackbench.web.headers import CSP, IMAGE_CSP
from web.site import Site, app_routes, csrf_of


COPY_SCRIPT = '<script src="/static/copy.js" defer></script>'


def test_a_new_share_link_has_a_copy_button_that_needs_no_script_to_be_of_use(web: Site, as_user: dict) -> None:
    """The link is in a read-only field to select by hand; the button, hidden until the script shows it,
    copies it (the browser walk clicks it: tests/web/test_browser_walk.py)."""
    alice, path = as_user["alice"], f"/runs/{web.runs['a']}"
    answer = alice.post(f"{path}/shares", data={"csrf": csrf_of(alice, path), "days": "7", "note": ""})
    text = answer.text
    assert answer.status_code == 201 and COPY_SCRIPT in text
    assert 'id="share-url"' in text and '<button type="button" class="copy" data-copy="share-url" hidden>' in text
    assert 'id="share-url-status"' in text and 'role="status"' in text


def _sample_requests(web: Site) -> list[tuple[str, str]]:
    """One GET of every GET route with real ids filled in, and the routes that answer 404."""
    fill = {"run_id": web.runs["a"], "a": web.runs["a"], "b": web.runs["b"], "token": "x", "scan_id": web.runs["scan"],
            "audit_id": web.runs["audit-after"], "tune_id": web.runs["tune"]}
    found = []
    for route in app_routes(web.app):
        if "GET" in route.methods:
            path = route.path
            for name, value in fill.items():
                path = path.replace("{" + name + "}", value)
            found.append(("GET", path))
    return found + [("GET", "/no/such/page"), ("POST", "/logout"), ("POST", "/login")]


def test_security_headers_on_every_route(web: Site, as_user: dict) -> None:
    for client in (web.client(), as_user["alice"]):
        for method, path in _sample_requests(web):
            answer = client.request(method, path)
            svg = answer.headers.get("content-type", "").startswith("image/svg+xml")
            assert answer.headers["content-security-policy"] == (IMAGE_CSP if svg else CSP), path
            for policy in (CSP, IMAGE_CSP):
                assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
                assert "'unsafe-inline'" not in policy.split("style-src")[0] and "unsafe-eval" not in policy
            assert "script-src 'self';" in CSP and "script-src" not in IMAGE_CSP
            assert answer.headers["x-content-type-options"] == "nosniff", path
            assert answer.headers["referrer-policy"] == "no-referrer", path
            assert answer.headers["x-frame-options"] == "DENY", path
            assert "server" not in answer.headers, path
            if path not in ("/static/style.css", "/static/copy.js"):
                assert answer.headers["cache-control"] == "no-store", path


def test_pages_have_no_inline_style_or_script(web: Site, as_user: dict) -> None:
    """HTML pages: no inline style or script at all (the CSP refuses both); the only script element any page
    has loads the copy buttons' file. Charts are SVG images (their own style inside, shown through <img>,
    where nothing can run): no script in them either."""
    for method, path in _sample_requests(web):
        answer = as_user["alice"].request(method, path)
        text = answer.text
        if path == "/static/copy.js":
            assert answer.headers["content-type"].startswith("text/javascript") and "innerHTML" not in text
            continue
        assert text.count("<script") == text.count(COPY_SCRIPT), path
        if answer.headers.get("content-type", "").startswith("image/svg+xml"):
            assert path.endswith("/chart.svg") and "<svg" in text, path
            continue
        if answer.headers.get("content-disposition", "").startswith("attachment"):
            # a report to save, not a page: its style is its own, under its own CSP (no script, no request)
            assert path.endswith("/report.html") and 'http-equiv="Content-Security-Policy"' in text, path
            assert "default-src &#39;none&#39;" in text, path
            continue
        assert "style=" not in text and "<style" not in text, path


def test_no_api_explorer_or_schema_is_served(web: Site, as_user: dict) -> None:
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert as_user["alice"].get(path).status_code == 404


def test_robots_txt_excludes_everything_and_share_links(web: Site) -> None:
    text = web.client().get("/robots.txt").text
    assert "User-agent: *" in text and "Disallow: /s/\n" in text and "Disallow: /\n" in text
