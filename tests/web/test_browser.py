"""A real browser (Debian's chromium driven by Playwright) through the whole flow: log in, open a run,
compare two (the run, compare, scan and SLOG pages with their chart images drawn; the SLOG page at phone
width too), share one, open the link logged
out, revoke it, see it gone. Screenshots are kept under
$STACKBENCH_ARTEFACTS/web (default: stackbench-artefacts/web in the system's temporary directory, outside
the checkout); any console error (a CSP violation included) fails the test."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from stackbench.load.importer import import_files
from stackbench.web.settings import Settings
from web.site import DISKINFO, HOSTILE, PASSWORD

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"


def _artefacts() -> Path:
    path = Path(os.environ.get("STACKBENCH_ARTEFACTS") or Path(tempfile.gettempdir()) / "stackbench-artefacts") / "web"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _expect_charts_drawn(page) -> None:  # noqa: ANN001 - a Playwright page
    """The page's chart images loaded and were drawn by the browser (an SVG the browser refused has no
    natural width); CSP violations, were there any, are console errors the test collects."""
    from playwright.sync_api import expect

    images = page.locator("figure.chart img")
    expect(images.first).to_be_visible()
    for index in range(images.count()):
        image = images.nth(index)
        assert image.get_attribute("alt")
        image.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())


def test_log_in_compare_share_and_revoke_in_chromium(fresh_site) -> None:
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/test, which installs it (apt-get install chromium)")
    shots = _artefacts()
    problems: list[str] = []
    with fresh_site(Settings()) as site, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            def watch(page):  # noqa: ANN001, ANN202
                page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
                page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
                return page

            owner = watch(browser.new_context(viewport={"width": 1400, "height": 900}).new_page())
            owner.goto(site.base + "/runs")
            expect(owner).to_have_url(re.compile(r"/login$"))
            owner.get_by_label("Name").fill("alice")
            owner.get_by_label("Password").fill(PASSWORD)
            owner.get_by_role("button", name="Log in").click()
            expect(owner).to_have_url(re.compile(r"/runs$"))
            expect(owner.get_by_role("link", name=HOSTILE, exact=True)).to_be_visible()  # shown as text
            owner.screenshot(path=shots / "01-runs.png", full_page=True)

            owner.click(f"a[href='/runs/{site.runs['b']}']")
            expect(owner.get_by_role("heading", level=1)).to_contain_text("alice-b")
            expect(owner.locator("table").first).to_contain_text("4K QD1 rnd read")
            _expect_charts_drawn(owner)
            owner.screenshot(path=shots / "02-run.png", full_page=True)

            owner.goto(site.base + "/runs")
            owner.get_by_label(f"A: {HOSTILE}").check()
            owner.get_by_label("B: alice-b").check()
            owner.get_by_role("button", name="Compare A with B").click()
            expect(owner).to_have_url(re.compile(rf"/compare/{site.runs['a']}/{site.runs['b']}$"))
            expect(owner.locator("table").first).to_contain_text("verdict")
            _expect_charts_drawn(owner)
            owner.screenshot(path=shots / "03-compare.png", full_page=True)

            # a chart opened in its own tab is drawn with its own styles (a CSP violation is a console error)
            alone = watch(owner.context.new_page())
            alone.goto(site.base + owner.locator("figure.chart img").first.get_attribute("src"))
            alone.wait_for_load_state("load")
            assert alone.evaluate("getComputedStyle(document.querySelector('svg path[style]')).fill") != "rgb(0, 0, 0)"
            alone.screenshot(path=shots / "03a-chart-alone.png")
            alone.close()

            owner.click("a[href='/scans']")
            owner.click(f"a[href='/scans/{site.runs['scan']}']")
            expect(owner.get_by_role("heading", level=1)).to_contain_text(HOSTILE)  # as text
            _expect_charts_drawn(owner)
            owner.screenshot(path=shots / "03b-scan.png", full_page=True)

            # the SLOG page: check two imported diskinfo sweeps, rank them, their chart; at phone width too
            for file in ("optane-4k-start.txt", "hdd-512-start.txt"):
                sweep = import_files(site.store, [DISKINFO / file], label=file.split("-")[0])[0]
                site.accounts.claim(site.ids["alice"], [sweep.id])
            owner.click("a[href='/slog']")
            owner.get_by_label("Rank: optane").check()
            owner.get_by_label("Rank: hdd").check()
            owner.get_by_role("button", name="Rank the checked runs").click()
            expect(owner.locator("table").first).to_contain_text("excellent: Optane class")
            _expect_charts_drawn(owner)
            owner.screenshot(path=shots / "03c-slog.png", full_page=True)
            owner.set_viewport_size({"width": 390, "height": 844})
            wide = owner.evaluate("document.documentElement.scrollWidth")
            assert wide <= 390, f"the SLOG page is {wide} px wide on a phone"  # wide tables scroll on their own
            owner.screenshot(path=shots / "03d-slog-phone.png", full_page=True)
            owner.set_viewport_size({"width": 1400, "height": 900})

            owner.goto(f"{site.base}/runs/{site.runs['b']}")
            owner.get_by_label("Note").fill("for the vendor")
            owner.get_by_role("button", name="Create share link").click()
            link = owner.get_by_label("share link").input_value()
            assert re.fullmatch(rf"{re.escape(site.base)}/s/[A-Za-z0-9_-]{{43}}", link)
            owner.screenshot(path=shots / "04-share-created.png", full_page=True)

            stranger = watch(browser.new_context(viewport={"width": 1400, "height": 900}).new_page())
            opened = stranger.goto(link)
            assert opened is not None and opened.status == 200
            expect(stranger.locator("p.banner")).to_contain_text("read-only shared page")
            expect(stranger.get_by_role("button", name="Log out")).to_have_count(0)
            _expect_charts_drawn(stranger)
            stranger.screenshot(path=shots / "05-shared-logged-out.png", full_page=True)

            owner.goto(f"{site.base}/runs/{site.runs['b']}")
            owner.get_by_text("Share links (1)").click()  # the links made, folded under the share form
            row = owner.locator("table.links tr", has_text="for the vendor")
            expect(row).not_to_contain_text("never")  # the stranger's visit shows as last use
            row.get_by_role("button", name="Revoke").click()
            expect(owner.locator("table.links tr", has_text="for the vendor")).to_contain_text("revoked")
            owner.screenshot(path=shots / "06-revoked.png", full_page=True)

            problems_before = len(problems)
            gone = stranger.goto(link)
            assert gone is not None and gone.status == 404
            expect(stranger.get_by_role("heading", level=1)).to_have_text("Not found")
            stranger.screenshot(path=shots / "07-gone.png", full_page=True)
            # the browser reports the 404 document itself as a failed resource: that line, and only that
            expected = "console error: Failed to load resource: the server responded with a status of 404 (Not Found)"
            assert all(line == expected for line in problems[problems_before:]), problems[problems_before:]
            del problems[problems_before:]
        finally:
            browser.close()
    assert problems == []


def _attacker_page(html: str, cookie: str):  # noqa: ANN202 - a running http.server and its base URL
    """A page served from another port of 127.0.0.1 (same site as the server, another origin) that sets
    `cookie` (a Set-Cookie value) and shows `html`."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def test_a_page_on_another_port_cannot_log_the_browser_in_as_someone_else(fresh_site) -> None:
    """The attack found by hand (login CSRF by cookie tossing): bob fetches a login form of the server
    himself, then a page of his on another port of the same host plants that form's cookie in alice's
    browser and posts his name, password and token to the server's /login. Cookies are not separated by
    port and the page is same-site, so the browser sends the planted cookie: before, alice's browser ended
    logged in as bob. Now the form is refused (its Origin is the other port) and she stays logged out."""
    import html

    import httpx
    from playwright.sync_api import expect, sync_playwright

    from stackbench.web.sessions import LOGIN_COOKIE

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run scripts/test, which installs it (apt-get install chromium)")
    with fresh_site(Settings()) as site, sync_playwright() as playwright:
        with httpx.Client(base_url=site.base) as bob:
            form = bob.get("/login")
        cookie = form.cookies[LOGIN_COOKIE]
        token = re.search(r'name="login_csrf" value="([^"]+)"', form.text).group(1)
        page = (f'<body onload="document.forms[0].submit()"><form method="post" action="{site.base}/login">'
                f'<input name="name" value="bob"><input name="password" value="{html.escape(PASSWORD)}">'
                f'<input name="login_csrf" value="{html.escape(token)}"></form></body>')
        attacker, elsewhere = _attacker_page(page, f"{LOGIN_COOKIE}={cookie}; Path=/login; SameSite=Strict")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            alice = browser.new_context().new_page()
            with alice.expect_response(f"{site.base}/login") as posted:
                alice.goto(elsewhere + "/prize")
            assert posted.value.status == 403
            expect(alice.locator("main")).to_contain_text("sent from another site or another port")
            alice.screenshot(path=_artefacts() / "08-login-csrf-refused.png", full_page=True)
            alice.goto(site.base + "/runs")
            assert alice.url == site.base + "/login"  # logged in as nobody, not as bob
        finally:
            browser.close()
            attacker.shutdown()
